"""The memory model set against what an H200 measured (docs/memory.md, "Measured on an
H200"; docs/h200-tma-timing.json): for each measured figure, the model's value for the
same copy, or the parameter the figure sets. The memory's latency is fitted once, on the
128-byte box (from L2 and from DRAM); the other box sizes and the streams are then the
model's prediction: the unit's front end and beats, the request path, the credits and
the writes.

Run: python bench/calibration.py
"""

import json
from pathlib import Path

from tma_unit.memory_side import beats_of
from tma_unit.model import DataType, Swizzle
from tma_unit.model.config import UnitConfig
from tma_unit.model.memory import Memory
from tma_unit.workloads import Workload, load, tiled

from gpu_share import H200_SMS, HBM_BYTES_PER_CYCLE, L2_BYTES_PER_CYCLE

#: What tools/hwcapture/timing.cu measured on the H200.
MEASURED = json.loads((Path(__file__).parent.parent / "docs" / "h200-tma-timing.json").read_text())
#: The measured boxes: 128 bytes wide, 1 to 256 rows 4 KiB apart in a tensor of 8 GiB.
ROWS = (1, 64, 256)
#: Loads in flight on each SM in the streams set against the model.
LOADS_IN_FLIGHT = 6
LANES = 8


def box_workload(rows: int, copies: int = 1) -> Workload:
    """``copies`` loads of a 128-byte-wide box of ``rows`` rows, 4 KiB apart (a uint8
    tensor of 4096 x 2^21), each to its own 32 KiB of shared memory modulo 192 KiB."""
    tm = tiled(DataType.UINT8, (4096, 1 << 21), (128, rows), Swizzle.NONE)
    requests = tuple((0, load((0, rows * i), (i % 6) * 32768)) for i in range(copies))
    return Workload(f"box-{rows}", "", (tm,), requests, copies)


def latency(rows: int, memory: Memory) -> int:
    """Cycles from the request's offer to the last write of its box: the model's issue to
    the mbarrier's completion for one load alone."""
    return beats_of(box_workload(rows), UnitConfig(lanes=LANES)).run(memory).cycles


def measured_latency(source: str, box_bytes: int) -> int:
    """The median cycles from issue to the mbarrier's completion of one load."""
    return next(r["median"] for r in MEASURED["latency_cycles"] if (r["from"], r["box_bytes"]) == (source, box_bytes))


def measured_stream(source: str) -> float:
    """Bytes a cycle per SM with every SM streaming 32 KiB boxes, :data:`LOADS_IN_FLIGHT`
    each (the measurement's per-block figure: its bytes over its own cycles)."""
    return next(r["bytes_per_cycle_per_sm"] for r in MEASURED["bandwidth"]
                if (r["from"], r["blocks"], r["box_bytes"], r["in_flight"]) == (source, H200_SMS, 32768,
                                                                                  LOADS_IN_FLIGHT))


def main():
    print(f"| figure | H200 | model (lanes {LANES}) | how the model gets it |")
    print("| --- | --- | --- | --- |")
    overhead = latency(1, Memory(latency=1)) - 1           # the unit's cycles besides the memory's latency
    fits = {source: measured_latency(source.lower(), 128) - overhead for source in ("L2", "DRAM")}
    for source, fitted in fits.items():
        for rows in ROWS:
            model = latency(rows, Memory(latency=fitted))
            how = f"latency {fitted} fitted here" if rows == 1 else f"predicted with latency {fitted}"
            print(f"| one load from {source}, {128 * rows:,}-byte box | {measured_latency(source.lower(), 128 * rows)} "
                  f"cycles | {model} cycles | {how} |")
    for source, share, hit_rate in (("L2", L2_BYTES_PER_CYCLE, 1.0), ("DRAM", HBM_BYTES_PER_CYCLE, 0.0)):
        fitted = fits[source]
        measured = measured_stream(source.lower())
        beats = beats_of(box_workload(256, copies=48), UnitConfig(lanes=LANES))
        memory = Memory(latency=fits["L2"], miss_latency=fits["DRAM"], in_flight=LOADS_IN_FLIGHT * 256,
                        sms=H200_SMS, l2_bytes_per_cycle=L2_BYTES_PER_CYCLE, hbm_bytes_per_cycle=HBM_BYTES_PER_CYCLE,
                        hit_rate=hit_rate)
        print(f"| {H200_SMS} SMs streaming 32 KiB boxes from {source}, {LOADS_IN_FLIGHT} in flight each | "
              f"{measured:.1f} B/cycle per SM | {beats.run(memory).bytes_per_cycle():.1f} B/cycle | "
              f"the {source}'s whole bandwidth ({share:,} B/cycle, bench/gpu_share.py) set from this stream; the "
              f"credits and the latency ({fitted} cycles) decide whether one SM reaches its share |")


if __name__ == "__main__":
    main()
