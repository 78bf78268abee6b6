"""Where every element of a request's box comes from and goes to (PTX 5.5.3, 5.5.6, 5.5.7).

A box is walked as *rows*: runs of consecutive units along dimension 0 that land in one
shared-memory row (a row of the tiled box, a pixel of an im2col column, one of the four
rows of gather4). Each access mode only says which rows there are and where each starts
(:class:`RowWalk`); the rest (the units along dimension 0, bounds, the dense shared-memory
image, the swizzle) is common and lives here, vectorized over the whole box with numpy.

Global addresses are computed modulo 2^64 (uint64 arithmetic wraps), so the address of an
out-of-bounds element at a negative coordinate is the two's-complement value the address
adder produces; only in-bounds elements are ever accessed.
"""

from dataclasses import dataclass

import numpy as np

from .request import Request, validate_request
from .swizzle import swizzle
from .tensormap import TensorMap
from .types import AccessMode, CHUNK_BYTES, Operation

__all__ = ["RowWalk", "BoxElements", "row_walk", "box_elements", "tiled_rows", "register_rows"]

U64 = np.uint64


@dataclass(frozen=True)
class RowWalk:
    """The rows of one request, in transaction order.

    Attributes
    ----------
    address : ndarray of uint64, shape (rows,)
        Global byte address of the row's dimension-0 coordinate 0 (base plus the offsets of
        every other dimension); the dimension-0 offset is added per unit.
    in_bounds : ndarray of bool, shape (rows,)
        Every coordinate of the row other than dimension 0 is inside the tensor.
    coords : ndarray of int64, shape (rows, rank)
        The row's tensor coordinates (dimension 0 holds the first unit's), for reports.
    dim0_start : int
        Coordinate (in values) of the row's first unit along dimension 0.
    dim0_step : int
        Values between consecutive units along dimension 0.
    units : int
        Units per row.
    """
    address: np.ndarray
    in_bounds: np.ndarray
    coords: np.ndarray
    dim0_start: int
    dim0_step: int
    units: int

    @property
    def rows(self) -> int:
        return len(self.address)


@dataclass(frozen=True)
class BoxElements:
    """Every unit of the box (an element; see :class:`~tma_unit.model.types.TypeInfo` for
    the packed types), shape (rows, units per row) in transaction order."""
    global_address: np.ndarray      # uint64
    smem_offset: np.ndarray         # int64: byte offset in the dense box image
    smem_address: np.ndarray        # int64: absolute, after the swizzle
    in_bounds: np.ndarray           # bool
    row_pitch: int                  # shared-memory bytes per row

    @property
    def shape(self):
        return self.in_bounds.shape


def _dim_offsets(tm: TensorMap, coord: int, count: int, step: int, dim: int):
    """Coordinates, in-bounds flags and byte offsets of ``count`` positions along ``dim``."""
    positions = coord + step * np.arange(count, dtype=np.int64)
    inside = (positions >= 0) & (positions < tm.global_dims[dim])
    stride = tm.global_strides[dim - 1]
    return positions, inside, positions.astype(U64) * U64(stride)


def tiled_rows(tm: TensorMap, req: Request) -> RowWalk:
    """Rows of a tiled box: every combination of dimensions 1..rank-1, dimension 1 fastest."""
    counts = tm.elements_per_dim()
    steps = tm.effective_element_strides()
    rank = tm.rank
    outer = list(range(rank - 1, 0, -1))           # dimension rank-1 slowest
    shape = [counts[d] for d in outer]
    address = np.full(shape, U64(tm.global_address), dtype=U64)
    inside = np.ones(shape, dtype=bool)
    coords = np.zeros(shape + [rank], dtype=np.int64)
    coords[..., 0] = req.coordinates[0]
    for axis, dim in enumerate(outer):
        positions, ok, offsets = _dim_offsets(tm, req.coordinates[dim], counts[dim], steps[dim], dim)
        view = [1] * len(outer)
        view[axis] = counts[dim]
        address = address + offsets.reshape(view)
        inside = inside & ok.reshape(view)
        coords[..., dim] = positions.reshape(view)
    return RowWalk(address.reshape(-1), inside.reshape(-1), coords.reshape(-1, rank),
                   req.coordinates[0], steps[0] * tm.info.values_per_unit,
                   counts[0] // tm.info.values_per_unit)


#: The row walk of each access mode; the im2col and gather4 walks register themselves here.
ROW_WALKS = {AccessMode.TILE: tiled_rows}


def register_rows(mode: AccessMode, walk) -> None:
    """Make ``walk(tm, req) -> RowWalk`` the row walk of ``mode``."""
    ROW_WALKS[mode] = walk


def row_walk(tm: TensorMap, req: Request, validate: bool = True) -> RowWalk:
    """The rows of ``req`` on ``tm``, after checking the request's rules."""
    if validate:
        validate_request(tm, req)
    return ROW_WALKS[req.mode](tm, req)


def box_elements(tm: TensorMap, req: Request, walk: RowWalk | None = None) -> BoxElements:
    """Every unit's global address, shared-memory address and bounds, vectorized."""
    walk = walk or row_walk(tm, req)
    info = tm.info
    pitch = tm.row_pitch()
    k = np.arange(walk.units, dtype=np.int64)
    values = walk.dim0_start + k * walk.dim0_step
    dim0_inside = (values >= 0) & (values < tm.global_dims[0])
    dim0_offset = (values // info.values_per_unit * info.unit_global_bytes).astype(U64)
    global_address = walk.address[:, None] + dim0_offset[None, :]
    in_bounds = walk.in_bounds[:, None] & dim0_inside[None, :]
    smem_offset = (np.arange(walk.rows, dtype=np.int64)[:, None] * pitch
                   + k[None, :] * info.unit_smem_bytes)
    base = 0 if req.operation == Operation.PREFETCH else req.smem_address
    smem_address = swizzle(smem_offset + base, tm.swizzle)
    return BoxElements(global_address, smem_offset, smem_address, in_bounds, pitch)


def units_per_chunk(tm: TensorMap) -> int:
    return CHUNK_BYTES // tm.info.unit_smem_bytes
