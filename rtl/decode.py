"""Decoding a snapshotted tensor map into the quantities the unit works with.

From the descriptor's stored fields (docs/descriptor.md) this builds, as combinational
logic, what PTX section 5.5 and the driver define (docs/spec.md, "Tensor-map rules"):
the rank, the element type's sizes (section 5.5.1, sub-byte types 5.5.1.1), the
dimensions and strides in their natural units, the elements traversed per dimension
(``ceil(box / element stride)``, 5.5.3.2), the shared-memory row of the box and its
pitch, and the box's row count.

It comes in four layers (:func:`decode_fields`, :func:`decode_counts`,
:func:`decode_rows`, :func:`decode_row_bytes`) and a few bits before them
(:func:`decode_early`). Each layer is a bundle (:func:`.pipeline.bundle`) that holds the
one before it and adds its own quantities, each at most one carry chain, one small shifter
or one 18x18 multiply deep, so that the front end registers a layer between two stages.

The element-type table is spec data (model/types.py ``TYPE_INFO``) and is read from
there; everything else is computed here, independently of the golden model.
"""

from amaranth.hdl import Array, Const, Mux, Cat, Value

from ..model.layout import DESCRIPTOR_FIELDS
from ..model.tensormap import CORNER_RANGES, MAX_RANK
from ..model.types import TYPE_INFO, SWIZZLE_PAIRS, Interleave, MapKind, Swizzle
from .arith import ceil_div_operands, reciprocal_quotient, sparse_product, outside_field_range
from .layouts import SPATIAL
from .pipeline import Delayed, bundle, extend

__all__ = ["STRIDE_ZERO_BITS", "PITCH_ZERO_BITS", "EarlyBits", "DecodedFields", "DecodedCounts", "DecodedRows", "DecodedRowBytes", "decode_early",
           "decode_fields", "decode_counts", "decode_rows", "decode_row_bytes", "type_table", "swizzle_value",
           "rank_is", "rank_above", "UNIT_BYTES", "TYPE_BITS"]

#: A global stride is stored in 16-byte units (model/layout.py, "units16"): its byte value
#: has this many low bits 0, which products leave out (:func:`.arith.partial_products`).
STRIDE_ZERO_BITS = 4

#: A shared-memory row's pitch is whole 16-byte chunks (``row_pitch``): its low bits are
#: 0 the same way.
PITCH_ZERO_BITS = 4

#: The sizes the unit multiplies by, from the type table: a unit's bytes in global memory
#: and an element's bits (:func:`.arith.sparse_product`).
UNIT_BYTES = sorted({info.unit_global_bytes for info in TYPE_INFO.values()})
TYPE_BITS = sorted({info.bits for info in TYPE_INFO.values()})
#: The stored rank field's values: rank - 1 in 3 bits, so ranks 1..8 (above 5 an error).
STORED_RANKS = 1 << next(f.width for f in DESCRIPTOR_FIELDS if f.name == "rank")


def type_table(attribute, width):
    """A 16-entry lookup of a TYPE_INFO attribute indexed by the PTX element-type code."""
    by_code = {info.ptx_code: info for info in TYPE_INFO.values()}
    return Array(Const(int(getattr(by_code[code], attribute)), width) for code in range(16))


def _log2_table(attribute):
    by_code = {info.ptx_code: info for info in TYPE_INFO.values()}
    return Array(Const(getattr(by_code[code], attribute).bit_length() - 1, 3) for code in range(16))


def swizzle_value(mode, atomicity):
    """The driver's ``CUtensorMapSwizzle`` number of a stored (mode, atomicity) pair, for
    rules written in its terms: a lookup of the model's pair table (``SWIZZLE_PAIRS``).
    A pair the table lacks reads as NONE; the rules refuse it (ENUM_RANGE,
    SWIZZLE_ATOMICITY) before any rule that reads the value."""
    by_pair = {(int(m), int(a)): int(value) for value, (m, a) in SWIZZLE_PAIRS.items()}
    modes, atomicities = 1 << len(mode), 1 << len(atomicity)
    table = Array(Const(by_pair.get((m, a), Swizzle.NONE), 3) for m in range(modes) for a in range(atomicities))
    return table[Cat(atomicity, mode)]


def rank_is(d, rank: int):
    """Whether the decoded descriptor ``d``'s rank is ``rank`` (one of its rank bits)."""
    return d.rank_bits[rank - 1] if 1 <= rank <= len(d.rank_bits) else Const(0, 1)


def rank_above(d, k: int):
    """Whether ``d``'s rank is above ``k`` (one of its rank bits)."""
    return d.rank_above_bits[k] if 0 <= k < len(d.rank_above_bits) else Const(int(k < 0), 1)


@bundle
class EarlyBits:
    """Layer 0 (:func:`decode_early`)."""
    rank_bits: list             # rank == k, for k = 1..8: rank_is
    rank_above_bits: list       # rank > k, for k = 0..7: rank_above
    steps0: Value               # dimension 0 steps by its element stride


@bundle
class DecodedFields(EarlyBits):
    """Layer 1 (:func:`decode_fields`): the stored fields in natural units and the type's
    sizes. Lists hold one entry a dimension (``strides``: dimensions 1..4), 1 past the
    rank unless said otherwise."""
    kind: Value
    tiled: Value
    im2col: Value
    wide: Value
    code: Value                 # the PTX element-type code
    bits: Value                 # bits of a value in global memory
    values_per_unit_log2: Value
    unit_global_bytes: Value
    unit_smem_bytes_log2: Value
    units_per_chunk_log2: Value
    is_float: Value
    packed: Value
    padded: Value
    interleave: Value
    swizzle_mode: Value
    swizzle_atomicity: Value
    swizzle: Value              # the driver's number of the pair (swizzle_value)
    fill_nan: Value
    dims: list                  # 1..2^32, as stored past the rank
    strides: list               # bytes, as stored past the rank
    box: list                   # 1..256, as stored past the rank
    element_strides: list       # 1..8, as stored past the rank
    in_rank: list               # dimension i < rank
    step0: Value                # dimension 0's traversal step: its element stride, or 1
    counts: list                # elements traversed, ceil(box / element stride): Delayed
    dims_used_less_one: list    # dims - 1, 0 past the rank
    channels: Value
    pixels: Value
    global_address: Value
    lower_corner: Value         # W, H, D
    upper_corner: Value
    corner_span: list           # upper - lower corner
    wide_mode: Value


@bundle
class DecodedCounts(DecodedFields):
    """Layer 2 (:func:`decode_counts`)."""
    dim0_units: Value
    box_bits: Value             # bits of box[0] values
    channel_bits: Value         # bits of a pixel's channels
    corner_area: list           # im2col: positions per spatial dimension, dims + upper - lower
    upper_less_stride: list     # upper corner - element stride, per spatial dimension
    corners_outside: list       # per corner, a bit per rank whose range it leaves (CORNER_RANGES)
    corners_pad: list           # the bounding box reaches past the tensor, per spatial dimension


@bundle
class DecodedRows(DecodedCounts):
    """Layer 3 (:func:`decode_rows`)."""
    row_values: Value           # values in one shared-memory row
    row_units: Value
    rows_12: Delayed            # elements traversed in dimensions 1 and 2, multiplied
    rows_34: Delayed            # ... in dimensions 3 and 4
    dim0_bytes: Value           # bytes of dimension 0 in global memory
    end_less_stride: list       # where a pixel walk restarts: dims + upper - element stride


@bundle
class DecodedRowBytes(DecodedRows):
    """Layer 4 (:func:`decode_row_bytes`)."""
    row_bytes: Value
    row_chunks: Value
    row_pitch: Value            # a row's bytes rounded up to whole chunks
    box_rows_tiled: Delayed     # a tiled box's rows
    dim0_last: Value            # dim0_bytes - 1, signed
    last_chunk_units: Value     # units in a row's last chunk


def decode_early(desc) -> EarlyBits:
    """Layer 0, a few bits the front end registers beside the snapshot, because the
    elements-traversed factors (layer 1) need them on the way into a DSP block: the
    rank's compares with constants, from the stored field (rank - 1), so that nothing
    adds or subtracts before them (:func:`rank_is`, :func:`rank_above`), and whether
    dimension 0 steps by its element stride (only with interleave, PTX 5.5.3.2; never
    for packed types), which reads the type table."""
    tiled = desc.kind == MapKind.TILED
    return EarlyBits(
        rank_bits=[desc.rank == rank - 1 for rank in range(1, STORED_RANKS + 1)],
        rank_above_bits=[Const(1, 1)] + [desc.rank >= k for k in range(1, STORED_RANKS)],
        steps0=tiled & (desc.interleave_layout != Interleave.NONE) & ~type_table("packed", 1)[desc.elemtype])


def decode_fields(desc, early: EarlyBits, product) -> DecodedFields:
    """Layer 1: the stored fields in natural units, the type table's sizes; the elements
    traversed per dimension, multiplied in DSP blocks whose registers stand for the next
    two stages' (``product``: :meth:`.pipeline.Stage.product`). ``early``: layer 0 of
    the same descriptor (:func:`decode_early`), a stage before."""
    code = desc.elemtype
    in_rank = [rank_above(early, i) for i in range(MAX_RANK)]
    element_strides = [stored + 1 for stored in desc.element_stride]    # 1..8
    unit_smem_bytes_log2 = _log2_table("unit_smem_bytes")[code]
    # the elements traversed per dimension, ceil(box / element stride), as two factors
    # (1 past the rank: the stored fields taken as 0), so the multiplier's output is the
    # count, with nothing behind it; ready two stages on (layer 3). The factors come from
    # the stored fields (less one), not from the sizes above: no add before the table
    # nor before the numerator's add, on the way into a DSP block (docs/fpga.md)
    counts = []
    for i in range(MAX_RANK):
        step_less_one = desc.element_stride[i] if i else Mux(early.steps0, desc.element_stride[0], 0)
        counts.append(reciprocal_quotient(*ceil_div_operands(Mux(in_rank[i], desc.box_dim[i], 0),
                                                             Mux(in_rank[i], step_less_one, 0), 256), product))
    return extend(
        DecodedFields, early,
        kind=desc.kind,
        tiled=desc.kind == MapKind.TILED,
        im2col=desc.kind == MapKind.IM2COL,
        wide=desc.kind == MapKind.IM2COL_WIDE,
        code=code,
        bits=type_table("bits", 7)[code],
        values_per_unit_log2=_log2_table("values_per_unit")[code],
        unit_global_bytes=type_table("unit_global_bytes", 5)[code],
        unit_smem_bytes_log2=unit_smem_bytes_log2,
        units_per_chunk_log2=(4 - unit_smem_bytes_log2)[:3],          # units in 16 bytes
        is_float=type_table("is_float", 1)[code],
        packed=type_table("packed", 1)[code],
        padded=type_table("padded", 1)[code],
        interleave=desc.interleave_layout,
        swizzle_mode=desc.swizzle_mode,
        swizzle_atomicity=desc.swizzle_atomicity,
        swizzle=swizzle_value(desc.swizzle_mode, desc.swizzle_atomicity),
        fill_nan=desc.fill_mode,
        dims=[stored + 1 for stored in desc.global_dim],                # 1..2^32
        strides=[Cat(Const(0, STRIDE_ZERO_BITS), stored) for stored in desc.global_stride],   # bytes
        box=[stored + 1 for stored in desc.box_dim],                    # 1..256
        element_strides=element_strides,
        in_rank=in_rank,
        step0=Mux(early.steps0, element_strides[0], 1),
        counts=counts,
        # the dimensions' sizes less one where the rules multiply them, 0 past the rank
        dims_used_less_one=[Mux(in_rank[i], desc.global_dim[i], 0) for i in range(MAX_RANK)],
        channels=desc.channels_per_pixel + 1,
        pixels=desc.pixels_per_column + 1,
        global_address=desc.global_address,
        lower_corner=desc.lower_corner,
        upper_corner=desc.upper_corner,
        corner_span=[(upper - lower).as_signed() for lower, upper in zip(desc.lower_corner, desc.upper_corner)],
        wide_mode=desc.wide_mode)


def decode_counts(d: DecodedFields) -> DecodedCounts:
    """Layer 2: products by the type's size (shifts and one adder: :func:`.arith.sparse_product`)."""
    upper, lower = d.upper_corner, d.lower_corner
    return extend(
        DecodedCounts, d,
        dim0_units=d.dims[0] >> d.values_per_unit_log2,
        box_bits=sparse_product(d.box[0], d.bits, TYPE_BITS),   # the rules take box[0] << 3 for a padded type
        channel_bits=sparse_product(d.channels, d.bits, TYPE_BITS),
        # im2col: a dimension's range of positions is dims + upper - lower (CORNER_AREA);
        # the pixel walk restarts at dims + upper - element stride
        corner_area=[d.dims[i + 1] + d.corner_span[i] for i in range(SPATIAL)],
        upper_less_stride=[(upper[i] - d.element_strides[i + 1]).as_signed() for i in range(SPATIAL)],
        # the corners of the rank's range (CORNER_RANGE): per corner that some rank uses
        # (rank - 2 of them), whether it is outside each rank's range (CORNER_RANGES'
        # order; 0 for the ranks that do not use it), tested here so the rule is a few bits
        corners_outside=[Cat(outside_field_range(corner[i], low, high) if rank - 2 > i else Const(0, 1)
                             for rank, (low, high) in CORNER_RANGES.items())
                         for corner in (lower, upper) for i in range(SPATIAL)],
        # the bounding box reaches past the tensor (padding) in spatial dimension i
        corners_pad=[(lower[i] < 0) | (upper[i] > 0) for i in range(SPATIAL)])


def decode_rows(d: DecodedCounts, product) -> DecodedRows:
    """Layer 3: the shared-memory row's values and units; the box's row count in two
    products (DSP blocks whose output registers stand for the next stage's, fed by the
    count blocks' own: ``product``); the bytes of dimension 0."""
    # values and units in one shared-memory row; counts are at most 256, so each pair's
    # product fits 17 bits: one 18x18 block for the next layer's product
    row_values = Mux(d.tiled, d.counts[0], d.channels)
    return extend(
        DecodedRows, d,
        row_values=row_values,
        row_units=row_values >> d.values_per_unit_log2,
        rows_12=product(d.counts[1], d.counts[2], registered_inputs=False).map(lambda p: p[:17]),
        rows_34=product(d.counts[3], d.counts[4], registered_inputs=False).map(lambda p: p[:17]),
        dim0_bytes=sparse_product(d.dim0_units, d.unit_global_bytes, UNIT_BYTES),     # bytes of dimension 0
        end_less_stride=[d.dims[i + 1] + d.upper_less_stride[i] for i in range(SPATIAL)])


def decode_row_bytes(d: DecodedRows, product) -> DecodedRowBytes:
    """Layer 4: the row's bytes, chunks and pitch, and the units of its last chunk; the
    box's row count (a DSP block as in layer 3)."""
    row_bytes = d.row_units << d.unit_smem_bytes_log2
    row_chunks = (row_bytes + 15) >> 4
    # units in the row's last chunk: the row's units modulo a chunk's (a power of two),
    # a whole chunk where that is 0. Masks and a zero test, no subtraction
    per_chunk = Const(1, 5) << d.units_per_chunk_log2
    low = d.row_units[:4] & Array(Const((1 << k) - 1, 4) for k in range(8))[d.units_per_chunk_log2]
    return extend(
        DecodedRowBytes, d,
        row_bytes=row_bytes,
        row_chunks=row_chunks,
        row_pitch=row_chunks << PITCH_ZERO_BITS,
        box_rows_tiled=product(d.rows_12, d.rows_34, registered_inputs=False).map(lambda p: p[:34]),
        dim0_last=(d.dim0_bytes - 1).as_signed(),
        last_chunk_units=Mux(low == 0, per_chunk, low))
