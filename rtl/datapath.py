"""From odometer digits to beats: coordinates, the out-of-bounds detector, address
generation and the swizzle, in three pipeline stages behind the walker.

A. coordinates: ``start + digit * element stride`` in dimensions 1..4 (gather4: the row
   the digit picks; the im2col modes: the walker's pixel coordinates), the value coordinate of the chunk's first unit along dimension 0,
   the chunk's unit count, its place in the dense shared-memory image;
B. per-dimension products ``coordinate * stride`` (full width: 34-bit signed by 40-bit
   strides), the in-bounds bit of every unit (PTX 5.5.3.3: negative coordinates and
   coordinates past the dimension are both out), the swizzled shared-memory address
   (5.5.7);
C. the global address: base plus the products, modulo 2^address_width.

The whole pipeline moves one step when the output register is free or being taken
(``advance``); the output's valid is a register, never a function of its ready. Each
job's completion rides with its last beat (or alone, for a rejected request) and is
queued for the completion stream when that beat leaves.
"""

from amaranth.hdl import Module, Signal, Const, Mux, Array, Cat, signed, unsigned
from amaranth.lib import wiring, stream, data
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from .layouts import beat_layout, CompletionLayout, beat_constants_layout, PIXEL_COORD
from .swizzle import swizzle_address
from .walker import walk_layout, completion_info_layout

__all__ = ["Datapath"]


def _stage_layout(config: UnitConfig, lane_fields: dict) -> data.StructLayout:
    return data.StructLayout({
        "valid": 1,
        "is_beat": 1,
        "last": 1,
        "lanes": data.ArrayLayout(data.StructLayout(lane_fields), config.lanes),
        "beat": beat_constants_layout(config),
        "has_completion": 1,
        "completion": completion_info_layout(config),
    })


class Datapath(wiring.Component):
    """Walk records in; beats and completions out.

    Ports
    -----
    walk, walk_valid : in
        The walker's output register.
    advance : out
        The pipeline moves this cycle (the walker steps with it).
    beats : stream out (``beat_layout``)
    completions : stream out (``CompletionLayout``)
    in_flight : out
        Some stage holds work (for STATUS.BUSY).
    report, report_code, report_id : out
        A completion is queued this cycle, with its status and request id.
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "walk": In(walk_layout(config)),
            "walk_valid": In(1),
            "advance": Out(1),
            "beats": Out(stream.Signature(beat_layout(config))),
            "completions": Out(stream.Signature(CompletionLayout)),
            "in_flight": Out(1),
            "report": Out(1),
            "report_code": Out(8),
            "report_id": Out(config.id_width),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        width = config.address_width
        smem_width = config.smem_address_width
        advance = self.advance

        layout_a = _stage_layout(config, {
            "alive": 1, "coords": data.ArrayLayout(PIXEL_COORD, 4), "row_inside": 1,
            "first_value": signed(34), "units": unsigned(5), "smem_dense": unsigned(smem_width)})
        layout_b = _stage_layout(config, {
            # signed, so that assigning a narrower product sign-extends it (addresses wrap mod 2^width)
            "alive": 1, "products": data.ArrayLayout(signed(width), 4), "dim0_offset": signed(width),
            "mask": unsigned(16), "units": unsigned(5), "smem_address": unsigned(smem_width)})
        stage_a = Signal(layout_a)
        stage_b = Signal(layout_b)
        out = Signal(_stage_layout(config, {"x": 1}))       # the beat itself is in self.beats.payload

        def shared(target, source, valid):
            return [target.valid.eq(valid), target.is_beat.eq(source.is_beat), target.last.eq(source.last),
                    target.beat.eq(source.beat), target.has_completion.eq(source.has_completion),
                    target.completion.eq(source.completion)]

        # -- stage A: coordinates --------------------------------------------------------
        walk = self.walk
        beat = walk.beat
        with m.If(advance):
            m.d.sync += shared(stage_a, walk, self.walk_valid)
            for j in range(config.lanes):
                lane = stage_a.lanes[j]
                digits = walk.lane_digits[j]
                chunk = digits[0]
                rows = Array(beat.start[k] for k in range(1, 5))
                inside = Const(1, 1)
                for d in range(1, 5):
                    coordinate = beat.start[d] + digits[d] * beat.element_strides[d]
                    if d == 1:
                        coordinate = Mux(beat.gather, rows[digits[1][:2]], coordinate)
                    else:
                        coordinate = Mux(beat.gather, 0, coordinate)
                    coordinate = Mux(beat.pixel_mode, walk.lane_pixel[j][d - 1], coordinate)
                    m.d.sync += lane.coords[d - 1].eq(coordinate)
                    inside = inside & (coordinate >= 0) & (coordinate < beat.dims[d])
                linear = walk.beat_index * config.lanes + j
                m.d.sync += [
                    lane.alive.eq(walk.lane_alive[j]),
                    lane.row_inside.eq(inside),
                    lane.first_value.eq(beat.start[0] + chunk * beat.units_per_chunk * beat.value_step),
                    lane.units.eq(Mux(chunk == beat.row_chunks - 1, beat.units_last, beat.units_per_chunk)),
                    # a prefetch touches no shared memory: its beats carry address 0
                    lane.smem_dense.eq(Mux(beat.prefetch, 0, beat.smem_base + (linear << 4))),
                ]

        # -- stage B: products, bounds, swizzle ------------------------------------------
        with m.If(advance):
            m.d.sync += shared(stage_b, stage_a, stage_a.valid)
            beat = stage_a.beat
            for j in range(config.lanes):
                a, b = stage_a.lanes[j], stage_b.lanes[j]
                mask = []
                for u in range(16):
                    value = a.first_value + u * beat.value_step
                    mask.append(a.alive & a.row_inside & (u < a.units) & (value >= 0) & (value < beat.dims[0]))
                first_unit = a.first_value >> beat.values_per_unit_log2
                m.d.sync += [
                    b.alive.eq(a.alive),
                    b.mask.eq(Cat(*mask)),
                    b.units.eq(a.units),
                    b.dim0_offset.eq(first_unit * beat.unit_global_bytes),
                    b.smem_address.eq(swizzle_address(a.smem_dense, beat.swizzle)),
                ]
                m.d.sync += [b.products[d].eq(a.coords[d] * beat.strides[d]) for d in range(4)]

        # -- stage C: the global address, into the output register -------------------------
        payload = self.beats.payload
        with m.If(advance):
            m.d.sync += shared(out, stage_b, stage_b.valid)
            beat = stage_b.beat
            m.d.sync += [
                payload.element_pitch.eq(beat.element_pitch),
                payload.fill.eq(beat.fill),
                payload.request_id.eq(beat.request_id),
                payload.operation.eq(beat.operation),
                payload.reduce_op.eq(beat.reduce_op),
                payload.multicast_mask.eq(beat.multicast_mask),
                payload.last.eq(stage_b.last),
            ]
            for j in range(config.lanes):
                b, lane = stage_b.lanes[j], payload.lanes[j]
                address = beat.base + b.dim0_offset
                for d in range(4):
                    address = address + b.products[d]
                m.d.sync += [
                    lane.valid.eq(b.alive),
                    lane.global_address.eq(address[:width]),
                    lane.global_length.eq(Mux(b.alive, b.units * beat.unit_global_bytes, 0)),
                    lane.smem_address.eq(b.smem_address),
                    lane.mask.eq(b.mask),
                    lane.units.eq(Mux(b.alive, b.units, 0)),
                ]

        # -- output and completions ------------------------------------------------------
        m.submodules.completions = fifo = SyncFIFOBuffered(width=CompletionLayout.size, depth=config.completion_depth)
        room = fifo.w_rdy | ~out.has_completion
        m.d.comb += self.beats.valid.eq(out.valid & out.is_beat & room)
        taken = Mux(out.is_beat, self.beats.valid & self.beats.ready, out.valid & room)
        m.d.comb += advance.eq(~out.valid | taken)
        completion = Signal(CompletionLayout)
        m.d.comb += [
            completion.request_id.eq(out.completion.request_id),
            completion.status.eq(out.completion.code),
            completion.transaction_bytes.eq(out.completion.transaction_bytes),
            fifo.w_data.eq(completion),
            fifo.w_en.eq(taken & out.has_completion),
            self.completions.payload.eq(fifo.r_data),
            self.completions.valid.eq(fifo.r_rdy),
            fifo.r_en.eq(self.completions.ready),
            self.in_flight.eq(self.walk_valid | stage_a.valid | stage_b.valid | out.valid),
            self.report.eq(fifo.w_en),
            self.report_code.eq(out.completion.code),
            self.report_id.eq(out.completion.request_id),
        ]
        return m
