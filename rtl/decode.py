"""Decoding a snapshotted tensor map into the quantities the unit works with.

From the descriptor's stored fields (docs/descriptor.md) this builds, as combinational
logic, what PTX section 5.5 and REFERENCE.md section 1 define: the rank, the element
type's sizes (section 5.5.1, sub-byte types 5.5.1.1), the dimensions and strides in their
natural units, the elements traversed per dimension (``ceil(box / element stride)``,
5.5.3.2), the shared-memory row of the box and its pitch, and the box's byte count.

The element-type table is spec data (model/types.py ``TYPE_INFO``) and is read from
there; everything else is computed here, independently of the golden model.
"""

from types import SimpleNamespace

from amaranth.hdl import Array, Const, Mux, Cat

from ..model.types import TYPE_INFO, Interleave, MapKind
from .arith import ceil_div_by_small

__all__ = ["decode_descriptor", "type_table"]


def type_table(attribute, width):
    """A 16-entry lookup of a TYPE_INFO attribute indexed by the PTX element-type code."""
    by_code = {info.ptx_code: info for info in TYPE_INFO.values()}
    return Array(Const(int(getattr(by_code[code], attribute)), width) for code in range(16))


def _log2_table(attribute):
    by_code = {info.ptx_code: info for info in TYPE_INFO.values()}
    return Array(Const(getattr(by_code[code], attribute).bit_length() - 1, 3) for code in range(16))


def decode_descriptor(desc, stage=lambda d, name: d):
    """Quantities of a descriptor view ``desc`` (``DescriptorLayout``), as a namespace of
    Amaranth values, computed in three layers. ``stage(d, name)`` is called between them
    and returns the namespace the next layer reads: registered by a pipeline
    (:class:`.pipeline.Stage`), or ``d`` itself for one combinational decode."""
    d = SimpleNamespace()
    code = desc.elemtype
    d.rank = desc.rank + 1                               # 1..8 as stored; > 5 is an error
    d.kind = desc.kind
    d.tiled = desc.kind == MapKind.TILED
    d.im2col = desc.kind == MapKind.IM2COL
    d.wide = desc.kind == MapKind.IM2COL_WIDE
    d.code = code
    d.bits = type_table("bits", 7)[code]
    d.values_per_unit_log2 = _log2_table("values_per_unit")[code]
    d.unit_global_bytes = type_table("unit_global_bytes", 5)[code]
    d.unit_smem_bytes_log2 = _log2_table("unit_smem_bytes")[code]
    d.is_float = type_table("is_float", 1)[code]
    d.packed = type_table("packed", 1)[code]
    d.padded = type_table("padded", 1)[code]
    d.interleave = desc.interleave_layout
    d.swizzle_mode = desc.swizzle_mode
    d.swizzle_atomicity = desc.swizzle_atomicity
    d.fill_nan = desc.fill_mode

    d.dims = [desc.global_dim[i] + 1 for i in range(5)]              # 1..2^32
    d.strides = [Cat(Const(0, 4), desc.global_stride[i]) for i in range(4)]   # bytes
    d.box = [desc.box_dim[i] + 1 for i in range(5)]                   # 1..256
    d.element_strides = [desc.element_stride[i] + 1 for i in range(5)]  # 1..8
    d.in_rank = [d.rank > i for i in range(5)]
    # Dimension 0 steps by its element stride only with interleave (PTX 5.5.3.2), never
    # for packed types.
    d.step0 = Mux(d.tiled & (d.interleave != Interleave.NONE) & ~d.packed, d.element_strides[0], 1)
    d.counts = [Mux(d.in_rank[i], ceil_div_by_small(d.box[i], d.element_strides[i] if i else d.step0, 256), 1)
                for i in range(5)]
    d.channels = desc.channels_per_pixel + 1
    d.pixels = desc.pixels_per_column + 1
    d.global_address = desc.global_address
    d.lower_corner = desc.lower_corner
    d.upper_corner = desc.upper_corner
    d.wide_mode = desc.wide_mode

    d = stage(d, "decode1")
    # values in one shared-memory row, its bytes, chunks and pitch
    d.row_values = Mux(d.tiled, d.counts[0], d.channels)
    d.row_bytes = (d.row_values >> d.values_per_unit_log2) << d.unit_smem_bytes_log2
    d.row_chunks = (d.row_bytes + 15) >> 4
    d.row_pitch = d.row_chunks << 4
    # counts are at most 256, so each pair's product fits 17 bits: one 18x18 block for
    # the next layer's product
    d.rows_12 = (d.counts[1] * d.counts[2])[:17]
    d.rows_34 = (d.counts[3] * d.counts[4])[:17]
    # bytes of dimension 0 in global memory
    d.dim0_bytes = (d.dims[0] >> d.values_per_unit_log2) * d.unit_global_bytes

    d = stage(d, "decode2")
    d.box_rows_tiled = d.rows_12 * d.rows_34
    return d
