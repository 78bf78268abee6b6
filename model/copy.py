"""Functional copies: load, store, reduce and prefetch on byte arrays (PTX 5.5.3.3, 5.5.1.1;
docs/spec.md, "Boxes and out-of-bounds elements" and "Sub-byte types").

Global memory is a :class:`GlobalMemory` (a byte array placed at a base address); shared
memory is a numpy ``uint8`` array indexed by shared-memory address. Loads fill
out-of-bounds elements with zero or the OOB-NaN pattern of :data:`OOB_NAN_PATTERNS`;
stores and reductions skip them (a project decision, docs/decisions.md). Padding bytes of
the padded sub-byte types are left untouched and reported as don't-care.
"""

from dataclasses import dataclass

import numpy as np

from .errors import ErrorCode, TmaError, shown
from .request import Request, check_arguments, validate_request
from .tensormap import TensorMap
from .traversal import box_elements, row_count, row_walk
from .transactions import transaction_bytes
from .types import DataType, OobFill, Operation, ReduceOp

__all__ = ["GlobalMemory", "LoadResult", "load", "store", "reduce", "prefetch",
           "OOB_NAN_PATTERNS", "pack_b6", "unpack_b6"]

#: Bit pattern of OOB-NaN per floating-point type. No public text gives it; this project
#: uses the positive quiet NaN with an all-ones payload (docs/decisions.md).
OOB_NAN_PATTERNS = {
    DataType.FLOAT16: 0x7FFF, DataType.BFLOAT16: 0x7FFF,
    DataType.FLOAT32: 0x7FFFFFFF, DataType.FLOAT32_FTZ: 0x7FFFFFFF,
    DataType.TFLOAT32: 0x7FFFFFFF, DataType.TFLOAT32_FTZ: 0x7FFFFFFF,
    DataType.FLOAT64: 0x7FFFFFFFFFFFFFFF,
}


@dataclass
class GlobalMemory:
    """A window of global memory: ``data[i]`` is the byte at address ``base + i``."""
    base: int
    data: np.ndarray

    @classmethod
    def zeros(cls, base: int, size: int) -> "GlobalMemory":
        return cls(base, np.zeros(size, dtype=np.uint8))

    def index(self, addresses: np.ndarray) -> np.ndarray:
        """Indices into ``data`` of byte addresses; an address outside the window is refused
        (ValueError naming the first such address and the window)."""
        offsets = addresses.astype(np.uint64) - np.uint64(self.base)   # wraps below base
        outside = offsets >= len(self.data)
        if outside.any():
            first = int(addresses.reshape(-1)[np.argmax(outside.reshape(-1))])
            raise ValueError(f"gmem = [{self.base:#x}, {self.base + len(self.data):#x}) does not hold global "
                             f"address {first:#x} of the box: the window is too small for the copy")
        return offsets.astype(np.int64)


@dataclass
class LoadResult:
    """What a load did to shared memory."""
    defined: np.ndarray     # bool per shared-memory byte: written with data or fill
    transaction_bytes: int  # the mbarrier credit


def _check_memories(smem, gmem: "GlobalMemory") -> None:
    """FIELD_TYPE unless ``gmem`` is a :class:`GlobalMemory` and ``smem`` and ``gmem.data``
    are one-dimensional numpy arrays of bytes (uint8)."""
    if not isinstance(gmem, GlobalMemory):
        raise TmaError(ErrorCode.FIELD_TYPE, "gmem", shown(gmem), "is not a GlobalMemory")
    for name, array in (("smem", smem), ("gmem.data", gmem.data)):
        if not (isinstance(array, np.ndarray) and array.dtype == np.uint8 and array.ndim == 1):
            raise TmaError(ErrorCode.FIELD_TYPE, name, shown(array), "is not a one-dimensional numpy array of uint8")


def _unit_bytes(tm: TensorMap, req: Request, smem: np.ndarray):
    """Per in-bounds/out-of-bounds unit: global byte addresses (units, gbytes) and shared
    byte addresses (units, sbytes), swizzled byte by byte. A box with more bytes than
    ``smem`` holds is refused before any row is built."""
    validate_request(tm, req)
    info = tm.info
    # every unit has bytes of its own in shared memory, wherever the swizzle puts them
    box_bytes = row_count(tm, req) * tm.inner_row_bytes()
    if box_bytes > len(smem):
        raise TmaError(ErrorCode.SMEM_BOUNDS, "smem_address", hex(req.smem_address),
                       f"needs {box_bytes} bytes for the box, more than the {len(smem)} bytes of shared memory")
    elements = box_elements(tm, req, row_walk(tm, req, validate=False))
    gaddr = elements.global_address.reshape(-1)[:, None] + np.arange(info.unit_global_bytes, dtype=np.uint64)
    # bytes of a unit share its chunk, so each byte's swizzled address is the unit's XOR its index
    saddr = elements.smem_address.reshape(-1)[:, None] ^ np.arange(info.unit_smem_bytes, dtype=np.int64)
    return gaddr, saddr, elements.in_bounds.reshape(-1)


def _fill_bytes(tm: TensorMap) -> np.ndarray:
    info = tm.info
    if tm.oob_fill == OobFill.NAN_REQUEST_ZERO_FMA:
        return np.frombuffer(OOB_NAN_PATTERNS[tm.dtype].to_bytes(info.unit_global_bytes, "little"),
                             dtype=np.uint8)
    return np.zeros(info.unit_global_bytes, dtype=np.uint8)


def load(tm: TensorMap, req: Request, gmem: GlobalMemory, smem: np.ndarray) -> LoadResult:
    """Copy the box from ``gmem`` into ``smem`` (in place), filling out-of-bounds units."""
    _expect(tm, req, Operation.LOAD)
    _check_memories(smem, gmem)
    gaddr, saddr, inside = _unit_bytes(tm, req, smem)
    data_bytes = tm.info.unit_global_bytes          # the rest of a unit in smem is padding
    _check_smem(smem, saddr)
    values = np.empty(gaddr.shape, dtype=np.uint8)
    values[inside] = gmem.data[gmem.index(gaddr[inside])]
    values[~inside] = _fill_bytes(tm)
    smem[saddr[:, :data_bytes]] = values
    defined = np.zeros(len(smem), dtype=bool)
    defined[saddr[:, :data_bytes]] = True
    return LoadResult(defined, transaction_bytes(tm, req))


def _smem_source(tm: TensorMap, smem: np.ndarray, saddr: np.ndarray) -> np.ndarray:
    """The global bytes a store writes per unit, from the unit's shared-memory bytes."""
    raw = smem[saddr]
    if tm.dtype == DataType.U6_ALIGN16B:
        return pack_b6(raw)                         # .b6p2x16: drop the 2 MSBs, pack
    return raw[:, :tm.info.unit_global_bytes]


def store(tm: TensorMap, req: Request, smem: np.ndarray, gmem: GlobalMemory) -> None:
    """Write the in-bounds units of the box from ``smem`` to ``gmem``; skip the rest."""
    _expect(tm, req, Operation.STORE)
    _check_memories(smem, gmem)
    gaddr, saddr, inside = _unit_bytes(tm, req, smem)
    _check_smem(smem, saddr)
    gmem.data[gmem.index(gaddr[inside])] = _smem_source(tm, smem, saddr)[inside]


def prefetch(tm: TensorMap, req: Request) -> np.ndarray:
    """Global byte addresses a prefetch brings to L2: the first byte of each in-bounds unit."""
    _expect(tm, req, Operation.PREFETCH)
    elements = box_elements(tm, req)
    return elements.global_address[elements.in_bounds]


def reduce(tm: TensorMap, req: Request, smem: np.ndarray, gmem: GlobalMemory) -> None:
    """Combine the in-bounds elements of the box into ``gmem`` with ``req.reduce_op``."""
    _expect(tm, req, Operation.REDUCE)
    _check_memories(smem, gmem)
    gaddr, saddr, inside = _unit_bytes(tm, req, smem)
    _check_smem(smem, saddr)
    index = gmem.index(gaddr[inside])
    dtype = np.dtype(tm.info.numpy_dtype)
    old = gmem.data[index].copy().view(dtype).reshape(-1)
    src = smem[saddr[inside]].copy().view(dtype).reshape(-1)
    new = _REDUCERS[req.reduce_op](old, src, tm.dtype)
    gmem.data[index] = new.astype(dtype).view(np.uint8).reshape(index.shape)


def _expect(tm: TensorMap, req: Request, operation: Operation) -> None:
    check_arguments(tm, req)
    if req.operation != operation:
        raise TmaError(ErrorCode.OPERATION_MODE, "operation", req.operation.name,
                       f"is not {operation.name} for this call")


def _check_smem(smem: np.ndarray, saddr: np.ndarray) -> None:
    if saddr.size and (saddr.min() < 0 or saddr.max() >= len(smem)):
        raise TmaError(ErrorCode.SMEM_BOUNDS, "smem_address", hex(int(saddr.min())),
                       f"puts the box past the {len(smem)} bytes of shared memory")


# -- packing of the 6-bit type ---------------------------------------------------------

def pack_b6(values: np.ndarray) -> np.ndarray:
    """.b6p2x16 store: 16 bytes of 6-bit values (LSBs) per row -> 12 packed bytes.

    Value ``i`` occupies bits ``[6i, 6i + 6)`` of the 96-bit little-endian group
    (docs/decisions.md)."""
    v = (values.astype(np.uint8) & 0x3F).reshape(-1, 4, 4)
    out = np.empty(v.shape[:2] + (3,), dtype=np.uint8)
    out[..., 0] = v[..., 0] | (v[..., 1] << 6)
    out[..., 1] = (v[..., 1] >> 2) | (v[..., 2] << 4)
    out[..., 2] = (v[..., 2] >> 4) | (v[..., 3] << 2)
    return out.reshape(values.shape[0], 12)


def unpack_b6(packed: np.ndarray) -> np.ndarray:
    """The inverse of :func:`pack_b6`: 12 packed bytes per row -> 16 six-bit values."""
    b = packed.astype(np.uint8).reshape(-1, 4, 3)
    out = np.empty(b.shape[:2] + (4,), dtype=np.uint8)
    out[..., 0] = b[..., 0] & 0x3F
    out[..., 1] = ((b[..., 0] >> 6) | (b[..., 1] << 2)) & 0x3F
    out[..., 2] = ((b[..., 1] >> 4) | (b[..., 2] << 4)) & 0x3F
    out[..., 3] = b[..., 2] >> 2
    return out.reshape(packed.shape[0], 16)


# -- reductions ------------------------------------------------------------------------

def _bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def _f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """Round to nearest even; NaNs stay quiet NaNs."""
    bits = values.astype(np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return np.where(np.isnan(values), np.uint32(0x7FC0), rounded).astype(np.uint16)


def _arith(op):
    def run(old, src, dtype):
        if dtype == DataType.BFLOAT16:
            return _f32_to_bf16(op(_bf16_to_f32(old), _bf16_to_f32(src)))
        return op(old, src)
    return run


def _inc(old, src, dtype):
    return np.where(old >= src, 0, old + 1).astype(old.dtype)


def _dec(old, src, dtype):
    return np.where((old == 0) | (old > src), src, old - 1).astype(old.dtype)


_REDUCERS = {
    ReduceOp.ADD: _arith(lambda a, b: a + b),
    ReduceOp.MIN: _arith(np.fmin),
    ReduceOp.MAX: _arith(np.fmax),
    ReduceOp.INC: _inc,
    ReduceOp.DEC: _dec,
    ReduceOp.AND: lambda a, b, t: a & b,
    ReduceOp.OR: lambda a, b, t: a | b,
    ReduceOp.XOR: lambda a, b, t: a ^ b,
}
