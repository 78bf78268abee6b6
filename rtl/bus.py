"""Wishbone B4 (classic cycles), the register bus the unit sits behind.

Implemented from the Wishbone B4 specification (OpenCores, 2010): 32-bit data, 8-bit
granularity (``sel`` selects bytes), word addresses on ``adr``, the classic
single-read/write cycle with ``ack`` for a done access and the optional ``err`` for an
access the slave refuses. The unit answers every strobe two cycles later (a descriptor
slot's word four), with exactly one of ``ack`` or ``err``.
"""

from amaranth.hdl import unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["WishboneSignature"]


class WishboneSignature(wiring.Signature):
    """Wishbone B4 classic, as the initiator sees it (flip it for a target).

    Parameters
    ----------
    addr_width : int
        Width of the word address ``adr``.
    """

    def __init__(self, addr_width: int):
        if addr_width < 1:
            raise ValueError(f"addr_width must be at least 1, not {addr_width}")
        self.addr_width = addr_width
        super().__init__({
            "cyc": Out(1), "stb": Out(1), "we": Out(1),
            "adr": Out(unsigned(addr_width)), "dat_w": Out(32), "sel": Out(4),
            "dat_r": In(32), "ack": In(1), "err": In(1),
        })

    def __eq__(self, other):
        return isinstance(other, WishboneSignature) and other.addr_width == self.addr_width

    def __repr__(self):
        return f"WishboneSignature({self.addr_width})"
