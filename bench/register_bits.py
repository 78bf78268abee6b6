"""Where a unit's state is, before synthesis: the flip-flop bits of each block of the
elaborated design (Amaranth's RTLIL), by register, with its memories' bits beside them
(the lines' rings and the queues, LUT RAM on the ECP5), and the job the front end hands
the walker, field by field. It takes seconds where a synthesis takes minutes, names
every register, and shows what a change of the RTL moves (issue 48's lean unit: the job
is held in five registers). Yosys later trims bits that nothing reads and merges equal
ones, so `bench/block_area.py` is the figure of record; this is the map.

Run: python bench/register_bits.py [--lanes 1] [--addressing multiply] [--checks per_request]
[--blocks frontend walker datapath regfile] [--top 12]
"""

import argparse
import re
from collections import Counter

from amaranth.back import rtlil

from tma_unit.model.config import ADDRESSING, CHECKS, UnitConfig
from tma_unit.rtl.layouts import job_layout
from tma_unit.sim.cosim import flat_layout
from tma_unit.synth import BLOCKS, state_bits


def fields(layout):
    """``(bits, name)`` of each field of a ``lib.data`` layout, an array's entries
    together: :func:`~tma_unit.sim.cosim.flat_layout`'s scalar fields, summed under their
    names without the indices."""
    totals = Counter()
    for name, _, width in flat_layout(layout):
        totals[re.sub(r"\[\d+\]", "", name)] += width
    return [(bits, name) for name, bits in totals.items()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, default=1)
    parser.add_argument("--addressing", default=UnitConfig.addressing, choices=ADDRESSING)
    parser.add_argument("--checks", default=UnitConfig.checks, choices=CHECKS)
    parser.add_argument("--blocks", nargs="+", default=["regfile", "frontend", "walker", "datapath"],
                        choices=[name for name in BLOCKS if name != "unit"])
    parser.add_argument("--top", type=int, default=12, help="the largest registers listed per block")
    args = parser.parse_args()
    config = UnitConfig(lanes=args.lanes, addressing=args.addressing, checks=args.checks)
    print(f"lanes {config.lanes}, addressing {config.addressing}, checks {config.checks}: "
          "flip-flop bits and memory bits by block, before synthesis")
    total = 0
    for name in args.blocks:
        found, memory = state_bits(rtlil.convert(BLOCKS[name](config)))
        registers = Counter(found)
        total += sum(registers.values())
        print(f"\n{name}: {sum(registers.values()):,} flip-flop bits, {memory:,} memory bits")
        for register, bits in registers.most_common(args.top):
            print(f"  {bits:>6,}  {register}")
    job = job_layout(config)
    print(f"\nall blocks: {total:,} flip-flop bits")
    print(f"\nthe job (front end to walker): {job.size:,} bits")
    for bits, field in sorted(fields(job), reverse=True)[:args.top]:
        print(f"  {bits:>6,}  {field}")


if __name__ == "__main__":
    main()
