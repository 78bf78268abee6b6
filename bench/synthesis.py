"""ECP5 synthesis figures of the unit for a list of configurations: logic cells, flip-flops,
18x18 multipliers, block RAMs, distributed-RAM ports, Fmax against a 100 MHz target, and
the critical path (src/synth.py: YoWASP Yosys + nextpnr, out of context, cached).

A configuration not synthesized before takes minutes (lanes 1 on this machine: about
1.5 min of Yosys and 4 min of nextpnr); cached ones print at once.

Run: python bench/synthesis.py [--lanes 1 2] [--slots 8] [--modes all tiled ...] [--swizzles all sm90]
[--addressing multiply step] [--device 85k] [--no-place] [--workers N]
"""

import argparse
from concurrent.futures import ProcessPoolExecutor

from tma_unit.model.config import UnitConfig
from tma_unit.synth import synthesize, TARGET_MHZ


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--slots", type=int, nargs="+", default=[8])
    parser.add_argument("--modes", nargs="+", default=["all"], help="access-mode families built (UnitConfig.modes)")
    parser.add_argument("--swizzles", nargs="+", default=["all"], help="swizzles built: all or sm90")
    parser.add_argument("--addressing", nargs="+", default=["multiply"], help="multiply or step (UnitConfig.addressing)")
    parser.add_argument("--device", default="85k")
    parser.add_argument("--workers", type=int, help="processes (default: every core)")
    parser.add_argument("--no-place", action="store_true", help="synthesis only (no Fmax)")
    args = parser.parse_args()
    configs = [UnitConfig(lanes=lanes, slots=slots, modes=modes, swizzles=swizzles, addressing=addressing)
               for lanes in args.lanes for slots in args.slots for modes in args.modes for swizzles in args.swizzles
               for addressing in args.addressing]
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(synthesize, configs, [args.device] * len(configs),
                                [not args.no_place] * len(configs)))
    print(f"{'lanes':>5} {'slots':>5} {'modes':28} {'swz':4} {'addressing':10} {'device':>6} {'LUT4':>7} {'FF':>7} {'DSP':>4} {'EBR':>4} {'LUTRAM':>6} "
          f"{'Fmax MHz':>9} {'target':>7} {'tool s':>7} {'mapper':>6}  critical path")
    for config, r in zip(configs, results):
        fmax = "-" if r.fmax_mhz is None else f"{r.fmax_mhz:.2f}"
        print(f"{config.lanes:>5} {config.slots:>5} {config.modes:28} {config.swizzles:4} {config.addressing:10} {r.device:>6} {r.luts:>7} {r.flip_flops:>7} {r.dsps:>4} "
              f"{r.block_rams:>4} {r.lutram_ports:>6} {fmax:>9} {TARGET_MHZ:>7} {r.seconds:>7.0f} {r.mapper:>6}  "
              f"{r.critical_path or '-'}{'' if r.fits else '  (did not fit)'}")


if __name__ == "__main__":
    main()
