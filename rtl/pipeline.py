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

A value a stage only passes on (a register of the stage before, unchanged: a request's
fields, a descriptor's decoded constants, a job's constants riding with its beats) rides
in LUT RAM instead, when the stages share a :class:`Line`: a ring the line writes the
value's first register into as the stages load, and from which the register of a stage
that reads the value is loaded: from the entry that holds what the chain's register of
the stage before would. Every register holds what the chain's would, in every cycle
(after a reset, from the first values written after it), so the change is one of
storage only; the stages in between hold nothing of the value (docs/architecture.md,
"Where values are kept").

A pipeline that stalls may load its values (a line's too) only while a stage holds a
valid one (:func:`occupied`, ``Stage``'s ``load``): what an empty stage holds is never
read, and an idle block then changes no state. Its registers then hold the chain's
values while their stage's valid bit is set, which is when anything reads them.
"""

import dataclasses
from functools import reduce
from operator import or_

from amaranth.hdl import Assert, Const, Signal, Value, ValueCastable, Elaboratable, Module, Cat
from amaranth.lib import data
from amaranth.lib.memory import Memory, ReadPort

from .dsp import Multiplier

__all__ = ["Stage", "Line", "occupied", "Proving", "PROOF", "Delayed", "settled", "copies", "KEEP_COPIES", "bundle", "extend", "narrow"]


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


class Proving:
    """The platform a formal harness elaborates a block for: a :class:`Line` states its
    pointers' distances and, for the roots named in ``carried`` (a root register's name
    to a function that picks the part of it the proof needs, e.g. a view's field),
    what its rings hold of them (:meth:`Line.elaborate`). A proof names what its
    property depends on, and the solver is not given the rest. Every other block reads
    it as no platform."""

    def __init__(self, carried=None):
        self.carried = dict(carried or {})


#: The platform of a proof whose property depends on no value a line carries.
PROOF = Proving()


class Line(Elaboratable):
    """The values that stages loading on ``enable`` only pass on, kept in LUT RAM (a
    root, the register a stage makes from a new value, may load on another enable: the
    ring takes it as it stands at each load).

    Every register a :class:`Stage` of the line makes from a new value is a root the line
    may carry. The next two stages that pass a root on get registers, as without the
    line; a stage that passes on the second of them, or a value the line carries, gets a
    register the line loads from its ring: the root as it was ``delay - 1`` loads ago,
    which is what the chain's register before it would hold. A stage's roots are kept
    in a ring (their registers' ``Cat``, :data:`DEPTH` entries) for each set of delays
    they are read at, with a read port for each delay: a simulator reads a port's whole
    width in every cycle, so a port carries only roots that some register loads from
    it. Synthesis keeps the LUT RAM of the bits that logic reads (Yosys trims the rest,
    and the registers nothing reads). Every pointer is a register of its own, shared by
    the stage's rings, so a read is a LUT RAM's delay behind a flip-flop and ends at one.

    It is a submodule of the block: elaborated after the block's own ``elaborate`` has
    made every stage, so it knows every value passed on when it builds the rings.
    """

    #: A ring's entries: one ECP5 LUT RAM (TRELLIS_DPR16X4) deep. A value is carried at
    #: most this many loads; a longer chain starts a new root.
    DEPTH = 16

    def __init__(self, enable, name: str):
        self.enable, self.name = enable, name
        self._load = Const(1, 1) if enable is None else enable
        self._origin = {}       # id(value) -> (root, delay, value): what a value passed on reads
        self._roots = {}        # a stage's prefix -> its roots, in the order made
        self._chain = {}        # id(root) -> {delay: the register that holds the root that many loads late}
        self._pointers = {}     # a stage's prefix -> {delay: its rings' pointer}

    def root(self, prefix: str, register, source, enable):
        """``register``, made by stage ``prefix`` from ``source`` and loaded when
        ``enable`` is high, which a later stage may pass on: a root of the line, or a
        register of the chain that follows a root for its first two loads
        (:meth:`pass_on`), whose next stages read the root's ring. A root may load on any
        enable (the ring takes it as it stands at each load); the chain's registers load
        with the line."""
        origin = self._origin.get(id(source))
        if origin is not None and origin[2] is source and origin[1] < 2:
            assert enable is self.enable, f"{register.name} passes a value of the line on: it loads with the line"
            self._origin[id(register)] = (origin[0], origin[1] + 1, register)
            self._chain.setdefault(id(origin[0]), {}).setdefault(origin[1] + 1, register)
        else:
            self._origin[id(register)] = (register, 0, register)
            self._roots.setdefault(prefix, []).append(register)

    def pass_on(self, value, name: str):
        """``value`` one load later, as a register the line loads from its ring, or None
        where the plain register is the better place: ``value`` is not one the line
        carries, or is a root or the root one load later (the chain's two registers cost
        less than a register and a LUT RAM bit), or is :data:`DEPTH` or more loads behind
        its root (a new root then). Stages that pass on one value alike (branches of a
        pipeline) get one register."""
        origin = self._origin.get(id(value))
        if origin is None or origin[2] is not value or origin[1] < 2 or origin[1] >= self.DEPTH:
            return None
        root, delay, _ = origin
        chain = self._chain[id(root)]
        if delay + 1 in chain:
            # passed on twice at one delay (two stages branch from it): one register serves
            return chain[delay + 1]
        signal = Signal(root.shape(), name=name, reset_less=True)
        self._origin[id(signal)] = (root, delay + 1, signal)
        chain[delay + 1] = signal
        return signal

    def elaborate(self, platform):
        m = Module()
        place = {}              # id(root) -> (its ring's name, its stage, the ring, its read ports, first bit)
        for prefix, roots in self._roots.items():
            # the roots some register loads from a ring (a chain past its first two), a
            # ring for each set of delays read, so that a read port reads only the bits
            # some register loads: a simulator reads a port's whole width
            rings = {}
            for root in roots:
                delays = tuple(sorted(delay for delay in self._chain.get(id(root), {}) if delay > 2))
                if delays:
                    rings.setdefault(delays, []).append(root)
            for number, carried in enumerate(rings.values()):
                data = Cat(*carried)
                ring = Memory(shape=len(data), depth=self.DEPTH, init=[])
                name = f"{prefix}_ring{number}"
                m.submodules[name] = ring
                write = ring.write_port()
                m.d.comb += [write.data.eq(data), write.en.eq(self._load),
                             write.addr.eq(self._pointer(m, prefix, 0))]
                ports, offset = {}, 0
                for root in carried:
                    place[id(root)] = (name, prefix, ring, ports, offset)
                    offset += len(Value.cast(root))
        # a stage's value is a register loaded from the ring's entry one load younger: the
        # chain's register in every cycle, and placed by its logic, with the LUT RAM's
        # read and its route ending at a flip-flop
        for root in (root for roots in self._roots.values() for root in roots if id(root) in place):
            for delay, signal in self._chain[id(root)].items():
                if delay > 2:
                    entry = self._read(m, place[id(root)], delay - 1, root)     # outside the If: its address is comb
                    with m.If(self._load):
                        m.d.sync += signal.eq(entry)
        if isinstance(platform, Proving):
            self._invariant(m, place, platform.carried)
        return m

    def _invariant(self, m, place, carried):
        """For a proof by induction, whose first state is arbitrary: each read pointer is
        its delay behind the write pointer, and, for the roots named in ``carried``,
        every entry a later read reaches holds what the chain's register of its age
        holds (the root as it was that many loads ago). Together they carry from one
        cycle to the next, and the values the reads load follow from them."""
        roots = [root for roots in self._roots.values() for root in roots
                 if id(root) in place and Value.cast(root).name in carried]
        for root in roots:
            pick = carried[Value.cast(root).name]
            chain = self._chain[id(root)]
            for delay in range(1, max(chain)):
                entry = self._read(m, place[id(root)], delay, root)
                if isinstance(root, data.View):
                    entry = data.View(root.shape(), entry)
                m.d.comb += Assert(Value.cast(pick(entry)) == Value.cast(pick(chain[delay])))
        for pointers in self._pointers.values():
            m.d.comb += [Assert(pointer == (pointers[0] - delay)[:len(pointer)]) for delay, pointer in pointers.items()]

    def _read(self, m, place, delay, root):
        """``root`` as it was ``delay`` loads ago, read from its ring (``place``: the
        ring's name, its stage, the ring, its read ports by delay and the root's first
        bit); a ring has one read port for each delay, its signals named (a waveform's
        readers refuse the name a port kept in a dict would get)."""
        name, prefix, ring, ports, offset = place
        if delay not in ports:
            signature = ReadPort.Signature(shape=ring.shape, addr_width=(self.DEPTH - 1).bit_length())
            ports[delay] = ReadPort(signature, memory=ring, domain="comb", path=(f"{self.name}_{name}_read{delay}",))
            m.d.comb += ports[delay].addr.eq(self._pointer(m, prefix, delay))
        return ports[delay].data[offset:offset + len(Value.cast(root))]

    def _pointer(self, m, prefix, delay):
        """The ring's entry that holds its roots as they were ``delay`` loads ago: a
        counter that starts ``delay`` behind the write pointer and counts with it, so no
        subtract stands before a read.
        Reset, unlike the values: a unit that powers up without initial values (an
        export with ``--no-init``) gets its pointers' distances from the reset. The
        entries a reset leaves belong to the requests it abandoned, which no valid stage
        reads."""
        pointers = self._pointers.setdefault(prefix, {})
        if delay not in pointers:
            pointers[delay] = Signal(range(self.DEPTH), init=-delay % self.DEPTH, name=f"{self.name}_{prefix}_ptr{delay}")
            with m.If(self._load):
                m.d.sync += pointers[delay].eq(pointers[delay] + 1)
        return pointers[delay]


def occupied(m, offered, stages, name: str, platform=None, enable=None):
    """A register that is high in every cycle some of ``stages`` (:class:`Stage` objects)
    holds a valid bit that is set, and may be high in others: set after a cycle in which
    ``offered`` (a value offered to the first stage) or any of their valid bits was. A
    pipeline's values need load only while it is high (``Stage``'s ``load``). This
    holds where each stage's valid bit is set only from the stage before it, from itself
    or from ``offered``: a stage's valid bit at a cycle then comes from the cycle before.
    ``enable``, where given, is the stages' enable as a pair (the register, the value it
    takes next): the register is then ANDed with it a cycle ahead, and is the values'
    enable itself, a flip-flop rather than a gate behind two. For a proof
    (:class:`Proving` as ``platform``), it asserts what it promises: a proof by
    induction starts from an arbitrary state, and needs it stated."""
    valids = [valid for stage in stages for valid in stage.valids]
    now, ahead = enable if enable is not None else (Const(1, 1), Const(1, 1))
    register = Signal(name=name)
    m.d.sync += register.eq(ahead & reduce(or_, [offered, *valids]))
    if isinstance(platform, Proving):
        m.d.comb += Assert(register | ~(now & reduce(or_, valids)))
        if enable is not None:
            # and it loads only with the stages: what a waiting stage holds stands still
            m.d.comb += Assert(now | ~register)
    return register


class Stage:
    """Registers loaded from their values in every cycle ``enable`` is high (every cycle
    when ``enable`` is None: a pipeline that never stalls).

    ``stage(value, name)`` returns a register holding ``value`` one step later: a
    ``Value`` or ``View`` gives a signal of the same shape, a list or a :func:`bundle`
    gives the same structure of registers (a bundle's field ``f`` named ``name_f``, or
    ``f`` alone when ``name`` is None), and Python constants (ints, bools) pass through
    unchanged. A register named ``valid`` (or ``*_valid``, a bundle's ``valid`` field
    included) is reset, the others are reset-less; the stage keeps its own valid bit,
    the one named ``valid``, in :attr:`valids`. With a ``line``, a value passed on
    unchanged rides in it (:class:`Line`).

    ``load``, where given, is the enable of the registers that are not reset: a pipeline
    whose values stand still while no stage holds a valid one (:func:`occupied`), so
    that an idle block changes no state, and a simulator that skips a block whose state
    did not change (sim/gating.py) skips it. A stage that passes on a line's values
    loads them with the line.
    """

    def __init__(self, m, enable, prefix: str, line: Line | None = None, load=None):
        self.m = m
        self.enable = enable
        self.load = enable if load is None else load
        self.prefix = prefix
        self.line = line
        self.blocks = 0
        self.valids = []

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
        if self.line is not None and not reset:
            carried = self.line.pass_on(value, f"{self.prefix}_{name}")
            if carried is not None:
                return carried
        register = Signal(value.shape(), name=f"{self.prefix}_{name}", reset_less=not reset)
        enable = self.enable if reset else self.load
        if name == "valid":
            self.valids.append(register)
        if not reset and self.line is not None:
            self.line.root(self.prefix, register, value, enable)
        if enable is None:
            self.m.d.sync += register.eq(value)
        else:
            with self.m.If(enable):
                self.m.d.sync += register.eq(value)
        return register

    def adopt(self, register):
        """``register``, made by the block (a block RAM's read, registered) and loaded in
        every cycle, as a register of this stage, which loads in every cycle too (a
        pipeline that never stalls): the stages after it pass it on as they would the
        stage's own, in the line where it has one. Returns it."""
        assert self.load is None, "a register made outside the stage loads as the stage does only where both always load"
        if self.line is not None:
            self.line.root(self.prefix, register, None, None)
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
                          block.enable.eq(Const(1, 1) if self.load is None else self.load)]
        return Delayed(block.product, 2 if registered_inputs else 1)
