"""The front of the unit: accept a request, snapshot its descriptor, check every rule,
and set up the job the walker runs.

Seven stages, one request per cycle, cut so that no stage holds more than a short
carry chain or one multiplier (docs/fpga.md, "Clock speed"):

1. accept: the request is registered and its slot is read from the descriptor file
   (the snapshot: later bus writes to the slot cannot reach this request);
2. decode, first layer (:mod:`.decode`): sizes of the element type, dimensions, strides,
   the elements traversed per dimension;
3. decode, second layer: the shared-memory row; the partial products of the strides
   and dimensions the rules need (:func:`.validate.product_terms`);
4. the box's row count; two levels of the products' adder trees;
5. the box's byte count in pieces; the stride extents; the odometer radices and their
   saturated prefix products;
6. every rule but the last two checked (:mod:`.validate`), one bit each; the box's
   byte count and the tensor's last byte summed; the lanes' start digits and the beat
   constants;
7. the first broken rule, with the last two (SMEM_BOUNDS, ADDRESS_WRAP) beside it: the
   job register.

A rejected request becomes a job with its error code: it emits no beats and completes
in order with the others.
"""

from amaranth.hdl import Module, Signal, Const, Mux, Cat, Value
from amaranth.lib import wiring, stream
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from ..model.errors import ErrorCode
from ..model.im2col import W128_GROUP
from ..model.types import AccessMode, Operation, OobFill
from .arith import add_pairs, partial_products, small_divmod, small_product, sum_terms
from .decode import decode_descriptor
from .layouts import RequestLayout, DescriptorLayout, Fill, job_layout, DIGITS, RADIX_WIDTH, SPATIAL
from .pipeline import Stage
from .validate import (product_terms, SPAN_WIDTH, rule_list, smem_room, smem_overflows, address_wraps, first_broken,
                       swizzle_value)

__all__ = ["FrontEnd", "STAGES", "saturated_prefixes", "mixed_radix"]

#: Registers from a request to its job (the timing model's FRONT_END_STAGES).
STAGES = 7
#: Bits of a box's byte count: up to 2^32 rows of a 4096-byte pitch.
BOX_BYTES_WIDTH = 45


def saturated_prefixes(m, radices, limit: int):
    """``min(radices[0] * ... * radices[i-1], limit + 1)`` for i = 0..len(radices): the
    place values of the mixed radix as far as a number up to ``limit`` can tell them
    apart. Each is a signal of its own: every step reads the previous one several times,
    and as one expression the chain would grow with the product of those reads."""
    width = (limit + 1).bit_length()

    def saturate(value):
        return Mux(value > limit, limit + 1, value[:width])
    prefixes = [Const(1, width)]
    for i, radix in enumerate(radices):
        prefix = Signal(width, name=f"place{i + 1}")
        m.d.comb += prefix.eq(saturate(small_product(prefixes[-1], saturate(radix))))
        prefixes.append(prefix)
    return prefixes


def mode_kinds(req):
    """(gather4 or scatter4, an im2col mode whose rows are pixels) of a request."""
    mode = req.mode.as_value()
    gather = (mode == AccessMode.GATHER4) | (mode == AccessMode.SCATTER4)
    pixel_mode = (mode == AccessMode.IM2COL) | (mode == AccessMode.IM2COL_W) | (mode == AccessMode.IM2COL_W_128)
    return gather, pixel_mode


def mixed_radix(value: int, radices, prefixes):
    """Digits of the constant ``value`` (at most the ``limit`` of ``prefixes``) in the
    mixed radix ``radices`` (least significant first) and whether it overflows them:
    digit i is ``(value // place_i) % radix_i``, with compares only (:func:`small_divmod`)."""
    if value == 0:
        return [Const(0, 1) for _ in radices], Const(0, 1)
    digits = []
    for radix, place in zip(radices, prefixes):
        quotient, _ = small_divmod(value, place, value)
        digits.append(small_divmod(quotient, radix, value)[1])
    return digits, prefixes[len(radices)] <= value


class FrontEnd(wiring.Component):
    """Request in, job out.

    Ports
    -----
    requests : stream in (``RequestLayout``)
    snap_slot, snap_en, snap_data, snap_valid
        The descriptor file's snapshot port.
    job : stream out (``job_layout``)
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "requests": In(stream.Signature(RequestLayout)),
            "snap_slot": Out(8),
            "snap_en": Out(1),
            "snap_data": In(DescriptorLayout),
            "snap_valid": In(1),
            "job": Out(stream.Signature(job_layout(config))),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        advance = ~self.job.valid | self.job.ready
        stage = {k: Stage(m, advance, f"s{k}") for k in range(2, STAGES)}

        # -- stage 1: accept and snapshot -------------------------------------------------
        valid = Signal(name="s1_valid")
        req = Signal(RequestLayout, name="s1_request")
        m.d.comb += [
            self.requests.ready.eq(advance),
            self.snap_slot.eq(self.requests.payload.slot),
            self.snap_en.eq(self.requests.valid & advance),
        ]
        with m.If(advance):
            m.d.sync += [valid.eq(self.requests.valid), req.eq(self.requests.payload)]
        slot_valid = self.snap_valid

        # -- stages 2 and 3: decode; the products' pieces ---------------------------------
        carried = {}

        def decode_stage(d, name):
            k = 2 if name == "decode1" else 3
            if k == 3:
                carried["terms"] = stage[3](product_terms(d), "terms")
            carried["valid"] = stage[k](carried.get("valid", valid), "valid")
            carried["req"] = stage[k](carried.get("req", req), "request")
            carried["slot_valid"] = stage[k](carried.get("slot_valid", slot_valid), "slot_valid")
            return stage[k](d, "d")

        d = decode_descriptor(self.snap_data, decode_stage)
        valid, req, slot_valid, terms = (carried[k] for k in ("valid", "req", "slot_valid", "terms"))

        # -- stage 4: the box's rows; products, two levels ---------------------------------
        mode = req.mode.as_value()
        gather, _ = mode_kinds(req)
        rows = Mux(gather, 4,
               Mux(mode == AccessMode.IM2COL, d.pixels,
               Mux(mode == AccessMode.IM2COL_W, d.pixels + req.w_halo,
               Mux(mode == AccessMode.IM2COL_W_128, 128 + 4 * req.w_halo, d.box_rows_tiled))))
        # dimension i's extent is its product plus stride[i-1]; the last byte is the four
        # products plus dim0_bytes - 1
        extent_terms = [terms[i] + [d.strides[i].as_signed()] for i in range(3)]
        span_terms = sum(terms, []) + [(d.dim0_bytes - 1).as_signed()]
        extent_terms = [add_pairs(add_pairs(t, SPAN_WIDTH), SPAN_WIDTH) for t in extent_terms]
        span_terms = add_pairs(add_pairs(span_terms, SPAN_WIDTH), SPAN_WIDTH)
        s = stage[4]
        valid, req, slot_valid, d = s(valid, "valid"), s(req, "request"), s(slot_valid, "slot_valid"), s(d, "d")
        rows = s(rows, "rows")
        extent_terms, span_terms = s(extent_terms, "extent_terms"), s(span_terms, "span_terms")

        # -- stage 5: box bytes, extents, radices ------------------------------------------
        gather, pixel_mode = mode_kinds(req)
        box_terms = partial_products(rows, d.row_pitch, BOX_BYTES_WIDTH)
        room = smem_room(req, config)
        extents = [sum_terms(t, SPAN_WIDTH) for t in extent_terms]
        span_terms = add_pairs(span_terms, SPAN_WIDTH)
        radices = ([d.row_chunks, Mux(pixel_mode, rows, Mux(gather, 4, d.counts[1]))]
                   + [Mux(gather | pixel_mode, 1, d.counts[i]) for i in range(2, 5)])
        radices = [Value.cast(r)[:RADIX_WIDTH] for r in radices]
        prefixes = saturated_prefixes(m, radices, config.lanes)
        s = stage[5]
        valid, req, slot_valid, d = s(valid, "valid"), s(req, "request"), s(slot_valid, "slot_valid"), s(d, "d")
        box_terms, room = s(box_terms, "box_terms"), s(room, "room")
        extents, span_terms = s(extents, "extents"), s(span_terms, "span_terms")
        radices, prefixes = s(radices, "radix"), s(prefixes, "prefix")

        # -- stage 6: the rules; start digits and beat constants ---------------------------
        job = Signal.like(self.job.payload)
        rules = rule_list(d, req, extents, slot_valid, config)
        broken = Cat(condition for condition, _ in rules)
        span = sum_terms(span_terms, SPAN_WIDTH)
        box_bytes = sum_terms(box_terms, BOX_BYTES_WIDTH)
        self._job_setup(m, job, d, req, radices, prefixes)
        s = stage[6]
        valid, req, d = s(valid, "valid"), s(req, "request"), s(d, "d")
        span, broken = s(span, "span"), s(broken, "broken")
        box_bytes, room, job = s(box_bytes, "box_bytes"), s(room, "room"), s(job, "job")

        # -- stage 7: the first broken rule, into the job register --------------------------
        any_broken, first_code = first_broken([(broken[i], code) for i, (_, code) in enumerate(rules)])
        overflows = smem_overflows(req, box_bytes, room)
        wraps = address_wraps(d, span, config)
        code = Mux(any_broken, first_code,
                   Mux(overflows, ErrorCode.SMEM_BOUNDS, Mux(wraps, ErrorCode.ADDRESS_WRAP, ErrorCode.OK)))
        ok = ~any_broken & ~overflows & ~wraps
        beats = ((box_bytes >> 4) + config.lanes - 1) >> (config.lanes.bit_length() - 1)
        with m.If(advance):
            m.d.sync += [self.job.valid.eq(valid), self.job.payload.eq(job),
                         self.job.payload.code.eq(code),
                         self.job.payload.transaction_bytes.eq(Mux(ok, box_bytes, 0)),
                         self.job.payload.beats.eq(Mux(ok, beats, 1))]
        return m

    def _job_setup(self, m, job, d, req, radices, prefixes):
        """The job's walk (radices, start and step digits, pixel walk) and beat constants,
        from the decoded descriptor and the request."""
        config = self.config
        gather, pixel_mode = mode_kinds(req)
        m.d.comb += [job.radix[i].eq(radices[i]) for i in range(DIGITS)]
        step_digits, step_overflow = mixed_radix(config.lanes, radices, prefixes)
        m.d.comb += job.step_overflow.eq(step_overflow)
        for i in range(DIGITS):
            m.d.comb += [job.step_digits[i].eq(step_digits[i]),
                         job.step_safe[i].eq(radices[i] - step_digits[i] - 1)]
        for lane in range(config.lanes):
            digits, overflow = mixed_radix(lane, radices, prefixes)
            m.d.comb += job.lane_alive[lane].eq(~overflow)
            for i in range(DIGITS):
                m.d.comb += job.lane_digits[lane][i].eq(digits[i])
        self._pixel_walk(m, job.pixels, d, req, pixel_mode)

        beat = job.beat
        prefetch = req.operation.as_value() == Operation.PREFETCH
        units_per_row = d.row_values >> d.values_per_unit_log2
        units_per_chunk = 16 >> d.unit_smem_bytes_log2
        units_last = units_per_row - (d.row_chunks - 1) * units_per_chunk
        for i in range(5):
            used = Mux(gather, i < 5, d.in_rank[i])
            m.d.comb += [
                beat.start[i].eq(Mux(used, req.coordinates[i], 0)),
                beat.element_strides[i].eq(d.element_strides[i]),
                beat.dims[i].eq(Mux(d.in_rank[i], d.dims[i], 1)),
            ]
        m.d.comb += [beat.strides[i].eq(Mux(d.in_rank[i + 1], d.strides[i], 0)) for i in range(4)]
        m.d.comb += [
            beat.base.eq(d.global_address),
            beat.smem_base.eq(Mux(prefetch, 0, req.smem_address)),
            beat.swizzle.eq(Mux(prefetch, 0, swizzle_value(d))),
            beat.units_per_chunk.eq(units_per_chunk),
            beat.units_last.eq(units_last),
            beat.value_step.eq(d.step0 << d.values_per_unit_log2),
            beat.values_per_unit_log2.eq(d.values_per_unit_log2),
            beat.unit_global_bytes.eq(d.unit_global_bytes),
            beat.last_chunk.eq(d.row_chunks - 1),
            beat.chunk_values.eq(units_per_chunk * (d.step0 << d.values_per_unit_log2)),
            beat.gather.eq(gather),
            beat.pixel_mode.eq(pixel_mode),
            beat.prefetch.eq(prefetch),
            beat.element_pitch.eq(d.unit_global_bytes * d.step0),
            beat.fill.eq(Mux(req.operation.as_value() != Operation.LOAD, Fill.NONE,
                             Mux(d.fill_nan, Fill.NAN, Fill.ZERO))),
            beat.request_id.eq(req.request_id),
            beat.operation.eq(req.operation),
            beat.reduce_op.eq(req.reduce_op),
            beat.multicast_mask.eq(req.multicast_mask),
        ]

    @staticmethod
    def _pixel_walk(m, walk, d, req, pixel_mode):
        """The job's pixel walk (``pixel_walk_layout``) from PTX 5.5.4 / 5.5.5: im2col walks
        the rank - 2 spatial dimensions, im2col::w and ::w::128 only W; N (the last
        dimension) counts the carries; the im2col offsets (loads) or wOffset shift the
        walked positions, their range and their start alike."""
        mode = req.mode.as_value()
        im2col = mode == AccessMode.IM2COL
        op = req.operation.as_value()
        offsets_apply = im2col & ((op == Operation.LOAD) | (op == Operation.PREFETCH))
        spatial = Mux(im2col, d.rank - 2, 1)
        for i in range(1, 5):
            walks = pixel_mode & (spatial >= i)
            counts = pixel_mode & (d.rank - 1 == i)
            start = Mux(d.in_rank[i], req.coordinates[i], 0)
            if i <= SPATIAL:
                offset = Mux(offsets_apply, req.im2col_offsets[i - 1], 0)
                if i == 1:
                    offset = Mux(im2col, offset, req.w_offset)
                offset = Mux(walks, offset, 0)
                start = start + offset
                end = d.dims[i] + d.upper_corner[i - 1] + offset
                m.d.comb += [walk.low[i - 1].eq(d.lower_corner[i - 1] + offset),
                             walk.limit[i - 1].eq(end - d.element_strides[i])]
            m.d.comb += [
                walk.start[i - 1].eq(start),
                walk.stride[i - 1].eq(Mux(counts, 1, d.element_strides[i])),
                walk.walks[i - 1].eq(walks),
                walk.counts[i - 1].eq(counts),
            ]
        m.d.comb += [
            walk.halo.eq(Mux(im2col, 0, req.w_halo)),
            walk.group_last.eq(Mux(mode == AccessMode.IM2COL_W_128, W128_GROUP - 1, d.pixels - 1)),
        ]
