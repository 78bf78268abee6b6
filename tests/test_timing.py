"""The timing model (model/timing.py) against the RTL, cycle for cycle: the cycle of every
beat and completion, on the demo suite and on random request sequences (legal and
illegal, random gaps and backpressure), lanes 1 and 8. The RTL runs as the exported
Verilog under Verilator, whose beats test_export checks against the golden model and the
Amaranth simulation."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st


from tma_unit.model.config import REQUEST_INTERVALS, UnitConfig
from tma_unit.model.memory import Memory
from tma_unit.model.issuer import Issuer
from tma_unit.model.timing import (BACK_END_STAGES, COMPLETION_LATENCY, FRONT_END_STAGES, _FrontEnd, predict,
                                   predict_memory, predict_scenario, scenario_beats, ReadyPattern)
from tma_unit.sim.cosim import completion_pattern, ready_pattern, request_gaps
from tma_unit.sim.demo import DEMO_CASES, demo_scenario
from tma_unit.sim.generate import _accept_cycle
from tma_unit.sim.ledger import describe
from tma_unit.sim.native import run_native
from tma_unit.sim.verilator import VerilatorUnit

from strategies import LARGE, scenarios
from units import DEEP, DEFAULT, LEAST, OPTIONS, grouped

UNITS = {}


def unit(config):
    if config not in UNITS:
        UNITS[config] = VerilatorUnit(config)
    return UNITS[config]


def assert_same_timing(scenario):
    rtl = run_native(scenario, unit(scenario.config))
    gaps = request_gaps(scenario.seed, len(scenario.requests), scenario.max_gap)
    ready = ready_pattern(scenario.seed, scenario.ready_probability)
    timing = predict_scenario(scenario.config, scenario.images, scenario.valid_slots, scenario.requests, gaps, ready,
                              completion_pattern(scenario))
    assert timing.beat_cycles.tolist() == list(rtl.beat_cycles)
    assert timing.completion_cycles.tolist() == list(rtl.completion_cycles)
    assert timing.cycles == rtl.cycles


def verilated(config, slow=False):
    """A parameter ``config``, in the group of its Verilator unit; marked slow with ``slow``."""
    return pytest.param(config, marks=[grouped("verilator", config), *([pytest.mark.slow] if slow else [])],
                        id=describe(config).replace(" ", "-"))


@pytest.mark.parametrize("config", [verilated(DEFAULT[1]), verilated(DEFAULT[8], slow=True)])     # lanes 8: a long build
@pytest.mark.parametrize("probability,max_gap", [(1.0, 0), (0.5, 3), (0.8, 40), (0.2, 0)])
def test_demo_suite(config, probability, max_gap):
    scenario = demo_scenario(config, list(DEMO_CASES), copies=2)
    scenario.seed, scenario.ready_probability, scenario.max_gap = 11, probability, max_gap
    assert_same_timing(scenario)


#: The units built with options (tests/units.py). OPTIONS: built without some modes or
#: swizzles (UnitConfig.modes, .swizzles), the demo suite's requests of the others are
#: refused, one record each, as the model predicts; addresses made by stepping
#: (UnitConfig.addressing), whose set-up's sums ride
#: in the front end's stages and the lanes' steps in the walker's, so no cycle changes; a
#: request former (UnitConfig.request_former), whose stages the timing model adds; the
#: least queues such a unit may have (14 and 3 entries); the rules checked at commit
#: (UnitConfig.checks), whose cycles come before the first request
#: (tests/test_commit_checks.py), so no request's cycle changes; a request interval of 1
#: (UnitConfig.request_interval), the front end's skid register. LEAST: every mode on the
#: least queues of a unit without a former (9 and 3 entries). DEEP: a beat queue of 40
#: entries (past one LUT RAM's 16, and not a power of two: its pointers wrap at 40) and a
#: completion queue of 12.
OPTIONED = [OPTIONS[1], OPTIONS[8], LEAST, DEEP]


@pytest.mark.slow           # a Verilator build of each
@pytest.mark.parametrize("config", [verilated(config) for config in OPTIONED])
@pytest.mark.parametrize("probability,max_gap", [(1.0, 0), (0.5, 3)])
def test_demo_suite_on_units_built_with_options(config, probability, max_gap):
    scenario = demo_scenario(config, list(DEMO_CASES), copies=2)
    scenario.seed, scenario.ready_probability, scenario.max_gap = 11, probability, max_gap
    assert_same_timing(scenario)


def check_random_sequences(config, examples, max_rows, probabilities, gaps, completion_probabilities=(1.0,),
                           stalls=(None,)):
    """``examples`` random sequences of up to 12 legal and illegal requests on ``config``:
    the beat stream ready with one of ``probabilities``, gaps up to one of ``gaps``, the
    completion stream ready with one of ``completion_probabilities`` and stalled as one of
    ``stalls`` says (None: not at all)."""
    @settings(max_examples=examples, suppress_health_check=LARGE)
    @given(scenarios(config, max_requests=12, legal_only=False, max_rows=max_rows), st.sampled_from(probabilities),
           st.sampled_from(gaps), st.sampled_from(completion_probabilities), st.sampled_from(stalls))
    def check(scenario, probability, max_gap, completion_probability, stall):
        scenario.ready_probability, scenario.max_gap = probability, max_gap
        scenario.completion_ready_probability, scenario.completion_stall = completion_probability, stall
        assert_same_timing(scenario)

    check()


@pytest.mark.parametrize("config", [verilated(DEFAULT[1]), verilated(DEFAULT[8], slow=True),
                                    verilated(OPTIONS[1], slow=True)])     # lanes 8, options: long builds
def test_random_sequences(config):
    """The default units (a request interval of 2) and a unit with a skid register
    (OPTIONS, interval 1)."""
    check_random_sequences(config, 60, 32, [1.0, 0.9, 0.5, 0.1], [0, 1, 2, 6, 30])


#: The least queues of a unit without a request former (9 beats, 3 completions) and
#: deeper ones (40 and 12).
QUEUED = [verilated(LEAST, slow=True), verilated(DEEP, slow=True)]


@pytest.mark.parametrize("config", QUEUED)
def test_random_sequences_on_other_beat_queues(config):
    """Sparse ready patterns fill the queue and long gaps empty it: the walker's credits
    and the front end's stalls at the queue's own depth."""
    check_random_sequences(config, 30, 32, [0.5, 0.1, 0.03], [0, 2, 30])


@pytest.mark.parametrize("config", QUEUED)
def test_random_sequences_with_a_stalled_completion_stream(config):
    """The completion stream ready in some cycles, or stalled for a stretch of each period:
    the completion queue fills, the beat queue's head waits for room, then the walker for
    credits and the front end for the walker."""
    check_random_sequences(config, 30, 8, [1.0, 0.5, 0.1], [0, 2, 30], [1.0, 0.6, 0.2], [None, (10, 200), (0, 1000)])


@settings(max_examples=200, suppress_health_check=LARGE)
@given(st.lists(st.tuples(st.integers(1, 300), st.booleans()), min_size=1, max_size=24),
       st.integers(0, 1 << 16), st.sampled_from([1.0, 0.95, 0.6, 0.05]), st.sampled_from([0, 3, 12, 200]),
       st.sampled_from([1, 97, 4096]), st.sampled_from([16, 9, 40]), st.sampled_from([BACK_END_STAGES, 12]),
       st.sampled_from(REQUEST_INTERVALS))
def test_steady_stretches_equal_cycle_by_cycle(records, seed, probability, max_gap, period, beat_queue, stages,
                                               interval):
    """Stepping over steady stretches gives the cycles of stepping every cycle: jobs long
    enough for the queue to fill, ready patterns from always to rarely high, short and
    long periods, gaps that end inside a stretch, more requests than the front end holds
    (so a stretch runs across job changes while the front end refills), and rejected
    requests that end a stretch; beat queues of the default, the least and a deeper depth;
    the back end's steps of a unit without a request former and with one; either request
    interval."""
    records = [(n if beats else 1, beats) for n, beats in records]
    beat_queue = max(beat_queue, stages + 1)
    gaps = request_gaps(seed, len(records), max_gap)
    ready = ready_pattern(seed, probability, length=period)
    assume(np.asarray(ready).any())
    fast = predict(records, gaps, ready, beat_queue=beat_queue, stages=stages, request_interval=interval)
    slow = predict(records, gaps, ready, skip=False, beat_queue=beat_queue, stages=stages, request_interval=interval)
    assert fast.beat_cycles.tolist() == slow.beat_cycles.tolist()
    assert fast.beat_jobs.tolist() == slow.beat_jobs.tolist()
    assert fast.completion_cycles.tolist() == slow.completion_cycles.tolist()
    assert fast.cycles == slow.cycles


@pytest.mark.parametrize("interval", REQUEST_INTERVALS)
def test_back_to_back_requests_keep_the_rate(interval):
    """Derived from the documented structure: with ready high and no gaps, beats leave on
    consecutive cycles from the first on (the front end's registers, the walker's job
    load, the back end's steps), a rejected request's record takes one cycle of its own,
    each request completes COMPLETION_LATENCY cycles after its last record leaves, and
    the run ends the cycle after the last completion. At a request interval of 2 one job
    waits for the walker, not two: the walker takes the rejected request with the second
    job's last beat, and the last job reaches the job register two cycles after it, a
    cycle after the rejected request's record."""
    timing = predict([(5, True), (3, True), (1, False), (2, True)], [0] * 4, [1], request_interval=interval)
    first = FRONT_END_STAGES[interval] + 1 + BACK_END_STAGES
    gap = interval - 1                      # the cycle before the last job's first beat
    assert timing.beat_cycles.tolist() == list(range(first, first + 8)) + [first + 9 + gap, first + 10 + gap]
    assert timing.beat_jobs.tolist() == [0] * 5 + [1] * 3 + [3] * 2
    assert timing.completion_cycles.tolist() == [first + last + COMPLETION_LATENCY for last in (4, 7, 8, 10 + gap)]
    assert timing.cycles == first + 10 + gap + COMPLETION_LATENCY + 1


def test_a_request_interval_of_2_spaces_the_jobs_two_cycles_apart():
    """Derived from the structure without a skid register: the job register is the last
    stage, and the stages wait while it is full, so it holds each job for a cycle at the
    least and jobs reach the walker two cycles apart at the least, a stage sooner than
    at interval 1. One-beat requests back to back then leave a beat every other cycle;
    jobs of two beats or more keep the beat stream full."""
    first = FRONT_END_STAGES[2] + 1 + BACK_END_STAGES
    assert first == FRONT_END_STAGES[1] + BACK_END_STAGES
    ones = predict([(1, True)] * 5, [0] * 5, [1], request_interval=2)
    assert ones.beat_cycles.tolist() == [first + 2 * k for k in range(5)]
    assert ones.completion_cycles.tolist() == [first + 2 * k + COMPLETION_LATENCY for k in range(5)]
    assert predict([(1, True)] * 5, [0] * 5, [1], request_interval=1).beat_cycles.tolist() == [first + 1 + k
                                                                                               for k in range(5)]
    twos = predict([(2, True)] * 5, [0] * 5, [1], request_interval=2)
    assert twos.beat_cycles.tolist() == list(range(first, first + 10))
    mixed = predict([(3, True), (1, False), (1, False), (2, True)], [0] * 4, [1], request_interval=2)
    # the walker takes the first job the cycle it reaches the job register (cycle 10 of
    # the stages) and emits its records in the 3 cycles after; the stages waited a cycle
    # then, and again while the first rejected request sat in the job register until the
    # walker took it with the first job's last record (cycle 13); the second reaches the
    # job register in cycle 15, the last job in cycle 17: its records are emitted 7 and 8
    # cycles after the first job's first
    assert mixed.beat_cycles.tolist() == [first, first + 1, first + 2, first + 7, first + 8]
    with pytest.raises(ValueError, match="request_interval: 3, not one of"):
        predict([(1, True)], [0], [1], request_interval=3)


def test_the_rewrite_fault_aims_at_the_accept_cycles_of_the_timing_model():
    """The campaign's rewrite fault (sim/generate.py) writes a request's slot around the
    cycle the request is accepted, taken in closed form: it must be the timing model's
    accept cycle for requests back to back with the walker always taking."""
    for interval in REQUEST_INTERVALS:
        front, accepted, cycle = _FrontEnd([0] * 40, interval), [], 0
        while front.next_request < 40:
            before = front.next_request
            front.step(True)
            accepted += [cycle] * (front.next_request - before)
            cycle += 1
        config = UnitConfig(request_interval=interval)
        assert [_accept_cycle(config, index) for index in range(40)] == accepted


def test_never_ready_is_refused():
    with pytest.raises(ValueError, match="never ready"):
        ReadyPattern(np.zeros(8))


def test_a_stalled_completion_stream_holds_the_beats_once_its_queue_is_full():
    """Derived from the completion queue's structure (a memory of ``depth - 1`` entries and
    an output register): one-beat requests back to back at a request interval of 1 (a
    job every cycle), the beat stream always ready, the completion stream stalled until
    cycle 200. The first ``depth`` beats leave one a cycle from the first cycle a beat
    can leave, and their completions fill the queue; then the beat queue's head waits. In cycle 200 the stream takes the output register's
    completion and the memory's oldest moves into it, so the memory has room in cycle 201,
    and from there a beat leaves and a completion is taken in every cycle."""
    stall, count, first = 200, 60, FRONT_END_STAGES[1] + 1 + BACK_END_STAGES
    for depth in (3, 8, 20):
        timing = predict([(1, True)] * count, [0] * count, [1], completion_ready=[0] * stall + [1] * 4000,
                         completion_depth=depth, request_interval=1)
        assert timing.beat_cycles.tolist() == ([first + k for k in range(depth)]
                                               + [stall + 1 + k for k in range(count - depth)])
        assert timing.completion_cycles.tolist() == [stall + k for k in range(count)]
        assert timing.cycles == stall + count


def test_queues_shorter_than_the_rate_needs_are_refused():
    with pytest.raises(ValueError, match="beat_queue: 8 entries, fewer than the 9 records"):
        predict([(4, True)], [0], [1], beat_queue=8)
    with pytest.raises(ValueError, match="completion_depth: 2 entries, fewer than the 3"):
        predict([(4, True)], [0], [1], completion_depth=2)
    with pytest.raises(ValueError, match="completion stream's ready pattern: never ready"):
        predict([(4, True)], [0], [1], completion_ready=[0, 0])


def test_with_requests_waiting_the_depth_changes_no_cycle():
    """Derived from the structure: one-beat requests offered back to back at a request
    interval of 1 (a job every cycle), the beat stream stalled for the first 200 cycles.
    The unit stops once ``beat_queue`` records are behind the walker, with requests
    waiting in front of it. When the stall ends the held beats leave in consecutive
    cycles, and the rest follow with no bubble, since every allowed depth holds more
    than the back end's records in flight. So the beats leave at cycles
    200, 201, ... and each completion 2 cycles after its beat, whatever the depth: a
    deeper queue buys nothing while requests wait (the test below shows where it does)."""
    stall = 200
    ready = [0] * stall + [1] * 4000
    for depth in (9, 16, 40):
        timing = predict([(1, True)] * 80, [0] * 80, ready, beat_queue=depth, request_interval=1)
        assert timing.beat_cycles.tolist() == list(range(stall, stall + 80))
        assert timing.completion_cycles.tolist() == [stall + k + COMPLETION_LATENCY for k in range(80)]


def test_a_deeper_queue_absorbs_a_stall_when_requests_come_slower_than_beats():
    """Requests offered every 4 cycles (3 idle cycles after each is taken), 1 beat each,
    at a request interval of 1, the stream stalled for the first 300 cycles. A request is
    only taken while the front end moves, so once the unit is full (``beat_queue``
    records behind the walker, and the front end's registers behind those), the offers
    wait. 300 cycles is time enough to
    fill even a 40-entry queue (75 offers). Each entry more is one more request taken
    during the stall; after it the stored beats drain one a cycle, faster than the offers
    come (one in 4), so the run ends at the offers' pace, and the last beat leaves 4
    cycles earlier per entry. (At a request interval of 2 the stages also stop while
    their last, the job register, holds a job, and an offer that falls in such a cycle
    waits for the next, so the offers' pace is not 4 cycles there.)"""
    stall, count = 300, 120
    ready = [0] * stall + [1] * 4000
    last = {depth: predict([(1, True)] * count, [3] * count, ready, beat_queue=depth,
                           request_interval=1).beat_cycles[-1]
            for depth in (9, 16, 40)}
    assert last[9] - last[16] == 4 * (16 - 9)
    assert last[16] - last[40] == 4 * (40 - 16)


# ---- the memory side: the beat stream held back by a memory ------------------------------

#: Memories whose credits, request path or latency spread bind (model/memory.py): short
#: latencies, so a run is thousands of cycles, not millions, and at least 16 credits, a
#: lanes-8 beat's most requests (the memory refuses fewer by name).
MEMORIES = [Memory(latency=60, in_flight=16), Memory(latency=90, in_flight=24, latency_spread=30, seed=5),
            Memory(latency=25, in_flight=64, bytes_per_cycle=16),
            Memory(latency=25, in_flight=64, bytes_per_cycle=12.5, carry=True),
            Memory(latency=25, in_flight=64, sms=4, l2_bytes_per_cycle=50, hbm_bytes_per_cycle=30, hit_rate=0.7,
                   miss_latency=60, seed=3, coalesce=4)]


def assert_same_memory_timing(scenario, memory, gaps=None):
    """The RTL, its beat stream held back by ``memory`` (the run loop's gate, from the
    model's requests per beat; the lockstep checker checks the RTL's own request slots
    against the same merge), against the timing model stepping the same memory: the
    cycle of every beat, whose requests issue with it, and of every completion. The
    returns and shared-memory accesses follow from the beats' cycles (``memory_run``)."""
    config = scenario.config
    if gaps is None:
        gaps = request_gaps(scenario.seed, len(scenario.requests), scenario.max_gap)
    timing, _ = predict_memory(config, scenario.images, scenario.valid_slots, scenario.requests, gaps, memory)
    beats = scenario_beats(config, scenario.images, scenario.valid_slots, scenario.requests, memory)
    rtl = run_native(scenario, unit(config), beats.gate(memory), gaps=gaps)
    assert timing.beat_cycles.tolist() == list(rtl.beat_cycles)
    assert timing.completion_cycles.tolist() == list(rtl.completion_cycles)
    return timing


@pytest.mark.parametrize("config", [verilated(OPTIONS[1]), verilated(OPTIONS[8], slow=True)])
@pytest.mark.parametrize("memory", [pytest.param(memory, id=name, marks=() if name == "credits" else pytest.mark.slow)
                                    for memory, name in zip(MEMORIES, ["credits", "spread", "path", "carry", "gpu"])])
def test_demo_suite_behind_a_memory(config, memory):     # the fast subset: the credits' memory at lanes 1
    scenario = demo_scenario(config, list(DEMO_CASES), copies=1)
    scenario.seed, scenario.max_gap = 13, 5
    held = assert_same_memory_timing(scenario, memory)
    free = predict_scenario(config, scenario.images, scenario.valid_slots, scenario.requests,
                            request_gaps(scenario.seed, len(scenario.requests), scenario.max_gap), [1])
    assert held.cycles > 1.5 * free.cycles              # the memory held the stream back


@pytest.mark.parametrize("config", [verilated(OPTIONS[1]), verilated(OPTIONS[8], slow=True)])
def test_demo_suite_behind_an_issuer_and_a_shared_memory(config):
    """The demo suite, two copies of each case on one slot, offered as an issuer offers
    it (a thread's turn of 75 cycles, a descriptor cache of one map: a case's first copy
    fetches its map, the second finds it) to the RTL behind four SMs' shared L2 and HBM:
    every beat's and completion's cycle as the timing model predicts."""
    scenario = demo_scenario(config, list(DEMO_CASES), copies=2)
    issuer = Issuer(issue_cycles=75, descriptor_cache=1, fetch_latency=420)
    gaps = issuer.gaps(scenario.requests)
    assert 0 < int((gaps > 75).sum()) < len(gaps)         # some requests fetch, some do not
    assert_same_memory_timing(scenario, MEMORIES[-1], gaps)


@pytest.mark.slow           # the fast subset's twin: the demo suite behind the credits' memory
@pytest.mark.parametrize("config", [verilated(OPTIONS[1]), verilated(OPTIONS[8])])
def test_random_sequences_behind_a_memory(config):
    """Random requests behind each memory, offered back to back, with random gaps, or as
    an issuer with a descriptor cache of one map offers them (a request to another slot
    than the last waits for its map's fetch)."""
    @settings(max_examples=25, suppress_health_check=LARGE)
    @given(scenarios(config, max_requests=12, legal_only=False, max_rows=16), st.sampled_from(MEMORIES),
           st.sampled_from([0, 2, 30, "issuer"]))
    def check(scenario, memory, offer):
        """``offer``: the most idle cycles between requests, or "issuer"."""
        scenario.ready_probability, scenario.max_gap = 1.0, 0 if offer == "issuer" else offer
        scenario.completion_ready_probability, scenario.completion_stall = 1.0, None
        gaps = None
        if offer == "issuer":
            gaps = Issuer(issue_cycles=7, descriptor_cache=1, fetch_latency=50).gaps(scenario.requests)
        assert_same_memory_timing(scenario, memory, gaps)

    check()
