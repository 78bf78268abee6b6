"""The request former (docs/memory.md, "The request former"): each beat's chunks merged
into L2 requests, one per aligned granule its in-bounds bytes touch, a beat a cycle.

The rule is the golden model's (:func:`tma_unit.model.memory.merge`). A chunk's bytes
span less than 128: it holds ``16 / u`` units of ``u`` bytes at a pitch of ``u`` times a
stride of at most 8, so its span is at most ``(16 - u) * 8 + u = 128 - 7u`` (a 12-byte
unit is alone in its chunk), and a granule of at least 128 bytes holds the chunk, or it
and the next one. Each lane therefore looks at a *window* of two granules from its
chunk's own. A unit starts ``k * pitch`` bytes past the chunk and holds ``global_length
/ units`` bytes, at most 12, so it touches one sector or two: its first byte's and its
last's.

The beats are the unit's (docs/memory.md, "In hardware"): a beat holds
consecutive chunks of one row, lane ``j + 1``'s starting ``16 x stride`` bytes (at most
128, a granule at the least) after lane ``j``'s, and the lanes with live units are a run.
So two neighbouring lanes' granules are the same or the next, the lanes that share a
granule are a run of neighbours, and whether any two candidates name one granule follows
from ``lanes - 1`` compares of neighbours alone: how many granules lie between two lanes
is the number of neighbour pairs between them that differ. The block builds that in five
registered stages, each about one carry chain or a few levels of logic long, for the
clock (docs/fpga.md):

0. the beat as it comes, so the datapath's last adders end at a register beside them
   rather than at stage 1's, which sit by the sixteen adds of each lane they feed;
1. the units' starts ``k * pitch`` (shifted adds of the beat's pitch, shared by the
   lanes), each lane's offset in its granule, its units' last byte and its live units
   (mask bits at or past a lane's ``units`` are 0, as the datapath makes them);
2. per lane and unit, its first byte in the window and so its sector, and whether its
   last byte crosses into the next sector (a compare of the first byte's offset in its
   sector with ``31 - last``, beside the add, not a second add), ORed by groups of
   :data:`GROUP` units; and whether each lane's granule is its neighbour's;
3. each lane's window (the groups ORed), its halves the beat's ``2 x lanes``
   *candidates* (lane 0's granule, the one after it, lane 1's, ...), and for every pair of
   candidates whether they name one granule, from the neighbours' answers (no sort);
4. a candidate with sectors is a request unless an earlier one names the same granule,
   and a request takes the sectors and lanes of every candidate that names its granule.

So the requests of a beat are the candidates that own their granule, in candidate order:
by the lowest lane that uses the granule, then by address, as the model orders them. The
output beat is the input beat with ``requests`` added (:func:`.layouts.beat_layout`):
slot ``2j`` is lane ``j``'s granule and slot ``2j + 1`` the next one, each valid when it
owns its granule; a beat's requests are its valid slots in order, and the beat's chunks
ride beside them for the shared-memory side (each lane's shared-memory address, mask and
fill). A slot's address is its lane's granule, or the next, so the former's output does
not carry it (``addressed`` False) and neither does the beat queue: :func:`addressed`
adds it where the beat leaves the unit, an increment for each odd slot. At lanes 8 the
addresses would be 1,024 of a formed beat's 1,232 request bits.

In a unit built with one (``UnitConfig.request_former``) the datapath feeds it from its
last stage and takes its output into the beat queue, its output always ready: the
stages move every cycle, as the datapath's do (rtl/datapath.py).
"""

from amaranth.hdl import Module, Signal, Const, Cat, Mux
from amaranth.lib import wiring, stream, data
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig, FORMER_GRANULE_RANGE, FORMER_STAGES
from ..model.memory import SECTOR_BYTES, LINE_BYTES
from .arith import less_than, small_product
from .decode import UNIT_BYTES
from .layouts import beat_layout, REQUEST_SLOTS_PER_LANE

__all__ = ["RequestFormer", "addressed", "UNITS", "OFFSET_LOADS", "STAGES"]

#: Units a chunk holds at most (a bit each in a lane's ``mask``).
UNITS = 16
#: Units whose sectors stage 2 ORs together (the rest of the OR is stage 3's): one, so
#: stage 2 ends at each unit's sectors (an OR of four there was part of the lanes-1 top's
#: longest path, docs/fpga.md "Clock speed"; the OR of sixteen in stage 3 is beside its pairs' answers).
GROUP = 1
#: Units each copy of a lane's granule offset feeds in stage 2: the offset is 16 units'
#: adds' operand, and a register for each four of them can sit beside its adds (one
#: register, pulled between its source and sixteen loads, was the lanes-8 top's longest
#: path; docs/fpga.md "Clock speed").
OFFSET_LOADS = 4
#: The former's registers from a beat in to its requests out: stages 0 to 4 above (the
#: timing model's count, model/config.py).
STAGES = FORMER_STAGES
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


def addressed(m: Module, beat, out, granule: int):
    """Drive ``out`` (``beat_layout(config, granule)``) with ``beat`` (the same without the
    slots' addresses) and each slot's address: slot ``2j``'s is lane ``j``'s chunk's
    granule, slot ``2j + 1``'s the next one, modulo the address space."""
    bits = _granule_bits(granule)
    for name, _ in out.shape():
        if name != "requests":
            m.d.comb += out[name].eq(beat[name])
    for i, (slot, formed) in enumerate(zip(out.requests, beat.requests)):
        own = beat.lanes[i // REQUEST_SLOTS_PER_LANE].global_address[bits:]
        granule_ = (own + i % REQUEST_SLOTS_PER_LANE)[:len(own)]
        m.d.comb += [slot.valid.eq(formed.valid), slot.sectors.eq(formed.sectors), slot.lanes.eq(formed.lanes),
                     slot.address.eq(Cat(Const(0, bits), granule_))]


class RequestFormer(wiring.Component):
    """Beats in, the same beats with their L2 requests out (a beat a cycle, :data:`STAGES`
    cycles behind).

    Parameters
    ----------
    config : UnitConfig
    granule : int
        Bytes of a request's granule (default: ``config.request_former``, or one L2 line
        for a configuration without a former, to synthesize the block on its own).

    Ports
    -----
    beats : stream in (``beat_layout(config, 0)``: no requests)
    requests : stream out (``beat_layout(config, granule, addressed=False)``: with its
        requests, their addresses left to :func:`addressed`)
    """

    def __init__(self, config: UnitConfig, granule: int | None = None):
        granule = (config.request_former or LINE_BYTES) if granule is None else granule
        self.config, self.granule = config, granule
        self.granule_bits = _granule_bits(granule)
        super().__init__({
            "beats": In(stream.Signature(beat_layout(config, 0))),
            "requests": Out(stream.Signature(beat_layout(config, granule, addressed=False))),
        })

    def elaborate(self, platform):
        m = Module()
        config, lanes, bits = self.config, self.config.lanes, self.granule_bits
        sectors = self.granule // SECTOR_BYTES
        window = 2 * sectors

        # the stages move together whenever the output register is free or taken
        move = ~self.requests.valid | self.requests.ready
        m.d.comb += self.beats.ready.eq(move)

        def stage(value, name, keep=False):
            """``value`` registered, loaded when the stages move; ``keep``: a register of
            its own even where another holds the same bits (:data:`.pipeline.KEEP_COPIES`)."""
            register = Signal.like(value, name=name, reset_less=True, attrs={"keep": 1} if keep else {})
            with m.If(move):
                m.d.sync += register.eq(value)
            return register

        def valid_stage(value, name):
            register = Signal(name=name)
            with m.If(move):
                m.d.sync += register.eq(value)
            return register

        # stage 0: the beat as it comes (the datapath's last adders end here)
        valid0, payload = valid_stage(self.beats.valid, "s0_valid"), stage(self.beats.payload, "s0_beat")

        # stage 1: the units' starts (k x pitch, shared by the lanes: shifted adds, no DSP
        # block), each lane's offset in its granule, its units' last byte and live units.
        # The offset is registers of its own, one for each OFFSET_LOADS of its lane's
        # sixteen adds in stage 2, not the beat register's copy of the same address bits,
        # which Yosys would merge them into (a route from there was the lanes-1 top's
        # longest path; docs/fpga.md)
        valid1 = valid_stage(valid0, "s1_valid")
        beat1 = stage(payload, "s1_beat")
        starts = [stage(small_product(payload.element_pitch, Const(k, 4))[:bits + 1], f"s1_start{k}")
                  for k in range(UNITS)]
        lanes1 = []
        for j in range(lanes):
            lane = payload.lanes[j]
            offsets = [stage(lane.global_address[:bits], f"s1_lane{j}_offset{n}", keep=True)
                       for n in range(UNITS // OFFSET_LOADS)]
            lanes1.append((stage(lane.global_address[bits:], f"s1_lane{j}_granule"), offsets,
                           stage(_unit_bytes(lane.global_length, lane.units) - 1, f"s1_lane{j}_last"),
                           stage(Mux(lane.valid, lane.mask, 0), f"s1_lane{j}_live")))

        # stage 2: each unit's first byte in the lane's two-granule window, as the sector
        # it touches and whether its last byte crosses into the next (a unit holds at most
        # 12 bytes, so it touches two sectors at most): its offset in the sector past
        # 31 - last, a compare of 5 bits beside the add rather than a second add after it.
        # The sectors are ORed by groups of GROUP units
        valid2, beat2 = valid_stage(valid1, "s2_valid"), stage(beat1, "s2_beat")
        lanes2 = []
        for j, (granule, offsets, last, live) in enumerate(lanes1):
            groups = []
            for group in range(UNITS // GROUP):
                touched = Const(0, window)
                for k in range(group * GROUP, (group + 1) * GROUP):
                    first = (offsets[k // OFFSET_LOADS] + starts[k])[:bits + 1]
                    sector = (Const(1, window) << first[SECTOR_BITS:])[:window]
                    crosses = less_than(~last[:SECTOR_BITS], first[:SECTOR_BITS])
                    pair = sector | Mux(crosses, sector << 1, 0)[:window]
                    touched = touched | Mux(live[k], pair, 0)
                groups.append(touched[:window])     # a variable shift widens: the window's bits
            lanes2.append(stage(Cat(*groups), f"s2_lane{j}_groups"))
        # a lane's granule and its neighbour's: the same, or (for lanes in one run) the next
        same = [stage(lanes1[j][0] == lanes1[j + 1][0], f"s2_same{j}") for j in range(lanes - 1)]

        # stage 3: the lanes' windows, split into the beat's 2 x lanes candidates (lane 0's
        # granule, the one after it, lane 1's, ...), and whether each pair names one
        # granule. Lane a's granule is lane b's (a < b) where every neighbour pair between
        # them is the same, and the one after a's is b's where exactly one pair differs; b's
        # is never the one after a's, and a lane's own two differ
        valid3, beat3 = valid_stage(valid2, "s3_valid"), stage(beat2, "s3_beat")
        halves = []
        for groups in lanes2:
            merged = Const(0, window)
            for group in range(UNITS // GROUP):
                merged = merged | groups[group * window:(group + 1) * window]
            halves += [merged[:sectors], merged[sectors:]]
        count = len(halves)
        candidates = [stage(halves[i], f"s3_candidate{i}_sectors") for i in range(count)]
        equal = {(i, k): Const(0, 1) for i in range(count) for k in range(count)}
        for a in range(lanes):
            for b in range(a + 1, lanes):
                between = Cat(*same[a:b])
                both = stage(between.all(), f"s3_same{a}_{b}")
                one_differs = [between == ((1 << (b - a)) - 1) ^ (1 << n) for n in range(b - a)]
                following = stage(Cat(*one_differs).any(), f"s3_next{a}_{b}")
                for i, k, same_ in ((2 * a, 2 * b, both), (2 * a + 1, 2 * b + 1, both), (2 * a + 1, 2 * b, following)):
                    equal[i, k] = equal[k, i] = same_

        # stage 4: a candidate with sectors is a request unless an earlier one names its
        # granule; a request takes the sectors and lanes of every candidate naming it
        used = [sectors_.any() for sectors_ in candidates]
        named = [[used[k] & (Const(1, 1) if i == k else equal[i, k]) for k in range(count)] for i in range(count)]
        out = self.requests.payload
        with m.If(move):
            m.d.sync += [self.requests.valid.eq(valid3), out.as_value()[:len(beat3.as_value())].eq(beat3)]
            for i in range(count):
                owner = used[i] & ~Cat(named[i][:i]).any() if i else used[i]
                merged_sectors = Const(0, sectors)
                merged_lanes = Const(0, lanes)
                for k, other in enumerate(candidates):
                    merged_sectors = merged_sectors | Mux(named[i][k], other, 0)
                    merged_lanes = merged_lanes | Mux(named[i][k], Const(1 << (k // REQUEST_SLOTS_PER_LANE), lanes), 0)
                slot = out.requests[i]
                m.d.sync += [slot.valid.eq(owner), slot.sectors.eq(merged_sectors), slot.lanes.eq(merged_lanes)]
        return m
