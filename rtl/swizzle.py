"""The XOR swizzle of PTX section 5.5.7 on absolute shared-memory addresses, written from
the address-bit formulas of docs/spec.md, "Swizzle" (the golden model's
``model/swizzle.py`` is the independent reference the tests hold it to).
"""

from amaranth.hdl import Cat, Mux

from ..model.types import Swizzle

__all__ = ["swizzle_address"]


def swizzle_address(address, swizzle, built=tuple(Swizzle)):
    """The physical address of ``address`` (a 16-byte-aligned chunk start) under the
    driver swizzle value ``swizzle`` (``CUtensorMapSwizzle``, 96B as 7). Bit 7 picks the
    128-byte line; the 8B flip moves a chunk's start 8 bytes on odd lines. ``built``: the
    swizzles the unit serves (``UnitConfig.built_swizzles``); the others, refused before
    a beat is made, get no logic."""
    a = address
    line = a[7:10]
    b32 = Cat(a[:4], a[4] ^ line[0], a[5:])
    b64 = Cat(a[:4], a[4:6] ^ line[:2], a[6:])
    b128 = Cat(a[:4], a[4:7] ^ line, a[7:])
    atom32 = Cat(a[:5], a[5:7] ^ line[:2], a[7:])
    flip = Cat(a[:3], a[3] ^ line[0], a[4], a[5:7] ^ line[:2], a[7:])
    atom64 = Cat(a[:6], a[6] ^ line[0], a[7:])
    out = a
    for value, swizzled in ((Swizzle.B32, b32), (Swizzle.B96, b32), (Swizzle.B64, b64),
                            (Swizzle.B128, b128), (Swizzle.B128_ATOM_32B, atom32),
                            (Swizzle.B128_ATOM_32B_FLIP_8B, flip), (Swizzle.B128_ATOM_64B, atom64)):
        if value in built:
            out = Mux(swizzle == value, swizzled, out)
    return out
