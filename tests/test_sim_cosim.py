"""Lockstep co-simulation of the whole unit against the golden model (issues 4 and 5):
random legal tiled and gather4/scatter4 requests, random backpressure and gaps, lanes 1
and 8; and random legal and illegal descriptors and requests, every completion compared."""

import pytest
from hypothesis import given, settings, HealthCheck

from tma_unit.model.config import UnitConfig
from tma_unit.sim.pysim import run_pysim

from strategies import scenarios

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("lanes", [1, 8])
def test_random_legal_requests_pysim(lanes):
    config = UnitConfig(lanes=lanes, slots=8)

    @settings(max_examples=12, **SETTINGS)
    @given(scenarios(config))
    def check(scenario):
        result = run_pysim(scenario)
        assert len(result.completions) == len(scenario.requests)

    check()


def test_random_legal_and_illegal_requests_pysim():
    config = UnitConfig(lanes=2, slots=8, address_width=48)

    @settings(max_examples=25, **SETTINGS)
    @given(scenarios(config, legal_only=False, max_rows=4))
    def check(scenario):
        run_pysim(scenario)

    check()


@pytest.mark.parametrize("lanes", [1, 8])
def test_random_legal_requests_cxxrtl(lanes):
    """The same checker on the compiled backend (built at -O0 here: tests want the compile
    fast; bench/cosim_speed.py measures an optimised build). One compiled unit serves every
    example, so larger boxes are affordable."""
    from tma_unit.sim.cxxrtl import CxxrtlUnit, run_cxxrtl
    config = UnitConfig(lanes=lanes, slots=8)
    unit = CxxrtlUnit(config, optimize="-O0")

    @settings(max_examples=25, **SETTINGS)
    @given(scenarios(config, max_requests=8, max_rows=64))
    def check(scenario):
        result = run_cxxrtl(scenario, unit)
        assert len(result.completions) == len(scenario.requests)

    check()


def test_random_legal_and_illegal_requests_cxxrtl():
    from tma_unit.sim.cxxrtl import CxxrtlUnit, run_cxxrtl
    config = UnitConfig(lanes=1, slots=8)
    unit = CxxrtlUnit(config, optimize="-O0")

    @settings(max_examples=40, **SETTINGS)
    @given(scenarios(config, legal_only=False, max_rows=8))
    def check(scenario):
        run_cxxrtl(scenario, unit)

    check()
