"""What the synthesis cache saves (src/synth.py): a fresh synthesis of the unit against a
cache hit for the same configuration, side by side, and their ratio. A cache hit still
converts the design to RTLIL and asks each tool its version (the cache key), so it is not
free; tests/test_synth.py checks that it runs neither tool.

Each configuration is synthesized once into an empty cache folder (about a minute for
lanes 1, slots 2 with ``--no-place`` on this machine; minutes with place and route),
then read back from it ``--repeat`` times; the fastest hit counts.

Run: python bench/synthesis_cache.py [--lanes 1] [--slots 2] [--device 85k] [--place] [--repeat 3]
"""

import argparse
import os
import tempfile
import time

from tma_unit.model.config import UnitConfig
from tma_unit.synth import synthesize


def timed(call):
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, nargs="+", default=[1])
    parser.add_argument("--slots", type=int, nargs="+", default=[2])
    parser.add_argument("--device", default="85k")
    parser.add_argument("--place", action="store_true", help="place and route too (minutes more)")
    parser.add_argument("--repeat", type=int, default=3, help="cache hits timed; the fastest counts")
    args = parser.parse_args()
    print(f"{'lanes':>5} {'slots':>5} {'device':>6} {'place':>5} {'fresh s':>8} {'cache hit s':>11} {'ratio':>8}")
    for config in [UnitConfig(lanes=lanes, slots=slots) for lanes in args.lanes for slots in args.slots]:
        with tempfile.TemporaryDirectory(prefix="tma-unit-synthesis-cache-") as folder:
            os.environ["TMA_UNIT_CACHE"] = folder          # an empty cache: the first call synthesizes
            fresh, fresh_seconds = timed(lambda: synthesize(config, args.device, args.place))
            hits = [timed(lambda: synthesize(config, args.device, args.place)) for _ in range(args.repeat)]
        assert all(hit == fresh for hit, _ in hits), "a cache hit differs from the synthesis it cached"
        hit_seconds = min(seconds for _, seconds in hits)
        print(f"{config.lanes:>5} {config.slots:>5} {args.device:>6} {'yes' if args.place else 'no':>5} "
              f"{fresh_seconds:>8.1f} {hit_seconds:>11.2f} {fresh_seconds / hit_seconds:>7.0f}x")


if __name__ == "__main__":
    main()
