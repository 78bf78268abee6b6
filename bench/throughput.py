"""Bytes per cycle of the RTL against its 16 x lanes limit, for lanes 1, 2, 4, 8 and the
demo suite, which holds every access mode: tiled, gather4, scatter4, im2col, im2col::w and
im2col::w::128 (issue targets: at least 0.95 of the limit on boxes whose rows are whole
beats, 16 x lanes bytes, in every mode: a beat holds one row's chunks, so a row of fewer
moves its bytes a cycle, docs/architecture.md, "Beats").

Each case runs as a stream of back-to-back requests with the beat stream always ready,
long enough (about 1000 beats) that the unit's fixed latency is a small part of it; the
table also gives that latency, measured on a single request. Runs on Amaranth's
simulator in lockstep with the golden model, so every beat counted is a checked one.

Run: python bench/throughput.py [--lanes 1 2 4 8]
"""

import argparse

from tma_unit.model import transactions
from tma_unit.model.config import UnitConfig
from tma_unit.sim.demo import DEMO_CASES, demo_scenario
from tma_unit.sim.pysim import run_pysim


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--beats", type=int, default=1000, help="beats per case stream")
    args = parser.parse_args()
    print(f"{'lanes':>5} {'case':24} {'mode':14} {'chunks/req':>10} {'requests':>8} {'cycles':>7} "
          f"{'B/cycle':>8} {'limit':>6} {'ratio':>6} {'latency':>7}")
    for lanes in args.lanes:
        config = UnitConfig(lanes=lanes)
        ratios = []
        for name, (tm, request) in DEMO_CASES.items():
            t = transactions(tm, request)
            chunks, beats = len(t), t.beats(lanes)
            copies = max(2, -(-args.beats // beats))
            stream = run_pysim(demo_scenario(config, [name], copies))
            single = run_pysim(demo_scenario(config, [name], 1))
            moved = 16 * chunks * copies
            rate = moved / stream.cycles
            ratio = rate / (16 * lanes)
            ratios.append(ratio)
            print(f"{lanes:>5} {name:24} {request.mode.name.lower():14} {chunks:>10} {copies:>8} {stream.cycles:>7} {rate:>8.2f} "
                  f"{16 * lanes:>6} {ratio:>6.3f} {single.cycles - beats:>7}")
        print(f"{lanes:>5} {'lowest ratio':24} {min(ratios):>69.3f}")


if __name__ == "__main__":
    main()
