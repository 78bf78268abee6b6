"""A copy request (the operands of ``cp.async.bulk.tensor`` and its reduce and prefetch
forms) and the rules a request must keep against its tensor map (docs/spec.md, "Request
rules").
"""

from dataclasses import dataclass

from .errors import ErrorCode, TmaError, shown
from .swizzle import smem_alignment
from .layout import REQUEST_FIELDS
from .tensormap import (TensorMap, PACKED_SWIZZLES, parse_enum, parse_int, parse_ints, fields_to_dict,
                        fields_from_dict)
from .types import (AccessMode, DataType, Im2colWideMode, Interleave, MapKind, Operation,
                    ReduceOp, Swizzle)

__all__ = ["Request", "validate_request", "check_arguments", "REDUCE_TYPES", "IM2COL_OFFSET_RANGES",
           "MAX_W_HALO", "MAX_W_OFFSET"]

INT32_RANGE = (-(1 << 31), (1 << 31) - 1)

#: Element types each reduction accepts (docs/spec.md, "Request rules"). The bitwise ops
#: act on .b32/.b64, which this project reads as the 32- and 64-bit integer types.
_B32 = {DataType.UINT32, DataType.INT32}
_B64 = {DataType.UINT64, DataType.INT64}
REDUCE_TYPES: dict[ReduceOp, set[DataType]] = {
    ReduceOp.ADD: {DataType.UINT32, DataType.INT32, DataType.UINT64, DataType.FLOAT32,
                   DataType.FLOAT16, DataType.BFLOAT16},
    ReduceOp.MIN: {DataType.UINT32, DataType.INT32, DataType.UINT64, DataType.INT64,
                   DataType.FLOAT16, DataType.BFLOAT16},
    ReduceOp.MAX: {DataType.UINT32, DataType.INT32, DataType.UINT64, DataType.INT64,
                   DataType.FLOAT16, DataType.BFLOAT16},
    ReduceOp.INC: {DataType.UINT32},
    ReduceOp.DEC: {DataType.UINT32},
    ReduceOp.AND: _B32 | _B64,
    ReduceOp.OR: _B32 | _B64,
    ReduceOp.XOR: _B32 | _B64,
}

#: Inclusive im2col offset range per tensor rank (PTX 5.5.4.1).
IM2COL_OFFSET_RANGES = {3: (0, (1 << 16) - 1), 4: (0, (1 << 8) - 1), 5: (0, (1 << 5) - 1)}
MAX_W_HALO = {AccessMode.IM2COL_W: 512, AccessMode.IM2COL_W_128: 32}
MAX_W_OFFSET = 32

#: Which access modes exist for which operation (docs/spec.md, "Request rules").
_MODES = {
    Operation.LOAD: {AccessMode.TILE, AccessMode.GATHER4, AccessMode.IM2COL,
                     AccessMode.IM2COL_W, AccessMode.IM2COL_W_128},
    Operation.PREFETCH: {AccessMode.TILE, AccessMode.GATHER4, AccessMode.IM2COL,
                         AccessMode.IM2COL_W, AccessMode.IM2COL_W_128},
    Operation.STORE: {AccessMode.TILE, AccessMode.SCATTER4, AccessMode.IM2COL},
    Operation.REDUCE: {AccessMode.TILE, AccessMode.IM2COL},
}
_MAP_KINDS = {
    AccessMode.TILE: MapKind.TILED, AccessMode.GATHER4: MapKind.TILED,
    AccessMode.SCATTER4: MapKind.TILED, AccessMode.IM2COL: MapKind.IM2COL,
    AccessMode.IM2COL_W: MapKind.IM2COL_WIDE, AccessMode.IM2COL_W_128: MapKind.IM2COL_WIDE,
}


@dataclass(frozen=True)
class Request:
    """One copy request.

    Parameters
    ----------
    operation : Operation
        Load, store, reduce or prefetch.
    coordinates : tuple of int
        Signed 32-bit tensor coordinates, dimension 0 first (``{col, row0..row3}`` for
        gather4/scatter4).
    smem_address : int
        ``dstMem`` (load) or ``srcMem`` (store, reduce): absolute shared-memory byte address.
    mode : AccessMode
        Tile, gather4, scatter4, im2col (im2col_no_offs for stores), im2col::w, ::w::128.
    im2col_offsets : tuple of int
        Im2col loads: offsets ordered W, H, D.
    w_halo, w_offset : int
        im2col::w and ::w::128 loads.
    reduce_op : ReduceOp
        The reduction, for ``Operation.REDUCE``.
    multicast_mask : int
        16-bit CTA mask of a multicast load (0: no multicast).
    request_id : int
        Tag returned with the completion.
    """
    operation: Operation
    coordinates: tuple[int, ...]
    smem_address: int = 0
    mode: AccessMode = AccessMode.TILE
    im2col_offsets: tuple[int, ...] = ()
    w_halo: int = 0
    w_offset: int = 0
    reduce_op: ReduceOp = ReduceOp.ADD
    multicast_mask: int = 0
    request_id: int = 0

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "operation", parse_enum(Operation, self.operation, "operation"))
        set_(self, "mode", parse_enum(AccessMode, self.mode, "mode"))
        set_(self, "reduce_op", parse_enum(ReduceOp, self.reduce_op, "reduce_op"))
        for name in ("coordinates", "im2col_offsets"):
            set_(self, name, parse_ints(getattr(self, name), name))
        for name in ("smem_address", "w_halo", "w_offset", "multicast_mask", "request_id"):
            set_(self, name, parse_int(getattr(self, name), name))

    def to_dict(self) -> dict:
        return fields_to_dict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "Request":
        """A request from :meth:`to_dict`'s fields (JSON-ready: integers, lists, names)."""
        return fields_from_dict(cls, values, "request")


def _fail(code, field_name, value, detail):
    raise TmaError(code, field_name, value, detail)


def check_arguments(tm, req) -> None:
    """FIELD_TYPE unless ``tm`` is a :class:`TensorMap` and ``req`` a :class:`Request`, in
    that order: every function of a copy takes the map first, and a swapped or missing
    argument is named here rather than failing on an attribute deep inside."""
    if isinstance(tm, Request) and isinstance(req, TensorMap):
        raise TmaError(ErrorCode.FIELD_TYPE, "tm", shown(tm), "is a Request: the tensor map comes first, then "
                       "the request")
    if not isinstance(tm, TensorMap):
        raise TmaError(ErrorCode.FIELD_TYPE, "tm", shown(tm), "is not a TensorMap")
    if not isinstance(req, Request):
        raise TmaError(ErrorCode.FIELD_TYPE, "req", shown(req), "is not a Request")


def validate_request(tm: TensorMap, req: Request) -> None:
    """Raise the first rule ``req`` breaks against ``tm`` (docs/spec.md, "Request rules")."""
    check_arguments(tm, req)
    op, mode = req.operation, req.mode
    if mode not in _MODES[op]:
        _fail(ErrorCode.OPERATION_MODE, "mode", mode.name, f"does not exist for {op.name}")
    if _MAP_KINDS[mode] != tm.kind:
        _fail(ErrorCode.MODE_MISMATCH, "mode", mode.name, f"needs a {_MAP_KINDS[mode].name} map, not {tm.kind.name}")
    if mode in (AccessMode.GATHER4, AccessMode.SCATTER4):
        if tm.rank != 2:
            _fail(ErrorCode.GATHER4_MAP, "rank", tm.rank, f"is not 2 for {mode.name}")
        if tm.box_dims[1] != 1:
            _fail(ErrorCode.GATHER4_MAP, "box_dims[1]", tm.box_dims[1], f"is not 1 for {mode.name}")
        if tm.interleave != Interleave.NONE:
            _fail(ErrorCode.GATHER4_MAP, "interleave", tm.interleave.name, f"is not NONE for {mode.name}")
        count = 5
    else:
        count = tm.rank
    if len(req.coordinates) != count:
        _fail(ErrorCode.COORD_COUNT, "coordinates", list(req.coordinates),
              f"has {len(req.coordinates)} entries, not {count}")
    for i, c in enumerate(req.coordinates):
        if not INT32_RANGE[0] <= c <= INT32_RANGE[1]:
            _fail(ErrorCode.COORD_RANGE, f"coordinates[{i}]", c, "is not a signed 32-bit value")
        if op.writes_global and c < 0:
            _fail(ErrorCode.STORE_NEGATIVE_COORD, f"coordinates[{i}]", c, f"is negative in a {op.name}")
    if op != Operation.LOAD and req.multicast_mask:
        _fail(ErrorCode.MULTICAST_DIRECTION, "multicast_mask", hex(req.multicast_mask), f"is set on a {op.name}")
    if not 0 <= req.multicast_mask < (1 << 16):
        _fail(ErrorCode.MULTICAST_DIRECTION, "multicast_mask", hex(req.multicast_mask), "is not a 16-bit CTA mask")

    if tm.swizzle == Swizzle.B128_ATOM_32B_FLIP_8B and (op.writes_global or mode == AccessMode.IM2COL_W):
        _fail(ErrorCode.FLIP_8B_DIRECTION, "swizzle", tm.swizzle.name,
              f"is for the load direction only, and not with im2col::w ({op.name} {mode.name})")
    if tm.swizzle == Swizzle.B96 and mode == AccessMode.IM2COL_W_128:
        _fail(ErrorCode.SWIZZLE_96B, "swizzle", tm.swizzle.name, "is not allowed with im2col::w::128")
    info = tm.info
    if tm.dtype in PACKED_SWIZZLES:
        direction = "load" if op in (Operation.LOAD, Operation.PREFETCH) else "store"
        if tm.swizzle not in PACKED_SWIZZLES[tm.dtype][direction]:
            _fail(ErrorCode.PACKED_DIRECTION, "swizzle", tm.swizzle.name,
                  f"is not allowed for a {op.name} of {tm.dtype.name}")
    if info.packed and req.coordinates[0] % 128:
        _fail(ErrorCode.PACKED_COORD, "coordinates[0]", req.coordinates[0],
              f"is not a multiple of 128 for {tm.dtype.name}")
    if op == Operation.REDUCE and tm.dtype not in REDUCE_TYPES[req.reduce_op]:
        _fail(ErrorCode.REDUCE_TYPE, "reduce_op", req.reduce_op.name, f"is not defined for {tm.dtype.name}")
    _check_width(req, _PAYLOAD["smem_address"])     # before its alignment: -0x80 is out of range, not aligned
    if op != Operation.PREFETCH:
        align = smem_alignment(tm.swizzle)
        if req.smem_address % align:
            _fail(ErrorCode.SMEM_ALIGN, "smem_address", hex(req.smem_address),
                  f"is not a multiple of {align} for swizzle {tm.swizzle.name}")

    if mode == AccessMode.IM2COL:
        if op == Operation.LOAD or op == Operation.PREFETCH:
            expected = tm.rank - 2
            if len(req.im2col_offsets) != expected:
                _fail(ErrorCode.COORD_COUNT, "im2col_offsets", list(req.im2col_offsets),
                      f"has {len(req.im2col_offsets)} entries, not {expected}")
            low, high = IM2COL_OFFSET_RANGES[tm.rank]
            for i, value in enumerate(req.im2col_offsets):
                if not low <= value <= high:
                    _fail(ErrorCode.IM2COL_OFFSET_RANGE, f"im2col_offsets[{i}]", value,
                          f"is outside [{low}, {high}] for rank {tm.rank}")
        else:
            if req.im2col_offsets:
                _fail(ErrorCode.COORD_COUNT, "im2col_offsets", list(req.im2col_offsets),
                      "is not empty in an im2col_no_offs store")
            for i, (lo, up) in enumerate(zip(tm.lower_corner, tm.upper_corner)):
                if lo < 0:
                    _fail(ErrorCode.IM2COL_STORE_CORNER, f"lower_corner[{i}]", lo, "is negative in an im2col store")
                if up > 0:
                    _fail(ErrorCode.IM2COL_STORE_CORNER, f"upper_corner[{i}]", up, "is positive in an im2col store")
    if mode in (AccessMode.IM2COL_W, AccessMode.IM2COL_W_128):
        expected_wide = Im2colWideMode.W if mode == AccessMode.IM2COL_W else Im2colWideMode.W128
        if tm.wide_mode != expected_wide:
            _fail(ErrorCode.MODE_MISMATCH, "mode", mode.name, f"needs wide mode {expected_wide.name}, not {tm.wide_mode.name}")
        if not 0 <= req.w_halo < MAX_W_HALO[mode]:
            _fail(ErrorCode.WHALO_RANGE, "w_halo", req.w_halo, f"is outside [0, {MAX_W_HALO[mode]}) for {mode.name}")
        if not 0 <= req.w_offset < MAX_W_OFFSET:
            _fail(ErrorCode.WOFFSET_RANGE, "w_offset", req.w_offset, f"is outside [0, {MAX_W_OFFSET})")

    # Last, what no rule above bounds (the request id, offsets a mode does not read) must
    # still fit the payload, or the hardware would be given other values than the model.
    for f in _PAYLOAD.values():
        _check_width(req, f)


#: The request payload's fields that a Request holds (all but the slot).
_PAYLOAD = {f.name: f for f in REQUEST_FIELDS if f.name in Request.__dataclass_fields__}


def _check_width(req: Request, f) -> None:
    """FIELD_WIDTH unless ``req``'s value of payload field ``f`` fits it."""
    low, high = (-(1 << (f.width - 1)), (1 << (f.width - 1)) - 1) if f.signed else (0, (1 << f.width) - 1)
    show = hex if f.name == "smem_address" else str
    value = getattr(req, f.name)
    if f.count == 1:
        entries = [(f.name, value)]
    else:
        if len(value) > f.count:
            _fail(ErrorCode.FIELD_WIDTH, f.name, list(value), f"has {len(value)} entries; the request holds {f.count}")
        entries = [(f"{f.name}[{i}]", v) for i, v in enumerate(value)]
    for name, v in entries:
        if not low <= v <= high:
            _fail(ErrorCode.FIELD_WIDTH, name, show(v),
                  f"does not fit the request's {f.width}-bit field ({low}..{show(high)})")
