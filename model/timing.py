"""The unit's timing: the cycle every beat and completion of a request sequence leaves the
RTL, for a configuration, the idle gaps between requests and a ready pattern on the beat
stream. Written from the RTL's documented structure (docs/architecture.md, "Timing"),
not from its output; tests/test_timing.py checks it against the RTL cycle for cycle.

The structure it models:

* the front end is a chain of ``FRONT_END_STAGES`` registers that moves when its last
  register (the job) is empty or taken; a request is accepted in a cycle it moves;
* the walker holds one job; it emits one record per pipeline step (a beat of ``lanes``
  chunks, or, for a rejected request, a single record without a beat) and takes the next
  job in the step that emits the current job's last record;
* behind the walker, ``BACK_END_STAGES`` registers (the walker's output register and
  datapath stages A, B and the output) move together in a step: in every cycle whose
  output register is empty, holds a record without a beat, or holds a beat that is taken
  (ready high);
* a completion is written to the completion FIFO when its job's last record leaves, and
  is offered ``COMPLETION_LATENCY`` cycles later (the completion stream is always ready
  in a run).

The same conventions as the compiled run loop (sim/native.py): cycle 0 is the first cycle
of the run; request ``i`` is offered after ``gaps[i]`` idle cycles counted from the cycle
after request ``i - 1`` was taken; the beat stream is ready in cycle ``c`` when
``ready[c % len(ready)]``. A run ends in the cycle after the last completion.

Speed: a long job in steady state (every back-end register holding a beat, the front end
frozen behind a full job register or idle) is stepped over in one move, with the cycles
of its beats read from the ready pattern's prefix counts, so the cost is per job, not per
cycle (bench/timing_speed.py).
"""

from dataclasses import dataclass

import numpy as np

from .config import UnitConfig
from .unit import check
from .types import CHUNK_BYTES

__all__ = ["FRONT_END_STAGES", "BACK_END_STAGES", "COMPLETION_LATENCY", "Timing", "ReadyPattern",
           "records_of", "records_from", "predict", "predict_scenario"]

#: Registers from the request to the job register: accept + snapshot, decode (two),
#: products and rows, box bytes and radices, rules, the first broken rule (the job).
FRONT_END_STAGES = 9
#: Registers from the walker to the beat stream: walk, datapath A1, A2, B1, B2, output.
BACK_END_STAGES = 7
#: Cycles from the last record leaving to its completion being offered: Amaranth's
#: SyncFIFOBuffered is a FIFO whose entry is readable the cycle after its write, plus an
#: output register (one more).
COMPLETION_LATENCY = 2


@dataclass(frozen=True)
class Timing:
    """When things left the unit. ``beat_cycles``: every beat, in order; ``beat_jobs``:
    the request each beat belongs to; ``completion_cycles``: per request, in order;
    ``cycles``: the cycles the run took."""
    beat_cycles: np.ndarray
    beat_jobs: np.ndarray
    completion_cycles: np.ndarray
    cycles: int

    @property
    def beats(self) -> int:
        return len(self.beat_cycles)


class ReadyPattern:
    """A periodic ready pattern, numbered by its high cycles: the ``k``-th high cycle (from
    0) is where the ``k``-th taken beat could leave."""

    def __init__(self, ready):
        pattern = np.asarray(ready, dtype=np.uint8) != 0
        if not pattern.any():
            raise ValueError("ready pattern: never ready, so no beat would ever leave")
        self.pattern = pattern.tolist()
        self.period = len(pattern)
        self.high_array = np.flatnonzero(pattern).astype(np.int64)
        self.high = self.high_array.tolist()                    # high cycles in one period
        self.per_period = len(self.high)
        self.before = [0] + np.cumsum(pattern).tolist()        # highs in [0, i) of a period

    def __getitem__(self, cycle: int) -> bool:
        return self.pattern[cycle % self.period]

    def count_before(self, cycle: int) -> int:
        """High cycles in ``[0, cycle)``."""
        whole, part = divmod(cycle, self.period)
        return whole * self.per_period + self.before[part]

    def nth_high(self, index: int) -> int:
        """Cycle of the ``index``-th high cycle."""
        whole, part = divmod(index, self.per_period)
        return whole * self.period + self.high[part]

    def nth_highs(self, index: np.ndarray) -> np.ndarray:
        """:meth:`nth_high` of every element of an array."""
        whole, part = np.divmod(index, self.per_period)
        return whole * self.period + self.high_array[part]


def records_of(image, fields: dict, config: UnitConfig) -> tuple[int, bool]:
    """The walker records a request makes and whether they carry beats: ceil(chunks /
    lanes) beats for a legal request, one record without a beat for a rejected one."""
    return records_from(*check(image, fields, config), config)


def records_from(status, transaction_bytes: int, config: UnitConfig) -> tuple[int, bool]:
    """:func:`records_of` from a completion's status and byte count already at hand."""
    if status:
        return 1, False
    chunks = transaction_bytes // CHUNK_BYTES
    return -(-chunks // config.lanes), True


def predict(records: list[tuple[int, bool]], gaps, ready, max_cycles: int = 1 << 62, skip: bool = True) -> Timing:
    """Beat and completion cycles of a request sequence. ``records``: per request, what
    :func:`records_of` says; ``gaps``: idle cycles before each request; ``ready``: the beat
    stream's ready pattern. ``skip``: step over steady stretches (False: every cycle
    one by one, the slow reference the fast path is tested against)."""
    ready = ready if isinstance(ready, ReadyPattern) else ReadyPattern(ready)
    count = len(records)
    gaps = [int(g) for g in gaps]
    # beats as runs (first high-cycle number, beats, request): the k-th beat of a run leaves
    # in the pattern's (first + k)-th high cycle
    runs = []
    completion_cycles = [0] * count
    completed = 0

    next_request = 0
    wait = gaps[0] if count else 0
    front = [None] * FRONT_END_STAGES        # request index or None; front[-1] is the job register
    back = [None] * BACK_END_STAGES          # (job, is_beat, last) or None; back[-1] is the output
    busy, job, left, job_beats = False, 0, 0, False
    cycle = 0
    while completed < count and cycle < max_cycles:
        # -- a steady stretch in one move: every back-end register holds a beat and the walker
        #    has more than one record left, so each step is a ready cycle that takes a beat;
        #    the front end must not change meanwhile (frozen behind a full job register, or
        #    empty with no request offered before the stretch ends)
        if skip and busy and job_beats and left > 1 and all(r is not None and r[1] for r in back):
            steps = left - 1
            if front[-1] is None:
                if any(f is not None for f in front[:-1]) or (next_request < count and wait == 0):
                    steps = 0
                elif next_request < count:
                    steps = min(steps, ready.count_before(cycle + wait) - ready.count_before(cycle))
            if steps > 0:
                first = ready.count_before(cycle)
                for k, record in enumerate(reversed(back[-min(steps, BACK_END_STAGES):])):
                    runs.append((first + k, 1, record[0]))
                    if record[2]:
                        completion_cycles[record[0]] = ready.nth_high(first + k) + COMPLETION_LATENCY
                        completed += 1
                if steps > BACK_END_STAGES:
                    runs.append((first + BACK_END_STAGES, steps - BACK_END_STAGES, job))
                back = ([(job, True, False)] * min(steps, BACK_END_STAGES) + back)[:BACK_END_STAGES]
                left -= steps
                end = ready.nth_high(first + steps - 1) + 1
                if next_request < count:
                    wait = max(0, wait - (end - cycle))
                cycle = end
                continue

        # -- one cycle
        offer = next_request < count and wait == 0
        out = back[-1]
        step = out is None or not out[1] or ready[cycle]
        if out is not None and step:
            if out[1]:
                runs.append((ready.count_before(cycle), 1, out[0]))
            if out[2]:
                completion_cycles[out[0]] = cycle + COMPLETION_LATENCY
                completed += 1
        job_ready = step and (not busy or left == 1)
        front_moves = front[-1] is None or job_ready
        taken = offer and front_moves
        if step:
            back = [(job, job_beats, left == 1) if busy else None] + back[:-1]
            if job_ready:
                incoming = front[-1]
                busy = incoming is not None
                if busy:
                    job = incoming
                    left, job_beats = records[incoming]
            elif busy:
                left -= 1
        if front_moves:
            front = [next_request if taken else None] + front[:-1]
        if taken:
            next_request += 1
            wait = gaps[next_request] if next_request < count else 0
        elif not offer and wait > 0:
            wait -= 1
        cycle += 1

    if runs:
        first, length, owner = (np.array(column, dtype=np.int64) for column in zip(*runs))
        starts = np.cumsum(length) - length
        numbers = np.repeat(first - starts, length) + np.arange(int(length.sum()), dtype=np.int64)
        beats, jobs = ready.nth_highs(numbers), np.repeat(owner, length)
    else:
        beats = jobs = np.zeros(0, dtype=np.int64)
    done = np.array(completion_cycles, dtype=np.int64)
    return Timing(beats, jobs, done, int(done.max()) + 1 if count else 0)


def predict_scenario(config: UnitConfig, images: dict, valid_slots: int, requests: list, gaps, ready) -> Timing:
    """:func:`predict` for hardware requests on descriptor images (a co-simulation scenario's
    contents)."""
    records = []
    for fields in requests:
        slot = fields["slot"]
        valid = slot < config.slots and (valid_slots >> slot) & 1
        records.append(records_of(images.get(slot) if valid else None, fields, config))
    return predict(records, gaps, ready)
