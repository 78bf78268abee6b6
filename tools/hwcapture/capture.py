"""Command line for the hardware capture (see README.md beside this file).

  python tools/hwcapture/capture.py cases cases.bin          # write the case list
  python tools/hwcapture/capture.py pack results.bin out.npz --device "..." --driver "..."
  python tools/hwcapture/capture.py compare tests/vectors/hopper.npz
"""

import argparse
import sys

from tma_unit.sim.conformance import case_list, compare_vectors, pack_results, write_cases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cases = sub.add_parser("cases")
    cases.add_argument("path")
    pack = sub.add_parser("pack")
    pack.add_argument("results")
    pack.add_argument("npz")
    pack.add_argument("--device", required=True)
    pack.add_argument("--driver", required=True)
    compare = sub.add_parser("compare")
    compare.add_argument("npz")
    args = parser.parse_args(argv)
    listed = case_list()
    if args.command == "cases":
        write_cases(listed, args.path)
        print(f"wrote {len(listed)} cases to {args.path}")
    elif args.command == "pack":
        pack_results(listed, args.results, args.npz, args.device, args.driver)
        print(f"packed {args.results} into {args.npz}")
    else:
        problems = compare_vectors(listed, args.npz)
        for line in problems:
            print(line)
        print(f"{len(listed) - len(problems)} passed, {len(problems)} failed")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
