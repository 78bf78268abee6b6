"""Shared-memory bank conflicts seen by the consumers of a copy's image: why the swizzle
exists (PTX 5.5.7: "for access performance reasons").

Shared memory has 32 banks of 4 bytes; a warp's access takes as many wavefronts as the
largest number of distinct 4-byte words any one bank must serve. Two consumers of a tile
of 128-byte rows are modelled:

* row reads: a warp reads one 128-byte row (32 threads x 4 bytes);
* column reads: 8 rows x 16 bytes at the same logical column, as ``ldmatrix`` and the
  tensor-core shared-memory descriptors read an 8 x 8 block of 16-bit elements.

Addresses come from the golden model's traversal, so the analysis holds for any copy.
"""

import numpy as np

from .request import Request
from .tensormap import TensorMap
from .traversal import box_elements, units_per_chunk

__all__ = ["BANKS", "BANK_BYTES", "wavefronts", "chunk_addresses", "conflicts"]

BANKS = 32
BANK_BYTES = 4


def wavefronts(byte_addresses) -> int:
    """Wavefronts one warp access needs: the most distinct words any bank serves."""
    words = np.unique(np.asarray(byte_addresses, dtype=np.int64) // BANK_BYTES)
    return int(np.bincount(words % BANKS, minlength=BANKS).max())


def chunk_addresses(tm: TensorMap, req: Request) -> np.ndarray:
    """Shared-memory address of each 16-byte chunk, shape (rows, chunks per row), in the
    copy's logical order."""
    elements = box_elements(tm, req)
    per_chunk = units_per_chunk(tm)
    return elements.smem_address[:, ::per_chunk] & ~np.int64(15)


def conflicts(tm: TensorMap, req: Request) -> dict:
    """Average wavefronts of row reads and of 8-row column reads over the image (1 is
    conflict-free, 8 is eight-way)."""
    chunks = chunk_addresses(tm, req)
    rows, columns = chunks.shape
    row_reads = [wavefronts((chunks[r][:, None] + np.arange(0, 16, 4)).reshape(-1)) for r in range(rows)]
    column_reads = []
    for top in range(0, rows - rows % 8, 8):
        for c in range(columns):
            column_reads.append(wavefronts((chunks[top:top + 8, c][:, None] + np.arange(0, 16, 4)).reshape(-1)))
    return {"row": float(np.mean(row_reads)), "column": float(np.mean(column_reads)) if column_reads else 0.0}
