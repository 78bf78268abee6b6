"""Step addressing (``UnitConfig.addressing == "step"``): a beat's row address is the
last beat's plus a delta, and the products an address needs are made once per job, at
its set-up in the front end, by a few DSP blocks the lanes share (docs/addressing.md).

A chunk's address is ``base + sum(coordinate[i] * stride[i]) + dim-0 offset`` (PTX 5.5.3,
modulo 2^address_width). The datapath still adds the dimension-0 offset (shifts and adds);
what the step replaces is the sum over dimensions 1..4, the *row address*:

* **Tiled.** Dimension i's coordinate is ``start[i] + digit[i] * e[i]`` (``e``: the
  element stride), so the row address is ``A0 + sum(digit[i] * S[i])`` with ``S[i] =
  e[i] * stride[i]`` and ``A0`` the box's first row. When the odometer steps by the
  ``k`` of a beat (the digits of 1), digit i becomes ``x + k[i] + c[i-1] - R[i] * c[i]`` (``c``:
  the carries, ``R``: the radices), so the row address moves by ``K + sum(c[i] * T[i])``
  over the carries out of digits 0..3, with ``K = sum(k[i] * S[i])``, ``T[0] = S[1]`` and
  ``T[i] = S[i+1] - R[i] * S[i]``: job constants. The walk starts at ``A0``; a beat's
  step is 1 (digit 0 counts a row's beats), so ``k`` is the digits of 1.
* **Gather4.** A row's address is one of four, ``base + row[r] * stride[1]``, picked by
  digit 1.
* **The im2col modes.** The pixel walk keeps, beside each position, its part of the
  address (``position[i] * stride[i]``): a move adds ``traversal stride * stride[i]``, a
  restart loads ``low[i] * stride[i]``, and the halo pixels add theirs beside dimension
  1's. Dimension 4 (N, never restarting) carries the base. The row address is the sum of
  the five parts, which the datapath adds.

The set-up's products: ``coordinate[i] * stride`` (dimensions 1..4; gather4: each row by
stride[1]), ``offset[i] * stride[i]`` and ``lower corner[i] * stride[i]`` (the im2col
offsets, spatial dimensions 1..3) and ``R[i] * S[i]`` (i = 1..3): 18x18 pieces in DSP
blocks whose registers are the front end's stages 4 and 5 (5 and 6 for ``R * S``), their
sums one adder level a stage, finished in stage 10 beside the step's offset ``K``.
"""

from amaranth.hdl import Mux, Cat, Value

from ..model.config import UnitConfig
from ..model.tensormap import MAX_RANK
from .arith import add_pairs, partial_products, small_product, sum_terms, carry_save_sum
from .decode import STRIDE_ZERO_BITS
from .layouts import CARRIES, SPATIAL, PIXEL_DIMENSIONS, PIXEL_PARTS
from .pipeline import Delayed, bundle

__all__ = ["row_term_count", "StepSums", "launch", "launch_wraps", "level", "job_fields", "pixel_job_fields",
           "carry_terms", "row_terms"]


def row_term_count(config: UnitConfig) -> int:
    """Terms of a beat's row address on the walk: the stepped address, or, where an
    im2col mode is built, the pixel walk's five parts."""
    return PIXEL_PARTS if config.builds_im2col_family else 1


@bundle
class StepSums:
    """The set-up's sums, each a list of terms that one adder level a stage reduces."""
    tiled: list         # base + sum(start[i] * stride[i])
    gather: list        # per row: base + row * stride[1]
    pixel_start: list   # per dimension 1..4: (start + offset) * stride, dimension 4 plus base
    pixel_low: list     # per spatial dimension: (lower corner + offset) * stride
    wraps: list         # per dimension 1..3: R[i] * S[i] (from stage 5 on)
    element: list       # S[i] = e[i] * stride[i], dimensions 1..4 (values)
    pixel_step: list    # per dimension 1..4: a move's step (values)


def _strides(d):
    """The strides of dimensions 1..4, 0 past the rank (so a coordinate there adds nothing)."""
    return [Mux(d.in_rank[i], d.strides[i - 1], 0) for i in range(1, MAX_RANK)]


def launch(product, d, req, kinds, offsets, walk_strides, config: UnitConfig) -> StepSums:
    """The set-up's products, from a stage's registered decode (``d``), request and mode
    bits; ``product``: the stage's DSP blocks (:meth:`.pipeline.Stage.product`);
    ``offsets``: the pixel walk's offsets per spatial dimension; ``walk_strides``: its
    traversal strides per dimension 1..4."""
    width = config.address_width
    strides = _strides(d)
    base = Cat(d.global_address, 0).as_signed()
    coordinates = [req.coordinates[i] for i in range(1, MAX_RANK)]
    gather = config.builds("gather4")
    # one product per dimension serves every mode: gather4's rows all take stride[1]
    by_stride = [partial_products(c, Mux(kinds.gather, strides[0], s) if gather else s, width, product, STRIDE_ZERO_BITS)
                 for c, s in zip(coordinates, strides)]
    pixel = config.builds_im2col_family
    shifted = ([partial_products(o, s, width, product, STRIDE_ZERO_BITS) for o, s in zip(offsets, strides)] if pixel else [])
    corners = ([partial_products(d.lower_corner[i], s, width, product, STRIDE_ZERO_BITS) for i, s in enumerate(strides[:SPATIAL])]
               if pixel else [])
    element = [small_product(d.element_strides[i], s)[:width] for i, s in enumerate(strides, 1)]
    return StepSums(
        tiled=[base] + sum(by_stride, []),
        gather=[[base] + terms for terms in by_stride] if gather else [],
        pixel_start=([by_stride[i] + (shifted[i] if i < SPATIAL else [base]) for i in range(PIXEL_DIMENSIONS)]
                     if pixel else []),
        pixel_low=[corners[i] + shifted[i] for i in range(SPATIAL)] if pixel else [],
        wraps=[],
        element=element,
        pixel_step=[small_product(k, s)[:width] for k, s in zip(walk_strides, strides)] if pixel else [])


def launch_wraps(product, counts, sums: StepSums, config: UnitConfig) -> StepSums:
    """``sums`` with the products ``R[i] * S[i]`` (i = 1..3; a tiled radix is the
    elements traversed, ``counts``) launched in the stage of ``product``."""
    wraps = [partial_products(Value.cast(counts[i])[:9], sums.element[i - 1], config.address_width, product)
             for i in range(1, CARRIES)]
    return StepSums(**{**vars(sums), "wraps": wraps})


def level(sums: StepSums, width: int) -> StepSums:
    """One adder level of every sum."""
    def one(terms):
        if terms and isinstance(terms[0], list):
            return [one(t) for t in terms]
        if any(isinstance(t, Delayed) for t in terms):     # a product on its way
            return terms
        return add_pairs(terms, width)
    return StepSums(**{name: (one(value) if name not in ("element", "pixel_step") else value)
                       for name, value in vars(sums).items()})


def _total(terms, width):
    return sum_terms(terms, width)[:width]


def job_fields(m, address, sums: StepSums, step_digits, config: UnitConfig) -> list:
    """Assignments that set a job's step constants (``address_layout``) from the sums
    (their last adder level) and the step's digits: ``K = sum(k[i] * S[i])`` (the digits
    of 1: a bit each, so a choice of ``S[i]``, summed by carry-save adders of ``m``)."""
    width = config.address_width
    terms = [Mux(Value.cast(digit)[0], s, 0)[:width] for digit, s in zip(step_digits[1:], sums.element)]
    out = [address.start.eq(_total(sums.tiled, width)),
           address.step.eq(carry_save_sum(m, terms, width, "step_offset"))]
    s = sums.element
    out += [address.carry[0].eq(s[0])]
    out += [address.carry[i].eq(s[i] - _total(sums.wraps[i - 1], width)) for i in range(1, CARRIES)]
    if config.builds("gather4"):
        out += [address.gather[r].eq(_total(terms, width)) for r, terms in enumerate(sums.gather)]
    return out


def pixel_job_fields(walk, sums: StepSums, config: UnitConfig) -> list:
    """Assignments that set the pixel walk's address fields (:func:`pixel_address_layout`)."""
    width = config.address_width
    return ([walk.address_start[i].eq(_total(terms, width)) for i, terms in enumerate(sums.pixel_start)]
            + [walk.address_low[i].eq(_total(terms, width)) for i, terms in enumerate(sums.pixel_low)]
            + [walk.address_step[i].eq(step) for i, step in enumerate(sums.pixel_step)])


def carry_terms(address, pattern, first, config: UnitConfig) -> list:
    """The terms of a beat's step: ``K`` plus the deltas of the carries in ``pattern``
    (a bit per carry out of digits 0..3), or none on a job's first beat (``first``)."""
    width = config.address_width
    return ([Mux(first, 0, address.step)[:width]]
            + [Mux(pattern[i], address.carry[i], 0)[:width] for i in range(CARRIES)])


def row_terms(stepped, parts, pixel_mode) -> list:
    """A beat's row-address terms on the walk (:func:`row_term_count`): the stepped
    address, or in a pixel mode the pixel walk's parts (``parts``, none where no im2col
    mode is built)."""
    if not parts:
        return [stepped]
    return [Mux(pixel_mode, parts[0], stepped)] + [Mux(pixel_mode, part, 0) for part in parts[1:]]
