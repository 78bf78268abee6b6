"""The prototyping top: the unit behind a UART, for an FPGA board and a host computer.

A host writes descriptors and status registers, stages and sends requests, and reads
back a count and checksum of the beats the unit emitted and of its completions, all as
32-bit reads and writes over the board's serial port (protocol: :mod:`tma_unit.proto`,
which is also the host driver). The beat and completion streams are always ready here,
so the unit runs at its full rate while the host is slow.

Byte address map (the bridge's Wishbone bus, 32-bit words):

* ``0x0000_0000``...: the unit's own registers and descriptor slots (docs/registers.md);
* ``0x8000_0000`` + :data:`PROTO_REGISTERS`: the request staging words, the push
  register, and the beat and completion monitors.

Anything else answers ``err``.
"""

import operator
from functools import reduce

from amaranth.hdl import Module, Signal, Array, Cat, Const, Mux, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from ..model.layout import REQUEST_FIELDS, payload_width
from .bridge import UartBridge
from .regfile import bus_addr_width
from .uart import UartRx, UartTx
from .unit import TmaUnit

__all__ = ["PrototypeTop", "PROTO_BASE", "PROTO_REGISTERS", "REQUEST_WORDS", "lane_word", "request_word",
           "CHECKSUM_ROTATE"]

PROTO_BASE = 0x8000_0000
REQUEST_WORDS = (payload_width(REQUEST_FIELDS) + 31) // 32
CHECKSUM_ROTATE = 1
PROTO_WORDS = 0x80      # the prototyping registers' window: 512 bytes

#: name -> (byte offset from PROTO_BASE, access, description)
PROTO_REGISTERS = {
    "REQUEST": (0x000, "rw", f"{REQUEST_WORDS} words: the staged request payload (docs/registers.md layout)"),
    "PUSH": (0x100, "wo", "any write offers the staged request; the write is acknowledged once the unit takes it"),
    "BEATS": (0x104, "ro", "beats emitted since CLEAR"),
    "CHECKSUM": (0x108, "ro", "checksum of every valid lane of those beats, in order (lane_word)"),
    "COMPLETIONS": (0x10C, "ro", "completions since CLEAR"),
    "LAST_COMPLETION": (0x110, "ro", "[15:0] request id, [23:16] status of the last completion"),
    "BYTES": (0x114, "ro", "sum of the completions' transaction bytes since CLEAR"),
    "CLEAR": (0x118, "wo", "any write zeroes BEATS, CHECKSUM, COMPLETIONS, LAST_COMPLETION, BYTES and "
                           "REQUEST_CHECKSUM"),
    "REQUEST_CHECKSUM": (0x11C, "ro", "checksum of every L2 request of those beats, in order (request_word); "
                                      "0 without a request former"),
}


def lane_word(global_address, smem_address, mask, units):
    """The 32-bit word one chunk adds to the checksum; works on ints and Amaranth values
    alike (the host computes the expected checksum from the golden model with it)."""
    return ((global_address & 0xFFFF_FFFF) ^ ((global_address >> 32) & 0xFFFF_FFFF) ^ ((smem_address << 13) & 0xFFFF_FFFF)
            ^ (mask << 5) ^ units) & 0xFFFF_FFFF


def request_word(address, sectors, lanes):
    """The 32-bit word one L2 request of a request former adds to REQUEST_CHECKSUM: its
    granule's address, its sectors and its lanes; works on ints and Amaranth values alike
    (the host computes the expected checksum from the golden model's merge with it)."""
    return ((address & 0xFFFF_FFFF) ^ ((address >> 32) & 0xFFFF_FFFF) ^ sectors ^ (lanes << 24)) & 0xFFFF_FFFF


def _offset(name):
    return PROTO_REGISTERS[name][0]


def _staged_checksum(m, name: str, items, offered, clear) -> Signal:
    """A 32-bit checksum register that rotates by ``CHECKSUM_ROTATE`` bits and XORs in
    the word of each valid ``(valid, word)`` item of every offered beat, item by item.

    Rotation distributes over XOR, so a beat with ``n`` valid items leaves
    ``rot^n(checksum) ^ D``, where ``D`` XORs each valid item's word rotated once per
    valid item after it. ``D`` and ``n`` come from the beat alone and are made in four
    registered stages (the words and valid bits, read from the beat queue's LUT RAM;
    each item's count of valid items after it; each item's word rotated by its count;
    their XOR, and ``n`` as one bit per value), so the register that feeds back only
    ANDs its rotations with those bits, ORs and XORs. Each stage was once a longest
    path of the lanes-8 board top: the item-by-item chain behind the queue's read, the
    count behind the words, and then, with the 16 request slots of a former, the
    rotations and their XOR in one stage (11 levels of logic), and the feedback's
    choice among 17 rotations by a binary count (9). The checksum lags the beats by
    those four cycles; a host reads it long after. A registered ``clear`` zeroes it and
    drops the beats up to its cycle."""
    checksum = Signal(32, name=name)
    count = len(items)

    def rotated(value, times):
        return value.rotate_left(times * CHECKSUM_ROTATE % 32)

    def staged(suffix, value):
        register = Signal.like(value, name=f"{name}_{suffix}")
        m.d.sync += register.eq(value)
        return register

    # 1: each item's word and valid bit, registered behind the queue's read; the beat's
    # valid (logic behind the queue's head) is registered apart and applied in stage 2:
    # as the items' reset here it crossed the chip
    words = [staged(f"word{j}", word) for j, (_, word) in enumerate(items)]
    valids = staged("valids", Cat(valid for valid, _ in items))
    taken = staged("taken", offered & ~clear)
    # 2: each item's count of the valid items after it, and the beat's
    afters = [staged(f"after{j}", Value.cast(sum(valids[j + 1:]) if j + 1 < count else 0)[:count.bit_length()])
              for j in range(count)]
    words = [staged(f"word{j}_2", word) for j, word in enumerate(words)]
    valids_2 = staged("valids_2", Mux(taken & ~clear, valids, 0))
    count_2 = staged("count_2", Mux(taken & ~clear, sum(valids), 0))
    # 3: each valid item's word rotated by its count, and n as one bit per value (n = 0
    # where the beat is dropped: the checksum keeps its value)
    terms = [staged(f"term{j}", Mux(valids_2[j] & ~clear, Array(rotated(word, k) for k in range(count - j))[after], 0))
             for j, (word, after) in enumerate(zip(words, afters))]
    count_3 = staged("count_3", Mux(clear, 1, Cat(count_2 == n for n in range(count + 1))))
    # 4: D, and n beside it
    xored = staged("xored", Mux(clear, 0, reduce(operator.xor, terms)))
    valid_count = staged("count", Mux(clear, 1, count_3))
    with m.If(clear):
        m.d.sync += checksum.eq(0)
    with m.Else():
        turned = reduce(operator.or_, (Mux(valid_count[n], rotated(checksum, n), 0) for n in range(count + 1)))
        m.d.sync += checksum.eq(turned ^ xored)
    return checksum


class PrototypeTop(wiring.Component):
    """The unit, a UART-to-Wishbone bridge and the monitors.

    Parameters
    ----------
    config : UnitConfig
    divisor : int
        Clock cycles per UART bit.

    Ports
    -----
    rx : in, tx : out
        The serial line from and to the host.
    """

    def __init__(self, config: UnitConfig = UnitConfig(), divisor: int = 217):
        self.config = config
        self.divisor = divisor
        super().__init__({"rx": In(1, init=1), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        config = self.config
        m.submodules.uart_rx = rx = UartRx(self.divisor)
        m.submodules.uart_tx = tx = UartTx(self.divisor)
        m.submodules.bridge = bridge = UartBridge()
        m.submodules.unit = unit = TmaUnit(config)
        m.d.comb += [rx.rx.eq(self.rx), self.tx.eq(tx.tx)]
        wiring.connect(m, rx.bytes, bridge.commands)
        wiring.connect(m, bridge.replies, tx.bytes)

        bus = bridge.bus
        word = bus.adr                          # word address, 30 bits
        to_unit = word < (1 << bus_addr_width(config))
        proto_word = word - (PROTO_BASE >> 2)
        to_proto = (word >= (PROTO_BASE >> 2)) & (proto_word < PROTO_WORDS)
        # the unit's own bus
        m.d.comb += [
            unit.bus.cyc.eq(bus.cyc & to_unit), unit.bus.stb.eq(bus.stb & to_unit), unit.bus.we.eq(bus.we),
            unit.bus.adr.eq(word), unit.bus.dat_w.eq(bus.dat_w), unit.bus.sel.eq(bus.sel),
        ]
        clear = Signal(name="clear")
        readable = self._monitors(m, unit, clear)
        proto_ack, proto_err, proto_data = self._proto_registers(m, unit, bus, to_proto, proto_word, readable, clear)
        # anything else: err, one cycle later
        other_err = Signal()
        m.d.sync += other_err.eq(bus.cyc & bus.stb & ~to_unit & ~to_proto & ~other_err)
        m.d.comb += [
            bus.ack.eq(unit.bus.ack | proto_ack),
            bus.err.eq(unit.bus.err | proto_err | other_err),
            # the unit's answer is a register, as is its ack: no address compare on this path
            bus.dat_r.eq(Mux(unit.bus.ack, unit.bus.dat_r, proto_data)),
        ]
        return m

    @staticmethod
    def _monitors(m, unit, clear) -> dict:
        """Every beat and completion is taken the cycle it is offered, and counted; returns
        the monitors' registers by name (:data:`PROTO_REGISTERS`).

        CHECKSUM folds each valid lane's :func:`lane_word` into itself, lane by lane, and
        REQUEST_CHECKSUM each valid request slot's :func:`request_word` (a unit with a
        request former; else it stays 0), so the board observes every field a beat
        carries: a field nothing reads would be trimmed by synthesis, and its logic with
        it (:func:`_staged_checksum`)."""
        beats, completions, last, total = (Signal(32, name=n) for n in ("beats", "completions", "last", "total"))
        m.d.comb += [unit.beats.ready.eq(1), unit.completions.ready.eq(1)]
        beat = unit.beats.payload
        lanes = [(lane.valid, lane_word(lane.global_address, lane.smem_address, lane.mask, lane.units)[:32])
                 for lane in beat.lanes]
        checksum = _staged_checksum(m, "checksum", lanes, unit.beats.valid, clear)
        if hasattr(beat, "requests"):
            slots = [(slot.valid, request_word(slot.address, slot.sectors, slot.lanes)[:32]) for slot in beat.requests]
            request_checksum = _staged_checksum(m, "request_checksum", slots, unit.beats.valid, clear)
        else:
            request_checksum = Const(0, 32)
        with m.If(clear):
            m.d.sync += [beats.eq(0), completions.eq(0), last.eq(0), total.eq(0)]
        with m.Else():
            with m.If(unit.beats.valid):
                m.d.sync += beats.eq(beats + 1)
            with m.If(unit.completions.valid):
                done = unit.completions.payload
                m.d.sync += [completions.eq(completions + 1), last.eq(Cat(done.request_id, done.status)),
                             total.eq(total + done.transaction_bytes)]
        return {"BEATS": beats, "CHECKSUM": checksum, "COMPLETIONS": completions, "LAST_COMPLETION": last,
                "BYTES": total, "REQUEST_CHECKSUM": request_checksum}

    @staticmethod
    def _proto_registers(m, unit, bus, to_proto, proto_word, readable, clear):
        """The request staging words, PUSH and CLEAR, and the monitors' reads. Like the
        unit's own registers (rtl/regfile.py): the strobe's cycle registers the decode,
        the next acts on it and registers the answer, on the bus a cycle later. Returns
        the answer's (ack, err, data) registers.

        The unit's ready comes from its front end, far from the bridge after placement,
        so the push is handed across in registers, each with at most one long route
        into it (the ready's round trip into the bridge's logic was the board top's
        longest path, most of it routing; docs/fpga.md, "Clock speed"): a write
        to PUSH pulses ``push``; ``offer``, the request's valid, holds from then until
        the unit takes the request, which ``pushed`` registers; the write is
        acknowledged with it. ``waiting`` holds the bus cycle from ``push`` to
        ``pushed``, so the write is not decoded again."""
        staged = Signal(REQUEST_WORDS * 32)
        push, offer, pushed, waiting = (Signal(name=n) for n in ("push", "offer", "pushed", "waiting"))
        taken = offer & unit.requests.ready
        m.d.sync += [push.eq(0), offer.eq(offer & ~unit.requests.ready | push), pushed.eq(taken),
                     waiting.eq(waiting & ~pushed | push)]
        m.d.comb += [unit.requests.valid.eq(offer), unit.requests.payload.eq(staged[:unit.requests.payload.shape().size])]
        proto_ack, proto_err, proto_data = Signal(name="proto_ack"), Signal(name="proto_err"), Signal(32, name="proto_data")
        pending = Signal()
        start = bus.cyc & bus.stb & to_proto & ~pending & ~proto_ack & ~proto_err & ~push & ~waiting
        byte_offset = Cat(Const(0, 2), proto_word[:(PROTO_WORDS - 1).bit_length()])
        request_words = [_offset("REQUEST") + 4 * i for i in range(REQUEST_WORDS)]
        # the words a read answers with, by offset: the staged request's, then the monitors
        words = {**{offset: staged[32 * i:32 * i + 32] for i, offset in enumerate(request_words)},
                 **{_offset(name): value for name, value in readable.items()}}
        offsets = [*words, _offset("PUSH"), _offset("CLEAR")]
        hits = Signal(len(offsets))
        with m.If(start):
            m.d.sync += hits.eq(Cat(byte_offset == offset for offset in offsets))
        # CLEAR's pulse is a register, set as the write is acknowledged: it resets the
        # monitors' registers across the chip (the checksum's stages), and as logic behind
        # the decode that route was the lanes-8 top's longest path
        m.d.sync += [pending.eq(start), proto_ack.eq(0), proto_err.eq(0), clear.eq(0)]
        hit = dict(zip(offsets, hits))
        with m.If(pushed):
            m.d.sync += proto_ack.eq(1)
        with m.If(pending):
            # one register is hit at most: an AND-OR multiplexer
            m.d.sync += proto_data.eq(reduce(operator.or_, (Mux(hit[k], v, 0) for k, v in words.items())))
            readable_hit = Cat(hit[_offset(name)] for name in readable).any()
            with m.If(Cat(hit[k] for k in request_words).any()):
                m.d.sync += proto_ack.eq(1)
            with m.Elif(hit[_offset("PUSH")]):
                # a push is acknowledged when the unit takes the request
                m.d.sync += [push.eq(bus.we), proto_err.eq(~bus.we)]
            with m.Elif(hit[_offset("CLEAR")]):
                m.d.sync += [proto_ack.eq(bus.we), proto_err.eq(~bus.we), clear.eq(bus.we)]
            with m.Elif(readable_hit):
                m.d.sync += [proto_ack.eq(~bus.we), proto_err.eq(bus.we)]
            with m.Else():
                m.d.sync += proto_err.eq(1)
            with m.If(bus.we):
                for i, offset in enumerate(request_words):
                    with m.If(hit[offset]):
                        for b in range(len(bus.sel)):
                            with m.If(bus.sel[b]):
                                m.d.sync += staged[32 * i + 8 * b:32 * i + 8 * b + 8].eq(bus.dat_w[8 * b:8 * b + 8])
        return proto_ack, proto_err, proto_data
