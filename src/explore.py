"""Architecture exploration (``tma-unit explore``): sweep the unit's configuration over
the built-in workloads and report, per point, what it buys (bytes per cycle, cycles per
tile, from the timing model) and what it costs (ECP5 area and Fmax, from synthesis).

Each configuration point is one task: the timing of every workload (model/timing.py,
milliseconds) and the synthesis (src/synth.py, minutes the first time, cached after).
Tasks go to any ``concurrent.futures.Executor``: a local process pool by default; a Dask
cluster's ``client.get_executor()`` runs a large sweep unchanged.
"""

import csv
import itertools
import os
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, asdict, fields
from pathlib import Path

from .model.config import UnitConfig, ALL_MODES
from .model.errors import ErrorCode, TmaError
from .model.memory import SMEM_BYTES_PER_CYCLE
from .model.timing import back_end_stages, commit_cycles, predict, records_from
from .model.unit import check_beats
from .sim.cosim import ready_pattern
from .workloads import WORKLOADS, Workload

__all__ = ["Point", "Row", "evaluate", "stream_patterns", "explore", "write_csv", "plot", "pareto_front", "SM_BYTES_PER_CYCLE"]

#: Shared-memory bandwidth of one Hopper SM, the most a copy unit can use: the memory
#: side's 32 banks of 4 bytes a cycle (model/memory.py, with its source).
SM_BYTES_PER_CYCLE = SMEM_BYTES_PER_CYCLE


@dataclass(frozen=True)
class Point:
    """One configuration of the sweep."""
    lanes: int
    slots: int
    address_width: int = 64
    modes: str = "all"
    swizzles: str = "all"
    addressing: str = "multiply"
    beat_queue: int = UnitConfig.beat_queue
    completion_depth: int = UnitConfig.completion_depth
    checks: str = UnitConfig.checks
    request_interval: int = UnitConfig.request_interval

    def config(self) -> UnitConfig:
        return UnitConfig(lanes=self.lanes, slots=self.slots, address_width=self.address_width,
                          modes=self.modes, swizzles=self.swizzles, addressing=self.addressing,
                          beat_queue=self.beat_queue, completion_depth=self.completion_depth, checks=self.checks,
                          request_interval=self.request_interval)


@dataclass(frozen=True)
class Row:
    """One point on one workload (the CSV's columns)."""
    lanes: int
    slots: int
    address_width: int
    modes: str
    swizzles: str
    addressing: str
    beat_queue: int
    completion_depth: int
    checks: str
    request_interval: int
    ready: str                      # the beat stream: ready probability, or ON:OFF bursts
    completion_ready: str           # the completion stream: 1 (always), or ON:OFF bursts
    request_gap: int
    workload: str
    requests: int
    bytes: int
    cycles: int
    bytes_per_cycle: float
    fraction_of_sm: float           # bytes_per_cycle / SM_BYTES_PER_CYCLE
    cycles_per_tile: float
    luts: int | None
    flip_flops: int | None
    dsps: int | None
    lutram_ports: int | None
    fmax_mhz: float | None
    gbytes_per_second: float | None     # bytes_per_cycle at fmax_mhz


#: The longest burst, stall or gap a sweep takes, in cycles: the timing model steps a
#: stalled completion stream and idle cycles one by one, so a longer one would run for
#: hours rather than fail.
MAX_STREAM_CYCLES = 1 << 16


def stream_patterns(ready_probability: float = 1.0, seed: int = 0, ready_bursts: tuple | None = None,
                    completion_bursts: tuple | None = None, request_gap: int = 0):
    """The streams of a sweep, checked (ENUM_RANGE, naming the value): the beat stream's
    ready pattern (ready with ``ready_probability`` in each cycle, or ``ready_bursts =
    (on, off)``: ready ``on`` cycles then stalled ``off``, repeating; not both) and the
    completion stream's (always ready, or ``completion_bursts``). ``request_gap``: idle
    cycles before each request, checked here too."""
    if not 0 < ready_probability <= 1:      # never ready (0, negative, NaN) would never finish
        raise TmaError(ErrorCode.ENUM_RANGE, "ready", ready_probability, "is outside (0, 1]")
    if ready_bursts is not None and ready_probability != 1:
        raise TmaError(ErrorCode.ENUM_RANGE, "ready", ready_probability, "is given with ready_bursts: one or the other")
    if not 0 <= request_gap <= MAX_STREAM_CYCLES:
        raise TmaError(ErrorCode.ENUM_RANGE, "request_gap", request_gap, f"is outside 0..{MAX_STREAM_CYCLES}")
    patterns = []
    for name, bursts in (("ready_bursts", ready_bursts), ("completion_bursts", completion_bursts)):
        if bursts is None:
            patterns.append(None)
            continue
        on, off = bursts
        if not (1 <= on <= MAX_STREAM_CYCLES and 0 <= off <= MAX_STREAM_CYCLES):
            raise TmaError(ErrorCode.ENUM_RANGE, name, f"{on}:{off}",
                           f"is not ON in 1..{MAX_STREAM_CYCLES} and OFF in 0..{MAX_STREAM_CYCLES} cycles")
        patterns.append([1] * on + [0] * off)
    ready, completion_ready = patterns
    return ready_pattern(seed, ready_probability) if ready is None else ready, completion_ready


def _stream_columns(ready_probability, ready_bursts, completion_bursts) -> tuple[str, str]:
    """The CSV's ``ready`` and ``completion_ready``: a probability, or ``ON:OFF``."""
    return (f"{ready_probability:g}" if ready_bursts is None else "{}:{}".format(*ready_bursts),
            "1" if completion_bursts is None else "{}:{}".format(*completion_bursts))


def evaluate(point: Point, workloads: list, ready_probability: float = 1.0, seed: int = 0,
             synthesis: str = "synth", device: str = "85k", ready_bursts: tuple | None = None,
             request_gap: int = 0, completion_bursts: tuple | None = None) -> list[Row]:
    """Every workload on one configuration. ``synthesis``: "place" (area before place and
    route, and Fmax after), "synth" (area, no Fmax) or "none". The streams are
    :func:`stream_patterns`'s; each request is offered ``request_gap`` idle cycles after
    the one before it was taken. ``workloads``: built-ins' names or
    :class:`.workloads.Workload` objects (a workload file's)."""
    config = point.config()
    ready, completion_ready = stream_patterns(ready_probability, seed, ready_bursts, completion_bursts, request_gap)
    streams = _stream_columns(ready_probability, ready_bursts, completion_bursts)
    area, fmax = None, None
    if synthesis != "none":
        from .synth import synthesize
        # area from synthesis at every point, so placed and unplaced points compare (nextpnr's
        # packed count is higher); Fmax from place and route where asked
        area = synthesize(config, device, place=False)
        if synthesis == "place":
            fmax = synthesize(config, device, place=True).fmax_mhz
    rows = []
    for work in workloads:
        work = work if isinstance(work, Workload) else WORKLOADS[work]
        name = work.name
        if not work.served_by(config):
            continue                    # more descriptors, or a mode or swizzle the unit does not build
        images, valid, requests = work.stream(config)
        checks = [check_beats(images[r["slot"]], r, config) for r in requests]
        moved = sum(count for _, count, _ in checks)
        timing = predict([records_from(status, beats) for status, _, beats in checks],
                         [request_gap] * len(requests), ready, beat_queue=config.beat_queue,
                         completion_ready=completion_ready, completion_depth=config.completion_depth,
                         stages=back_end_stages(config), request_interval=config.request_interval)
        # a unit that checks at commit checks the workload's descriptors before its first
        # request: the cycles the SLOT_VALID write waits count against it
        cycles = timing.cycles + commit_cycles(config, bin(valid).count("1"))
        per_cycle = moved / cycles
        rows.append(Row(point.lanes, point.slots, point.address_width, config.modes, config.swizzles,
                        config.addressing, config.beat_queue, config.completion_depth, config.checks,
                        config.request_interval, *streams,
                        request_gap, name,
                        len(requests), moved, cycles,
                        round(per_cycle, 3), round(per_cycle / SM_BYTES_PER_CYCLE, 4),
                        round(cycles / work.tiles, 1),
                        area.luts if area else None, area.flip_flops if area else None,
                        area.dsps if area else None, area.lutram_ports if area else None, fmax,
                        round(per_cycle * fmax / 1000, 2) if fmax else None))
    return rows


def explore(points: list[Point], workloads: list[str] | None = None, executor: Executor | None = None,
            progress: bool = True, place_lanes=None, **options) -> list[Row]:
    """:func:`evaluate` every point (in parallel on ``executor``; default: a process pool
    with one worker per core). Rows come back in the order of ``points``. With
    ``synthesis="place"``, ``place_lanes`` (lane counts) limits place and route to the
    points of those lanes, the others synthesized only: a large unit takes hours to route."""
    workloads = list(workloads or WORKLOADS)
    unknown = [w for w in workloads if not isinstance(w, Workload) and w not in WORKLOADS]
    if unknown:
        raise KeyError(f"no workload {unknown[0]!r}; known: {', '.join(WORKLOADS)}")
    own = executor is None
    executor = executor or ProcessPoolExecutor(max_workers=min(len(points), os.cpu_count() or 1))
    try:
        def options_of(point):
            if options.get("synthesis") == "place" and place_lanes is not None and point.lanes not in place_lanes:
                return {**options, "synthesis": "synth"}
            return options
        futures = {executor.submit(evaluate, point, workloads, **options_of(point)): i
                   for i, point in enumerate(points)}
        results = [None] * len(points)
        done = as_completed(futures)
        if progress:
            from tqdm import tqdm
            done = tqdm(done, total=len(futures), desc="configurations", unit="point")
        for future in done:
            results[futures[future]] = future.result()
    finally:
        if own:
            executor.shutdown()
    return list(itertools.chain.from_iterable(results))


def write_csv(rows: list[Row], path: Path) -> None:
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, [f.name for f in fields(Row)])
        writer.writeheader()
        writer.writerows(asdict(row) for row in rows)


def _key(row: Row) -> tuple:
    """A row's configuration."""
    return (row.lanes, row.slots, row.address_width, row.modes, row.swizzles, row.addressing, row.beat_queue,
            row.completion_depth, row.checks, row.request_interval)


def _label(key: tuple) -> str:
    """A configuration's name: its lanes, then :func:`_option_label`."""
    lanes = key[0]
    return f"{lanes} lane{'s' if lanes > 1 else ''}, " + _option_label(key)


def _option_label(key: tuple) -> str:
    """What a configuration builds besides its lanes: slots, address width, modes,
    swizzles, addressing, queue depths, where the rules are checked, the request interval."""
    _, slots, width, modes, swizzles, addressing, beat_queue, completion_depth, checks, interval = key
    text = f"{slots} slots"
    if width != 64:
        text += f", {width}-bit"
    text += ", every mode" if modes == ALL_MODES else f", {modes}"
    if swizzles != "all":
        text += f", {swizzles} swizzles"
    if addressing != "multiply":
        text += f", {addressing} addressing"
    if beat_queue != UnitConfig.beat_queue:
        text += f", {beat_queue}-entry beat queue"
    if completion_depth != UnitConfig.completion_depth:
        text += f", {completion_depth}-entry completion queue"
    if checks != UnitConfig.checks:
        text += ", rules checked at commit"
    if interval != UnitConfig.request_interval:
        text += f", a job every {interval} cycles"
    return text


def pareto_front(points: list[tuple]) -> list[tuple]:
    """The (area, bandwidth, ...) points no other point beats: none with less or equal
    area has more bandwidth. In order of area."""
    front, best = [], float("-inf")
    for point in sorted(points, key=lambda p: (p[0], -p[1])):
        if point[1] > best:
            front.append(point)
            best = point[1]
    return front


def plot(rows: list[Row], folder: Path) -> list[Path]:
    """Two PNGs: bandwidth against area (one marker per configuration: its bytes per
    cycle averaged over the workloads every configuration of the sweep serves, the Pareto
    front drawn through the points no smaller one beats, Fmax written beside each point
    placed and routed), and bandwidth per workload (one bar per configuration)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    configs = sorted({_key(r) for r in rows})
    common = set.intersection(*({r.workload for r in rows if _key(r) == c} for c in configs)) if configs else set()
    written = []

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    points = []
    for c in configs:
        mine = [r for r in rows if _key(r) == c and r.workload in common]
        if not mine or mine[0].luts is None:
            continue
        points.append((mine[0].luts, sum(r.bytes_per_cycle for r in mine) / len(mine), c, mine[0].fmax_mhz))
    options = list(dict.fromkeys(_option_label(c) for _, _, c, _ in points))      # a colour each
    for k, option in enumerate(options):
        mine = [p for p in points if _option_label(p[2]) == option]
        ax.scatter([p[0] for p in mine], [p[1] for p in mine], s=50, color=f"C{k}", label=option, zorder=3)
    # a label a line above the last where points of one lane count lie closer than a
    # label's width (about a tenth of the axis)
    span = max((p[0] for p in points), default=0) - min((p[0] for p in points), default=0)
    level, last = 0, None
    for area, mean, c, fmax in sorted(points, key=lambda p: (p[2][0], p[0])):
        level = level + 1 if last and last[0] == c[0] and area - last[1] < 0.1 * span else 0
        last = (c[0], area)
        text = f"{c[0]}" + ("" if fmax is None else f", {fmax:.0f} MHz")
        ax.annotate(text, (area, mean), textcoords="offset points", fontsize=7,
                    color=f"C{options.index(_option_label(c))}", xytext=(6, -12 + 9 * level))
    front = pareto_front(points)
    if len(front) > 1:
        ax.plot([p[0] for p in front], [p[1] for p in front], color="black", linewidth=1, linestyle=":",
                label="Pareto front")
    if points:
        # below the axes, so that it covers no point
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, title="numbers: lanes",
                  title_fontsize=7)
    # one SM's bandwidth, where the points come near it (else it squashes them to the axis)
    if points and max(p[1] for p in points) >= SM_BYTES_PER_CYCLE / 2:
        ax.axhline(SM_BYTES_PER_CYCLE, color="grey", linestyle="--", linewidth=1)
        ax.text(ax.get_xlim()[0], SM_BYTES_PER_CYCLE, " one SM's shared memory, 128 B/cycle", va="bottom",
                fontsize=8)
    ax.set_xlabel("ECP5 logic cells (LUT4s, carry cells as two)")
    ax.set_ylabel(f"bytes per cycle (mean over {len(common)} workloads)")
    ax.set_ylim(bottom=0)           # room for the lowest points' labels, and no bandwidth below 0
    ax.set_title("Copy unit bandwidth against area")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    written.append(folder / "bandwidth-vs-area.png")
    fig.savefig(written[-1], dpi=110, bbox_inches="tight")
    plt.close(fig)

    names = list(dict.fromkeys(r.workload for r in rows))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / max(1, len(configs))
    for k, c in enumerate(configs):
        values = {r.workload: r.bytes_per_cycle for r in rows if _key(r) == c}
        xs = [i + k * width for i, n in enumerate(names) if n in values]
        # twenty distinct colours before any repeats (the default cycle has ten)
        ax.bar(xs, [values[n] for n in names if n in values], width, label=_label(c), color=plt.cm.tab20(k % 20))
    ax.set_xticks([i + width * (len(configs) - 1) / 2 for i in range(len(names))], names, rotation=15, fontsize=8)
    if any(r.bytes_per_cycle >= SM_BYTES_PER_CYCLE / 2 for r in rows):
        ax.axhline(SM_BYTES_PER_CYCLE, color="grey", linestyle="--", linewidth=1)
    ax.set_ylabel("bytes per cycle")
    ax.set_title("Bandwidth per workload")
    # below the workloads' names, so that it covers no bar
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    written.append(folder / "bandwidth-per-workload.png")
    fig.savefig(written[-1], dpi=110, bbox_inches="tight")
    plt.close(fig)
    return written
