"""Verification speed, side by side in one run (docs/verification.md): the compiled unit
alone, the same run checked in lockstep with the model, and the campaign's rate.

* raw: back-to-back fp16 GEMM tiles (64 x 256, 128B swizzle, 2,048 beats each) on the
  CXXRTL unit, ready always high; the batched simulation call alone.
* checked: the same requests through the campaign's path (``sim.campaign.run_scenario``):
  the model's transactions for every request, the run, every field of every beat and
  completion compared with numpy, the status registers read and compared. Targets: at
  least 1 million cycles/s a core on lanes 1, and at least half the raw rate.
* the per-beat checker of Amaranth's simulator's path (``sim.native.run_native`` feeds it
  the same run a beat at a time), for scale.
* campaign: the ``illegal`` generator (bad input) on one process and on every core, and
  all four generators on every core. Target: at least 10,000 cases/s for bad input on
  this 2-core machine.

Each figure is the best of ``--repeat`` runs (noise only slows a run down). The library
is built with ``sim.cxxrtl.FAST`` on first use.

Run: python bench/verify_speed.py [--lanes 1] [--requests 20] [--seconds 20] [--repeat 3]
"""

import argparse
import os
import time

from tma_unit.model.config import UnitConfig
from tma_unit.sim import campaign
from tma_unit.sim.cosim import ready_pattern, request_gaps
from tma_unit.sim.cxxrtl import FAST

# the workload of bench/cosim_speed.py, so the two benches' raw rates compare
from cosim_speed import scenario as gemm_scenario

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, default=1)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20, help="each campaign's time budget")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--optimize", default=FAST)
    args = parser.parse_args()
    config = UnitConfig(lanes=args.lanes)
    unit = campaign.make_unit(config, "cxxrtl", args.optimize)
    work = gemm_scenario(config, args.requests)

    def best(run):
        return min((run() for _ in range(args.repeat)), key=lambda result: result[1] / result[0])

    def raw():
        unit.write_descriptor(0, work.images[0])
        unit.set_slot_valid(1)
        start = time.perf_counter()
        *_, cycles = unit.run(work.requests, request_gaps(0, len(work.requests), 0), ready_pattern(0, 1.0),
                              2048 * len(work.requests) // args.lanes + 1)
        return cycles, time.perf_counter() - start

    def checked():
        scenario = gemm_scenario(config, args.requests)
        unit.reset()            # the status registers from zero, as the mirror starts
        start = time.perf_counter()
        result = campaign.run_scenario(unit, scenario)
        return result.cycles, time.perf_counter() - start

    def per_beat():
        from tma_unit.sim.native import run_native
        start = time.perf_counter()
        result = run_native(gemm_scenario(config, max(2, args.requests // 5)), unit)
        return result.cycles, time.perf_counter() - start

    raw_cycles, raw_seconds = best(raw)
    checked_cycles, checked_seconds = best(checked)
    beat_cycles, beat_seconds = best(per_beat)

    def rate(workers, generators):
        report = campaign.run_campaign(config, "cxxrtl", seed=1, seconds=args.seconds, generators=generators,
                                       workers=workers, optimize=args.optimize)
        coverage = report["coverage"]
        assert not report["failures"], campaign.format_report(report)
        return sum(coverage.requests.values()), coverage.seconds

    cores = os.cpu_count() or 1
    one = rate(1, {"illegal": 1})
    every = rate(cores, {"illegal": 1})
    mixed = rate(cores, None)

    print(f"lanes {args.lanes}, {args.requests} GEMM tiles of {2048 // args.lanes} beats; CXXRTL {args.optimize}")
    print(f"{'what':44} {'cycles':>10} {'seconds':>8} {'cycles/s':>12}")
    print(f"{'raw: the batched simulation call':44} {raw_cycles:>10,} {raw_seconds:>8.2f} {raw_cycles / raw_seconds:>12,.0f}")
    print(f"{'checked: model, run, numpy check, registers':44} {checked_cycles:>10,} {checked_seconds:>8.2f} "
          f"{checked_cycles / checked_seconds:>12,.0f}")
    print(f"{'the per-beat checker, for scale':44} {beat_cycles:>10,} {beat_seconds:>8.2f} "
          f"{beat_cycles / beat_seconds:>12,.0f}")
    print(f"checked / raw: {(checked_cycles / checked_seconds) / (raw_cycles / raw_seconds):.2f}   "
          f"(targets: checked >= 1,000,000 cycles/s a core, >= 0.5 of raw)")
    print(f"{'campaign':44} {'cases':>10} {'seconds':>8} {'cases/s':>12}")
    print(f"{'bad input (illegal), 1 process':44} {one[0]:>10,} {one[1]:>8.1f} {one[0] / one[1]:>12,.0f}")
    print(f"{f'bad input (illegal), {cores} processes':44} {every[0]:>10,} {every[1]:>8.1f} {every[0] / every[1]:>12,.0f}")
    print(f"{f'all four generators, {cores} processes':44} {mixed[0]:>10,} {mixed[1]:>8.1f} {mixed[0] / mixed[1]:>12,.0f}")
    print(f"scaling {cores} processes / 1: {(every[0] / every[1]) / (one[0] / one[1]):.2f}x   "
          f"(target: bad input >= 10,000 cases/s on this machine)")


if __name__ == "__main__":
    main()
