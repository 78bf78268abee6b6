"""Co-simulation: the RTL and the golden model side by side.

A :class:`Scenario` is what a test or the demo wants run: descriptor images per slot
(with which slots are valid), a list of hardware requests, a seed for random
backpressure on the beat stream and random gaps between requests. A backend
(:mod:`.pysim` or :mod:`.cxxrtl`) runs it on the RTL; the :class:`LockstepChecker`
compares every beat the RTL emits, as it is taken, with the model's next expected
transactions (model/unit.py ``complete``), and every completion with the model's. The
first difference stops the run with a :class:`Mismatch` naming the request, descriptor,
beat, cycle, and each field expected and got; on request (a file, or the folder
``$TMA_UNIT_MISMATCH_VCD``) with a waveform of the last cycles before it
(:func:`waveform_on_mismatch`).
"""

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..model.config import UnitConfig
from ..model.errors import ErrorCode
from ..model.layout import REQUEST_FIELDS, decode_descriptor
from ..model.memory import merge
from ..model.timing import slot_image
from ..model.transactions import Transactions
from ..model.types import Operation
from ..model.unit import check_beats, complete, Completion
from ..rtl.layouts import CompletionLayout, beat_layout, REQUEST_SLOTS_PER_LANE

__all__ = ["Scenario", "LockstepChecker", "BatchChecker", "Mismatch",
           "ready_pattern", "completion_pattern", "request_gaps", "RunResult", "waveform_on_mismatch", "MISMATCH_VCD_ENV", "MISMATCH_WINDOW",
           "flat_layout", "field_values", "expected_beats", "model_answers", "MAX_CASE_BEATS", "code_name"]


@dataclass
class Scenario:
    """What to run: ``images`` maps slot -> 128-byte image written before the run (None:
    not written); ``valid_slots`` the SLOT_VALID mask written after them; ``requests``
    hardware request field dicts, offered in order; ``seed`` the seed of the beat and
    completion streams' ready patterns (:func:`ready_pattern`, with
    ``ready_probability`` and ``completion_ready_probability``) and of the idle cycles
    before each request (:func:`request_gaps`, up to ``max_gap``); ``names`` the requests'
    names in reports; and the faults below."""
    config: UnitConfig
    images: dict
    valid_slots: int
    requests: list
    seed: int = 0
    ready_probability: float = 1.0
    max_gap: int = 0
    names: list = field(default_factory=list)
    # faults (docs/verification.md): the chance the completion stream is ready in a cycle,
    # and (first cycle, cycles) it is not ready at all; a one-cycle reset at a cycle of the
    # run (requests not yet accepted then are not offered); a reset before the run, so
    # slots the scenario does not write hold no descriptor; (cycle, slot, word, value): a
    # bus write to a word of a slot, started in that cycle of the run
    completion_ready_probability: float = 1.0
    completion_stall: tuple | None = None
    reset_cycle: int | None = None
    reset_first: bool = False
    rewrite: tuple | None = None


def ready_pattern(seed: int, probability: float, length: int = 4096) -> np.ndarray:
    """A repeating ready pattern for a stream: 1 with the given probability."""
    if probability >= 1.0:
        return np.ones(length, dtype=np.uint8)
    rng = np.random.default_rng(seed)
    return (rng.random(length) < probability).astype(np.uint8)


def completion_pattern(scenario: "Scenario") -> np.ndarray:
    """The completion stream's ready pattern (repeating): ready at the scenario's rate,
    with the stall, if any, of ``length`` cycles from cycle ``first`` of each period."""
    pattern = ready_pattern(scenario.seed + 7, scenario.completion_ready_probability)
    if scenario.completion_stall is not None:
        first, length = scenario.completion_stall
        pattern = np.concatenate([pattern[:first], np.zeros(length, dtype=np.uint8), pattern[first:]])
    return pattern


def request_gaps(seed: int, count: int, max_gap: int) -> np.ndarray:
    """Idle cycles before each request is offered."""
    if max_gap <= 0:
        return np.zeros(count, dtype=np.int32)
    return np.random.default_rng(seed + 1).integers(0, max_gap + 1, count).astype(np.int32)


class Mismatch(AssertionError):
    """The RTL and the model disagree; the message is the report, ``cycle`` the cycle of
    the difference (counted as the backend counts: the batched run's cycles on the
    compiled backends, the simulation's on Amaranth's)."""

    def __init__(self, report: str, cycle: int):
        super().__init__(report)
        self.cycle = cycle


#: The folder where a co-simulation run that differs from the model writes a waveform of
#: its last cycles, when the run was given no file of its own (unset: none is written).
MISMATCH_VCD_ENV = "TMA_UNIT_MISMATCH_VCD"
#: The cycles before a difference that its waveform shows on the compiled backend.
MISMATCH_WINDOW = 200


def waveform_on_mismatch(run, replay, path: str | None, backend: str, window: int | None = MISMATCH_WINDOW):
    """``run()``, and what it returns. If it raises a :class:`Mismatch` and a waveform is
    asked for (``path``, else ``mismatch-<backend>.vcd`` in the folder named by
    ``$TMA_UNIT_MISMATCH_VCD``), ``replay(path, first, last)`` runs the scenario again,
    recording its cycles ``first`` to ``last`` to ``path``: the ``window`` cycles up to the
    difference (``None``: from the start, for a backend that cannot start recording
    mid-run). The report is raised again with the file's name, and a note if the replay
    did not differ at the same cycle."""
    try:
        return run()
    except Mismatch as error:
        if path is None and os.environ.get(MISMATCH_VCD_ENV):
            path = str(Path(os.environ[MISMATCH_VCD_ENV]) / f"mismatch-{backend}.vcd")
        if path is None:
            raise
        first = 0 if window is None else max(0, error.cycle - window)
        again = None
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            replay(path, first, error.cycle)
        except Mismatch as repeated:
            again = repeated
        except OSError as failed:       # the report still stands
            raise Mismatch(f"{error}\n  no waveform: {failed}", error.cycle) from None
        note = "" if again is not None and again.cycle == error.cycle else (
            " (the replay, on a unit fresh from reset, did not differ at the same cycle: the first run's unit had "
            "run other scenarios before)")
        raise Mismatch(f"{error}\n  waveform of cycles {first} to {error.cycle}: {path}{note}", error.cycle) from None


@dataclass
class RunResult:
    beats: int
    cycles: int
    completions: list
    bytes_moved: int
    beat_cycles: list = field(default_factory=list)     # the cycle each beat was taken
    completion_cycles: list = field(default_factory=list)   # the cycle each completion was taken


# -- layouts as flat fields ---------------------------------------------------------------

def flat_layout(layout, prefix: str = "", base: int = 0) -> list[tuple[str, int, int]]:
    """(name, offset, width) of every scalar field of a ``data`` layout, in layout order:
    array entries named ``name[i]``, nested fields ``outer.inner``."""
    from amaranth.lib import data
    out = []
    if isinstance(layout, data.ArrayLayout):
        elem = layout.elem_shape
        size = data.Layout.cast(elem).size if isinstance(elem, data.Layout) else _shape_width(elem)
        for i in range(layout.length):
            out += flat_layout(elem, f"{prefix}[{i}]", base + i * size)
        return out
    if isinstance(layout, data.StructLayout):
        for name, member in layout:
            out += flat_layout(member.shape, f"{prefix}.{name}" if prefix else name, base + member.offset)
        return out
    width = data.Layout.cast(layout).size if isinstance(layout, data.Layout) else _shape_width(layout)
    return [(prefix, base, width)]


def _shape_width(shape) -> int:
    from amaranth.hdl import Shape
    return Shape.cast(shape).width


def field_values(words: np.ndarray, offset: int, width: int) -> np.ndarray:
    """Bits ``offset`` to ``offset + width`` (at most 64 bits) of each row of ``words``
    (uint32, least significant word first), as uint64."""
    if width > 64:
        raise ValueError(f"a field of {width} bits is wider than the checker's 64: split it in the layout")
    if len(words) == 0:
        return np.zeros(0, dtype=np.uint64)
    first, shift = divmod(offset, 32)
    value = words[:, first].astype(np.uint64) >> np.uint64(shift)
    have = 32 - shift
    index = first + 1
    while have < width:
        value |= words[:, index].astype(np.uint64) << np.uint64(have)
        have += 32
        index += 1
    if width < 64:
        value &= np.uint64((1 << width) - 1)
    return value


# -- what the model expects -----------------------------------------------------------------

_REQUEST_NAMES = {f.name for f in REQUEST_FIELDS}


def _lane_expected(name: str, transactions: Transactions, count: int, width: int) -> np.ndarray:
    """The model's value of lane field ``name`` for each of a request's transactions."""
    if name == "valid":
        return np.ones(count, dtype=np.uint64)
    if not hasattr(transactions, name):
        raise LookupError(f"the beat field lanes[].{name} has no expected value: the model's transactions "
                          "have no field of that name")
    value = np.asarray(getattr(transactions, name))
    if name == "global_address":        # the unit's addresses are address_width bits
        value = value.astype(np.uint64) & np.uint64((1 << width) - 1 if width < 64 else (1 << 64) - 1)
    return np.broadcast_to(value, (count,)).astype(np.uint64)


def _side_expected(name: str, transactions: Transactions, fields: dict) -> int:
    """The model's value of a beat field shared by the beat's chunks."""
    if name in _REQUEST_NAMES:
        return int(fields[name])
    value = getattr(transactions, name, None)
    if value is None or isinstance(value, np.ndarray):
        raise LookupError(f"the beat field {name} has no expected value: neither the request nor the model's "
                          "transactions have a scalar field of that name")
    return int(value)


def _chunk_grid(t: Transactions, lanes: int) -> np.ndarray:
    """The transaction in each lane of each beat of ``t`` (beats x lanes; -1: none)."""
    grid = np.full((t.beats(lanes), lanes), -1, dtype=np.int64)
    beat, lane = t.places(lanes)
    grid[beat, lane] = np.arange(len(t))
    return grid


def request_slots(t: Transactions, operation: int, lanes: int, granule: int, address_width: int) -> dict:
    """A request's beats' L2 request slots (``requests[i].field`` -> an array over its
    beats), from the model's merge (model/memory.py): the request whose lowest lane is
    ``j`` goes in slot ``2j`` if its granule is that lane's chunk's, else in ``2j + 1`` (the
    next granule: a chunk spans fewer bytes than a granule), as the beat layout places
    them (rtl/layouts.py, rtl/request_former.py); slots holding none are not valid."""
    beats = t.beats(lanes)
    chunk_at = _chunk_grid(t, lanes)
    merged = merge(t, lanes, Operation(operation), granule)
    columns = {f"requests[{i}].{name}": np.zeros(beats, dtype=np.uint64)
               for i in range(REQUEST_SLOTS_PER_LANE * lanes) for name in ("valid", "address", "sectors", "lanes")}
    address_mask = np.uint64((1 << address_width) - 1)
    shift = np.uint64(granule.bit_length() - 1)
    for k in range(len(merged)):
        beat, lane_mask = int(merged.beat[k]), int(merged.lanes[k])
        first = (lane_mask & -lane_mask).bit_length() - 1
        own = (np.uint64(t.global_address[chunk_at[beat, first]]) & address_mask) >> shift
        address = np.uint64(merged.address[k]) & address_mask
        # granule numbers wrap as addresses do: a chunk may start below 0 (out of bounds) and
        # hold in-bounds units in granule 0
        step = (int(address >> shift) - int(own)) % (1 << (address_width - int(shift)))
        assert step in (0, 1), "a chunk's bytes reach past the granule after its own"
        slot = REQUEST_SLOTS_PER_LANE * first + step
        for name, value in (("valid", 1), ("address", address), ("sectors", merged.sectors[k]), ("lanes", lane_mask)):
            columns[f"requests[{slot}].{name}"][beat] = np.uint64(value)
    return columns


def expected_beats(requests: list, answers: list, flat: list, lanes: int, granule: int = 0,
                   address_width: int = 64) -> tuple[dict, np.ndarray]:
    """Every beat field (``flat``: :func:`flat_layout` of the beat layout) of every beat the
    model expects for ``requests`` (their answers: :class:`~tma_unit.model.unit.Completion`),
    as arrays, and the index of the request each beat belongs to. A request's beats hold
    its transactions as :meth:`~tma_unit.model.transactions.Transactions.places` places
    them, one a lane; the lanes a beat leaves empty have ``valid`` 0 and their other
    fields 0. A unit with a request former of ``granule`` bytes adds each beat's L2
    requests (:func:`request_slots`)."""
    have = [(index, answer.transactions) for index, answer in enumerate(answers)
            if answer.transactions is not None and len(answer.transactions)]
    if not have:
        return {name: np.zeros(0, dtype=np.uint64) for name, _, _ in flat}, np.zeros(0, dtype=np.int64)
    counts = np.array([len(t) for _, t in have], dtype=np.int64)
    beats = np.array([t.beats(lanes) for _, t in have], dtype=np.int64)
    # the transaction each lane place holds, in all requests' transactions end to end (-1: none)
    taken = np.concatenate([np.where(grid >= 0, grid + first, -1) for grid, first
                            in zip((_chunk_grid(t, lanes) for _, t in have), np.cumsum(counts) - counts)])
    valid = taken >= 0
    taken = np.maximum(taken, 0)
    columns = {}
    for name, _, width in flat:
        if name.startswith("lanes[0]."):        # all lanes at once, from lane 0's entry
            lane_name = name[len("lanes[0]."):]
            values = np.concatenate([_lane_expected(lane_name, t, len(t), width) for _, t in have])
            grid = np.where(valid, values[taken], 0)
            for j in range(lanes):
                columns[f"lanes[{j}].{lane_name}"] = grid[:, j]
        elif name == "last":
            last = np.zeros(int(beats.sum()), dtype=np.uint64)
            last[np.cumsum(beats) - 1] = 1
            columns[name] = last
        elif name.startswith("requests["):      # every slot's fields at once
            if not granule:
                raise LookupError("the beat has L2 request slots, but no request former's granule was given")
            if name not in columns:
                per_request = [request_slots(t, requests[index]["operation"], lanes, granule, address_width)
                               for index, t in have]
                columns.update({slot_field: np.concatenate([slots[slot_field] for slots in per_request])
                                for slot_field in per_request[0]})
        elif not name.startswith("lanes["):
            columns[name] = np.repeat(np.array([_side_expected(name, t, requests[index]) for index, t in have],
                                               dtype=np.uint64), beats)
    return columns, np.repeat(np.array([index for index, _ in have], dtype=np.int64), beats)


# -- the checker ----------------------------------------------------------------------------

#: The most beats a request of a campaign's scenario may take: a box that fills the whole
#: of Hopper's shared memory at lanes 1 (14,528 chunks), and prefetches of that many beats
#: at any lane count. A legal prefetch may name 2^43 bytes; a run that long is left out.
MAX_CASE_BEATS = 16384


def model_answers(scenario: Scenario, drop_large: bool = False) -> list[Completion]:
    """The model's completion of each request of a scenario: a slot is the image the
    scenario wrote there if its SLOT_VALID bit is set, else none (SLOT_INVALID). The
    rules are checked first, and the transactions made only for a request that keeps
    them. With ``drop_large``, a request that would take more than :data:`MAX_CASE_BEATS`
    beats is taken out of the scenario first."""
    config = scenario.config
    answers, kept = [], []
    for request in scenario.requests:
        image = slot_image(config, scenario.images, scenario.valid_slots, request["slot"])
        status, _, beats = check_beats(image, request, config)
        if status != ErrorCode.OK:
            answers.append(Completion(request["request_id"], status, 0, None))
        elif drop_large and beats > MAX_CASE_BEATS:
            continue
        else:
            answers.append(complete(image, request, config))
        kept.append(request)
    scenario.requests[:] = kept
    return answers


def _qualifiers(flat: list) -> dict:
    """Each beat field that counts only where a valid bit beside it is set (a lane's chunk
    fields, a request slot's), mapped to that bit's field."""
    return {name: f"{name[:name.index('.')]}.valid" for name, _, _ in flat
            if name.startswith(("lanes[", "requests[")) and not name.endswith(".valid")}


@functools.lru_cache(maxsize=None)
def _flat_layouts(config) -> tuple[list, list]:
    """The flattened beat and completion layouts of ``config``, made once: a campaign
    checks thousands of scenarios of one configuration."""
    return flat_layout(beat_layout(config)), flat_layout(CompletionLayout)


class BatchChecker:
    """The model's expected beats and completions of a scenario, compared with a whole
    run's output at once."""

    def __init__(self, scenario: Scenario, answers: list | None = None):
        self.scenario = scenario
        config = scenario.config
        self.flat, self.completion_flat = _flat_layouts(config)
        self.answers = answers if answers is not None else model_answers(scenario)
        self.expected, self.owners = expected_beats(scenario.requests, self.answers, self.flat, config.lanes,
                                                    config.request_former, config.address_width)
        self.qualifier = _qualifiers(self.flat)
        self.beat_count = len(self.owners)

    def _context(self, index: int) -> str:
        fields = self.scenario.requests[index]
        slot = fields["slot"]
        image = self.scenario.images.get(slot)
        try:
            descriptor = decode_descriptor(image).to_dict() if image is not None else None
        except Exception as error:      # an illegal image: show why
            descriptor = f"illegal: {error}"
        return f"request {index}\n  request: {fields}\n  descriptor (slot {slot}): {descriptor}"

    def _model_error(self, index: int):
        fields, scenario = self.scenario.requests[index], self.scenario
        return complete(slot_image(scenario.config, scenario.images, scenario.valid_slots, fields["slot"]), fields,
                        scenario.config).error

    def _fail(self, what: str, cycle: int, differences: list, index: int):
        lines = [f"RTL and model differ at cycle {cycle}: {what}", self._context(max(index, 0))]
        lines += [f"  {name}: expected {expected!r}, got {got!r}" for name, expected, got in differences]
        raise Mismatch("\n".join(lines), cycle)

    def compare_completions(self, words: np.ndarray, cycles: np.ndarray, answers: list, indices=None):
        """Completions ``words`` (taken at ``cycles``) against the model's ``answers``, in
        order: each field of the completion layout against the answer's field of the
        same name. ``indices``: the scenario's request each answer is for (default: the
        first ones, in order)."""
        indices = list(range(len(answers))) if indices is None else list(indices)
        count = min(len(words), len(answers))
        got = {name: field_values(words[:count], offset, width) for name, offset, width in self.completion_flat}
        want = {name: np.array([int(getattr(answer, name)) for answer in answers[:count]], dtype=np.uint64)
                for name, _, _ in self.completion_flat}
        bad = np.zeros(count, dtype=bool)
        for name, _, _ in self.completion_flat:
            bad |= got[name] != want[name]
        if bad.any():
            i = int(np.argmax(bad))
            show = {"status": code_name}
            differences = [(name, show.get(name, int)(want[name][i]), show.get(name, int)(got[name][i]))
                           for name, _, _ in self.completion_flat if want[name][i] != got[name][i]]
            if answers[i].status != ErrorCode.OK:       # the rule, in the model's words
                differences.append(("model's error", str(self._model_error(indices[i])), None))
            self._fail(f"completion of request {indices[i]}", int(cycles[i]), differences, indices[i])

    def check(self, beat_words: np.ndarray, beat_cycles: np.ndarray, completion_words: np.ndarray,
              completion_cycles: np.ndarray, cycles: int, reset_cycle: int | None = None,
              after_reset: dict | None = None) -> None:
        """Raise :class:`Mismatch` at the first difference. With ``reset_cycle``, the output
        before the reset must be a prefix of the model's, nothing may be transferred in the
        reset cycle, and after it the only output is the completions of the requests taken
        after the reset, ``after_reset`` (request index -> the model's answer), in order."""
        if reset_cycle is not None:
            during = [int(c) for c in list(beat_cycles) + list(completion_cycles) if c == reset_cycle]
            if during:
                self._fail(f"a transfer in the reset cycle {reset_cycle}", reset_cycle, [], 0)
            late = sorted(int(c) for c in beat_cycles if c > reset_cycle)
            if late:
                self._fail(f"a beat after the reset at cycle {reset_cycle}", late[0], [], 0)
            before = completion_cycles < reset_cycle
            after_reset = after_reset or {}
            self.compare_completions(completion_words[~before], completion_cycles[~before],
                                     list(after_reset.values()), list(after_reset))
            if int((~before).sum()) != len(after_reset):
                self._fail(f"{int((~before).sum())} completions after the reset, of the {len(after_reset)} "
                           "requests taken after it", cycles, [], 0)
            completion_words, completion_cycles = completion_words[before], completion_cycles[before]
        got_beats, want_beats = len(beat_words), self.beat_count
        got_completions, want_completions = len(completion_words), len(self.answers)
        count = min(got_beats, want_beats)
        got = {name: field_values(beat_words[:count], offset, width) for name, offset, width in self.flat}
        bad = np.zeros(count, dtype=bool)
        for name, _, _ in self.flat:
            differs = got[name] != self.expected[name][:count]
            if name in self.qualifier:      # only a valid chunk's or request slot's fields count
                differs &= self.expected[self.qualifier[name]][:count] == 1
            bad |= differs
        if bad.any():
            b = int(np.argmax(bad))
            owner = int(self.owners[b])
            differences = [(name, int(self.expected[name][b]), int(got[name][b])) for name, _, _ in self.flat
                           if got[name][b] != self.expected[name][b]
                           and (name not in self.qualifier or self.expected[self.qualifier[name]][b] == 1)]
            first = int(np.argmax(self.owners == owner))
            self._fail(f"beat {b - first} of request {owner}", int(beat_cycles[b]), differences, owner)
        if got_beats > want_beats:
            self._fail("a beat the model does not expect", int(beat_cycles[want_beats]), [],
                       int(self.owners[-1]) if want_beats else len(self.answers) - 1)
        if got_completions > want_completions:
            self._fail("a completion the model does not expect", int(completion_cycles[want_completions]), [],
                       want_completions - 1)
        self.compare_completions(completion_words, completion_cycles, self.answers)
        # a request's completion comes after its last beat
        ends = np.flatnonzero(self.expected["last"]) if want_beats else np.zeros(0, dtype=np.int64)
        for end in ends:
            owner = int(self.owners[end])
            if owner < got_completions and (end >= got_beats or completion_cycles[owner] <= beat_cycles[end]):
                self._fail(f"the completion of request {owner} before its last beat", int(completion_cycles[owner]),
                           [], owner)
        if reset_cycle is not None:
            return      # a prefix is all a reset leaves
        if got_completions != want_completions:
            self._fail(f"the run ended with {got_completions} of {want_completions} completions", cycles, [],
                       min(got_completions, want_completions - 1))
        if got_beats < want_beats:
            self._fail(f"the run ended with {got_beats} of {want_beats} beats", cycles, [],
                       int(self.owners[got_beats]))


_CODE_NAMES = {code.value: code.name for code in ErrorCode}


def code_name(status: int):
    """An error code's name, or the number itself where no code has it."""
    return _CODE_NAMES.get(int(status), int(status))


class LockstepChecker:
    """A scenario's expected beats and completions (:class:`BatchChecker`'s), compared one
    at a time as the RTL produces them: every field of the beat layout, each beat's
    payload given as its bits."""

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self.batch = BatchChecker(scenario)
        self.valid = self.batch.qualifier
        self.lane_valid = [name for name, _, _ in self.batch.flat if name.startswith("lanes[") and name.endswith(".valid")]
        self.beats_seen = 0
        self.completion_index = 0
        self.bytes_moved = 0
        self.completions = []
        self.beat_cycles = []
        self.completion_cycles = []

    def _fail(self, what, cycle, differences, index):
        self.batch._fail(what, cycle, differences, index)

    def on_beat(self, cycle: int, bits: int):
        """A beat the RTL emitted, its payload as an int laid out as the beat layout."""
        batch, b = self.batch, self.beats_seen
        if b >= batch.beat_count:
            self._fail("a beat the model does not expect", cycle, [("beat", None, hex(bits))],
                       len(batch.answers) - 1)
        expected = batch.expected
        differences = []
        for name, offset, width in batch.flat:
            got, want = bits >> offset & ((1 << width) - 1), int(expected[name][b])
            if got != want and (name not in self.valid or expected[self.valid[name]][b]):
                differences.append((name, want, got))
        owner = int(batch.owners[b])
        if differences:
            first = int(np.argmax(batch.owners == owner))
            self._fail(f"beat {b - first} of request {owner}", cycle, differences, owner)
        self.bytes_moved += 16 * sum(int(expected[name][b]) for name in self.lane_valid)
        self.beats_seen += 1
        self.beat_cycles.append(cycle)

    def on_completion(self, cycle: int, bits: int):
        """A completion the RTL emitted, its payload as an int laid out as the completion
        layout."""
        batch, i = self.batch, self.completion_index
        if i >= len(batch.answers):
            self._fail("a completion the model does not expect", cycle, [("completion", None, hex(bits))],
                       len(batch.answers) - 1)
        words = np.frombuffer(bits.to_bytes(4 * ((CompletionLayout.size + 31) // 32), "little"), dtype=np.uint32)
        batch.compare_completions(words.reshape(1, -1), np.array([cycle]), batch.answers[i:i + 1], [i])
        ends = np.flatnonzero((batch.owners == i) & (batch.expected["last"] == 1))
        if len(ends) and self.beats_seen <= ends[0]:
            self._fail(f"the completion of request {i} before its last beat", cycle, [], i)
        answer = batch.answers[i]
        self.completions.append((answer.request_id, int(answer.status), answer.transaction_bytes))
        self.completion_cycles.append(cycle)
        self.completion_index += 1

    def finish(self, cycles: int) -> RunResult:
        batch = self.batch
        if self.completion_index != len(batch.answers):
            self._fail(f"the run ended with {self.completion_index} of {len(batch.answers)} completions",
                       cycles, [], min(self.completion_index, len(batch.answers) - 1))
        if self.beats_seen < batch.beat_count:
            self._fail("beats the model expected never came", cycles, [], int(batch.owners[self.beats_seen]))
        return RunResult(self.beats_seen, cycles, self.completions, self.bytes_moved, self.beat_cycles,
                         self.completion_cycles)
