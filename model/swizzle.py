"""The XOR swizzle of PTX section 5.5.7, as address-bit formulas (docs/spec.md, "Swizzle").

The swizzle is applied to the absolute shared-memory byte address an element would have in
the dense box image. Applying it to the absolute address (not to the offset inside the box)
is what the section's "swizzle base offset" tables describe: when ``dstMem`` is not aligned
to the pattern's repeat, the pattern starts at phase ``(dstMem / 128) % rows``.
"""

import numbers

import numpy as np

from .errors import ErrorCode, TmaError, shown
from .tensormap import parse_enum
from .types import Swizzle

__all__ = ["SWIZZLE_XORS", "swizzle", "swizzle_repeat", "smem_alignment"]

#: Per mode, the XOR terms ``(dst_lsb, width, src_lsb)``: bits
#: ``[dst_lsb, dst_lsb + width)`` of the address are XORed with bits
#: ``[src_lsb, src_lsb + width)``. Bit 7 selects the 128-byte shared-memory line.
SWIZZLE_XORS: dict[Swizzle, tuple[tuple[int, int, int], ...]] = {
    Swizzle.NONE: (),
    Swizzle.B32: ((4, 1, 7),),                    # CuTe Swizzle<1,4,3>
    Swizzle.B64: ((4, 2, 7),),                    # Swizzle<2,4,3>
    Swizzle.B128: ((4, 3, 7),),                   # Swizzle<3,4,3>
    Swizzle.B128_ATOM_32B: ((5, 2, 7),),          # Swizzle<2,5,2>
    Swizzle.B128_ATOM_32B_FLIP_8B: ((5, 2, 7), (3, 1, 7)),   # and swap 8-byte halves on odd lines
    Swizzle.B128_ATOM_64B: ((6, 1, 7),),          # Swizzle<1,6,1>
    Swizzle.B96: ((4, 1, 7),),                    # same table as 32B (PTX 5.5.7); unconfirmed
}

# Every XOR source lies at bit 4 or above, so the swizzle never reads the byte offset inside
# a 16-byte chunk: swizzle(a) == swizzle(a & ~15) ^ (a & 15). The traversal relies on it.
assert all(src >= 4 for terms in SWIZZLE_XORS.values() for _, _, src in terms)


def swizzle(address, mode: Swizzle):
    """The physical shared-memory address of ``address`` (an int or an integer array).

    ``mode`` is a :class:`Swizzle`, its number or its name (``"B128"``, ``"128B"``,
    ``"CU_TENSOR_MAP_SWIZZLE_128B"``), as the encoders take it. A negative address breaks
    FIELD_WIDTH; a float, a bool, a string, a list or a float array breaks FIELD_TYPE.
    Other objects with the integer operators (an Amaranth value, in the formal proofs)
    pass through unchecked.
    """
    _check_address(address)
    out = address
    for dst, width, src in SWIZZLE_XORS[parse_enum(Swizzle, mode, "swizzle")]:
        mask = (1 << width) - 1
        if isinstance(address, np.ndarray):
            out = out ^ (((address >> address.dtype.type(src)) & address.dtype.type(mask))
                         << address.dtype.type(dst))
        else:
            out = out ^ (((address >> src) & mask) << dst)
    return out


def _check_address(address) -> None:
    if isinstance(address, np.ndarray):
        if address.dtype.kind not in "iu":
            raise TmaError(ErrorCode.FIELD_TYPE, "address", f"an array of {address.dtype}",
                           "is not an array of integers")
        negative = address.dtype.kind == "i" and address.size and address.min() < 0
    elif isinstance(address, numbers.Integral) and not isinstance(address, (bool, np.bool_)):
        negative = address < 0
    elif isinstance(address, (numbers.Number, np.generic, str, bytes, list, tuple, type(None))):
        raise TmaError(ErrorCode.FIELD_TYPE, "address", shown(address), "is not an integer or an array of integers")
    else:
        return
    if negative:
        value = address if not isinstance(address, np.ndarray) else address.min()
        raise TmaError(ErrorCode.FIELD_WIDTH, "address", hex(int(value)),
                       "is negative: a shared-memory address is 0 or more")


def swizzle_repeat(mode: Swizzle) -> int:
    """Bytes after which the pattern repeats (PTX "starting address of the repeating pattern")."""
    terms = SWIZZLE_XORS[parse_enum(Swizzle, mode, "swizzle")]
    if not terms:
        return 1
    return 1 << max(src + width for _, width, src in terms)


def smem_alignment(mode: Swizzle) -> int:
    """Alignment this project requires of ``dstMem`` (docs/decisions.md): 16 bytes without a
    swizzle; the atom size for the 32B/64B atomicities (PTX 5.5.7 "requires 32/64 byte
    alignment"); one 128-byte line for the 16B-atomicity swizzles, whose base offset PTX
    counts in lines."""
    return {Swizzle.NONE: 16, Swizzle.B128_ATOM_32B: 32, Swizzle.B128_ATOM_32B_FLIP_8B: 32,
            Swizzle.B128_ATOM_64B: 64}.get(parse_enum(Swizzle, mode, "swizzle"), 128)
