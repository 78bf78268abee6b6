"""Out-of-bounds detection (PTX 5.5.3.3): which units of a chunk lie inside the tensor.

A unit is in bounds when every coordinate is: dimensions 1..4 by the chunk's coordinates
(:func:`inside_dimensions`), dimension 0 unit by unit, by the unit's offset from the
chunk's first value (:func:`unit_window`, :func:`unit_bounds`). Negative coordinates and
coordinates past the dimension are both out. An out-of-bounds unit of a load is filled
(zero or NaN), of a store or a reduction skipped: the beat carries the mask and the fill,
and the memory side acts on them.

Each test is cut for the clock (docs/fpga.md, "Clock speed"): a coordinate's compare is
one carry chain, and the per-unit tests are two small compares against a window worked
out once per chunk.
"""

from amaranth.hdl import Cat, Mux, Value

from .arith import less_than
from .pipeline import bundle

__all__ = ["WINDOW", "UnitWindow", "inside_dimensions", "unit_window", "unit_bounds"]

#: More than any unit's offset from its chunk's first value (``u * value_step``: at most
#: 15 x 31): the in-bounds window of a chunk's units is cut off here.
WINDOW = 512


def inside_dimensions(coordinates, dims):
    """A bit per coordinate of dimensions 1..4: ``0 <= coordinate < dim``. Their AND is
    made a stage later, so a compare's carry chain ends in a register."""
    return Cat(~coordinate[-1] & less_than(coordinate, dim) for coordinate, dim in zip(coordinates, dims))


@bundle
class UnitWindow:
    """Where a chunk's units are inside dimension 0 (:func:`unit_window`)."""
    low_all: Value      # every unit is at or past the dimension's start
    low_none: Value     # no unit is
    low: Value          # else: a unit at offset k is, when k > low
    high_none: Value    # no unit is before the dimension's end
    high: Value         # else: a unit at offset k is, when k <= high


def unit_window(first, dim, dim_less_window) -> UnitWindow:
    """Where the units of a chunk whose first value coordinate is ``first`` are inside
    dimension 0 of size ``dim`` (``dim_less_window``: ``dim - WINDOW``, from the job a
    stage before), so that :func:`unit_bounds` tells, for a unit at offset ``k``
    (``0 <= k < WINDOW``), whether ``0 <= first + k < dim``.

    ``first + k >= 0`` is ``k > ~first`` (``~first = -first - 1``): always when
    ``first >= 0``, never when ``~first >= WINDOW``, else a compare of 9 bits.
    ``first + k < dim`` is ``k <= dim + ~first``: never when that is negative, always
    when it is ``WINDOW`` or more, which is the sign of ``dim - WINDOW + ~first``. Each
    takes an inversion or one carry chain and no wide compare behind it, and leaves the
    per-unit test two small compares."""
    bits = (WINDOW - 1).bit_length()
    below = ~first                          # -first - 1
    room = (dim + below).as_signed()        # dim - first - 1
    wide = ~(dim_less_window + below).as_signed()[-1]       # room >= WINDOW
    return UnitWindow(low_all=~first[-1], low_none=first[-1] & (below[bits:] != 0), low=below[:bits],
                      high_none=room[-1], high=Mux(wide, WINDOW - 1, room[:bits]))


def unit_bounds(window: UnitWindow, k):
    """Whether the unit at offset ``k`` is past dimension 0's start, and whether it is
    before its end (:func:`unit_window`)."""
    return (window.low_all | (~window.low_none & less_than(window.low, k)),
            ~window.high_none & ~less_than(window.high, k))
