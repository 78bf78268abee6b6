"""The timing model (model/timing.py) against the RTL, cycle for cycle: the cycle of every
beat and completion, on the demo suite and on random request sequences (legal and
illegal, random gaps and backpressure), lanes 1 and 8. The RTL runs as the exported
Verilog under Verilator, whose beats test_export checks against the golden model and the
Amaranth simulation."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st, HealthCheck

from tma_unit.model.config import UnitConfig
from tma_unit.model.timing import (BACK_END_STAGES, COMPLETION_LATENCY, FRONT_END_STAGES, predict, predict_scenario,
                                   ReadyPattern)
from tma_unit.sim.cosim import ready_pattern, request_gaps
from tma_unit.sim.demo import DEMO_CASES, demo_scenario
from tma_unit.sim.native import run_native
from tma_unit.sim.verilator import VerilatorUnit

from strategies import scenarios

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
UNITS = {}


def unit(config):
    if config not in UNITS:
        UNITS[config] = VerilatorUnit(config)
    return UNITS[config]


def assert_same_timing(scenario):
    rtl = run_native(scenario, unit(scenario.config))
    gaps = request_gaps(scenario.seed, len(scenario.requests), scenario.max_gap)
    ready = ready_pattern(scenario.seed, scenario.ready_probability)
    timing = predict_scenario(scenario.config, scenario.images, scenario.valid_slots, scenario.requests, gaps, ready)
    assert timing.beat_cycles.tolist() == list(rtl.beat_cycles)
    assert timing.completion_cycles.tolist() == list(rtl.completion_cycles)
    assert timing.cycles == rtl.cycles


@pytest.mark.parametrize("lanes", [1, pytest.param(8, marks=pytest.mark.slow)])     # lanes 8: the demo suite twice on pysim
@pytest.mark.parametrize("probability,max_gap", [(1.0, 0), (0.5, 3), (0.8, 40), (0.2, 0)])
def test_demo_suite(lanes, probability, max_gap):
    scenario = demo_scenario(UnitConfig(lanes=lanes, slots=8), list(DEMO_CASES), copies=2)
    scenario.seed, scenario.ready_probability, scenario.max_gap = 11, probability, max_gap
    assert_same_timing(scenario)


#: Units built without some modes or swizzles (UnitConfig.modes, .swizzles): the demo
#: suite's requests of the others are refused, one record each, as the model predicts.
BUILT_OPTIONS = [UnitConfig(lanes=1, slots=8, modes="tiled+gather4", swizzles="sm90"),
                 UnitConfig(lanes=8, slots=8, modes="tiled+gather4", swizzles="sm90")]
#: Units that step addresses (UnitConfig.addressing): the set-up's sums ride in the front
#: end's stages and the lanes' steps in the walker's, so no cycle changes.
STEPPING = [UnitConfig(lanes=1, slots=8, addressing="step"), UnitConfig(lanes=8, slots=8, addressing="step")]


@pytest.mark.slow           # a Verilator build of each
@pytest.mark.parametrize("config", BUILT_OPTIONS + STEPPING,
                         ids=lambda c: f"lanes{c.lanes}-{c.modes}-{c.swizzles}-{c.addressing}")
@pytest.mark.parametrize("probability,max_gap", [(1.0, 0), (0.5, 3)])
def test_demo_suite_on_units_built_with_options(config, probability, max_gap):
    scenario = demo_scenario(config, list(DEMO_CASES), copies=2)
    scenario.seed, scenario.ready_probability, scenario.max_gap = 11, probability, max_gap
    assert_same_timing(scenario)


@pytest.mark.parametrize("lanes", [1, pytest.param(8, marks=pytest.mark.slow)])     # lanes 8: half a minute on pysim
def test_random_sequences(lanes):
    config = UnitConfig(lanes=lanes, slots=8)

    @settings(max_examples=60, **SETTINGS)
    @given(scenarios(config, max_requests=10, legal_only=False, max_rows=32),
           st.sampled_from([1.0, 0.9, 0.5, 0.1]), st.sampled_from([0, 1, 2, 6, 30]))
    def check(scenario, probability, max_gap):
        scenario.ready_probability, scenario.max_gap = probability, max_gap
        assert_same_timing(scenario)

    check()


@settings(max_examples=200, **SETTINGS)
@given(st.lists(st.tuples(st.integers(1, 300), st.booleans()), min_size=1, max_size=24),
       st.integers(0, 1 << 16), st.sampled_from([1.0, 0.95, 0.6, 0.05]), st.sampled_from([0, 3, 12, 200]),
       st.sampled_from([1, 97, 4096]))
def test_steady_stretches_equal_cycle_by_cycle(records, seed, probability, max_gap, period):
    """Stepping over steady stretches gives the cycles of stepping every cycle: jobs long
    enough for the queue to fill, ready patterns from always to rarely high, short and
    long periods, gaps that end inside a stretch, more requests than the front end holds
    (so a stretch runs across job changes while the front end refills), and rejected
    requests that end a stretch."""
    records = [(n if beats else 1, beats) for n, beats in records]
    gaps = request_gaps(seed, len(records), max_gap)
    ready = ready_pattern(seed, probability, length=period)
    assume(np.asarray(ready).any())
    fast, slow = predict(records, gaps, ready), predict(records, gaps, ready, skip=False)
    assert fast.beat_cycles.tolist() == slow.beat_cycles.tolist()
    assert fast.beat_jobs.tolist() == slow.beat_jobs.tolist()
    assert fast.completion_cycles.tolist() == slow.completion_cycles.tolist()
    assert fast.cycles == slow.cycles


def test_back_to_back_requests_keep_the_rate():
    """Derived from the documented structure: with ready high and no gaps, beats leave on
    consecutive cycles from the first on (the front end's registers, the walker's job
    load, the back end's steps), a rejected request's record takes one cycle of its own,
    each request completes COMPLETION_LATENCY cycles after its last record leaves, and
    the run ends the cycle after the last completion."""
    timing = predict([(5, True), (3, True), (1, False), (2, True)], [0] * 4, [1])
    first = FRONT_END_STAGES + 1 + BACK_END_STAGES
    assert timing.beat_cycles.tolist() == list(range(first, first + 8)) + [first + 9, first + 10]
    assert timing.beat_jobs.tolist() == [0] * 5 + [1] * 3 + [3] * 2
    assert timing.completion_cycles.tolist() == [first + last + COMPLETION_LATENCY for last in (4, 7, 8, 10)]
    assert timing.cycles == first + 10 + COMPLETION_LATENCY + 1


def test_never_ready_is_refused():
    with pytest.raises(ValueError, match="never ready"):
        ReadyPattern(np.zeros(8))
