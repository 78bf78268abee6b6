"""Enumerations and element-type properties of PTX section 5.5 and the CUDA driver API.

Covers section 5.5.1 (element types, the sub-byte types of 5.5.1.1), the access modes of
5.5.2-5.5.5, the interleave layouts of 5.5.6 and the swizzle modes and atomicities of
5.5.7, with the two numberings docs/spec.md gives ("Encodings"): the driver's
(``CUtensorMapDataType``, ``CUtensorMapSwizzle``...) and PTX ``tensormap.replace``'s, which
the 128-byte descriptor image uses.
"""

from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "DataType", "Interleave", "SwizzleMode", "SwizzleAtomicity", "Swizzle", "L2Promotion",
    "OobFill", "Im2colWideMode", "MapKind", "Operation", "AccessMode", "ReduceOp", "Fill",
    "TypeInfo", "TYPE_INFO", "type_info", "CHUNK_BYTES", "SWIZZLE_PAIRS", "SWIZZLE_SPANS",
]

#: Shared memory moves in 16-byte chunks: the swizzle keeps 16 bytes intact (section 5.5.7)
#: and every box row is a whole number of them (section 5.5.3.1).
CHUNK_BYTES = 16


class DataType(IntEnum):
    """``CUtensorMapDataType``: the driver's numbering (the model's canonical one)."""
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12
    U4_ALIGN8B = 13     # PTX .b4x16
    U4_ALIGN16B = 14    # PTX .b4x16_p64
    U6_ALIGN16B = 15    # PTX .b6x16_p32 on load, .b6p2x16 on store


class Interleave(IntEnum):
    """``CUtensorMapInterleave``; PTX uses the same numbers."""
    NONE = 0
    B16 = 1
    B32 = 2


class SwizzleMode(IntEnum):
    """PTX ``swizzle_mode`` numbering (docs/spec.md, "Encodings")."""
    NONE = 0
    B32 = 1
    B64 = 2
    B128 = 3
    B96 = 4


class SwizzleAtomicity(IntEnum):
    """PTX ``swizzle_atomicity`` numbering (docs/spec.md, "Encodings")."""
    A16B = 0
    A32B = 1
    A32B_FLIP_8B = 2
    A64B = 3


class Swizzle(IntEnum):
    """``CUtensorMapSwizzle``: the driver's single enum for mode and atomicity.

    ``B96`` has no published driver value; 7 is this project's own (docs/decisions.md).
    """
    NONE = 0
    B32 = 1
    B64 = 2
    B128 = 3
    B128_ATOM_32B = 4
    B128_ATOM_32B_FLIP_8B = 5
    B128_ATOM_64B = 6
    B96 = 7

    @property
    def pair(self) -> tuple[SwizzleMode, SwizzleAtomicity]:
        """The PTX (mode, atomicity) pair of this driver value."""
        return SWIZZLE_PAIRS[self]

    @classmethod
    def from_pair(cls, mode, atomicity) -> "Swizzle | None":
        """The driver value of a PTX pair, or None where Table 14 has no such combination."""
        for value, pair in SWIZZLE_PAIRS.items():
            if pair == (mode, atomicity):
                return value
        return None

    @property
    def span(self) -> int:
        """Bytes of a box row the swizzle spreads over: the largest legal inner box width."""
        return SWIZZLE_SPANS[self.pair[0]]


#: The PTX (mode, atomicity) pair of each driver value (PTX 5.5.7, Table 14; 96B's driver
#: value is this project's, docs/decisions.md). The RTL decodes the stored pair with it.
SWIZZLE_PAIRS = {
    Swizzle.NONE: (SwizzleMode.NONE, SwizzleAtomicity.A16B),
    Swizzle.B32: (SwizzleMode.B32, SwizzleAtomicity.A16B),
    Swizzle.B64: (SwizzleMode.B64, SwizzleAtomicity.A16B),
    Swizzle.B128: (SwizzleMode.B128, SwizzleAtomicity.A16B),
    Swizzle.B128_ATOM_32B: (SwizzleMode.B128, SwizzleAtomicity.A32B),
    Swizzle.B128_ATOM_32B_FLIP_8B: (SwizzleMode.B128, SwizzleAtomicity.A32B_FLIP_8B),
    Swizzle.B128_ATOM_64B: (SwizzleMode.B128, SwizzleAtomicity.A64B),
    Swizzle.B96: (SwizzleMode.B96, SwizzleAtomicity.A16B),
}

#: Bytes of a box row each swizzle mode spreads over (PTX 5.5.7; cuda.h: the inner box
#: dimension must be at most the swizzle's span): the SWIZZLE_SPAN rule's limit.
SWIZZLE_SPANS = {SwizzleMode.NONE: 0, SwizzleMode.B32: 32, SwizzleMode.B64: 64, SwizzleMode.B128: 128,
                 SwizzleMode.B96: 96}


class L2Promotion(IntEnum):
    """``CUtensorMapL2promotion``; no effect on addresses."""
    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class OobFill(IntEnum):
    """``CUtensorMapFloatOOBfill``: what out-of-bounds elements of a load become."""
    NONE = 0                    # zero fill
    NAN_REQUEST_ZERO_FMA = 1    # OOB-NaN fill


class Fill(IntEnum):
    """What the out-of-bounds units of a transaction become (model/transactions.py)."""
    NONE = 0        # store, reduce, prefetch: out-of-bounds units are skipped
    ZERO = 1        # a load's zero fill
    NAN = 2         # a load's OOB-NaN fill (OobFill.NAN_REQUEST_ZERO_FMA)


class Im2colWideMode(IntEnum):
    """``CUtensorMapIm2ColWideMode``."""
    W = 0
    W128 = 1


class MapKind(IntEnum):
    """Which driver encoder built a tensor map."""
    TILED = 0
    IM2COL = 1
    IM2COL_WIDE = 2


class Operation(IntEnum):
    """What a request does (docs/spec.md, "Request rules")."""
    LOAD = 0        # cp.async.bulk.tensor global -> shared
    STORE = 1       # cp.async.bulk.tensor shared -> global
    REDUCE = 2      # cp.reduce.async.bulk.tensor shared -> global
    PREFETCH = 3    # cp.async.bulk.prefetch.tensor global -> L2

    @property
    def writes_global(self) -> bool:
        return self in (Operation.STORE, Operation.REDUCE)


class AccessMode(IntEnum):
    """The ``.tile``/``.im2col`` qualifier of a request."""
    TILE = 0
    GATHER4 = 1
    SCATTER4 = 2
    IM2COL = 3          # on a store or reduce: im2col_no_offs
    IM2COL_W = 4
    IM2COL_W_128 = 5


class ReduceOp(IntEnum):
    """``.redOp`` of ``cp.reduce.async.bulk.tensor``."""
    ADD = 0
    MIN = 1
    MAX = 2
    INC = 3
    DEC = 4
    AND = 5
    OR = 6
    XOR = 7


@dataclass(frozen=True)
class TypeInfo:
    """How one element type is laid out.

    The traversal works in *units*: one element for the ordinary types; for the packed
    types the smallest piece that is always wholly in or out of bounds (one byte, two
    4-bit values, for ``.b4x16``; one 16-value group for the padded types).
    """
    name: str                   # PTX spelling
    ptx_code: int               # tensormap.replace elemtype value
    bits: int                   # bits of one value in global memory
    values_per_unit: int
    unit_global_bytes: int      # bytes one unit occupies in global memory
    unit_smem_bytes: int        # bytes one unit occupies in shared memory (padding included)
    is_float: bool
    numpy_dtype: str | None     # element dtype for functional copies; None for packed types

    @property
    def packed(self) -> bool:
        return self.values_per_unit > 1

    @property
    def padded(self) -> bool:
        return self.unit_smem_bytes != self.unit_global_bytes

    @property
    def align16b(self) -> bool:
        """The ``*_ALIGN16B`` types: 32-byte alignment, dim[0] % 128, boxDim[0] == 128."""
        return self.padded

    def smem_bytes(self, values: int) -> int:
        """Shared-memory bytes of ``values`` consecutive values (whole units)."""
        return values // self.values_per_unit * self.unit_smem_bytes

    def global_bytes(self, values: int) -> int:
        """Global-memory bytes of ``values`` consecutive values (whole units)."""
        return values // self.values_per_unit * self.unit_global_bytes


TYPE_INFO: dict[DataType, TypeInfo] = {
    DataType.UINT8: TypeInfo("u8", 0, 8, 1, 1, 1, False, "u1"),
    DataType.UINT16: TypeInfo("u16", 1, 16, 1, 2, 2, False, "<u2"),
    DataType.UINT32: TypeInfo("u32", 2, 32, 1, 4, 4, False, "<u4"),
    DataType.INT32: TypeInfo("s32", 3, 32, 1, 4, 4, False, "<i4"),
    DataType.UINT64: TypeInfo("u64", 4, 64, 1, 8, 8, False, "<u8"),
    DataType.INT64: TypeInfo("s64", 5, 64, 1, 8, 8, False, "<i8"),
    DataType.FLOAT16: TypeInfo("f16", 6, 16, 1, 2, 2, True, "<f2"),
    DataType.FLOAT32: TypeInfo("f32", 7, 32, 1, 4, 4, True, "<f4"),
    DataType.FLOAT64: TypeInfo("f64", 9, 64, 1, 8, 8, True, "<f8"),
    DataType.BFLOAT16: TypeInfo("bf16", 10, 16, 1, 2, 2, True, "<u2"),
    DataType.FLOAT32_FTZ: TypeInfo("f32.ftz", 8, 32, 1, 4, 4, True, "<f4"),
    DataType.TFLOAT32: TypeInfo("tf32", 11, 32, 1, 4, 4, True, "<f4"),
    DataType.TFLOAT32_FTZ: TypeInfo("tf32.ftz", 12, 32, 1, 4, 4, True, "<f4"),
    DataType.U4_ALIGN8B: TypeInfo("b4x16", 13, 4, 2, 1, 1, False, None),
    DataType.U4_ALIGN16B: TypeInfo("b4x16_p64", 14, 4, 16, 8, 16, False, None),
    DataType.U6_ALIGN16B: TypeInfo("b6x16_p32", 15, 6, 16, 12, 16, False, None),
}

_BY_PTX_CODE = {info.ptx_code: dtype for dtype, info in TYPE_INFO.items()}


def type_info(dtype: DataType) -> TypeInfo:
    return TYPE_INFO[DataType(dtype)]


def dtype_from_ptx_code(code: int) -> DataType | None:
    """The driver data type of a PTX ``elemtype`` code, or None when there is none."""
    return _BY_PTX_CODE.get(code)
