"""The tensor map (PTX section 5.5.8) and its validation (docs/spec.md, "Tensor-map rules").

A :class:`TensorMap` holds every field the three driver encoders take
(``cuTensorMapEncodeTiled``, ``cuTensorMapEncodeIm2col``, ``cuTensorMapEncodeIm2colWide``).
It validates itself on construction, so a map that exists is legal: a failed construction
raises :class:`~tma_unit.model.errors.TmaError` and leaves nothing behind. The functions
:func:`encode_tiled`, :func:`encode_im2col` and :func:`encode_im2col_wide` take the
driver's arguments in the driver's order, so a CUDA user can paste a call.

Array order follows the driver: index 0 is the innermost (contiguous) dimension. Im2col
corners are indexed the same way as the dimensions they bound: ``lower_corner[0]`` is W
(tensor dimension 1), then H, then D.
"""

import numbers
import re
from collections.abc import Mapping, Set as AbstractSet
from dataclasses import MISSING, dataclass, fields
from functools import cached_property
from enum import IntEnum

from .errors import ErrorCode, TmaError, shown
from .types import (DataType, Interleave, Swizzle, SwizzleMode, SwizzleAtomicity,
                    L2Promotion, OobFill, Im2colWideMode, MapKind, TypeInfo, type_info,
                    CHUNK_BYTES)

__all__ = ["TensorMap", "encode_tiled", "encode_im2col", "encode_im2col_wide", "dense_strides",
           "fields_to_dict", "fields_from_dict",
           "parse_enum", "parse_int", "parse_ints", "MAX_RANK", "CORNER_RANGES"]

MAX_RANK = 5
MAX_DIM = 1 << 32
STRIDE_LIMIT = 1 << 40
MAX_BOX = 256
MAX_ELEMENT_STRIDE = 8
MAX_CHANNELS = 256
MAX_PIXELS = 1024
W128_PIXELS = 128   # im2col::w::128 always walks 128 pixels (PTX 5.5.5)

#: Inclusive im2col corner range per tensor rank (PTX section 5.5.4.1; cuda.h).
CORNER_RANGES = {3: (-(1 << 15), (1 << 15) - 1), 4: (-(1 << 7), (1 << 7) - 1),
                 5: (-(1 << 4), (1 << 4) - 1)}
WIDE_CORNER_RANGE = (-(1 << 15), (1 << 15) - 1)

#: Swizzles the ALIGN16B packed types allow, per direction (cuda.h); im2col-wide drops NONE.
PACKED_SWIZZLES = {
    DataType.U6_ALIGN16B: {"load": {Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_32B},
                           "store": {Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_32B,
                                     Swizzle.B128_ATOM_64B}},
    DataType.U4_ALIGN16B: {"load": {Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_32B},
                           "store": set()},
}
WIDE_SWIZZLES = {Swizzle.B64, Swizzle.B128, Swizzle.B128_ATOM_32B}


_PACKED_NAMES = {"16U4_ALIGN8B": "U4_ALIGN8B", "16U4_ALIGN16B": "U4_ALIGN16B",
                 "16U6_ALIGN16B": "U6_ALIGN16B"}


def parse_enum(cls: type[IntEnum], value, field_name: str):
    """Turn an int, an enum member or a name into a member of ``cls``.

    Names may carry the driver's prefix (``"CU_TENSOR_MAP_SWIZZLE_128B"``) and are matched
    without regard to case; ``"128B"`` finds ``B128``. Anything else breaks ENUM_RANGE.
    """
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        key = value.upper()
        for prefix in ("CU_TENSOR_MAP_DATA_TYPE_", "CU_TENSOR_MAP_INTERLEAVE_",
                       "CU_TENSOR_MAP_SWIZZLE_", "CU_TENSOR_MAP_L2_PROMOTION_",
                       "CU_TENSOR_MAP_FLOAT_OOB_FILL_", "CU_TENSOR_MAP_IM2COL_WIDE_MODE_"):
            key = key.removeprefix(prefix)
        key = _PACKED_NAMES.get(key, key)
        match = re.fullmatch(r"(\d+)B(.*)", key)        # "128B_ATOM_32B" -> "B128_ATOM_32B"
        if match:
            key = f"B{match[1]}{match[2]}"
        if key in cls.__members__:
            return cls[key]
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        try:
            return cls(int(value))
        except ValueError:
            pass
    raise TmaError(ErrorCode.ENUM_RANGE, field_name, shown(value),
                   f"is not a {cls.__name__} (one of {', '.join(cls.__members__)})")


def parse_int(value, field_name: str) -> int:
    """``value`` as an int: an int or a numpy integer. A bool, a float (even 1000.0), a
    string (even "0x1000") or None breaks FIELD_TYPE: nothing is truncated or parsed."""
    if type(value) is int:          # the common case, without the slower checks below
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TmaError(ErrorCode.FIELD_TYPE, field_name, shown(value), "is not an integer")
    return int(value)


def parse_ints(values, field_name: str) -> tuple[int, ...]:
    """A list (tuple, numpy array) of integers as a tuple; entry ``i`` is named
    ``field_name[i]``. A string, a mapping, a set or a scalar breaks FIELD_TYPE rather than
    being iterated."""
    if not isinstance(values, (str, bytes, Mapping, AbstractSet)):
        try:
            entries = list(values)
        except TypeError:
            pass
        else:
            if all(type(v) is int for v in entries):      # the common case, no name built per entry
                return tuple(entries)
            return tuple(parse_int(v, f"{field_name}[{i}]") for i, v in enumerate(entries))
    raise TmaError(ErrorCode.FIELD_TYPE, field_name, shown(values), "is not a list of integers")


@dataclass(frozen=True)
class TensorMap:
    """A validated tensor map.

    Parameters
    ----------
    kind : MapKind
        Which encoder built it: tiled, im2col or im2col-wide.
    dtype : DataType
        Element type (driver numbering).
    global_address : int
        Byte address of element 0.
    global_dims : tuple of int
        Elements per dimension (packed types count individual 4/6-bit values).
    global_strides : tuple of int
        Byte stride of dimensions 1..rank-1 (dimension 0 is dense).
    box_dims : tuple of int
        Tiled maps: elements traversed per dimension. Empty for im2col maps.
    element_strides : tuple of int
        Traversal stride per dimension.
    interleave, swizzle, l2_promotion, oob_fill
        The driver enumerations.
    lower_corner, upper_corner : tuple of int
        Im2col maps: W, H, D corners (rank - 2 of them); im2col-wide: the W corner alone.
    channels_per_pixel, pixels_per_column : int
        Im2col maps: elements per pixel along C, pixels per request along NDHW.
    wide_mode : Im2colWideMode
        Im2col-wide maps: W or W128.
    """
    kind: MapKind
    dtype: DataType
    global_address: int
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dims: tuple[int, ...] = ()
    element_strides: tuple[int, ...] = ()
    interleave: Interleave = Interleave.NONE
    swizzle: Swizzle = Swizzle.NONE
    l2_promotion: L2Promotion = L2Promotion.NONE
    oob_fill: OobFill = OobFill.NONE
    lower_corner: tuple[int, ...] = ()
    upper_corner: tuple[int, ...] = ()
    channels_per_pixel: int = 0
    pixels_per_column: int = 0
    wide_mode: Im2colWideMode = Im2colWideMode.W

    def __post_init__(self):
        # Normalise (enums, tuples) first, then check every rule; a broken rule raises
        # before the object is handed out, so no half-built map exists.
        set_ = object.__setattr__
        set_(self, "kind", parse_enum(MapKind, self.kind, "kind"))
        set_(self, "dtype", parse_enum(DataType, self.dtype, "dtype"))
        set_(self, "interleave", parse_enum(Interleave, self.interleave, "interleave"))
        set_(self, "swizzle", parse_enum(Swizzle, self.swizzle, "swizzle"))
        set_(self, "l2_promotion", parse_enum(L2Promotion, self.l2_promotion, "l2_promotion"))
        set_(self, "oob_fill", parse_enum(OobFill, self.oob_fill, "oob_fill"))
        set_(self, "wide_mode", parse_enum(Im2colWideMode, self.wide_mode, "wide_mode"))
        for name in ("global_dims", "global_strides", "box_dims", "element_strides",
                     "lower_corner", "upper_corner"):
            set_(self, name, parse_ints(getattr(self, name), name))
        for name in ("global_address", "channels_per_pixel", "pixels_per_column"):
            set_(self, name, parse_int(getattr(self, name), name))
        if self.kind == MapKind.IM2COL_WIDE and self.wide_mode == Im2colWideMode.W128:
            # The driver ignores pixelsPerColumn in W128 mode: the walk is always 128 pixels.
            set_(self, "pixels_per_column", W128_PIXELS)
        _validate(self)

    # -- derived properties ------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.global_dims)

    @cached_property
    def info(self) -> TypeInfo:
        return type_info(self.dtype)

    @property
    def swizzle_mode(self) -> SwizzleMode:
        return self.swizzle.pair[0]

    @property
    def swizzle_atomicity(self) -> SwizzleAtomicity:
        return self.swizzle.pair[1]

    @property
    def is_im2col(self) -> bool:
        return self.kind != MapKind.TILED

    @cached_property
    def _elements_per_dim(self) -> tuple[int, ...]:
        return tuple(-(-b // s) for b, s in zip(self.box_dims, self.effective_element_strides()))

    def elements_per_dim(self) -> tuple[int, ...]:
        """Tiled maps: elements traversed per dimension, ceil(box / element stride).

        Without interleave, dimension 0 always steps by 1 (PTX 5.5.3.2), so it gets
        ``box_dims[0]`` values.
        """
        return self._elements_per_dim

    def effective_element_strides(self) -> tuple[int, ...]:
        """Element strides as traversed: dimension 0 steps by 1 unless interleaved, and
        always for packed types (docs/decisions.md)."""
        return self._effective_element_strides

    @cached_property
    def _effective_element_strides(self) -> tuple[int, ...]:
        first = self.element_strides[0]
        if self.interleave == Interleave.NONE or self.info.packed:
            first = 1
        return (first,) + self.element_strides[1:]

    def inner_row_bytes(self) -> int:
        """Bytes of data in one shared-memory row of the box (channels of one pixel for im2col)."""
        if self.is_im2col:
            return self.info.smem_bytes(self.channels_per_pixel)
        return self.info.smem_bytes(self.elements_per_dim()[0])

    def row_pitch(self) -> int:
        """Shared-memory bytes between rows: the row rounded up to whole 16-byte chunks."""
        return -(-self.inner_row_bytes() // CHUNK_BYTES) * CHUNK_BYTES

    def box_rows(self) -> int:
        """Tiled maps: shared-memory rows of the box (every dimension but 0)."""
        rows = 1
        for n in self.elements_per_dim()[1:]:
            rows *= n
        return rows

    def box_smem_bytes(self) -> int:
        """Tiled maps: bytes the box occupies in shared memory, padding included."""
        return self.box_rows() * self.row_pitch()

    def replace(self, **changes) -> "TensorMap":
        """A copy with some fields changed, validated like a new one."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return TensorMap(**values)

    def to_dict(self) -> dict:
        """JSON-ready fields (enums by name)."""
        return fields_to_dict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "TensorMap":
        """A tensor map from :meth:`to_dict`'s fields (JSON-ready: integers, lists, names)."""
        return fields_from_dict(cls, values, "tensor_map")


def fields_to_dict(record) -> dict:
    """A frozen dataclass's fields as JSON-ready values (enums by name, tuples as lists)."""
    out = {}
    for f in fields(record):
        value = getattr(record, f.name)
        out[f.name] = value.name if isinstance(value, IntEnum) else (
            list(value) if isinstance(value, tuple) else value)
    return out


def fields_from_dict(cls, values: dict, record: str):
    """``cls(**values)``, refusing anything but a mapping (FIELD_TYPE), a name that is not
    one of its fields (ENUM_RANGE) and a missing field that has no default (FIELD_TYPE).
    ``record`` names the whole, e.g. ``"request"``."""
    what = record.replace("_", "-")
    if not isinstance(values, Mapping):
        raise TmaError(ErrorCode.FIELD_TYPE, record, shown(values), f"is not an object of {what} fields")
    known = {f.name: f for f in fields(cls)}
    unknown = [name for name in values if name not in known]
    if unknown:
        name = min(unknown, key=str)
        raise TmaError(ErrorCode.ENUM_RANGE, name, shown(values[name]), f"is not a {what} field")
    for name, f in known.items():
        if name not in values and f.default is MISSING and f.default_factory is MISSING:
            raise TmaError(ErrorCode.FIELD_TYPE, name, "(not given)", f"is a required {what} field")
    return cls(**values)


def dense_strides(dims, elem_bytes, align=16) -> list[int]:
    """Byte strides of a tensor stored densely, each row padded to ``align`` bytes (the
    strides cuTensorMapEncode* expect for an unpadded array). ``elem_bytes`` may be a
    fraction for the packed types."""
    strides, extent = [], dims[0] * elem_bytes
    for d in dims[1:]:
        stride = int(-(-extent // align) * align)
        strides.append(stride)
        extent = stride * d
    return strides


# -- validation ------------------------------------------------------------------------

def _fail(code, field_name, value, detail):
    raise TmaError(code, field_name, value, detail)


def _validate(tm: TensorMap) -> None:
    info = tm.info
    rank = tm.rank
    low = 1 if tm.kind == MapKind.TILED else 3
    if not low <= rank <= MAX_RANK:
        _fail(ErrorCode.RANK_RANGE, "rank", rank, f"is outside {low}..{MAX_RANK} for a {tm.kind.name} map")
    if tm.interleave != Interleave.NONE and rank < 3:
        _fail(ErrorCode.RANK_INTERLEAVE, "rank", rank, f"is below 3 with interleave {tm.interleave.name}")
    _check_lengths(tm)

    align = 32 if (tm.interleave == Interleave.B32 or info.align16b) else 16
    if not 0 <= tm.global_address < (1 << 64):
        _fail(ErrorCode.ADDRESS_ALIGN, "global_address", hex(tm.global_address), "is not a 64-bit address")
    if tm.global_address % align:
        _fail(ErrorCode.ADDRESS_ALIGN, "global_address", hex(tm.global_address), f"is not a multiple of {align}")

    for i, dim in enumerate(tm.global_dims):
        if not 1 <= dim <= MAX_DIM:
            _fail(ErrorCode.DIM_RANGE, f"global_dims[{i}]", dim, "is outside 1..2^32")
    if info.align16b and tm.global_dims[0] % 128:
        _fail(ErrorCode.DIM_PACKED, "global_dims[0]", tm.global_dims[0], f"is not a multiple of 128 for {tm.dtype.name}")
    if tm.dtype == DataType.U4_ALIGN8B and tm.global_dims[0] % 2:
        _fail(ErrorCode.DIM_PACKED, "global_dims[0]", tm.global_dims[0], "is not even for U4_ALIGN8B")

    extent = info.global_bytes(tm.global_dims[0])
    for i, stride in enumerate(tm.global_strides):
        name = f"global_strides[{i}]"
        if stride % align or stride <= 0:
            _fail(ErrorCode.STRIDE_ALIGN, name, stride, f"is not a multiple of {align}")
        if stride >= STRIDE_LIMIT:
            _fail(ErrorCode.STRIDE_RANGE, name, stride, "is not below 2^40")
        if stride < extent:
            _fail(ErrorCode.STRIDE_EXTENT, name, stride, f"is smaller than the {extent} bytes of dimension {i}")
        extent = stride * tm.global_dims[i + 1]

    for i, es in enumerate(tm.element_strides):
        if not 1 <= es <= MAX_ELEMENT_STRIDE:
            _fail(ErrorCode.ELEMENT_STRIDE_RANGE, f"element_strides[{i}]", es, "is outside 1..8")

    if tm.kind == MapKind.TILED:
        for i, box in enumerate(tm.box_dims):
            if not 1 <= box <= MAX_BOX:
                _fail(ErrorCode.BOX_RANGE, f"box_dims[{i}]", box, "is outside 1..256")
        if info.align16b and tm.box_dims[0] != 128:
            _fail(ErrorCode.BOX_PACKED, "box_dims[0]", tm.box_dims[0], f"is not 128 for {tm.dtype.name}")
        if tm.interleave == Interleave.NONE:
            inner_bits = tm.box_dims[0] * info.bits if not info.padded else tm.box_dims[0] * 8
            if inner_bits % (8 * CHUNK_BYTES):
                _fail(ErrorCode.BOX_INNER_BYTES, "box_dims[0]", tm.box_dims[0],
                      f"gives an inner row of {inner_bits / 8:g} bytes, not a multiple of 16")
        # b4x16 box rows are whole bytes, as its tensor rows are (dim[0] even); without
        # interleave the rule above already asks more (docs/decisions.md)
        if tm.dtype == DataType.U4_ALIGN8B and tm.box_dims[0] % 2:
            _fail(ErrorCode.BOX_PACKED, "box_dims[0]", tm.box_dims[0], "is not even for U4_ALIGN8B")
    else:
        _validate_im2col(tm)

    _validate_swizzle(tm)

    if tm.oob_fill == OobFill.NAN_REQUEST_ZERO_FMA and (not info.is_float or info.packed):
        _fail(ErrorCode.OOB_NAN_TYPE, "oob_fill", tm.oob_fill.name, f"is not allowed for {tm.dtype.name}")


def _check_lengths(tm: TensorMap) -> None:
    rank = tm.rank
    expected = {"global_strides": rank - 1, "element_strides": rank}
    if tm.kind == MapKind.TILED:
        expected["box_dims"] = rank
    elif tm.kind == MapKind.IM2COL:
        expected["lower_corner"] = expected["upper_corner"] = rank - 2
    else:
        expected["lower_corner"] = expected["upper_corner"] = 1
    for name in ("box_dims", "lower_corner", "upper_corner"):
        expected.setdefault(name, 0)
    for name, count in expected.items():
        got = len(getattr(tm, name))
        if got != count:
            _fail(ErrorCode.ARRAY_LENGTH, name, list(getattr(tm, name)),
                  f"has {got} entries, not the {count} a rank-{rank} {tm.kind.name} map needs")


def _validate_im2col(tm: TensorMap) -> None:
    info = tm.info
    if tm.kind == MapKind.IM2COL:
        low, high = CORNER_RANGES[tm.rank]
    else:
        low, high = WIDE_CORNER_RANGE
    for name in ("lower_corner", "upper_corner"):
        for i, value in enumerate(getattr(tm, name)):
            if not low <= value <= high:
                _fail(ErrorCode.CORNER_RANGE, f"{name}[{i}]", value,
                      f"is outside [{low}, {high}] for a rank-{tm.rank} {tm.kind.name} map")
    # The filter-base positions run over [lower, dim + upper) in each of W, H, D
    # (docs/spec.md, "The im2col walk"); an empty range in any of them is a box of zero
    # area.
    for i, (lo, up) in enumerate(zip(tm.lower_corner, tm.upper_corner)):
        if tm.global_dims[i + 1] + up - lo <= 0:
            _fail(ErrorCode.CORNER_AREA, f"upper_corner[{i}]", up,
                  f"with lower_corner[{i}] = {lo} and global_dims[{i + 1}] = {tm.global_dims[i + 1]} leaves no pixel")
    if not 1 <= tm.channels_per_pixel <= MAX_CHANNELS:
        _fail(ErrorCode.CHANNELS_RANGE, "channels_per_pixel", tm.channels_per_pixel, "is outside 1..256")
    if info.align16b and tm.channels_per_pixel != 128:
        _fail(ErrorCode.CHANNELS_RANGE, "channels_per_pixel", tm.channels_per_pixel, f"is not 128 for {tm.dtype.name}")
    if tm.interleave == Interleave.NONE and (tm.channels_per_pixel * info.bits) % (8 * CHUNK_BYTES) and not info.padded:
        _fail(ErrorCode.BOX_INNER_BYTES, "channels_per_pixel", tm.channels_per_pixel,
              f"gives an inner row of {tm.channels_per_pixel * info.bits / 8:g} bytes, not a multiple of 16")
    if tm.dtype == DataType.U4_ALIGN8B and tm.channels_per_pixel % 2:
        _fail(ErrorCode.CHANNELS_RANGE, "channels_per_pixel", tm.channels_per_pixel, "is not even for U4_ALIGN8B")
    if not 1 <= tm.pixels_per_column <= MAX_PIXELS:
        _fail(ErrorCode.PIXELS_RANGE, "pixels_per_column", tm.pixels_per_column, "is outside 1..1024")
    if tm.kind == MapKind.IM2COL_WIDE:
        if tm.interleave != Interleave.NONE:
            _fail(ErrorCode.WIDE_INTERLEAVE, "interleave", tm.interleave.name, "is not NONE for an im2col-wide map")
        if tm.swizzle not in WIDE_SWIZZLES:
            _fail(ErrorCode.WIDE_SWIZZLE, "swizzle", tm.swizzle.name, "is not 64B, 128B or 128B_ATOM_32B for an im2col-wide map")


def _validate_swizzle(tm: TensorMap) -> None:
    info = tm.info
    inner = tm.inner_row_bytes()
    if tm.interleave == Interleave.B32 and tm.swizzle != Swizzle.B32:
        _fail(ErrorCode.INTERLEAVE_SWIZZLE, "swizzle", tm.swizzle.name, "is not 32B with interleave B32")
    if tm.dtype == DataType.U6_ALIGN16B and tm.interleave != Interleave.NONE:
        _fail(ErrorCode.PACKED_INTERLEAVE, "interleave", tm.interleave.name, "is not NONE for U6_ALIGN16B")
    if tm.swizzle == Swizzle.B96:
        if tm.interleave != Interleave.NONE:
            _fail(ErrorCode.SWIZZLE_96B, "interleave", tm.interleave.name, "is not NONE with the 96B swizzle")
    if tm.interleave == Interleave.NONE and tm.swizzle != Swizzle.NONE and inner > tm.swizzle.span:
        field_name = "channels_per_pixel" if tm.is_im2col else "box_dims[0]"
        value = tm.channels_per_pixel if tm.is_im2col else tm.box_dims[0]
        _fail(ErrorCode.SWIZZLE_SPAN, field_name, value,
              f"gives an inner row of {inner} bytes, wider than the {tm.swizzle.span}-byte span of swizzle {tm.swizzle.name}")
    if info.align16b:
        allowed = PACKED_SWIZZLES[tm.dtype]["load"] | PACKED_SWIZZLES[tm.dtype]["store"]
        if tm.kind == MapKind.IM2COL_WIDE:
            allowed = allowed - {Swizzle.NONE}
        if tm.swizzle not in allowed:
            _fail(ErrorCode.PACKED_SWIZZLE, "swizzle", tm.swizzle.name,
                  f"is not one of {', '.join(s.name for s in sorted(allowed))} for {tm.dtype.name}")


# -- the driver's encoders ---------------------------------------------------------------
#
# The driver reads the first ``tensorRank`` entries of each array argument; these take
# lists of exactly that many (a longer one is refused, ARRAY_LENGTH: nothing is guessed at).
# Each argument is checked for its kind first (an int rank, lists of integers), so a
# string is refused, never read character by character.

def encode_tiled(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, boxDim,
                 elementStrides, interleave=Interleave.NONE, swizzle=Swizzle.NONE,
                 l2Promotion=L2Promotion.NONE, oobFill=OobFill.NONE) -> TensorMap:
    """``cuTensorMapEncodeTiled``, argument for argument (the map itself is returned)."""
    rank = _rank_argument(tensorRank, globalDim)
    return TensorMap(MapKind.TILED, tensorDataType, globalAddress, _head(globalDim, "global_dims", rank),
                     _head(globalStrides, "global_strides", rank - 1), _head(boxDim, "box_dims", rank),
                     _head(elementStrides, "element_strides", rank), interleave, swizzle, l2Promotion, oobFill)


def encode_im2col(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                  pixelBoxLowerCorner, pixelBoxUpperCorner, channelsPerPixel, pixelsPerColumn,
                  elementStrides, interleave=Interleave.NONE, swizzle=Swizzle.NONE,
                  l2Promotion=L2Promotion.NONE, oobFill=OobFill.NONE) -> TensorMap:
    """``cuTensorMapEncodeIm2col``, argument for argument. Corners are ordered W, H, D."""
    rank = _rank_argument(tensorRank, globalDim)
    corners = max(rank - 2, 0)
    return TensorMap(MapKind.IM2COL, tensorDataType, globalAddress, _head(globalDim, "global_dims", rank),
                     _head(globalStrides, "global_strides", rank - 1), (),
                     _head(elementStrides, "element_strides", rank), interleave, swizzle, l2Promotion, oobFill,
                     _head(pixelBoxLowerCorner, "lower_corner", corners),
                     _head(pixelBoxUpperCorner, "upper_corner", corners), channelsPerPixel, pixelsPerColumn)


def encode_im2col_wide(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                       pixelBoxLowerCornerWidth, pixelBoxUpperCornerWidth, channelsPerPixel,
                       pixelsPerColumn, elementStrides, interleave=Interleave.NONE,
                       mode=Im2colWideMode.W, swizzle=Swizzle.B128, l2Promotion=L2Promotion.NONE,
                       oobFill=OobFill.NONE) -> TensorMap:
    """``cuTensorMapEncodeIm2colWide``, argument for argument."""
    rank = _rank_argument(tensorRank, globalDim)
    return TensorMap(MapKind.IM2COL_WIDE, tensorDataType, globalAddress, _head(globalDim, "global_dims", rank),
                     _head(globalStrides, "global_strides", rank - 1), (),
                     _head(elementStrides, "element_strides", rank), interleave, swizzle, l2Promotion, oobFill,
                     (pixelBoxLowerCornerWidth,), (pixelBoxUpperCornerWidth,),
                     channelsPerPixel, pixelsPerColumn, mode)


def _rank_argument(rank, dims) -> int:
    rank = parse_int(rank, "rank")
    if not 1 <= rank <= MAX_RANK:
        raise TmaError(ErrorCode.RANK_RANGE, "rank", rank, f"is outside 1..{MAX_RANK}")
    dims = parse_ints(dims, "global_dims")
    if len(dims) < rank:
        raise TmaError(ErrorCode.ARRAY_LENGTH, "global_dims", list(dims), f"has fewer than {rank} entries")
    return rank


def _head(values, field_name: str, count: int) -> tuple:
    """An array argument, which must be a list of integers; a shorter one is kept whole,
    for the map to name its length (ARRAY_LENGTH), and a longer one is refused the same
    way: an entry past the rank is a mistake about the rank, not a value to drop."""
    entries = parse_ints(values, field_name)
    if len(entries) > max(count, 0):
        raise TmaError(ErrorCode.ARRAY_LENGTH, field_name, list(entries),
                       f"has {len(entries)} entries, more than the {max(count, 0)} tensorRank gives")
    return entries
