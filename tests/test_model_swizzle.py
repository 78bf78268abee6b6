"""The swizzle against every pattern table of PTX section 5.5.7, its base-offset rule and
the CuTe forms of docs/spec.md, "Swizzle"."""

import numpy as np
import pytest

from tma_unit.model import Swizzle, swizzle, swizzle_repeat

from swizzle_tables import TABLES, TABLE_128B_ATOM_32B

ROWS = [(mode, r) for mode, table in TABLES.items() for r in range(len(table))]


@pytest.mark.parametrize("mode,row", ROWS, ids=[f"{m.name}-row{r}" for m, r in ROWS])
def test_every_table_row(mode, row):
    """Logical chunk table[row][p] of line `row` lands at physical position p, in every
    repeat of the pattern within 8 KiB."""
    table = TABLES[mode]
    period = len(table) * 128
    for repeat in range(8192 // period):
        line = repeat * period + row * 128
        for position, chunk in enumerate(table[row]):
            for byte in range(0, 16, 4):
                assert swizzle(line + chunk * 16 + byte, mode) == line + position * 16 + byte


@pytest.mark.parametrize("row", range(4))
def test_flip_8b_is_atom_32b_with_halves_swapped_on_odd_lines(row):
    """cuda.h: 'swap lower 8B with upper 8B within each 16B for every alternate row'."""
    for position, chunk in enumerate(TABLE_128B_ATOM_32B[row]):
        for half in (0, 1):
            logical = row * 128 + chunk * 16 + half * 8
            physical = row * 128 + position * 16 + (half ^ (row & 1)) * 8
            assert swizzle(logical, Swizzle.B128_ATOM_32B_FLIP_8B) == physical


@pytest.mark.parametrize("mode,rows,repeat", [
    (Swizzle.B128, 8, 1024), (Swizzle.B96, 2, 256), (Swizzle.B64, 4, 512), (Swizzle.B32, 2, 256)])
def test_base_offset_rule(mode, rows, repeat):
    """PTX base-offset table: at a dstMem off the repeat boundary, the box's first line
    uses pattern row (dstMem / 128) % rows."""
    assert swizzle_repeat(mode) == repeat
    table = TABLES[mode]
    for dst in range(0, 4 * repeat, 128):
        offset = (dst // 128) % rows
        for position, chunk in enumerate(table[offset]):
            assert swizzle(dst + chunk * 16, mode) == dst + position * 16


def cute_swizzle(offset, bits, base, shift):
    """CuTe Swizzle<B,M,S>: o ^ ((o & yyy_mask) >> S), yyy_mask = ((1<<B)-1) << (M+S)."""
    mask = ((1 << bits) - 1) << (base + shift)
    return offset ^ ((offset & mask) >> shift)


@pytest.mark.parametrize("mode,bms", [
    (Swizzle.B32, (1, 4, 3)), (Swizzle.B64, (2, 4, 3)), (Swizzle.B128, (3, 4, 3)),
    (Swizzle.B128_ATOM_32B, (2, 5, 2)), (Swizzle.B128_ATOM_64B, (1, 6, 1))])
def test_cute_forms(mode, bms):
    addresses = np.arange(0, 1 << 14, dtype=np.int64)
    expected = np.array([cute_swizzle(int(a), *bms) for a in addresses])
    assert (swizzle(addresses, mode) == expected).all()


@pytest.mark.parametrize("mode", list(Swizzle))
def test_swizzle_is_a_permutation_within_each_repeat(mode):
    repeat = max(swizzle_repeat(mode), 128)
    addresses = np.arange(4 * repeat, dtype=np.int64)
    out = swizzle(addresses, mode)
    assert sorted(out.tolist()) == addresses.tolist()
    assert (swizzle(out, mode) == addresses).all()        # every mode is an involution
