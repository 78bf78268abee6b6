"""Beat queues of other depths (``UnitConfig.beat_queue``): the walker's credits, the
front end's stalls and the completions at the queue's own depth. The model's answers do
not depend on the depth, so every check here is the lockstep checker's, on scenarios whose
beat stream is ready in few cycles (the queue fills, the walker waits for credits) and on
random campaigns on both compiled backends. The cycles are tests/test_timing.py's."""

import pytest

from tma_unit.model import ErrorCode, TmaError
from tma_unit.model.config import BEAT_QUEUE_RANGE, COMPLETION_DEPTH_RANGE, UnitConfig
from tma_unit.sim.campaign import run_campaign
from tma_unit.sim.generate import GENERATORS, RandomDraw
from tma_unit.sim.pysim import run_pysim

from units import OPTIONS, on


# the least queue's scenarios are drawn four times the beats of 40's, its twin in the fast subset
@pytest.mark.parametrize("beat_queue", [pytest.param(BEAT_QUEUE_RANGE[0], marks=pytest.mark.slow), 40])
def test_generated_scenarios_with_a_stalled_beat_stream(beat_queue):
    """A scenario of each generator, its beat stream ready in one cycle of ten, on the
    least queue and on one of 40 entries (not a power of two: its pointers wrap at 40).
    The compiled campaigns below add stalls of the completion stream."""
    config = UnitConfig(lanes=1, slots=8, beat_queue=beat_queue)
    for name in GENERATORS:
        scenario = GENERATORS[name](RandomDraw(f"queue:{beat_queue}:{name}"), config)
        scenario.ready_probability = 0.1
        run_pysim(scenario)


@pytest.mark.parametrize("field, value, code, detail", [
    ("beat_queue", BEAT_QUEUE_RANGE[0] - 1, ErrorCode.ENUM_RANGE, "is outside 9..256"),
    ("beat_queue", BEAT_QUEUE_RANGE[1] + 1, ErrorCode.ENUM_RANGE, "is outside 9..256"),
    ("beat_queue", "16", ErrorCode.FIELD_TYPE, "is not an integer"),
    ("completion_depth", COMPLETION_DEPTH_RANGE[0] - 1, ErrorCode.ENUM_RANGE, "is outside 3..64"),
    ("completion_depth", COMPLETION_DEPTH_RANGE[1] + 1, ErrorCode.ENUM_RANGE, "is outside 3..64"),
])
def test_configuration_refuses_a_queue_out_of_range(field, value, code, detail):
    with pytest.raises(TmaError) as error:
        UnitConfig(**{field: value})
    assert error.value.code == code and error.value.field == f"config.{field}"
    assert detail in str(error.value)


#: The compiled campaigns: both backends, lanes 1 and 8, the least queues (the campaign's
#: fault generator stalls the completion stream). The units are tests/units.py's OPTIONS,
#: which check the rules at commit (UnitConfig.checks, tests/test_commit_checks.py), step
#: addresses and form requests too: one build of each backend and lane count serves every
#: option, each touching blocks of its own. With a request former the least beat queue is
#: 14 entries, the records on their way to it when its head stops, as 9 is without one
#: (tests/units.py's LEAST, whose cycles tests/test_timing.py checks under Verilator).
CAMPAIGN_CONFIGS = [on(backend, OPTIONS[lanes]) for backend in ("cxxrtl", "verilator") for lanes in (1, 8)]


@pytest.mark.slow           # a compiled build of each
@pytest.mark.parametrize("backend, config", CAMPAIGN_CONFIGS)
def test_campaign_on_the_least_queues_checked_at_commit(backend, config):
    """Legal, boundary, illegal and fault scenarios in lockstep with the model: no
    difference, and every mode built completes OK somewhere; every descriptor the
    scenarios make valid goes through the commit checker."""
    assert (config.beat_queue, config.completion_depth) == (config.least_beat_queue, COMPLETION_DEPTH_RANGE[0])
    report = run_campaign(config, backend, seed=33, scenarios=300 if config.lanes == 1 else 100, workers=1)
    assert not report["failures"], report["failures"][0].report
    modes_ok = {bucket.split("/")[0] for bucket, count in report["coverage"].buckets.items() if count}
    assert modes_ok == {mode.name for mode in config.built_modes}
