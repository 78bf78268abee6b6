"""Pipeline registers that move together, for blocks cut into stages for clock speed.

A block's stages all load when one enable is high, or in every cycle for a pipeline that
never stalls (docs/architecture.md, "Timing": the front end stalls as a whole behind a
registered enable, the datapath never stalls). :class:`Stage` gives a registered copy of any
value, view or namespace of them, so a block reads as its combinational logic with the
places it is cut marked (``d = stage(d)``), and the arithmetic between two cuts stays
short enough for the clock (docs/fpga.md).

Only a stage's valid bits are reset. Every other register holds data that its valid bit
qualifies, so it is reset-less: on the ECP5 a reset is a net to every flip-flop it
clears, and for the whole pipeline that net reached some 13,600 of them, the heaviest
load the router had to carry (docs/fpga.md, "Clock speed").
"""

from types import SimpleNamespace

from amaranth.hdl import Signal, Value, ValueCastable

__all__ = ["Stage"]


class Stage:
    """Registers loaded from their values in every cycle ``enable`` is high (every cycle
    when ``enable`` is None: a pipeline that never stalls).

    ``stage(value, name)`` returns a register holding ``value`` one step later: a
    ``Value`` or ``View`` gives a signal of the same shape, a list or a
    ``SimpleNamespace`` gives the same structure of registers, and Python constants
    (ints, bools) pass through unchanged. A register named ``valid`` (or ``*_valid``, a
    namespace's ``valid`` member included) is reset; the others are reset-less.
    """

    def __init__(self, m, enable, prefix: str):
        self.m = m
        self.enable = enable
        self.prefix = prefix

    def __call__(self, value, name: str = "value"):
        if isinstance(value, SimpleNamespace):
            return SimpleNamespace(**{key: self(item, f"{name}_{key}") for key, item in vars(value).items()})
        if isinstance(value, (list, tuple)):
            return [self(item, f"{name}{i}") for i, item in enumerate(value)]
        if isinstance(value, (int, bool)):
            return value
        if not isinstance(value, ValueCastable):
            value = Value.cast(value)
        reset = name == "valid" or name.endswith("_valid")
        register = Signal(value.shape(), name=f"{self.prefix}_{name}", reset_less=not reset)
        if self.enable is None:
            self.m.d.sync += register.eq(value)
        else:
            with self.m.If(self.enable):
                self.m.d.sync += register.eq(value)
        return register
