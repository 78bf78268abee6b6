"""PTX ISA section 5.5.7's swizzle pattern tables, transcribed: row r is the r-th 128-byte
line of the repeating pattern, cell p the logical 16-byte chunk stored at physical
position p. Spec data for the tests, written here once and never taken from the model."""

from tma_unit.model import Swizzle

TABLE_128B = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5],
              [3, 2, 1, 0, 7, 6, 5, 4], [4, 5, 6, 7, 0, 1, 2, 3], [5, 4, 7, 6, 1, 0, 3, 2],
              [6, 7, 4, 5, 2, 3, 0, 1], [7, 6, 5, 4, 3, 2, 1, 0]]
#: PTX's 32B and 64B tables are the 128B table's first two and first four rows.
TABLE_32B, TABLE_64B = TABLE_128B[:2], TABLE_128B[:4]
TABLE_128B_ATOM_32B = [[0, 1, 2, 3, 4, 5, 6, 7], [2, 3, 0, 1, 6, 7, 4, 5], [4, 5, 6, 7, 0, 1, 2, 3],
                       [6, 7, 4, 5, 2, 3, 0, 1]]
TABLE_128B_ATOM_64B = [[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 0, 1, 2, 3]]
TABLE_NONE = [[0, 1, 2, 3, 4, 5, 6, 7]]

#: Each mode's table; PTX gives the 96B mode the 32B mode's two-row table.
TABLES = {
    Swizzle.NONE: TABLE_NONE,
    Swizzle.B32: TABLE_32B,
    Swizzle.B64: TABLE_64B,
    Swizzle.B128: TABLE_128B,
    Swizzle.B128_ATOM_32B: TABLE_128B_ATOM_32B,
    Swizzle.B128_ATOM_64B: TABLE_128B_ATOM_64B,
    Swizzle.B96: TABLE_32B,
}
