"""Arithmetic blocks of rtl/arith.py against Python integers (Amaranth's simulator)."""

import random

import pytest
from amaranth.hdl import Module, Signal, signed
from amaranth.sim import Simulator

from tma_unit.rtl.arith import carry_save_sum


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
def test_carry_save_sum_is_the_sum_modulo_the_width(count):
    """Signed terms of 40 bits, as the address tree's are: the result is their sum
    modulo 2**40, whatever the signs and carries."""
    width = 40
    terms = [Signal(signed(width), name=f"t{i}") for i in range(count)]
    m = Module()
    total = Signal(width)
    m.d.comb += total.eq(carry_save_sum(terms, width))
    rng = random.Random(count)
    low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    cases = [[rng.choice([low, high, -1, 0, 1, rng.randint(low, high)]) for _ in terms] for _ in range(300)]

    async def bench(ctx):
        for case in cases:
            for term, value in zip(terms, case):
                ctx.set(term, value)
            assert ctx.get(total) == sum(case) % (1 << width), case

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
