"""Pipeline registers that move together, for blocks cut into stages for clock speed.

A block's stages all load when one enable is high, or in every cycle for a pipeline that
never stalls (docs/architecture.md, "Timing": the front end stalls as a whole behind a
registered enable, the datapath never stalls). :class:`Stage` gives a registered copy of any
value, view, list or dataclass of them, so a block reads as its combinational logic with the
places it is cut marked (``d = stage(d)``), and the arithmetic between two cuts stays
short enough for the clock (docs/fpga.md). What a stage holds is a dataclass with a field
for each quantity (:func:`bundle`), so every stage's registers have names and a type.

Only a stage's valid bits are reset. Every other register holds data that its valid bit
qualifies, so it is reset-less: on the ECP5 a reset is a net to every flip-flop it
clears, and for the whole pipeline that net reached some 13,600 of them, the heaviest
load the router had to carry (docs/fpga.md, "Clock speed").

A product can take its registers from a DSP block instead (:meth:`Stage.product`,
:mod:`.dsp`): it is then a :class:`Delayed` value, which the stages it crosses pass on
unregistered, so it reaches the same stage as a product registered in the fabric would.
"""

import dataclasses

from amaranth.hdl import Const, Signal, Value, ValueCastable

from .dsp import Multiplier

__all__ = ["Stage", "Delayed", "settled", "copies", "KEEP_COPIES", "bundle", "extend", "narrow"]


def bundle(cls):
    """A dataclass whose instances a :class:`Stage` registers field by field: what one
    pipeline stage holds, each quantity named (a value, a view, a list of them, a
    :class:`Delayed` product or another bundle)."""
    return dataclasses.dataclass(eq=False)(cls)


def extend(cls, base, **values):
    """An instance of the bundle ``cls`` (a subclass of ``base``'s class, adding fields)
    with ``base``'s fields and ``values`` for the fields ``cls`` adds."""
    return cls(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)}, **values)


def narrow(cls, value):
    """An instance of the bundle ``cls`` with the fields of ``value`` (an instance of a
    subclass) that ``cls`` has: the inverse of :func:`extend`."""
    return cls(**{f.name: getattr(value, f.name) for f in dataclasses.fields(cls)})

#: The Yosys command that keeps the flip-flops of :func:`copies` apart: Yosys merges equal
#: cells (``opt_merge``) unless both carry ``keep``, and a signal's attribute reaches its
#: wire, not the flip-flop driving it. Run after the design is read (the board build and
#: ``src/synth.py``).
KEEP_COPIES = "setattr -set keep 1 w:* a:keep %i %ci1:+[Q] c:* %i"


def copies(m, value, count: int, name: str, init: int = 0) -> list:
    """``count`` registers that each hold ``value`` one cycle later, kept apart after
    synthesis (:data:`KEEP_COPIES`), so a control with many loads far apart (a register
    enable) can reach each group of them from a register placed beside it: nextpnr
    places, it does not duplicate (docs/fpga.md, "Clock speed")."""
    registers = [Signal(name=f"{name}{k}", init=init, attrs={"keep": 1}) for k in range(count)]
    m.d.sync += [register.eq(value) for register in registers]
    return registers


class Delayed:
    """A value whose registers are not the stages' own (a DSP block's): it is a stage's
    register value ``stages`` stages on, so the next ``stages`` stages pass it on, the
    last as the plain value."""

    def __init__(self, value, stages: int):
        self.value, self.stages = value, stages

    def map(self, function):
        """``function`` of the value (wiring only: slices, shifts), delayed alike."""
        return Delayed(function(self.value), self.stages)


def settled(value):
    """``value`` (a value, a list or a :func:`bundle`) with each :class:`Delayed` in it
    taken as its plain value: for logic whose inputs hold still for longer than the
    products take (the commit checker, rtl/commit.py), which reads them once they have
    settled rather than passing them along stages."""
    if dataclasses.is_dataclass(value):
        return type(value)(**{f.name: settled(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, (list, tuple)):
        return [settled(item) for item in value]
    return value.value if isinstance(value, Delayed) else value


class Stage:
    """Registers loaded from their values in every cycle ``enable`` is high (every cycle
    when ``enable`` is None: a pipeline that never stalls).

    ``stage(value, name)`` returns a register holding ``value`` one step later: a
    ``Value`` or ``View`` gives a signal of the same shape, a list or a :func:`bundle`
    gives the same structure of registers (a bundle's field ``f`` named ``name_f``, or
    ``f`` alone when ``name`` is None), and Python constants (ints, bools) pass through
    unchanged. A register named ``valid`` (or ``*_valid``, a bundle's ``valid`` field
    included) is reset; the others are reset-less.
    """

    def __init__(self, m, enable, prefix: str):
        self.m = m
        self.enable = enable
        self.prefix = prefix
        self.blocks = 0

    def __call__(self, value, name: str | None = "value"):
        if dataclasses.is_dataclass(value):
            return type(value)(**{f.name: self(getattr(value, f.name), f.name if name is None else f"{name}_{f.name}")
                                  for f in dataclasses.fields(value)})
        if isinstance(value, (list, tuple)):
            return [self(item, f"{name}{i}") for i, item in enumerate(value)]
        if isinstance(value, (int, bool)):
            return value
        if isinstance(value, Delayed):
            return value.value if value.stages == 1 else Delayed(value.value, value.stages - 1)
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

    def product(self, a, b, registered_inputs: bool = True) -> Delayed:
        """``a * b`` (operands of at most 17 bits unsigned or 18 signed) in a DSP block
        whose own registers stand for this stage's (the operands, ``registered_inputs``)
        and the next one's (the product): built from this stage's inputs, the product is
        the next stage's register value. Without ``registered_inputs`` the operands come
        from registers already (another block's product, for one), and the product is
        this stage's register value."""
        for operand in (a, b):
            shape = Value.cast(operand).shape()
            assert shape.width <= (18 if shape.signed else 17), f"a DSP operand of {shape} is wider than 18x18"
        block = Multiplier(registered_inputs)
        self.m.submodules[f"{self.prefix}_dsp{self.blocks}"] = block     # named in timing reports
        self.blocks += 1
        self.m.d.comb += [block.a.eq(a), block.b.eq(b),
                          block.enable.eq(Const(1, 1) if self.enable is None else self.enable)]
        return Delayed(block.product, 2 if registered_inputs else 1)
