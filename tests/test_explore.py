"""Architecture exploration: the workload suite, the sweep, its CSV and plots (issue 8)."""

import csv
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import pytest

from tma_unit.cli import main
from tma_unit.explore import Point, evaluate, explore, pareto_front, plot, write_csv, SM_BYTES_PER_CYCLE
from tma_unit.model.config import UnitConfig
from tma_unit.model.errors import ErrorCode
from tma_unit.model.timing import BACK_END_STAGES, COMPLETION_LATENCY, FRONT_END_STAGES
from tma_unit.model.unit import check
from tma_unit.workloads import WORKLOADS, workload

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_every_workload_request_is_legal(name):
    config = UnitConfig(lanes=1, slots=8)
    images, valid, requests = WORKLOADS[name].stream(config)
    assert valid == (1 << len(images)) - 1
    for fields in requests:
        status, moved = check(images[fields["slot"]], fields, config)
        assert status == ErrorCode.OK, (name, fields)
        assert moved > 0


def test_a_workload_needing_more_slots_than_the_unit_has_is_refused():
    with pytest.raises(ValueError, match="needs 3 descriptor slots; config.slots = 2"):
        workload("attention-fa3").stream(UnitConfig(slots=2))
    with pytest.raises(KeyError, match="no workload 'nope'"):
        workload("nope")


@pytest.mark.parametrize("lanes", [1, 2, 8])
def test_back_to_back_gemm_tiles_run_at_the_lane_rate(lanes):
    """Derived from the pipeline's structure (docs/architecture.md): requests back to back
    with rows of whole beats (the GEMM's 128 bytes) keep one beat a cycle: the first beat
    leaves after the front end's registers, the walker's job load and the back end's
    steps, the last beats - 1
    cycles later, its completion COMPLETION_LATENCY cycles after that, and the run ends
    a cycle after."""
    rows = evaluate(Point(lanes, 8), ["gemm-cutlass-sm90"], synthesis="none")
    (row,) = rows
    beats = row.bytes // (16 * lanes)
    assert row.bytes == 64 * 2 * 128 * 128          # 64 k-steps of two 128 x 64 fp16 blocks
    first = FRONT_END_STAGES[Point(lanes, 8).request_interval] + 1 + BACK_END_STAGES
    assert row.cycles == (first + beats - 1) + COMPLETION_LATENCY + 1
    assert row.bytes_per_cycle == round(row.bytes / row.cycles, 3)
    assert row.fraction_of_sm == round(row.bytes / row.cycles / SM_BYTES_PER_CYCLE, 4)
    assert row.luts is None and row.fmax_mhz is None


def test_a_unit_built_without_a_workload_s_modes_or_swizzles_leaves_it_out():
    """gather-moe-rows uses gather4, the convolution im2col, the GEMMs the 128B swizzle
    (sm90's): a tiled unit with sm90 swizzles serves the GEMMs and attention alone, at the
    full unit's rate."""
    tiled = evaluate(Point(1, 8, modes="tiled", swizzles="sm90"), list(WORKLOADS), synthesis="none")
    full = evaluate(Point(1, 8), list(WORKLOADS), synthesis="none")
    assert {r.workload for r in tiled} == {"gemm-cutlass-sm90", "gemm-deepgemm-fp8", "attention-fa3"}
    assert {r.workload for r in full} == set(WORKLOADS)
    by_name = {r.workload: r for r in full}
    for row in tiled:
        assert (row.modes, row.swizzles) == ("tiled", "sm90")
        assert (row.bytes, row.cycles) == (by_name[row.workload].bytes, by_name[row.workload].cycles)


def test_pareto_front_keeps_the_points_no_smaller_one_beats():
    points = [(10, 1.0, "a"), (20, 0.5, "b"), (20, 3.0, "c"), (15, 2.0, "d"), (30, 3.0, "e"), (40, 4.0, "f")]
    assert pareto_front(points) == [(10, 1.0, "a"), (15, 2.0, "d"), (20, 3.0, "c"), (40, 4.0, "f")]


def test_backpressure_lowers_the_rate():
    full, = evaluate(Point(2, 8), ["gemm-deepgemm-fp8"], synthesis="none")
    half, = evaluate(Point(2, 8), ["gemm-deepgemm-fp8"], ready_probability=0.5, synthesis="none")
    assert half.bytes == full.bytes
    assert 0.4 < half.bytes_per_cycle / full.bytes_per_cycle < 0.6


def test_a_deeper_beat_queue_pays_only_when_requests_and_ready_both_come_in_bursts():
    """Small gather4 requests (gather-moe-rows) at lanes 8 against a beat stream stalled
    256 cycles in every 512: offered back to back, every depth keeps the stream busy in
    each ready cycle (the front end's registers hold requests enough), so the depths give
    the same cycles; offered 16 idle cycles apart, the unit takes requests during a stall
    only while the queue has room, so the deeper queue moves more bytes per cycle
    (tests/test_timing.py derives the cycles each entry saves)."""
    def rate(queue, gap):
        row, = evaluate(Point(8, 8, beat_queue=queue), ["gather-moe-rows"], synthesis="none",
                        ready_bursts=(256, 256), request_gap=gap)
        assert row.beat_queue == queue
        return row.bytes_per_cycle

    assert rate(9, 0) == rate(16, 0) == rate(64, 0)
    assert rate(9, 16) < rate(16, 16) < rate(64, 16)


def test_any_executor_runs_the_sweep(tmp_path):
    points = [Point(1, 4), Point(4, 8)]
    with ThreadPoolExecutor(2) as executor:
        threaded = explore(points, ["gather-moe-rows", "attention-fa3"], executor=executor, progress=False,
                           synthesis="none")
    serial = [row for point in points for row in evaluate(point, ["gather-moe-rows", "attention-fa3"],
                                                          synthesis="none")]
    assert threaded == serial
    write_csv(threaded, tmp_path / "explore.csv")
    with open(tmp_path / "explore.csv") as f:
        table = list(csv.DictReader(f))
    assert [(int(r["lanes"]), r["workload"]) for r in table] == [(r.lanes, r.workload) for r in serial]
    for picture in plot(threaded, tmp_path):
        assert picture.read_bytes().startswith(PNG)


def test_explore_command_writes_csv_and_plots(tmp_path, capsys):
    assert main(["explore", "--lanes", "1,8", "--no-synthesis", "--quiet", "--workloads", "gemm-cutlass-sm90",
                 "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "gemm-cutlass-sm90" in out and "explore.csv" in out
    assert (tmp_path / "bandwidth-per-workload.png").read_bytes().startswith(PNG)


def test_explore_command_names_a_bad_configuration(capsys):
    assert main(["explore", "--lanes", "3", "--no-synthesis", "--quiet"]) == 2
    assert "config.lanes = 3" in capsys.readouterr().err


def test_place_lanes_limits_place_and_route_to_those_lane_counts():
    """A sweep asked to place only lanes 1 sends lanes 8 to synthesis alone (nextpnr on
    it takes hours); nothing runs: the executor records what it is asked."""
    asked = {}

    class Recording(Executor):
        def submit(self, function, point, workloads, **options):
            asked[point.lanes] = options["synthesis"]
            future = Future()
            future.set_result([])
            return future

    assert explore([Point(1, 8), Point(8, 8)], ["gather-moe-rows"], executor=Recording(), progress=False,
                   synthesis="place", place_lanes={1}) == []
    assert asked == {1: "place", 8: "synth"}
    explore([Point(1, 8), Point(8, 8)], ["gather-moe-rows"], executor=Recording(), progress=False, synthesis="place")
    assert asked == {1: "place", 8: "place"}
