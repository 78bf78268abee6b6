"""What a compiled unit costs the test suite, side by side in one run (docs/cosim.md,
docs/verification.md): for each backend, lane count and set of compiler flags, the
seconds to elaborate the unit, to build its library from an empty cache, to find it again
in a new process (by the source digest, without elaborating), and a campaign scenario's
mean time on it. This is what the suite's choices rest on: which flags the suite builds
with, and how few configurations it builds.

Every build goes to a cache folder of its own (made and removed by the bench), so the
figures are a fresh clone's, whatever ``~/.cache/tma-unit`` holds.

Run: python bench/build_speed.py [--lanes 1,8] [--backends cxxrtl,verilator]
         [--flags=-O0,-O1] [--scenarios 100] [--config '{"addressing": "step"}']

``--config`` names ``UnitConfig`` fields beside the lanes, as JSON (the suite's option
unit: tests/units.py ``OPTIONS``).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

#: What one measurement runs, in a process of its own (each its own imports, as a test
#: worker or a campaign's pool has): elaborate, build, and a campaign on the unit.
CHILD = """
import json, sys, time
from amaranth.back import rtlil
from tma_unit.model.config import UnitConfig
from tma_unit.rtl.unit import TmaUnit
from tma_unit.sim.campaign import make_unit, run_campaign
backend, lanes, flags, scenarios = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
config = UnitConfig(lanes=lanes, **json.loads(sys.argv[5]))
start = time.perf_counter(); rtlil.convert(TmaUnit(config), name="top"); elaborate = time.perf_counter() - start
start = time.perf_counter(); make_unit(config, backend, flags); build = time.perf_counter() - start
start = time.perf_counter()
report = run_campaign(config, backend, seed=32, scenarios=scenarios, workers=1, optimize=flags)
run = (time.perf_counter() - start) / report["scenarios"]
print(elaborate, build, run)
"""

FOUND = """
import json, sys, time
from tma_unit.model.config import UnitConfig
from tma_unit.sim.campaign import make_unit
config = UnitConfig(lanes=int(sys.argv[2]), **json.loads(sys.argv[4]))
start = time.perf_counter(); make_unit(config, sys.argv[1], sys.argv[3])
print(time.perf_counter() - start)
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", default="1,8")
    parser.add_argument("--backends", default="cxxrtl,verilator")
    parser.add_argument("--flags", default="-O0,-O1")
    parser.add_argument("--scenarios", type=int, default=100)
    parser.add_argument("--config", default="{}", help="UnitConfig fields beside the lanes, as JSON")
    args = parser.parse_args()
    print("| backend | lanes | flags | elaborate, s | build (elaboration included), s | found again, s "
          "| ms a scenario |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for backend in args.backends.split(","):
        for lanes in args.lanes.split(","):
            for flags in args.flags.split(","):
                cache = tempfile.mkdtemp(prefix="tma-unit-build-speed-")
                env = {**os.environ, "TMA_UNIT_CACHE": cache}
                env.pop("TMA_UNIT_LEDGER", None)
                try:
                    made = subprocess.run([sys.executable, "-c", CHILD, backend, lanes, flags, str(args.scenarios), args.config],
                                          env=env, capture_output=True, text=True, check=True)
                    elaborate, build, run = map(float, made.stdout.split()[-3:])
                    found = subprocess.run([sys.executable, "-c", FOUND, backend, lanes, flags, args.config], env=env,
                                           capture_output=True, text=True, check=True)
                    again = float(found.stdout.split()[-1])
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                print(f"| {backend} | {lanes} | {flags} | {elaborate:.1f} | {build:.1f} | {again:.2f} "
                      f"| {1000 * run:.1f} |", flush=True)


if __name__ == "__main__":
    main()
