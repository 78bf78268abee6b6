"""The request former (rtl/request_former.py) against the golden model's merge
(model/memory.py): random legal requests of every mode, their chunks streamed as beats
through the block with the output stalling at random, every beat's requests compared
slot by slot with the model's, and the beat passed through unchanged."""

import random

import pytest
from amaranth.sim import Simulator
from hypothesis import given, settings, strategies as st

from tma_unit.model import transactions
from tma_unit.model.config import UnitConfig
from tma_unit.model.errors import ErrorCode, TmaError
from tma_unit.model.memory import merge
from tma_unit.rtl.layouts import beat_layout, Operation as OperationShape, REQUEST_SLOTS_PER_LANE
from tma_unit.rtl.request_former import RequestFormer
from tma_unit.sim import generate
from tma_unit.sim.testbench import stream_get, stream_put

from strategies import HypothesisDraw


def _beats(config, tm, req):
    """The beat payloads (``beat_layout`` constants) of a request's transactions: a row
    of ``R`` chunks takes ``ceil(R / lanes)`` beats, lane ``j`` of its beat ``g`` holding
    the row's chunk ``g * lanes + j`` if it has one."""
    t = transactions(tm, req)
    layout, lanes = beat_layout(config), config.lanes
    noise = random.Random(len(t))
    per_row = -(-t.row_chunks // lanes)
    beats = len(t) // t.row_chunks * per_row
    out = []
    for beat in range(beats):
        row, group = divmod(beat, per_row)
        chunks = []
        for j in range(lanes):
            i = row * t.row_chunks + group * lanes + j
            chunks.append({"valid": 1, "global_address": int(t.global_address[i]),
                           "global_length": int(t.global_length[i]), "smem_address": int(t.smem_address[i]),
                           "mask": int(t.mask[i]), "units": int(t.units[i])} if group * lanes + j < t.row_chunks else
                          # a lane past the row's last chunk: not valid, whatever it holds
                          {"valid": 0, "global_address": noise.getrandbits(config.address_width),
                           "global_length": 16, "mask": noise.getrandbits(16), "units": 16})
        out.append(layout.const({"lanes": chunks, "element_pitch": t.element_pitch,
                                 "operation": OperationShape(int(req.operation)),
                                 "last": int(beat == beats - 1)}))
    return t, out


def _expected(t, req, lanes, granule):
    """Per beat, the model's requests: (address, sectors, lanes) in issue order."""
    r = merge(t, lanes, req.operation, granule)
    per_beat = [[] for _ in range(r.beats)]
    for k in range(len(r)):
        per_beat[int(r.beat[k])].append((int(r.address[k]), int(r.sectors[k]), int(r.lanes[k])))
    return per_beat


def _run(config, cases, granule=128, seed=0):
    """Stream every case's beats through the former; returns the differences found."""
    dut = RequestFormer(config, granule)
    beats, expected = [], []
    for tm, req in cases:
        t, payloads = _beats(config, tm, req)
        beats += payloads
        expected += _expected(t, req, config.lanes, granule)
    got = []
    stall = random.Random(seed)

    async def driver(ctx):
        for payload in beats:
            await stream_put(ctx, dut.beats, payload)
            while stall.random() < 0.2:         # an idle cycle now and then
                await ctx.tick()

    async def consumer(ctx):
        while len(got) < len(beats):
            while stall.random() < 0.3:         # the output stalls now and then
                await ctx.tick()
            got.append(await stream_get(ctx, dut.requests))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(driver)
    sim.add_testbench(consumer)
    sim.run()
    differences = []
    space = 1 << config.address_width
    for index, (payload, want, sent) in enumerate(zip(got, expected, beats)):
        # the former leaves a slot's address to its place: slot 2j is lane j's chunk's
        # granule, slot 2j + 1 the next one (modulo the address space)
        slots = [((int(payload.lanes[i // 2].global_address) // granule + i % 2) * granule % space,
                  int(s.sectors), int(s.lanes)) for i, s in enumerate(payload.requests) if s.valid]
        if slots != want:
            differences.append((index, slots, want))
        if payload.as_value().value & ((1 << len(sent.as_value())) - 1) != sent.as_value().value:
            differences.append((index, "beat changed"))
    return differences


@pytest.mark.parametrize("lanes", [1, 2, 4, 8])
def test_the_former_merges_a_mid_line_row_into_two_requests_a_beat(lanes):
    """Derived, not from the model: 64 fp16 columns from column 32 (byte 64 of a line);
    each beat's chunks cover [64 + 16 lanes k, 64 + 16 lanes (k + 1)) of the row."""
    from tma_unit.model import DataType, MapKind, Operation, Request, TensorMap
    from tma_unit.model.tensormap import dense_strides
    config = UnitConfig(lanes=lanes)
    tm = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x1000_0000, (4096, 4), tuple(dense_strides((4096, 4), 2)),
                   (64, 1), (1, 1))
    req = Request(Operation.LOAD, (32, 0), smem_address=0)
    t, payloads = _beats(config, tm, req)
    want = []
    for k in range(len(payloads)):
        start, end = 64 + 16 * lanes * k, 64 + 16 * lanes * (k + 1) - 1
        requests = []
        for line in range(start // 128, end // 128 + 1):
            low, high = max(start, 128 * line), min(end, 128 * line + 127)
            sectors = sum(1 << s for s in range((low % 128) // 32, (high % 128) // 32 + 1))
            lanes_mask = sum(1 << j for j in range(lanes) if low <= start + 16 * j <= high)
            requests.append((0x1000_0000 + 128 * line, sectors, lanes_mask))
        want.append(requests)
    assert _expected(t, req, lanes, 128) == want        # the model agrees with the derivation
    assert _run(config, [(tm, req)]) == []


@settings(max_examples=12)
@given(data=st.data(), lanes=st.sampled_from([1, 2, 4, 8]), granule=st.sampled_from([128, 256]))
def test_the_former_matches_the_model_on_random_requests_of_every_mode(data, lanes, granule):
    draw = HypothesisDraw(data.draw)
    cases = [generate.legal_case(draw, kind, max_rows=4) for kind in generate.CASE_KINDS for _ in range(2)]
    assert _run(UnitConfig(lanes=lanes), cases, granule, seed=data.draw(st.integers(0, 1 << 30))) == []


@pytest.mark.parametrize("granule", [64, 96, 8192, True])
def test_a_unit_refuses_a_granule_that_is_not_a_line_to_a_page(granule):
    with pytest.raises(TmaError, match="config.request_former") as error:
        UnitConfig(request_former=granule)
    assert error.value.code in (ErrorCode.ENUM_RANGE, ErrorCode.FIELD_TYPE)


def test_a_beat_has_two_request_slots_a_lane_with_a_former_and_none_without():
    assert beat_layout(UnitConfig(lanes=4), 256)["requests"].shape.length == REQUEST_SLOTS_PER_LANE * 4
    assert "requests" not in dict(beat_layout(UnitConfig(lanes=4)))
    with_former = UnitConfig(lanes=4, request_former=128)
    assert with_former.least_beat_queue == 9 + 5            # the former's stages 0 to 4
    with pytest.raises(TmaError, match="config.beat_queue = 13 is outside 14..256"):
        UnitConfig(lanes=4, request_former=128, beat_queue=13)


def test_a_chunk_starting_below_address_0_has_its_request_in_granule_0_in_its_second_slot():
    """Derived: a chunk whose first unit is out of bounds below address 0 starts in the
    last granule of the address space; its in-bounds units wrap into granule 0, the next
    granule modulo the address width, so the request is in the lane's second slot at
    address 0 (the campaign's corpus case; the checker once refused it)."""
    from pathlib import Path
    from tma_unit.sim.campaign import read_reproducer
    from tma_unit.sim.cosim import BatchChecker
    scenario, _ = read_reproducer(Path(__file__).parent / "corpus" / "former-chunk-below-address-0.json")
    expected = BatchChecker(scenario).expected
    chunk = expected["lanes[0].global_address"].astype(object)
    below = [b for b in range(len(chunk)) if expected["lanes[0].valid"][b] and chunk[b] >= (1 << 64) - 128
             and expected["requests[1].valid"][b]]
    assert below, "the case has no chunk starting below address 0 with in-bounds bytes"
    for b in below:
        assert not expected["requests[0].valid"][b] and int(expected["requests[1].address"][b]) == 0
