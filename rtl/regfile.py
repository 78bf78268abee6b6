"""The descriptor register file and status registers, behind Wishbone.

``slots`` tensor-map images of 1024 bits (docs/descriptor.md) in one memory with byte
write enables, plus the status registers of :data:`REGISTERS`. A bus write to a slot's
words clears the slot's valid bit: software writes the 32 words, then sets the bit in
SLOT_VALID, so a half-written descriptor is never used. The bit can be set only for a
slot written since reset (a bit per slot records that), so a slot never written is
refused (SLOT_INVALID) as the model refuses a slot with no image, rather than decoded
from whatever the memory holds. A request reads (snapshots) its slot when it is
accepted; later writes cannot touch a copy in flight.

The status registers count a completion when it is taken (valid and ready on the unit's
completion stream), not when the unit queues it: software that has taken a completion and
then reads COMPLETED, STATUS or ERROR_ID finds it counted.

docs/registers.md is generated from :data:`REGISTERS` and :data:`RESET` (what reset does to
each piece of state: reset is an abort).
"""

import operator
import struct
from dataclasses import dataclass
from functools import reduce

from amaranth.hdl import Module, Signal, Cat, Const, Mux, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from ..model.layout import DESCRIPTOR_BITS
from .bus import WishboneSignature
from .layouts import DescriptorLayout

__all__ = ["DescriptorFile", "Register", "REGISTERS", "RESET", "SLOT_BASE", "SLOT_STRIDE", "SLOT_VALID_ADDRESS",
           "descriptor_writes", "ID_VALUE",
           "bus_addr_width"]

ID_VALUE = 0x544D4131          # "TMA1"
SLOT_BASE = 0x400              # byte address of slot 0's word 0
SLOT_STRIDE = DESCRIPTOR_BITS // 8
WORDS_PER_SLOT = DESCRIPTOR_BITS // 32


@dataclass(frozen=True)
class Register:
    name: str
    offset: int
    access: str         # "ro", "rw", "rw1c"
    doc: str


REGISTERS: tuple[Register, ...] = (
    Register("ID", 0x000, "ro", "0x544D4131, 'TMA1'"),
    Register("CONFIG", 0x004, "ro", "[3:0] lanes, [11:4] slots - 1, [18:12] address_width, [23:19] id_width - 1"),
    Register("SMEM_BYTES", 0x008, "ro", "shared-memory bytes the unit may write"),
    Register("STATUS", 0x00C, "rw1c", "[0] ERROR: a rejection's completion was taken since the last clear "
             "(write 1 to clear [0], [15:8] and [31:16]); [1] BUSY: a request accepted whose completion is not "
             "taken yet (1 from the cycle after the accept to the cycle of the take); [15:8] LAST_ERROR: code "
             "of the last rejection taken (docs/errors.md); [31:16] ERROR_COUNT: rejections taken, saturating"),
    Register("ERROR_ID", 0x010, "ro", "[15:0] request id of the last rejection taken"),
    Register("COMPLETED", 0x014, "ro", "completions taken (valid and ready on the completion stream), ok or "
             "error (wraps at 2^32)"),
    Register("SLOT_VALID", 0x018, "rw", "bit s: slot s holds a descriptor requests may use; a write to any "
             "word of slot s clears bit s; a 1 written to bit s takes only if slot s has been written since "
             "reset (else the bit stays 0)"),
)
#: What reset does to each piece of the unit's state, (state, after reset) rows for
#: docs/registers.md's "Reset". Reset is an abort: nothing in flight goes on.
RESET: tuple[tuple[str, str], ...] = (
    ("requests in flight (front end, walker, datapath, beat and completion queues)",
     "abandoned: no more beats and no completion for any of them (send them again)"),
    ("request, beat and completion streams",
     "no transfer in a cycle reset is asserted (`requests.ready`, `beats.valid` and `completions.valid` are 0); "
     "in the cycle after, no beat or completion is offered, and requests are taken again"),
    ("STATUS (ERROR, BUSY, LAST_ERROR, ERROR_COUNT), ERROR_ID, COMPLETED", "0"),
    ("SLOT_VALID", "0"),
    ("slot memory", "kept, but every slot counts as not written: SLOT_VALID bit s can be set again only after "
     "a write to slot s, so write each descriptor again"),
    ("a bus access not yet answered",
     "dropped, and done again from its start after reset (the master still holds its strobe): answered once"),
)
_BY_NAME = {r.name: r for r in REGISTERS}
_INDEX = {r.name: i for i, r in enumerate(REGISTERS)}
SLOT_VALID_ADDRESS = _BY_NAME["SLOT_VALID"].offset


def descriptor_writes(slot: int, image: bytes) -> list[tuple[int, int]]:
    """The bus writes that store a descriptor ``image`` in ``slot``: (byte address, word)
    pairs, word 0 first. Every bus driver (testbench, compiled backends, host) uses these."""
    if len(image) != SLOT_STRIDE:
        raise ValueError(f"a descriptor image is {SLOT_STRIDE} bytes, not {len(image)}")
    base = SLOT_BASE + slot * SLOT_STRIDE
    return [(base + 4 * word, value) for word, value in enumerate(struct.unpack(f"<{WORDS_PER_SLOT}I", image))]


def bus_addr_width(config: UnitConfig) -> int:
    """Word-address bits that cover the registers and every slot."""
    top = SLOT_BASE + config.slots * SLOT_STRIDE
    return max(1, (top // 4 - 1).bit_length())


class DescriptorFile(wiring.Component):
    """Tensor-map slots and status registers.

    Ports
    -----
    bus : Wishbone target
    snap_slot, snap_en : in
        Read slot ``snap_slot`` when ``snap_en``; ``snap_data`` and ``snap_valid`` hold it
        from the next cycle.
    report : in
        Strobe with ``report_code`` (0 ok, else an error code) and ``report_id`` for each
        completion taken from the unit (the completion stream's valid and ready).
    busy : in
        A request has been accepted whose completion is not taken yet (STATUS.BUSY).
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        self.slot_width = max(1, (config.slots - 1).bit_length())
        super().__init__({
            "bus": In(WishboneSignature(bus_addr_width(config))),
            "snap_slot": In(8),
            "snap_en": In(1),
            "snap_data": Out(DescriptorLayout),
            "snap_valid": Out(1),
            "report": In(1),
            "report_code": In(8),
            "report_id": In(config.id_width),
            "busy": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        bus = self.bus

        m.submodules.mem = mem = Memory(shape=unsigned(DESCRIPTOR_BITS), depth=config.slots, init=[])
        write = mem.write_port(granularity=8)
        bus_read = mem.read_port()
        snap_read = mem.read_port()

        slot_valid = Signal(config.slots)
        written = Signal(config.slots)      # slot s has had a bus write since reset
        status_error = Signal()
        last_error = Signal(8)
        error_count = Signal(16)
        errors_full = Signal()          # error_count is 0xFFFF: it saturates
        error_id = Signal(16)
        completed = Signal(32)

        # -- snapshot port --------------------------------------------------------------
        snap_in_range = self.snap_slot < config.slots
        m.d.comb += [
            snap_read.addr.eq(self.snap_slot[:self.slot_width]),
            snap_read.en.eq(self.snap_en),
            self.snap_data.eq(snap_read.data),
        ]
        with m.If(self.snap_en):
            m.d.sync += self.snap_valid.eq(snap_in_range & (slot_valid >> self.snap_slot[:self.slot_width])[0])

        # -- bus decode -----------------------------------------------------------------
        # The strobe's cycle registers the address decode (the compares), the next acts
        # on it and registers the answer, which is on the bus in the third; a slot read
        # takes two more, for the slot memory's read register and for the word picked
        # from its 32 (a register of its own). So no path runs from the address through
        # the compares into the write enables, the read multiplexers or the answer
        # (docs/fpga.md, "Clock speed"); the bus is for set-up, and its rate does not
        # matter.
        byte_addr = Cat(Const(0, 2), bus.adr)
        pending, reading, picked = Signal(name="pending"), Signal(name="reading"), Signal(name="picked")
        start = bus.cyc & bus.stb & ~pending & ~reading & ~picked & ~bus.ack & ~bus.err
        slot_offset = byte_addr - SLOT_BASE
        decoded = Signal(data.StructLayout({
            "in_slots": 1, "slot": self.slot_width, "word": 5,
            "hits": len(REGISTERS), "we": 1,
        }))
        with m.If(start):
            m.d.sync += [
                decoded.in_slots.eq((byte_addr >= SLOT_BASE) & (byte_addr < SLOT_BASE + config.slots * SLOT_STRIDE)),
                decoded.slot.eq(slot_offset[7:7 + self.slot_width] if config.slots > 1 else 0),
                decoded.word.eq(slot_offset[2:7]),
                decoded.hits.eq(Cat(byte_addr == r.offset for r in REGISTERS)),
                decoded.we.eq(bus.we),
            ]
        m.d.sync += [pending.eq(start), reading.eq(0), picked.eq(reading)]

        def hit(name):
            return decoded.hits[_INDEX[name]]

        # a slot write is registered: the decode's flip-flops, not logic, drive the write
        # enables of the 450 LUT RAM cells spread over the chip. It lands as its ack is on
        # the bus; the slot was marked invalid a cycle before, so no request can take the
        # slot's old contents for valid in between.
        write_en = Signal(len(write.en))
        write_slot = Signal.like(decoded.slot)
        write_data = Signal(32)
        m.d.sync += write_en.eq(0)
        m.d.comb += [
            bus_read.addr.eq(decoded.slot),
            write.addr.eq(write_slot),
            write.data.eq(write_data.replicate(WORDS_PER_SLOT)),
            write.en.eq(write_en),
        ]
        ack, err, answer = Signal(name="ack"), Signal(name="err"), Signal(32, name="answer")
        m.d.sync += [bus.ack.eq(ack), bus.err.eq(err), bus.dat_r.eq(answer)]

        def masked(old, new):
            """``new`` where ``sel`` enables a byte, ``old`` elsewhere (32 bits)."""
            return Cat(*(Mux(bus.sel[i], new[8 * i:8 * i + 8], old[8 * i:8 * i + 8]) for i in range(4)))

        values = self._register_values(slot_valid, status_error, last_error, error_count, error_id, completed)
        # the offsets are distinct, so at most one register is hit: an AND-OR multiplexer
        # with no priority chain behind it
        known = Cat(hit(name) for name in values).any()
        read_value = reduce(operator.or_, (Mux(hit(name), value, 0) for name, value in values.items()))
        slot_word = Signal(32)
        with m.If(reading):
            m.d.sync += slot_word.eq(bus_read.data.word_select(decoded.word, 32))
        with m.If(picked):
            m.d.comb += [ack.eq(1), answer.eq(slot_word)]
        with m.If(pending):
            with m.If(decoded.in_slots):
                m.d.comb += ack.eq(decoded.we)
                with m.If(decoded.we):
                    m.d.sync += [write_en.eq(bus.sel << (4 * decoded.word)), write_slot.eq(decoded.slot),
                                 write_data.eq(bus.dat_w)]
                    slot_bit = Const(1, config.slots) << decoded.slot
                    m.d.sync += [slot_valid.eq(slot_valid & ~slot_bit), written.eq(written | slot_bit)]
                with m.Else():
                    m.d.comb += bus_read.en.eq(1)
                    m.d.sync += reading.eq(1)
            with m.Elif(decoded.we):
                with m.If(hit("STATUS")):
                    m.d.comb += ack.eq(1)
                    with m.If(bus.sel[0] & bus.dat_w[0]):
                        m.d.sync += [status_error.eq(0), last_error.eq(0), error_count.eq(0), errors_full.eq(0)]
                with m.Elif(hit("SLOT_VALID")):
                    m.d.comb += ack.eq(1)
                    # only a slot written since reset can be valid; this keeps SLOT_VALID
                    # within `written`, so the snapshot needs no test of its own
                    m.d.sync += slot_valid.eq(masked(values["SLOT_VALID"], bus.dat_w) & written)
                with m.Else():
                    m.d.comb += err.eq(1)               # read-only or unmapped
            with m.Else():
                m.d.comb += [ack.eq(known), err.eq(~known), answer.eq(read_value)]

        # -- status: every completion taken counts; a rejection sets the sticky error -----
        # the report is registered first: it is the completion stream's handshake, whose
        # ready comes from outside the unit and whose payload from the completion queue
        # across the chip (docs/fpga.md, "Clock speed"), and the counts may lag it by a
        # cycle (whether it is an error decided before that register, and whether the
        # error count is full kept beside the count, so neither is a compare behind it).
        # A read strobed in the cycle after the take acts a cycle later still, so it finds
        # the completion counted.
        report = Signal(data.StructLayout({"valid": 1, "error": 1, "code": 8, "id": config.id_width}))
        m.d.sync += [report.valid.eq(self.report), report.error.eq(self.report_code != 0),
                     report.code.eq(self.report_code), report.id.eq(self.report_id)]
        with m.If(report.valid):
            m.d.sync += completed.eq(completed + 1)
            with m.If(report.error):
                m.d.sync += [status_error.eq(1), last_error.eq(report.code), error_id.eq(report.id)]
                with m.If(~errors_full):
                    m.d.sync += [error_count.eq(error_count + 1), errors_full.eq(error_count == 0xFFFE)]
        return m

    def _register_values(self, slot_valid, status_error, last_error, error_count, error_id, completed):
        config = self.config
        return {
            "ID": Const(ID_VALUE, 32),
            "CONFIG": Const(config.lanes | (config.slots - 1) << 4 | config.address_width << 12
                            | (config.id_width - 1) << 19, 32),
            "SMEM_BYTES": Const(config.smem_bytes, 32),
            "STATUS": Cat(status_error, self.busy, Const(0, 6), last_error, error_count),
            "ERROR_ID": error_id,
            "COMPLETED": completed,
            "SLOT_VALID": Cat(slot_valid, Const(0, 32))[:32],
        }
