"""A copy as the ordered stream of 16-byte chunk transactions the hardware moves.

This stream is the contract with the RTL: the unit must emit these transactions, in this
order, field for field. The order is defined here, once (docs/transactions.md):

* rows in the order of the access mode's row walk (tiled: the dense box order, dimension 1
  fastest, then 2, 3, 4; im2col: pixels in walk order; gather4: the four rows in request
  order);
* within a row, chunks from the row's start, each covering the next 16 bytes of the
  shared-memory row (its units: 16 / unit bytes of them; the last chunk of a row may hold
  fewer when interleave leaves the row short of a whole chunk).

Each transaction names the global address of its first unit, the global bytes its units
occupy (16; 8 or 12 for the padded sub-byte types; fewer in a short last chunk), the byte
distance between consecutive units in global memory (``element_pitch``: the unit size,
times the dimension-0 element stride with interleave), the absolute shared-memory address
after the swizzle (8 past a 16-byte boundary where the 8B-flip atomicity swaps the halves:
byte ``i`` of the chunk lands at ``smem & ~15 | (smem + i) & 15``), one in-bounds bit per
unit, and the fill of out-of-bounds units on a load.
"""

from dataclasses import dataclass

import numpy as np

from .request import Request, validate_request
from .tensormap import TensorMap
from .traversal import box_elements, row_count, row_walk, units_per_chunk
from .types import CHUNK_BYTES, OobFill, Operation

__all__ = ["Transaction", "Transactions", "transactions", "transaction_bytes", "FILL_NONE",
           "FILL_ZERO", "FILL_NAN"]

#: Fill kinds of a transaction: what its out-of-bounds units become.
FILL_NONE = 0       # store, reduce, prefetch: OOB units are skipped
FILL_ZERO = 1
FILL_NAN = 2


@dataclass(frozen=True)
class Transaction:
    """One 16-byte chunk moved between global and shared memory."""
    global_address: int
    global_length: int
    element_pitch: int
    smem_address: int
    mask: int
    units: int
    fill: int
    last: bool


@dataclass(frozen=True)
class Transactions:
    """The transaction stream of one request, as parallel numpy arrays."""
    global_address: np.ndarray  # uint64
    global_length: np.ndarray   # int64
    element_pitch: int
    smem_address: np.ndarray    # int64
    mask: np.ndarray            # int64, bit u = unit u of the chunk is in bounds
    units: np.ndarray           # int64, units in the chunk
    fill: int
    chunk_units: int            # units a whole chunk holds

    def __len__(self) -> int:
        return len(self.global_address)

    def __getitem__(self, i: int) -> Transaction:
        return Transaction(int(self.global_address[i]), int(self.global_length[i]),
                           self.element_pitch, int(self.smem_address[i]), int(self.mask[i]),
                           int(self.units[i]), self.fill, i == len(self) - 1)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def transactions(tm: TensorMap, req: Request) -> Transactions:
    """The ordered chunk transactions of ``req`` on ``tm`` (validating the request)."""
    walk = row_walk(tm, req)
    elements = box_elements(tm, req, walk)
    info = tm.info
    per_chunk = units_per_chunk(tm)
    rows, units = elements.shape
    chunks = -(-units // per_chunk)
    padded = chunks * per_chunk
    present = np.zeros((rows, padded), dtype=bool)
    present[:, :units] = True
    in_bounds = np.zeros((rows, padded), dtype=bool)
    in_bounds[:, :units] = elements.in_bounds
    weights = (np.int64(1) << np.arange(per_chunk, dtype=np.int64))
    mask = (in_bounds.reshape(rows, chunks, per_chunk) * weights).sum(axis=2).reshape(-1)
    count = present.reshape(rows, chunks, per_chunk).sum(axis=2).reshape(-1)
    first = np.arange(chunks) * per_chunk
    global_address = elements.global_address[:, first].reshape(-1)
    smem_address = elements.smem_address[:, first].reshape(-1)
    if req.operation == Operation.PREFETCH:
        smem_address = np.zeros_like(smem_address)
    if req.operation == Operation.LOAD:
        fill = FILL_NAN if tm.oob_fill == OobFill.NAN_REQUEST_ZERO_FMA else FILL_ZERO
    else:
        fill = FILL_NONE
    pitch = info.unit_global_bytes * walk.dim0_step // info.values_per_unit
    return Transactions(global_address, count * info.unit_global_bytes, pitch, smem_address,
                        mask, count, fill, per_chunk)


def transaction_bytes(tm: TensorMap, req: Request) -> int:
    """The mbarrier transaction count of a load (validating the request): every
    shared-memory byte the box fills, out-of-bounds and padding bytes included
    (docs/decisions.md). Computed from the fields, without building the box's rows, so
    that the unit's SMEM_BOUNDS check costs the same for any box (model/unit.py)."""
    validate_request(tm, req)
    return row_count(tm, req) * tm.row_pitch()
