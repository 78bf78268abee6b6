"""The unit's timing: the cycle every beat and completion of a request sequence leaves the
RTL, for a configuration, the idle gaps between requests and a ready pattern on the beat
stream. Written from the RTL's documented structure (docs/architecture.md, "Timing"),
not from its output; tests/test_timing.py checks it against the RTL cycle for cycle.

The structure it models:

* the front end is a chain of ``FRONT_END_STAGES`` registers, the last the job register,
  with a skid register beside it; the stages before the job register move in every cycle
  the skid is empty, and a request is accepted in a cycle they move; the job register
  takes the skid's job, else the stages' last, whenever it is empty or taken; when it is
  held while the stages move, their last goes into the skid;
* the walker holds one job; in every cycle it holds a credit it emits one record (a beat
  of ``lanes`` chunks, or, for a rejected request, a single record without a beat) and
  takes the next job in the cycle that emits the current job's last record;
* behind the walker, ``BACK_END_STAGES`` steps that never stall: the walk register,
  datapath stages A0..B2, then the beat queue of ``BEAT_QUEUE`` entries, whose head is
  the beat stream; the head leaves when it is taken (ready high), or at once if it has
  no beat;
* the credit for the next cycle is a register: it is given when the records in stages
  A0..B2 and in the queue after this cycle, plus one for this cycle's credit (the record
  it may have put in the walk register), are fewer than ``BEAT_QUEUE``;
* a completion is written to the completion FIFO when its job's last record leaves the
  queue, and is offered ``COMPLETION_LATENCY`` cycles later (the completion stream is
  always ready in a run).

The same conventions as the compiled run loop (sim/native.py): cycle 0 is the first cycle
of the run; request ``i`` is offered after ``gaps[i]`` idle cycles counted from the cycle
after request ``i - 1`` was taken; the beat stream is ready in cycle ``c`` when
``ready[c % len(ready)]``. A run ends in the cycle after the last completion.

Speed: a long job in steady state (only beats behind the walker, the front end
unchanging, at least ``BACK_END_STAGES`` records on their way so the queue has a beat at
every ready cycle) is stepped over in one move: the records held then follow a recurrence
on the ready pattern alone (:func:`_stretch`), whose state at any cycle the pattern's
prefix counts give, and the beats leave in consecutive ready cycles, so the cost is per
job, not per cycle (bench/timing_speed.py).
"""

from collections import deque
from dataclasses import dataclass

import numpy as np

from .config import UnitConfig
from .unit import check
from .types import CHUNK_BYTES

__all__ = ["FRONT_END_STAGES", "BACK_END_STAGES", "BEAT_QUEUE", "COMPLETION_LATENCY", "Timing", "ReadyPattern",
           "records_of", "records_from", "predict", "predict_scenario"]

#: Registers from the request to the job register: accept + snapshot, decode (two),
#: products and rows, box bytes and radices, rules, the first broken rule (the job).
FRONT_END_STAGES = 9
#: Steps from the walker to the beat stream: the walk register, datapath A0, A1, A2, B1,
#: B2, and the beat queue (first word fall-through: an entry is at its head the cycle
#: after it is written).
BACK_END_STAGES = 7
#: Entries of the beat queue; the walker emits a record only when the records behind it
#: leave room in the queue for one more.
BEAT_QUEUE = 16
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
        self.low = np.flatnonzero(~pattern).tolist()            # low cycles in one period

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

    def nth_low(self, index: int) -> int | None:
        """Cycle of the ``index``-th low cycle (None: the pattern is never low)."""
        if not self.low:
            return None
        whole, part = divmod(index, len(self.low))
        return whole * self.period + self.low[part]

    def count_low_before(self, cycle: int) -> int:
        """Low cycles in ``[0, cycle)``."""
        return cycle - self.count_before(cycle)

    def nth_highs(self, index: np.ndarray) -> np.ndarray:
        """:meth:`nth_high` of every element of an array."""
        if self.per_period == self.period:                  # always ready
            return index
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
    stages = [None] * (FRONT_END_STAGES - 1)    # request index or None, before the job register
    job_register = skid = None
    # behind the walker: the walk register and stages A0..B2 (a record: (job, is_beat,
    # last) or None), then the beat queue
    pipe = [None] * (BACK_END_STAGES - 1)
    queue = deque()
    issue = True
    busy, job, left, job_beats = False, 0, 0, False
    cycle = 0
    while completed < count and cycle < max_cycles:
        # -- a steady stretch in one move: the walker in a long job, only beats behind it,
        #    the front end unchanging, and enough records on their way that the queue has
        #    a beat at every ready cycle (:func:`_stretch`); the beats leave in consecutive
        #    ready cycles, the records of earlier jobs still on their way first
        if skip and busy and job_beats and left > 2 and (skid is not None or (
                all(s is None for s in stages) and (next_request == count or wait > 0))):
            waiting = list(queue) + [r for r in reversed(pipe) if r is not None]    # in leaving order
            held = len(waiting)
            if held >= BACK_END_STAGES and issue == (held < BEAT_QUEUE) and all(r[1] for r in waiting):
                limit = wait if skid is None and next_request < count else None
                stretch = _stretch(ready, cycle, held, left - 2, limit)
                earlier = sum(r[0] != job for r in waiting)
                first = ready.count_before(cycle)
                if stretch is not None and ready.count_before(stretch[0]) - first >= earlier:
                    end, issued, occupied, held_end, issue = stretch
                    for k, record in enumerate(waiting[:earlier]):
                        runs.append((first + k, 1, record[0]))
                        if record[2]:
                            completion_cycles[record[0]] = ready.nth_high(first + k) + COMPLETION_LATENCY
                            completed += 1
                    runs.append((first + earlier, ready.count_before(end) - first - earlier, job))
                    left -= issued
                    ours = (job, True, False)
                    pipe = [ours if slot else None for slot in occupied]
                    queue = deque([ours] * (held_end - sum(occupied)))
                    if next_request < count:
                        wait = max(0, wait - (end - cycle))
                    cycle = end
                    continue

        # -- one cycle
        offer = next_request < count and wait == 0
        # the beat queue's head leaves when the stream takes it (a record without a beat
        # leaves at once); its completion is queued as it leaves
        if queue and (not queue[0][1] or ready[cycle]):
            head = queue.popleft()
            if head[1]:
                runs.append((ready.count_before(cycle), 1, head[0]))
            if head[2]:
                completion_cycles[head[0]] = cycle + COMPLETION_LATENCY
                completed += 1
        # the walker emits a record when it holds a credit, and takes the next job with
        # its current job's last record
        job_ready = issue and (not busy or left == 1)
        emitted = (job, job_beats, left == 1) if issue and busy else None
        if pipe[-1] is not None:
            queue.append(pipe[-1])
        pipe = [emitted] + pipe[:-1]
        # the credit for next cycle: the records in A0..B2 and the queue, with the one in
        # the walk register counted as this cycle's credit, leave room for one more
        issue = sum(r is not None for r in pipe[1:]) + len(queue) + issue < BEAT_QUEUE
        if job_ready:
            busy = job_register is not None
            if busy:
                job = job_register
                left, job_beats = records[job]
        elif emitted is not None:
            left -= 1
        # the front end: its stages move while the skid register is empty
        advance = skid is None
        taken = offer and advance
        if job_register is None or job_ready:
            job_register, skid = (skid, None) if skid is not None else (stages[-1], None)
        elif advance:
            skid = stages[-1]
        if advance:
            stages = [next_request if taken else None] + stages[:-1]
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


def _stretch(ready: ReadyPattern, start: int, held: int, issues_left: int, limit: int | None):
    """The back end's steady stretch from cycle ``start``, in one move: the walker busy on
    one job with ``issues_left`` more records to emit before it must stop (it then has two
    left), ``held`` records behind it (walk register, A0..B2, queue), and the credit equal
    to ``held < BEAT_QUEUE``. ``limit``: cycles the front end stays unchanged (None: for
    ever). Returns ``(end, records issued, occupancy of the walk register and A0..B2,
    records held, credit)`` at the cycle ``end`` the stretch stops, or None if it is too
    short to be worth it.

    With at least ``BACK_END_STAGES`` records held, the queue holds a beat (at most six
    are in the stages), so a beat leaves in every ready cycle, and the records held
    follow ``held' = held + credit - ready`` with ``credit = held < BEAT_QUEUE``. Below
    the queue's size the credit is always given and each low cycle adds one record; from
    the low cycle that fills it on (``full``), the count after a cycle is
    ``BEAT_QUEUE - ready``, so the credit of a cycle is the ready bit of the one before.
    """
    if held >= BEAT_QUEUE:
        full = start                                     # full already: no credit now
    else:
        low = ready.nth_low(ready.count_low_before(start) + BEAT_QUEUE - held - 1)
        full = low if low is not None else None          # None: never full
    # records emitted up to and including the cycle that fills the queue (credit every cycle)
    before = 0 if full is None or held >= BEAT_QUEUE else full + 1 - start

    def credit(t):
        if full is None or t <= full:
            return int(held < BEAT_QUEUE or t > start)
        return int(ready[t - 1])

    def issued(end):
        """Records emitted in cycles ``[start, end)``."""
        if full is None or end - 1 <= full:
            return (end - start) if held < BEAT_QUEUE else 0
        return before + ready.count_before(end - 1) - ready.count_before(full)

    # the last cycle the stretch may end in: ``issues_left`` records emitted, in closed form
    if full is None or (held < BEAT_QUEUE and issues_left <= before):
        end = start + issues_left
    else:
        end = ready.nth_high(issues_left - before + ready.count_before(full)) + 1
    if limit is not None:
        end = min(end, start + limit)
    if end < start + BACK_END_STAGES + 1:              # the stages' occupancy from the formula
        return None
    if full is None or end <= full:
        held_end = held + ready.count_low_before(end) - ready.count_low_before(start)
    else:
        held_end = BEAT_QUEUE - int(ready[end - 1])
    occupied = [credit(end - 1 - k) for k in range(BACK_END_STAGES - 1)]
    return end, issued(end), occupied, held_end, held_end < BEAT_QUEUE


def predict_scenario(config: UnitConfig, images: dict, valid_slots: int, requests: list, gaps, ready) -> Timing:
    """:func:`predict` for hardware requests on descriptor images (a co-simulation scenario's
    contents)."""
    records = []
    for fields in requests:
        slot = fields["slot"]
        valid = slot < config.slots and (valid_slots >> slot) & 1
        records.append(records_of(images.get(slot) if valid else None, fields, config))
    return predict(records, gaps, ready)
