"""The board build's Fmax over several placements of one netlist (docs/fpga.md, "Finding
the next path"): nextpnr places the same netlist differently with each seed, and the
figure moves with it, so one build says little about a change to the RTL.

The run starts with one whole `tma-unit build` (synthesis, then placement with nextpnr's
own seed: the table's ``default`` row, its seconds the whole build's), or reads the netlist
a build folder holds (``--netlist``). It then places and routes that netlist with each
seed given, ``--workers`` at a time, each nextpnr on one thread as the build's is, writing
``seedN.json`` (its report) and ``seedN.log`` into the folder. It prints, per placement,
the Fmax, where the longest path starts and ends, and the seconds it took, then the least,
median and largest Fmax.

Run: python bench/seeds.py [--lanes 1] [--mhz 100] [--seeds 1 2 3] [--workers 2]
         [-o build/seeds] | [--netlist build/ulx3s --seeds 1 2 3]
"""

import argparse
import json
import statistics
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tma_unit.constraints.ulx3s import (PROTO_NAME, build, longest_path, nextpnr_command, pll_dividers, report_fmax,
                                        seed_problem)
from tma_unit.model.config import UnitConfig
from tma_unit.model.errors import TmaError


def figures(seed, fmax: dict, ends: tuple, seconds: float) -> dict:
    """A table row: the slowest clock's Fmax, the longest path's ends, the seconds."""
    if not fmax:
        return {"seed": seed, "error": "the report gives no Fmax", "seconds": seconds}
    return {"seed": seed, "fmax": min(fmax.values()), "ends": ends, "seconds": seconds}


def place(folder: Path, command: list[str], seed: int) -> dict:
    """One placement and route of the netlist in ``folder`` with ``seed``."""
    start = time.perf_counter()
    run = subprocess.run([*command, "--report", f"seed{seed}.json", "--log", f"seed{seed}.log", "--seed", str(seed)],
                         cwd=folder, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode:
        lines = (run.stdout + run.stderr).splitlines()
        errors = [line for line in lines if line.startswith("ERROR:")]
        return {"seed": seed, "error": (errors or lines or ["no output"])[-1] + f" (seed{seed}.log)",
                "seconds": seconds}
    report = json.loads((folder / f"seed{seed}.json").read_text())
    return figures(seed, report_fmax(report), longest_path(report), seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, help="lanes of the unit synthesized (default 1)")
    parser.add_argument("--mhz", type=float, help="the clock asked of nextpnr (default 100)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--workers", type=int, default=2, help="placements at a time")
    parser.add_argument("-o", "--output", help="the build folder synthesis writes (default build/seeds)")
    parser.add_argument("--netlist", help="a `tma-unit build` folder whose netlist to place again (no synthesis)")
    args = parser.parse_args()
    seeds = sorted(set(args.seeds))
    for seed in seeds:
        if seed_problem(seed):
            parser.error(f"--seeds: {seed} {seed_problem(seed)}")
    if args.workers < 1:
        parser.error(f"--workers: {args.workers} is not a positive count")
    rows = []
    if args.netlist:
        given = [flag for flag, value in (("--lanes", args.lanes), ("--mhz", args.mhz), ("-o", args.output))
                 if value is not None]
        if given:
            parser.error(f"{given[0]} is given with --netlist, whose netlist is placed as it was synthesized")
        folder = Path(args.netlist)
        if not (folder / f"{PROTO_NAME}.json").exists():
            parser.error(f"--netlist: {folder} holds no {PROTO_NAME}.json (a `tma-unit build` output folder)")
    else:
        folder = Path(args.output or "build/seeds")
        try:
            config = UnitConfig(lanes=1 if args.lanes is None else args.lanes)
            mhz = 100.0 if args.mhz is None else args.mhz
            pll_dividers(mhz)
        except (TmaError, ValueError) as error:
            parser.error(str(error))
        start = time.perf_counter()
        result = build(config, "85F", mhz, folder)
        rows.append(figures("default", result.fmax_mhz, result.longest_path, time.perf_counter() - start))
    command = nextpnr_command(folder)
    if command is None:
        parser.error(f"{folder} holds no build plan with a nextpnr command (build_{PROTO_NAME}.json)")
    with ThreadPoolExecutor(args.workers) as pool:
        rows += pool.map(lambda seed: place(folder, command, seed), seeds)
    print("| seed | Fmax (MHz) | longest path from | to | seconds (default: the whole build) |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        if "error" in row:
            print(f"| {row['seed']} | failed: {row['error']} | | | {row['seconds']:.0f} |")
        else:
            start, end = row["ends"]
            print(f"| {row['seed']} | {row['fmax']:.2f} | {start} | {end} | {row['seconds']:.0f} |")
    fmax = [row["fmax"] for row in rows if "fmax" in row]
    if fmax:
        print(f"\nFmax over {len(fmax)} placements: least {min(fmax):.2f}, median {statistics.median(fmax):.2f}, "
              f"largest {max(fmax):.2f} MHz")


if __name__ == "__main__":
    main()
