"""Pipeline registers that move together, for blocks cut into stages for clock speed.

A block's stages all load when one enable is high (the unit's pipelines stall as a
whole: docs/architecture.md, "Timing"). :class:`Stage` gives a registered copy of any
value, view or namespace of them, so a block reads as its combinational logic with the
places it is cut marked (``d = stage(d)``), and the arithmetic between two cuts stays
short enough for the clock (docs/fpga.md).
"""

from types import SimpleNamespace

from amaranth.hdl import Signal, Value, ValueCastable

__all__ = ["Stage"]


class Stage:
    """Registers loaded from their values in every cycle ``enable`` is high.

    ``stage(value, name)`` returns a register holding ``value`` one step later: a
    ``Value`` or ``View`` gives a signal of the same shape, a list or a
    ``SimpleNamespace`` gives the same structure of registers, and Python constants
    (ints, bools) pass through unchanged.
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
        if isinstance(value, ValueCastable):
            register = Signal(value.shape(), name=f"{self.prefix}_{name}")
        else:
            value = Value.cast(value)
            register = Signal(value.shape(), name=f"{self.prefix}_{name}")
        with self.m.If(self.enable):
            self.m.d.sync += register.eq(value)
        return register
