"""One SM's copy unit among many (docs/memory.md, "The GPU around the SM"): for every
built-in workload and lane count, the bandwidth one SM's unit reaches when 1, 16 and 132
SMs stream at once against the H200's measured L2 and DRAM figures (docs/memory.md,
"Measured on an H200": 99 and 17 bytes a cycle per SM with all 132 streaming), all from
L2 or all from DRAM, and the fewest requests in flight that reach 90 % of what the SM's
share allows.

Run: python bench/gpu_share.py [--lanes 1,2,4,8] [--sms 1,16,132] [--fraction 0.9]
"""

import argparse

from tma_unit.memory_side import beats_of, in_flight_for, peak
from tma_unit.model.config import UnitConfig
from tma_unit.model.memory import Memory
from tma_unit.workloads import WORKLOADS

#: The H200's whole-GPU figures, bytes a cycle: 132 SMs x the measured per-SM share.
H200_SMS = 132
L2_BYTES_PER_CYCLE = 99 * H200_SMS
HBM_BYTES_PER_CYCLE = 17 * H200_SMS
#: Latencies, cycles: the measured medians for an 8 KiB box from L2 and from DRAM.
L2_LATENCY, DRAM_LATENCY = 488, 1314
#: Credits enough that they never bind, for the bandwidth column.
PLENTY = 4096


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", default="1,2,4,8")
    parser.add_argument("--sms", default="1,16,132")
    parser.add_argument("--fraction", type=float, default=0.9)
    args = parser.parse_args()
    print("| workload | lanes | SMs | from | share, B/cycle | B/cycle reached | "
          f"in flight for {args.fraction:.0%} |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in WORKLOADS:
        for lanes in map(int, args.lanes.split(",")):
            beats = beats_of(name, UnitConfig(lanes=lanes))
            for sms in map(int, args.sms.split(",")):
                for source, hit_rate, latency in (("L2", 1.0, L2_LATENCY), ("DRAM", 0.0, DRAM_LATENCY)):
                    memory = dict(sms=sms, l2_bytes_per_cycle=L2_BYTES_PER_CYCLE,
                                  hbm_bytes_per_cycle=HBM_BYTES_PER_CYCLE, hit_rate=hit_rate,
                                  miss_latency=DRAM_LATENCY)
                    top = peak(lanes, Memory(latency=latency, **memory))
                    reached = beats.run(Memory(latency=latency, in_flight=PLENTY, **memory)).bytes_per_cycle()
                    needed = in_flight_for(name, lanes, latency, args.fraction, **memory)
                    print(f"| {name} | {lanes} | {sms} | {source} | {top:.1f} | {reached:.1f} | "
                          f"{needed or 'none'} |", flush=True)


if __name__ == "__main__":
    main()
