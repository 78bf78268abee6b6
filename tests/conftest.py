"""What every test shares: the hypothesis profiles, the order the test workers take the
tests in, and the run's summary of what it built and checked. The compiled units the
tests share are tests/units.py's.

The hypothesis profiles are defined here once. ``suite``, the default, is derandomized:
every run draws the same examples, so a run that passed passes again and a failure
reproduces. The exploring is the campaign's (tests/test_sim_campaign.py makes one from a
fresh seed it prints); ``pytest --hypothesis-profile explore`` draws fresh examples in the
property tests as well. The tests that draw whole scenarios turn off the health checks
for slow and large draws themselves (tests/strategies.py, ``LARGE``).
"""

import os
import shutil
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from hypothesis import settings

from tma_unit.sim import ledger

#: No deadline: a compiled unit's first use loads it, a pysim run takes seconds.
settings.register_profile("suite", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile("suite")


def pytest_configure(config):
    """The controller (or a run without test workers) opens the run's ledger, empty; the
    test workers, started after this, inherit its path through the environment. A ledger
    named by the caller's $TMA_UNIT_LEDGER is the caller's to keep, and is emptied too."""
    if hasattr(config, "workerinput"):
        return
    if os.environ.get(ledger.LEDGER_ENV):
        Path(os.environ[ledger.LEDGER_ENV]).write_text("")
        return
    folder = Path(tempfile.mkdtemp(prefix="tma-unit-ledger-"))
    os.environ[ledger.LEDGER_ENV] = str(folder / "ledger.jsonl")
    config._tma_unit_ledger = folder


def pytest_unconfigure(config):
    folder = getattr(config, "_tma_unit_ledger", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ[ledger.LEDGER_ENV]


def _unit_cost(group: str) -> tuple:
    """How long a unit's group runs, as a key that sorts the longest first: lanes 8 before
    lanes 1, and CXXRTL, whose builds take longer than Verilator's, before Verilator."""
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


def pytest_collection_finish(session):
    """In a test worker of ``--dist loadgroup``, every test of a group must carry its
    group in its node id, which is what the scheduler reads: where pytest-xdist could not
    name it, the tests of one compiled unit would run on both workers, each waiting for
    the other's build, and the run would take twice as long without saying why."""
    config = session.config
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return
    unnamed = [item.nodeid for item in session.items
               if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid]
    if unnamed:
        raise pytest.UsageError(f"pytest-xdist did not put the xdist_group of {len(unnamed)} tests in their node ids "
                                f"(the first: {unnamed[0]}); its --dist loadgroup needs a pytest it supports "
                                "(pyproject.toml pins it)")


def _summary(events: list) -> list[str]:
    """The lines the run's summary prints from its ledger's ``events``."""
    lines = []
    builds = [e for e in events if e["kind"] == "build"]
    if builds:
        total = sum(e["seconds"] for e in builds)
        lines.append(f"{len(builds)} builds, {total:,.0f} s with their elaboration (one line per build; the "
                     f"cache is {os.environ.get('TMA_UNIT_CACHE', '~/.cache/tma-unit')}):")
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
