"""Decoding a snapshotted tensor map into the quantities the unit works with.

From the descriptor's stored fields (docs/descriptor.md) this builds, as combinational
logic, what PTX section 5.5 and the driver define (docs/spec.md, "Tensor-map rules"):
the rank, the element type's sizes (section 5.5.1, sub-byte types 5.5.1.1), the
dimensions and strides in their natural units, the elements traversed per dimension
(``ceil(box / element stride)``, 5.5.3.2), the shared-memory row of the box and its
pitch, and the box's row count.

It comes in four layers (:func:`decode_fields`, :func:`decode_counts`,
:func:`decode_rows`, :func:`decode_row_bytes`) and a few bits before them
(:func:`decode_early`), each taking the namespace the one before it returned and adding
to it, each at most one carry chain, one small shifter or
one 18x18 multiply deep, so that the front end registers the namespace between them.

The element-type table is spec data (model/types.py ``TYPE_INFO``) and is read from
there; everything else is computed here, independently of the golden model.
"""

from types import SimpleNamespace

from amaranth.hdl import Array, Const, Mux, Cat

from ..model.tensormap import CORNER_RANGES
from ..model.types import TYPE_INFO, Interleave, MapKind, SwizzleMode, Swizzle
from .arith import ceil_div_operands, reciprocal_quotient, sparse_product, outside_field_range

__all__ = ["decode_early", "decode_fields", "decode_counts", "decode_rows", "decode_row_bytes", "type_table",
           "swizzle_value", "rank_is", "rank_above", "UNIT_BYTES", "TYPE_BITS"]

#: The sizes the unit multiplies by, from the type table: a unit's bytes in global memory
#: and an element's bits (:func:`.arith.sparse_product`).
UNIT_BYTES = sorted({info.unit_global_bytes for info in TYPE_INFO.values()})
TYPE_BITS = sorted({info.bits for info in TYPE_INFO.values()})


def type_table(attribute, width):
    """A 16-entry lookup of a TYPE_INFO attribute indexed by the PTX element-type code."""
    by_code = {info.ptx_code: info for info in TYPE_INFO.values()}
    return Array(Const(int(getattr(by_code[code], attribute)), width) for code in range(16))


def _log2_table(attribute):
    by_code = {info.ptx_code: info for info in TYPE_INFO.values()}
    return Array(Const(getattr(by_code[code], attribute).bit_length() - 1, 3) for code in range(16))


def swizzle_value(d):
    """The driver's ``CUtensorMapSwizzle`` number of the stored (mode, atomicity) pair
    (96B as 7), for rules written in its terms."""
    mode, atom = d.swizzle_mode, d.swizzle_atomicity
    return Mux(mode == SwizzleMode.B96, Swizzle.B96,
               Mux(mode == SwizzleMode.B128, Swizzle.B128 + atom, mode))


def rank_is(d, rank: int):
    """Whether the decoded descriptor ``d``'s rank is ``rank`` (one of its rank bits)."""
    return d.rank_bits[rank - 1] if 1 <= rank <= len(d.rank_bits) else Const(0, 1)


def rank_above(d, k: int):
    """Whether ``d``'s rank is above ``k`` (one of its rank bits)."""
    return d.rank_above_bits[k] if 0 <= k < len(d.rank_above_bits) else Const(int(k < 0), 1)


def decode_early(desc):
    """Layer 0, a few bits the front end registers beside the snapshot, because the
    elements-traversed factors (layer 1) need them on the way into a DSP block: the
    rank's compares with constants, from the stored field (rank - 1), so that nothing
    adds or subtracts before them (:func:`rank_is`, :func:`rank_above`), and whether
    dimension 0 steps by its element stride (only with interleave, PTX 5.5.3.2; never
    for packed types), which reads the type table."""
    tiled = desc.kind == MapKind.TILED
    return SimpleNamespace(
        rank_bits=[desc.rank == rank - 1 for rank in range(1, 9)],
        rank_above_bits=[Const(1, 1)] + [desc.rank >= k for k in range(1, 8)],
        steps0=tiled & (desc.interleave_layout != Interleave.NONE) & ~type_table("packed", 1)[desc.elemtype])


def decode_fields(desc, early, product):
    """Layer 1: the stored fields in natural units, the type table's sizes; the elements
    traversed per dimension, multiplied in DSP blocks whose registers stand for the next
    two stages' (``product``: :meth:`.pipeline.Stage.product`). ``early``: layer 0 of
    the same descriptor (:func:`decode_early`), a stage before."""
    d = SimpleNamespace()
    code = desc.elemtype
    # the rank is 1..8 as stored (rank - 1); above 5 is an error
    d.rank_bits, d.rank_above_bits = early.rank_bits, early.rank_above_bits
    d.kind = desc.kind
    d.tiled = desc.kind == MapKind.TILED
    d.im2col = desc.kind == MapKind.IM2COL
    d.wide = desc.kind == MapKind.IM2COL_WIDE
    d.code = code
    d.bits = type_table("bits", 7)[code]
    d.values_per_unit_log2 = _log2_table("values_per_unit")[code]
    d.unit_global_bytes = type_table("unit_global_bytes", 5)[code]
    d.unit_smem_bytes_log2 = _log2_table("unit_smem_bytes")[code]
    d.units_per_chunk_log2 = (4 - d.unit_smem_bytes_log2)[:3]           # units in 16 bytes
    d.is_float = type_table("is_float", 1)[code]
    d.packed = type_table("packed", 1)[code]
    d.padded = type_table("padded", 1)[code]
    d.interleave = desc.interleave_layout
    d.swizzle_mode = desc.swizzle_mode
    d.swizzle_atomicity = desc.swizzle_atomicity
    d.swizzle = swizzle_value(d)
    d.fill_nan = desc.fill_mode

    d.dims = [desc.global_dim[i] + 1 for i in range(5)]              # 1..2^32
    d.strides = [Cat(Const(0, 4), desc.global_stride[i]) for i in range(4)]   # bytes
    d.box = [desc.box_dim[i] + 1 for i in range(5)]                   # 1..256
    d.element_strides = [desc.element_stride[i] + 1 for i in range(5)]  # 1..8
    d.in_rank = [rank_above(d, i) for i in range(5)]
    d.step0 = Mux(early.steps0, d.element_strides[0], 1)
    # the elements traversed per dimension, ceil(box / element stride), as two factors
    # (1 past the rank: the stored fields taken as 0), so the multiplier's output is the
    # count, with nothing behind it; ready two stages on (layer 3). The factors come from
    # the stored fields (less one), not from the sizes above: no add before the table
    # nor before the numerator's add, on the way into a DSP block (docs/fpga.md)
    d.counts = []
    for i in range(5):
        step_less_one = desc.element_stride[i] if i else Mux(early.steps0, desc.element_stride[0], 0)
        d.counts.append(reciprocal_quotient(*ceil_div_operands(Mux(d.in_rank[i], desc.box_dim[i], 0),
                                                               Mux(d.in_rank[i], step_less_one, 0), 256), product))
    # the dimensions' sizes less one where the rules multiply them, 0 past the rank
    d.dims_used_less_one = [Mux(d.in_rank[i], desc.global_dim[i], 0) for i in range(5)]
    d.channels = desc.channels_per_pixel + 1
    d.pixels = desc.pixels_per_column + 1
    d.global_address = desc.global_address
    d.lower_corner = desc.lower_corner
    d.upper_corner = desc.upper_corner
    d.corner_span = [(desc.upper_corner[i] - desc.lower_corner[i]).as_signed() for i in range(3)]
    d.wide_mode = desc.wide_mode
    return d


def decode_counts(d):
    """Layer 2: products by the type's size (shifts and one adder: :func:`.arith.sparse_product`)."""
    d.dim0_units = d.dims[0] >> d.values_per_unit_log2
    d.box_bits = sparse_product(d.box[0], d.bits, TYPE_BITS)      # the rules take box[0] << 3 for a padded type
    d.channel_bits = sparse_product(d.channels, d.bits, TYPE_BITS)
    # im2col: a dimension's range of positions is dims + upper - lower (CORNER_AREA); the
    # pixel walk restarts at dims + upper - element stride
    d.corner_area = [d.dims[i + 1] + d.corner_span[i] for i in range(3)]
    d.upper_less_stride = [(d.upper_corner[i] - d.element_strides[i + 1]).as_signed() for i in range(3)]
    # the corners of the rank's range (CORNER_RANGE): per corner that some rank uses
    # (rank - 2 of them), whether it is outside each rank's range (CORNER_RANGES'
    # order; 0 for the ranks that do not use it), tested here so the rule is a few bits
    d.corners_outside = [Cat(outside_field_range(corner[i], low, high) if rank - 2 > i else Const(0, 1)
                             for rank, (low, high) in CORNER_RANGES.items())
                         for corner in (d.lower_corner, d.upper_corner) for i in range(3)]
    # the bounding box reaches past the tensor (padding) in spatial dimension i
    d.corners_pad = [(d.lower_corner[i] < 0) | (d.upper_corner[i] > 0) for i in range(3)]
    return d


def decode_rows(d, product):
    """Layer 3: the shared-memory row's values and units; the box's row count in two
    products (DSP blocks whose output registers stand for the next stage's, fed by the
    count blocks' own: ``product``); the bytes of dimension 0."""
    # values and units in one shared-memory row; counts are at most 256, so each pair's
    # product fits 17 bits: one 18x18 block for the next layer's product
    d.row_values = Mux(d.tiled, d.counts[0], d.channels)
    d.row_units = d.row_values >> d.values_per_unit_log2
    d.rows_12 = product(d.counts[1], d.counts[2], registered_inputs=False).map(lambda p: p[:17])
    d.rows_34 = product(d.counts[3], d.counts[4], registered_inputs=False).map(lambda p: p[:17])
    d.dim0_bytes = sparse_product(d.dim0_units, d.unit_global_bytes, UNIT_BYTES)     # bytes of dimension 0
    d.end_less_stride = [d.dims[i + 1] + d.upper_less_stride[i] for i in range(3)]
    return d


def decode_row_bytes(d, product):
    """Layer 4: the row's bytes, chunks and pitch, and the units of its last chunk; the
    box's row count (a DSP block as in layer 3)."""
    d.row_bytes = d.row_units << d.unit_smem_bytes_log2
    d.row_chunks = (d.row_bytes + 15) >> 4
    d.row_pitch = d.row_chunks << 4
    d.box_rows_tiled = product(d.rows_12, d.rows_34, registered_inputs=False).map(lambda p: p[:34])
    d.dim0_last = (d.dim0_bytes - 1).as_signed()
    # units in the row's last chunk: the row's units modulo a chunk's (a power of two),
    # a whole chunk where that is 0. Masks and a zero test, no subtraction
    per_chunk = Const(1, 5) << d.units_per_chunk_log2
    low = d.row_units[:4] & Array(Const((1 << k) - 1, 4) for k in range(8))[d.units_per_chunk_log2]
    d.last_chunk_units = Mux(low == 0, per_chunk, low)
    return d
