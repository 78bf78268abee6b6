"""Workload files, the memory flags, the bisection against the lanes' own peak and the
JSON output of ``tma-unit explore`` (issue 46, item 5)."""

import csv
import json
import re
from fractions import Fraction

import numpy as np
import pytest

from tma_unit.cli import main
from tma_unit.memory_side import beats_of, in_flight_for, peak
from tma_unit.model.config import UnitConfig
from tma_unit.model.errors import TmaError
from tma_unit.model.memory import Memory, MemoryGate, simulate
from tma_unit.model.types import Operation
from tma_unit.workloads import WORKLOADS, attention, from_json, gemm
from tma_unit.model import DataType

#: A GEMM and an attention entry from the generators, and one explicit copy: a 64 x 32
#: fp16 box (128-byte rows, 128B swizzle) of a 256 x 256 matrix.
FILE = {"workloads": [
    {"name": "gemm-small", "gemm": {"m": 1024, "n": 1024, "k": 512, "tile": [128, 128, 64], "k_steps": 4}},
    {"name": "attn-small", "attention": {"seq": 512, "heads": 2, "head_dim": 64, "tile": [64, 128]}},
    {"name": "one-box", "tiles": 1,
     "tensor_maps": [{"kind": "TILED", "dtype": "FLOAT16", "global_address": 4096, "global_dims": [256, 256],
                      "global_strides": [512], "box_dims": [64, 32], "element_strides": [1, 1], "swizzle": "B128"}],
     "requests": [{"map": 0, "operation": "LOAD", "coordinates": [0, 0], "smem_address": 0}]}]}


def _file(tmp_path, data=FILE):
    path = tmp_path / "workloads.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_the_generators_make_the_built_ins():
    assert gemm("gemm-cutlass-sm90", WORKLOADS["gemm-cutlass-sm90"].description, DataType.FLOAT16,
                4096, 4096, 4096, 128, 128, 64, 64) == WORKLOADS["gemm-cutlass-sm90"]
    assert attention("attention-fa3", WORKLOADS["attention-fa3"].description, 8192, 16, 128, 128, 176,
                     head=5) == WORKLOADS["attention-fa3"]


def test_a_file_s_workloads_are_what_their_entries_say():
    small, attn, box = from_json(FILE)
    # 4 k-steps of an A and a B block of 128 rows x 64 fp16: 8 loads, a tile each step
    assert (len(small.requests), small.tiles) == (8, 4)
    # head_dim 64 bf16 is one 128-byte swizzle atom: Q once, then K and V per key block;
    # seq 512 in 128-row blocks is 4 blocks, a tile each, and Q's
    assert (len(attn.requests), attn.tiles) == (1 + 2 * 4, 5)
    assert box.maps[0].box_dims == (64, 32) and box.requests[0][1].coordinates == (0, 0)


def test_a_file_s_gemm_multicasts_its_b_block_across_the_cluster():
    """``multicast: 2``: each k-step loads all of A and half of B's 128 rows, that half
    multicast to both CTAs of the cluster (mask 0b11)."""
    entry = {"name": "gemm-pair", "gemm": {"m": 1024, "n": 1024, "k": 512, "tile": [128, 128, 64], "k_steps": 2,
                                           "multicast": 2}}
    (pair,) = from_json({"workloads": [entry]})
    assert pair.maps[1].box_dims == (64, 64)
    assert [req.multicast_mask for _, req in pair.requests] == [0, 0b11] * 2


def test_a_file_workload_is_swept_from_the_cli_and_its_json_read_back(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["explore", "--workloads-file", _file(tmp_path), "--lanes", "1,2", "--no-synthesis", "-q",
                 "-o", str(out)]) == 0
    report = json.loads((out / "explore.json").read_text())
    rows = list(csv.DictReader(open(out / "explore.csv")))
    assert [r["workload"] for r in report["rows"]] == [r["workload"] for r in rows] == \
        ["gemm-small", "attn-small", "one-box"] * 2
    assert report["parameters"]["workloads"] == ["gemm-small", "attn-small", "one-box"]
    for j, r in zip(report["rows"], rows):
        assert (j["lanes"], j["bytes"], j["cycles"]) == (int(r["lanes"]), int(r["bytes"]), int(r["cycles"]))
    one_box = [r for r in report["rows"] if r["workload"] == "one-box"]
    assert [r["bytes"] for r in one_box] == [64 * 2 * 32] * 2


def test_explore_memory_sweeps_a_file_with_every_memory_flag_and_writes_json(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["explore", "--memory", "--workloads-file", _file(tmp_path), "--workloads", "one-box",
                 "--lanes", "2", "--latency", "50", "--in-flight", "8,64", "--granule", "64", "--latency-spread", "5",
                 "--seed", "3", "--bytes-per-cycle", "20.5", "--carry", "--bisect", "0.5", "-q",
                 "-o", str(out)]) == 0
    report = json.loads((out / "explore-memory.json").read_text())
    assert report["parameters"] == {"workloads": ["one-box"], "workloads_file": _file(tmp_path), "lanes": [2],
                                    "latency": [50], "in_flight": [8, 64], "granule": 64, "latency_spread": 5,
                                    "seed": 3, "bytes_per_cycle": 20.5, "carry": True}
    assert [(r["in_flight"], r["path_bytes_per_cycle"], r["carry"]) for r in report["rows"]] == \
        [(8, 20.5, True), (64, 20.5, True)]
    rows = list(csv.DictReader(open(out / "explore-memory.csv")))
    assert [int(r["cycles"]) for r in rows] == [r["cycles"] for r in report["rows"]]
    (bisect,) = report["bisection"]
    assert (bisect["lanes"], bisect["latency"], bisect["peak_bytes_per_cycle"]) == (2, 50, 20.5)
    assert bisect["in_flight"] == in_flight_for(from_json(FILE)[2], 2, 50, 0.5, granule=64, latency_spread=5,
                                                seed=3, bytes_per_cycle=20.5, carry=True)


def _loads(beats, sector_bytes, memory):
    """``beats`` loads of one request of ``sector_bytes`` each, all ready at cycle 0 on."""
    return simulate(np.arange(beats), np.ones(beats, int), np.full(beats, sector_bytes), np.ones(beats, int),
                    np.full(beats, int(Operation.LOAD)), 128 * beats, memory)


def test_a_fractional_request_path_moves_its_bytes_at_its_rate():
    """Beats of 128 sector bytes at 36 bytes a cycle. Whole cycles a beat: ceil(128 / 36)
    = 4 cycles each, the rate of 32 B/cycle. With carry the path finishes beat k's bytes
    at 128 (k + 1) / 36 cycles and beat k + 1 leaves in that cycle: floor(128 (k + 1) / 36)
    = 3, 7, 10, 14, 17, 21, 24, 28 (a 36.5-byte path: floor(256 (k + 1) / 73), the same
    here). Where the rate divides every beat's bytes the two rules agree."""
    whole = _loads(9, 128, Memory(latency=5, in_flight=100, bytes_per_cycle=36))
    assert whole.departure.tolist() == [4 * k for k in range(9)]
    for rate in (36, 36.5):
        carried = _loads(9, 128, Memory(latency=5, in_flight=100, bytes_per_cycle=rate, carry=True))
        assert carried.departure.tolist() == [0] + [int(128 * k / rate) for k in range(1, 9)]
        assert carried.departure.tolist() == [0, 3, 7, 10, 14, 17, 21, 24, 28]
    assert (_loads(9, 128, Memory(latency=5, in_flight=100, bytes_per_cycle=64, carry=True)).departure.tolist()
            == _loads(9, 128, Memory(latency=5, in_flight=100, bytes_per_cycle=64)).departure.tolist()
            == list(range(0, 18, 2)))


def test_the_compiled_gate_gets_the_path_in_parts_of_a_cycle():
    """With carry the run loop's gate counts the request path in units of 1/p cycle for a
    rate of p/q bytes a cycle (S sector bytes: S * q units); without, in whole cycles.
    The RTL behind such a gate is checked against the timing model in
    tests/test_timing.py (the ``carry`` memory)."""
    def gate(rate, sector_bytes, carry=True):
        return MemoryGate([1, 1], [sector_bytes] * 2, [1, 1], [int(Operation.LOAD)] * 2,
                          Memory(bytes_per_cycle=rate, carry=carry)).arrays()
    carried = gate(36.5, 128)
    assert (carried["path"].tolist(), carried["units_per_cycle"]) == ([256, 256], 73)   # 36.5 = 73/2
    assert (gate(36, 128, carry=False)["path"].tolist(), gate(36, 128, carry=False)["units_per_cycle"]) == ([], 0)
    assert gate(36, 128, carry=False)["hold"].tolist() == [4, 4]
    with pytest.raises(TmaError, match=r"memory.bytes_per_cycle = 36.1234567 has a denominator past 1000000"):
        Memory(bytes_per_cycle=36.1234567, carry=True)


def test_a_fraction_of_a_rate_needs_carry_and_a_whole_float_is_an_integer():
    with pytest.raises(TmaError, match="memory.bytes_per_cycle = 36.5 is not a whole number"):
        Memory(bytes_per_cycle=36.5)
    assert Memory(bytes_per_cycle=36.0).bytes_per_cycle == 36 and isinstance(Memory(bytes_per_cycle=36.0).bytes_per_cycle, int)
    with pytest.raises(TmaError, match="memory.bytes_per_cycle = 0.5 is below 1"):
        Memory(bytes_per_cycle=0.5, carry=True)


def test_the_bisection_aims_at_the_lanes_own_peak():
    """Lanes 2 move 32 bytes a cycle at most; behind a 20-byte path, 20: the bisection's
    answer reaches 90 % of that, one credit fewer does not."""
    memory = dict(bytes_per_cycle=20, carry=True)
    assert peak(2, Memory(**memory)) == 20 and peak(2, Memory()) == 32 and peak(8, Memory()) == 128
    needed = in_flight_for("gemm-cutlass-sm90", 2, 100, 0.9, **memory)
    beats = beats_of("gemm-cutlass-sm90", UnitConfig(lanes=2))

    def bandwidth(credits):
        return beats.run(Memory(latency=100, in_flight=credits, **memory)).bytes_per_cycle()
    assert bandwidth(needed) >= 0.9 * 20 > bandwidth(needed - 1)
    # Little's law: 18 bytes a cycle of 32-byte requests held 101 cycles need 18 * 101 / 32
    assert needed >= 18 * 101 / 32


@pytest.mark.parametrize("data, message", [
    ({"workloads": [{"name": "g", "gemm": {"m": 1024, "n": 1024, "k": 512, "tile": [128, 128, 0]}}]},
     "ENUM_RANGE: workloads[0].gemm.tile[2] = 0 is below 1"),
    ({"workloads": [{"name": "g", "gemm": {"m": 1024, "n": 1024, "k": 512, "tile": [128, 128, 64],
                                           "dtype": "FP99"}}]},
     "ENUM_RANGE: workloads[0].gemm.dtype = 'FP99' is not one of UINT8"),
    ({"workloads": [{"name": "g", "gemm": {"m": 1024, "n": 1024, "k": 512, "tile": [128, 128, 512]}}]},
     "BOX_RANGE: workloads[0].gemm.box_dims[0] = 512 is outside 1..256"),
    ({"workloads": [{"name": "a", "attention": {"seq": 64, "heads": 1, "head_dim": 100, "tile": [64, 64]}}]},
     "ENUM_RANGE: workloads[0].attention.head_dim = 100 is not a multiple of the 64 columns a B128 box row holds"),
    ({"workloads": [{"name": "gemm-cutlass-sm90", "gemm": {"m": 128, "n": 128, "k": 64, "tile": [128, 128, 64]}}]},
     "ENUM_RANGE: workloads[0].name = 'gemm-cutlass-sm90' is already a workload's name"),
    ({"workloads": [{"name": "q", "gemm": {"m": 1024}}]}, "FIELD_TYPE: workloads[0].gemm.n = (not given) is a "
                                                          "required gemm field"),
    ({"workloads": [{"name": "q", "gemm": {"m": 1.5, "n": 1, "k": 1, "tile": [1, 1, 1]}}]},
     "FIELD_TYPE: workloads[0].gemm.m = 1.5 is not a JSON integer"),
    ({"workloads": [dict(FILE["workloads"][2], requests=[{"map": 1, "operation": "LOAD", "coordinates": [0, 0]}])]},
     "ENUM_RANGE: workloads[0].requests[0].map = 1 is not a tensor map's index, 0..0"),
    ({"workloads": [{"name": "both", "gemm": {}, "attention": {}}]},
     "FIELD_TYPE: workloads[0] = both has not exactly one of gemm, attention or tensor_maps"),
    ({"work": []}, "ENUM_RANGE: work = [] is not a workload file field (workloads)"),
    ({"workloads": [{"name": "q", "gemm": {"m": 256, "n": 256, "k": 64, "tile": [128, 128, 64], "multicast": 3}}]},
     "ENUM_RANGE: workloads[0].gemm.multicast = 3 is not a cluster of 1, 2, 4, 8 or 16 CTAs")])
def test_a_malformed_workload_file_is_refused_by_name(data, message, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["explore", "--workloads-file", _file(tmp_path, data), "--no-synthesis", "-q", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("flags, message", [
    (["--bytes-per-cycle", "36.5"], "memory.bytes_per_cycle = 36.5 is not a whole number"),
    (["--bytes-per-cycle", "3e1"], "bytes_per_cycle = '3e1' is not a decimal number"),
    (["--bisect", "1.5"], "bisect = 1.5 is outside (0, 1]"),
    (["--cluster-bytes-per-cycle", "0.5"], "memory.cluster_bytes_per_cycle = 0.5 is not a number from 1"),
    (["--consumer-reads", "x"], "consumer_reads = 'x'")])
def test_explore_memory_refuses_bad_memory_flags_naming_them(flags, message, tmp_path, capsys):
    assert main(["explore", "--memory", "-q", "-o", str(tmp_path / "out"), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_sms_share_the_l2_and_the_hbm_and_misses_take_their_own_latency():
    """Four SMs sharing a 50 B/cycle L2 and a 30 B/cycle HBM: a beat that hits moves at
    50 / 4 = 12.5 B/cycle and returns after the latency, one that misses at 30 / 4 = 7.5
    B/cycle (the least of the path, the L2's share and the HBM's) after the miss latency.
    In units of 1/75 cycle (75 = lcm(25, 15)), a byte costs 6 units on a hit and 10 on a
    miss. Which beats hit is drawn from the seed, at the hit rate."""
    memory = Memory(latency=25, in_flight=64, sms=4, l2_bytes_per_cycle=50, hbm_bytes_per_cycle=30,
                    hit_rate=0.5, miss_latency=60, seed=3)
    assert memory.rates() == (Fraction(25, 2), Fraction(15, 2)) and memory.carries
    gate = MemoryGate([1] * 64, [32] * 64, [1] * 64, [int(Operation.LOAD)] * 64, memory)
    hits = gate.hits
    assert 16 < hits.sum() < 48                                  # about half, from the seed
    assert gate.units_per_cycle == 75
    assert gate.path_units == [32 * (6 if hit else 10) for hit in hits]
    assert gate.latencies.tolist() == [25 if hit else 60 for hit in hits]
    again = MemoryGate([1] * 64, [32] * 64, [1] * 64, [int(Operation.LOAD)] * 64, memory)
    assert again.hits.tolist() == hits.tolist()                   # reproducible
    # the peak: hits and misses in proportion, 1 / (0.5 / 12.5 + 0.5 / 7.5) = 9.375 B/cycle
    assert peak(8, memory) == pytest.approx(9.375) and peak(8, Memory(sms=132, l2_bytes_per_cycle=99 * 132)) == 99
    # one SM alone is held by its own path only
    assert Memory(sms=1, l2_bytes_per_cycle=99 * 132).rates() == (128, 128)


@pytest.mark.parametrize("field, value, message", [
    ("sms", 0, "memory.sms = 0 is not a whole number from 1"),
    ("hit_rate", 1.5, "memory.hit_rate = 1.5 is not from 0 to 1"),
    ("l2_bytes_per_cycle", 0.5, "memory.l2_bytes_per_cycle = 0.5 is not a number from 1"),
    ("miss_latency", 0, "memory.miss_latency = 0 is not a whole number of cycles above the spread, 0"),
])
def test_a_bad_gpu_parameter_is_refused_naming_it(field, value, message):
    with pytest.raises(TmaError, match=re.escape(message)):
        Memory(**{field: value})


def test_explore_memory_with_the_gpu_around_the_sm(tmp_path):
    """The sweep with 132 SMs sharing H200-like L2 and HBM figures (docs/memory.md): the
    flags reach the rows, and a lanes-8 unit moves no more than its share."""
    out = tmp_path / "out"
    assert main(["explore", "--memory", "--workloads", "gemm-cutlass-sm90", "--lanes", "8", "--latency", "600",
                 "--in-flight", "512", "--sms", "132", "--l2-bytes-per-cycle", str(99 * 132),
                 "--hbm-bytes-per-cycle", str(17 * 132), "--hit-rate", "0.5", "--miss-latency", "1100", "-q",
                 "-o", str(out)]) == 0
    report = json.loads((out / "explore-memory.json").read_text())
    assert {k: report["parameters"][k] for k in ("sms", "l2_bytes_per_cycle", "hbm_bytes_per_cycle", "hit_rate",
                                                   "miss_latency")} == \
        {"sms": 132, "l2_bytes_per_cycle": 99 * 132, "hbm_bytes_per_cycle": 17 * 132, "hit_rate": 0.5,
         "miss_latency": 1100}
    (row,) = report["rows"]
    share = 1 / (0.5 / 99 + 0.5 / 17)
    assert (row["sms"], row["hit_rate"], row["carry"]) == (132, 0.5, True)
    assert row["bytes_per_cycle"] <= share and row["fraction_of_peak"] == pytest.approx(row["bytes_per_cycle"] / share)
