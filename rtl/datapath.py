"""From odometer digits to beats: coordinates, the out-of-bounds detector, address
generation and the swizzle, in seven pipeline stages behind the walker, each cut short
enough for the clock (docs/fpga.md, "Clock speed"):

A0. the digits' products: ``digit * element stride`` in dimensions 1..4 (strides are
    1..8: shifted adds) and the chunk's offset along dimension 0 (an 18x18 block whose
    output register is A0's, :mod:`.dsp`);
A1. coordinates: ``start`` plus those products in dimensions 1..4 (gather4: the row the
    digit picks; the im2col modes: the walker's pixel coordinates), the value coordinate
    of the chunk's first unit along dimension 0, the chunk's kind (units, their mask and
    bytes: the job's full or last chunk), its place in the dense shared-memory image;
A2. whether the chunk is inside dimensions 1..4 and the window of its units' offsets
    inside dimension 0 (PTX 5.5.3.3: negative coordinates and coordinates past the
    dimension are both out; :func:`unit_window`), the swizzled shared-memory address
    (5.5.7), the first unit's index; the products ``coordinate * stride`` (34-bit
    signed by 40-bit strides, modulo 2^address_width) as 18x18 partial products
    (:func:`.arith.partial_products`) in DSP blocks whose operand registers are A2's,
    loaded from A1's coordinates with no logic between;
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
    beat queue.

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
"""

from types import SimpleNamespace

from amaranth.hdl import Module, Signal, Const, Mux, Array, Cat, signed, unsigned
from amaranth.lib import wiring, stream, data
from amaranth.lib.fifo import SyncFIFO, SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from .arith import partial_products, add_pairs, carry_save_sum, less_than, small_product, sparse_product
from .decode import UNIT_BYTES
from .layouts import beat_layout, CompletionLayout, beat_constants_layout, PIXEL_COORD
from .pipeline import Stage
from .swizzle import swizzle_address
from .walker import walk_layout, completion_info_layout

__all__ = ["Datapath", "STAGES", "BEAT_QUEUE", "queued_layout"]

#: Registers from the walker's output to the beat stream, the walker's own and the beat
#: queue included (the timing model's BACK_END_STAGES).
STAGES = 8
#: Entries of the beat queue (the timing model's BEAT_QUEUE): at least the records that
#: can be on their way to it when its head stops (the walk register, six stages, the
#: record the walker emits, the one it may emit: 9), and 16, the depth of the ECP5's LUT
#: RAM, so that a run of ready cycles after a stop finds beats waiting.
BEAT_QUEUE = 16


def queued_layout(config: UnitConfig) -> data.StructLayout:
    """An entry of the beat queue: a record's beat, or its completion alone."""
    return data.StructLayout({
        "beat": beat_layout(config),
        "is_beat": 1,
        "has_completion": 1,
        "completion": completion_info_layout(config),
    })


#: More than any unit's offset from its chunk's first value (``u * value_step``: at most
#: 15 x 31): the in-bounds window of a chunk's units is cut off here.
WINDOW = 512


def unit_window(first, dim, dim_less_window):
    """Where the units of a chunk whose first value coordinate is ``first`` are inside
    dimension 0 of size ``dim`` (``dim_less_window``: ``dim - WINDOW``, from the job a
    stage before): a namespace from which :func:`unit_bounds` tells, for a unit at
    offset ``k`` (``0 <= k < WINDOW``), whether ``0 <= first + k < dim``.

    ``first + k >= 0`` is ``k > ~first`` (``~first = -first - 1``): always when
    ``first >= 0``, never when ``~first >= WINDOW``, else a compare of 9 bits.
    ``first + k < dim`` is ``k <= dim + ~first``: never when that is negative, always
    when it is ``WINDOW`` or more, which is the sign of ``dim - WINDOW + ~first``. Each
    takes an inversion or one carry chain and no wide compare behind it, and leaves the
    per-unit test two small compares (docs/fpga.md, "Clock speed")."""
    bits = (WINDOW - 1).bit_length()
    below = ~first                          # -first - 1
    room = (dim + below).as_signed()        # dim - first - 1
    wide = ~(dim_less_window + below).as_signed()[-1]       # room >= WINDOW
    return SimpleNamespace(
        low_all=~first[-1], low_none=first[-1] & (below[bits:] != 0), low=below[:bits],
        high_none=room[-1], high=Mux(wide, WINDOW - 1, room[:bits]))


def unit_bounds(window, k):
    """Whether the unit at offset ``k`` is past dimension 0's start, and whether it is
    before its end (:func:`unit_window`)."""
    return (window.low_all | (~window.low_none & less_than(window.low, k)),
            ~window.high_none & ~less_than(window.high, k))


class Datapath(wiring.Component):
    """Walk records in; beats and completions out.

    Ports
    -----
    walk, walk_valid : in
        The walker's output register.
    issue_next : out
        The walker may emit a record in the next cycle: there will be room for it in the
        beat queue. The datapath keeps it in a register (``issue``) for its count, and so
        does the walker, for its state.
    beats : stream out (``beat_layout``)
    completions : stream out (``CompletionLayout``)
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "walk": In(walk_layout(config)),
            "walk_valid": In(1),
            "issue_next": Out(1),
            "beats": Out(stream.Signature(beat_layout(config))),
            "completions": Out(stream.Signature(CompletionLayout)),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        width = config.address_width
        walk = self.walk
        stage = {name: Stage(m, None, name) for name in ("a0", "a1", "a2", "a3", "b1", "b2")}
        # what every stage passes on: the record's control bits and the job's constants
        ctl = SimpleNamespace(valid=self.walk_valid, is_beat=walk.is_beat, last=walk.last, beat=walk.beat,
                              has_completion=walk.has_completion, completion=walk.completion)

        # -- stage A0: the digits' products ----------------------------------------------
        beat = walk.beat
        records = []
        for j in range(config.lanes):
            digits = walk.lane_digits[j]
            records.append(SimpleNamespace(
                alive=walk.lane_alive[j], gather_row=digits[1][:2],
                pixel=[walk.lane_pixel[j][i] for i in range(4)],
                # element strides are 1..8: shifted adds; the chunk's offset in a DSP
                # block whose output register is A0's (rtl/dsp.py)
                steps=[small_product(digits[d], beat.element_strides[d]) for d in range(1, 5)],     # d = 1..4
                chunk_offset=stage["a0"].product(digits[0], beat.chunk_values, registered_inputs=False).map(
                    lambda p: p[:len(digits[0]) + len(beat.chunk_values)]),
                linear=walk.beat_index * config.lanes + j,          # the chunk's place in the box
                last_chunk=digits[0] == beat.last_chunk,            # a row's last chunk: fewer units
            ))
        ctl, records = stage["a0"](ctl, "ctl"), stage["a0"](records, "lane")

        # -- stage A1: coordinates -------------------------------------------------------
        beat = ctl.beat
        lanes = []
        rows = Array(beat.start[k] for k in range(1, 5))      # gather4's rows
        for rec in records:
            coords = []
            for d in range(1, 5):
                coordinate = Mux(beat.gather, rows[rec.gather_row] if d == 1 else 0, beat.start[d] + rec.steps[d - 1])
                coords.append(Mux(beat.pixel_mode, rec.pixel[d - 1], coordinate)[:34].as_signed())
            lanes.append(SimpleNamespace(
                alive=rec.alive,
                coords=coords,
                first_value=(beat.start[0] + rec.chunk_offset)[:34].as_signed(),
                # the chunk's kind (a row's last chunk may hold fewer units): its units,
                # the mask of them (dead lanes' cleared), its bytes
                units=beat.chunks[rec.last_chunk].units,
                live=beat.chunks[rec.last_chunk].live & rec.alive.replicate(16),
                length=beat.chunks[rec.last_chunk].length,
                # a prefetch touches no shared memory: its beats carry address 0
                smem_dense=Mux(beat.prefetch, 0, beat.smem_base + (rec.linear << 4))[:config.smem_address_width],
            ))
        ctl.dim0_less_window = (beat.dims[0] - WINDOW).as_signed()
        ctl, lanes = stage["a1"](ctl, "ctl"), stage["a1"](lanes, "lane")

        # -- stage A2: bounds, swizzle, the DSP blocks' operands --------------------------
        beat = ctl.beat
        out_lanes = []
        for a in lanes:
            # one bit per dimension: their AND is B1's, so a compare's carry chain ends here
            inside = Cat(~a.coords[d][-1] & less_than(a.coords[d], beat.dims[d + 1]) for d in range(4))
            # coordinate * stride in DSP blocks whose operand registers are A2's and whose
            # product registers are A3's: the operands come from A1's registers, so the
            # route into a block is a path of its own, with no logic before it
            products = sum((partial_products(a.coords[d], beat.strides[d], config.address_width, stage["a2"].product)
                            for d in range(4)), [])
            terms = [beat.base.as_signed()] + products
            out_lanes.append(SimpleNamespace(
                inside=inside, window=unit_window(a.first_value, beat.dims[0], ctl.dim0_less_window),
                alive=a.alive, units=a.units, live=a.live, length=a.length,
                first_unit=a.first_value >> beat.values_per_unit_log2,
                smem_address=swizzle_address(a.smem_dense, beat.swizzle), terms=terms))
        del ctl.dim0_less_window
        ctl, lanes = stage["a2"](ctl, "ctl"), stage["a2"](out_lanes, "lane")

        # -- stage A3: the products arrive; every unit's offset from the chunk's first
        # value, from the job alone ------------------------------------------------------
        offsets = [small_product(ctl.beat.value_step, Const(u, 4)) for u in range(16)]
        ctl, lanes, offsets = stage["a3"](ctl, "ctl"), stage["a3"](lanes, "lane"), stage["a3"](offsets, "offset")

        # -- stages B1, B2: the adder tree; in B1 the units' bounds and the offset along
        # dimension 0, a term of the tree from B2 on; in B2 the in-bounds mask -----------
        beat = ctl.beat
        for lane in lanes:
            bounds = [unit_bounds(lane.window, offsets[u]) for u in range(16)]
            lane.low_ok = Cat(lane.live[u] & low for u, (low, _) in enumerate(bounds))
            lane.high_ok = Cat(high for _, high in bounds)
            lane.inside = lane.inside.all()
            lane.dim0_offset = sparse_product(lane.first_unit, beat.unit_global_bytes, UNIT_BYTES)[:width].as_signed()
            del lane.window, lane.first_unit, lane.live
        # B1 adds one level: its inputs come from the DSP blocks' product registers, and
        # the route from a block is most of the stage (docs/fpga.md, "Clock speed")
        for name, levels in (("b1", 1), ("b2", 2)):
            for lane in lanes:
                if name == "b2":
                    lane.terms = lane.terms + [lane.dim0_offset]
                    lane.mask = lane.low_ok & lane.high_ok & lane.inside.replicate(16)
                    del lane.dim0_offset, lane.low_ok, lane.high_ok, lane.inside
                for _ in range(levels):
                    lane.terms = add_pairs(lane.terms, width)
            ctl, lanes = stage[name](ctl, "ctl"), stage[name](lanes, "lane")
        assert all(len(lane.terms) <= 4 for lane in lanes), "the adder tree needs another stage"

        # -- stage C: the global address, into the beat queue -----------------------------
        queued = Signal(queued_layout(config))
        beat = ctl.beat
        m.d.comb += [
            queued.is_beat.eq(ctl.is_beat),
            queued.has_completion.eq(ctl.has_completion),
            queued.completion.eq(ctl.completion),
            queued.beat.element_pitch.eq(beat.element_pitch),
            queued.beat.fill.eq(beat.fill),
            queued.beat.request_id.eq(beat.request_id),
            queued.beat.operation.eq(beat.operation),
            queued.beat.reduce_op.eq(beat.reduce_op),
            queued.beat.multicast_mask.eq(beat.multicast_mask),
            queued.beat.last.eq(ctl.last),
        ]
        for b, lane in zip(lanes, queued.beat.lanes):
            m.d.comb += [
                lane.valid.eq(b.alive),
                lane.global_address.eq(carry_save_sum(b.terms, width)),
                lane.global_length.eq(Mux(b.alive, b.length, 0)),
                lane.smem_address.eq(b.smem_address),
                lane.mask.eq(b.mask),
                lane.units.eq(Mux(b.alive, b.units, 0)),
            ]
        m.submodules.queue = queue = SyncFIFO(width=queued.shape().size, depth=BEAT_QUEUE)
        head = data.View(queued_layout(config), queue.r_data)
        m.d.comb += [queue.w_data.eq(queued), queue.w_en.eq(ctl.valid)]

        # -- the queue's head: beats and completions -------------------------------------
        m.submodules.completions = fifo = SyncFIFOBuffered(width=CompletionLayout.size, depth=config.completion_depth)
        room = fifo.w_rdy | ~head.has_completion
        m.d.comb += [self.beats.payload.eq(head.beat), self.beats.valid.eq(queue.r_rdy & head.is_beat & room)]
        taken = Mux(head.is_beat, self.beats.valid & self.beats.ready, queue.r_rdy & room)
        m.d.comb += queue.r_en.eq(taken)

        # -- credits: the records behind the walker never outnumber the queue's entries ----
        # `held` counts the records in stages A0 to B2 and in the queue. Next cycle the walk
        # register holds at most one more (this cycle's `issue`), and the walker may emit
        # one: `issue` is whether that one fits, decided a cycle ahead so it is a register.
        # That is `held + walk_valid + issue - taken < BEAT_QUEUE`: `held` is compared with
        # each limit the three bits can set, beside them, and the bits pick a compare, so
        # the head's route ends in one multiplexer, not in adds and a compare (docs/fpga.md).
        held = Signal(range(BEAT_QUEUE + 1))
        issue = Signal(init=1)          # the walker may emit a record this cycle
        kept = held + self.walk_valid                   # the count if nothing is taken
        below = [held < BEAT_QUEUE - n for n in range(3)]       # held + n < BEAT_QUEUE

        def by_arrivals(options):
            """``options[walk_valid + issue]``."""
            both, either = self.walk_valid & issue, self.walk_valid | issue
            return Mux(both, options[2], Mux(either, options[1], options[0]))

        m.d.comb += self.issue_next.eq(Mux(taken, by_arrivals([1] + below[:2]), by_arrivals(below)))
        m.d.sync += [held.eq(Mux(taken, kept - 1, kept)), issue.eq(self.issue_next)]

        completion = Signal(CompletionLayout)
        m.d.comb += [
            completion.request_id.eq(head.completion.request_id),
            completion.status.eq(head.completion.code),
            completion.transaction_bytes.eq(head.completion.transaction_bytes),
            fifo.w_data.eq(completion),
            fifo.w_en.eq(taken & head.has_completion),
            self.completions.payload.eq(fifo.r_data),
            self.completions.valid.eq(fifo.r_rdy),
            fifo.r_en.eq(self.completions.ready),
        ]
        return m
