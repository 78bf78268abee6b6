"""The UART-to-Wishbone bridge of the prototyping top: commands in as bytes, one Wishbone
B4 classic access each, replies out as bytes.

Commands (all numbers little-endian; :mod:`tma_unit.proto` speaks the host side):

* ``'W'`` address:u32 data:u32 -> ``'K'`` (ack) or ``'E'`` (err)
* ``'R'`` address:u32 -> ``'K'`` data:u32, or ``'E'``
* any other byte -> ``'?'``: the host may send bytes until it sees one, to find the start
  of a command again.

Addresses are byte addresses; the access is the whole 32-bit word that holds them.
"""

from amaranth.hdl import Module, Signal, Cat, Const, Mux
from amaranth.lib import wiring, stream
from amaranth.lib.wiring import In, Out

from .bus import WishboneSignature

__all__ = ["UartBridge", "COMMAND_WRITE", "COMMAND_READ", "REPLY_ACK", "REPLY_ERR", "REPLY_UNKNOWN"]

COMMAND_WRITE = ord("W")
COMMAND_READ = ord("R")
REPLY_ACK = ord("K")
REPLY_ERR = ord("E")
REPLY_UNKNOWN = ord("?")
ACCESS_TIMEOUT = 1 << 16        # cycles without ack or err before the bridge answers 'E' (a power of two)
assert ACCESS_TIMEOUT & (ACCESS_TIMEOUT - 1) == 0, "the timeout is the top bit of its count"


class UartBridge(wiring.Component):
    """Ports: ``commands`` (bytes in), ``replies`` (bytes out), ``bus`` (Wishbone initiator,
    30-bit word addresses)."""

    def __init__(self):
        super().__init__({
            "commands": In(stream.Signature(8)),
            "replies": Out(stream.Signature(8)),
            "bus": Out(WishboneSignature(30)),
        })

    def elaborate(self, platform):
        m = Module()
        operand = Signal(64)            # address, then data, little-endian
        left = Signal(range(9))         # operand bytes still to come
        write = Signal()
        result = Signal(32)
        ok = Signal()
        reply = Signal(40)              # status byte, then the read data
        reply_left = Signal(range(6))
        waited = Signal(range(ACCESS_TIMEOUT + 1))

        # the bus is driven from registers, so an access's address decode and read
        # multiplexer get a cycle of their own (docs/fpga.md, "Clock speed")
        strobe = Signal()
        m.d.comb += [self.replies.payload.eq(reply[:8]), self.bus.cyc.eq(strobe), self.bus.stb.eq(strobe),
                     self.bus.sel.eq(0xF)]
        with m.FSM():
            with m.State("command"):
                m.d.comb += self.commands.ready.eq(1)
                with m.If(self.commands.valid):
                    byte = self.commands.payload
                    # the reply to an unknown byte is loaded whatever the byte (a command
                    # overwrites it before it is sent), so no compare drives its enable
                    m.d.sync += [write.eq(byte == COMMAND_WRITE), left.eq(Mux(byte == COMMAND_WRITE, 8, 4)),
                                 reply.eq(REPLY_UNKNOWN), reply_left.eq(1)]
                    with m.If((byte == COMMAND_WRITE) | (byte == COMMAND_READ)):
                        m.next = "operand"
                    with m.Else():
                        m.next = "reply"
            with m.State("operand"):
                m.d.comb += self.commands.ready.eq(1)
                with m.If(self.commands.valid):
                    shifted = Cat(operand[8:], self.commands.payload)
                    m.d.sync += [operand.eq(shifted), left.eq(left - 1)]
                    with m.If(left == 1):
                        # a read's operand came in 4 bytes: it sits in the top half
                        address = Mux(write, shifted[:32], shifted[32:])
                        m.d.sync += [waited.eq(0), strobe.eq(1), self.bus.adr.eq(address[2:]),
                                     self.bus.dat_w.eq(shifted[32:]), self.bus.we.eq(write)]
                        m.next = "access"
            with m.State("access"):
                m.d.sync += waited.eq(waited + 1)
                # the answer is registered and the reply made from it a cycle later, so the
                # bus's answer (from across the chip) drives only the strobe and these
                # registers. The count's top bit: set when it reaches ACCESS_TIMEOUT, a
                # power of two
                with m.If(self.bus.ack | self.bus.err | waited[-1]):
                    m.d.sync += [ok.eq(self.bus.ack), result.eq(self.bus.dat_r), strobe.eq(0)]
                    m.next = "answered"
            with m.State("answered"):
                m.d.sync += [reply.eq(Mux(ok, Cat(Const(REPLY_ACK, 8), result), REPLY_ERR)),
                             reply_left.eq(Mux(ok & ~write, 5, 1))]
                m.next = "reply"
            with m.State("reply"):
                m.d.comb += self.replies.valid.eq(1)
                with m.If(self.replies.ready):
                    m.d.sync += [reply.eq(reply >> 8), reply_left.eq(reply_left - 1)]
                    with m.If(reply_left == 1):
                        m.next = "command"
        return m
