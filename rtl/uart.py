"""An 8N1 UART: one start bit, eight data bits (least significant first), one stop bit,
as a byte stream in each direction (the prototyping top's link to the host).

``divisor`` is the clock cycles per bit: the clock's frequency over the baud rate. The
receiver samples each bit in its middle, after finding the start bit's falling edge, and
drops a byte whose stop bit is low (a framing error, counted in ``framing_errors``).

Both bit timers count down to -1 and test their sign bit, not a zero compare, so a
timer's end drives the state machines through one bit (docs/fpga.md, "Clock speed").
"""

from amaranth.hdl import Module, Signal, Cat, signed
from amaranth.lib import wiring, stream
from amaranth.lib.wiring import In, Out

__all__ = ["UartRx", "UartTx"]


def _check_divisor(divisor):
    if not isinstance(divisor, int) or divisor < 4:
        raise ValueError(f"divisor (clock cycles per bit) must be an integer of at least 4, not {divisor!r}")


class UartRx(wiring.Component):
    """Serial line in, bytes out.

    Ports
    -----
    rx : in
        The line (idle high).
    bytes : stream out (8 bits)
        A received byte; a byte the host sends while the last one waits is lost (the
        bridge takes one a cycle, so it never waits).
    framing_errors : out (16 bits)
        Bytes dropped for a low stop bit, saturating.
    """

    def __init__(self, divisor: int):
        _check_divisor(divisor)
        self.divisor = divisor
        super().__init__({"rx": In(1, init=1), "bytes": Out(stream.Signature(8)), "framing_errors": Out(16)})

    def elaborate(self, platform):
        m = Module()
        divisor = self.divisor
        # two flip-flops bring the asynchronous line into the clock domain
        line = Signal(2, init=0b11)
        m.d.sync += line.eq(Cat(self.rx, line[0]))
        level = line[1]

        timer = Signal(signed((divisor * 3 // 2).bit_length() + 1))     # done below 0
        bit = Signal(range(10))
        shift = Signal(8)
        with m.If(self.bytes.ready):
            m.d.sync += self.bytes.valid.eq(0)

        with m.FSM():
            with m.State("idle"):
                with m.If(~level):
                    # wait half a bit to the start bit's middle, then whole bits
                    m.d.sync += [timer.eq(divisor // 2 - 1), bit.eq(0)]
                    m.next = "sample"
            with m.State("sample"):
                with m.If(~timer[-1]):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    m.d.sync += [timer.eq(divisor - 2), bit.eq(bit + 1)]
                    with m.If(bit == 0):
                        with m.If(level):           # a glitch, not a start bit
                            m.next = "idle"
                    with m.Elif(bit <= 8):
                        m.d.sync += shift.eq(Cat(shift[1:], level))
                    with m.Else():
                        with m.If(level):
                            m.d.sync += [self.bytes.payload.eq(shift), self.bytes.valid.eq(1)]
                        with m.Elif(self.framing_errors != 0xFFFF):
                            m.d.sync += self.framing_errors.eq(self.framing_errors + 1)
                        m.next = "idle"
        return m


class UartTx(wiring.Component):
    """Bytes in, serial line out.

    Ports
    -----
    bytes : stream in (8 bits)
    tx : out
        The line (idle high).
    """

    def __init__(self, divisor: int):
        _check_divisor(divisor)
        self.divisor = divisor
        super().__init__({"bytes": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        timer = Signal(signed(self.divisor.bit_length() + 1), init=-1)     # done below 0
        frame = Signal(10)           # stop, data[7:0], start: shifted out from bit 0
        remaining = Signal(range(11))
        # ready once the stop bit has been held for a whole bit time
        m.d.comb += self.bytes.ready.eq((remaining == 0) & timer[-1])
        with m.If(self.bytes.valid & self.bytes.ready):
            m.d.sync += [frame.eq(Cat(0, self.bytes.payload, 1)), remaining.eq(10)]
        with m.Elif(~timer[-1]):
            m.d.sync += timer.eq(timer - 1)
        with m.Elif(remaining != 0):
            m.d.sync += [self.tx.eq(frame[0]), frame.eq(frame >> 1), remaining.eq(remaining - 1),
                         timer.eq(self.divisor - 2)]
        return m
