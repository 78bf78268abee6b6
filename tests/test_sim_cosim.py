"""Lockstep co-simulation of the whole unit against the golden model (issues 4, 5 and 6):
random legal requests of every access mode (tiled, gather4/scatter4, im2col and
im2col_no_offs, im2col::w, im2col::w::128), random backpressure and gaps, lanes 1 and 8,
on both backends; and random legal and illegal descriptors and requests, every
completion compared."""

import pytest
from hypothesis import given, settings

from tma_unit.model import AccessMode
from tma_unit.model.config import UnitConfig
from tma_unit.sim.pysim import run_pysim

from strategies import LARGE, scenarios
from units import DEFAULT, grouped, on, optimize

ALL_MODES = {mode.value for mode in AccessMode}


def modes_of(scenario):
    return {fields["mode"] for fields in scenario.requests}


#: Lanes 1 and 8; the lanes-8 tests in one group, so that one worker elaborates the
#: lanes-8 unit for Amaranth's simulator (slow at lanes 8) and keeps it for all of them.
LANES = [1, pytest.param(8, marks=grouped("pysim", DEFAULT[8]))]


@pytest.mark.slow          # two seconds and more an example; the fast subset runs the worked examples on pysim
@pytest.mark.parametrize("lanes", LANES)
def test_random_legal_requests_pysim(lanes):
    config = UnitConfig(lanes=lanes, slots=8)

    @settings(max_examples=12, suppress_health_check=LARGE)
    @given(scenarios(config))
    def check(scenario):
        result = run_pysim(scenario)
        assert len(result.completions) == len(scenario.requests)

    check()


@pytest.mark.slow
def test_random_legal_and_illegal_requests_pysim():
    config = UnitConfig(lanes=2, slots=8, address_width=48)

    @settings(max_examples=25, suppress_health_check=LARGE)
    @given(scenarios(config, legal_only=False, max_rows=4))
    def check(scenario):
        run_pysim(scenario)

    check()


@pytest.mark.slow          # the default lanes-1 unit's CXXRTL build and 40 scenarios
@grouped("cxxrtl", DEFAULT[1])
def test_random_legal_and_illegal_requests_cxxrtl():
    from tma_unit.sim.cxxrtl import CxxrtlUnit, run_cxxrtl
    config = DEFAULT[1]
    unit = CxxrtlUnit(config)

    @settings(max_examples=40, suppress_health_check=LARGE)
    @given(scenarios(config, legal_only=False, max_rows=8))
    def check(scenario):
        run_cxxrtl(scenario, unit)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("lanes", LANES)
def test_random_im2col_requests_pysim(lanes):
    """im2col (loads, prefetches, im2col_no_offs stores and reductions), im2col::w and
    ::w::128 with halo and wOffset: the pixel walk against the model's."""
    config = UnitConfig(lanes=lanes, slots=8)
    seen = set()

    @settings(max_examples=10, suppress_health_check=LARGE)
    @given(scenarios(config, max_requests=4, kinds=("im2col", "wide")))
    def check(scenario):
        seen.update(modes_of(scenario))
        result = run_pysim(scenario)
        assert len(result.completions) == len(scenario.requests)

    check()
    assert {AccessMode.IM2COL, AccessMode.IM2COL_W, AccessMode.IM2COL_W_128} <= seen


@pytest.mark.slow          # a CXXRTL build per lane count
@pytest.mark.parametrize("backend, config", [on("cxxrtl", DEFAULT[1]), on("cxxrtl", DEFAULT[8])])
def test_random_requests_of_every_mode_cxxrtl(backend, config):
    """Every access mode on the compiled backend, in mixed sequences, so that requests of
    different modes follow each other back to back."""
    from tma_unit.sim.cxxrtl import CxxrtlUnit, run_cxxrtl
    unit = CxxrtlUnit(config, optimize(backend, config))
    seen = set()

    @settings(max_examples=16, suppress_health_check=LARGE)
    @given(scenarios(config, max_requests=6, max_rows=16))
    def check(scenario):
        seen.update(modes_of(scenario))
        result = run_cxxrtl(scenario, unit)
        assert len(result.completions) == len(scenario.requests)

    check()
    assert seen == ALL_MODES


@pytest.mark.parametrize("lanes", [1, pytest.param(8, marks=pytest.mark.slow)])
def test_every_worked_example_of_section_5_5(lanes):
    """The PTX 5.5 worked examples (model/examples.py: tiled, the im2col examples with
    offsets and traversal stride, im2col::w with halo, ::w::128, wOffset, gather4) back to
    back through the RTL, every beat against the model, with backpressure."""
    from tma_unit.model import encode_descriptor
    from tma_unit.model.examples import EXAMPLES
    from tma_unit.model.unit import fields_from_request
    from tma_unit.sim.cosim import Scenario
    config = UnitConfig(lanes=lanes, slots=16)
    images, requests = {}, []
    for slot, (_, tm, request) in enumerate(EXAMPLES.values()):
        images[slot] = encode_descriptor(tm)
        requests.append(fields_from_request(request.__class__(**{**request.__dict__, "request_id": slot}), slot))
    scenario = Scenario(config, images, (1 << len(images)) - 1, requests, seed=5, ready_probability=0.7)
    result = run_pysim(scenario)
    assert [c[0] for c in result.completions] == list(range(len(EXAMPLES)))
    assert all(c[1] == 0 for c in result.completions)


def test_cxxrtl_flow_splits_loops_through_wires_and_refuses_what_it_cannot(monkeypatch):
    """CXXRTL schedules whole wires. Here Yosys merges the two ``a - 1`` into one net,
    which is then the low half of ``pair`` and the high half's operand: a loop through
    ``pair`` to CXXRTL. The flow's script splits such a wire, and the one-pass run loop
    relies on that; with a script that does not split, the flow must refuse with an
    error saying so rather than simulate wrongly."""
    from amaranth.hdl import Module, Signal
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out
    from tma_unit.sim import cxxrtl

    class SelfFed(wiring.Component):
        a: In(8)
        y: Out(16)

        def elaborate(self, platform):
            m = Module()
            pair = Signal(16)
            m.d.comb += [pair[:8].eq(self.a - 1), pair[8:].eq((self.a - 1) * 3), self.y.eq(~pair)]
            return m

    assert "p_y" in cxxrtl.write_cxxrtl(SelfFed())
    monkeypatch.setattr(cxxrtl, "PASSES", "opt; opt_clean -purge")
    with pytest.raises(RuntimeError, match="combinational loop through a wire"):
        cxxrtl.write_cxxrtl(SelfFed())
