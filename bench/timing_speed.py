"""Timing model against the compiled RTL backends on the same work, in one run: cycles
simulated per second and the ratio (issue target: the timing model at least 1000 times
the fast RTL backend).

The work: back-to-back fp16 GEMM tiles (64 x 256, 128B swizzle) on a lanes-1 unit, once
with ready always high and once with a random ready pattern (70 % high) and random gaps
of up to 8 cycles. Before timing, the model's prediction is checked equal to the RTL's
cycles (every beat and completion). The model is timed twice: from the records alone
(what a sweep reuses) and from the descriptors and requests (records_of for each).

Run: python bench/timing_speed.py [--requests 200] [--optimize FLAGS]
"""

import argparse
import time

import numpy as np

from tma_unit.model.config import UnitConfig
from tma_unit.model.timing import predict, predict_scenario, records_of
from tma_unit.sim.cosim import ready_pattern, request_gaps
from tma_unit.sim.cxxrtl import FAST

from cosim_speed import scenario


def timed(function, repeat=3):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        seconds = time.perf_counter() - start
        best = seconds if best is None else min(best, seconds)
    return result, best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--optimize", default=FAST, help="both compiled backends' C++ compiler flags")
    args = parser.parse_args()
    config = UnitConfig(lanes=1)
    from tma_unit.sim.verilator import VerilatorUnit
    from tma_unit.sim.cxxrtl import CxxrtlUnit
    backends = {"Verilator": VerilatorUnit(config, args.optimize), "CXXRTL": CxxrtlUnit(config, args.optimize)}

    names = list(backends)
    print(f"{'workload':28} {'simulator':22} {'cycles':>9} {'seconds':>9} {'cycles/s':>15} "
          + " ".join(f"{'x ' + name:>14}" for name in names))
    for label, probability, max_gap in (("GEMM tiles, ready high", 1.0, 0), ("GEMM tiles, 70% ready, gaps", 0.7, 8)):
        work = scenario(config, args.requests)
        work.seed, work.ready_probability, work.max_gap = 5, probability, max_gap
        gaps = request_gaps(work.seed, len(work.requests), max_gap)
        ready = ready_pattern(work.seed, probability)
        records = [records_of(work.images[0], fields, config) for fields in work.requests]
        timing, model_seconds = timed(lambda: predict(records, gaps, ready))
        _, full_seconds = timed(lambda: predict_scenario(config, work.images, work.valid_slots, work.requests,
                                                         gaps, ready), repeat=1)
        rates = {}
        for name, unit in backends.items():
            unit.write_descriptor(0, work.images[0])
            unit.set_slot_valid(1)
            start = time.perf_counter()
            _, beat_cycles, _, completion_cycles, cycles = unit.run(work.requests, gaps, ready, timing.beats + 1)
            seconds = time.perf_counter() - start
            if not (np.array_equal(beat_cycles, timing.beat_cycles)
                    and np.array_equal(completion_cycles, timing.completion_cycles) and cycles == timing.cycles):
                raise SystemExit(f"{name}: the timing model's cycles differ from the RTL's on {label}")
            rates[name] = cycles / seconds
            print(f"{label:28} {name:22} {cycles:>9} {seconds:>9.3f} {rates[name]:>15,.0f}")
        for name, seconds in (("timing model (records)", model_seconds), ("timing model (+checks)", full_seconds)):
            rate = timing.cycles / seconds
            print(f"{label:28} {name:22} {timing.cycles:>9} {seconds:>9.4f} {rate:>15,.0f} "
                  + " ".join(f"{rate / rates[other]:>13,.0f}x" for other in names))
    print("x NAME: the timing model's cycles/s over that backend's on the same work; "
          "target >= 1000x the fast backend (CXXRTL, issue 5)")


if __name__ == "__main__":
    main()
