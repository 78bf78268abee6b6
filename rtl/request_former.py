"""The request former (docs/memory.md, "The request former"): each beat's chunks merged
into L2 requests, one per aligned granule its in-bounds bytes touch, a beat a cycle.

The rule is the golden model's (:func:`tma_unit.model.memory.merge`); this block builds it
in two registered stages behind the beat stream:

1. per lane, the sectors its chunk's in-bounds units touch, in a window of two granules
   from the chunk's own. A chunk's bytes span less than 128: it holds ``16 / u`` units of
   ``u`` bytes at a pitch of ``u`` times a stride of at most 8, so its span is at most
   ``(16 - u) * 8 + u = 128 - 7u`` (a 12-byte unit is alone in its chunk); a granule of
   at least 128 bytes holds the chunk, or it and the next one. Mask bits at or past a
   lane's ``units`` are 0, as the datapath makes them.
   A unit starts ``k * pitch`` bytes past the chunk (shifted adds of the beat's pitch,
   shared by the lanes) and holds ``global_length / units`` bytes, at most 12, so it
   touches one sector or two: its first byte's and its last's;
2. the window's halves are the beat's ``2 x lanes`` *candidates* (lane 0's granule, the
   one after it, lane 1's, ...); a candidate with sectors is a request unless an earlier
   one names the same granule, and a request takes the sectors and lanes of every
   candidate that names its granule (compares of every pair: no sort).

So the requests of a beat are the candidates that own their granule, in candidate order:
by the lowest lane that uses the granule, then by address, as the model orders them. The
output beat is the input beat with ``requests`` added (:func:`.layouts.beat_layout`):
slot ``2j`` is lane ``j``'s granule and slot ``2j + 1`` the next one, each valid when it
owns its granule; a beat's requests are its valid slots in order, and the beat's chunks
ride beside them for the shared-memory side (each lane's shared-memory address, mask and
fill).

In a unit built with one (``UnitConfig.request_former``) the datapath feeds it from its
last stage and takes its output into the beat queue, its output always ready: the two
stages move every cycle, as the datapath's do (rtl/datapath.py).
"""

from amaranth.hdl import Module, Signal, Const, Cat, Mux, Value
from amaranth.lib import wiring, stream, data
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig, FORMER_GRANULE_RANGE
from ..model.memory import SECTOR_BYTES, LINE_BYTES
from .arith import small_product
from .decode import UNIT_BYTES
from .layouts import beat_layout

__all__ = ["RequestFormer", "UNITS"]

#: Units a chunk holds at most (a bit each in a lane's ``mask``).
UNITS = 16
SECTOR_BITS = SECTOR_BYTES.bit_length() - 1


def _granule_bits(granule: int) -> int:
    low, high = FORMER_GRANULE_RANGE
    if not low <= granule <= high or granule & (granule - 1):
        raise ValueError(f"granule: {granule} bytes; the request former takes a power of two from {low} to {high}")
    return granule.bit_length() - 1


def _unit_bytes(length, units):
    """``length / units`` for the type table's unit sizes (a chunk's units are whole): the
    size whose multiple of ``units`` is ``length``."""
    size = Const(0, 4)
    for bytes_ in UNIT_BYTES:
        size = Mux(small_product(units, Const(bytes_)) == length, bytes_, size)    # shifts and adds, no DSP block
    return size


class RequestFormer(wiring.Component):
    """Beats in, the same beats with their L2 requests out (a beat a cycle, two cycles
    behind).

    Parameters
    ----------
    config : UnitConfig
    granule : int
        Bytes of a request's granule (default: ``config.request_former``, or one L2 line
        for a configuration without a former, to synthesize the block on its own).

    Ports
    -----
    beats : stream in (``beat_layout(config, 0)``: no requests)
    requests : stream out (``beat_layout(config, granule)``: with its requests)
    """

    def __init__(self, config: UnitConfig, granule: int | None = None):
        granule = (config.request_former or LINE_BYTES) if granule is None else granule
        self.config, self.granule = config, granule
        self.granule_bits = _granule_bits(granule)
        super().__init__({
            "beats": In(stream.Signature(beat_layout(config, 0))),
            "requests": Out(stream.Signature(beat_layout(config, granule))),
        })

    def elaborate(self, platform):
        m = Module()
        config, lanes = self.config, self.config.lanes
        sectors = self.granule // SECTOR_BYTES

        # the stages move together whenever the output register is free or taken
        move = ~self.requests.valid | self.requests.ready
        m.d.comb += self.beats.ready.eq(move)
        held = Signal(name="window_valid")
        beat = Signal(beat_layout(config, 0), name="window_beat")
        granules = [Signal(config.address_width - self.granule_bits, name=f"lane{j}_granule") for j in range(lanes)]
        windows = [Signal(2 * sectors, name=f"lane{j}_sectors") for j in range(lanes)]

        # stage 1: each lane's window of sectors
        payload = self.beats.payload
        pitch = payload.element_pitch
        starts = [small_product(pitch, Const(k, 4)) for k in range(UNITS)]     # shifted adds, no DSP block
        with m.If(move):
            m.d.sync += [held.eq(self.beats.valid), beat.eq(payload)]
            for j in range(lanes):
                lane = payload.lanes[j]
                offset = lane.global_address[:self.granule_bits]
                last = _unit_bytes(lane.global_length, lane.units) - 1
                bits = Const(0, 2 * sectors)
                for k in range(UNITS):
                    first = (offset + starts[k])[:self.granule_bits + 1]
                    end = (first + last)[:self.granule_bits + 1]
                    touched = (Const(1, 2 * sectors) << (first >> SECTOR_BITS)) | (Const(1, 2 * sectors) << (end >> SECTOR_BITS))
                    bits = bits | Mux(lane.mask[k], touched, 0)
                m.d.sync += [granules[j].eq(lane.global_address[self.granule_bits:]),
                             windows[j].eq(Mux(lane.valid, bits, 0))]

        # stage 2: candidates, owners and their merged sectors and lanes
        candidates = []
        for j in range(lanes):
            candidates.append((granules[j], windows[j][:sectors], j))
            candidates.append(((granules[j] + 1)[:len(granules[j])], windows[j][sectors:], j))
        used = [bits.any() for _, bits, _ in candidates]
        # same[i][k]: candidates i and k name one granule and k has sectors (each pair compared once)
        equal = {}
        for i in range(len(candidates)):
            for k in range(i + 1, len(candidates)):
                equal[i, k] = equal[k, i] = candidates[i][0] == candidates[k][0]
        same = [[used[k] & (Const(1, 1) if i == k else equal[i, k]) for k in range(len(candidates))]
                for i in range(len(candidates))]
        out = self.requests.payload
        with m.If(move):
            m.d.sync += [self.requests.valid.eq(held), out.as_value()[:len(beat.as_value())].eq(beat)]
            for i, (granule, _, _) in enumerate(candidates):
                owner = used[i] & ~Cat(same[i][:i]).any() if i else used[i]
                merged_sectors = Const(0, sectors)
                merged_lanes = Const(0, lanes)
                for k, (_, other_bits, lane) in enumerate(candidates):
                    merged_sectors = merged_sectors | Mux(same[i][k], other_bits, 0)
                    merged_lanes = merged_lanes | Mux(same[i][k], Const(1 << lane, lanes), 0)
                slot = out.requests[i]
                m.d.sync += [slot.valid.eq(owner), slot.address.eq(Cat(Const(0, self.granule_bits), granule)),
                             slot.sectors.eq(merged_sectors), slot.lanes.eq(merged_lanes)]
        return m
