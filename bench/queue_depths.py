"""What the queues' depths buy (``UnitConfig.beat_queue``, ``.completion_depth``): bytes per
cycle from the timing model (model/timing.py, checked cycle for cycle against the RTL in
tests/test_timing.py) for each depth, against a beat stream or a completion stream that
stalls in bursts (ready ON cycles, then stalled OFF, repeating), with requests offered
back to back or ``--gap`` idle cycles apart. Each table row is one (streams, gap)
condition, each column one depth; the area each depth costs is bench/block_area.py's.

Run: python bench/queue_depths.py [--lanes 8] [--workloads gather-moe-rows ...]
[--plot docs/images/queue-depths.png]
"""

import argparse

from tma_unit.explore import Point, evaluate
from tma_unit.model.types import CHUNK_BYTES
from tma_unit.workloads import WORKLOADS

BEAT_QUEUES = (9, 16, 32, 64, 128)
COMPLETION_DEPTHS = (3, 4, 8, 16, 64)
#: (beat stream bursts, completion stream bursts, gap): None is always ready
BEAT_CONDITIONS = [((256, 256), None, 0), ((256, 256), None, 16), ((1024, 1024), None, 16)]
COMPLETION_CONDITIONS = [(None, (256, 256), 0), (None, (1024, 1024), 0), (None, (16, 112), 0)]


def _rate(lanes, workload, condition, **depths):
    ready, completion, gap = condition
    row, = evaluate(Point(lanes, 8, **depths), [workload], synthesis="none", ready_bursts=ready,
                    completion_bursts=completion, request_gap=gap)
    return row.bytes_per_cycle


def _name(condition):
    ready, completion, gap = condition
    parts = [f"beats {ready[0]}:{ready[1]}" if ready else "", f"completions {completion[0]}:{completion[1]}"
             if completion else "", f"gap {gap}"]
    return ", ".join(p for p in parts if p)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--workloads", nargs="+", default=["gather-moe-rows", "gemm-deepgemm-fp8"],
                        choices=list(WORKLOADS))
    parser.add_argument("--plot", help="write a PNG of both sweeps here")
    args = parser.parse_args()
    tables = {}
    for field, depths, conditions in (("beat_queue", BEAT_QUEUES, BEAT_CONDITIONS),
                                      ("completion_depth", COMPLETION_DEPTHS, COMPLETION_CONDITIONS)):
        print(f"lanes {args.lanes}: bytes per cycle by {field} (streams ready ON:OFF cycles, gap: idle cycles "
              "before each request)")
        print(f"{'workload':20} {'condition':36} " + " ".join(f"{d:>7}" for d in depths))
        for workload in args.workloads:
            for condition in conditions:
                rates = [_rate(args.lanes, workload, condition, **{field: d}) for d in depths]
                tables[(field, workload, condition)] = rates
                print(f"{workload:20} {_name(condition):36} " + " ".join(f"{r:>7.2f}" for r in rates))
        print()
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
        for ax, (field, depths, title) in zip(axes, (("beat_queue", BEAT_QUEUES, "beat queue"),
                                                     ("completion_depth", COMPLETION_DEPTHS, "completion queue"))):
            for (f, workload, condition), rates in tables.items():
                if f == field:
                    ax.plot(depths, rates, marker="o", label=f"{workload}, {_name(condition)}")
            ax.set_xscale("log", base=2)
            ax.set_xticks(depths, [str(d) for d in depths])
            ax.set_xlabel(f"{title} entries")
            ax.set_title(f"Lanes {args.lanes}: stalls of the {'beat' if field == 'beat_queue' else 'completion'} stream")
            ax.axhline(CHUNK_BYTES * args.lanes, color="grey", linestyle="--", linewidth=1)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6.5)
        axes[0].set_ylabel("bytes per cycle")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
