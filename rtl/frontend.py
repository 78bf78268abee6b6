"""The front of the unit: accept a request, snapshot its descriptor, check every rule,
and set up the job the walker runs.

Three stages, one request per cycle:

1. accept: the request is registered and its slot is read from the descriptor file
   (the snapshot: later bus writes to the slot cannot reach this request);
2. decode the descriptor (:mod:`.decode`) and register the wide products the rules need;
3. check the rules in the model's order (:mod:`.validate`) and compute the job's
   constants: the odometer radices, the per-lane start digits and the beat constants.

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
from .decode import decode_descriptor
from .layouts import RequestLayout, DescriptorLayout, Fill, job_layout, DIGITS, RADIX_WIDTH, SPATIAL
from .validate import products, rule_list, first_broken_rule, swizzle_value

__all__ = ["FrontEnd", "mixed_radix"]


def mixed_radix(value: int, radices):
    """Digits of the constant ``value`` in the mixed radix ``radices`` (least significant
    first) and whether it overflows them. ``value`` is small (< 8 lanes), so each digit is
    a small division."""
    if value == 0:          # no division of a constant 0: Yosys's divider mapping fails on it
        return [Const(0, 1) for _ in radices], Const(0, 1)
    digits = []
    rest = Const(value, 4)
    for radix in radices:
        digits.append(rest % radix)
        rest = rest // radix
    return digits, rest != 0


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

        # -- stage 1: accept and snapshot -------------------------------------------------
        valid1 = Signal()
        request1 = Signal(RequestLayout)
        m.d.comb += [
            self.requests.ready.eq(advance),
            self.snap_slot.eq(self.requests.payload.slot),
            self.snap_en.eq(self.requests.valid & advance),
        ]
        with m.If(advance):
            m.d.sync += [valid1.eq(self.requests.valid), request1.eq(self.requests.payload)]

        # -- stage 2: decode, register the products --------------------------------------
        d = decode_descriptor(self.snap_data)
        valid2 = Signal()
        request2 = Signal(RequestLayout)
        descriptor2 = Signal(DescriptorLayout)
        slot_valid2 = Signal()
        wide = products(d)
        extent2 = [Signal(len(v), name=f"extent{i}") for i, v in enumerate(wide["extent"])]
        span2 = Signal(len(wide["tensor_span"]))
        with m.If(advance):
            m.d.sync += [valid2.eq(valid1), request2.eq(request1), descriptor2.eq(self.snap_data),
                         slot_valid2.eq(self.snap_valid), span2.eq(wide["tensor_span"])]
            m.d.sync += [reg.eq(value) for reg, value in zip(extent2, wide["extent"])]

        # -- stage 3: rules and job set-up -----------------------------------------------
        d = decode_descriptor(descriptor2)
        req = request2
        mode = req.mode.as_value()
        gather = (mode == AccessMode.GATHER4) | (mode == AccessMode.SCATTER4)
        halo = req.w_halo
        rows = Mux(gather, 4,
               Mux(mode == AccessMode.IM2COL, d.pixels,
               Mux(mode == AccessMode.IM2COL_W, d.pixels + halo,
               Mux(mode == AccessMode.IM2COL_W_128, 128 + 4 * halo, d.box_rows_tiled))))
        box_bytes = rows * d.row_pitch
        rules = rule_list(d, req, {"extent": extent2, "tensor_span": span2}, slot_valid2, box_bytes, config)
        code = first_broken_rule(m, rules)

        job = Signal.like(self.job.payload)
        pixel_mode = (mode == AccessMode.IM2COL) | (mode == AccessMode.IM2COL_W) | (mode == AccessMode.IM2COL_W_128)
        radices = ([d.row_chunks, Mux(pixel_mode, rows, Mux(gather, 4, d.counts[1]))]
                   + [Mux(gather | pixel_mode, 1, d.counts[i]) for i in range(2, 5)])
        self._pixel_walk(m, job.pixels, d, req, pixel_mode)
        # divide by the radices cut to RADIX_WIDTH bits, as the job holds them: `rows` is as
        # wide as a tiled box's row count, and a division by it would be 44 bits wide. (The
        # slices, not the job's fields: reading `job` while assigning it looks circular.)
        radices = [Value.cast(r)[:RADIX_WIDTH] for r in radices]
        m.d.comb += [job.radix[i].eq(radices[i]) for i in range(DIGITS)]
        step_digits, step_overflow = mixed_radix(config.lanes, radices)
        beat = job.beat
        prefetch = req.operation.as_value() == Operation.PREFETCH
        m.d.comb += [
            job.code.eq(code),
            job.step_overflow.eq(step_overflow),
            job.transaction_bytes.eq(Mux(code == ErrorCode.OK, box_bytes, 0)),
        ]
        for i in range(DIGITS):
            m.d.comb += job.step_digits[i].eq(step_digits[i])
        for lane in range(config.lanes):
            digits, overflow = mixed_radix(lane, radices)
            m.d.comb += job.lane_alive[lane].eq(~overflow)
            for i in range(DIGITS):
                m.d.comb += job.lane_digits[lane][i].eq(digits[i])

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
            beat.row_chunks.eq(d.row_chunks),
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
        with m.If(advance):
            m.d.sync += [self.job.valid.eq(valid2), self.job.payload.eq(job)]
        return m

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
                m.d.comb += [walk.low[i - 1].eq(d.lower_corner[i - 1] + offset),
                             walk.end[i - 1].eq(d.dims[i] + d.upper_corner[i - 1] + offset)]
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
