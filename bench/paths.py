"""The slowest register-to-register paths of a synthesized netlist, by estimate
(src/paths.py): what to cut next for the clock, without a 15 to 30 minute route.

Run: python bench/paths.py BUILD_FOLDER_OR_NETLIST_JSON [--count 40]
(a folder ``tma-unit build -o FOLDER`` wrote holds tma_unit_proto.json, Yosys's netlist;
its Yosys step takes a few minutes, and the JSON is there before nextpnr starts).
"""

import argparse
from pathlib import Path

from tma_unit.paths import rank_paths


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("netlist", type=Path, help="a build folder or a Yosys JSON netlist of ECP5 cells")
    parser.add_argument("--count", type=int, default=40)
    args = parser.parse_args()
    netlist = args.netlist / "tma_unit_proto.json" if args.netlist.is_dir() else args.netlist
    if not netlist.is_file():
        raise SystemExit(f"no netlist at {netlist}: `tma-unit build -o FOLDER` writes one (Yosys's step, "
                         "before nextpnr starts)")
    print(f"{'est. ns':>7} {'LUTs':>4} {'carry':>5}  path")
    for path in rank_paths(netlist, count=args.count):
        print(f"{path.delay_ns:>7.2f} {path.luts:>4} {path.carry_cells:>5}  {path.start} -> {path.end}")


if __name__ == "__main__":
    main()
