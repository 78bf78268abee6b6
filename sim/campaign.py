"""The verification campaign: the RTL run in lockstep with the golden model on generated
scenarios (:mod:`.generate`), checked a whole run at a time by the checker of
:mod:`.cosim`, in parallel processes or on any executor, with a coverage report, shrunk
reproducers and a corpus that replays them (docs/verification.md).

Beside the streams, a campaign checks what software reads: after each scenario, the
status registers against a mirror kept from the model's completions (docs/registers.md).
The unit is kept from one scenario to the next, so what one leaves behind (an output not
taken, a register) shows in the next; a difference that needs that history to appear is
reported with the range of scenarios that rebuilds it.
"""

import concurrent.futures
import json
import math
import multiprocessing
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field, fields, asdict
from pathlib import Path

import numpy as np

from ..model.config import UnitConfig
from ..model.errors import ErrorCode, TmaError, shown
from ..model.layout import DESCRIPTOR_BYTES, REQUEST_FIELDS, decode_descriptor
from ..model.types import AccessMode, Operation
from ..model.unit import Completion
from ..rtl.regfile import REGISTER, REGISTERS, SLOT_BASE, SLOT_STRIDE
from ..rtl.validate import unreachable
from .cosim import (MAX_CASE_BEATS, _CODE_NAMES, BatchChecker, Mismatch, Scenario, expected_beats, field_values,
                    flat_layout,
                    model_answers, ready_pattern, request_gaps, completion_pattern)
from .generate import GENERATORS, RandomDraw
from .ledger import describe, note

__all__ = ["flat_layout", "field_values", "expected_beats", "BatchChecker", "run_scenario", "Coverage",
           "Failure", "run_campaign", "scenario_to_json", "scenario_from_json", "write_reproducer",
           "read_reproducer", "replay", "shrink", "reproducer", "make_unit", "MAX_CASE_BEATS", "BACKENDS", "StatusMirror",
           "ScenarioResult", "model_answers", "scenario_at", "run_chunk", "DEFAULT_WEIGHTS", "fresh_seed",
           "format_report", "report_to_json", "buckets_possible"]

#: The compiled backends a campaign runs on.
BACKENDS = ("cxxrtl", "verilator")


# -- what software reads --------------------------------------------------------------------

_OFFSET = {r.name: r.offset for r in REGISTERS}


@dataclass
class StatusMirror:
    """The status registers as docs/registers.md defines them, kept from the model's
    completions: what software must read after a scenario."""
    completed: int = 0
    error: bool = False
    last_error: int = 0
    error_count: int = 0
    error_id: int = 0
    written: int = 0            # slots written since the reset

    def take(self, answers: list):
        for answer in answers:
            self.completed = (self.completed + 1) & 0xFFFFFFFF
            if answer.status != ErrorCode.OK:
                self.error = True
                self.last_error = int(answer.status)
                self.error_id = answer.request_id
                self.error_count = min(self.error_count + 1, 0xFFFF)

    def expected(self, valid_slots: int) -> dict:
        status = REGISTER["STATUS"].pack(ERROR=int(self.error), BUSY=0, LAST_ERROR=self.last_error,
                                         ERROR_COUNT=self.error_count)
        return {"STATUS": status,
                "ERROR_ID": self.error_id, "COMPLETED": self.completed, "SLOT_VALID": valid_slots & self.written}


# -- one scenario on a compiled unit --------------------------------------------------------

def make_unit(config: UnitConfig, backend: str, optimize: str | None = None):
    """A compiled unit of ``backend`` (:data:`BACKENDS`) for ``config``."""
    if backend == "cxxrtl":
        from .cxxrtl import CxxrtlUnit
        return CxxrtlUnit(config, optimize)
    if backend == "verilator":
        from .verilator import VerilatorUnit
        return VerilatorUnit(config, optimize)
    raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")


@dataclass
class ScenarioResult:
    """What a scenario's run checked: the requests whose completions came out (with the
    model's answer for each), the beats and the cycles."""
    checked: list           # (request fields, the model's Completion)
    beats: int
    cycles: int

    @property
    def requests(self) -> int:
        return len(self.checked)


def cycle_limit(beats: int, requests: int, gaps: int, ready: np.ndarray, completion_ready: np.ndarray) -> int:
    """The cycles a run is given before it counts as hung (the checker then reports the
    completions that never came): ten times what the beats, the requests and their gaps
    need at the streams' ready rates (the unit takes a request every cycle or two and
    emits a beat a cycle, and a request's completion comes within a few hundred cycles),
    and the cycles
    of a period of the completion stream's pattern that are not ready."""
    rate = min(ready.mean(), completion_ready.mean())
    stall = len(completion_ready) - int(np.count_nonzero(completion_ready))
    return int(10 * (beats + 40 * requests + gaps + 1000) / max(rate, 0.01)) + stall


def run_scenario(unit, scenario: Scenario, mirror: StatusMirror | None = None) -> ScenarioResult:
    """Run ``scenario`` on a compiled unit and check everything it emits with the model,
    and then the status registers against ``mirror`` (updated). Raises :class:`Mismatch`."""
    mirror = mirror if mirror is not None else StatusMirror()
    answers = model_answers(scenario, drop_large=True)
    checker = BatchChecker(scenario, answers)
    if scenario.reset_first:
        unit.reset()
        mirror.__init__()
    written = [slot for slot, image in scenario.images.items() if image is not None]
    for slot in written:
        mirror.written |= 1 << slot
    unit.bus_arrays(*_descriptor_and_valid_writes(scenario, written))
    count = len(scenario.requests)
    gaps = request_gaps(scenario.seed, count, scenario.max_gap)
    ready, completion_ready = ready_pattern(scenario.seed, scenario.ready_probability), completion_pattern(scenario)
    max_cycles = cycle_limit(checker.beat_count, count, int(gaps.sum()), ready, completion_ready)
    if scenario.reset_cycle is not None:
        max_cycles += scenario.reset_cycle
    bus_write = None
    if scenario.rewrite is not None:
        cycle, slot, word, value = scenario.rewrite
        bus_write = (cycle, SLOT_BASE + slot * SLOT_STRIDE + 4 * word, value)
    beats, beat_cycles, completions, completion_cycles, cycles = unit.run(
        scenario.requests, gaps, ready, checker.beat_count + 1, max_cycles=max_cycles,
        completion_ready=completion_ready, reset_cycle=scenario.reset_cycle, bus_write=bus_write)
    valid_after = scenario.valid_slots
    if scenario.rewrite is not None and unit.bus_done >= 0:
        answers = _rewritten(scenario, answers, unit.accept_cycles, unit.bus_done)
        checker = BatchChecker(scenario, answers)
        valid_after &= ~(1 << scenario.rewrite[1])
    taken = answers
    if scenario.reset_cycle is None:
        checker.check(beats, beat_cycles, completions, completion_cycles, cycles)
    else:
        # a reset forgets the slots: a request taken after it completes SLOT_INVALID
        after = {i: Completion(scenario.requests[i]["request_id"], ErrorCode.SLOT_INVALID, 0, None)
                 for i, accepted in enumerate(unit.accept_cycles) if accepted > scenario.reset_cycle}
        if any(accepted == scenario.reset_cycle for accepted in unit.accept_cycles):
            raise Mismatch(f"RTL and model differ at cycle {scenario.reset_cycle}: a request taken in the reset "
                           "cycle", scenario.reset_cycle)
        checker.check(beats, beat_cycles, completions, completion_cycles, cycles, scenario.reset_cycle, after)
        before = int(np.count_nonzero(completion_cycles < scenario.reset_cycle))
        mirror.__init__()
        valid_after, taken = 0, list(after.values())
        checked = list(zip(scenario.requests[:before], answers[:before]))
        checked += [(scenario.requests[i], answer) for i, answer in after.items()]
    mirror.take(taken)
    note("lockstep", backend=unit.BACKEND, config=describe(scenario.config), requests=len(scenario.requests))
    _check_registers(unit, mirror, valid_after, cycles)
    return ScenarioResult(checked if scenario.reset_cycle is not None else list(zip(scenario.requests, answers)),
                          len(beats), cycles)


def _descriptor_and_valid_writes(scenario: Scenario, written: list) -> tuple:
    """The bus writes of ``scenario``'s descriptor images (the slots ``written``, word 0
    first, as :func:`.regfile.descriptor_writes` orders them) and then its SLOT_VALID, as
    the arrays of :meth:`.native.NativeUnit.bus_arrays`: a campaign writes some 260 words
    a scenario."""
    words_per_slot = SLOT_STRIDE // 4
    for slot in written:
        if len(scenario.images[slot]) != SLOT_STRIDE:
            raise ValueError(f"slot {slot}: a descriptor image is {SLOT_STRIDE} bytes, "
                             f"not {len(scenario.images[slot])}")
    words = np.frombuffer(b"".join(scenario.images[slot] for slot in written), dtype="<u4")
    addresses = (SLOT_BASE + SLOT_STRIDE * np.repeat(np.array(written, dtype=np.int64), words_per_slot)
                 + 4 * np.tile(np.arange(words_per_slot), len(written)))
    addresses = np.append(addresses, _OFFSET["SLOT_VALID"])
    words = np.append(words, np.uint32(scenario.valid_slots))
    return addresses, np.ones(len(addresses), dtype=np.uint8), words


def _rewritten(scenario: Scenario, answers: list, accepted: np.ndarray, done: int) -> list:
    """The model's answers when a word of a slot was written during the run
    (``scenario.rewrite``), answered in cycle ``done``. The register file clears the
    slot's valid bit in the cycle its answer is on the bus and the word lands at the end
    of it (docs/registers.md), and a request takes its slot's descriptor and valid bit
    in the cycle it is accepted: a request on the slot accepted before ``done`` keeps
    the slot's descriptor, one accepted in it or after completes SLOT_INVALID."""
    slot = scenario.rewrite[1]
    answers = list(answers)
    for i, request in enumerate(scenario.requests):
        if request["slot"] == slot and accepted[i] >= done:
            answers[i] = Completion(request["request_id"], ErrorCode.SLOT_INVALID, 0, None)
    return answers


def _check_registers(unit, mirror: StatusMirror, valid: int, cycles: int):
    names = ["STATUS", "ERROR_ID", "COMPLETED", "SLOT_VALID"]
    reads = unit.bus_many([(_OFFSET[name], None) for name in names])
    want = mirror.expected(valid)
    differences = [(name, hex(want[name]), hex(got)) for name, got in zip(names, reads) if got != want[name]]
    if differences:
        raise Mismatch("\n".join([f"RTL and model differ after the run ({cycles} cycles): status registers"]
                                 + [f"  {name}: expected {e}, got {g}" for name, e, g in differences]), cycles)


# -- coverage -------------------------------------------------------------------------------

@dataclass
class Coverage:
    """What a campaign ran: per generator scenarios, requests, beats and cycles; each error
    code's completions; each access mode x operation x swizzle x element type bucket of the
    requests completed OK."""
    scenarios: Counter = field(default_factory=Counter)
    requests: Counter = field(default_factory=Counter)
    beats: Counter = field(default_factory=Counter)
    cycles: Counter = field(default_factory=Counter)
    codes: Counter = field(default_factory=Counter)
    buckets: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def add(self, generator: str, scenario: Scenario, result: ScenarioResult):
        self.scenarios[generator] += 1
        self.requests[generator] += result.requests
        self.beats[generator] += result.beats
        self.cycles[generator] += result.cycles
        for request, answer in result.checked:
            self.codes[_CODE_NAMES[answer.status]] += 1
            if answer.status == ErrorCode.OK:
                self.buckets[_bucket(scenario.images[request["slot"]], request)] += 1

    def merge(self, other: "Coverage"):
        for name in ("scenarios", "requests", "beats", "cycles", "codes", "buckets"):
            getattr(self, name).update(getattr(other, name))
        self.seconds = max(self.seconds, other.seconds)

    def to_dict(self) -> dict:
        # not dataclasses.asdict: it rebuilds a Counter from its (key, count) pairs, counting the pairs
        return {f.name: dict(getattr(self, f.name)) if isinstance(getattr(self, f.name), Counter)
                else getattr(self, f.name) for f in fields(self)}


def _bucket(image: bytes, fields: dict) -> str:
    """The access mode x operation x swizzle x element type bucket of a request completed OK."""
    tm = decode_descriptor(image)
    return "/".join([AccessMode(fields["mode"]).name, Operation(fields["operation"]).name, tm.swizzle.name,
                     tm.dtype.name])


# -- reproducers ----------------------------------------------------------------------------

def scenario_to_json(scenario: Scenario) -> dict:
    data = {k: v for k, v in asdict(scenario).items() if k not in ("config", "images", "names")}
    data["config"] = scenario.config.to_dict()
    data["images"] = {str(slot): (image.hex() if image is not None else None) for slot, image in scenario.images.items()}
    for name in _TUPLES:
        data[name] = list(getattr(scenario, name)) if getattr(scenario, name) else None
    return data


#: The scenario's fields that are tuples (JSON writes them as lists).
_TUPLES = ("completion_stall", "rewrite")


def scenario_from_json(data: dict) -> Scenario:
    """The scenario a reproducer's ``scenario`` object holds, every field checked for its
    kind and range first (a file edited by hand, cut short or of another kind is refused
    with a :class:`TmaError` naming the field, e.g. ``scenario.requests[0].mode``),
    since a hardware field would otherwise keep only the bits that fit it."""
    _check_object(data, "scenario", _SCENARIO_KINDS, required=("config", "images", "valid_slots", "requests"))
    config_data = data["config"]
    _check_object(config_data, "scenario.config", {f.name: None for f in fields(UnitConfig)})
    config = UnitConfig(**config_data)
    images = {}
    for slot, image in data["images"].items():
        name = f"scenario.images[{slot!r}]"
        if not (slot.isdecimal() and int(slot) < config.slots):
            raise TmaError(ErrorCode.ENUM_RANGE, name, shown(slot), f"is not a slot number below {config.slots}")
        if image is not None:
            if not isinstance(image, str) or len(image) != 2 * DESCRIPTOR_BYTES:
                raise TmaError(ErrorCode.FIELD_TYPE, name, shown(image),
                               f"is not null or {DESCRIPTOR_BYTES} bytes as {2 * DESCRIPTOR_BYTES} hex digits")
            try:
                image = bytes.fromhex(image)
            except ValueError:
                raise TmaError(ErrorCode.FIELD_TYPE, name, shown(image), "is not hex digits") from None
        images[int(slot)] = image
    for i, request in enumerate(data["requests"]):
        _check_request(request, f"scenario.requests[{i}]")
    for name, count in (("completion_stall", 2), ("rewrite", 4)):
        if data.get(name) is not None and len(data[name]) != count:
            raise TmaError(ErrorCode.ARRAY_LENGTH, f"scenario.{name}", shown(data[name]),
                           f"has {len(data[name])} entries, not {count}")
    for name in ("ready_probability", "completion_ready_probability"):
        if name in data and not 0 < data[name] <= 1:
            raise TmaError(ErrorCode.ENUM_RANGE, f"scenario.{name}", data[name], "is outside (0, 1]")
    for name in ("valid_slots", "seed", "max_gap", "reset_cycle"):
        if data.get(name) is not None and data[name] < 0:
            raise TmaError(ErrorCode.ENUM_RANGE, f"scenario.{name}", data[name], "is negative")
    rest = {name: value for name, value in data.items() if name not in ("config", "images", *_TUPLES)}
    tuples = {name: tuple(data[name]) if data[name] else None for name in _TUPLES if name in data}
    return Scenario(config, images, **tuples, **rest)


#: A reproducer's scenario fields and the kinds of value each holds: int, float (an int
#: too), bool, dict, list, "ints" (a list of integers); None among them: may be null.
_SCENARIO_KINDS = {"config": (dict,), "images": (dict,), "valid_slots": (int,), "requests": (list,),
                   "seed": (int,), "ready_probability": (float,), "max_gap": (int,),
                   "completion_ready_probability": (float,), "completion_stall": ("ints", None),
                   "reset_cycle": (int, None), "reset_first": (bool,), "rewrite": ("ints", None)}


def _kind_of(value, kinds) -> bool:
    for kind in kinds:
        if kind is None and value is None:
            return True
        if kind is bool and isinstance(value, bool):
            return True
        if kind is int and type(value) is int:
            return True
        if kind is float and type(value) in (int, float):
            return True
        if kind in (dict, list) and isinstance(value, kind):
            return True
        if kind == "ints" and isinstance(value, list) and all(type(v) is int for v in value):
            return True
    return False


def _check_object(data, name: str, kinds: dict, required=()) -> None:
    """FIELD_TYPE unless ``data`` is an object of the fields ``kinds`` names (each of its
    kinds, where given) with every ``required`` one; ENUM_RANGE for a field not among them."""
    if not isinstance(data, dict):
        raise TmaError(ErrorCode.FIELD_TYPE, name, shown(data), "is not an object of named fields")
    for field_name in required:
        if field_name not in data:
            raise TmaError(ErrorCode.FIELD_TYPE, f"{name}.{field_name}", "(not given)", "is a required field")
    for field_name, value in data.items():
        if field_name not in kinds:
            raise TmaError(ErrorCode.ENUM_RANGE, f"{name}.{field_name}", shown(value),
                           f"is not a field of {name} ({', '.join(kinds)})")
        if kinds[field_name] is not None and not _kind_of(value, kinds[field_name]):
            raise TmaError(ErrorCode.FIELD_TYPE, f"{name}.{field_name}", shown(value),
                           "is not " + " or ".join({int: "an integer", float: "a number", bool: "true or false",
                                                    dict: "an object", list: "a list", "ints": "a list of integers",
                                                    None: "null"}[kind] for kind in kinds[field_name]))


def _check_request(request, name: str) -> None:
    """A hardware request's fields (model/layout.py's REQUEST_FIELDS), each an integer
    (a list of them for an array) that fits its field."""
    _check_object(request, name, {f.name: ("ints",) if f.count > 1 else (int,) for f in REQUEST_FIELDS},
                  required=[f.name for f in REQUEST_FIELDS])
    for f in REQUEST_FIELDS:
        entries = request[f.name] if f.count > 1 else [request[f.name]]
        if len(entries) > f.count:
            raise TmaError(ErrorCode.ARRAY_LENGTH, f"{name}.{f.name}", shown(entries),
                           f"has {len(entries)} entries, more than the request's {f.count}")
        low, high = (-(1 << (f.width - 1)), (1 << (f.width - 1)) - 1) if f.signed else (0, (1 << f.width) - 1)
        for i, value in enumerate(entries):
            if not low <= value <= high:
                raise TmaError(ErrorCode.FIELD_WIDTH, f"{name}.{f.name}" + (f"[{i}]" if f.count > 1 else ""), value,
                               f"does not fit the request's {f.width}-bit field ({low}..{high})")


def write_reproducer(path, scenario: Scenario, report: str, backend: str, **context) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"backend": backend, **context, "report": report.splitlines(),
                                "scenario": scenario_to_json(scenario)}, indent=1) + "\n")
    return path


#: A reproducer's fields beside its scenario (write_reproducer's context).
REPRODUCER_FIELDS = {"backend": None, "seed": None, "index": None, "generator": None, "generators": None,
                     "note": None, "report": None, "scenario": None}


def read_reproducer(path) -> tuple[Scenario, dict]:
    """The scenario of a reproducer file and its context (backend, seed, ...). A file that
    is not JSON raises ``json.JSONDecodeError``; one that is not a reproducer a
    :class:`TmaError` naming the field (:func:`reproducer_from_json`)."""
    return reproducer_from_json(json.loads(Path(path).read_text()))


def reproducer_from_json(data) -> tuple[Scenario, dict]:
    _check_object(data, "reproducer", REPRODUCER_FIELDS, required=("scenario",))
    data = dict(data)
    if data.get("backend", "cxxrtl") not in BACKENDS:
        raise TmaError(ErrorCode.ENUM_RANGE, "reproducer.backend", shown(data["backend"]),
                       f"is not one of {', '.join(BACKENDS)}")
    return scenario_from_json(data.pop("scenario")), data


def replay(scenario: Scenario, backend: str = "cxxrtl", optimize: str | None = None,
           unit=None) -> ScenarioResult:
    """Run one scenario on a unit fresh from reset; raises :class:`Mismatch` on a difference."""
    unit = unit if unit is not None else make_unit(scenario.config, backend, optimize)
    unit.reset()
    return run_scenario(unit, scenario)


def _fails(scenario: Scenario, unit) -> bool:
    try:
        replay(scenario, unit=unit)
    except Exception:           # a difference, or a run that could not finish
        return True
    return False


def shrink(scenario: Scenario, unit, budget: int = 200) -> Scenario:
    """The smallest scenario found that still differs on a fresh unit: requests left out
    one at a time, then the faults, backpressure and gaps taken away, each change kept if
    the difference stays. ``budget``: the most replays tried."""
    from copy import deepcopy
    best = deepcopy(scenario)
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        for i in range(len(best.requests)):
            if tries >= budget or i >= len(best.requests):
                break
            trial = deepcopy(best)
            del trial.requests[i]
            tries += 1
            if trial.requests and _fails(trial, unit):
                best, changed = trial, True
        for name, value in (("reset_cycle", None), ("rewrite", None), ("completion_stall", None),
                            ("completion_ready_probability", 1.0),
                            ("ready_probability", 1.0), ("max_gap", 0), ("reset_first", False)):
            if getattr(best, name) != value and tries < budget:
                trial = deepcopy(best)
                setattr(trial, name, value)
                tries += 1
                if _fails(trial, unit):
                    best, changed = trial, True
    used = {fields["slot"] for fields in best.requests}
    for slot in list(best.images):
        if slot not in used:
            trial = deepcopy(best)
            del trial.images[slot]
            trial.valid_slots &= ~(1 << slot)
            if _fails(trial, unit):
                best = trial
    return best


def reproducer(failure: "Failure", report: dict, unit) -> tuple[Scenario, str]:
    """The scenario to keep for a campaign's failure, and a note: shrunk if it differs on
    a unit fresh from reset; else as it ran, with the command that reruns the scenarios
    of its chunk before it, which the difference needs."""
    scenario = scenario_from_json(failure.scenario)
    if _fails(scenario, unit):
        return shrink(scenario, unit), ""
    weights = ",".join(f"{name}={weight}" for name, weight in report["generators"].items())
    return scenario, (f"does not differ on a unit fresh from reset; it needs the scenarios before it: tma-unit "
                      f"verify --seed {report['seed']} --start {failure.chunk_start} --scenarios "
                      f"{failure.index - failure.chunk_start + 1} --generators {weights} --lanes "
                      f"{report['config']['lanes']} --backend {report['backend']}")


# -- the campaign ---------------------------------------------------------------------------

@dataclass
class Failure:
    """A scenario on which the RTL and the model differed (or the run failed), and the
    first scenario of its chunk: the unit ran the chunk's scenarios from there before it."""
    generator: str
    index: int
    report: str
    scenario: dict          # scenario_to_json
    chunk_start: int = 0


_UNITS = {}


def _unit_for(config: UnitConfig, backend: str, optimize: str | None):
    key = (config, backend, optimize)
    if key not in _UNITS:
        _UNITS[key] = make_unit(config, backend, optimize)
    return _UNITS[key]


def scenario_at(seed: int, index: int, config: UnitConfig, generators) -> tuple[str, Scenario]:
    """Scenario ``index`` of the campaign with ``seed``: its generator, chosen by the index's
    own random stream from ``generators`` (name -> weight), and the scenario."""
    draw = RandomDraw(f"{seed}:{index}")
    names = list(generators)
    name = draw.random.choices(names, weights=[generators[n] for n in names])[0]
    return name, GENERATORS[name](draw, config)


def run_chunk(config: UnitConfig, backend: str, seed: int, start: int, count: int, generators: dict,
              optimize: str | None = None) -> tuple[Coverage, list, int]:
    """Scenarios ``start`` to ``start + count`` of a campaign on this process's unit, from
    a reset: their coverage, the failures and how many ran. Anything a scenario raises is
    a failure of that scenario (a difference, a bus error, an error in the model), and the
    unit is reset before the next. A module-level function of plain arguments, so any
    executor can run it."""
    import traceback
    began = time.time()
    unit = _unit_for(config, backend, optimize)
    coverage, failures = Coverage(), []
    mirror = StatusMirror()
    unit.reset()
    for index in range(start, start + count):
        name, scenario = scenario_at(seed, index, config, generators)
        try:
            result = run_scenario(unit, scenario, mirror)
        except Exception as error:          # every failure is reported, and the campaign goes on
            report = str(error) if isinstance(error, Mismatch) else traceback.format_exc()
            # the scenario as generated (the run may have dropped requests from it), made
            # again from its seed: saving every scenario up front cost a quarter of the run
            saved = scenario_to_json(scenario_at(seed, index, config, generators)[1])
            failures.append(Failure(name, index, report, saved, start))
            unit.reset()
            mirror = StatusMirror()
        else:
            coverage.add(name, scenario, result)
    coverage.seconds = time.time() - began
    return coverage, failures, count


def fresh_seed() -> int:
    """A campaign seed from the operating system's entropy: a new one every run."""
    return random.SystemRandom().randrange(1 << 48)


#: The generators' default weights: bad input is cheap and most of the rules' logic.
DEFAULT_WEIGHTS = {"legal": 3, "boundary": 2, "illegal": 4, "faults": 1}


def run_campaign(config: UnitConfig = UnitConfig(), backend: str = "cxxrtl", seed: int | None = None,
                 scenarios: int | None = None, seconds: float | None = None, generators: dict | None = None,
                 workers: int | None = None, executor: concurrent.futures.Executor | None = None,
                 start: int = 0, chunk: int = 200, optimize: str | None = None, progress=None,
                 cases: int | None = None) -> dict:
    """A campaign: scenarios ``start`` on of the campaign with ``seed`` (a fresh one if None),
    until ``scenarios`` have run, ``cases`` (requests) have been checked or ``seconds`` have
    passed, on ``workers`` processes (default every core) or on ``executor`` (any
    :class:`concurrent.futures.Executor`: a cluster's runs the campaign unchanged). Work
    goes out in chunks of ``chunk`` scenarios. Returns the report: the seed, the merged
    :class:`Coverage` and the failures."""
    if scenarios is None and seconds is None and cases is None:
        raise ValueError("a campaign needs a count of scenarios or cases, or a time budget in seconds")
    seed = fresh_seed() if seed is None else seed
    generators = dict(generators or DEFAULT_WEIGHTS)
    unknown = set(generators) - set(GENERATORS)
    if unknown:
        raise ValueError(f"no generator named {', '.join(sorted(unknown))} (there are {', '.join(GENERATORS)})")
    make_unit(config, backend, optimize)          # build the library once, before the workers load it
    own = executor is None
    workers = workers or os.cpu_count() or 1
    if own:
        # forkserver, not fork: a fork of a process with threads running (a test runner's,
        # a notebook's) can copy a lock held mid-operation, and the worker then hangs
        context = multiprocessing.get_context("forkserver")
        executor = concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) if workers > 1 else _InProcess()
    began = time.time()
    deadline = began + seconds if seconds is not None else None
    end = start + scenarios if scenarios is not None else None
    coverage, failures, ran = Coverage(), [], 0
    next_start = start
    pending, in_flight = set(), {}
    try:
        while True:
            while len(pending) < workers and (end is None or next_start < end) and (
                    deadline is None or time.time() < deadline) and (
                    cases is None or sum(coverage.requests.values()) < cases):
                count = chunk if end is None else min(chunk, end - next_start)
                if cases is not None:
                    count = min(count, chunk_for_cases(cases, sum(coverage.requests.values()), ran,
                                                       sum(in_flight.values()), workers, chunk))
                    if count == 0:
                        break
                future = executor.submit(run_chunk, config, backend, seed, next_start, count, generators, optimize)
                pending.add(future)
                in_flight[future] = count
                next_start += count
            if not pending:
                break
            done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                del in_flight[future]
                part, found, count = future.result()
                coverage.merge(part)
                failures += found
                ran += count
                if progress is not None:
                    progress(ran, coverage, failures)
    finally:
        if own:
            executor.shutdown(cancel_futures=True)
    coverage.seconds = time.time() - began
    return {"seed": seed, "backend": backend, "config": config.to_dict(), "start": start, "scenarios": ran,
            "generators": generators, "coverage": coverage, "failures": failures}


def chunk_for_cases(cases: int, checked: int, ran: int, in_flight: int, workers: int, chunk: int) -> int:
    """The scenarios of the next chunk of a campaign that stops at ``cases`` checked
    requests, with ``checked`` checked by the ``ran`` scenarios done and ``in_flight``
    scenarios out: one a worker until a chunk has come back (a scenario checks from none
    to dozens of requests), then the scenarios still needed at the rate seen, less those
    in flight, shared among the workers, ``chunk`` at most; 0: send none now. So a
    campaign of one case runs one scenario, not a chunk for every worker."""
    if not ran:
        return 1 if in_flight < workers else 0
    rate = max(checked, 1) / ran
    needed = math.ceil((cases - checked) / rate) - in_flight
    return min(chunk, math.ceil(needed / workers)) if needed > 0 else 0


class _InProcess(concurrent.futures.Executor):
    """An executor that runs each call at once in this process (one worker)."""

    def submit(self, fn, *args, **kwargs):
        future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:      # handed to the caller through the future
            future.set_exception(error)
        return future


# -- the report -----------------------------------------------------------------------------

def buckets_possible(config: UnitConfig = UnitConfig()) -> list[str]:
    """Every access mode x operation x swizzle x element type bucket a legal request can
    fall in (the generators' reach) on a unit of ``config`` (its modes and swizzles): the
    coverage report's denominator."""
    from .generate import CASE_KINDS, legal_case
    found = set()
    for kind in CASE_KINDS:
        for k in range(3000):
            tm, req = legal_case(RandomDraw(f"buckets:{kind}:{k}"), kind)
            if req.mode in config.built_modes and tm.swizzle in config.built_swizzles:
                found.add("/".join([req.mode.name, req.operation.name, tm.swizzle.name, tm.dtype.name]))
    return sorted(found)


def format_report(report: dict, possible: list[str] | None = None) -> str:
    """The campaign's report as text: seed, per generator counts and rates, error codes
    hit, mode x operation table, buckets hit, differences."""
    coverage: Coverage = report["coverage"]
    seconds = max(coverage.seconds, 1e-9)
    weights = ",".join(f"{name}={weight}" for name, weight in report["generators"].items())
    lines = [f"campaign seed {report['seed']} (scenarios {report['start']} to {report['start'] + report['scenarios']}, "
             f"--generators {weights}), backend {report['backend']}, lanes {report['config']['lanes']}, {seconds:.1f} s"]
    lines.append(f"{'generator':<10} {'scenarios':>10} {'cases':>10} {'beats':>12} {'cycles':>13} {'cases/s':>9}")
    for name in sorted(coverage.scenarios):
        lines.append(f"{name:<10} {coverage.scenarios[name]:>10,} {coverage.requests[name]:>10,} "
                     f"{coverage.beats[name]:>12,} {coverage.cycles[name]:>13,} {coverage.requests[name] / seconds:>9,.0f}")
    total = sum(coverage.requests.values())
    lines.append(f"{'all':<10} {sum(coverage.scenarios.values()):>10,} {total:>10,} {sum(coverage.beats.values()):>12,} "
                 f"{sum(coverage.cycles.values()):>13,} {total / seconds:>9,.0f}")
    lines.append("error codes (completions, RTL and model alike):")
    codes = [code.name for code in ErrorCode]
    lines.append("  " + ", ".join(f"{name} {coverage.codes[name]:,}" for name in codes if coverage.codes[name]))
    never = unreachable(UnitConfig(**report["config"]))
    missing = [code.name for code in ErrorCode if not coverage.codes[code.name] and code not in never]
    lines.append("  not hit, of those the unit can report: " + (", ".join(missing) if missing else "none"))
    pairs = Counter()
    for bucket, count in coverage.buckets.items():
        mode, operation = bucket.split("/")[:2]
        pairs[(mode, operation)] += count
    lines.append("requests completed OK, access mode x operation:")
    for mode in AccessMode:
        cells = [f"{operation.name} {pairs[(mode.name, operation.name)]:,}" for operation in Operation
                 if pairs[(mode.name, operation.name)]]
        lines.append(f"  {mode.name:<13} " + (", ".join(cells) if cells else "none"))
    if possible is not None:
        hit = [b for b in possible if coverage.buckets[b]]
        lines.append(f"mode x operation x swizzle x type buckets hit: {len(hit)} of {len(possible)} the generators reach")
        left = [b for b in possible if not coverage.buckets[b]]
        if left:
            lines.append("  not hit: " + ", ".join(left[:20]) + (f" and {len(left) - 20} more" if len(left) > 20 else ""))
    failures = report["failures"]
    lines.append(f"differences: {len(failures)}")
    for failure in failures[:5]:
        lines.append(f"  scenario {failure.index} ({failure.generator}): {failure.report.splitlines()[0]}")
    return "\n".join(lines)


def report_to_json(report: dict) -> dict:
    return {**report, "coverage": report["coverage"].to_dict(), "failures": [asdict(f) for f in report["failures"]]}
