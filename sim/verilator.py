"""Co-simulation of the exported Verilog under Verilator (issue "Verilog export and FPGA
prototyping"): what users get in Verilog, checked by the same lockstep checker.

The Verilog comes from ``tma-unit export`` (:mod:`tma_unit.export`); Verilator turns it
into C++, which is compiled with the run loop of :mod:`.native` into a shared library,
cached like the CXXRTL one. Needs ``verilator`` on PATH (Debian: ``apt-get install
verilator``).
"""

import os
import shutil
import subprocess
from pathlib import Path

from ..model.config import UnitConfig
from .cosim import RunResult, Scenario
from .native import NativeUnit, cache_dir, cache_key, compiler, optimize_flags, payload_defines, run_loop, run_native

__all__ = ["VerilatorUnit", "run_verilator", "build_library", "LINT_SUPPRESSED", "lint"]

#: Warnings ``verilator --lint-only -Wall`` reports on Amaranth's output that hide no real
#: problem (docs/export.md says why for each).
LINT_SUPPRESSED = ("WIDTH", "UNUSEDSIGNAL", "DECLFILENAME")

_PORT_ACCESS = r"""
#include <cstdint>
#include <cstring>
#include "verilated.h"
#include "Vtma_unit.h"

namespace {
struct Harness {
    VerilatedContext context;
    Vtma_unit *top;
    long long cycle = 0;
    Harness() : top(new Vtma_unit(&context)) {}
    ~Harness() { top->final(); delete top; }
};
template<std::size_t N> void put(VlWide<N> &w, const uint32_t *words) { for (std::size_t i = 0; i < N; i++) w[i] = words[i]; }
inline void put(QData &q, const uint32_t *words) { q = QData(words[0]) | QData(words[1]) << 32; }
inline void put(IData &v, const uint32_t *words) { v = words[0]; }
template<std::size_t N> void take(const VlWide<N> &w, uint32_t *words) { for (std::size_t i = 0; i < N; i++) words[i] = w[i]; }
inline void take(QData q, uint32_t *words) { words[0] = uint32_t(q); words[1] = uint32_t(q >> 32); }
inline void take(IData v, uint32_t *words) { words[0] = v; }
}

#define PORT(name) h->top->name
#define SET(name, v) (PORT(name) = (v))
#define GET(name) uint32_t(PORT(name))
#define PUT(name, words) put(PORT(name), words)
#define TAKE(name, words) take(PORT(name), words)
#define SETTLE() h->top->eval()
#define RISE() do { SET(clk, 1); h->top->eval(); SET(clk, 0); } while (0)
#define EVALUATE() SETTLE()
#define EDGE() RISE()
#define SAMPLE(cycle)           // no waveforms: the Verilog is built without tracing
"""


def verilator() -> str:
    found = shutil.which("verilator")
    if found is None:
        raise RuntimeError("the Verilator backend needs `verilator` on PATH (Debian: apt-get install verilator)")
    return found


def lint(verilog_path: Path) -> subprocess.CompletedProcess:
    """``verilator --lint-only -Wall`` with :data:`LINT_SUPPRESSED` off."""
    return subprocess.run([verilator(), "--lint-only", "-Wall", *(f"-Wno-{w}" for w in LINT_SUPPRESSED),
                           "--top-module", "tma_unit", str(verilog_path)], capture_output=True, text=True)


def build_library(config: UnitConfig, optimize: str | None = None) -> Path:
    """The Verilated unit for ``config``: built on first use, then taken from the cache.
    ``optimize``: the C++ compiler's optimisation flags (:func:`.native.optimize_flags`)."""
    from ..export import export_verilog
    verilog = export_verilog(config)
    loop = run_loop(lambda port: port.replace("__", "___05F"))    # Verilator escapes "__" as ___05F
    wrapper = payload_defines(config) + _PORT_ACCESS + loop
    tool = verilator()
    cxx = compiler()
    version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    flags, native = optimize_flags(optimize)
    folder = cache_dir("verilator") / cache_key(verilog, wrapper, version, cxx, *flags, native)
    library = folder / "unit.so"
    if library.exists():
        return library
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tma_unit.v").write_text(verilog)
    (folder / "harness.cpp").write_text(wrapper)
    objects = folder / "obj"
    subprocess.run([tool, "--cc", "tma_unit.v", "--top-module", "tma_unit", "-Wno-fatal", "--Mdir", "obj",
                    "-O3", "--x-assign", "0", "--x-initial", "0"], cwd=folder, check=True, capture_output=True)
    make_flags = " ".join(["-fPIC", "-w", *flags])
    runtime = ["verilated.o", "verilated_threads.o"]        # verilated.mk's VK_GLOBAL_OBJS
    subprocess.run(["make", "-s", "-C", "obj", "-f", "Vtma_unit.mk", f"OPT_FAST={make_flags}",
                    f"OPT_SLOW={make_flags}", f"OPT_GLOBAL={make_flags}", "CXX=" + cxx, "Vtma_unit__ALL.a", *runtime],
                   cwd=folder, check=True, capture_output=True)
    include = Path(tool).resolve().parent.parent / "share" / "verilator" / "include"
    partial = folder / f"unit.{os.getpid()}.so"
    subprocess.run([cxx, "-std=c++17", "-shared", "-fPIC", *flags, "-w", f"-I{include}", f"-I{include}/vltstd",
                    "-Iobj", "harness.cpp", "obj/Vtma_unit__ALL.a", *(f"obj/{o}" for o in runtime), "-pthread",
                    "-latomic",     # Clang calls libatomic where GCC inlines (Verilator's runtime)
                    "-o", str(partial)], cwd=folder, check=True)
    partial.rename(library)
    return library


class VerilatorUnit(NativeUnit):
    """One unit simulated by Verilator from the exported Verilog."""

    def __init__(self, config: UnitConfig, optimize: str | None = None):
        super().__init__(config, build_library(config, optimize))


def run_verilator(scenario: Scenario, unit: VerilatorUnit | None = None) -> RunResult:
    return run_native(scenario, unit or VerilatorUnit(scenario.config))
