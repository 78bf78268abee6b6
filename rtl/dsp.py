"""One 18x18 multiplier whose routing in and out is not on any clock path: its operands
and its product are registered inside the ECP5's DSP block (MULT18X18D), and the
pipeline around it takes those registers as its own (:meth:`.pipeline.Stage.product`).

Placed routed builds showed why (docs/fpga.md, "Clock speed"): the 18x18 blocks sit in a
few fixed rows, and a product registered in the fabric had the routing from its
operands' registers to the block and from the block back to its product's register on
one path, most of the clock period (docs/fpga.md). With the block's own registers each leg is a path
of its own, and the multiply between them is the block's alone.

Yosys packs no register into an ECP5 DSP block, so on that platform the block is an
instance with its registers switched on (Lattice TN1267, "ECP5 and ECP5-5G sysDSP
Usage Guide": input registers, then the multiplier, then the output register;
the pipeline register bypassed); everywhere else (simulation, Verilog export, other
FPGAs) it is its behavioural twin, the same registers written in Amaranth. Both load
their registers in the cycles ``enable`` is high.
"""

from amaranth.hdl import ClockSignal, Const, Instance, Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Multiplier", "OPERAND_WIDTH", "PRODUCT_WIDTH", "is_ecp5", "ECP5"]

#: The block's operands are 18-bit signed; its product 36-bit signed.
OPERAND_WIDTH = 18
PRODUCT_WIDTH = 36


def is_ecp5(platform) -> bool:
    """Whether ``platform`` builds for the ECP5 (amaranth's Lattice platform, family ecp5)."""
    return getattr(platform, "family", None) == "ecp5"


class ECP5:
    """A platform for a netlist of the unit alone, as the ECP5 builds it (what
    :func:`is_ecp5` reads of a board's platform): for synthesis without a board."""
    family = "ecp5"


class Multiplier(wiring.Component):
    """``product`` is ``a * b`` of operands taken two loads ago (``registered_inputs``: the
    operands have their own registers) or one load ago (the operands come from registers
    elsewhere, another block's product for one), loading in the cycles ``enable`` is high.

    Ports
    -----
    a, b : in, signed 18 bits
    enable : in
    product : out, signed 36 bits
    """

    def __init__(self, registered_inputs: bool):
        self.registered_inputs = registered_inputs
        super().__init__({
            "a": In(signed(OPERAND_WIDTH)),
            "b": In(signed(OPERAND_WIDTH)),
            "enable": In(1),
            "product": Out(signed(PRODUCT_WIDTH)),
        })

    def elaborate(self, platform):
        m = Module()
        if is_ecp5(platform):
            self._instance(m)
            return m
        a, b = self.a, self.b
        if self.registered_inputs:
            a = Signal.like(self.a, name="a_reg", reset_less=True)
            b = Signal.like(self.b, name="b_reg", reset_less=True)
            with m.If(self.enable):
                m.d.sync += [a.eq(self.a), b.eq(self.b)]
        product = Signal.like(self.product, reset_less=True)
        with m.If(self.enable):
            m.d.sync += product.eq(a * b)
        m.d.comb += self.product.eq(product)
        return m

    def _instance(self, m):
        """The MULT18X18D with its input registers (if asked) and output register on CLK0
        and CE0, no reset, both operands signed (its port and parameter names are those of
        Lattice's primitive library, as Yosys's ECP5 cell library declares them)."""
        inputs = "CLK0" if self.registered_inputs else "NONE"
        ports = {}
        for name, value in (("A", self.a), ("B", self.b)):
            ports.update({f"i_{name}{i}": value[i] for i in range(OPERAND_WIDTH)})
        ports.update({f"i_C{i}": Const(0, 1) for i in range(OPERAND_WIDTH)})
        ports.update({f"o_P{i}": self.product[i] for i in range(PRODUCT_WIDTH)})
        for i in range(4):
            ports.update({f"i_CLK{i}": ClockSignal() if i == 0 else Const(0, 1),
                          f"i_CE{i}": self.enable if i == 0 else Const(0, 1),
                          f"i_RST{i}": Const(0, 1)})
        m.submodules.block = Instance(
            "MULT18X18D",
            p_REG_INPUTA_CLK=inputs, p_REG_INPUTA_CE="CE0", p_REG_INPUTA_RST="RST0",
            p_REG_INPUTB_CLK=inputs, p_REG_INPUTB_CE="CE0", p_REG_INPUTB_RST="RST0",
            p_REG_INPUTC_CLK="NONE", p_REG_PIPELINE_CLK="NONE",
            p_REG_OUTPUT_CLK="CLK0", p_REG_OUTPUT_CE="CE0", p_REG_OUTPUT_RST="RST0",
            p_SOURCEB_MODE="B_SHIFT", p_MULT_BYPASS="DISABLED", p_GSR="DISABLED", p_RESETMODE="SYNC",
            i_SIGNEDA=Const(1, 1), i_SIGNEDB=Const(1, 1), i_SOURCEA=Const(0, 1), i_SOURCEB=Const(0, 1),
            **ports)
