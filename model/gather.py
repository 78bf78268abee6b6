"""tile::gather4 and tile::scatter4 (PTX 5.5.3.4): four rows of a rank-2 tensor.

The request gives one coordinate along dimension 0 (where each row starts) and four
coordinates along dimension 1 (which rows). Each row is ``box_dims[0]`` elements, as in
tiled mode; the four rows sit one after another in shared memory, in request order.
"""

import numpy as np

from .request import Request
from .tensormap import TensorMap
from .traversal import RowWalk, register_rows
from .types import AccessMode

__all__ = ["GATHER_ROWS"]

GATHER_ROWS = 4
U64 = np.uint64


def _gather_rows(tm: TensorMap, req: Request) -> RowWalk:
    column = req.coordinates[0]
    rows = np.array(req.coordinates[1:1 + GATHER_ROWS], dtype=np.int64)
    address = U64(tm.global_address) + rows.astype(U64) * U64(tm.global_strides[0])
    inside = (rows >= 0) & (rows < tm.global_dims[1])

    def coords():
        return np.stack([np.full(GATHER_ROWS, column, dtype=np.int64), rows], axis=1)

    info = tm.info
    return RowWalk(address, inside, coords, column, info.values_per_unit,
                   tm.box_dims[0] // info.values_per_unit)


def _gather_row_count(tm: TensorMap, req: Request) -> int:
    return GATHER_ROWS


register_rows(AccessMode.GATHER4, _gather_rows, _gather_row_count)
register_rows(AccessMode.SCATTER4, _gather_rows, _gather_row_count)
