"""ECP5 area of each block of the unit on its own (descriptor file, front end, walker,
datapath with its queues), of the whole unit and of the request former behind it
(docs/memory.md), for units built with different access
modes and swizzles (``UnitConfig.modes``, ``.swizzles``), queue depths
(``UnitConfig.beat_queue``, ``.completion_depth``), how addresses are made
(``UnitConfig.addressing``), where the rules are checked (``UnitConfig.checks``; at
commit, the checker is in the descriptor file), the front end's request interval
(``UnitConfig.request_interval``) and with or without the request former in the
datapath (``UnitConfig.request_former``): Yosys ``synth_ecp5``, no place and route
(src/synth.py, cached). A block on its own sees its links as ports, so the blocks' sum
is not the unit's figure: inside the unit, constants cross from one block into the next
(a mode not built is a constant 0 from the front end on).

Run: python bench/block_area.py [--lanes 1] [--slots 8] [--options all/all tiled/sm90 ...]
[--beat-queue 9 16 32] [--completion-depth 3 4 16] [--addressing multiply step]
[--checks per_request at_commit] [--request-interval 1 2] [--request-former 0 128]
[--blocks datapath ...] [--workers N]
"""

import argparse
from concurrent.futures import ProcessPoolExecutor

from tma_unit.model.config import ADDRESSING, CHECKS, UnitConfig
from tma_unit.model.errors import TmaError
from tma_unit.synth import BLOCKS, synthesize

#: modes/swizzles pairs measured by default: everything, then less and less built
DEFAULT_OPTIONS = ["all/all", "all/sm90", "tiled+im2col+im2col_w/all", "tiled+gather4/all", "tiled/all", "tiled/sm90"]


def _area(config, block):
    return synthesize(config, "85k", False, block=block)


def _configs(args) -> list:
    """Every configuration the flags name (a modes/swizzles pair x the other options)."""
    configs = []
    for option in args.options:
        modes, _, swizzles = option.partition("/")
        configs += [UnitConfig(lanes=args.lanes, slots=args.slots, modes=modes, swizzles=swizzles or "all",
                               beat_queue=queue, completion_depth=depth, addressing=addressing, checks=checks,
                               request_former=former, request_interval=interval)
                    for queue in args.beat_queue for depth in args.completion_depth
                    for addressing in args.addressing for checks in args.checks for former in args.request_former
                    for interval in args.request_interval]
    return configs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, default=1)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--options", nargs="+", default=DEFAULT_OPTIONS, help="modes/swizzles pairs")
    parser.add_argument("--beat-queue", type=int, nargs="+", default=[UnitConfig.beat_queue],
                        help="beat queue entries (UnitConfig.beat_queue)")
    parser.add_argument("--completion-depth", type=int, nargs="+", default=[UnitConfig.completion_depth],
                        help="completion queue entries (UnitConfig.completion_depth)")
    parser.add_argument("--addressing", nargs="+", default=[UnitConfig.addressing], choices=ADDRESSING,
                        help="how addresses are made (UnitConfig.addressing)")
    parser.add_argument("--checks", nargs="+", default=[UnitConfig.checks], choices=CHECKS,
                        help="where the descriptor's rules are checked (UnitConfig.checks)")
    parser.add_argument("--request-former", type=int, nargs="+", default=[UnitConfig.request_former],
                        help="the request former's granule in the datapath, 0 for none (UnitConfig.request_former)")
    parser.add_argument("--request-interval", type=int, nargs="+", default=[UnitConfig.request_interval],
                        help="least cycles between two jobs of the front end (UnitConfig.request_interval)")
    parser.add_argument("--blocks", nargs="+", default=list(BLOCKS), choices=list(BLOCKS))
    parser.add_argument("--workers", type=int, help="processes (default: every core)")
    args = parser.parse_args()
    try:
        configs = _configs(args)
    except TmaError as error:           # a combination the unit refuses: named, no traceback
        parser.error(str(error))
    jobs = [(config, block) for config in configs for block in args.blocks]
    with ProcessPoolExecutor(args.workers) as pool:
        results = dict(zip(jobs, pool.map(_area, *zip(*jobs))))
    print(f"lanes {args.lanes}, slots {args.slots}: logic cells (LUT4 + 2 x CCU2C) / flip-flops / MULT18X18D "
          "/ LUT RAM ports")
    print(f"{'modes':30} {'swz':4} {'queue':>5} {'compl':>5} {'addr':8} {'checks':11} {'former':>6} {'ivl':>3} "
          + " ".join(f"{block:>22}" for block in args.blocks))
    for config in configs:
        cells = [results[(config, block)] for block in args.blocks]
        print(f"{config.modes:30} {config.swizzles:4} {config.beat_queue:>5} {config.completion_depth:>5} "
              f"{config.addressing:8} {config.checks:11} {config.request_former:>6} {config.request_interval:>3} "
              + " ".join(f"{f'{r.luts}/{r.flip_flops}/{r.dsps}/{r.lutram_ports}':>22}" for r in cells))


if __name__ == "__main__":
    main()
