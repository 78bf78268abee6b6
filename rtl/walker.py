"""The coordinate iterator: walks a job's box in the transaction order of
docs/transactions.md, ``lanes`` chunks a cycle.

The box is an odometer of five digits: the chunk within the row (radix: chunks per row),
then the box's dimensions 1..4 (radix: elements traversed in each; gather4 has four rows
in digit 1). Chunk ``n`` of the box is the odometer standing at ``n``. Lane ``j`` starts at
``j`` and every beat steps by ``lanes``: its digits add the digits of ``lanes`` in the same
mixed radix, so each digit carries at most one, and the carries are looked ahead (each
digit computes both sums; the carry chain is then plain logic). A lane whose odometer
runs past its last digit is done; when lane 0 is done, so is the box.

The access modes differ only in how the datapath turns digits into coordinates, so the
im2col walks extend this odometer instead of adding a second iterator.
"""

from amaranth.hdl import Module, Signal, Const, Mux
from amaranth.lib import wiring, stream, data
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from .layouts import job_layout, beat_constants_layout, DIGITS, RADIX_WIDTH

__all__ = ["Walker", "walk_layout", "completion_info_layout"]


def completion_info_layout(config: UnitConfig) -> data.StructLayout:
    return data.StructLayout({"request_id": config.id_width, "code": 8, "transaction_bytes": 32})


def walk_layout(config: UnitConfig) -> data.StructLayout:
    """One cycle of the walk: every lane's digits, and the beat's job constants."""
    return data.StructLayout({
        "is_beat": 1,
        "last": 1,
        "lane_alive": config.lanes,
        "lane_digits": data.ArrayLayout(data.ArrayLayout(RADIX_WIDTH, DIGITS), config.lanes),
        "beat_index": 32,           # beats of this job before this one
        "beat": beat_constants_layout(config),
        "has_completion": 1,
        "completion": completion_info_layout(config),
    })


def odometer_step(digits, step, radix):
    """``digits + step`` in the mixed radix, with look-ahead carries. Returns the new digits
    and the carry out of the last digit."""
    result = []
    carry = Const(0, 1)
    for x, k, r in zip(digits, step, radix):
        plain = x + k
        plus_one = x + k + 1
        wrap_plain = plain >= r
        wrap_plus = plus_one >= r
        wrap = Mux(carry, wrap_plus, wrap_plain)
        total = Mux(carry, plus_one, plain)
        result.append((total - Mux(wrap, r, 0))[:RADIX_WIDTH])
        carry = wrap
    return result, carry


class Walker(wiring.Component):
    """Job in, one walk record a cycle out (when ``advance``).

    Ports
    -----
    job : stream in
    advance : in
        The pipeline behind the walker moves this cycle.
    walk : out (``walk_layout``), walk_valid : out
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "job": In(stream.Signature(job_layout(config))),
            "advance": In(1),
            "walk": Out(walk_layout(config)),
            "walk_valid": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        lanes = config.lanes

        current = Signal(job_layout(config))
        busy = Signal()
        digits = [[Signal(RADIX_WIDTH, name=f"lane{j}_digit{i}") for i in range(DIGITS)] for j in range(lanes)]
        alive = Signal(lanes)
        beat_index = Signal(32)

        error = current.code != 0
        stepped = [odometer_step(digits[j], current.step_digits, current.radix) for j in range(lanes)]
        next_alive = Signal(lanes)
        for j in range(lanes):
                m.d.comb += next_alive[j].eq(alive[j] & ~stepped[j][1] & ~current.step_overflow)
        last = error | ~next_alive[0]
        finishing = busy & last

        m.d.comb += self.job.ready.eq(self.advance & (~busy | finishing))

        with m.If(self.advance):
            # what this cycle emits
            m.d.sync += [
                self.walk_valid.eq(busy),
                self.walk.is_beat.eq(~error),
                self.walk.last.eq(last),
                self.walk.lane_alive.eq(alive),
                self.walk.beat_index.eq(beat_index),
                self.walk.beat.eq(current.beat),
                self.walk.has_completion.eq(last),
                self.walk.completion.request_id.eq(current.beat.request_id),
                self.walk.completion.code.eq(current.code),
                self.walk.completion.transaction_bytes.eq(current.transaction_bytes),
            ]
            for j in range(lanes):
                for i in range(DIGITS):
                    m.d.sync += self.walk.lane_digits[j][i].eq(digits[j][i])
            # and what it walks next
            with m.If(self.job.ready):
                m.d.sync += [busy.eq(self.job.valid), current.eq(self.job.payload), beat_index.eq(0),
                             alive.eq(self.job.payload.lane_alive)]
                for j in range(lanes):
                    for i in range(DIGITS):
                        m.d.sync += digits[j][i].eq(self.job.payload.lane_digits[j][i])
            with m.Elif(busy):
                m.d.sync += [alive.eq(next_alive), beat_index.eq(beat_index + 1)]
                for j in range(lanes):
                    for i in range(DIGITS):
                        m.d.sync += digits[j][i].eq(stepped[j][0][i])
        return m
