"""The verification campaign (docs/verification.md): the batch checker compares every field
of every beat and completion, the generators are reproducible, a difference is shrunk to a
reproducer that replays, every corpus case replays on both compiled backends, and a
campaign with a fresh seed finds no difference."""

import dataclasses
import json
from enum import Enum
import os
import random
from pathlib import Path

import numpy as np
import pytest
from amaranth.lib import data

from tma_unit.model import ErrorCode
from tma_unit.model.config import UnitConfig
from tma_unit.model.unit import check
from tma_unit.rtl.layouts import CompletionLayout, beat_layout
from tma_unit.sim import campaign
from tma_unit.sim.campaign import (BatchChecker, StatusMirror, expected_beats, field_values, flat_layout, make_unit,
                                   model_answers, read_reproducer, replay, run_campaign, run_scenario, scenario_at,
                                   scenario_from_json, scenario_to_json, shrink, write_reproducer)
from tma_unit.sim.cosim import Mismatch
from tma_unit.sim.generate import GENERATORS, RandomDraw, legal_scenario

from units import DEFAULT, built, grouped, optimize

CONFIG = DEFAULT[1]
CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.json"))


def replay_unit(scenario, backend: str) -> UnitConfig:
    """The unit a corpus case replays on: one the suite builds anyway on ``backend``
    (tests/units.py) that has the case's request former and address maker (the blocks a
    case exercises beyond the walk) and answers every request of the case as the case's
    own configuration does (the same code and byte count from the model: its modes and
    swizzles are built, its limits the same) and the case's request interval (the front
    end's timing); the case's own configuration where no
    built unit does. The lockstep checker takes its expectations from the model for the
    unit it runs on, so a replay on such a unit checks the same requests through the
    same blocks."""
    case = scenario.config
    images = {slot: image for slot, image in scenario.images.items() if scenario.valid_slots >> slot & 1}
    answers = lambda config: [check(images.get(fields["slot"]), fields, config) for fields in scenario.requests]
    for unit in built(backend):
        if (unit.request_former, unit.addressing, unit.request_interval) \
                == (case.request_former, case.addressing, case.request_interval) \
                and answers(unit) == answers(case):
            return unit
    return case


#: Each corpus case on each compiled backend, on its replay unit and in that unit's group.
CORPUS_RUNS = [pytest.param(path, backend, marks=grouped(backend, replay_unit(read_reproducer(path)[0], backend)),
                            id=f"{backend}-{path.stem}") for path in CORPUS for backend in ("cxxrtl", "verilator")]
#: The seconds of the campaign every test run makes on each compiled backend
#: ($TMA_UNIT_CAMPAIGN_SECONDS).
CAMPAIGN_SECONDS = float(os.environ.get("TMA_UNIT_CAMPAIGN_SECONDS", "100"))


@pytest.fixture(scope="module")
def unit():
    """The default lanes-1 unit on CXXRTL (built once a run); the
    tests that use it are marked slow and are in its group."""
    return make_unit(CONFIG, "cxxrtl")


#: The group of the tests on the unit above.
ON_UNIT = grouped("cxxrtl", CONFIG)


def words_of(columns: dict, flat, count: int, width_bits: int) -> np.ndarray:
    """Beat words holding ``columns`` (field name -> values), the inverse of
    :func:`field_values`, written here with Python integers."""
    out = np.zeros((count, (width_bits + 31) // 32), dtype=np.uint32)
    for b in range(count):
        bits = 0
        for name, offset, width in flat:
            bits |= (int(columns[name][b]) & ((1 << width) - 1)) << offset
        out[b] = np.frombuffer(bits.to_bytes(4 * out.shape[1], "little"), dtype=np.uint32)
    return out


@pytest.mark.parametrize("lanes", [1, 8])
def test_field_values_read_each_field_as_amaranths_view_does(lanes):
    layout = beat_layout(UnitConfig(lanes=lanes))
    rng = random.Random(lanes)
    payloads = [rng.getrandbits(layout.size) for _ in range(50)]
    words = np.array([np.frombuffer(p.to_bytes(4 * ((layout.size + 31) // 32), "little"), dtype=np.uint32)
                      for p in payloads])
    flat = flat_layout(layout)
    assert sum(width for _, _, width in flat) == layout.size
    for name, offset, width in flat:
        got = field_values(words, offset, width)
        compared = 0
        for payload, value in zip(payloads, got):
            view = data.Const(layout, payload)
            try:
                for part in name.replace("[", ".[").split("."):
                    view = view[int(part[1:-1])] if part.startswith("[") else getattr(view, part)
            except ValueError:          # bits no member of the field's enumeration has
                continue
            assert int(value) == int(view.value if isinstance(view, Enum) else view), name
            compared += 1
        assert compared > 10, name


def checked_scenario(seed=3, config=CONFIG):
    """A legal scenario with two beats or more (with more than one lane, every lane
    holding a chunk in some beat, and one beat not full), its checker, and beat and
    completion words that hold exactly what the model expects (built by
    :func:`words_of`, not by the RTL)."""
    for k in range(100):
        scenario = legal_scenario(RandomDraw(f"checker:{seed}:{k}"), config)
        checker = BatchChecker(scenario)
        valid = [checker.expected[f"lanes[{j}].valid"] for j in range(config.lanes)]
        if checker.beat_count >= 2 and (config.lanes == 1 or (all(v.any() for v in valid)
                                                              and not all(v.all() for v in valid))):
            break
    else:
        raise AssertionError("no scenario of two beats or more, one of them short of a lane")
    words = words_of(checker.expected, checker.flat, checker.beat_count, beat_layout(config).size)
    completions = words_of({name: [getattr(a, name) for a in checker.answers] for name, _, _ in
                            checker.completion_flat}, checker.completion_flat, len(checker.answers), CompletionLayout.size)
    return scenario, checker, words, completions


def test_the_model_s_own_beats_pass_and_a_completion_before_its_last_beat_does_not():
    scenario, checker, words, completions = checked_scenario()
    cycles = np.arange(len(words))
    late = np.full(len(completions), len(words) + 2)
    checker.check(words, cycles, completions, late, 10 ** 6)
    with pytest.raises(Mismatch, match="before its last beat"):
        checker.check(words, cycles, completions, np.zeros(len(completions), dtype=np.int64), 10 ** 6)


LANES8 = DEFAULT[8]


@pytest.mark.parametrize("config, name", [(config, name) for config in (CONFIG, LANES8)
                                          for name, _, _ in flat_layout(beat_layout(config))])
def test_every_beat_field_is_compared(config, name):
    """A beat that differs from the model's in any one field, each in turn (reduce_op and
    multicast_mask on any operation among them), is a difference that names the field; a
    chunk field of a lane the model leaves empty is not compared, but the lane's valid is."""
    scenario, checker, words, completions = checked_scenario(config=config)
    columns = {n: checker.expected[n].copy() for n, _, _ in checker.flat}
    lane = name[:name.index(".")] if name.startswith("lanes[") else None
    empty = np.flatnonzero(checker.expected[f"{lane}.valid"] == 0) if lane else []
    cycles = np.arange(checker.beat_count) * 2
    completion_cycles = np.full(len(completions), 2 * checker.beat_count)
    if len(empty) and not name.endswith(".valid"):
        columns[name][empty[0]] ^= 1            # an empty lane's field: no difference
        quiet = words_of(columns, checker.flat, checker.beat_count, beat_layout(config).size)
        checker.check(quiet, cycles, completions, completion_cycles, 10 ** 6)
        columns[name][empty[0]] ^= 1
    full = np.flatnonzero(checker.expected[f"{lane}.valid"] == 1) if lane else [1]
    columns[name][full[0]] ^= 1
    bad = words_of(columns, checker.flat, checker.beat_count, beat_layout(config).size)
    with pytest.raises(Mismatch, match=rf"  {re_escape(name)}: expected"):
        checker.check(bad, cycles, completions, completion_cycles, 10 ** 6)


def re_escape(text):
    import re
    return re.escape(text)


@pytest.mark.parametrize("name", ["request_id", "status", "transaction_bytes"])
def test_every_completion_field_is_compared(name):
    scenario, checker, words, completions = checked_scenario()
    columns = {n: [int(getattr(a, n)) for a in checker.answers] for n, _, _ in checker.completion_flat}
    columns[name][0] ^= 1
    bad = words_of(columns, checker.completion_flat, len(checker.answers), CompletionLayout.size)
    with pytest.raises(Mismatch, match=f"  {name}: expected"):
        checker.check(words, np.arange(len(words)), bad, np.full(len(bad), len(words) + 2), 10 ** 6)


def test_a_beat_field_the_model_does_not_name_is_refused_and_a_request_field_is_compared():
    """A field added to the beat layout is compared by its name with no change to the
    checker: a request field's value comes from the request; a field neither the request
    nor the transactions name stops the run, saying so."""
    scenario = legal_scenario(RandomDraw("extra"), CONFIG)
    answers = model_answers(scenario)
    flat = flat_layout(beat_layout(CONFIG))
    top = max(offset + width for _, offset, width in flat)
    expected, owners = expected_beats(scenario.requests, answers, flat + [("slot", top, 8)], CONFIG.lanes)
    assert list(expected["slot"]) == [scenario.requests[i]["slot"] for i in owners]
    with pytest.raises(LookupError, match="the beat field cache_hint has no expected value"):
        expected_beats(scenario.requests, answers, flat + [("cache_hint", top, 3)], CONFIG.lanes)


def test_output_in_or_after_a_reset_is_a_difference():
    scenario, checker, words, completions = checked_scenario()
    none = np.zeros(0, dtype=np.int64)
    checker.check(words[:1], np.array([3]), completions[:0], none, 100, reset_cycle=5)
    with pytest.raises(Mismatch, match="a beat after the reset at cycle 5"):
        checker.check(words[:2], np.array([3, 6]), completions[:0], none, 100, reset_cycle=5)
    with pytest.raises(Mismatch, match="a transfer in the reset cycle 5"):
        checker.check(words[:2], np.array([3, 5]), completions[:0], none, 100, reset_cycle=5)
    with pytest.raises(Mismatch, match="1 completions after the reset, of the 0 requests taken after it"):
        checker.check(words[:1], np.array([3]), completions[:1], np.array([9]), 100, reset_cycle=5)


def test_generators_are_reproducible_from_the_seed():
    for index in range(20):
        first, second = scenario_at(7, index, CONFIG, campaign.DEFAULT_WEIGHTS), scenario_at(
            7, index, CONFIG, campaign.DEFAULT_WEIGHTS)
        assert first == second
    assert {scenario_at(7, i, CONFIG, campaign.DEFAULT_WEIGHTS)[0] for i in range(200)} == set(GENERATORS)


def test_a_reproducer_reads_back_as_written(tmp_path):
    for name, generator in GENERATORS.items():
        scenario = generator(RandomDraw(f"json:{name}"), CONFIG)
        path = write_reproducer(tmp_path / f"{name}.json", scenario, "report\nline", "cxxrtl", seed=1)
        again, context = read_reproducer(path)
        assert again == scenario
        assert context["report"] == ["report", "line"] and context["seed"] == 1
        assert scenario_from_json(json.loads(json.dumps(scenario_to_json(scenario)))) == scenario


class CorruptingUnit:
    """A compiled unit whose beats for one request id come out with a wrong address: a
    planted RTL bug for the campaign and the shrinker to find."""

    def __init__(self, unit, request_id):
        self.unit, self.request_id = unit, request_id
        self.flat = dict((name, (offset, width)) for name, offset, width in flat_layout(beat_layout(unit.config)))

    def __getattr__(self, name):
        return getattr(self.unit, name)

    def run(self, *args, **kwargs):
        beats, beat_cycles, completions, completion_cycles, cycles = self.unit.run(*args, **kwargs)
        offset, width = self.flat["request_id"]
        mine = field_values(beats, offset, width) == self.request_id
        address = self.flat["lanes[0].global_address"][0]
        beats = beats.copy()
        beats[mine, address // 32] ^= np.uint32(1 << (address % 32 + 4))
        return beats, beat_cycles, completions, completion_cycles, cycles


def legal_with_beats(count):
    for k in range(200):
        scenario = legal_scenario(RandomDraw(f"shrink:{k}"), CONFIG)
        answers = model_answers(scenario)
        if len(scenario.requests) >= count and all(a.transactions is not None and len(a.transactions)
                                                    for a in answers):
            return scenario
    raise AssertionError("no such scenario")


@pytest.mark.slow
@ON_UNIT
def test_a_difference_is_shrunk_to_the_request_that_makes_it(unit):
    scenario = legal_with_beats(4)
    bad = CorruptingUnit(unit, scenario.requests[2]["request_id"])
    with pytest.raises(Mismatch, match="lanes\\[0\\].global_address: expected"):
        replay(scenario, unit=bad)
    small = shrink(scenario, bad)
    assert [fields["request_id"] for fields in small.requests] == [scenario.requests[2]["request_id"]]
    assert set(small.images) == {small.requests[0]["slot"]}
    with pytest.raises(Mismatch):
        replay(small, unit=bad)
    replay(small, unit=unit)            # the real unit agrees with the model on it


@pytest.mark.slow
@ON_UNIT
def test_the_campaign_finds_a_planted_difference(unit, monkeypatch):
    key = (CONFIG, "cxxrtl", None)
    monkeypatch.setitem(campaign._UNITS, key, CorruptingUnit(unit, 1))
    coverage, failures, ran = campaign.run_chunk(CONFIG, "cxxrtl", 11, 0, 30, {"legal": 1})
    assert ran == 30 and failures
    assert "global_address: expected" in failures[0].report


@pytest.mark.slow          # a compiled unit on each backend
@pytest.mark.parametrize("path, backend", CORPUS_RUNS)
def test_corpus_case_replays(path, backend):
    """Every difference a campaign ever found, replayed in lockstep on both compiled
    backends (on :func:`replay_unit`): each must now agree with the model."""
    scenario, context = read_reproducer(path)
    scenario = dataclasses.replace(scenario, config=replay_unit(scenario, backend))
    replay(scenario, backend, optimize(backend, scenario.config))


def test_corpus_is_not_empty():
    assert CORPUS


@pytest.mark.slow          # $TMA_UNIT_CAMPAIGN_SECONDS of campaign on each backend, 100 by default
@pytest.mark.parametrize("backend", [pytest.param(backend, marks=grouped(backend, CONFIG))
                                     for backend in ("cxxrtl", "verilator")])
def test_campaign_with_a_fresh_seed(backend, capsys, tmp_path):
    """The campaign every run makes: all four generators on lanes 1 for
    $TMA_UNIT_CAMPAIGN_SECONDS seconds on each compiled backend, from a fresh seed it
    prints. Under pytest-xdist each backend's campaign runs in its test worker, one core
    each, the two side by side; run alone, a campaign takes every core. A difference is
    shrunk and written as a reproducer, to be added to tests/corpus."""
    seed = campaign.fresh_seed()
    with capsys.disabled():
        print(f"\ncampaign seed {seed} ({CAMPAIGN_SECONDS:g} s; tma-unit verify --backend {backend} --seed {seed} "
              "reruns it)")
    workers = 1 if os.environ.get("PYTEST_XDIST_WORKER") else None
    report = run_campaign(CONFIG, backend, seed, seconds=CAMPAIGN_SECONDS, workers=workers)
    text = campaign.format_report(report)
    with capsys.disabled():
        print(text)
    assert sum(report["coverage"].requests.values()) > 0
    if report["failures"]:
        unit = make_unit(CONFIG, backend)
        paths = []
        for failure in report["failures"][:5]:
            small, note = campaign.reproducer(failure, report, unit)
            paths.append(write_reproducer(Path(os.environ.get("TMA_UNIT_FAILURES", tmp_path)) /
                                          f"{seed}-{failure.index}.json", small, failure.report, backend,
                                          seed=seed, index=failure.index, generator=failure.generator,
                                          generators=report["generators"], note=note))
        raise AssertionError(f"{text}\nreproducers (add them to tests/corpus): {', '.join(map(str, paths))}\n"
                             f"{report['failures'][0].report}")


class MiscountingUnit:
    """A compiled unit whose COMPLETED register reads one more than it holds."""

    def __init__(self, unit):
        self.unit = unit

    def __getattr__(self, name):
        return getattr(self.unit, name)

    def bus_many(self, accesses):
        reads = self.unit.bus_many(accesses)
        return [value + (address == campaign._OFFSET["COMPLETED"] and data is None)
                for (address, data), value in zip(accesses, reads)]


@pytest.mark.slow
@ON_UNIT
def test_status_registers_follow_the_model_s_completions(unit):
    """After each scenario the status registers read what the model's completions make of
    them (docs/registers.md): COMPLETED counts them, the error fields hold the last one,
    written here from the completions by hand; a unit whose COMPLETED is one off is a
    difference."""
    mirror = StatusMirror()
    unit.reset()
    completed, last = 0, None
    for k in range(30):
        scenario = GENERATORS["illegal"](RandomDraw(f"status:{k}"), CONFIG)
        result = run_scenario(unit, scenario, mirror)
        completed += result.requests
        errors = [answer for _, answer in result.checked if answer.status != ErrorCode.OK]
        last = errors[-1] if errors else last
    status, error_id, count = unit.bus_many([(0x0C, None), (0x10, None), (0x14, None)])
    assert count == completed > 0
    assert (status & 1, status >> 8 & 0xFF, error_id) == (1, int(last.status), last.request_id)
    with pytest.raises(Mismatch, match="COMPLETED: expected"):
        run_scenario(MiscountingUnit(unit), GENERATORS["illegal"](RandomDraw("status:bad"), CONFIG), mirror)


@pytest.mark.parametrize("lanes", [1, 2, 8])
def test_expected_beats_hold_transactions_a_lane_each(lanes):
    """The expected beats against a plain loop over the model's transactions: a row of
    ``R`` chunks takes ``ceil(R / lanes)`` beats, lane ``j`` of its beat ``g`` holding its
    chunk ``g * lanes + j`` if the row has one (else the lane is empty); ``last`` marks a
    request's last beat."""
    config = UnitConfig(lanes=lanes)
    flat = flat_layout(beat_layout(config))
    for k in range(20):
        scenario = legal_scenario(RandomDraw(f"lanes:{lanes}:{k}"), config)
        answers = model_answers(scenario)
        columns, owners = expected_beats(scenario.requests, answers, flat, lanes)
        b = 0
        for index, answer in enumerate(answers):
            t = answer.transactions
            if t is None or not len(t):
                continue
            row_chunks = t.row_chunks
            per_row = -(-row_chunks // lanes)
            beats = len(t) // row_chunks * per_row
            for beat in range(beats):
                row, group = divmod(beat, per_row)
                assert owners[b] == index and columns["last"][b] == (beat == beats - 1)
                assert columns["request_id"][b] == scenario.requests[index]["request_id"]
                for lane in range(lanes):
                    inside = group * lanes + lane < row_chunks
                    k = row * row_chunks + group * lanes + lane
                    assert columns[f"lanes[{lane}].valid"][b] == inside
                    if inside:
                        assert columns[f"lanes[{lane}].smem_address"][b] == t.smem_address[k]
                        assert columns[f"lanes[{lane}].global_address"][b] == int(t.global_address[k]) % (1 << 64)
                        assert columns[f"lanes[{lane}].mask"][b] == t.mask[k]
                b += 1
        assert b == len(owners)


def test_a_report_is_written_as_json():
    coverage = campaign.Coverage()
    coverage.codes["OK"] += 3
    coverage.buckets["TILE/LOAD/B128/FLOAT16"] += 2
    report = {"seed": 1, "coverage": coverage, "failures": [], "generators": {"legal": 1}}
    again = json.loads(json.dumps(campaign.report_to_json(report)))
    assert again["coverage"]["codes"] == {"OK": 3} and again["coverage"]["buckets"] == {"TILE/LOAD/B128/FLOAT16": 2}
