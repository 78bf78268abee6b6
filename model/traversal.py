"""Where every element of a request's box comes from and goes to (PTX 5.5.3, 5.5.6, 5.5.7).

A box is walked as *rows*: runs of consecutive units along dimension 0 that land in one
shared-memory row (a row of the tiled box, a pixel of an im2col column, one of the four
rows of gather4). Each access mode only says how many rows there are (:func:`row_count`,
from the map and the request alone, so a box's size is known before any row is built)
and which rows they are and where each starts (:class:`RowWalk`); the rest (the units
along dimension 0, bounds, the dense shared-memory image, the swizzle) is common and
lives here, vectorized over the whole box with numpy.

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

__all__ = ["RowWalk", "BoxElements", "row_walk", "row_count", "box_elements", "tiled_rows", "register_rows"]

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
        The row's tensor coordinates (dimension 0 holds the first unit's), for reports;
        given as a function that builds them, so the hot path never pays for them.
    dim0_start : int
        Coordinate (in values) of the row's first unit along dimension 0.
    dim0_step : int
        Values between consecutive units along dimension 0.
    units : int
        Units per row.
    """
    address: np.ndarray
    in_bounds: np.ndarray
    coords_builder: object
    dim0_start: int
    dim0_step: int
    units: int

    @property
    def rows(self) -> int:
        return len(self.address)

    @property
    def coords(self) -> np.ndarray:
        return self.coords_builder()


@dataclass(frozen=True)
class BoxElements:
    """Every unit of the box (an element; see :class:`~tma_unit.model.types.TypeInfo` for
    the packed types), shape (rows, units per row) in transaction order."""
    global_address: np.ndarray      # uint64
    smem_address: np.ndarray        # int64: absolute, after the swizzle
    in_bounds: np.ndarray           # bool
    row_pitch: int                  # shared-memory bytes per row
    unit_bytes: int                 # shared-memory bytes per unit

    @property
    def shape(self):
        return self.in_bounds.shape

    @property
    def smem_offset(self) -> np.ndarray:
        """Byte offset of each unit in the dense (unswizzled) box image."""
        rows, units = self.shape
        return (np.arange(rows, dtype=np.int64)[:, None] * self.row_pitch
                + np.arange(units, dtype=np.int64)[None, :] * self.unit_bytes)


def tiled_rows(tm: TensorMap, req: Request) -> RowWalk:
    """Rows of a tiled box: every combination of dimensions 1..rank-1, dimension 1 fastest."""
    counts = tm.elements_per_dim()
    steps = tm.effective_element_strides()
    address = np.array(tm.global_address, dtype=U64)
    inside = np.array(True)
    positions = []
    for dim in range(tm.rank - 1, 0, -1):           # dimension rank-1 slowest
        along = req.coordinates[dim] + steps[dim] * np.arange(counts[dim], dtype=np.int64)
        positions.append(along)
        address = np.add.outer(address, along.astype(U64) * U64(tm.global_strides[dim - 1]))
        inside = np.logical_and.outer(inside, (along >= 0) & (along < tm.global_dims[dim]))
    return RowWalk(address.reshape(-1), inside.reshape(-1), _grid_coords(req.coordinates[0], positions),
                   req.coordinates[0], steps[0] * tm.info.values_per_unit,
                   counts[0] // tm.info.values_per_unit)


def _grid_coords(dim0, positions):
    """Row coordinates of a row-major grid over ``positions`` (slowest dimension first),
    built only when a report asks for them."""
    def build():
        grids = np.meshgrid(*positions, indexing="ij") if positions else []
        columns = [np.full(max(1, int(np.prod([len(p) for p in positions]))), dim0, dtype=np.int64)]
        columns += [g.reshape(-1) for g in reversed(grids)]
        return np.stack(columns, axis=1)
    return build


def tiled_row_count(tm: TensorMap, req: Request) -> int:
    """Rows of a tiled box: the product of the elements traversed in dimensions 1..rank-1."""
    return tm.box_rows()


#: The row walk and the row count of each access mode; the im2col and gather4 walks
#: register themselves here.
ROW_WALKS = {AccessMode.TILE: tiled_rows}
ROW_COUNTS = {AccessMode.TILE: tiled_row_count}


def register_rows(mode: AccessMode, walk, count) -> None:
    """Make ``walk(tm, req) -> RowWalk`` the row walk of ``mode``, and ``count(tm, req) ->
    int`` its number of rows, computed without building them."""
    ROW_WALKS[mode] = walk
    ROW_COUNTS[mode] = count


def row_walk(tm: TensorMap, req: Request, validate: bool = True) -> RowWalk:
    """The rows of ``req`` on ``tm``, after checking the request's rules."""
    if validate:
        validate_request(tm, req)
    return ROW_WALKS[req.mode](tm, req)


def row_count(tm: TensorMap, req: Request) -> int:
    """How many rows :func:`row_walk` gives for ``req`` on ``tm`` (a request that keeps
    its rules), from the map's and the request's fields alone: constant time and memory
    however large the box."""
    return ROW_COUNTS[req.mode](tm, req)


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
    # The swizzle reads only address bits >= 7 (swizzle.py), so it moves whole 16-byte
    # chunks: swizzle each chunk's start once and XOR in the unit's place inside the chunk.
    per_chunk = units_per_chunk(tm)
    chunks = -(-walk.units // per_chunk)
    base = 0 if req.operation == Operation.PREFETCH else req.smem_address
    chunk_start = (base + np.arange(walk.rows, dtype=np.int64)[:, None] * pitch
                   + np.arange(0, chunks * CHUNK_BYTES, CHUNK_BYTES, dtype=np.int64)[None, :])
    smem_address = np.repeat(swizzle(chunk_start, tm.swizzle).reshape(-1), per_chunk)
    if per_chunk > 1:
        smem_address ^= np.tile(np.arange(per_chunk, dtype=np.int64) * info.unit_smem_bytes,
                                walk.rows * chunks)
    smem_address = smem_address.reshape(walk.rows, chunks * per_chunk)
    if chunks * per_chunk != walk.units:
        smem_address = smem_address[:, :walk.units]
    return BoxElements(global_address, smem_address, in_bounds, pitch, info.unit_smem_bytes)


def units_per_chunk(tm: TensorMap) -> int:
    """Units one 16-byte shared-memory chunk holds."""
    return CHUNK_BYTES // tm.info.unit_smem_bytes
