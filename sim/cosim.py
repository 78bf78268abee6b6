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
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from ..model.config import UnitConfig
from ..model.errors import ErrorCode
from ..model.layout import decode_descriptor
from ..model.unit import complete, Completion

__all__ = ["Scenario", "BeatRecord", "LaneRecord", "beat_decoder", "LockstepChecker", "Mismatch", "ready_pattern",
           "request_gaps", "RunResult", "waveform_on_mismatch", "MISMATCH_VCD_ENV", "MISMATCH_WINDOW"]


@dataclass(frozen=True)
class LaneRecord:
    valid: bool
    global_address: int
    global_length: int
    smem_address: int
    mask: int
    units: int


@dataclass(frozen=True)
class BeatRecord:
    lanes: tuple
    element_pitch: int
    fill: int
    request_id: int
    operation: int
    multicast_mask: int
    last: bool

    @classmethod
    def from_view(cls, view):
        """From an RTL beat payload (a ``data.Const`` of ``beat_layout``)."""
        return beat_decoder(view.shape())(view.as_bits())


@functools.cache
def beat_decoder(layout):
    """A function from a beat payload's bits (an int laid out as ``layout``, a
    ``beat_layout``) to its :class:`BeatRecord`. The fields' offsets are read off the
    layout once, so decoding is a shift and a mask a field: a ``data.Const`` view costs
    some 30 times that, and was most of a compiled backend's checked run."""
    def places(cls, struct, base=0):
        """(name, offset, mask, bool or int) of each field of ``cls`` but the lanes."""
        return [(f.name, base + struct[f.name].offset, (1 << struct[f.name].width) - 1,
                 bool if f.type in (bool, "bool") else int) for f in fields(cls) if f.name != "lanes"]

    lanes = layout["lanes"]
    lane = lanes.shape.elem_shape
    lane_places = [places(LaneRecord, lane, lanes.offset + i * lane.size) for i in range(lanes.shape.length)]
    beat_places = places(BeatRecord, layout)

    def values(bits: int, where) -> dict:
        return {name: kind(bits >> offset & mask) for name, offset, mask, kind in where}

    def decode(bits: int) -> BeatRecord:
        return BeatRecord(lanes=tuple(LaneRecord(**values(bits, where)) for where in lane_places),
                          **values(bits, beat_places))
    return decode


@dataclass
class Scenario:
    """What to run: ``images`` maps slot -> 128-byte image (or None: never written);
    ``valid_slots`` the SLOT_VALID mask; ``requests`` hardware request field dicts."""
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
    # slots the scenario does not write hold no descriptor
    completion_ready_probability: float = 1.0
    completion_stall: tuple | None = None
    reset_cycle: int | None = None
    reset_first: bool = False


def ready_pattern(seed: int, probability: float, length: int = 4096) -> np.ndarray:
    """A repeating ready pattern for the beat stream: 1 with the given probability."""
    if probability >= 1.0:
        return np.ones(length, dtype=np.uint8)
    rng = np.random.default_rng(seed)
    return (rng.random(length) < probability).astype(np.uint8)


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


class LockstepChecker:
    """Expected beats and completions of a scenario, compared as the RTL produces them."""

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        config = scenario.config
        self.lanes = config.lanes
        self.address_mask = (1 << config.address_width) - 1
        self.expected = []              # per request: (Completion, [beats of transactions])
        for fields in scenario.requests:
            slot = fields["slot"]
            valid = slot < config.slots and (scenario.valid_slots >> slot) & 1
            image = scenario.images.get(slot) if valid else None
            result = complete(image, fields, config)
            beats = []
            if result.transactions is not None:
                stream = list(result.transactions)
                beats = [stream[i:i + self.lanes] for i in range(0, len(stream), self.lanes)]
            self.expected.append((result, beats))
        self.request_index = 0          # request whose beats come next
        self.beat_index = 0
        self.completion_index = 0
        self.beats_seen = 0
        self.bytes_moved = 0
        self.completions = []
        self.beat_cycles = []
        self.completion_cycles = []

    # -- reports -----------------------------------------------------------------------
    def _context(self, index):
        fields = self.scenario.requests[index]
        slot = fields["slot"]
        image = self.scenario.images.get(slot)
        try:
            descriptor = decode_descriptor(image).to_dict() if image is not None else None
        except Exception as error:      # an illegal image: show why
            descriptor = f"illegal: {error}"
        name = self.scenario.names[index] if index < len(self.scenario.names) else f"request {index}"
        return f"{name}\n  request: {fields}\n  descriptor (slot {slot}): {descriptor}"

    def _fail(self, what, cycle, differences, index):
        lines = [f"RTL and model differ at cycle {cycle}: {what}", self._context(index)]
        lines += [f"  {name}: expected {expected!r}, got {got!r}" for name, expected, got in differences]
        raise Mismatch("\n".join(lines), cycle)

    # -- checks ------------------------------------------------------------------------
    def _skip_beatless(self):
        while (self.request_index < len(self.expected)
               and self.beat_index >= len(self.expected[self.request_index][1])):
            self.request_index += 1
            self.beat_index = 0

    def on_beat(self, cycle: int, beat: BeatRecord):
        self._skip_beatless()
        if self.request_index >= len(self.expected):
            self._fail("a beat the model does not expect", cycle, [("beat", None, beat)], len(self.expected) - 1)
        result, beats = self.expected[self.request_index]
        want = beats[self.beat_index]
        last = self.beat_index == len(beats) - 1
        differences = []
        fields = self.scenario.requests[self.request_index]
        for name, expected, got in (("request_id", fields["request_id"], beat.request_id),
                                    ("operation", fields["operation"], beat.operation),
                                    ("last", last, beat.last),
                                    ("fill", want[0].fill, beat.fill),
                                    ("element_pitch", want[0].element_pitch, beat.element_pitch)):
            if expected != got:
                differences.append((name, expected, got))
        if fields["operation"] == 0 and fields["multicast_mask"] != beat.multicast_mask:
            differences.append(("multicast_mask", fields["multicast_mask"], beat.multicast_mask))
        for j in range(self.lanes):
            lane = beat.lanes[j]
            if j >= len(want):
                if lane.valid:
                    differences.append((f"lane {j} valid", False, True))
                continue
            t = want[j]
            for name, expected, got in (("valid", True, lane.valid),
                                        ("global_address", t.global_address & self.address_mask, lane.global_address),
                                        ("global_length", t.global_length, lane.global_length),
                                        ("smem_address", t.smem_address, lane.smem_address),
                                        ("mask", t.mask, lane.mask), ("units", t.units, lane.units)):
                if expected != got:
                    differences.append((f"lane {j} {name}", expected, got))
            self.bytes_moved += 16
        if differences:
            self._fail(f"beat {self.beat_index} of request {self.request_index}", cycle, differences,
                       self.request_index)
        self.beats_seen += 1
        self.beat_index += 1
        self.beat_cycles.append(cycle)

    def on_completion(self, cycle: int, request_id: int, status: int, transaction_bytes: int):
        if self.completion_index >= len(self.expected):
            self._fail("a completion the model does not expect", cycle,
                       [("completion", None, (request_id, status, transaction_bytes))], len(self.expected) - 1)
        result: Completion = self.expected[self.completion_index][0]
        differences = [(name, expected, got) for name, expected, got in (
            ("request_id", result.request_id, request_id),
            ("status", ErrorCode(result.status).name, ErrorCode(status).name if status in ErrorCode._value2member_map_ else status),
            ("transaction_bytes", result.transaction_bytes, transaction_bytes)) if expected != got]
        if result.error is not None and differences:
            differences.append(("model's error", str(result.error), None))
        if differences:
            self._fail(f"completion {self.completion_index}", cycle, differences, self.completion_index)
        self.completions.append((request_id, status, transaction_bytes))
        self.completion_cycles.append(cycle)
        self.completion_index += 1

    def finish(self, cycles: int) -> RunResult:
        if self.completion_index != len(self.expected):
            self._fail(f"the run ended with {self.completion_index} of {len(self.expected)} completions",
                       cycles, [], min(self.completion_index, len(self.expected) - 1))
        self._skip_beatless()
        if self.request_index < len(self.expected):
            self._fail("beats the model expected never came", cycles, [], self.request_index)
        return RunResult(self.beats_seen, cycles, self.completions, self.bytes_moved, self.beat_cycles,
                         self.completion_cycles)
