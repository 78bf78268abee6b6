"""Arithmetic blocks of rtl/arith.py against Python integers (Amaranth's simulator)."""

import random
import re
from collections import Counter

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Module, Shape, Signal, signed, unsigned
from amaranth.sim import Simulator

from tma_unit.rtl.arith import (LOGIC_PIECE, carry_save_sum, ceil_div_operands, kept_unless, less_than,
                                outside_field_range, partial_products, reciprocal_quotient)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
def test_carry_save_sum_is_the_sum_modulo_the_width(count):
    """Signed terms of 40 bits, as the address tree's are: the result is their sum
    modulo 2**40, whatever the signs and carries."""
    width = 40
    terms = [Signal(signed(width), name=f"t{i}") for i in range(count)]
    m = Module()
    total = Signal(width)
    m.d.comb += total.eq(carry_save_sum(m, terms, width, "total"))
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


def test_carry_save_sum_writes_each_adder_once():
    """16 terms take 14 carry-save adders and one add: each adder is 2 XORs for its sum
    bit, 3 ANDs and 2 ORs for its majority and a shift, written once because its outputs
    are signals (an expression tree would hold 3^depth copies of its first adders)."""
    width, count = 40, 16
    terms = [Signal(width, name=f"t{i}") for i in range(count)]
    m = Module()
    total = Signal(width)
    m.d.comb += total.eq(carry_save_sum(m, terms, width, "total"))
    cells = Counter(re.findall(r"\n  cell \$(\w+)", rtlil.convert(m, ports=[*terms, total])))
    adders = count - 2
    assert cells == {"xor": 2 * adders, "and": 3 * adders, "or": 2 * adders, "shl": adders, "add": 1}, cells


@pytest.mark.parametrize("a_shape, b_width, width, zero_bits", [
    (signed(34), 40, 64, 4),        # the datapath's coordinate by stride: a 2-bit piece in logic
    (signed(34), 40, 64, 0),        # a 6-bit piece: a block
    (unsigned(32), 36, 48, 0),
    (signed(20), 21, 40, 0),        # 17 + 4 bits: the 4-bit piece in logic
    (unsigned(9), 64, 64, 0),
    (unsigned(20), signed(36), 64, 4),  # a signed b: its top piece keeps its sign
    (signed(18), signed(21), 48, 0),
])
def test_partial_products_sum_to_the_product_modulo_the_width(a_shape, b_width, width, zero_bits):
    """The terms' sum is ``a * b`` modulo ``2**width`` (``b`` with its low ``zero_bits``
    0), whichever pieces go to a multiplier and which to logic; the count of multipliers
    is the count of piece pairs neither of whose pieces has at most LOGIC_PIECE bits."""
    b_shape = b_width if isinstance(b_width, Shape) else unsigned(b_width)
    b_width = b_shape.width
    a, b = Signal(a_shape, name="a"), Signal(b_shape, name="b")
    blocks = []

    def multiply(x, y):
        blocks.append((len(x), len(y)))
        return x * y
    m = Module()
    total = Signal(width)
    m.d.comb += total.eq(sum(partial_products(a, b, width, multiply, zero_bits))[:width])
    pieces = lambda n: [min(17, n - low) for low in range(0, n, 17)]
    a_pieces, b_pieces = pieces(len(a)), pieces(b_width - zero_bits)
    # a piece goes to logic when it is unsigned (not a signed value's top piece) and narrow
    logic = lambda n, k, count, signed: n <= LOGIC_PIECE and not (signed and k == count - 1)
    expected_blocks = sum(1 for i, x in enumerate(a_pieces) for j, y in enumerate(b_pieces)
                          if 17 * (i + j) + zero_bits < width
                          and not logic(y, j, len(b_pieces), b_shape.signed)
                          and not logic(x, i, len(a_pieces), a_shape.signed))
    assert len(blocks) == expected_blocks
    rng = random.Random(f"{a_shape}{b_width}{width}{zero_bits}")
    a_low, a_high = (-(1 << (len(a) - 1)), (1 << (len(a) - 1)) - 1) if a_shape.signed else (0, (1 << len(a)) - 1)
    b_low, b_high = (-(1 << (b_width - 1)), (1 << (b_width - 1)) - 1) if b_shape.signed else (0, (1 << b_width) - 1)

    async def bench(ctx):
        for _ in range(300):
            x = rng.choice([a_low, a_high, 0, -1 if a_shape.signed else 1, rng.randint(a_low, a_high)])
            y = rng.choice([b_low, b_high, 1, rng.randint(b_low, b_high)]) >> zero_bits << zero_bits
            ctx.set(a, x)
            ctx.set(b, y)
            assert ctx.get(total) == (x * y) % (1 << width), (x, y)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


def test_ceil_div_operands_give_the_quotient_over_the_whole_range():
    """Every stored box size (``a - 1``, 0..255) and element stride (``k - 1``, 0..7):
    the two factors' product shifted down is ``ceil(a / k)``."""
    a_less_one, k_less_one = Signal(8), Signal(3)
    m = Module()
    quotient = Signal(9)
    m.d.comb += quotient.eq(reciprocal_quotient(*ceil_div_operands(a_less_one, k_less_one, 256)))

    async def bench(ctx):
        for a in range(1, 257):
            for k in range(1, 9):
                ctx.set(a_less_one, a - 1)
                ctx.set(k_less_one, k - 1)
                assert ctx.get(quotient) == -(-a // k), (a, k)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


def test_ceil_div_operands_refuse_a_range_past_exactness():
    with pytest.raises(ValueError, match="exact range"):
        ceil_div_operands(Signal(16), Signal(3), 1 << 14)


@pytest.mark.parametrize("shape, low, high", [
    (signed(16), -(1 << 7), (1 << 7) - 1), (signed(16), -(1 << 4), (1 << 4) - 1),      # the corners' ranges
    (signed(16), -(1 << 15), (1 << 15) - 1),
    (unsigned(16), 0, (1 << 8) - 1), (unsigned(16), 0, (1 << 5) - 1), (unsigned(16), 0, (1 << 16) - 1)])
def test_outside_field_range_is_the_range_test(shape, low, high):
    """The range tests the corner and im2col-offset rules use, against Python's compare,
    at every edge of the range and of the field and at random values between."""
    value = Signal(shape)
    m = Module()
    out = Signal()
    m.d.comb += out.eq(outside_field_range(value, low, high))
    field_low, field_high = (-(1 << 15), (1 << 15) - 1) if shape.signed else (0, (1 << 16) - 1)
    rng = random.Random(high)
    edges = {low - 1, low, low + 1, high - 1, high, high + 1, field_low, field_high, 0, -1}
    values = [v for v in edges if field_low <= v <= field_high] + [rng.randint(field_low, field_high)
                                                                  for _ in range(200)]

    async def bench(ctx):
        for v in values:
            ctx.set(value, v)
            assert ctx.get(out) == (not low <= v <= high), v

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


def test_outside_field_range_refuses_other_ranges():
    with pytest.raises(ValueError, match="not the range"):
        outside_field_range(Signal(signed(16)), -100, 100)
    with pytest.raises(ValueError, match="not the range"):
        outside_field_range(Signal(16), 1, 255)


@pytest.mark.parametrize("a_shape, b_shape", [(unsigned(6), unsigned(4)), (signed(5), unsigned(6)),
                                              (unsigned(3), signed(6)), (signed(4), signed(4))])
def test_less_than_is_the_compare(a_shape, b_shape):
    """Every pair of values of the two shapes: the subtraction's sign is ``a < b``."""
    a, b = Signal(a_shape), Signal(b_shape)
    m = Module()
    out = Signal()
    m.d.comb += out.eq(less_than(a, b))

    def values(shape):
        return range(-(1 << (shape.width - 1)), 1 << (shape.width - 1)) if shape.signed else range(1 << shape.width)

    async def bench(ctx):
        for x in values(a_shape):
            for y in values(b_shape):
                ctx.set(a, x)
                ctx.set(b, y)
                assert ctx.get(out) == (x < y), (x, y)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("new_shape, held_shape", [(unsigned(4), unsigned(4)), (unsigned(6), signed(4)),
                                                   (signed(5), signed(4))])
def test_kept_unless_is_the_multiplexer(new_shape, held_shape):
    """Every pick, new and held value: ``new`` cut to the held value's width where the
    pick is high, else the held value (its bits, as a register of its shape stores it)."""
    pick, new, held = Signal(), Signal(new_shape), Signal(held_shape)
    m = Module()
    out = Signal(held_shape)
    m.d.comb += out.eq(kept_unless(pick, new, held))
    width = held_shape.width

    def values(shape):
        return range(-(1 << (shape.width - 1)), 1 << (shape.width - 1)) if shape.signed else range(1 << shape.width)

    async def bench(ctx):
        for p in (0, 1):
            for x in values(new_shape):
                for y in values(held_shape):
                    ctx.set(pick, p)
                    ctx.set(new, x)
                    ctx.set(held, y)
                    expected = (x if p else y) % (1 << width)
                    assert ctx.get(out) % (1 << width) == expected, (p, x, y)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
