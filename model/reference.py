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
    if req.mode == AccessMode.TILE:
        rows = _tiled_rows(tm, req)
    elif req.mode in (AccessMode.GATHER4, AccessMode.SCATTER4):
        rows = [[row] for row in req.coordinates[1:5]]
    elif req.mode == AccessMode.IM2COL:
        rows = _im2col_rows(tm, req)
    else:
        rows = _wide_rows(tm, req)
    return [(coords, all(0 <= c < tm.global_dims[d + 1] for d, c in enumerate(coords)))
            for coords in rows]


def _tiled_rows(tm, req):
    rank = tm.rank
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
        rows.append([req.coordinates[d + 1] + index[d] * strides[d + 1] for d in range(rank - 1)])
    return rows


def _im2col_rows(tm, req):
    """PTX 5.5.4 as docs/spec.md, "The im2col walk", reads it: an odometer over the
    filter-base positions, W fastest, each spatial digit restarting at its lower corner
    once it reaches dim + upper corner, the last restart stepping N."""
    spatial = tm.rank - 2
    position = [req.coordinates[1 + i] for i in range(spatial)]
    n = req.coordinates[tm.rank - 1]
    loading = req.operation in (Operation.LOAD, Operation.PREFETCH)
    offsets = list(req.im2col_offsets) if loading else [0] * spatial
    rows = []
    for _ in range(tm.pixels_per_column):
        rows.append([position[i] + offsets[i] for i in range(spatial)] + [n])
        i = 0
        while True:
            if i == spatial:
                n += 1
                break
            position[i] += tm.element_strides[i + 1]
            if position[i] < tm.global_dims[i + 1] + tm.upper_corner[i]:
                break
            position[i] = tm.lower_corner[i]
            i += 1
    return rows


def _wide_rows(tm, req):
    """PTX 5.5.5: W alone walks (from the request's W, restarting at lower W and stepping
    N at the end of the range), wOffset shifting W and both corners; each group of main
    pixels is followed by wHalo pixels continuing its last W."""
    step = tm.element_strides[1]
    w = req.coordinates[1] + req.w_offset
    lower = tm.lower_corner[0] + req.w_offset
    end = tm.global_dims[1] + tm.upper_corner[0] + req.w_offset
    n = req.coordinates[tm.rank - 1]
    fixed = list(req.coordinates[2:tm.rank - 1])          # H, D
    if req.mode == AccessMode.IM2COL_W:
        groups, group = 1, tm.pixels_per_column
    else:
        groups, group = 4, 32
    rows = []
    for _ in range(groups):
        for _ in range(group):
            rows.append([w] + fixed + [n])
            last_w, last_n = w, n
            w += step
            if w >= end:
                w = lower
                n += 1
        for j in range(1, req.w_halo + 1):
            rows.append([last_w + j * step] + fixed + [last_n])
    return rows


def reference_elements(tm: TensorMap, req: Request):
    """Every unit as (global address mod 2^64, absolute swizzled smem address, in bounds),
    row by row, in transaction order."""
    validate_request(tm, req)
    info = tm.info
    step0 = 1
    if req.mode == AccessMode.TILE and tm.interleave != Interleave.NONE and not info.packed:
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
