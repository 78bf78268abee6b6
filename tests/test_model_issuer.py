"""How requests reach the unit (model/issuer.py): the issue cost, the descriptor cache
and its fetches, prefetch.tensormap, as the idle cycles before each request; and the
timing model against the RTL behind an issuer and a shared memory."""

import json
import re

import numpy as np
import pytest

from tma_unit.cli import main
from tma_unit.memory_side import beats_of
from tma_unit.model.config import UnitConfig
from tma_unit.model.errors import TmaError
from tma_unit.model.issuer import Issuer
from tma_unit.workloads import WORKLOADS


def slots(*names):
    return [{"slot": s} for s in names]


def test_a_descriptor_cache_of_two_fetches_what_it_does_not_hold():
    """Slots 0 1 0 2 1 0 through a two-map LRU cache: 0 and 1 miss, 0 hits, 2 misses and
    evicts 1 (least recently used), 1 misses and evicts 0, 0 misses."""
    issuer = Issuer(issue_cycles=75, descriptor_cache=2, fetch_latency=420)
    requests = slots(0, 1, 0, 2, 1, 0)
    assert issuer.misses([r["slot"] for r in requests]).tolist() == [True, True, False, True, True, True]
    assert issuer.gaps(requests).tolist() == [495, 495, 75, 495, 495, 495]


def test_prefetched_maps_are_held_until_evicted_and_no_cache_never_fetches():
    assert Issuer(descriptor_cache=2, prefetched=(0, 1)).misses([0, 1, 0, 1]).tolist() == [False] * 4
    # three prefetched into two entries: the first is gone before it is used
    assert Issuer(descriptor_cache=2, prefetched=(0, 1, 2)).misses([0, 1, 2]).tolist() == [True, True, True]
    assert Issuer(descriptor_cache=0).misses([0, 0, 0]).tolist() == [True] * 3
    assert Issuer().misses([0, 1, 2]).tolist() == [False] * 3
    assert Issuer(mbarrier_latency=30).arrivals([5, 9]).tolist() == [35, 39]


@pytest.mark.parametrize("field, value, message", [
    ("issue_cycles", -1, "issuer.issue_cycles = -1 is not a whole number from 0"),
    ("descriptor_cache", 1.5, "issuer.descriptor_cache = 1.5 is not a whole number of maps from 0"),
    ("fetch_latency", True, "issuer.fetch_latency = True is not a whole number from 0"),
])
def test_a_bad_issuer_parameter_is_refused_naming_it(field, value, message):
    with pytest.raises(TmaError, match=re.escape(message)):
        Issuer(**{field: value})


def test_a_miss_costs_its_fetch_when_nothing_else_hides_it():
    """gather-moe-rows at lanes 8: R requests of 32 chunks, 4 beats each. With the map
    always held they follow one another, a request's beats 4 cycles after the previous
    one's. With every request fetching its map (a cache of none), request i is offered 420
    idle cycles after request i - 1 was taken, so its beats come 421 cycles after the
    previous request's: the first 420 cycles late, each later one 417 more."""
    config = UnitConfig(lanes=8)
    held = beats_of("gather-moe-rows", config)
    fetching = beats_of("gather-moe-rows", config, issuer=Issuer(descriptor_cache=0))
    requests = len(WORKLOADS["gather-moe-rows"].stream(config)[2])
    assert len(held.ready) == 4 * requests
    assert np.diff(held.ready[::4]).tolist() == [4] * (requests - 1)
    assert np.diff(fetching.ready[::4]).tolist() == [421] * (requests - 1)
    assert fetching.ready[-1] - held.ready[-1] == 420 + 417 * (requests - 1)


def test_explore_memory_takes_the_issuer_flags(tmp_path):
    out = tmp_path / "out"
    assert main(["explore", "--memory", "--workloads", "gather-moe-rows", "--lanes", "8", "--latency", "500",
                 "--in-flight", "256", "--issue-cycles", "75", "--descriptor-cache", "0", "--fetch-latency", "420",
                 "-q", "-o", str(out)]) == 0
    report = json.loads((out / "explore-memory.json").read_text())
    assert {k: report["parameters"][k] for k in ("issue_cycles", "descriptor_cache", "fetch_latency")} == \
        {"issue_cycles": 75, "descriptor_cache": 0, "fetch_latency": 420}
    plain = tmp_path / "plain"
    assert main(["explore", "--memory", "--workloads", "gather-moe-rows", "--lanes", "8", "--latency", "500",
                 "--in-flight", "256", "-q", "-o", str(plain)]) == 0
    (slow,), (fast,) = report["rows"], json.loads((plain / "explore-memory.json").read_text())["rows"]
    requests = len(WORKLOADS["gather-moe-rows"].stream(UnitConfig(lanes=8))[2])
    assert slow["cycles"] > fast["cycles"] + 420 * requests       # each request waits its turn and its fetch
