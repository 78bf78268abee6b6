"""Slow, obviously-correct per-element loops: the reference the vectorized model is tested
and benchmarked against. Plain Python, one element at a time, written straight from the
spec text (PTX 5.5.3: the box starts at the request's coordinates and steps by the
traversal stride; 5.5.3.3: anything outside [0, dim) is out of bounds; 5.5.7: the swizzle
acts on the absolute shared-memory address). Not for production use.
"""

from .request import Request, validate_request
from .swizzle import swizzle
from .tensormap import TensorMap
from .types import AccessMode, CHUNK_BYTES, Interleave, Operation

__all__ = ["reference_elements", "reference_rows"]


def _ceil_div(a, b):
    return -(-a // b)


def reference_rows(tm: TensorMap, req: Request):
    """Rows of the box as (coordinates of dims 1.., in bounds) in transaction order."""
    rank = tm.rank
    if req.mode != AccessMode.TILE:
        raise NotImplementedError(req.mode)
    strides = list(tm.element_strides)
    counts = [_ceil_div(tm.box_dims[d], strides[d]) for d in range(rank)]
    outer_counts = counts[1:]
    total = 1
    for n in outer_counts:
        total *= n
    rows = []
    for linear in range(total):
        # dimension 1 varies fastest
        index = []
        rest = linear
        for n in outer_counts:
            index.append(rest % n)
            rest //= n
        coords = [req.coordinates[d + 1] + index[d] * strides[d + 1] for d in range(rank - 1)]
        inside = all(0 <= c < tm.global_dims[d + 1] for d, c in enumerate(coords))
        rows.append((coords, inside))
    return rows


def reference_elements(tm: TensorMap, req: Request):
    """Every unit as (global address mod 2^64, absolute swizzled smem address, in bounds),
    row by row, in transaction order."""
    validate_request(tm, req)
    info = tm.info
    step0 = 1
    if tm.interleave != Interleave.NONE and not info.packed:
        step0 = tm.element_strides[0]
    if tm.is_im2col:
        values0 = tm.channels_per_pixel
    else:
        values0 = _ceil_div(tm.box_dims[0], step0)
    units = values0 // info.values_per_unit
    row_bytes = units * info.unit_smem_bytes
    pitch = _ceil_div(row_bytes, CHUNK_BYTES) * CHUNK_BYTES
    base = 0 if req.operation == Operation.PREFETCH else req.smem_address
    out = []
    for r, (coords, row_inside) in enumerate(reference_rows(tm, req)):
        row_address = tm.global_address
        for d, c in enumerate(coords):
            row_address += c * tm.global_strides[d]
        for k in range(units):
            value = req.coordinates[0] + k * step0 * info.values_per_unit
            inside = row_inside and 0 <= value < tm.global_dims[0]
            address = row_address + (value // info.values_per_unit) * info.unit_global_bytes
            smem = swizzle(base + r * pitch + k * info.unit_smem_bytes, tm.swizzle)
            out.append((address % (1 << 64), smem, inside))
    return out
