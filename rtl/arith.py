"""Arithmetic cut to the size of the FPGA's blocks, so that a pipeline can register it
part-way (docs/fpga.md, "Clock speed").

* :func:`partial_products`: a wide product as the sum of products of 17-bit pieces, each
  one an 18x18 multiplier (ECP5 MULT18X18D) with nothing added behind it, or shifted adds
  in logic where a piece has a few bits only;
* :func:`add_pairs`: one level of an adder tree, so a sum of many terms is spread over
  as many stages as it needs;
* :func:`carry_save_sum`: the last levels of such a tree as carry-save adders and one
  carry chain;
* :func:`small_product`: a product of a few bits in logic, not in a DSP block;
* :func:`sparse_product`: a product by one of a few known constants, as shifts and
  one adder;
* :func:`small_divmod`: quotient and remainder of a value of a few bits by a wide
  divisor, with compares only (no divider);
* :func:`ceil_div_operands`, :func:`reciprocal_quotient`: ``ceil(a / k)`` for ``k`` in
  1..8 by a multiply with the reciprocal, exact over the operand range it is built for;
* :func:`outside_field_range`: whether a value is outside the range of its low ``n``
  bits, by its high bits, with no compare;
* :func:`less_than`: a compare as the sign of one subtraction, so it is a carry chain;
* :func:`kept_unless`: a register's next value or its own, picked without making the
  pick the register's enable.
"""

import operator

from amaranth.hdl import Array, Const, Cat, Mux, Signal, Value, unsigned

from .pipeline import Delayed

__all__ = ["PIECE", "LOGIC_PIECE", "partial_products", "add_pairs", "sum_terms", "carry_save_sum", "small_product", "sparse_product",
           "small_divmod", "ceil_div_operands", "reciprocal_quotient", "RECIPROCAL_SHIFT",
           "outside_field_range", "kept_unless", "less_than"]

#: Bits of an operand piece: a 17-bit unsigned piece is a non-negative 18-bit signed
#: multiplier input, and a signed top piece fits the same input.
PIECE = 17

#: An unsigned piece of at most this many bits is multiplied in logic (:func:`small_product`,
#: one shifted copy of the other piece per bit, added): a DSP block for it would use a
#: few of its 18 bits, and a unit at lanes 8 has none to spare (docs/fpga.md).
LOGIC_PIECE = 4


def _pieces(value):
    """(shift, piece) of ``value``, least significant first; only a signed value's top
    piece is signed."""
    value = Value.cast(value)
    width = len(value)
    out = []
    for low in range(0, width, PIECE):
        high = min(low + PIECE, width)
        piece = value[low:high]
        if value.shape().signed and high == width:
            piece = piece.as_signed()
        out.append((low, piece))
    return out


def partial_products(a, b, width: int, multiply=None, zero_bits: int = 0):
    """``a * b`` modulo ``2**width`` as a list of terms whose sum (modulo ``2**width``) is
    the product. Each term is one piece product, shifted into place and cut to
    ``width`` bits as a signed value, so the sum of the terms, cut to ``width``, is the
    product whether or not ``a`` or ``b`` is signed. Terms shifted wholly past ``width``
    are left out. ``multiply``: how a piece product is made (a pipeline stage's DSP
    block, :meth:`.pipeline.Stage.product`, whose terms are then delayed values);
    by default ``*``. A product with an unsigned piece of at most :data:`LOGIC_PIECE`
    bits is made in logic instead, a plain value, which the stages register as they
    would the block's: it reaches the same stage. ``zero_bits``: the low bits of ``b``
    known to be 0 (a stride's, 16-byte aligned), left out of the pieces."""
    multiply = multiply or operator.mul
    b = Value.cast(b)
    high_b = b[zero_bits:].as_signed() if b.shape().signed else b[zero_bits:]     # a slice is unsigned
    terms = []
    for shift_a, piece_a in _pieces(a):
        for shift_b, piece_b in _pieces(high_b):
            shift = shift_a + shift_b + zero_bits
            if shift >= width:
                continue
            keep = width - shift            # the piece product's bits that land below width
            x, y = (piece[:keep].as_signed() if piece.shape().signed else piece[:keep]
                    for piece in (piece_a, piece_b))
            if not x.shape().signed and len(x) <= LOGIC_PIECE:
                x, y = y, x
            if not y.shape().signed and len(y) <= LOGIC_PIECE:
                product = small_product(x, y)
            else:
                product = multiply(x, y)
            terms.append(_apply(product, lambda p, shift=shift: (p << shift)[:width].as_signed()))
    return terms


def _apply(value, function):
    """``function`` of a value, or of a delayed one (:class:`.pipeline.Delayed`) delayed alike."""
    return value.map(function) if isinstance(value, Delayed) else function(value)


def add_pairs(terms, width: int):
    """One level of an adder tree: neighbouring terms added, modulo ``2**width``."""
    out = []
    for i in range(0, len(terms) - 1, 2):
        out.append((terms[i] + terms[i + 1])[:width].as_signed())
    if len(terms) % 2:
        out.append(terms[-1])
    return out


def sum_terms(terms, width: int):
    """The whole adder tree, for sums that need no cut."""
    while len(terms) > 1:
        terms = add_pairs(terms, width)
    return terms[0][:width]


def carry_save_sum(m, terms, width: int, name: str):
    """The sum of ``terms`` modulo ``2**width`` with one carry chain: 3:2 carry-save
    adders (a sum bit and a majority bit per position, one level of logic each, no
    carry chain) reduce three terms to two until two are left, then one add. For the
    last levels of a tree whose two chained adds would not fit a stage. Each adder's
    two outputs are signals of ``m`` (``<name>_sum<i>``, ``<name>_carry<i>``): the next
    adder reads each three times, and Amaranth writes an expression's logic again at
    every use, so a tree of expressions would hold 3^depth copies of its first terms
    for Yosys to merge. The signals are driven where it is called: outside any
    ``m.If`` or ``m.Switch``, or they read 0 where the condition does not hold."""
    terms = [Value.cast(term)[:width] for term in terms]
    count = 0
    while len(terms) > 2:
        a, b, c = terms[:3]
        total, carry = Signal(width, name=f"{name}_sum{count}"), Signal(width, name=f"{name}_carry{count}")
        m.d.comb += [total.eq(a ^ b ^ c), carry.eq((((a & b) | (a & c) | (b & c)) << 1)[:width])]
        terms = terms[3:] + [total, carry]
        count += 1
    return (terms[0] + terms[1])[:width] if len(terms) > 1 else terms[0]


def small_product(a, b):
    """``a * b`` for operands of a few bits, as shifted adds in logic: Yosys maps every
    ``*`` to a DSP block, and a chain of them is slower than the logic it replaces."""
    a, b = Value.cast(a), Value.cast(b)
    return sum(Mux(b[i], a << i, 0) for i in range(len(b)))


def sparse_product(a, b, values):
    """``a * b`` where ``b`` is one of the constants ``values`` (a type's byte or bit
    size), as shifts of ``a`` and few adds: the bit positions are split into groups in
    which no value sets two bits, each group's shifted copies are ORed (a multiplexer),
    and the groups are added. For unit bytes 1, 2, 4, 8, 12 that is two groups and one
    adder, where ``*`` would take a DSP block and its routing."""
    a, b = Value.cast(a), Value.cast(b)
    groups = []
    for position in range(len(b)):
        for group in groups:
            if not any((value >> position) & 1 and any((value >> other) & 1 for other in group) for value in values):
                group.append(position)
                break
        else:
            groups.append([position])
    width = len(a) + len(b)
    ored = []
    for group in groups:
        term = Const(0, width)
        for position in group:
            term = term | Mux(b[position], a << position, 0)
        ored.append(term)
    return sum(ored[1:], ored[0])[:width]


def small_divmod(m, x, divisor, limit: int, name: str):
    """``(x // divisor, x % divisor)`` for ``0 <= x <= limit`` (a few bits) and a divisor
    of any width, at least 1. The quotient is the number of ``k`` in ``1..limit`` with
    ``k * divisor <= x``, that is ``divisor <= x // k``: compares of the divisor with
    small values, no divider. The quotient is a signal of ``m`` named ``name`` (the
    remainder reads each of its bits), driven where it is called: outside any ``m.If``
    or ``m.Switch``."""
    divisor = Value.cast(divisor)
    small_bits = limit.bit_length()
    fits = divisor[small_bits:] == 0 if len(divisor) > small_bits else Const(1, 1)
    small = divisor[:small_bits]

    def at_most(k):
        if isinstance(x, int):          # a constant bound: no compare where it always holds
            bound = x // k
            return Const(1, 1) if bound >= (1 << small_bits) - 1 else small <= bound
        return small <= x // k
    # k * divisor <= x holds for k = 1..quotient and no further: count the k it holds for
    quotient = Signal(small_bits, name=name)
    m.d.comb += quotient.eq(sum(fits & at_most(k) for k in range(1, limit + 1))[:small_bits])
    x = Value.cast(x)
    remainder = (x - small_product(small, quotient))[:small_bits]
    return quotient, remainder


#: log2 of the reciprocal's scale in :func:`ceil_div_operands`.
RECIPROCAL_SHIFT = 12


def ceil_div_operands(a_less_one, k_less_one, a_max: int):
    """The two factors of ``ceil(a / k)`` for ``1 <= a <= a_max`` and ``k`` in 1..8, both
    given less one, as a descriptor stores them: ``a + k - 1`` and ``ceil(2**12 / k)``,
    whose product shifted down by 12 (:func:`reciprocal_quotient`) is the quotient, so a
    pipeline can register them before the multiply. With both given as 0 the factors are
    1 and ``2**12``: a quotient of 1. The first factor is one carry chain (the ``+ 1``
    rides in on its carry), the second a table of the stored ``k``. The construction
    checks that this is exact over the whole range, or refuses."""
    reciprocals = [-(-(1 << RECIPROCAL_SHIFT) // (k + 1)) for k in range(8)]
    for k in range(8):
        for n in range(a_max + k + 1):
            if (n * reciprocals[k]) >> RECIPROCAL_SHIFT != n // (k + 1):
                raise ValueError(f"ceil_div_operands: a_max {a_max} is past the reciprocal's exact range")
    table = Array(Const(r, unsigned(RECIPROCAL_SHIFT + 1)) for r in reciprocals)
    # (2a' + 1) + (2k' + 1) = 2 (a' + k' + 1): one adder whose carry in is the + 1
    numerator = (Cat(Const(1, 1), a_less_one) + Cat(Const(1, 1), k_less_one))[1:]
    return numerator, table[k_less_one[:3]]


def reciprocal_quotient(numerator, reciprocal, multiply=None):
    """The quotient of :func:`ceil_div_operands`' two factors (``multiply``: as for
    :func:`partial_products`)."""
    width = len(Value.cast(numerator)) + len(Value.cast(reciprocal)) - RECIPROCAL_SHIFT
    return _apply((multiply or operator.mul)(numerator, reciprocal), lambda p: p[RECIPROCAL_SHIFT:RECIPROCAL_SHIFT + width])


def outside_field_range(value, low: int, high: int):
    """Whether ``value`` is outside ``[low, high]``, a range that is all the values of
    its low ``n`` bits (two's complement for a signed field, else plain): the bits above
    them are not all copies of the sign (signed) or not all zero. A few levels of logic,
    no carry chain. Refuses any other range."""
    value = Value.cast(value)
    signed_field = value.shape().signed
    n = high.bit_length() + signed_field
    if (low, high) != ((-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed_field else (0, (1 << n) - 1)):
        raise ValueError(f"outside_field_range: [{low}, {high}] is not the range of a {n}-bit field")
    if n >= len(value):
        return Const(0, 1)
    top = value[n - 1:] if signed_field else value[n:]
    return (top != 0) & (top != (1 << len(top)) - 1) if signed_field else top != 0


def less_than(a, b):
    """``a < b`` as the sign of ``a - b``: one carry chain. Yosys's ABC9 flow maps some
    wide compares (``<``) to a ripple of LUTs, one level per two or three bits, where a
    subtraction stays on the carry chain (docs/fpga.md, "Clock speed")."""
    return (Value.cast(a) - Value.cast(b))[-1]          # wide enough for any signs: the sign


def kept_unless(pick, new, held):
    """``new`` (cut to ``held``'s width) where ``pick`` is high, else ``held``, as
    ``held ^ ((new ^ held) & pick)``. It equals a multiplexer, but where ``held`` is a
    register's own value Yosys makes a multiplexer's select that register's clock
    enable, one net from the select's logic to every flip-flop of the register; this
    form stays in the register's data input (``tests/test_synth.py``). ``pick`` is one
    bit and ``new`` a value at least as wide as ``held`` (a narrower one would be
    extended with zeros, not its sign); the result is ``held``'s bits, unsigned. ``pick``
    reaches every bit as a signed one-bit value's sign extension, one net repeated:
    ``replicate`` would be a concatenation, and Amaranth writes the logic of an
    expression again for each of its parts."""
    pick, width = Value.cast(pick), len(held)
    assert len(pick) == 1, "kept_unless picks with one bit"
    return (held ^ ((new[:width] ^ held) & pick.as_signed()))[:width]
