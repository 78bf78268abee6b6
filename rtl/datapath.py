"""From odometer digits to beats: coordinates, the out-of-bounds detector, address
generation and the swizzle, in seven pipeline stages behind the walker, each cut short
enough for the clock (docs/fpga.md, "Clock speed"):

A0. the digits' products: ``digit * element stride`` in dimensions 1..4 (strides are
    1..8: shifted adds) and each lane's chunk's offset along dimension 0 (the walker
    keeps lane 0's as a sum, ``row_values``; lane ``j`` adds ``j * chunk_values``);
A1. coordinates: ``start`` plus those products in dimensions 1..4 (gather4: the row the
    digit picks; the im2col modes: the walker's pixel coordinates), the value coordinate
    of the chunk's first unit along dimension 0, the chunk's kind (units, their mask and
    bytes: the job's full or last chunk), its place in the dense shared-memory image;
A2. whether the chunk is inside dimensions 1..4 and the window of its units' offsets
    inside dimension 0 (PTX 5.5.3.3: negative coordinates and coordinates past the
    dimension are both out; :func:`.oob.unit_window`), the swizzled shared-memory address
    (5.5.7), the first unit's index; the products ``coordinate * stride`` (34-bit
    signed by 40-bit strides whose low 4 bits are 0, modulo 2^address_width) as four
    18x18 partial products (:func:`.arith.partial_products`) in DSP blocks whose operand
    registers are A2's, loaded from A1's coordinates with no logic between, and two by
    the stride's top 2 bits in logic;
A3. the partial products arrive in the blocks' product registers (A3's). The route into
    a block and the route out of it are each a path of its own, with nothing but
    registers at their ends (docs/fpga.md, "Clock speed"); every unit's offset from the
    chunk's first value (from the job alone, for B1's bound compares);
B1, B2. the global address's adder tree, one level in B1 (behind the DSP blocks'
    routing), two in B2: base and the partial products, and from B2 on the dimension-0
    offset (the first unit times its bytes,
    shifts and one add in B1: :func:`.arith.sparse_product`); in B1 also the two
    compares of every unit's offset (from the job alone) with the window and the AND of
    dimensions 1..4's bits, and in B2 the unit's in-bounds bit, the AND of all three;
C.  the last terms (up to four) by carry-save adders and one carry chain, into the
    beat queue; in a unit with a request former (``UnitConfig.request_former``), into the
    former's stages first (:mod:`.request_former`): :data:`~tma_unit.model.config.FORMER_STAGES`
    more, none of which stalls. Its first stage only registers the address's bits, so
    stage C's carry chain ends there as it did at the queue.

A job's beat constants wait in the beat table (``table``, block RAM the front end writes
as the request enters its stage 8), and each record carries its job's entry (``tag``): stage A1's
constants are read as the walker emits the record, at the walk link's ``tag_ahead``,
those of A2 on as the record is in the walk register, each into a register of the stage
before the one that reads it (``_read_table``). What a stage only passes on after that,
and what a lane's stage only passes on, rides in the stages' :class:`.pipeline.Line` in
LUT RAM (docs/architecture.md, "Where values are kept").

The stages never stall: they move every cycle, and the walker emits a record only when
the datapath holds a credit for it (``issue``, a register; the walker keeps copies): the
records between the walker and the beat stream never outnumber the queue's entries, so
every record finds room when it arrives. The beat stream is the queue's head (first
word fall-through, so a record reaches it in the cycle after stage B2, as an output
register would); its
valid never waits on its ready, and ``ready`` reaches nothing but the queue's read and
the credit count. A backpressured stream therefore stops no stage and no enable (the
clock's reason: docs/fpga.md). Each job's completion rides with its last beat (or alone,
for a rejected request) and is queued for the completion stream when that beat leaves.
Whether the head is a beat and carries a completion, which decide its leaving and the
completion queue's write, are registers beside the queue (:mod:`.beat_queue`), not its LUT
RAM's read, and the queue's write is not gated by its level (the credit keeps it from
filling): each of those routes, across the chip, was a board top's longest path.
"""

from amaranth.hdl import Module, Signal, Const, Mux, Array, Cat, Value, signed
from amaranth.lib import wiring, stream, data
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig, FORMER_STAGES
from ..model.gather import GATHER_ROWS
from ..model.timing import BACK_END_STAGES
from .arith import partial_products, add_pairs, carry_save_sum, small_product, sparse_product
from .beat_queue import BeatQueue
from .decode import STRIDE_ZERO_BITS, UNIT_BYTES
from .layouts import (beat_layout, CompletionLayout, PIXEL_DIMENSIONS, beat_entry_layout, beat_tag_width,
                      beat_table_depth)
from .regfile import BLOCK_RAM
from .oob import WINDOW, UnitWindow, inside_dimensions, unit_window, unit_bounds
from .pipeline import Line, Stage, bundle, extend, narrow
from .request_former import RequestFormer, addressed
from .swizzle import swizzle_address
from .walker import WalkSignature, completion_info_layout

__all__ = ["Datapath", "BeatTableSignature", "STAGES", "queued_layout"]

#: Registers from the walker's output to the beat stream, the walker's own and the beat
#: queue included: the timing model's BACK_END_STAGES, the walk register, the six stages
#: below (:data:`STAGE_NAMES`) and the queue (with a request former, FORMER_STAGES more).
STAGES = BACK_END_STAGES
#: The stages between the walk register and the beat queue.
STAGE_NAMES = ("a0", "a1", "a2", "a3", "b1", "b2")
assert STAGES == 1 + len(STAGE_NAMES) + 1, "the timing model's back end is not the datapath's"
# The beat queue has ``config.beat_queue`` entries: at least the records that can be on
# their way to it when its head stops (the walk register, six stages, the record the
# walker emits, the one it may emit: 9), so that a run of ready cycles after a stop finds
# beats waiting. The default, 16, is the depth of one ECP5 LUT RAM, so up to 16 entries
# cost the same LUT RAM.


def queued_layout(config: UnitConfig, granule: int | None = None) -> data.StructLayout:
    """An entry of the beat queue: a record's beat (with its requests where the unit forms
    them, without their addresses, which the beat's lanes give; ``granule`` 0: without
    requests), or its completion alone. Its first bits are the flags the queue keeps
    beside its head (:data:`HEAD_FLAGS`)."""
    return data.StructLayout({
        "is_beat": 1,
        "has_completion": 1,
        "completion": completion_info_layout(config),
        "beat": beat_layout(config, granule, addressed=False),
    })


#: The bits at the start of a queued record that decide its leaving: ``is_beat`` and
#: ``has_completion``, kept in registers beside the queue's LUT RAM (:mod:`.beat_queue`).
HEAD_FLAGS = 2


class BeatTableSignature(wiring.Signature):
    """The front end's writes into the datapath's beat table, as the front end drives
    them: in a cycle with ``en``, entry ``tag`` takes ``data``, a job's beat constants
    (``beat_entry_layout``); the job carries the entry's number (``job_layout``)."""

    def __init__(self, config: UnitConfig):
        super().__init__({"en": Out(1), "tag": Out(beat_tag_width(config)),
                          "data": Out(beat_entry_layout(config))})


# -- what each stage holds ------------------------------------------------------------------

@bundle
class Control:
    """What every stage passes on: the record's control bits."""
    valid: Value
    is_beat: Value
    last: Value
    has_completion: Value
    completion: Value


@bundle
class WindowControl(Control):
    """Stage A1's control: dimension 0's size less :data:`.oob.WINDOW`, for A2's windows."""
    dim0_less_window: Value


@bundle
class AddressControl(Control):
    """The control from stage A1 on: the job's constants the stages from A2 on read
    (``address_constants_layout``), from the beat table."""
    address: Value


@bundle
class AddressWindowControl(AddressControl, WindowControl):
    """Stage A1's control with the constants the beat table gives it."""


@bundle
class RowDigits:
    """The beat's row at stage A0: the digits' products."""
    gather_row: Value       # gather4: which of the four rows
    pixel: list             # the im2col modes: the pixel's coordinates, dimensions 1..4
    steps: list             # digit * element stride, dimensions 1..4
    address: list           # step addressing: the row address's terms from the walk (else none)


@bundle
class Digits:
    """A lane at stage A0: its chunk of the row."""
    alive: Value
    chunk_offset: Value     # the chunk's values along dimension 0 from the row's start
    linear: Value           # the chunk's place in the box
    last_chunk: Value       # the row's last chunk: its kind holds fewer units


@bundle
class RowCoordinates:
    """The row at stage A1: its coordinates in dimensions 1..4."""
    coords: list
    address: list


@bundle
class Coordinates:
    """A lane at stage A1: the chunk's dimension-0 coordinate and kind."""
    alive: Value
    first_value: Value      # dimension 0: the value coordinate of the chunk's first unit
    units: Value
    live: Value             # the mask of the chunk's units (0 in a dead lane)
    length: Value
    smem_dense: Value       # its place in the dense shared-memory image


@bundle
class RowPlaced:
    """The row at stages A2 and A3: inside dimensions 1..4, the address's terms."""
    inside: Value           # a bit per dimension 1..4
    terms: list             # the row address's: base and the partial products


@bundle
class Placed:
    """A lane at stages A2 and A3: its window in dimension 0, the swizzled address."""
    window: UnitWindow
    alive: Value
    units: Value
    live: Value
    length: Value
    first_unit: Value
    smem_address: Value


@bundle
class RowBounded:
    """The row at stage B1: inside dimensions 1..4, the address's terms."""
    inside: Value
    terms: list


@bundle
class Addressed:
    """A lane at stage B2 (and at the queue, stage C)."""
    alive: Value
    units: Value
    length: Value
    smem_address: Value


@bundle
class Bounded(Addressed):
    """A lane at stage B1: the units' bounds in pieces, the dimension-0 offset."""
    low_ok: Value
    high_ok: Value
    dim0_offset: Value      # the first unit's bytes from the row's start


@bundle
class Masked(Addressed):
    mask: Value             # a bit per unit: in bounds
    term: Value             # the lane's term of the address: its dimension-0 offset, with a row term


def _clear_coordinates(in_rank, gather, prefetch):
    """The clear of stage A1's constants (``coordinate_constants_layout``), for
    :meth:`Datapath._read_table`: the coordinates past the rank 0 (gather4's rows are all
    used), and a prefetch's shared-memory address 0."""
    def clear(register, read):
        return ([register.start[i].eq(Mux(gather | in_rank[i], start, 0)) for i, start in enumerate(read.start)]
                + [register.smem_base.eq(Mux(prefetch, 0, read.smem_base))])
    return clear


def _clear_address(in_rank, prefetch):
    """The clear of the constants of A2 on (``address_constants_layout``), for
    :meth:`Datapath._read_table`: the dimensions past the rank 1 and their strides 0, and
    a prefetch's swizzle 0."""
    def clear(register, read):
        return ([register.dims[i].eq(Mux(in_rank[i], dim, 1)) for i, dim in enumerate(read.dims)]
                + [register.strides[i].eq(Mux(in_rank[i + 1], stride, 0)) for i, stride in enumerate(read.strides)]
                + [register.swizzle.eq(Mux(prefetch, 0, read.swizzle))])
    return clear


class Datapath(wiring.Component):
    """Walk records in; beats and completions out.

    Ports
    -----
    walk : :class:`.walker.WalkSignature` in: the walker's records, and the credit
        (``credit``: the walker may emit a record in the next cycle, for there will be
        room for it in the beat queue; the datapath keeps it in a register, ``issue``,
        for its count, and so does the walker, for its state); ``tag_ahead``, the beat
        table's entry of the record the walk register loads next
    table : :class:`BeatTableSignature` in: the front end's writes of each job's beat
        constants into the beat table
    beats : stream out (``beat_layout``)
    completions : stream out (``CompletionLayout``)
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "walk": In(WalkSignature(config)),
            "table": In(BeatTableSignature(config)),
            "beats": Out(stream.Signature(beat_layout(config))),
            "completions": Out(stream.Signature(CompletionLayout)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.line = line = Line(None, "dp")
        stage = {name: Stage(m, None, name, line) for name in STAGE_NAMES}
        record = self.walk.record
        coordinates, address = self._beat_table(m)
        ctl = Control(valid=self.walk.valid, is_beat=record.is_beat, last=record.last,
                      has_completion=record.has_completion, completion=record.completion)
        row, lanes = self._digit_products(m)
        ctl, row, lanes = stage["a0"](ctl, "ctl"), stage["a0"](row, "row"), stage["a0"](lanes, "lane")
        # the constants of A1, read as the walker emits the record (by the tag of the job
        # it walks), and of A2 on, read as the record is in the walk register; each read
        # registered, cleared by the record's bits in the stage before
        carried = record.carried
        coordinates = self._read_table(m, stage["a0"], coordinates, self.walk.tag_ahead, "coordinates",
                                       _clear_coordinates(carried.in_rank, carried.gather, carried.prefetch))
        carried = stage["a0"](carried, "carried")
        address = self._read_table(m, stage["a1"], address, record.tag, "address",
                                   _clear_address(carried.in_rank, carried.prefetch))
        ctl, row, lanes = self._coordinates(stage["a1"], ctl, coordinates, carried, row, lanes)
        ctl, row, lanes = self._bounds_and_products(stage["a2"], extend(AddressWindowControl, ctl, address=address),
                                                    row, lanes)
        # stage A3: the products arrive; every unit's offset from the chunk's first value,
        # from the job alone
        offsets = [small_product(ctl.address.value_step, Const(u, 4)) for u in range(16)]
        ctl, row, lanes = stage["a3"](ctl, "ctl"), stage["a3"](row, "row"), stage["a3"](lanes, "lane")
        offsets = stage["a3"](offsets, "offset")
        ctl, row_terms, lanes = self._adder_tree(stage["b1"], stage["b2"], ctl, row, lanes, offsets)
        head, has_completion, taken, fifo = self._beat_queue(m, ctl, row_terms, lanes)
        self._credits(m, taken)
        self._completions(m, head, has_completion, taken, fifo)
        return m

    def _beat_table(self, m):
        """The beat table: each job's beat constants, written by the front end as the
        request enters its stage 8 (``table``), one entry per request in turn, in two
        memories of block RAM, one for each read: the constants stage A1 reads and those
        of A2 on (``beat_entry_layout``). Returns the two memories."""
        depth, write = beat_table_depth(self.config), self.table
        memories = []
        for name in ("coordinates", "address"):
            memory = Memory(shape=beat_entry_layout(self.config).members[name], depth=depth, init=[],
                            attrs=BLOCK_RAM)
            m.submodules[f"beat_table_{name}"] = memory
            port = memory.write_port()
            m.d.comb += [port.en.eq(write.en), port.addr.eq(write.tag), port.data.eq(write.data[name])]
            memories.append(memory)
        return memories

    def _read_table(self, m, stage, memory, tag, name, clear):
        """The entry ``tag`` of one of the beat table's memories, read in every cycle and
        registered as ``stage``'s (its block's output goes only into the register, a
        path of its own), with ``clear``'s fields (:func:`_clear_coordinates`,
        :func:`_clear_address`) cleared as the front end's set-up defines them, by the
        record's bits in registers of the stage before, not by the block's output: the
        register loads in every cycle, so each cleared bit is its flip-flop's
        synchronous reset.
        A read as its entry is written is one no record uses (an entry is written again
        only after its job's last record has read it: :func:`~.layouts.beat_table_depth`),
        so what the port returns then is left undefined
        (:data:`.regfile.UNDEFINED_COLLISIONS`)."""
        port = memory.read_port()
        read = Signal(memory.shape, name=f"beat_table_read_{name}")
        register = Signal(memory.shape, name=f"{stage.prefix}_{name}", reset_less=True)
        m.d.comb += [port.addr.eq(tag), read.eq(port.data)]
        m.d.sync += [register.eq(read), *clear(register, read)]
        return stage.adopt(register)

    def _digit_products(self, m):
        """Stage A0: the row's ``digit * element stride`` in dimensions 1..4 (strides are
        1..8: shifted adds); each lane's chunk of the row, ``digit0 * lanes + j``, and
        its offset along dimension 0: the walker's offset of lane 0 (``row_values``) plus
        ``j * chunk_values``. Returns the row and the lanes."""
        config, walk = self.config, self.walk.record
        digits, constants = walk.digits, walk.carried
        row = RowDigits(
            gather_row=digits[1][:(GATHER_ROWS - 1).bit_length()],
            pixel=[walk.pixel[i] for i in range(PIXEL_DIMENSIONS)],
            steps=[small_product(digits[d], constants.element_strides[d - 1]) for d in range(1, len(digits))],
            # step addressing: the row address's terms, one adder level a stage from here
            address=add_pairs([walk.address[t].as_signed() for t in range(len(walk.address))],
                              config.address_width) if config.steps_addresses else [])
        lanes = []
        lane_bits = config.lanes.bit_length() - 1
        for j in range(config.lanes):
            chunk = Cat(Const(j, lane_bits), digits[0])       # the row's chunk
            # lane 0's offset from the walker, plus j * chunk_values: a shifted copy per
            # bit of j, so at most lane_bits + 1 terms and one carry chain
            terms = [walk.row_values] + [constants.chunk_values << b for b in range(lane_bits) if j >> b & 1]
            chunk_offset = carry_save_sum(m, terms, len(walk.row_values), f"lane{j}_chunk_offset")
            lanes.append(Digits(
                # lane 0 is the row's; the others hold a chunk where the row has one
                alive=walk.alive & (chunk <= constants.last_chunk) if j else walk.alive,
                chunk_offset=chunk_offset,
                linear=walk.first_chunk + j if config.lanes > 1 else walk.beat_index,
                last_chunk=chunk == constants.last_chunk))
        return row, lanes

    def _coordinates(self, a1, ctl, beat, carried, row, lanes):
        """Stage A1: the row's ``start`` plus the products in dimensions 1..4 (gather4:
        the row the digit picks; the im2col modes: the walker's pixel coordinates); each
        lane's value coordinate of its chunk's first unit along dimension 0, the chunk's
        kind (units, their mask and bytes: the job's full or last chunk), its place in
        the dense shared-memory image (``beat``: the job's constants,
        ``coordinate_constants_layout``; ``carried``: the record's
        ``carried_constants_layout``, registered at A0)."""
        rows = Array(beat.start[k] for k in range(1, len(beat.start)))      # gather4's rows
        coords = []
        for d, step in enumerate(row.steps, 1):
            coordinate = beat.start[d] + step
            if self.config.builds("gather4"):
                coordinate = Mux(carried.gather, rows[row.gather_row] if d == 1 else 0, coordinate)
            if self.config.builds_im2col_family:
                coordinate = Mux(beat.pixel_mode, row.pixel[d - 1], coordinate)
            coords.append(coordinate[:34].as_signed())
        out = []
        for rec in lanes:
            kind = beat.chunks[rec.last_chunk]
            out.append(Coordinates(
                alive=rec.alive, first_value=(beat.start[0] + rec.chunk_offset)[:34].as_signed(),
                units=kind.units, live=kind.live & rec.alive.replicate(16), length=kind.length,
                # a prefetch touches no shared memory: its beats carry address 0
                smem_dense=Mux(carried.prefetch, 0, beat.smem_base + (rec.linear << 4))[:self.config.smem_address_width]))
        ctl = extend(WindowControl, ctl, dim0_less_window=(beat.dim0 - WINDOW).as_signed())
        row = RowCoordinates(coords=coords, address=add_pairs(row.address, self.config.address_width))
        return a1(ctl, "ctl"), a1(row, "row"), a1(out, "lane")

    def _bounds_and_products(self, a2, ctl, row, lanes):
        """Stage A2: whether the row is inside dimensions 1..4 and the window of each
        lane's units inside dimension 0 (:mod:`.oob`), each lane's swizzled shared-memory
        address (PTX 5.5.7) and first unit's index; the row's products ``coordinate *
        stride`` (34-bit signed by 40-bit strides whose low 4 bits are 0, modulo
        2^address_width) as 18x18 partial products in DSP blocks whose operand registers
        are A2's and whose product registers are A3's (and the stride's top 2 bits' in
        logic, registered alike): the operands come from A1's registers, so the route
        into a block is a path of its own, with no logic before it, and the route out of
        it another."""
        constants, width = ctl.address, self.config.address_width
        if self.config.steps_addresses:     # the walker's row address: no product
            terms = add_pairs(row.address, width)
        else:
            terms = [constants.base.as_signed()] + sum((partial_products(coordinate, stride, width, a2.product,
                                                                         STRIDE_ZERO_BITS)
                                                        for coordinate, stride in zip(row.coords, constants.strides)),
                                                       [])
        placed = RowPlaced(inside=inside_dimensions(row.coords, [constants.dims[d] for d in range(1, len(constants.dims))]),
                           terms=terms)
        out = [Placed(window=unit_window(a.first_value, constants.dims[0], ctl.dim0_less_window),
                      alive=a.alive, units=a.units, live=a.live, length=a.length,
                      first_unit=a.first_value >> constants.values_per_unit_log2,
                      smem_address=swizzle_address(a.smem_dense, constants.swizzle, self.config.built_swizzles))
               for a in lanes]
        return a2(narrow(AddressControl, ctl), "ctl"), a2(placed, "row"), a2(out, "lane")

    def _adder_tree(self, b1, b2, ctl, row, lanes, offsets):
        """Stages B1 and B2: the row address's adder tree, one level in B1 (its inputs
        come from the DSP blocks' product registers, and the route from a block is most
        of the stage: docs/fpga.md, "Clock speed"), two in B2, where each lane's
        dimension-0 offset joins it as a term of its own; in B1 the units' bounds (two
        compares of every unit's offset with the window) and the AND of dimensions
        1..4's bits, in B2 the in-bounds mask. Returns the control, the row's terms and
        the lanes (each with one term)."""
        constants, width = ctl.address, self.config.address_width
        bounded = []
        for lane in lanes:
            bounds = [unit_bounds(lane.window, offsets[u]) for u in range(16)]
            bounded.append(Bounded(
                alive=lane.alive, units=lane.units, length=lane.length, smem_address=lane.smem_address,
                low_ok=Cat(lane.live[u] & low for u, (low, _) in enumerate(bounds)),
                high_ok=Cat(high for _, high in bounds),
                dim0_offset=sparse_product(lane.first_unit, constants.unit_global_bytes, UNIT_BYTES)[:width].as_signed()))
        row = RowBounded(inside=row.inside.all(), terms=add_pairs(row.terms, width))
        ctl, row, lanes = b1(ctl, "ctl"), b1(row, "row"), b1(bounded, "lane")
        # two levels: the row's terms among themselves, but for an odd one out, which
        # the lane's offset joins at the second
        level = add_pairs(row.terms, width)
        joins = level[-1:] if len(level) % 2 else []
        shared = add_pairs(level[:len(level) - len(joins)], width)
        masked = [Masked(alive=lane.alive, units=lane.units, length=lane.length, smem_address=lane.smem_address,
                         term=(sum(joins, Const(0, signed(width))) + lane.dim0_offset)[:width].as_signed(),
                         mask=lane.low_ok & lane.high_ok & row.inside.replicate(16))
                  for lane in lanes]
        assert len(shared) + 1 <= 4, "the adder tree needs another stage"
        return b2(ctl, "ctl"), b2(shared, "row"), b2(masked, "lane")

    def _beat_queue(self, m, ctl, row_terms, lanes):
        """Stage C: the last terms of the global address, the row's and the lane's
        (carry-save adders and one carry chain), into the beat queue, whose head is the
        beat stream. Returns the head and whether it leaves this cycle, and the
        completion queue."""
        config = self.config
        queued = Signal(queued_layout(config, 0))
        constants = ctl.address
        m.d.comb += [queued.is_beat.eq(ctl.is_beat), queued.has_completion.eq(ctl.has_completion),
                     queued.completion.eq(ctl.completion), queued.beat.last.eq(ctl.last),
                     queued.beat.request_id.eq(ctl.completion.request_id)]
        for name, _ in queued.beat.shape():
            if name not in ("lanes", "last", "request_id"):       # the beat's sideband: the job's constants
                m.d.comb += queued.beat[name].eq(constants[name])
        for j, (b, lane) in enumerate(zip(lanes, queued.beat.lanes)):
            m.d.comb += [
                lane.valid.eq(b.alive),
                # the row's terms first: the first carry-save adder, on those alone, is
                # the same in every lane, and Yosys keeps one (opt_merge)
                lane.global_address.eq(carry_save_sum(m, row_terms + [b.term], config.address_width,
                                                      f"lane{j}_global_address")),
                lane.global_length.eq(Mux(b.alive, b.length, 0)),
                lane.smem_address.eq(b.smem_address),
                lane.mask.eq(b.mask),
                lane.units.eq(Mux(b.alive, b.units, 0)),
            ]
        written, written_valid = (self._formed(m, queued, ctl.valid) if config.request_former else (queued, ctl.valid))
        m.submodules.queue = queue = BeatQueue(len(written.as_value()), config.beat_queue, HEAD_FLAGS)
        head = data.View(queued_layout(config), queue.r_data)
        m.d.comb += [queue.w_data.eq(written), queue.w_en.eq(written_valid)]
        is_beat, has_completion = queue.r_flags[0], queue.r_flags[1]
        # a record with a completion leaves only when the completion queue has room
        m.submodules.completions = fifo = SyncFIFOBuffered(width=CompletionLayout.size, depth=config.completion_depth)
        room = fifo.w_rdy | ~has_completion
        if config.request_former:
            addressed(m, head.beat, self.beats.payload, config.request_former)
        else:
            m.d.comb += self.beats.payload.eq(head.beat)
        m.d.comb += self.beats.valid.eq(queue.r_rdy & is_beat & room)
        taken = Mux(is_beat, self.beats.valid & self.beats.ready, queue.r_rdy & room)
        m.d.comb += queue.r_en.eq(taken)
        return head, has_completion, taken, fifo

    def _formed(self, m, queued, valid):
        """The request former between stage C and the beat queue, its output always taken,
        the record's other fields beside its stages. Returns the record with its
        requests, and its valid bit."""
        config = self.config
        m.submodules.former = former = RequestFormer(config)
        m.d.comb += [former.beats.valid.eq(valid), former.beats.payload.eq(queued.beat), former.requests.ready.eq(1)]
        side = Cat(queued.is_beat, queued.has_completion, queued.completion)
        for k in range(FORMER_STAGES):                      # beside the former's stages
            later = Signal.like(side, reset_less=True, name=f"former_side{k}")
            m.d.sync += later.eq(side)
            side = later
        formed = Signal(queued_layout(config))
        m.d.comb += [formed.beat.eq(former.requests.payload),
                     Cat(formed.is_beat, formed.has_completion, formed.completion).eq(side)]
        return formed, former.requests.valid

    def _credits(self, m, taken):
        """The records behind the walker never outnumber the queue's entries. ``held``
        counts the records in stages A0 to B2 and in the queue. Next cycle the walk
        register holds at most one more (this cycle's ``issue``), and the walker may emit
        one: ``issue`` is whether that one fits, decided a cycle ahead so it is a register.
        That is ``held + valid + issue - taken < size``: ``held`` is compared with
        each limit the three bits can set, beside them, and the bits pick a compare, so
        the head's route ends in one multiplexer, not in adds and a compare (docs/fpga.md)."""
        walk_valid = self.walk.valid
        size = self.config.beat_queue
        held = Signal(range(size + 1))
        issue = Signal(init=1)          # the walker may emit a record this cycle
        kept = held + walk_valid                        # the count if nothing is taken
        below = [held < size - n for n in range(3)]       # held + n < size

        def by_arrivals(options):
            """``options[valid + issue]``."""
            both, either = walk_valid & issue, walk_valid | issue
            return Mux(both, options[2], Mux(either, options[1], options[0]))

        m.d.comb += self.walk.credit.eq(Mux(taken, by_arrivals([1] + below[:2]), by_arrivals(below)))
        m.d.sync += [held.eq(Mux(taken, kept - 1, kept)), issue.eq(self.walk.credit)]

    def _completions(self, m, head, has_completion, taken, fifo):
        """A job's completion rides with its last record and is queued for the completion
        stream when that record leaves the beat queue."""
        completion = Signal(CompletionLayout)
        m.d.comb += [
            completion.request_id.eq(head.completion.request_id),
            completion.status.eq(head.completion.code),
            completion.transaction_bytes.eq(head.completion.transaction_bytes),
            fifo.w_data.eq(completion),
            fifo.w_en.eq(taken & has_completion),
            self.completions.payload.eq(fifo.r_data),
            self.completions.valid.eq(fifo.r_rdy),
            fifo.r_en.eq(self.completions.ready),
        ]
