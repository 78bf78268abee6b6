"""The prototyping top's UART on its own: bit times exact to the cycle at divisors other
than the top test's 4 (Amaranth's simulator)."""

import pytest

from tma_unit.rtl.uart import UartRx, UartTx

from simulator import simulate


@pytest.mark.parametrize("divisor", [4, 5, 7, 16])
def test_transmitter_holds_every_bit_for_the_divisor(divisor):
    """A byte goes out as start bit, eight data bits least significant first, stop bit,
    each held for exactly ``divisor`` cycles (the stop bit at least that: the next byte
    is taken once it has been held a whole bit time)."""
    tx = UartTx(divisor)
    levels = []

    async def bench(ctx):
        for byte in (0xA5, 0x3C):
            ctx.set(tx.bytes.payload, byte)
            ctx.set(tx.bytes.valid, 1)
            while not ctx.get(tx.bytes.ready):
                levels.append(ctx.get(tx.tx))
                await ctx.tick()
            levels.append(ctx.get(tx.tx))
            await ctx.tick()
            ctx.set(tx.bytes.valid, 0)
        for _ in range(12 * divisor):
            levels.append(ctx.get(tx.tx))
            await ctx.tick()

    simulate(tx, bench)
    start = 0
    for byte in (0xA5, 0x3C):
        start = levels.index(0, start)          # the start bit's falling edge
        expected = []
        for level in [0] + [(byte >> i) & 1 for i in range(8)] + [1]:
            expected += [level] * divisor
        assert levels[start:start + len(expected)] == expected, hex(byte)
        start += len(expected)


@pytest.mark.parametrize("divisor", [4, 5, 7, 16])
def test_receiver_takes_bytes_sent_at_the_divisor(divisor):
    """Bytes shifted in at ``divisor`` cycles a bit, back to back, come out in order; a
    byte with a low stop bit is dropped and counted."""
    rx = UartRx(divisor)
    sent = [0x00, 0xFF, 0x5A, 0x81]
    got = []

    async def line(ctx):
        for _ in range(3 * divisor):
            await ctx.tick()
        frames = [(byte, 1) for byte in sent[:2]] + [(0x77, 0)] + [(byte, 1) for byte in sent[2:]]
        for byte, stop in frames:
            for level in [0] + [(byte >> i) & 1 for i in range(8)] + [stop]:
                ctx.set(rx.rx, level)
                for _ in range(divisor):
                    await ctx.tick()
            ctx.set(rx.rx, 1)
            for _ in range(2 * divisor):            # idle after the bad stop bit's frame too
                await ctx.tick()
        for _ in range(3 * divisor):
            await ctx.tick()

    async def sink(ctx):
        ctx.set(rx.bytes.ready, 1)
        async for _, _, payload, valid in ctx.tick().sample(rx.bytes.payload, rx.bytes.valid):
            if valid:
                got.append(payload)

    simulate(rx, line, background=[sink])
    assert got == sent
