"""The beat queue: the datapath's records between its last stage and the beat stream,
first word fall-through, in LUT RAM.

Its writer never overruns it: the walker emits a record only on a credit, and the
credits never let in more records than the queue has entries (rtl/datapath.py
``_credits``; the proof ``datapath.queues`` asserts that no write finds it full). So,
unlike a general FIFO, its write is not gated by its level: ``w_en`` is the memory's
write enable as it comes, a register's output (stage C's valid, or the request
former's). A lanes-8 entry is some 600 bits, over 150 LUT RAM cells spread across the
chip, and gating their enable with the level put a compare and a LUT in front of that
route: the lanes-8 board top's longest path (docs/fpga.md, "Clock speed").

The first ``flags`` bits of each entry are kept again in a shift register whose entry 0
is the head's (``r_flags``), so that what decides a record's leaving, and the completion
queue's write, does not start at the LUT RAM's read. A read shifts every entry down, and
a write lands after the records left behind it: entry ``level - read``, which is entry i
where the level is i + 1 with a read and i without. The level's compares are the
register's alone, so the read, late in the cycle, only picks between two bits.

For the same reason ``r_rdy`` (the queue holds a record) is a register of its own, kept
beside the level rather than compared with it: the head's leaving (``taken``) starts at
it, and the completion queue's write ends that path (the lanes-8 board top with a
request former: docs/fpga.md, "Clock speed").
"""

from amaranth.hdl import Module, Signal, Mux
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

__all__ = ["BeatQueue"]


class BeatQueue(wiring.Component):
    """``depth`` entries of ``width`` bits, written by a writer that never overruns it.

    ``w_rdy`` (the level is below the depth) is for the proofs and the testbenches; the
    write does not read it. A write when full overwrites the head: the credit rules it
    out, and ``datapath.queues`` proves it."""

    def __init__(self, width: int, depth: int, flags: int):
        if depth < 1:
            raise ValueError(f"a beat queue needs at least one entry; depth was {depth}")
        if not 0 < flags <= width:
            raise ValueError(f"the head's flags are 1 to width ({width}) bits; flags was {flags}")
        self.width, self.depth, self.flags = width, depth, flags
        super().__init__({
            "w_en": In(1), "w_data": In(width), "w_rdy": Out(1),
            "r_en": In(1), "r_data": Out(width), "r_rdy": Out(1), "r_flags": Out(flags),
            "level": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        m.submodules.storage = storage = Memory(shape=self.width, depth=depth, init=[])
        write = storage.write_port()        # one port a line: names come from the assignment
        head = storage.read_port(domain="comb")
        produce, consume = Signal(range(depth), name="produce"), Signal(range(depth), name="consume")
        m.d.comb += [self.w_rdy.eq(self.level != depth),
                     write.addr.eq(produce), write.data.eq(self.w_data), write.en.eq(self.w_en),
                     head.addr.eq(consume), self.r_data.eq(head.data)]
        wrote, read = self.w_en, self.r_en & self.r_rdy

        def after(pointer):
            return Mux(pointer == depth - 1, 0, pointer + 1)

        with m.If(wrote):
            m.d.sync += produce.eq(after(produce))
        with m.If(read):
            m.d.sync += consume.eq(after(consume))
        m.d.sync += self.level.eq(self.level + wrote - read)
        # the level after is not 0 if a record comes, or if one stays: a read leaves one
        # where there were two or more (a read needs one)
        m.d.sync += self.r_rdy.eq(wrote | Mux(read, self.level != 1, self.r_rdy))

        entries = [Signal(self.flags, name=f"head_flags{i}", reset_less=True) for i in range(depth)]
        for i, entry in enumerate(entries):
            shifted = Mux(read, entries[i + 1] if i + 1 < depth else 0, entry)
            lands = wrote & Mux(read, self.level == i + 1, self.level == i)
            m.d.sync += entry.eq(Mux(lands, self.w_data[:self.flags], shifted))
        m.d.comb += self.r_flags.eq(entries[0])
        return m
