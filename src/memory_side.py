"""The memory side of the exploration (``tma-unit explore --memory``; docs/memory.md):
each workload's L2 requests, sector efficiency and shared-memory wavefronts, and the
bandwidth a unit of each lane count reaches against a memory's latency and its limit on
requests in flight, with Little's law beside it.

The beats leave the unit at the cycles the timing model gives with the beat stream always
ready (model/timing.py, checked against the RTL), and the memory side holds them back
where it has no credit (model/memory.py).
"""

from dataclasses import dataclass, asdict, fields
from pathlib import Path
import csv
from fractions import Fraction
import json

import numpy as np

from .model import transactions
from .model.config import UnitConfig
from .model.issuer import Issuer
from .model.memory import SECTOR_BYTES, LINE_BYTES, SMEM_BYTES_PER_CYCLE, Memory, simulate, smem_wavefronts
from .model.timing import MemoryBeats, memory_beats, predict_scenario
from .workloads import Workload, workload

__all__ = ["Beats", "beats_of", "MemoryRow", "sweep", "write_csv", "write_json", "peak", "little", "in_flight_for", "plot_bandwidth",
           "wavefront_table", "plot_wavefronts", "consumer_table", "plot_consumer", "write_l2_trace", "beats_behind",
           "LATENCIES", "IN_FLIGHT"]

#: The default sweep: latencies across the 500-900 cycles measured for TMA loads on B200
#: (docs/memory.md), and credits from a few to more than the longest latency.
LATENCIES = (200, 400, 600, 800, 1000)
IN_FLIGHT = (64, 128, 256, 512, 1024)


@dataclass(frozen=True)
class Beats(MemoryBeats):
    """One workload's beats on one unit (:class:`.model.timing.MemoryBeats`: what the
    memory side needs of each), the cycle the unit has each ready with the beat stream
    always ready, and the workload's output tiles."""
    ready: np.ndarray
    tiles: int

    def run(self, memory: Memory):
        """The memory side of these beats against ``memory`` (:func:`.model.memory.simulate`)."""
        return simulate(self.ready, self.requests, self.sector_bytes, self.wavefronts, self.operations,
                        self.smem_bytes, memory, self.merged_into, **self.after_arrays())


def beats_of(name: "str | Workload", config: UnitConfig, granule: int = LINE_BYTES,
             issuer: Issuer | None = None, coalesce: int = 0) -> Beats:
    """The beats of workload ``name`` (a built-in's name, or a :class:`.workloads.Workload`)
    on a unit of ``config``, its requests offered back to back or as ``issuer`` says, read
    requests coalesced across ``coalesce`` beats (:func:`.model.memory.coalesce_requests`)."""
    w = name if isinstance(name, Workload) else workload(name)
    images, valid, fields_ = w.stream(config)
    gaps = issuer.gaps(fields_) if issuer is not None else [0] * len(fields_)
    timing = predict_scenario(config, images, valid, fields_, gaps, [1])
    copies = [(transactions(w.maps[slot], req), req.operation, w.maps[slot].info.unit_smem_bytes,
               bin(req.multicast_mask).count("1")) for slot, req in w.requests]
    m = memory_beats(copies, config.lanes, granule, coalesce)
    beats = Beats(**{f.name: getattr(m, f.name) for f in fields(MemoryBeats)},
                  ready=timing.beat_cycles.astype(np.int64), tiles=w.tiles)
    assert len(beats.ready) == len(beats.requests), "the timing model's beats are not the transactions'"
    return beats


@dataclass(frozen=True)
class MemoryRow:
    workload: str
    lanes: int
    latency: int
    in_flight: int
    path_bytes_per_cycle: float     # the request path's rate (memory.bytes_per_cycle)
    carry: bool                     # the request path carries a part-used cycle to the next beat
    requests_per_tile: float
    sectors_per_tile: float
    sector_efficiency: float        # bytes the copy uses / sector bytes requested
    wavefronts_per_beat: float
    cycles: int
    bytes_per_cycle: float          # shared-memory bytes a cycle, over the whole run
    fraction_of_128: float
    fraction_of_peak: float         # of peak(lanes, memory): the lanes' 16 B a cycle each, or the path's rate if lower
    stalled_cycles: int             # cycles beats waited on a credit (or a store on the read port)
    little_bytes_per_cycle: float   # Little's law's bound for the same latency and credits
    sms: int = 1                    # SMs streaming at once, sharing the L2 and the HBM (memory.sms)
    hit_rate: float = 1.0           # beats that hit in L2 (memory.hit_rate)


def peak(lanes: int, memory: Memory, landing: float = 1.0) -> float:
    """The most a unit of ``lanes`` lanes lands in its SM's shared memory a cycle behind
    ``memory``: 16 bytes a lane (the port takes one beat a cycle), or the request path's
    rate if that is lower (with the GPU around the SM, its share: hits at the L2's rate and
    misses at the HBM's, in the hit rate's proportion) times ``landing``, the bytes that
    land per byte of the unit's own beats (:attr:`.model.timing.MemoryBeats.landing`:
    above 1 where the cluster multicasts into the SM)."""
    hit, miss = memory.rates()
    share = Fraction(repr(memory.hit_rate)) if isinstance(memory.hit_rate, float) else Fraction(memory.hit_rate)
    return float(min(16 * lanes, 1 / (share / hit + (1 - share) / miss) * Fraction(landing)))


def little(in_flight: int, latency: int, bytes_per_request: float, peak: float) -> float:
    """Little's law: ``in_flight`` requests of ``bytes_per_request`` each, a request's
    credit held for ``latency + 1`` cycles (back the cycle after it returns), carry at most
    ``in_flight * bytes_per_request / (latency + 1)`` bytes a cycle, and never more than
    the unit's ``peak``."""
    return min(peak, in_flight * bytes_per_request / (latency + 1))


def _row(name, lanes, beats: Beats, memory: Memory) -> MemoryRow:
    run = beats.run(memory)
    requests, sectors = int(beats.requests.sum()), int(beats.sector_bytes.sum()) // SECTOR_BYTES
    top = peak(lanes, memory, beats.landing)
    per_request = beats.smem_bytes / requests if requests else 0.0
    return MemoryRow(name, lanes, memory.latency, memory.in_flight, float(memory.rate), memory.carries,
                     requests / beats.tiles, sectors / beats.tiles,
                     beats.used_bytes / (sectors * SECTOR_BYTES) if sectors else 1.0,
                     float(beats.wavefronts.mean()) if len(beats.wavefronts) else 0.0, run.cycles,
                     run.bytes_per_cycle(), run.bytes_per_cycle() / SMEM_BYTES_PER_CYCLE,
                     run.bytes_per_cycle() / top, run.stalled,
                     little(memory.in_flight, memory.latency, per_request, top), memory.sms, memory.hit_rate)


def beats_behind(work, lanes: int, issuer: Issuer | None, memory: dict) -> Beats:
    """:func:`beats_of` with the granule and the coalescer's window of ``memory``, the
    :class:`.model.memory.Memory` parameters of a sweep."""
    return beats_of(work, UnitConfig(lanes=lanes), memory.get("granule", LINE_BYTES), issuer, memory.get("coalesce", 0))


def sweep(workloads: list, lanes: list[int], latencies=LATENCIES, in_flight=IN_FLIGHT, progress=None,
          issuer: Issuer | None = None, **memory) -> list[MemoryRow]:
    """Every workload (a built-in's name or a :class:`.workloads.Workload`) x lanes x
    latency x in-flight point; ``memory``, the other :class:`.model.memory.Memory`
    parameters, the same at every point; ``issuer``, how the requests reach the unit."""
    rows = []
    for work in workloads:
        name = work.name if isinstance(work, Workload) else work
        for n in lanes:
            beats = beats_behind(work, n, issuer, memory)
            for latency in latencies:
                for credits in in_flight:
                    memory_point = Memory(latency=latency, in_flight=credits, **memory)
                    rows.append(_row(name, n, beats, memory_point))
                    if progress:
                        progress()
    return rows


def in_flight_for(name, lanes: int, latency: int, fraction: float, issuer: Issuer | None = None, **memory) -> int:
    """The fewest requests in flight with which workload ``name`` (a name or a
    :class:`.workloads.Workload`) on ``lanes`` lanes reaches ``fraction`` of its own peak
    (:func:`peak`: 16 bytes a lane a cycle, or the request path's rate if lower, with
    what multicast lands in the SM) at
    ``latency`` (a bisection over the credits; 0 if no credit count reaches it);
    ``memory``, the other :class:`.model.memory.Memory` parameters."""
    if not 0 < fraction <= 1:
        from .model.errors import ErrorCode, TmaError
        raise TmaError(ErrorCode.ENUM_RANGE, "bisect", fraction, "is outside (0, 1]")
    beats = beats_behind(name, lanes, issuer, memory)

    def memory_of(credits):
        return Memory(latency=latency, in_flight=credits, **memory)
    target = fraction * peak(lanes, memory_of(1), beats.landing)

    def reaches(credits):
        return beats.run(memory_of(credits)).bytes_per_cycle() >= target

    least = max(1, int(beats.requests.max()) if len(beats.requests) else 1)    # a beat's requests issue together
    high = max(least, int(beats.requests.sum()))
    if not reaches(high):
        return 0
    low = least - 1         # reaches(low) is false (or too few for a beat), reaches(high) true
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def write_l2_trace(work, lanes: int, memory: Memory, path: Path, issuer: Issuer | None = None) -> Path:
    """The L2 requests of workload ``work`` (a name or a :class:`.workloads.Workload`) on
    ``lanes`` lanes behind ``memory``, a line per sector in DRAMsim3's trace format
    (:meth:`.model.memory.IssuedRequests.trace_lines`): a file another memory simulator
    reads as the unit's traffic, at the cycles this model issues it."""
    beats = beats_behind(work, lanes, issuer, {"granule": memory.granule, "coalesce": memory.coalesce})
    run = beats.run(memory)
    path.write_text("".join(line + "\n" for line in beats.issued.trace_lines(run.issue)))
    return path


def write_csv(rows: list[MemoryRow], path: Path) -> None:
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, [f.name for f in fields(MemoryRow)])
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(row).items()})


def write_json(rows: list, path: Path, parameters: dict, **more) -> None:
    """``rows`` (any dataclass rows: the CSV's, unrounded) as JSON, with the sweep's
    ``parameters`` beside them: ``{"parameters": ..., "rows": [...], **more}``."""
    with open(path, "w") as out:
        json.dump({"parameters": parameters, "rows": [asdict(row) for row in rows], **more}, out, indent=1)
        out.write("\n")


def plot_bandwidth(rows: list[MemoryRow], path: Path) -> Path:
    """Achieved bytes a cycle against latency: a row of panels per workload, one per lane
    count, a line per in-flight limit, Little's law dashed beside each."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(dict.fromkeys(r.workload for r in rows))
    lane_counts = sorted({r.lanes for r in rows})
    credits_all = sorted({r.in_flight for r in rows})
    figure, axes = plt.subplots(len(names), len(lane_counts), figsize=(3.6 * len(lane_counts) + 1.6, 2.9 * len(names)),
                                sharex=True, squeeze=False)
    for row_axes, name in zip(axes, names):
        for ax, lanes in zip(row_axes, lane_counts):
            points = [r for r in rows if r.workload == name and r.lanes == lanes]
            for index, credits in enumerate(credits_all):
                line = sorted((r for r in points if r.in_flight == credits), key=lambda r: r.latency)
                colour = f"C{index}"
                ax.plot([r.latency for r in line], [r.bytes_per_cycle for r in line], "o-", color=colour, markersize=3,
                        label=f"{credits} in flight")
                ax.plot([r.latency for r in line], [r.little_bytes_per_cycle for r in line], "--", color=colour,
                        alpha=0.5)
            ax.axhline(16 * lanes, color="grey", linewidth=0.8)
            ax.set_ylim(0, 16 * lanes * 1.08)
            ax.set_title(f"{name}, lanes {lanes}", fontsize=9)
            ax.grid(alpha=0.3)
        row_axes[0].set_ylabel("bytes / cycle")
    for ax in axes[-1]:
        ax.set_xlabel("memory latency (cycles)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="center right", fontsize=8, title="solid: measured\ndashed: Little's law",
                  title_fontsize=8)
    figure.suptitle("Bytes per cycle against memory latency and requests in flight (grey: the peak)")
    figure.tight_layout(rect=(0, 0, 1 - 1.5 / figure.get_figwidth(), 1))
    figure.savefig(path, dpi=80)
    plt.close(figure)
    return path


#: The box widths (bytes) of the wavefront and consumer tables, each where the swizzle allows it.
TABLE_WIDTHS = (16, 32, 64, 96, 128, 256)


def _fp16_boxes():
    """``(swizzle, width, map)`` for each swizzle and each of :data:`TABLE_WIDTHS` it
    allows: an fp16 box of 64 rows of ``width`` bytes in a 4096 x 4096 tensor."""
    from .model import MapKind, DataType, Swizzle, TensorMap
    from .model.tensormap import dense_strides
    dims = (4096, 4096)
    for swizzle in Swizzle:
        span = swizzle.span if swizzle != Swizzle.NONE else 256
        for width in TABLE_WIDTHS:
            if width <= span:
                yield swizzle, width, TensorMap(MapKind.TILED, DataType.FLOAT16, 0x1000_0000, dims,
                                                tuple(dense_strides(dims, 2)), (width // 2, 64), (1, 1),
                                                swizzle=swizzle)


def wavefront_table(lanes_list=(1, 2, 4, 8)) -> list[dict]:
    """Mean and worst shared-memory wavefronts per beat of an fp16 load of 64 rows, for
    each swizzle and box width (bytes) it allows, at each lane count, with the
    destination on a 1024-byte boundary and on the least alignment the swizzle allows."""
    from .model import Operation, Request, TmaError
    from .model.swizzle import smem_alignment
    table = []
    for swizzle, width, tm in _fp16_boxes():
        for alignment in (1024, smem_alignment(swizzle)):
            try:
                t = transactions(tm, Request(Operation.LOAD, (0, 0), smem_address=alignment))
            except TmaError:        # a width the swizzle's rules refuse
                continue
            for lanes in lanes_list:
                wf = smem_wavefronts(t, lanes, tm.info.unit_smem_bytes, Operation.LOAD)
                table.append({"swizzle": swizzle.name, "width": width, "alignment": alignment, "lanes": lanes,
                              "mean": float(wf.mean()), "worst": int(wf.max())})
    return table


#: The consumer table's stream: this many loads of one box, into four stages.
CONSUMER_LOADS = 16


def consumer_table(lanes_list=(1, 2, 4, 8), reads: int = 1, **memory) -> list[dict]:
    """For each swizzle and box width it allows (the fp16 boxes of 64 rows of
    :func:`wavefront_table`, on 1024-byte boundaries) and each lane count: the wavefronts
    of the unit's writes per beat and of a consumer's 8-row matrix reads per read, and the
    bytes a cycle :data:`CONSUMER_LOADS` loads of the box reach without a consumer and
    with one reading each byte ``reads`` times on the same shared-memory port; ``memory``,
    the other :class:`.model.memory.Memory` parameters (default: a memory that never
    binds, one cycle and credits enough, so that the table shows the shared-memory port)."""
    from .model import Operation, Request
    from .model.memory import matrix_read_wavefronts
    memory = {"latency": 1, "in_flight": 4096, **memory}
    table = []
    for swizzle, width, tm in _fp16_boxes():
        stage = -(-64 * width // 1024) * 1024
        requests = tuple((0, Request(Operation.LOAD, (0, 64 * i), smem_address=(i % 4) * stage))
                         for i in range(CONSUMER_LOADS))
        work = Workload(f"{swizzle.name}-{width}", "", (tm,), requests, CONSUMER_LOADS)
        matrix = matrix_read_wavefronts(transactions(tm, requests[0][1]))
        for lanes in lanes_list:
            beats = beats_of(work, UnitConfig(lanes=lanes))
            alone, shared = (beats.run(Memory(consumer_reads=n, **memory)).bytes_per_cycle() for n in (0, reads))
            table.append({"swizzle": swizzle.name, "width": width, "lanes": lanes, "reads": reads,
                          "write_wavefronts_per_beat": float(beats.wavefronts.mean()),
                          "read_wavefronts_per_read": float(matrix.mean()),
                          "bytes_per_cycle": alone, "bytes_per_cycle_with_consumer": shared})
    return table


def plot_consumer(table: list[dict], path: Path) -> Path:
    """Bytes a cycle with the consumer reading the image, per swizzle and box width, a
    panel per lane count."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lane_counts = sorted({r["lanes"] for r in table})
    swizzles = list(dict.fromkeys(r["swizzle"] for r in table))
    widths = sorted({r["width"] for r in table})
    figure, axes = plt.subplots(1, len(lane_counts), figsize=(max(7.0, 3.4 * len(lane_counts) + 1), 4.2),
                                squeeze=False)
    step = 0.8 / len(widths)
    for ax, lanes in zip(axes[0], lane_counts):
        for k, width in enumerate(widths):
            values = [next((r["bytes_per_cycle_with_consumer"] for r in table
                            if r["lanes"] == lanes and r["swizzle"] == s and r["width"] == width), 0) for s in swizzles]
            ax.bar(np.arange(len(swizzles)) + k * step, values, step, label=f"{width} B rows", color=f"C{k}")
        ax.axhline(16 * lanes, color="grey", linewidth=0.8)
        ax.set_xticks(np.arange(len(swizzles)) + 0.4 - step / 2, swizzles, rotation=40, ha="right", fontsize=7)
        ax.set_title(f"lanes {lanes}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("bytes / cycle with the consumer")
    axes[0][-1].legend(fontsize=7)
    figure.suptitle("Loads with a consumer's 8-row matrix reads on the same shared-memory port\n"
                    "(an fp16 box of 64 rows; grey: the lanes' peak)", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


def plot_wavefronts(table: list[dict], path: Path) -> Path:
    """Mean wavefronts per beat, per swizzle and box width, at the largest lane count: the
    destination on a 1024-byte boundary, and on the least the swizzle allows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lanes = max(r["lanes"] for r in table)
    swizzles = list(dict.fromkeys(r["swizzle"] for r in table))
    widths = sorted({r["width"] for r in table})
    figure, axes = plt.subplots(1, 2, figsize=(13, 4), sharey=True)
    step = 0.8 / len(widths)
    for ax, least in zip(axes, (False, True)):
        rows = [r for r in table if r["lanes"] == lanes and (r["alignment"] != 1024) == least]
        for k, width in enumerate(widths):
            values = [next((r["mean"] for r in rows if r["swizzle"] == s and r["width"] == width), 0)
                      for s in swizzles]
            ax.bar(np.arange(len(swizzles)) + k * step, values, step, label=f"{width} B rows", color=f"C{k}")
        ax.set_xticks(np.arange(len(swizzles)) + 0.4 - step / 2, swizzles, rotation=20, fontsize=8)
        ax.set_title("destination at the least alignment the swizzle allows" if least
                     else "destination on a 1024-byte boundary", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel(f"wavefronts per beat (lanes {lanes})")
    axes[1].legend(fontsize=8)
    figure.suptitle("Shared-memory wavefronts per beat of an fp16 load of 64 rows (1: conflict-free)")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
