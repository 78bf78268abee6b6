"""The unit's timing: the cycle every beat and completion of a request sequence leaves the
RTL, for a configuration, the idle gaps between requests and a ready pattern on the beat
stream. Written from the RTL's documented structure (docs/architecture.md, "Timing"),
not from its output; tests/test_timing.py checks it against the RTL cycle for cycle.

The structure it models:

* the front end is a chain of ``FRONT_END_STAGES[interval]`` registers at a request
  interval of ``interval`` (``UnitConfig.request_interval``), the last the job register
  the walker takes from; a request is accepted in a cycle the stages before the job
  register move. With 1 a skid register is beside the job register; the stages move in
  every cycle the skid is empty; the job register takes the skid's job, else the stages'
  last, whenever it is empty or taken; when it is held while the stages move, their
  last goes into the skid. With 2 the job register is the last stage itself: the stages
  move in every cycle it is empty, and it empties when the walker takes its job;
* the walker holds one job; in every cycle it holds a credit it emits one record (a beat
  of up to ``lanes`` chunks of one row, or, for a rejected request, a single record
  without a beat) and
  takes the next job in the cycle that emits the current job's last record;
* behind the walker, ``BACK_END_STAGES`` steps that never stall: the walk register,
  datapath stages A0..B2 (with a request former, :data:`.config.FORMER_STAGES` more:
  its five stages, :func:`back_end_stages`), then the beat queue
  of ``beat_queue`` entries (the configuration's; at least one more than the steps
  before it), whose head is
  the beat stream; the head leaves when it is taken (ready high), or at once if it has
  no beat;
* the credit for the next cycle is a register: it is given when the records in stages
  A0..B2 and in the queue after this cycle, plus one for this cycle's credit (the record
  it may have put in the walk register), are fewer than ``beat_queue``;
* a record with a completion (a job's last) leaves the queue only when the completion
  queue has room; its completion is written to the completion queue as it leaves and is
  offered ``COMPLETION_LATENCY`` cycles later if the queue's output register is free
  (:class:`_CompletionQueue`), and taken when the completion stream is ready (always,
  unless a ``completion_ready`` pattern is given).

The same conventions as the compiled run loop (sim/native.py): cycle 0 is the first cycle
of the run; request ``i`` is offered after ``gaps[i]`` idle cycles counted from the cycle
after request ``i - 1`` was taken; the beat stream is ready in cycle ``c`` when
``ready[c % len(ready)]``. A run ends in the cycle after the last completion.

Speed: in steady state (the walker holding a job in every cycle, only beats behind it,
at least ``BACK_END_STAGES`` records on their way so the queue has a beat at every ready
cycle) the records held follow a recurrence on the ready pattern alone (:class:`_Schedule`)
whose state at any cycle the pattern's prefix counts give, and the beats leave in
consecutive ready cycles. Such a stretch is stepped over in one move across every job
the walker finds waiting when it finishes one, the front end stepped beside it only
where it moves (one step per job while requests wait), so the cost is a few
microseconds per job and per change of state, not per cycle (bench/timing_speed.py).
"""

from collections import deque
from dataclasses import dataclass

import numpy as np

from .config import UnitConfig, BEAT_QUEUE_RANGE, COMPLETION_DEPTH_RANGE, FORMER_STAGES, REQUEST_INTERVALS
from .layout import decode_descriptor
from .errors import ErrorCode, TmaError
from .memory import (IssuedRequests, Memory, MemoryGate, MemoryRun, coalesce_requests, matrix_read_wavefronts,
                     memory_run, merge, smem_wavefronts)
from .unit import check_beats, complete
from .types import Operation

__all__ = ["FRONT_END_STAGES", "BACK_END_STAGES", "back_end_stages", "COMPLETION_LATENCY", "CHECK_CYCLES",
           "commit_cycles", "Timing", "ReadyPattern", "MemoryBeats", "memory_beats", "scenario_beats", "scenario_copies",
           "predict_memory", "slot_image",
           "records_of", "records_from", "predict", "predict_scenario"]

#: Registers from the request to the job register, the job register included, by request
#: interval: accept + snapshot, decode (two), products and rows, box bytes and radices,
#: rules, the first broken rule, the limits; at 1 the job register after them, at 2 the
#: limits' stage is the job register (the job's code is logic behind it).
FRONT_END_STAGES = {1: 11, 2: 10}
assert set(FRONT_END_STAGES) == set(REQUEST_INTERVALS), "a front end's stages per request interval"
#: Steps from the walker to the beat stream: the walk register, datapath A0, A1, A2, A3,
#: B1, B2, and the beat queue (first word fall-through: an entry is at its head the cycle
#: after it is written).
BACK_END_STAGES = 8
# The walker emits a record only when the records behind it leave room in the beat queue
# for one more; the shallowest queue allowed keeps every stage behind the walker busy.
assert BEAT_QUEUE_RANGE[0] == BACK_END_STAGES + 1, "the least beat queue is not the back end's records"


def back_end_stages(config: UnitConfig) -> int:
    """Steps from the walker to the beat stream in a unit of ``config``:
    :data:`BACK_END_STAGES`, and :data:`.config.FORMER_STAGES` more with a request former
    (one less than ``config.least_beat_queue`` either way)."""
    return BACK_END_STAGES + (FORMER_STAGES if config.request_former else 0)
#: Cycles from the last record leaving to its completion being offered: Amaranth's
#: SyncFIFOBuffered is a FIFO whose entry is readable the cycle after its write, plus an
#: output register (one more).
COMPLETION_LATENCY = 2
# With the completion stream always ready, a completion is inside the completion queue
# for COMPLETION_LATENCY cycles, so the least queue that never stalls the beat queue's head
# holds one more.
assert COMPLETION_DEPTH_RANGE[0] == COMPLETION_LATENCY + 1, "the least completion queue stalls the rate"

#: Cycles the commit checker of a unit that checks at commit (rtl/commit.py) takes per
#: slot: the slot's read, its row registered, the multiplier's first load, four products
#: of a dimension's 32 bits each followed by a cycle that adds it up, the rules' bits,
#: the first broken rule.
CHECK_CYCLES = 3 + 4 * (32 + 1) + 2


def commit_cycles(config: UnitConfig, checked: int) -> int:
    """Cycles a SLOT_VALID write that makes ``checked`` slots valid (bits set that were
    clear, on slots written since reset) is answered later than another register write:
    0 for a unit that checks per request; at commit, a cycle to start and
    :data:`CHECK_CYCLES` per slot, the slots one after another (docs/commit.md). The
    write's answer comes when every check is done, and the bits take then."""
    if not config.checks_at_commit or checked == 0:
        return 0
    return 1 + CHECK_CYCLES * checked


@dataclass(frozen=True)
class Timing:
    """When things left the unit. ``beat_cycles``: every beat, in order; ``beat_jobs``:
    the request each beat belongs to (int32); ``completion_cycles``: per request, in order;
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

    def __init__(self, ready, stream: str = "beat"):
        pattern = np.asarray(ready, dtype=np.uint8) != 0
        if not pattern.any():
            raise ValueError(f"{stream} stream's ready pattern: never ready, so no {stream} would ever leave")
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


def records_of(image, fields: dict, config: UnitConfig) -> tuple[int, bool]:
    """The walker records a request makes and whether they carry beats: its beats for a
    legal request (:func:`.unit.check_beats`), one record without a beat for a rejected
    one."""
    status, _, beats = check_beats(image, fields, config)
    return records_from(status, beats)


def records_from(status, beats: int) -> tuple[int, bool]:
    """:func:`records_of` from a completion's status and beat count already at hand."""
    return (1, False) if status else (beats, True)


class _CompletionQueue:
    """The completion queue, one cycle at a time: Amaranth's SyncFIFOBuffered of ``depth``
    entries, a memory of ``depth - 1`` entries (one written in a cycle is readable in the
    next) and an output register, whose entry is offered to the completion stream and
    taken in a cycle the stream's ``ready`` pattern is high. The memory has room while it
    holds fewer than ``depth - 1``; it moves its oldest entry to the output register in
    a cycle the register is empty or taken."""

    __slots__ = ("size", "memory", "output", "ready")

    def __init__(self, depth: int, ready: "ReadyPattern"):
        self.size, self.memory, self.output, self.ready = depth - 1, deque(), None, ready

    def room(self) -> bool:
        return len(self.memory) < self.size

    def step(self, cycle: int, written: int | None) -> int | None:
        """Cycle ``cycle``, the completion of request ``written`` written in it (None: no
        write). Returns the request whose completion the stream takes in it, or None."""
        ready = self.ready[cycle]
        taken = self.output if ready else None
        if self.memory and (self.output is None or ready):
            self.output = self.memory.popleft()
        elif ready:
            self.output = None
        if written is not None:
            self.memory.append(written)
        return taken


class _FrontEnd:
    """The front end's registers and the request offers, one cycle at a time
    (:meth:`step`) or many at once while the walker takes no job (:meth:`idle`)."""

    __slots__ = ("gaps", "count", "stages", "job_register", "skid", "next_request", "wait", "interval")

    def __init__(self, gaps: list[int], interval: int):
        self.gaps, self.interval = gaps, interval
        self.count = len(gaps)
        self.stages = [None] * (FRONT_END_STAGES[interval] - 1)   # request index or None, before the job register
        self.job_register = self.skid = None
        self.next_request = 0
        self.wait = gaps[0] if gaps else 0

    def step(self, job_ready: bool):
        """One cycle; ``job_ready``: the walker takes the job register's job in it."""
        offer = self.next_request < self.count and self.wait == 0
        if self.interval == 1:
            # the stages move while the skid register is empty
            advance = self.skid is None
            if self.job_register is None or job_ready:
                self.job_register, self.skid = (self.skid, None) if self.skid is not None else (self.stages[-1], None)
            elif advance:
                self.skid = self.stages[-1]
        else:
            # the stages move while the job register, their last, is empty
            advance = self.job_register is None
            if advance:
                self.job_register = self.stages[-1]
            elif job_ready:
                self.job_register = None
        # a request is taken when the stages move
        taken = offer and advance
        if advance:
            self.stages = [self.next_request if taken else None] + self.stages[:-1]
        if taken:
            self.next_request += 1
            self.wait = self.gaps[self.next_request] if self.next_request < self.count else 0
        elif not offer and self.wait > 0:
            self.wait -= 1

    @property
    def frozen(self) -> bool:
        """Whether nothing moves until the walker takes the job register's job."""
        return (self.skid if self.interval == 1 else self.job_register) is not None

    def idle(self, cycles: int):
        """``cycles`` cycles in which the walker takes no job: stepped one by one only while
        something moves toward the job register."""
        while cycles > 0:
            if self.frozen:                             # only the gap counts down
                self.wait = max(0, self.wait - cycles)
                return
            if all(s is None for s in self.stages):
                # empty stages: nothing changes until the next request is taken
                if self.next_request == self.count:
                    return
                if self.wait > 0:
                    skipped = min(self.wait, cycles)
                    self.wait -= skipped
                    cycles -= skipped
                    continue
            self.step(False)
            cycles -= 1


class _Schedule:
    """The back end in steady state from cycle ``start``, in closed form: the walker holds
    a job in every cycle (it emits a record whenever it holds a credit), every record
    behind it is a beat, ``held`` (at least ``stages``, the back end's steps) records are
    behind it (walk register, the stages after it, queue) and the credit equals ``held <
    size``, ``size`` the beat queue's entries.

    The queue then holds a beat at every ready cycle (at most ``stages - 2`` records are
    in the stages), so the beats leave in consecutive ready cycles, and the records held follow
    ``held' = held + credit - ready`` with ``credit = held < size``. Below the
    queue's size the credit is always given and each low cycle adds one record; from the
    low cycle that fills it on (``full``), the count after a cycle is
    ``size - ready``, so the credit of a cycle is the ready bit of the one before.
    """

    def __init__(self, ready: ReadyPattern, start: int, held: int, size: int, stages: int = BACK_END_STAGES):
        self.ready, self.start, self.held, self.size, self.stages = ready, start, held, size, stages
        if held >= size:
            self.full = start                           # full already: no credit now
        else:                                           # None: never full
            self.full = ready.nth_low(ready.count_low_before(start) + size - held - 1)
        # records emitted up to and including the cycle that fills the queue (one a cycle)
        self.before = 0 if self.full is None or held >= size else self.full + 1 - start
        self.highs_before_full = None if self.full is None else ready.count_before(self.full)

    def credit(self, t: int) -> int:
        if self.full is None or t <= self.full:
            return int(self.held < self.size or t > self.start)
        return int(self.ready[t - 1])

    def emission(self, n: int) -> int:
        """The cycle the ``n``-th record (from 1) is emitted in."""
        if self.full is None or n <= self.before:
            return self.start + n - 1
        return self.ready.nth_high(self.highs_before_full + n - self.before - 1) + 1

    def state(self, end: int):
        """(occupancy of the walk register and the stages before the queue, records held,
        credit) at cycle ``end``, at least ``stages`` cycles after the start."""
        assert end >= self.start + self.stages, "the stages' occupancy needs their cycles in the schedule"
        ready = self.ready
        if self.full is None or end <= self.full:
            held = self.held + ready.count_low_before(end) - ready.count_low_before(self.start)
        else:
            held = self.size - int(ready[end - 1])
        occupied = [self.credit(end - 1 - k) for k in range(self.stages - 1)]
        return occupied, held, held < self.size


def predict(records: list[tuple[int, bool]], gaps, ready, max_cycles: int = 1 << 62, skip: bool = True,
            beat_queue: int = UnitConfig.beat_queue, completion_ready=None,
            completion_depth: int = UnitConfig.completion_depth, stages: int = BACK_END_STAGES,
            gate=None, request_interval: int = UnitConfig.request_interval) -> Timing:
    """Beat and completion cycles of a request sequence. ``records``: per request, what
    :func:`records_of` says; ``gaps``: idle cycles before each request; ``ready``: the beat
    stream's ready pattern; ``beat_queue`` and ``completion_depth``: the queues' entries
    (the configuration's); ``completion_ready``: the completion stream's ready pattern
    (None: always ready); ``stages``: the back end's steps (:func:`back_end_stages`);
    ``request_interval``: the front end's (:data:`.config.REQUEST_INTERVALS`). ``skip``:
    step over steady stretches (False: every cycle one by one, the slow reference the
    fast path is tested against); a completion stream that is not always ready is
    stepped every cycle. ``gate``: a memory that holds the beat stream back
    (:class:`.memory.MemoryGate`; the stream is otherwise always ready): each beat is
    taken only from the cycle the gate opens for it, and the gate is told when; stepped
    every cycle."""
    if not stages + 1 <= beat_queue:
        raise ValueError(f"beat_queue: {beat_queue} entries, fewer than the {stages + 1} "
                         "records the back end can hold on their way to it")
    if not COMPLETION_DEPTH_RANGE[0] <= completion_depth:
        raise ValueError(f"completion_depth: {completion_depth} entries, fewer than the {COMPLETION_DEPTH_RANGE[0]} "
                         "a completion a cycle needs")
    ready = ready if isinstance(ready, ReadyPattern) else ReadyPattern(ready)
    if gate is not None:
        if ready.per_period != ready.period:
            raise ValueError("a memory gate holds back a beat stream that is otherwise always ready: the ready "
                             "pattern must be always high")
        skip = False
    taken_beats = 0
    # the completion queue, stepped only when the stream may stall (else a completion is
    # taken COMPLETION_LATENCY cycles after it is written, and steady stretches are skipped)
    completions = None
    if completion_ready is not None:
        if not isinstance(completion_ready, ReadyPattern):
            completion_ready = ReadyPattern(completion_ready, "completion")
        if completion_ready.per_period < completion_ready.period:
            completions, skip = _CompletionQueue(completion_depth, completion_ready), False
    count = len(records)
    # beats as runs (first high-cycle number, beats, request): the k-th beat of a run leaves
    # in the pattern's (first + k)-th high cycle
    runs = []
    completion_cycles = [0] * count
    completed = 0

    if request_interval not in REQUEST_INTERVALS:
        raise ValueError(f"request_interval: {request_interval}, not one of {REQUEST_INTERVALS}")
    front = _FrontEnd([int(g) for g in gaps], request_interval)
    # behind the walker: the walk register and the stages after it (a record: (job,
    # is_beat, last) or None), then the beat queue
    pipe = [None] * (stages - 1)
    queue = deque()
    issue = True
    busy, job, left, job_beats = False, 0, 0, False
    cycle = 0
    while completed < count and cycle < max_cycles:
        # -- a steady stretch in one move, across the jobs the walker takes without a gap
        if skip and busy and job_beats and left >= stages + 1:
            waiting = list(queue) + [r for r in reversed(pipe) if r is not None]    # in leaving order
            held = len(waiting)
            if held >= stages and issue == (held < beat_queue) and all(r[1] for r in waiting):
                cycle, busy, job, left, job_beats, pipe, queue, issue, completed = _steady(
                    ready, beat_queue, stages, cycle, front, records, job, left, waiting, runs, completion_cycles,
                    completed)
                continue

        # -- one cycle
        # the beat queue's head leaves when the stream takes it (a record without a beat
        # leaves at once); its completion is queued as it leaves
        written = None
        if queue and (not queue[0][1] or (ready[cycle] and (gate is None or cycle >= gate.opens(taken_beats)))) and (
                not queue[0][2] or completions is None or completions.room()):
            head = queue.popleft()
            if head[1]:
                runs.append((ready.count_before(cycle), 1, head[0]))
                if gate is not None:
                    gate.take(taken_beats, cycle)
                taken_beats += 1
            if head[2] and completions is None:
                completion_cycles[head[0]] = cycle + COMPLETION_LATENCY
                completed += 1
            elif head[2]:
                written = head[0]
        if completions is not None:
            taken = completions.step(cycle, written)
            if taken is not None:
                completion_cycles[taken] = cycle
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
        issue = sum(r is not None for r in pipe[1:]) + len(queue) + issue < beat_queue
        if job_ready:
            busy = front.job_register is not None
            if busy:
                job = front.job_register
                left, job_beats = records[job]
        elif emitted is not None:
            left -= 1
        front.step(job_ready)
        cycle += 1

    return Timing(*_beat_arrays(runs, ready), *_completions(completion_cycles, count))


def _steady(ready, beat_queue, stages, start, front, records, job, left, waiting, runs, completion_cycles,
            completed):
    """A steady stretch from cycle ``start`` (:class:`_Schedule`): the walker in job
    ``job`` with ``left`` records to emit (at least ``stages + 1``, so the
    stretch outlasts the stages), the beats ``waiting`` behind it. It runs across every
    job the walker finds in the job register as it emits a job's last record, the front
    end stepped beside it (:meth:`_FrontEnd.idle`: one step per job when requests wait),
    and stops in the cycle after the walker takes no job or a rejected request (whose
    record carries no beat). The beats leave in consecutive ready cycles, the ones
    waiting first. Returns the loop's state at that cycle."""
    schedule = _Schedule(ready, start, len(waiting), beat_queue, stages)
    # the records in leaving order, as segments (request, records, the last one is its last)
    segments = [(record[0], 1, record[2]) for record in waiting]
    emitted = 0
    front_cycle = start                                # the front end stands at this cycle's start
    while True:
        emitted += left
        segments.append((job, left, True))
        boundary = schedule.emission(emitted)          # the job's last record; the walker takes the next job
        front.idle(boundary - front_cycle)
        job = front.job_register
        front.step(True)
        front_cycle = boundary + 1
        if job is None or not records[job][1]:
            break
        left = records[job][0]
    end = boundary + 1
    occupied, held, issue = schedule.state(end)

    # the beats that left by the end, and the records still held
    first = ready.count_before(start)
    gone = ready.count_before(end) - first
    assert held == len(waiting) + emitted - gone, "the schedule's count of records held"
    kept = []
    number = 0
    for owner, length, last in segments:
        if number + length <= gone:
            runs.append((first + number, length, owner))
            if last:
                completion_cycles[owner] = ready.nth_high(first + number + length - 1) + COMPLETION_LATENCY
                completed += 1
        else:
            leaving = max(0, gone - number)
            if leaving:
                runs.append((first + number, leaving, owner))
            kept += [(owner, True, False)] * (length - leaving - 1) + [(owner, True, last)]
        number += length
    in_stages = sum(occupied)
    queue = deque(kept[:held - in_stages])
    stages = iter(reversed(kept[held - in_stages:]))   # the newest in the walk register
    pipe = [next(stages) if slot else None for slot in occupied]

    busy = job is not None
    left, job_beats = records[job] if busy else (0, False)
    return end, busy, job if busy else 0, left, job_beats, pipe, queue, issue, completed


@dataclass(frozen=True)
class MemoryBeats:
    """A request sequence's beats, in order, with what the memory side needs of each
    (:mod:`.memory`): its L2 requests, the sector bytes they move, its shared-memory
    wavefronts and its request's operation, the copy it belongs to and, for a load, the
    CTAs its data lands in, its bytes and its copy's consumer read wavefronts; and the
    copies' global bytes used and the bytes written to (or read from) this SM's shared
    memory, every CTA's share of a multicast included."""
    requests: np.ndarray
    sector_bytes: np.ndarray
    wavefronts: np.ndarray
    operations: np.ndarray
    used_bytes: int
    smem_bytes: int
    merged_into: list               # per beat: the earlier requests its coalesced sectors wait for
    copy_index: np.ndarray          # per beat: the copy (request) it belongs to
    multicast_ctas: np.ndarray      # per beat: the CTAs a load's data lands in (1 without multicast)
    beat_bytes: np.ndarray          # per beat: its shared-memory bytes in one CTA
    consumer_wavefronts: np.ndarray  # per beat: the consumer's read wavefronts of its chunks' rows
    issued: "IssuedRequests"        # the requests that reach the memory, in issue order

    def gate(self, memory: "Memory") -> "MemoryGate":
        return MemoryGate(self.requests, self.sector_bytes, self.wavefronts, self.operations, memory)

    def after(self, gate: "MemoryGate", departure) -> "MemoryRun":
        """The memory side of beats that left at ``departure`` through ``gate``."""
        return memory_run(gate, departure, self.wavefronts, self.operations, self.smem_bytes,
                          merged_into=self.merged_into, **self.after_arrays())

    def after_arrays(self) -> dict:
        """The per-beat arrays :func:`.memory.memory_run` takes for multicast and the consumer."""
        return {"copy_index": self.copy_index, "multicast_ctas": self.multicast_ctas, "beat_bytes": self.beat_bytes,
                "consumer_wavefronts": self.consumer_wavefronts}

    @property
    def landing(self) -> float:
        """Shared-memory bytes that land in this SM per byte of its own beats: above 1
        where the cluster's other CTAs multicast their shares into it."""
        own = int(self.beat_bytes.sum())
        return self.smem_bytes / own if own else 1.0


def memory_beats(copies, lanes: int, granule: int, coalesce: int = 0) -> MemoryBeats:
    """The :class:`MemoryBeats` of copies (``(transactions, operation, unit_smem_bytes,
    multicast_ctas)`` each, the last optional: the bits of a multicast load's CTA mask, 0
    or 1 without; in order; a copy without transactions makes no beat) on a unit of
    ``lanes`` lanes, requests merged into ``granule``-byte granules, and read requests
    coalesced across ``coalesce`` beats (:func:`.memory.coalesce`)."""
    listed = []
    per_beat = {name: [np.zeros(0, np.int64)] for name in ("wavefronts", "operations", "copy_index", "ctas",
                                                           "beat_bytes", "consumer")}
    used = smem = first = 0
    for index, (t, operation, unit_smem_bytes, *multicast) in enumerate(copies):
        if t is None or not len(t):
            continue
        merged = merge(t, lanes, operation, granule)
        beats = merged.beats
        listed.append((merged.beat + first, merged.address, merged.sectors, operation))
        first += beats
        beat_of_chunk = t.places(lanes)[0]
        ctas = max([1, *multicast]) if operation == Operation.LOAD else 1
        own_bytes = np.bincount(beat_of_chunk, t.units * unit_smem_bytes, beats).astype(np.int64)
        # the copy's read wavefronts sit at its first beat; the run charges them after the
        # copy's last beat to be written
        consumer = np.zeros(beats, dtype=np.int64)
        if operation == Operation.LOAD:
            consumer[0] = int(matrix_read_wavefronts(t).sum())
        per_beat["wavefronts"].append(smem_wavefronts(t, lanes, unit_smem_bytes, operation))
        per_beat["operations"].append(np.full(beats, int(operation), dtype=np.int64))
        per_beat["copy_index"].append(np.full(beats, index, dtype=np.int64))
        per_beat["ctas"].append(np.full(beats, ctas, dtype=np.int64))
        per_beat["beat_bytes"].append(own_bytes if operation != Operation.PREFETCH else np.zeros(beats, np.int64))
        per_beat["consumer"].append(consumer)
        used += int(merged.used_bytes.sum())
        if operation != Operation.PREFETCH:         # a prefetch has no shared-memory side
            smem += ctas * int(own_bytes.sum())
    requests, sector_bytes, merged_into, issued = coalesce_requests(listed, first, coalesce)
    arrays = {name: np.concatenate(parts) for name, parts in per_beat.items()}
    return MemoryBeats(requests, sector_bytes, arrays["wavefronts"], arrays["operations"], used, smem, merged_into,
                       arrays["copy_index"], arrays["ctas"], arrays["beat_bytes"], arrays["consumer"], issued)


def slot_image(config: UnitConfig, images: dict, valid_slots: int, slot: int):
    """The descriptor image a request to ``slot`` reads: the one written there if the slot
    exists and its SLOT_VALID bit is set, else None (SLOT_INVALID)."""
    return images.get(slot) if slot < config.slots and (valid_slots >> slot) & 1 else None


def scenario_beats(config: UnitConfig, images: dict, valid_slots: int, requests: list, memory: Memory) -> MemoryBeats:
    """The :class:`MemoryBeats` of hardware requests on descriptor images behind ``memory``
    (its granule and its coalescer's window)."""
    return memory_beats(scenario_copies(config, images, valid_slots, requests), config.lanes, memory.granule,
                        memory.coalesce)


def scenario_copies(config: UnitConfig, images: dict, valid_slots: int, requests: list) -> list:
    """``(transactions, operation, unit_smem_bytes, multicast CTAs)`` of each hardware
    request on descriptor images (None transactions for a request the unit refuses)."""
    copies = []
    for fields in requests:
        image = slot_image(config, images, valid_slots, fields["slot"])
        answer = complete(image, fields, config)
        unit_bytes = decode_descriptor(image).info.unit_smem_bytes if answer.transactions is not None else 0
        copies.append((answer.transactions, Operation(fields["operation"]), unit_bytes,
                       bin(fields["multicast_mask"]).count("1")))
    return copies


def predict_memory(config: UnitConfig, images: dict, valid_slots: int, requests: list, gaps,
                   memory: "Memory") -> tuple[Timing, "MemoryRun"]:
    """The cycle every beat, completion, L2 request, return and shared-memory access of a
    request sequence happens in, its beat stream held back by ``memory`` alone (requests
    merged into the memory's granule, which a unit with a request former must share):
    :func:`predict` with the memory's gate, then :func:`.memory.memory_run`."""
    if config.request_former and memory.granule != config.request_former:
        raise TmaError(ErrorCode.ENUM_RANGE, "memory.granule", memory.granule,
                       f"is not the unit's request former's, {config.request_former} bytes")
    beats = scenario_beats(config, images, valid_slots, requests, memory)
    gate = beats.gate(memory)
    records = [records_of(slot_image(config, images, valid_slots, f["slot"]), f, config) for f in requests]
    timing = predict(records, gaps, [1], beat_queue=config.beat_queue, completion_depth=config.completion_depth,
                     stages=back_end_stages(config), gate=gate, request_interval=config.request_interval)
    return timing, beats.after(beats.gate(memory), timing.beat_cycles)


def _beat_arrays(runs, ready: ReadyPattern):
    """The beats' cycles and requests from the runs of consecutive high-cycle numbers."""
    if not runs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    first, length, owner = zip(*runs)
    first, length = np.array(first, dtype=np.int64), np.array(length, dtype=np.int64)
    jobs = np.repeat(np.array(owner, dtype=np.int32), length)    # half the memory of int64: a request index
    # runs that continue one another are one slice of the high cycles
    starts = np.flatnonzero(np.r_[True, first[1:] != first[:-1] + length[:-1]]).tolist()
    bounds = [(int(first[s]), int(first[e - 1] + length[e - 1])) for s, e in zip(starts, starts[1:] + [len(first)])]
    if ready.per_period == ready.period:                # always ready: the k-th high is cycle k
        slices = [np.arange(low, high, dtype=np.int64) for low, high in bounds]
    else:                                               # every high cycle up to the last beat's
        periods = -(-bounds[-1][1] // ready.per_period)
        highs = (np.arange(periods, dtype=np.int64)[:, None] * ready.period + ready.high_array).ravel()
        slices = [highs[low:high] for low, high in bounds]
    return (slices[0] if len(slices) == 1 else np.concatenate(slices)), jobs


def _completions(completion_cycles, count):
    done = np.array(completion_cycles, dtype=np.int64)
    return done, int(done.max()) + 1 if count else 0


def predict_scenario(config: UnitConfig, images: dict, valid_slots: int, requests: list, gaps, ready,
                     completion_ready=None) -> Timing:
    """:func:`predict` for hardware requests on descriptor images (a co-simulation scenario's
    contents)."""
    records = [records_of(slot_image(config, images, valid_slots, fields["slot"]), fields, config)
               for fields in requests]
    return predict(records, gaps, ready, beat_queue=config.beat_queue, completion_ready=completion_ready,
                   completion_depth=config.completion_depth, stages=back_end_stages(config),
                   request_interval=config.request_interval)
