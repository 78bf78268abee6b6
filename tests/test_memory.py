"""The memory side (model/memory.py, src/memory_side.py; docs/memory.md): the request
former's merge, shared-memory wavefronts, the memory's credits and latency, and the
exploration built on them. Expected values are derived in each test from the box's
geometry or from the rules of docs/memory.md, never read off the code under test."""

import csv

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tma_unit.cli import main
from tma_unit.memory_side import beats_of, in_flight_for, little, sweep, wavefront_table
from tma_unit.model import (DataType, MapKind, Operation, Request, Swizzle, TensorMap, TmaError, box_elements,
                            transactions)
from tma_unit.model.banks import wavefronts
from tma_unit.model.config import UnitConfig
from tma_unit.model.errors import ErrorCode
from tma_unit.model.memory import SECTOR_BYTES, Memory, merge, simulate, smem_wavefronts
from tma_unit.model.swizzle import swizzle
from tma_unit.model.tensormap import dense_strides
from tma_unit.model.timing import back_end_stages, memory_beats, predict, records_of
from tma_unit.model.traversal import units_per_chunk
from tma_unit.sim import generate
from tma_unit.workloads import workload

from strategies import HypothesisDraw

PNG = b"\x89PNG\r\n\x1a\n"


def _fp16(dims, box, base=0x1000_0000, strides=(1, 1), swizzle_mode=Swizzle.NONE):
    return TensorMap(MapKind.TILED, DataType.FLOAT16, base, dims, tuple(dense_strides(dims, 2)), box, strides,
                     swizzle=swizzle_mode)


def _requests(tm, req, lanes, granule=128):
    return merge(transactions(tm, req), lanes, req.operation, granule)


# ---- the request former -----------------------------------------------------------------

@pytest.mark.parametrize("lanes", [1, 2, 4, 8])
def test_a_line_aligned_128_byte_row_is_one_request_a_beat(lanes):
    """64 fp16 (128 bytes) a row, the rows 8192 bytes apart, the tensor at a line: beat k
    covers bytes [16 lanes k, 16 lanes (k + 1)) of the box, inside one row's line."""
    tm = _fp16((4096, 4096), (64, 8))
    r = _requests(tm, Request(Operation.LOAD, (0, 0), smem_address=0), lanes)
    beats = 8 * 8 // lanes
    assert r.beats == beats and len(r) == beats
    assert list(r.beat) == list(range(beats))
    for k in range(beats):
        start = 16 * lanes * k
        row, offset = start // 128, start % 128
        assert int(r.address[k]) == 0x1000_0000 + row * 8192
        assert int(r.sectors[k]) == sum(1 << s for s in range(offset // 32, (offset + 16 * lanes - 1) // 32 + 1))
        assert int(r.used_bytes[k]) == 16 * lanes and int(r.lanes[k]) == (1 << lanes) - 1
    assert r.efficiency() == (0.5 if lanes == 1 else 1.0)


def test_a_row_starting_mid_line_splits_each_beat_into_two_requests():
    """Column 32 (64 bytes in): each 128-byte row covers the second half of one line and
    the first half of the next; lanes 0-3 hit the first, 4-7 the second."""
    tm = _fp16((4096, 4096), (64, 4))
    r = _requests(tm, Request(Operation.LOAD, (32, 0), smem_address=0), 8)
    assert r.beats == 4 and list(r.beat) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert list(r.sectors) == [0b1100, 0b0011] * 4
    assert list(r.lanes) == [0x0F, 0xF0] * 4
    assert [int(a) - 0x1000_0000 for a in r.address[:2]] == [0, 128]
    assert r.efficiency() == 1.0


def test_granule_sets_the_request_size():
    tm = _fp16((4096, 4096), (64, 2))
    for granule, per_beat in ((32, 4), (64, 2), (128, 1), (256, 1)):
        r = _requests(tm, Request(Operation.LOAD, (0, 0), smem_address=0), 8, granule)
        assert len(r) == 2 * per_beat and set(r.used_bytes.tolist()) == {128 // per_beat}
    with pytest.raises(TmaError, match="memory.granule = 48"):
        _requests(tm, Request(Operation.LOAD, (0, 0), smem_address=0), 8, 48)


def test_out_of_bounds_units_are_never_requested():
    """A 4096 x 100 tensor, a box of 64 x 8 at (4064, 96): 32 columns and 4 rows are in
    bounds; the beats of rows 100..103 make no request, the others request the 64
    in-bounds bytes of their row (half of each beat's 8 chunks)."""
    tm = _fp16((4096, 100), (64, 8))
    r = _requests(tm, Request(Operation.LOAD, (4064, 96), smem_address=0), 8)
    assert r.beats == 8
    assert list(r.per_beat()) == [1, 1, 1, 1, 0, 0, 0, 0]
    assert set(r.used_bytes.tolist()) == {64} and set(r.sectors.tolist()) == {0b1100}
    assert set(r.lanes.tolist()) == {0x0F}


def test_a_load_fetches_whole_sectors_and_a_store_writes_only_its_bytes():
    """A row of 4088 fp16 (8176 bytes), the box's 64 columns from column 4032 (byte 8064,
    line 63): 56 columns (112 bytes) are in bounds, the last sector half used."""
    tm = _fp16((4088, 16), (64, 1))
    load = _requests(tm, Request(Operation.LOAD, (4032, 0), smem_address=0), 8)
    assert len(load) == 1 and int(load.address[0]) == 0x1000_0000 + 8064
    assert int(load.sectors[0]) == 0b1111 and int(load.used_bytes[0]) == 112
    assert load.byte_mask[0, :112].all() and not load.byte_mask[0, 112:].any()
    assert load.efficiency() == 112 / 128
    store = _requests(tm, Request(Operation.STORE, (4032, 0), smem_address=0), 8)
    assert (store.byte_mask == load.byte_mask).all() and int(store.sectors[0]) == 0b1111


def _expected_requests(tm, req, lanes, granule):
    """The requests derived from the box's elements (model/traversal.py) rather than from
    the transaction stream: each in-bounds unit's bytes, in the beat of its chunk (a beat
    holds up to ``lanes`` chunks of one row: a row of ``chunks_per_row`` starts a beat
    and takes ``ceil(chunks_per_row / lanes)``)."""
    elements = box_elements(tm, req)
    per_chunk, unit_bytes = units_per_chunk(tm), tm.info.unit_global_bytes
    rows, units = elements.global_address.shape
    chunks_per_row = -(-units // per_chunk)
    groups = {}
    for row in range(rows):
        for u in range(units):
            if not elements.in_bounds[row, u]:
                continue
            chunk = u // per_chunk                  # in its row
            beat = row * -(-chunks_per_row // lanes) + chunk // lanes
            for b in range(unit_bytes):
                address = (int(elements.global_address[row, u]) + b) % (1 << 64)
                key = (beat, address - address % granule)
                entry = groups.setdefault(key, [set(), set()])
                entry[0].add(address % granule)
                entry[1].add(chunk % lanes)
    return groups


@settings(max_examples=60)
@given(data=st.data(), lanes=st.sampled_from([1, 2, 4, 8]), granule=st.sampled_from([32, 64, 128, 256]))
def test_requests_cover_exactly_the_in_bounds_bytes_of_each_beat(data, lanes, granule):
    """Any legal request of any mode: one request per (beat, granule) its in-bounds bytes
    touch, with exactly those bytes, their sectors and lanes; in a beat, requests in the
    order of their lowest lane, then address."""
    kind = data.draw(st.sampled_from(generate.CASE_KINDS))
    tm, req = generate.legal_case(HypothesisDraw(data.draw), kind, max_rows=8)
    got = _requests(tm, req, lanes, granule)
    expected = _expected_requests(tm, req, lanes, granule)
    assert len(got) == len(expected)
    for k in range(len(got)):
        key = (int(got.beat[k]), int(got.address[k]))
        offsets, lane_set = expected[key]
        assert set(np.flatnonzero(got.byte_mask[k]).tolist()) == offsets
        assert int(got.sectors[k]) == sum(1 << s for s in {o // SECTOR_BYTES for o in offsets})
        assert int(got.lanes[k]) == sum(1 << j for j in lane_set)
    order = [(int(b), min(expected[(int(b), int(a))][1]), int(a)) for b, a in zip(got.beat, got.address)]
    assert order == sorted(order)


# ---- shared-memory wavefronts ----------------------------------------------------------

def test_wavefronts_of_chunks_in_one_bank_quad_are_the_chunk_count():
    """Chunks 128 bytes apart all fall in banks 0..3: a beat of 8 needs 8 wavefronts; 16
    bytes apart, all 32 banks once: 1."""
    from tma_unit.model.transactions import Transactions
    for spacing, lanes, expected in ((128, 8, 8), (128, 4, 4), (16, 8, 1), (256, 2, 2)):
        n = 16
        t = Transactions(np.zeros(n, np.uint64), np.full(n, 16), 2, np.arange(n) * spacing, np.full(n, 0xFF),
                         np.full(n, 8), None, 8, row_chunks=n)
        assert list(smem_wavefronts(t, lanes, 2, Operation.LOAD)) == [expected] * (n // lanes)
    assert list(smem_wavefronts(t, 8, 2, Operation.PREFETCH)) == [0, 0]


@pytest.mark.parametrize("mode", [Swizzle.B128_ATOM_32B, Swizzle.B128_ATOM_64B, Swizzle.B128, Swizzle.NONE])
def test_wavefronts_follow_the_swizzled_chunk_addresses(mode):
    """A 128-byte-row fp16 box at the least destination alignment the swizzle allows: each
    beat's 8 chunks are the dense image's next 128 bytes, put through the swizzle
    formula; their wavefronts are counted by banks.wavefronts."""
    from tma_unit.model.swizzle import smem_alignment
    base = smem_alignment(mode)
    tm = _fp16((4096, 4096), (64, 16), swizzle_mode=mode)
    got = smem_wavefronts(transactions(tm, Request(Operation.LOAD, (0, 0), smem_address=base)), 8, 2, Operation.LOAD)
    for beat in range(16):
        chunks = [swizzle(base + 128 * beat + 16 * j, mode) for j in range(8)]
        assert got[beat] == wavefronts([c + i for c in chunks for i in range(0, 16, 4)])


def test_a_destination_on_a_1024_byte_boundary_is_conflict_free_in_every_swizzle():
    table = wavefront_table((8,))
    # a beat is one row's chunks: rows of whole lines, or of a power of two of chunks
    # inside one line, put every beat in one line
    assert {r["worst"] for r in table if r["alignment"] == 1024 and (r["width"] % 128 == 0 or 128 % r["width"] == 0)} == {1}
    # a beat that straddles two lines is permuted by two lines' patterns
    assert max(r["worst"] for r in table if r["swizzle"] == "B128_ATOM_32B") == 2


# ---- the memory -------------------------------------------------------------------------

def _run(n, memory, requests=1, sector_bytes=128, wavefronts_=1, operation=Operation.LOAD, ready=None):
    ready = np.arange(n) if ready is None else ready
    return simulate(ready, np.full(n, requests), np.full(n, sector_bytes), np.full(n, wavefronts_),
                    np.full(n, int(operation)), 128 * n, memory)


def test_with_credits_to_spare_every_beat_leaves_as_it_is_ready():
    latency, n = 50, 40
    run = _run(n, Memory(latency=latency, in_flight=1000))
    assert list(run.departure) == list(range(n))
    assert list(run.returned) == [i + latency for i in range(n)]
    assert list(run.written) == [i + latency + 1 for i in range(n)]
    assert run.cycles == n - 1 + latency + 1 + 1 and run.stalled == 0


@pytest.mark.parametrize("credits, latency", [(4, 10), (7, 30), (1, 5)])
def test_too_few_credits_hold_each_group_for_the_latency(credits, latency):
    """A credit comes back the cycle after its request returns: ``credits`` beats leave
    back to back, then wait for the first one's credit, ``latency + 1`` cycles after it."""
    n = 5 * credits
    run = _run(n, Memory(latency=latency, in_flight=credits))
    assert list(run.departure) == [(i // credits) * (latency + 1) + i % credits for i in range(n)]
    assert run.bytes_per_cycle() == pytest.approx(
        128 * n / ((n // credits - 1) * (latency + 1) + credits - 1 + latency + 2))


@pytest.mark.parametrize("credits, latency", [(4, 10), (6, 3)])
def test_a_beat_s_requests_take_their_credits_together(credits, latency):
    """Two requests a beat: ``credits / 2`` beats leave back to back, then wait for the
    first beat's credits, ``latency + 1`` cycles after it."""
    n, group = 12, credits // 2
    run = _run(n, Memory(latency=latency, in_flight=credits), requests=2)
    assert list(run.departure) == [(i // group) * (latency + 1) + i % group for i in range(n)]
    assert list(run.issue) == [d for d in run.departure for _ in range(2)]


def test_a_beat_needing_more_credits_than_there_are_is_refused():
    with pytest.raises(TmaError, match="memory.in_flight = 2 is below the 3 requests of one beat"):
        _run(4, Memory(latency=5, in_flight=2), requests=3)
    with pytest.raises(TmaError, match="memory.granule = 8192"):
        Memory(granule=8192)


def test_sector_bytes_over_the_request_path_bandwidth_space_the_beats():
    run = _run(10, Memory(latency=5, in_flight=100, bytes_per_cycle=64), sector_bytes=128)
    assert list(run.departure) == list(range(0, 20, 2))


def test_a_store_reads_shared_memory_as_it_leaves():
    run = _run(6, Memory(latency=5, in_flight=100), wavefronts_=3, operation=Operation.STORE)
    assert list(run.departure) == list(range(0, 18, 3)) and list(run.written) == list(run.departure)


def test_a_beat_with_no_request_writes_its_fill_at_once_in_order_of_readiness():
    """Beat 0 requests (back at cycle 20), beat 1 is all fill: it is written at cycle 2,
    before beat 0 (cycle 21)."""
    run = simulate(np.array([0, 1]), np.array([1, 0]), np.array([128, 0]), np.array([1, 1]),
                   np.array([0, 0]), 256, Memory(latency=20, in_flight=8))
    assert list(run.written) == [21, 2]


def test_latency_spread_draws_reproducible_latencies_in_range():
    memory = Memory(latency=100, latency_spread=30, in_flight=10_000, seed=7)
    a, b = _run(500, memory), _run(500, memory)
    latencies = a.returned - a.issue
    assert (a.returned == b.returned).all()
    assert latencies.min() >= 70 and latencies.max() <= 130 and len(set(latencies.tolist())) > 30
    assert not (_run(500, Memory(latency=100, latency_spread=30, in_flight=10_000, seed=8)).returned == a.returned).all()


@pytest.mark.parametrize("field, value, code", [("latency", 0, ErrorCode.ENUM_RANGE), ("in_flight", -1, ErrorCode.ENUM_RANGE),
                                                ("latency", 1.5, ErrorCode.FIELD_TYPE),
                                                ("granule", 96, ErrorCode.ENUM_RANGE),
                                                # a 2 KiB granule's 64 sectors would set the masks' sign bit
                                                ("granule", 2048, ErrorCode.ENUM_RANGE),
                                                ("latency", (1 << 20) + 1, ErrorCode.ENUM_RANGE),
                                                ("consumer_reads", -1, ErrorCode.ENUM_RANGE),
                                                ("cluster_bytes_per_cycle", 0, ErrorCode.ENUM_RANGE)])
def test_a_bad_memory_parameter_is_refused_naming_it(field, value, code):
    with pytest.raises(TmaError, match=f"memory.{field}") as error:
        Memory(**{field: value})
    assert error.value.code == code


def test_the_memory_sees_the_unit_resume_a_beat_a_cycle_after_a_stall():
    """The memory side takes a held-back beat stream to resume at one beat a cycle: the
    timing model (checked against the RTL) must give, for any ready pattern, each beat
    the first ready cycle at or after its always-ready cycle and its predecessor's."""
    rng = np.random.default_rng(3)
    for name, lanes in (("gemm-deepgemm-fp8", 8), ("conv-resnet50-3x3", 2), ("gather-moe-rows", 1)):
        config = UnitConfig(lanes=lanes)
        images, _, fields = workload(name).stream(config)
        records = [records_of(images[f["slot"]], f, config) for f in fields]
        gaps = list(rng.integers(0, 3, len(records)))
        unit = dict(beat_queue=config.beat_queue, stages=back_end_stages(config),
                    request_interval=config.request_interval)
        free = predict(records, gaps, [1], **unit).beat_cycles
        ready = (rng.random(int(free[-1]) * 4 + 64) < 0.4).astype(int)
        ready[-1] = 1
        got = predict(records, gaps, list(ready), **unit).beat_cycles
        highs, previous, expected = np.flatnonzero(ready), -1, []
        for cycle in free:
            previous = int(highs[np.searchsorted(highs, max(int(cycle), previous + 1))])
            expected.append(previous)
        assert list(got) == expected, name


# ---- the exploration ----------------------------------------------------------------------

def test_little_s_law_predicts_the_steady_state_of_a_long_run():
    """GEMM at lanes 8: one 128-byte request a beat; with credits under the latency the
    run is credit-bound, within 2 % of Little's law."""
    rows = sweep(["gemm-cutlass-sm90"], [8], latencies=(400,), in_flight=(100, 200))
    for row in rows:
        assert row.bytes_per_cycle == pytest.approx(little(row.in_flight, 400, 128, 128), rel=0.02)
        assert row.requests_per_tile == 128 * 2 * 128 // 128      # A and B blocks: 256 rows of one line
        assert row.sector_efficiency == 1.0


def test_lanes_1_requests_each_sector_twice():
    """A beat of one 16-byte chunk asks for its 32-byte sector: half of every sector is
    used, and each is asked for by two beats."""
    beats = beats_of("gemm-cutlass-sm90", UnitConfig(lanes=1))
    assert beats.used_bytes * 2 == beats.sector_bytes.sum()
    assert (beats.requests == 1).all()


def test_in_flight_for_finds_the_least_credits():
    needed = in_flight_for("gemm-deepgemm-fp8", 8, 300, 0.9)
    beats = beats_of("gemm-deepgemm-fp8", UnitConfig(lanes=8))

    def bandwidth(credits):
        return beats.run(Memory(latency=300, in_flight=credits)).bytes_per_cycle()
    assert bandwidth(needed) >= 0.9 * 128 > bandwidth(needed - 1)
    # Little's law: at least 0.9 of a line a cycle held for 301 cycles
    assert needed >= 0.9 * 301


def test_explore_memory_writes_the_csv_and_plots(tmp_path, capsys):
    assert main(["explore", "--memory", "--workloads", "gather-moe-rows", "--lanes", "1,8", "--latency", "300,600",
                 "--in-flight", "64,700", "--bisect", "0.95", "-o", str(tmp_path)]) == 0
    rows = list(csv.DictReader(open(tmp_path / "explore-memory.csv")))
    assert len(rows) == 2 * 2 * 2
    assert {r["lanes"] for r in rows} == {"1", "8"}
    for name in ("explore-memory-bandwidth.png", "explore-memory-wavefronts.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG)
    assert "requests in flight reach 95% of the peak" in capsys.readouterr().out


@pytest.mark.parametrize("flags, message", [(["--latency", "0"], "memory.latency = 0"),
                                            (["--in-flight", "x"], "in_flight"),
                                            (["--granule", "100"], "memory.granule = 100"),
                                            (["--workloads", "nope"], "workloads = nope")])
def test_explore_memory_refuses_bad_flags_naming_them(flags, message, tmp_path, capsys):
    assert main(["explore", "--memory", "-o", str(tmp_path), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "explore-memory.csv").exists()


def _48_byte_rows():
    """An fp16 box of 64 rows of 24 values (48 bytes) at a 64-byte pitch: each row's
    bytes lie in two sectors, 48 of their 64 bytes used."""
    tm = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x1000_0000, (32, 64), (64,), (24, 64), (1, 1))
    return [(transactions(tm, Request(Operation.LOAD, (0, 0))), Operation.LOAD, 2)]


def test_a_coalescer_asks_for_each_row_s_sectors_once():
    """Without a coalescer a beat's requests are its own: at lanes 1 a row's three chunks
    ask for sectors 0, 0 and 1, 48 bytes of 96 (0.50). A coalescer window of two beats
    or more takes the second ask: every row's two sectors once, 48 of 64 bytes (0.75).
    A beat whose sectors were coalesced writes shared memory only after the requests it
    waits for return."""
    copies = _48_byte_rows()
    plain, merged = memory_beats(copies, 1, 128), memory_beats(copies, 1, 128, coalesce=2)
    assert plain.used_bytes == merged.used_bytes == 64 * 48
    assert plain.sector_bytes.sum() == 64 * 3 * SECTOR_BYTES
    assert merged.requests.sum() == 64 * 2 < plain.requests.sum() == 64 * 3
    assert merged.sector_bytes.sum() == 64 * 2 * SECTOR_BYTES
    waiting = [i for i, waits in enumerate(merged.merged_into) if waits]
    assert waiting
    run = simulate(np.arange(len(merged.requests)), merged.requests, merged.sector_bytes, merged.wavefronts,
                   merged.operations, merged.smem_bytes, Memory(latency=50, coalesce=2), merged.merged_into)
    returned = run.returned
    for i in waiting:
        assert run.written[i] > max(int(returned[k]) for k in merged.merged_into[i])


@pytest.mark.parametrize("lanes", [4, 8])
def test_a_beat_holding_a_whole_row_asks_for_its_sectors_once(lanes):
    """At lanes 4 and 8 a beat holds one whole 48-byte row (a beat never holds two rows'
    chunks): its requests ask for each of the row's two sectors once, and a coalescer
    has nothing left to take."""
    copies = _48_byte_rows()
    plain, merged = memory_beats(copies, lanes, 128), memory_beats(copies, lanes, 128, coalesce=2)
    assert len(plain.requests) == 64
    assert plain.sector_bytes.sum() == merged.sector_bytes.sum() == 64 * 2 * SECTOR_BYTES
    assert not any(merged.merged_into)


# ---- the SM around the unit: the consumer, multicast, the L2 trace -----------------------

@pytest.mark.parametrize("mode", [Swizzle.NONE, Swizzle.B32, Swizzle.B64, Swizzle.B128, Swizzle.B128_ATOM_64B])
def test_matrix_reads_count_the_banks_of_8_rows_at_one_column(mode):
    """Each 8-row read of the image, counted from the transactions, is banks.conflicts'
    column read of the same copy, counted from the traversal's addresses."""
    from tma_unit.model.banks import conflicts
    from tma_unit.model.memory import matrix_read_wavefronts
    width = 128 if mode in (Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_64B) else mode.span
    tm = _fp16((4096, 4096), (width // 2, 64), swizzle_mode=mode)
    req = Request(Operation.LOAD, (0, 0), smem_address=0)
    reads = matrix_read_wavefronts(transactions(tm, req))
    assert len(reads) == 64 // 8 * width // 16
    assert reads.mean() == conflicts(tm, req)["column"]


def test_a_box_of_12_rows_ends_each_column_with_a_read_of_4():
    """Without a swizzle the rows of a 128-byte-row box at one column share 4 banks: the
    first read of each of the 8 columns holds 8 rows (8 wavefronts), the second the 4
    rows left (4), in the copy's order: rows 0-7 column by column, then rows 8-11."""
    from tma_unit.model.memory import matrix_read_wavefronts
    tm = _fp16((4096, 4096), (64, 12))
    reads = matrix_read_wavefronts(transactions(tm, Request(Operation.LOAD, (0, 0), smem_address=0)))
    assert reads.tolist() == [8] * 8 + [4] * 8


def _one_box(mode=Swizzle.NONE, multicast_mask=0, rows=64):
    """An fp16 load of ``rows`` rows of 128 bytes, as memory_beats' copies."""
    tm = _fp16((4096, 4096), (64, rows), swizzle_mode=mode)
    req = Request(Operation.LOAD, (0, 0), smem_address=0, multicast_mask=multicast_mask)
    return [(transactions(tm, req), Operation.LOAD, 2, bin(multicast_mask).count("1"))]


def _after(beats, memory):
    return simulate(np.arange(len(beats.requests)), beats.requests, beats.sector_bytes, beats.wavefronts,
                    beats.operations, beats.smem_bytes, memory, beats.merged_into, **beats.after_arrays())


@pytest.mark.parametrize("reads", [1, 3])
def test_a_consumer_reads_the_box_on_the_port_after_its_last_beat(reads):
    """Without a swizzle, the 8 rows of a 128-byte-row box at one 16-byte column lie in
    the same 4 banks: each of the 64 reads (8 row groups x 8 columns) takes 8 wavefronts,
    512 in all, after the last beat's write; with the 128-byte swizzle each takes 1."""
    for mode, per_read in ((Swizzle.NONE, 8), (Swizzle.B128, 1)):
        beats = memory_beats(_one_box(mode), 8, 128)
        alone, read = (_after(beats, Memory(latency=1, consumer_reads=n)) for n in (0, reads))
        assert read.cycles - alone.cycles == reads * 64 * per_read
        assert read.bytes_per_cycle() < alone.bytes_per_cycle()


def test_the_consumer_waits_for_the_last_beat_written_not_the_last_beat_issued():
    """With a latency spread the beats' data comes back out of order: the consumer's 512
    wavefronts start only once every beat of the box is written, so the run ends 512
    cycles after the last write of a beat."""
    beats = memory_beats(_one_box(), 8, 128)
    run = _after(beats, Memory(latency=300, latency_spread=200, seed=5, consumer_reads=1))
    order = np.argsort(run.written)
    assert order[-1] != len(order) - 1                   # the last beat issued is not the last written
    assert run.cycles == int(run.written.max()) + 1 + 64 * 8


def test_a_multicast_lands_each_ctas_share_in_this_sm_and_crosses_the_cluster():
    """A load multicast to 2 CTAs asks the L2 for its sectors once; the SM's shared memory
    takes both CTAs' shares (twice the bytes, twice the port); the cluster carries the
    8 KiB to the other CTA at 16 bytes a cycle, 512 cycles from the first beat's data."""
    plain, shared = memory_beats(_one_box(), 8, 128), memory_beats(_one_box(multicast_mask=0b101), 8, 128)
    assert shared.sector_bytes.tolist() == plain.sector_bytes.tolist()
    assert shared.smem_bytes == 2 * plain.smem_bytes == 2 * 8192
    assert shared.multicast_ctas.tolist() == [2] * 64 and plain.multicast_ctas.tolist() == [1] * 64
    assert shared.beat_bytes.tolist() == plain.beat_bytes.tolist() == [128] * 64
    alone, both = (_after(beats, Memory(latency=1)) for beats in (plain, shared))
    # a beat takes 1 wavefront alone, 2 with the other CTA's share
    assert both.cycles - int(both.written[0]) == 2 * (alone.cycles - int(alone.written[0]))
    limited = _after(shared, Memory(latency=1, cluster_bytes_per_cycle=16))
    first_data = int(limited.departure[0]) + 1 + 1          # its requests return after 1 cycle, written the next
    assert limited.cycles == first_data + 8192 // 16


def test_a_multicast_gemm_asks_the_l2_for_less_per_byte_landed():
    """CUTLASS's tile with B shared by a cluster of c CTAs: per k-step A's 16 KiB and 1/c of
    B's 16 KiB are asked for, and 16 + 16 KiB land: (16 + 16 / c) / 32 of the bytes."""
    from tma_unit.workloads import gemm
    for cluster in (1, 2, 4):
        work = gemm("g", "", DataType.FLOAT16, 4096, 4096, 4096, 128, 128, 64, 4, multicast=cluster)
        beats = beats_of(work, UnitConfig(lanes=8))
        assert beats.sector_bytes.sum() / beats.smem_bytes == (16 + 16 / cluster) / 32
    with pytest.raises(TmaError, match="multicast = 3"):
        gemm("g", "", DataType.FLOAT16, 4096, 4096, 4096, 128, 128, 64, 4, multicast=3)


def _trace(lines):
    """A trace's lines as DRAMsim3 reads them: a hex address, an operation, a decimal cycle."""
    return [(int(a, 16), op, int(cycle)) for a, op, cycle in (line.split() for line in lines)]


def test_the_l2_trace_reads_back_as_dramsim3_parses_it(tmp_path, capsys):
    """`explore --memory --l2-trace` writes a line per requested sector. The gather asks
    for 128 token rows of 128 bytes (4 sectors each) in 8 column blocks: 4,096 sectors,
    each once, sector-aligned, the first at the cycle the first beat left (with 64
    credits and 4 requests a beat, 16 beats leave before the first credit comes back)."""
    assert main(["explore", "--memory", "--workloads", "gather-moe-rows", "--lanes", "8", "--latency", "300",
                 "--in-flight", "64", "--l2-trace", "-o", str(tmp_path)]) == 0
    parsed = _trace((tmp_path / "l2-gather-moe-rows-lanes8.trace").read_text().splitlines())
    assert len(parsed) == len({address for address, _, _ in parsed}) == 128 * 8 * 4
    assert {op for _, op, _ in parsed} == {"READ"}
    assert all(address % SECTOR_BYTES == 0 for address, _, _ in parsed)
    beats = beats_of("gather-moe-rows", UnitConfig(lanes=8))
    run = beats.run(Memory(latency=300, in_flight=64))
    cycles = [cycle for _, _, cycle in parsed]
    assert cycles[0] == run.departure[0] and cycles == sorted(cycles)
    assert cycles[16 * 4 * 4] >= cycles[0] + 300       # the 17th beat waits for a credit


def test_the_l2_trace_writes_a_store_s_sectors_and_leaves_out_what_the_coalescer_took():
    """A store of 16 rows of 128 bytes writes 4 sectors a row; the 48-byte rows' box of
    the coalescer test asks for each row's 2 sectors once with a window of 2 beats."""
    tm = _fp16((4096, 4096), (64, 16))
    store = [(transactions(tm, Request(Operation.STORE, (0, 0), smem_address=0)), Operation.STORE, 2)]
    for copies, memory, count, kind in ((store, Memory(latency=10), 16 * 4, "WRITE"),
                                        (_48_byte_rows(), Memory(latency=10, coalesce=2), 64 * 2, "READ")):
        beats = memory_beats(copies, 8, 128, memory.coalesce)
        run = _after(beats, memory)
        parsed = _trace(beats.issued.trace_lines(run.issue))
        assert len(parsed) == count and {op for _, op, _ in parsed} == {kind}


def test_a_multicast_s_peak_counts_what_lands():
    """From DRAM at 132 SMs' fair share (17 B/cycle each) a cluster of 4 sharing B lands
    more than the SM's share: the peak scales by the bytes that land per byte asked
    (16 + 16) / (16 + 4), and the run stays under it."""
    from tma_unit.memory_side import peak
    from tma_unit.workloads import gemm
    work = gemm("g", "", DataType.FLOAT16, 4096, 4096, 4096, 128, 128, 64, 8, multicast=4)
    beats = beats_of(work, UnitConfig(lanes=8))
    assert beats.landing == 32 / 20
    memory = Memory(latency=800, in_flight=4096, sms=132, l2_bytes_per_cycle=99 * 132,
                    hbm_bytes_per_cycle=17 * 132, hit_rate=0.0)
    top = peak(8, memory, beats.landing)
    assert top == pytest.approx(17 * 32 / 20)
    assert 17 < beats.run(memory).bytes_per_cycle() <= top


def test_explore_memory_with_a_consumer_writes_what_each_swizzle_buys(tmp_path):
    import json
    assert main(["explore", "--memory", "--workloads", "gather-moe-rows", "--lanes", "8", "--latency", "300",
                 "--in-flight", "64", "--consumer-reads", "1", "-o", str(tmp_path)]) == 0
    consumer = json.loads((tmp_path / "explore-memory.json").read_text())["consumer"]
    row = {(r["swizzle"], r["width"]): r for r in consumer}
    assert row["NONE", 128]["read_wavefronts_per_read"] == 8 and row["B128", 128]["read_wavefronts_per_read"] == 1
    assert row["B128", 128]["bytes_per_cycle_with_consumer"] > 3 * row["NONE", 128]["bytes_per_cycle_with_consumer"]
    assert all(r["bytes_per_cycle_with_consumer"] < r["bytes_per_cycle"] for r in consumer)
    assert (tmp_path / "explore-memory-consumer.png").read_bytes().startswith(PNG)
