"""Multicast across a cluster and a consumer on the shared-memory port (docs/memory.md,
"The SM around the unit"): CUTLASS's SM90 GEMM tile (the built-in gemm-cutlass-sm90) with
its B block shared by a cluster of 1, 2 or 4 CTAs along M, each CTA loading its part
and multicasting it, at each lane count, when 132 SMs stream from L2 or from DRAM at the
H200's measured per-SM shares (bench/gpu_share.py), with no consumer and with one reading
each byte once; the bytes a cycle that land in one SM's shared memory, and the L2 bytes
it asks for per byte landed.

Run: python bench/cluster.py [--lanes 1,2,4,8] [--clusters 1,2,4] [--cluster-bytes-per-cycle 64]
"""

import argparse

from tma_unit.memory_side import beats_of
from tma_unit.model import DataType
from tma_unit.model.config import UnitConfig
from tma_unit.model.memory import Memory
from tma_unit.workloads import gemm

from gpu_share import DRAM_LATENCY, H200_SMS, HBM_BYTES_PER_CYCLE, L2_BYTES_PER_CYCLE, L2_LATENCY, PLENTY


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", default="1,2,4,8")
    parser.add_argument("--clusters", default="1,2,4")
    parser.add_argument("--cluster-bytes-per-cycle", type=float, default=None,
                        help="the cluster's bytes a cycle for one SM's multicast (default: no limit)")
    args = parser.parse_args()
    print("| CTAs sharing B | lanes | from | consumer reads | B/cycle into the SM | L2 bytes per byte landed |")
    print("| --- | --- | --- | --- | --- | --- |")
    for cluster in map(int, args.clusters.split(",")):
        work = gemm(f"gemm-cluster{cluster}", "", DataType.FLOAT16, 4096, 4096, 4096, 128, 128, 64, 64,
                    multicast=cluster)
        for lanes in map(int, args.lanes.split(",")):
            beats = beats_of(work, UnitConfig(lanes=lanes))
            asked = int(beats.sector_bytes.sum())
            for source, hit_rate, latency in (("L2", 1.0, L2_LATENCY), ("DRAM", 0.0, DRAM_LATENCY)):
                for reads in (0, 1):
                    memory = Memory(latency=latency, in_flight=PLENTY, sms=H200_SMS,
                                    l2_bytes_per_cycle=L2_BYTES_PER_CYCLE, hbm_bytes_per_cycle=HBM_BYTES_PER_CYCLE,
                                    hit_rate=hit_rate, miss_latency=DRAM_LATENCY, consumer_reads=reads,
                                    cluster_bytes_per_cycle=args.cluster_bytes_per_cycle)
                    run = beats.run(memory)
                    print(f"| {cluster} | {lanes} | {source} | {reads} | {run.bytes_per_cycle():.1f} | "
                          f"{asked / beats.smem_bytes:.2f} |", flush=True)


if __name__ == "__main__":
    main()
