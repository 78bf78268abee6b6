"""The golden model of the TMA address-generation and swizzle unit.

The semantics of PTX section 5.5 and the driver's tensor-map rules in plain Python and
numpy, written from the spec text and independent of the RTL, so that it can catch an RTL
bug. It imports nothing from ``tma_unit.rtl`` or ``tma_unit.sim``.

Read it in the order a request flows: :mod:`.types` and :mod:`.errors` (the tables),
:mod:`.tensormap` (the descriptor and its rules), :mod:`.layout` (its 128-byte image),
:mod:`.request`, :mod:`.traversal` (which elements, from where, to where), :mod:`.swizzle`,
:mod:`.transactions` (the chunk stream the RTL must emit) and :mod:`.copy` (functional
load, store, reduce, prefetch); then :mod:`.memory` (what a copy asks of the memory: its
L2 requests, shared-memory wavefronts, a memory with latency and credits).
"""

from .errors import ErrorCode, TmaError, RULES
from .types import *  # noqa: F401,F403 - the enumerations are the model's vocabulary
from .types import __all__ as _types_all
from .tensormap import TensorMap, encode_tiled, encode_im2col, encode_im2col_wide
from .layout import (DESCRIPTOR_FIELDS, DESCRIPTOR_BYTES, encode_descriptor, decode_descriptor)
from .swizzle import swizzle, swizzle_repeat, smem_alignment
from .request import Request, validate_request
from .traversal import box_elements, row_walk
from .im2col import im2col_pixels, PixelWalk   # registers the im2col row walks
from . import gather as _gather                 # registers the gather4/scatter4 row walks
from .transactions import Transaction, Transactions, transactions, transaction_bytes
from .copy import GlobalMemory, load, store, reduce, prefetch, OOB_NAN_PATTERNS

__all__ = list(_types_all) + [
    "ErrorCode", "TmaError", "RULES", "TensorMap", "encode_tiled", "encode_im2col",
    "encode_im2col_wide", "DESCRIPTOR_FIELDS", "DESCRIPTOR_BYTES", "encode_descriptor",
    "decode_descriptor", "swizzle", "swizzle_repeat", "smem_alignment", "Request",
    "validate_request", "box_elements", "row_walk", "im2col_pixels", "PixelWalk", "Transaction", "Transactions",
    "transactions", "transaction_bytes", "GlobalMemory", "load", "store", "reduce", "prefetch",
    "OOB_NAN_PATTERNS",
]
