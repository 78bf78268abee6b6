"""The one table of error codes: every validation rule of docs/spec.md
("Tensor-map rules", "Request rules") and the unit's own limits.

The golden model raises :class:`TmaError` with one of these codes; the RTL reports the same
number on its completion stream and in its status register, so the table is the contract
between the two. Codes are stable: a new rule gets a new number, a number is never reused.
"""

from enum import IntEnum

__all__ = ["ErrorCode", "TmaError", "RULES", "shown"]


class ErrorCode(IntEnum):
    """Stable numeric codes (8 bits in hardware). 0 means success."""
    OK = 0
    # -- descriptor (tensor map) rules, docs/spec.md "Tensor-map rules" --
    RANK_RANGE = 1
    RANK_INTERLEAVE = 2
    ENUM_RANGE = 3
    ADDRESS_ALIGN = 4
    DIM_RANGE = 5
    DIM_PACKED = 6
    STRIDE_ALIGN = 7
    STRIDE_RANGE = 8
    STRIDE_EXTENT = 9
    BOX_RANGE = 10
    BOX_INNER_BYTES = 11
    BOX_PACKED = 12
    ELEMENT_STRIDE_RANGE = 13
    SWIZZLE_SPAN = 14
    SWIZZLE_ATOMICITY = 15
    INTERLEAVE_SWIZZLE = 16
    PACKED_INTERLEAVE = 17
    PACKED_SWIZZLE = 18
    OOB_NAN_TYPE = 19
    SWIZZLE_96B = 20
    ARRAY_LENGTH = 21
    FIELD_TYPE = 22         # model only: no hardware field holds such a value
    # im2col and im2col-wide maps
    CORNER_RANGE = 32
    CORNER_AREA = 33
    CHANNELS_RANGE = 34
    PIXELS_RANGE = 35
    WIDE_SWIZZLE = 36
    WIDE_INTERLEAVE = 37
    # -- request rules, docs/spec.md "Request rules" --
    MODE_MISMATCH = 64
    COORD_COUNT = 65
    COORD_RANGE = 66
    STORE_NEGATIVE_COORD = 67
    FLIP_8B_DIRECTION = 68
    PACKED_DIRECTION = 69
    PACKED_COORD = 70
    SMEM_ALIGN = 71
    REDUCE_TYPE = 72
    OPERATION_MODE = 73
    IM2COL_OFFSET_RANGE = 74
    WHALO_RANGE = 75
    WOFFSET_RANGE = 76
    GATHER4_MAP = 77
    IM2COL_STORE_CORNER = 78
    MULTICAST_DIRECTION = 79
    FIELD_WIDTH = 80        # model only: no hardware field holds such a value
    # -- what the unit refuses so a request cannot reach memory it does not own --
    SLOT_INVALID = 96
    SMEM_BOUNDS = 97
    ADDRESS_WRAP = 98
    # -- what a unit built without some modes or swizzles refuses (UnitConfig) --
    MODE_NOT_BUILT = 99
    SWIZZLE_NOT_BUILT = 100


#: One line per code: the rule it enforces (docs/spec.md gives each rule's source).
#: docs/errors.md is generated from this table.
RULES: dict[ErrorCode, str] = {
    ErrorCode.OK: "no error",
    ErrorCode.RANK_RANGE: "tensor rank is 1..5 for tiled maps, 3..5 for im2col and im2col-wide maps",
    ErrorCode.RANK_INTERLEAVE: "an interleaved layout needs rank >= 3",
    ErrorCode.ENUM_RANGE: "an enumerated field holds one of its defined values",
    ErrorCode.ADDRESS_ALIGN: "global address is 16-byte aligned (32-byte with 32B interleave or an ALIGN16B type)",
    ErrorCode.DIM_RANGE: "each global dimension is 1..2^32",
    ErrorCode.DIM_PACKED: "packed types: global_dims[0] % 128 == 0 (ALIGN16B) or even (b4x16)",
    ErrorCode.STRIDE_ALIGN: "each global stride is a multiple of 16 (32 with 32B interleave or an ALIGN16B type)",
    ErrorCode.STRIDE_RANGE: "each global stride is below 2^40",
    ErrorCode.STRIDE_EXTENT: "global_strides[i] covers the dimension below it",
    ErrorCode.BOX_RANGE: "each box dimension is 1..256",
    ErrorCode.BOX_INNER_BYTES: "without interleave, the inner box row is a multiple of 16 bytes",
    ErrorCode.BOX_PACKED: "packed types: box_dims[0] == 128 (ALIGN16B) or even (b4x16)",
    ErrorCode.ELEMENT_STRIDE_RANGE: "each element stride is 1..8",
    ErrorCode.SWIZZLE_SPAN: "with a swizzle and no interleave, the inner box row fits the swizzle span",
    ErrorCode.SWIZZLE_ATOMICITY: "atomicity other than 16B only with the 128B swizzle (PTX Table 14)",
    ErrorCode.INTERLEAVE_SWIZZLE: "32B interleave requires the 32B swizzle",
    ErrorCode.PACKED_INTERLEAVE: "16U6_ALIGN16B requires interleave NONE",
    ErrorCode.PACKED_SWIZZLE: "ALIGN16B types allow only the swizzles cuda.h lists for them",
    ErrorCode.OOB_NAN_TYPE: "OOB-NaN fill only for floating-point, non-packed types",
    ErrorCode.SWIZZLE_96B: "96B swizzle: no interleave, inner box row <= 96 bytes, not with im2col::w::128",
    ErrorCode.ARRAY_LENGTH: "each per-dimension array has one entry per dimension",
    ErrorCode.FIELD_TYPE: ("each field is given and holds its kind of value: an integer (not a bool, a float "
                           "or a string), a list of integers (not a string), an object of named fields, "
                           "bytes for a descriptor image"),
    ErrorCode.CORNER_RANGE: "im2col corners lie in the rank's range",
    ErrorCode.CORNER_AREA: "the im2col bounding box has non-zero area",
    ErrorCode.CHANNELS_RANGE: "channels_per_pixel is 1..256 (exactly 128 for ALIGN16B types, even for b4x16)",
    ErrorCode.PIXELS_RANGE: "pixels_per_column is 1..1024",
    ErrorCode.WIDE_SWIZZLE: "im2col-wide maps use the 64B, 128B or 128B-atom-32B swizzle",
    ErrorCode.WIDE_INTERLEAVE: "im2col-wide maps have no interleave",
    ErrorCode.MODE_MISMATCH: "the request's access mode fits the tensor map's kind",
    ErrorCode.COORD_COUNT: "a request gives one coordinate per dimension (five for gather4/scatter4)",
    ErrorCode.COORD_RANGE: "coordinates are signed 32-bit values",
    ErrorCode.STORE_NEGATIVE_COORD: "store and reduce coordinates are >= 0",
    ErrorCode.FLIP_8B_DIRECTION: "the 8B-flip atomicity is for the load direction (load, prefetch) only, and not with im2col::w",
    ErrorCode.PACKED_DIRECTION: "the packed type and swizzle are allowed in this copy direction",
    ErrorCode.PACKED_COORD: "sub-byte types: coordinates[0] is a multiple of 128",
    ErrorCode.SMEM_ALIGN: "the shared-memory address is aligned for the swizzle (16, 32, 64 or 128 bytes)",
    ErrorCode.REDUCE_TYPE: "the reduction op is defined for the element type",
    ErrorCode.OPERATION_MODE: "the access mode exists for the operation",
    ErrorCode.IM2COL_OFFSET_RANGE: "im2col offsets lie in the rank's range",
    ErrorCode.WHALO_RANGE: "wHalo is in [0, 512) for im2col::w and [0, 32) for im2col::w::128",
    ErrorCode.WOFFSET_RANGE: "wOffset is in [0, 32)",
    ErrorCode.GATHER4_MAP: "gather4/scatter4 need a rank-2 tiled map, box_dims[1] == 1, no interleave",
    ErrorCode.IM2COL_STORE_CORNER: "im2col store: lower corner >= 0 and upper corner <= 0",
    ErrorCode.MULTICAST_DIRECTION: "a multicast CTA mask only on loads",
    ErrorCode.FIELD_WIDTH: "each request value fits its field of the request payload (smem_address 32 bits, request_id 16)",
    ErrorCode.SLOT_INVALID: "the request names a descriptor slot that holds a written, valid tensor map",
    ErrorCode.SMEM_BOUNDS: "the box's shared-memory footprint fits the configured shared memory",
    ErrorCode.ADDRESS_WRAP: "no global address of the box wraps the configured address width",
    ErrorCode.MODE_NOT_BUILT: "the request's access mode is one the unit is built with (UnitConfig.modes)",
    ErrorCode.SWIZZLE_NOT_BUILT: "the tensor map's swizzle is one the unit is built with (UnitConfig.swizzles)",
}


class TmaError(ValueError):
    """A broken validation rule.

    Attributes
    ----------
    code : ErrorCode
        The stable code the RTL reports for the same rule.
    field : str
        The field (with its index) that breaks the rule, e.g. ``"global_strides[1]"``.
    value : object
        The value given.
    detail : str
        What is wrong with it, e.g. ``"is not a multiple of 16"``.
    """

    def __init__(self, code: ErrorCode, field: str, value, detail: str):
        self.code = ErrorCode(code)
        self.field = field
        self.value = value
        self.detail = detail
        super().__init__(f"{self.code.name}: {field} = {value} {detail}")

    @property
    def message(self) -> str:
        return str(self)


def shown(value) -> str:
    """A value given in the wrong form as a message shows it: its ``repr`` (so a string
    keeps its quotes and reads apart from a number), cut to one short line."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
