"""The descriptor register file and status registers, behind Wishbone.

``slots`` tensor-map images of 1024 bits (docs/descriptor.md) with byte write enables,
plus the status registers of :data:`REGISTERS`. The images are kept twice in block RAM:
as rows, which a request reads whole, and as 32-bit words, which the bus reads, so that
the bus's word needs no choice among a row's 32 behind the block RAM's output. The bytes
the front end's first decode reads (:data:`.layouts.EARLY_BYTES`) are kept once more, in
LUT RAM, and read with the row, so that no logic follows the block RAM's unregistered
output. A bus write to a slot's words clears the slot's valid bit: software writes the
32 words, then sets the bit in SLOT_VALID, so a half-written descriptor is never used.
The bit can be set only for a slot written since reset (a bit per slot records that), so
a slot never written is refused (SLOT_INVALID) as the model refuses a slot with no
image, rather than decoded from whatever the memory holds. A request reads (snapshots)
its slot when it is accepted; later writes cannot touch a copy in flight.

The status registers count a completion when it is taken (valid and ready on the unit's
completion stream), not when the unit queues it: software that has taken a completion and
then reads COMPLETED, STATUS or ERROR_ID finds it counted.

docs/registers.md is generated from :data:`REGISTERS` and :data:`RESET` (what reset does to
each piece of state: reset is an abort).
"""

import struct
from dataclasses import dataclass

from amaranth.hdl import Module, Signal, Cat, Const, Mux, Value, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from ..model.layout import DESCRIPTOR_BITS
from .bus import WishboneSignature
from .commit import CommitChecker, CheckLayout
from .layouts import DescriptorLayout, RequestLayout, EARLY_BYTES, EarlyLayout

__all__ = ["DescriptorFile", "SnapshotSignature", "ReportSignature", "BitField", "Register", "REGISTERS", "REGISTER",
           "RESET", "SLOT_BASE", "BLOCK_RAM", "UNDEFINED_COLLISIONS",
           "SLOT_STRIDE", "SLOT_VALID_ADDRESS", "descriptor_writes", "ID_VALUE", "bus_addr_width"]

ID_VALUE = 0x544D4131          # "TMA1"
SLOT_BASE = 0x400              # byte address of slot 0's word 0
SLOT_STRIDE = DESCRIPTOR_BITS // 8
WORDS_PER_SLOT = DESCRIPTOR_BITS // 32
#: The slot memories' attributes: Yosys (``memory_libmap``) and Vivado map a memory with
#: ``ram_style = "block"`` to block RAM (the ECP5's DP16KD), where a memory this shallow
#: would otherwise go to LUT RAM, one copy a read port (docs/fpga.md, "Clock speed").
BLOCK_RAM = {"ram_style": "block"}
#: The Yosys command that leaves undefined what the snapshot's and the bus's read ports
#: of the slot memories, and the datapath's read ports of its beat table, return when
#: they read a row, word or entry as a write lands on it.
#: Amaranth's read ports promise the old data there, which Yosys keeps on block RAM with
#: a delayed write and a multiplexer behind the block's output; the unit never uses such
#: a read (proof ``bus.no_collision``: a request that reads its slot as a write lands on
#: it finds the slot invalid, and no slot read of the bus takes a word as it is written),
#: so none is needed; nor does a record use what the beat table returns as the front
#: end writes the entry read (rtl/datapath.py). The ports are found by the wires their data
#: drives. Run after the design is read, before ``synth_ecp5`` (the board build and
#: src/synth.py). The early bytes' copy keeps the old-data read: in LUT RAM, read
#: through a register, it costs nothing, and the simulators read the same.
UNDEFINED_COLLISIONS = ("setparam -set COLLISION_X_MASK 1 w:snapshot__data w:bus_read__data %u w:beat_table_read_* %u"
                        " %ci1 t:$memrd_v2 %i")


@dataclass(frozen=True)
class BitField:
    """Bits ``[low + width - 1 : low]`` of a register."""
    name: str
    low: int
    width: int
    doc: str = ""

    @property
    def bits(self) -> str:
        return f"[{self.low}]" if self.width == 1 else f"[{self.low + self.width - 1}:{self.low}]"


@dataclass(frozen=True)
class Register:
    """A status register: its byte offset, access (``ro``, ``rw``, ``rw1c``), what it
    holds, and its bit fields, if it has any (:meth:`pack`)."""
    name: str
    offset: int
    access: str
    doc: str
    fields: tuple[BitField, ...] = ()

    @property
    def contents(self) -> str:
        """What docs/registers.md says it holds."""
        fields = "; ".join(f"{f.bits} {f.name}" + (f": {f.doc}" if f.doc else "") for f in self.fields)
        return "; ".join(part for part in (fields, self.doc) if part)

    def pack(self, **values):
        """The register's word from its fields' values: Amaranth values (a ``Cat``, the
        bits between fields 0) or ints."""
        fields = sorted(self.fields, key=lambda f: f.low)
        if all(isinstance(values[f.name], int) for f in fields):
            return sum((values[f.name] & ((1 << f.width) - 1)) << f.low for f in fields)
        parts, at = [], 0
        for f in fields:
            parts += [Const(0, f.low - at)] if f.low > at else []
            parts.append(Value.cast(values[f.name])[:f.width])
            at = f.low + f.width
        return Cat(*parts, Const(0, 32 - at))


REGISTERS: tuple[Register, ...] = (
    Register("ID", 0x000, "ro", "0x544D4131, 'TMA1'"),
    Register("CONFIG", 0x004, "ro", "", (
        BitField("lanes", 0, 4), BitField("slots_less_one", 4, 8, "slots - 1"),
        BitField("address_width", 12, 7), BitField("id_width_less_one", 19, 5, "id_width - 1"))),
    Register("SMEM_BYTES", 0x008, "ro", "shared-memory bytes the unit may write"),
    Register("STATUS", 0x00C, "rw1c", "a 1 written to bit 0 clears ERROR, LAST_ERROR and ERROR_COUNT", (
        BitField("ERROR", 0, 1, "a rejection's completion was taken since the last clear"),
        BitField("BUSY", 1, 1, "a request accepted whose completion is not taken yet (1 from the cycle after "
                 "the accept to the cycle of the take)"),
        BitField("LAST_ERROR", 8, 8, "code of the last rejection taken (docs/errors.md)"),
        BitField("ERROR_COUNT", 16, 16, "rejections taken, saturating"))),
    Register("ERROR_ID", 0x010, "ro", "", (BitField("request_id", 0, 16, "the request id of the last rejection taken"),)),
    Register("COMPLETED", 0x014, "ro", "completions taken (valid and ready on the completion stream), ok or "
             "error (wraps at 2^32)"),
    Register("SLOT_VALID", 0x018, "rw", "bit s: slot s holds a descriptor requests may use; a write to any "
             "word of slot s clears bit s; a 1 written to bit s takes only if slot s has been written since "
             "reset (else the bit stays 0); on a unit that checks at commit, a write that sets the bits of slots "
             "not valid is answered, and takes, once those slots' descriptors are checked (docs/commit.md)"),
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
#: Each register by name.
REGISTER = {r.name: r for r in REGISTERS}
_INDEX = {r.name: i for i, r in enumerate(REGISTERS)}
SLOT_VALID_ADDRESS = REGISTER["SLOT_VALID"].offset


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


class SnapshotSignature(wiring.Signature):
    """A request's read of its descriptor slot, from the reader's side: ``slot`` and
    ``en`` in the cycle the request is accepted; ``data`` (the 1024-bit image) and
    ``valid`` (the slot's SLOT_VALID bit then) from the next cycle, and ``early``, the
    image's :data:`.layouts.EARLY_BYTES` again, from LUT RAM; a unit that checks at commit
    adds ``checked``, what the slot's check found (:data:`.commit.CheckLayout`)."""

    def __init__(self, config: UnitConfig):
        checked = {"checked": In(CheckLayout)} if config.checks_at_commit else {}
        super().__init__({"slot": Out(RequestLayout["slot"].shape), "en": Out(1),
                          "data": In(DescriptorLayout), "early": In(EarlyLayout), "valid": In(1), **checked})


class ReportSignature(wiring.Signature):
    """What the unit tells its status registers, from the unit's side: ``taken`` for each
    completion taken at the unit's port (valid and ready), with its ``code`` (0 ok, else
    the error code) and ``request_id``; ``busy``, a request accepted whose completion is
    not taken yet (STATUS.BUSY)."""

    def __init__(self, config: UnitConfig):
        super().__init__({"taken": Out(1), "code": Out(8), "request_id": Out(config.id_width), "busy": Out(1)})


@dataclass
class _Status:
    """The status registers' state (:data:`REGISTERS`)."""
    slot_valid: Signal
    written: Signal         # slot s has had a bus write since reset
    error: Signal           # STATUS.ERROR
    last_error: Signal
    error_count: Signal
    errors_full: Signal     # error_count is 0xFFFF: it saturates
    error_id: Signal
    completed: Signal


@dataclass
class _Commit:
    """A SLOT_VALID write held while the slots it makes valid are checked (a unit that
    checks at commit): its answer waits, and its bits take when it is answered."""
    holding: Signal         # the write is taken and not answered yet
    to_check: Signal        # slots still to check
    valid_after: Signal     # SLOT_VALID once it is answered
    checking: Signal        # the checker is running
    slot: Signal            # on this slot
    results: Memory         # per slot, what its last check found (CheckLayout)


@dataclass
class _Access:
    """A bus access in flight: its decode (registered in the strobe's cycle), the cycle
    acting on it (``pending``), a slot read's two cycles (``reading``, ``picked``), and
    the answer registered for the bus."""
    decoded: Signal
    pending: Signal
    reading: Signal
    picked: Signal
    ack: Signal
    err: Signal
    answer: Signal


class DescriptorFile(wiring.Component):
    """Tensor-map slots and status registers.

    Ports
    -----
    bus : Wishbone target
    snapshot : :class:`SnapshotSignature` in: a request's read of its slot
    report : :class:`ReportSignature` in: completions taken, and BUSY
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        self.slot_width = max(1, (config.slots - 1).bit_length())
        super().__init__({
            "bus": In(WishboneSignature(bus_addr_width(config))),
            "snapshot": In(SnapshotSignature(config)),
            "report": In(ReportSignature(config)),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        # the slots as rows for the snapshot, and again as 32-bit words for the bus's
        # reads, both in block RAM; the rows' EARLY_BYTES once more, in LUT RAM (a
        # memory this small), read beside the rows for the front end's first decode
        m.submodules.rows = rows = Memory(shape=unsigned(DESCRIPTOR_BITS), depth=config.slots, init=[],
                                          attrs=BLOCK_RAM)
        m.submodules.words = words = Memory(shape=unsigned(32), depth=config.slots * WORDS_PER_SLOT, init=[],
                                            attrs=BLOCK_RAM)
        m.submodules.early = early = Memory(shape=unsigned(EarlyLayout.size), depth=config.slots, init=[])
        status = _Status(slot_valid=Signal(config.slots, name="slot_valid"),
                         written=Signal(config.slots, name="written"), error=Signal(name="status_error"),
                         last_error=Signal(8, name="last_error"), error_count=Signal(16, name="error_count"),
                         errors_full=Signal(name="errors_full"), error_id=Signal(16, name="error_id"),
                         completed=Signal(32, name="completed"))
        commit = None
        if config.checks_at_commit:
            commit = _Commit(holding=Signal(name="commit_holding"), to_check=Signal(config.slots, name="to_check"),
                             valid_after=Signal(config.slots, name="valid_after", reset_less=True),
                             checking=Signal(name="checking"),
                             slot=Signal(self.slot_width, name="checked_slot", reset_less=True),
                             results=Memory(shape=CheckLayout, depth=config.slots, init=[]))
            m.submodules.checked = commit.results
        snap_read = rows.read_port()
        early_read = early.read_port()
        self._snapshot_port(m, snap_read, early_read, status, commit)
        access = self._decode_access(m, commit)
        self._slot_access(m, rows, words, early, access, status)
        self._register_access(m, access, status, commit)
        if commit is not None:
            self._check_commits(m, rows.read_port(), access, status, commit)
        self._count_completions(m, status)
        return m

    def _check_commits(self, m, read, access, status, commit):
        """A unit that checks at commit: the slots a SLOT_VALID write makes valid are
        checked one after another, lowest first, by :class:`.commit.CommitChecker`,
        which reads its slot through a read port of its own on the rows (``read``: its
        register holds still between the checks' reads); each check's result is stored
        beside its slot, and the write is answered, and its bits take, when the last is
        done."""
        m.submodules.checker = checker = CommitChecker(self.config)
        lowest = Signal(self.slot_width, name="lowest_to_check")
        for slot in reversed(range(self.config.slots)):
            with m.If(commit.to_check[slot]):
                m.d.comb += lowest.eq(slot)
        start = commit.holding & ~commit.checking & (commit.to_check != 0)
        m.d.comb += [checker.start.eq(start), checker.descriptor.eq(read.data)]
        with m.If(commit.holding):
            # the port reads in this cycle only (a read port's enable is high unless driven)
            m.d.comb += [read.addr.eq(lowest), read.en.eq(start)]
        with m.If(start):
            m.d.sync += [commit.checking.eq(1), commit.slot.eq(lowest),
                         commit.to_check.eq(commit.to_check & ~(Const(1, self.config.slots) << lowest))]
        store = commit.results.write_port()
        m.d.comb += [store.addr.eq(commit.slot), store.data.eq(checker.result), store.en.eq(checker.done)]
        with m.If(checker.done):
            m.d.sync += commit.checking.eq(0)
        with m.If(commit.holding & ~commit.checking & (commit.to_check == 0)):
            m.d.comb += access.ack.eq(1)
            m.d.sync += [commit.holding.eq(0), status.slot_valid.eq(commit.valid_after)]

    def _snapshot_port(self, m, read, early, status, commit):
        """A request's slot, read when it is accepted (``read`` the rows, ``early`` their
        early bytes' copy), with its SLOT_VALID bit (and, at commit, what the slot's check
        found)."""
        snapshot = self.snapshot
        slot = snapshot.slot[:self.slot_width]
        m.d.comb += [
            read.addr.eq(slot),
            read.en.eq(snapshot.en),
            snapshot.data.eq(read.data),
            early.addr.eq(slot),
            early.en.eq(snapshot.en),
            snapshot.early.eq(early.data),
        ]
        with m.If(snapshot.en):
            m.d.sync += snapshot.valid.eq((snapshot.slot < self.config.slots) & (status.slot_valid >> slot)[0])
        if commit is not None:
            # a memory like the slots' (a register with bits yosys finds constant makes
            # the port a wire CXXRTL must buffer)
            checked = commit.results.read_port()
            m.d.comb += [checked.addr.eq(slot), checked.en.eq(snapshot.en), snapshot.checked.eq(checked.data)]

    def _decode_access(self, m, commit) -> _Access:
        """The strobe's cycle registers the address decode (the compares), the next acts
        on it and registers the answer, which is on the bus in the third; a slot read
        takes two more, for the word memory's read register and a register of the word
        itself. So no path runs from the address through the compares into the write
        enables, the block RAM or the answer (docs/fpga.md, "Clock speed"); the bus is
        for set-up, and its rate does not matter."""
        config, bus = self.config, self.bus
        byte_addr = Cat(Const(0, 2), bus.adr)
        access = _Access(decoded=Signal(data.StructLayout({"in_slots": 1, "slot": self.slot_width, "word": 5,
                                                           "hits": len(REGISTERS), "we": 1}), name="decoded"),
                         pending=Signal(name="pending"), reading=Signal(name="reading"), picked=Signal(name="picked"),
                         ack=Signal(name="ack"), err=Signal(name="err"), answer=Signal(32, name="answer"))
        start = bus.cyc & bus.stb & ~access.pending & ~access.reading & ~access.picked & ~bus.ack & ~bus.err
        if commit is not None:
            start &= ~commit.holding            # a SLOT_VALID write waits for its checks
        slot_offset = byte_addr - SLOT_BASE
        decoded = access.decoded
        with m.If(start):
            m.d.sync += [
                decoded.in_slots.eq((byte_addr >= SLOT_BASE) & (byte_addr < SLOT_BASE + config.slots * SLOT_STRIDE)),
                decoded.slot.eq(slot_offset[7:7 + self.slot_width] if config.slots > 1 else 0),
                decoded.word.eq(slot_offset[2:7]),
                decoded.hits.eq(Cat(byte_addr == r.offset for r in REGISTERS)),
                decoded.we.eq(bus.we),
            ]
        m.d.sync += [access.pending.eq(start), access.reading.eq(0), access.picked.eq(access.reading),
                     bus.ack.eq(access.ack), bus.err.eq(access.err), bus.dat_r.eq(access.answer)]
        return access

    def _slot_access(self, m, rows, words, early, access, status):
        """A slot word written or read. A slot write is registered: the decode's
        flip-flops, not logic, drive the write enables of the slot memories' blocks. It
        lands in every slot memory (the early bytes' copy takes the rows' bytes and byte
        enables) as its ack is on the bus; the slot was marked invalid a
        cycle before, so no request can take the slot's old contents for valid in between.
        A slot read reads the word memory: its word is the block RAM's output, with no
        choice among a row's 32 behind it (docs/fpga.md, "Clock speed")."""
        bus, decoded = self.bus, access.decoded
        row_write = rows.write_port(granularity=8)
        word_write = words.write_port(granularity=8)
        early_write = early.write_port(granularity=8)
        bus_read = words.read_port()
        write_en = Signal(len(row_write.en))
        write_slot = Signal.like(decoded.slot)
        write_word = Signal.like(decoded.word)
        write_sel = Signal(len(bus.sel))
        write_data = Signal(32)
        m.d.sync += [write_en.eq(0), write_sel.eq(0)]
        m.d.comb += [
            bus_read.addr.eq(Cat(decoded.word, decoded.slot)),
            row_write.addr.eq(write_slot),
            row_write.data.eq(write_data.replicate(WORDS_PER_SLOT)),
            row_write.en.eq(write_en),
            word_write.addr.eq(Cat(write_word, write_slot)),
            word_write.data.eq(write_data),
            word_write.en.eq(write_sel),
            early_write.addr.eq(write_slot),
            early_write.data.eq(row_write.data[8 * EARLY_BYTES.start:8 * EARLY_BYTES.stop]),
            early_write.en.eq(write_en[EARLY_BYTES.start:EARLY_BYTES.stop]),
        ]
        slot_word = Signal(32)
        with m.If(access.reading):
            m.d.sync += slot_word.eq(bus_read.data)
        with m.If(access.picked):
            m.d.comb += [access.ack.eq(1), access.answer.eq(slot_word)]
        with m.If(access.pending & decoded.in_slots):
            m.d.comb += access.ack.eq(decoded.we)
            with m.If(decoded.we):
                m.d.sync += [write_en.eq(bus.sel << (4 * decoded.word)), write_slot.eq(decoded.slot),
                             write_word.eq(decoded.word), write_sel.eq(bus.sel), write_data.eq(bus.dat_w)]
                slot_bit = Const(1, self.config.slots) << decoded.slot
                m.d.sync += [status.slot_valid.eq(status.slot_valid & ~slot_bit), status.written.eq(status.written | slot_bit)]
            with m.Else():
                m.d.comb += bus_read.en.eq(1)
                m.d.sync += access.reading.eq(1)

    def _register_access(self, m, access, status, commit):
        """A status register written or read; a write to a read-only register or to no
        register is answered ERR and changes nothing."""
        bus, decoded = self.bus, access.decoded

        def hit(name):
            return decoded.hits[_INDEX[name]]

        def masked(old, new):
            """``new`` where ``sel`` enables a byte, ``old`` elsewhere (32 bits)."""
            return Cat(*(Mux(bus.sel[i], new[8 * i:8 * i + 8], old[8 * i:8 * i + 8]) for i in range(len(bus.sel))))

        values = self._register_values(status)
        known = Cat(hit(name) for name in values).any()
        # the offsets are distinct, so at most one register is hit: a parallel multiplexer
        # on the hit bits, with no priority chain behind it (an OR of the registers' values
        # each masked by its hit bit would be the same logic, but Yosys's constant folding
        # of ID, CONFIG and SMEM_BYTES there can leave a wire whose bits copy its own
        # other bits, which CXXRTL cannot evaluate in one pass)
        read_value = Signal(32, name="read_value")
        with m.Switch(decoded.hits):
            for name, value in values.items():
                index = _INDEX[name]
                with m.Case("-" * (len(REGISTERS) - 1 - index) + "1" + "-" * index):
                    m.d.comb += read_value.eq(value)
        with m.If(access.pending & ~decoded.in_slots):
            with m.If(decoded.we):
                with m.If(hit("STATUS")):
                    m.d.comb += access.ack.eq(1)
                    with m.If(bus.sel[0] & bus.dat_w[0]):
                        m.d.sync += [status.error.eq(0), status.last_error.eq(0), status.error_count.eq(0),
                                     status.errors_full.eq(0)]
                with m.Elif(hit("SLOT_VALID")):
                    # only a slot written since reset can be valid; this keeps SLOT_VALID
                    # within `written`, so the snapshot needs no test of its own
                    valid = masked(values["SLOT_VALID"], bus.dat_w) & status.written
                    if commit is None:
                        m.d.comb += access.ack.eq(1)
                        m.d.sync += status.slot_valid.eq(valid)
                    else:
                        # slots made valid are checked first (_check_commits)
                        made_valid = valid & ~status.slot_valid
                        with m.If(made_valid == 0):
                            m.d.comb += access.ack.eq(1)
                            m.d.sync += status.slot_valid.eq(valid)
                        with m.Else():
                            m.d.sync += [commit.holding.eq(1), commit.to_check.eq(made_valid),
                                         commit.valid_after.eq(valid)]
                with m.Else():
                    m.d.comb += access.err.eq(1)               # read-only or unmapped
            with m.Else():
                m.d.comb += [access.ack.eq(known), access.err.eq(~known), access.answer.eq(read_value)]

    def _count_completions(self, m, status):
        """Every completion taken counts; a rejection sets the sticky error. The report is
        registered first: it is the completion stream's handshake, whose ready comes from
        outside the unit and whose payload from the completion queue across the chip
        (docs/fpga.md, "Clock speed"), and the counts may lag it by a cycle (whether it is
        an error decided before that register, and whether the error count is full kept
        beside the count, so neither is a compare behind it). A read strobed in the cycle
        after the take acts a cycle later still, so it finds the completion counted."""
        report = Signal(data.StructLayout({"valid": 1, "error": 1, "code": 8, "id": self.config.id_width}))
        m.d.sync += [report.valid.eq(self.report.taken), report.error.eq(self.report.code != 0),
                     report.code.eq(self.report.code), report.id.eq(self.report.request_id)]
        with m.If(report.valid):
            m.d.sync += status.completed.eq(status.completed + 1)
            with m.If(report.error):
                m.d.sync += [status.error.eq(1), status.last_error.eq(report.code), status.error_id.eq(report.id)]
                with m.If(~status.errors_full):
                    m.d.sync += [status.error_count.eq(status.error_count + 1),
                                 status.errors_full.eq(status.error_count == 0xFFFE)]

    def _register_values(self, status):
        config = self.config
        return {
            "ID": Const(ID_VALUE, 32),
            "CONFIG": Const(REGISTER["CONFIG"].pack(lanes=config.lanes, slots_less_one=config.slots - 1,
                                                    address_width=config.address_width,
                                                    id_width_less_one=config.id_width - 1), 32),
            "SMEM_BYTES": Const(config.smem_bytes, 32),
            "STATUS": REGISTER["STATUS"].pack(ERROR=status.error, BUSY=self.report.busy, LAST_ERROR=status.last_error,
                                              ERROR_COUNT=status.error_count),
            "ERROR_ID": REGISTER["ERROR_ID"].pack(request_id=status.error_id),
            "COMPLETED": status.completed,
            "SLOT_VALID": Cat(status.slot_valid, Const(0, 32))[:32],
        }
