"""What every test shares: the hypothesis profiles, the compiled units (one build per
configuration and backend for the whole run, whichever test worker asks first), and the
run's summary of what it built and checked.

The hypothesis profiles are defined here once. ``suite``, the default, is derandomized:
every run draws the same examples, so a run that passed passes again and a failure
reproduces. The exploring is the campaign's (tests/test_sim_campaign.py makes one from a
fresh seed it prints); ``pytest --hypothesis-profile explore`` draws fresh examples in the
property tests as well.
"""

import os
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tma_unit.sim import ledger

#: Hypothesis for the whole suite: no deadline (a compiled unit's first use loads it, a
#: pysim run takes seconds), no health check on slow or large draws (a scenario is
#: large by nature), and derandomized.
SUITE = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("suite", derandomize=True, **SUITE)
settings.register_profile("explore", derandomize=False, **SUITE)
settings.load_profile("suite")


def pytest_configure(config):
    """The controller (or a run without test workers) opens the run's ledger; the test
    workers, started after this, inherit its path through the environment."""
    if hasattr(config, "workerinput") or os.environ.get(ledger.LEDGER_ENV):
        return
    folder = Path(tempfile.mkdtemp(prefix="tma-unit-ledger-"))
    os.environ[ledger.LEDGER_ENV] = str(folder / "ledger.jsonl")
    config._tma_unit_ledger = folder


@pytest.fixture(scope="session")
def compiled():
    """``compiled(config, backend)``: this test worker's unit of ``config`` on ``backend``
    (``cxxrtl`` or ``verilator``), made on first use and kept for the run. Its library is
    built once for the whole run, whichever worker asks first, at the optimisation every
    test uses (:func:`tma_unit.sim.campaign.make_unit`'s default): the others wait for that
    build and load it. A test that leaves the unit busy must reset it."""
    from tma_unit.sim.campaign import make_unit
    units = {}

    def get(config, backend):
        key = (config, backend)
        if key not in units:
            units[key] = make_unit(config, backend)
        return units[key]

    return get


def _unit_cost(group: str) -> tuple:
    """How long a unit's group runs, as a key that sorts the longest first: lanes 8 before
    lanes 1, and CXXRTL, whose builds take three times Verilator's, before Verilator."""
    backend, _, config = group.partition(" ")
    lanes = next((int(word[6:]) for word in config.split() if word.startswith("lanes=")), 1)
    return (-lanes, backend != "cxxrtl", group)


def pytest_collection_modifyitems(config, items):
    """The order the workers take the tests in (``--dist loadgroup`` hands out whole
    groups, in the order of their first test): every compiled unit's group first, the
    longest first, so that the builds run while there is other work to fill the other
    core; then the slow tests, then the rest. A stable sort: within each, the files'
    order."""
    def key(item):
        mark = item.get_closest_marker("xdist_group")
        if mark is not None:
            return (0, *_unit_cost(mark.args[0]))
        return (1 if item.get_closest_marker("slow") else 2,)
    items.sort(key=key)


def _summary(events: list) -> list[str]:
    """The lines the run's summary prints from its ledger's ``events``."""
    lines = []
    builds = [e for e in events if e["kind"] == "build"]
    if builds:
        total = sum(e["seconds"] for e in builds)
        lines.append(f"{len(builds)} builds, {total:,.0f} s (one line per build; the cache is "
                     f"{os.environ.get('TMA_UNIT_CACHE', '~/.cache/tma-unit')}):")
        for e in sorted(builds, key=lambda e: -e["seconds"]):
            what = " ".join(str(e[k]) for k in ("backend", "flags") if e.get(k))
            lines.append(f"  {e['seconds']:7.1f} s  {what:<24} {e['config']}")
    checked = [e for e in events if e["kind"] == "lockstep"]
    if checked:
        by_backend = defaultdict(Counter)
        for e in checked:
            by_backend[e["backend"]][e["config"]] += 1
        configurations = {(e["backend"], e["config"]) for e in checked}
        requests = sum(e["requests"] for e in checked)
        lines.append(f"{len(checked):,} scenarios ({requests:,} requests) checked in lockstep with the model on "
                     f"{len(configurations)} backend-configuration pairs:")
        for backend, counts in sorted(by_backend.items()):
            for config, count in sorted(counts.items()):
                lines.append(f"  {backend:<10} {count:7,}  {config}")
    proofs = [e for e in events if e["kind"] == "proof"]
    if proofs:
        kinds = Counter("mutation" if e["mutation"] else "cover" if e["cover"] else "proof" for e in proofs)
        lines.append(f"{len(proofs)} formal runs: {kinds['proof']} proofs, {kinds['cover']} cover runs, "
                     f"{kinds['mutation']} mutations")
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if hasattr(config, "workerinput"):
        return
    path = os.environ.get(ledger.LEDGER_ENV)
    lines = _summary(ledger.read(path)) if path else []
    if lines:
        terminalreporter.section("what the run built and checked")
        for line in lines:
            terminalreporter.write_line(line)
