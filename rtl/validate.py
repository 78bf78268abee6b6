"""The rules a request and its snapshotted descriptor must keep, in hardware.

Every rule of docs/spec.md ("Tensor-map rules", "Request rules") that a stored descriptor
or a hardware request can break, plus the unit's own limits, each a condition computed
from the decoded fields (:mod:`.decode`), checked in the order the golden model checks
them, so that the first broken rule gives the same error code (docs/errors.md). Rules a
stored descriptor or a hardware request cannot break (a dimension of 0, a box of 257: the
encodings cannot hold them) have no logic here: :data:`UNREACHABLE` lists them.

The wide products the rules compare against (the stride extents ``stride[i-1] * dim[i]``
and the tensor's last byte, :func:`product_terms`) and the box's byte count come in
computed, so the unit can spread them over pipeline stages before the comparisons; the
last two rules, SMEM_BOUNDS and ADDRESS_WRAP, are apart (:func:`smem_overflows`,
:func:`address_wraps`) for the same reason: their sums are the last to be ready.
:func:`first_broken` picks the first broken rule with a tree of depth log2(rules).
"""

from amaranth.hdl import Array, Const, Mux, Value

from ..model.errors import ErrorCode
from ..model.request import REDUCE_TYPES, IM2COL_OFFSET_RANGES, MAX_W_HALO
from ..model.swizzle import smem_alignment
from ..model.tensormap import PACKED_SWIZZLES, CORNER_RANGES, MAX_RANK
from ..model.types import (TYPE_INFO, SWIZZLE_SPANS, AccessMode, DataType, Interleave, MapKind, Operation,
                           SwizzleMode, SwizzleAtomicity, Swizzle)
from .arith import partial_products, outside_field_range, less_than
from .decode import STRIDE_ZERO_BITS, rank_is, rank_above
from .layouts import SPATIAL
from .pipeline import bundle

__all__ = ["product_terms", "SPAN_WIDTH", "UNREACHABLE", "unreachable", "rule_list", "descriptor_rules", "in_set", "SmemRoom",
           "smem_room", "smem_overflows", "address_wraps", "first_broken", "smem_alignment_log2"]

#: The codes the unit never reports, and why: rules no stored descriptor or hardware request
#: can break, since the encodings cannot hold the value (a dimension of 0 or past 2^32, a
#: stride past 2^40, a box or element stride of 0 or past its range, an array of the wrong
#: length, a coordinate past 32 bits, wOffset past 5 bits), and the model's own input rules
#: (a payload field holds only an integer of its width); OK is not a rule.
UNREACHABLE = frozenset({ErrorCode.OK, ErrorCode.DIM_RANGE, ErrorCode.STRIDE_RANGE, ErrorCode.BOX_RANGE,
                         ErrorCode.ELEMENT_STRIDE_RANGE, ErrorCode.ARRAY_LENGTH, ErrorCode.PIXELS_RANGE,
                         ErrorCode.COORD_COUNT, ErrorCode.COORD_RANGE, ErrorCode.WOFFSET_RANGE,
                         ErrorCode.FIELD_TYPE, ErrorCode.FIELD_WIDTH})


def unreachable(config) -> frozenset:
    """The codes a unit of ``config`` never reports: :data:`UNREACHABLE`; the not-built
    codes where it builds every mode or every swizzle; and the rules that only a mode or
    swizzle it does not build can break, since the not-built code comes first."""
    out = set(UNREACHABLE)
    modes, swizzles = config.built_modes, config.built_swizzles
    if config.builds_every_mode:
        out.add(ErrorCode.MODE_NOT_BUILT)
    if config.builds_every_swizzle:
        out.add(ErrorCode.SWIZZLE_NOT_BUILT)
    # the request rules of _request_rules below that test a mode's kind or a swizzle
    only_with = {
        ErrorCode.GATHER4_MAP: AccessMode.GATHER4 in modes,
        ErrorCode.IM2COL_OFFSET_RANGE: AccessMode.IM2COL in modes,
        ErrorCode.IM2COL_STORE_CORNER: AccessMode.IM2COL in modes,
        ErrorCode.WHALO_RANGE: AccessMode.IM2COL_W in modes,
        # TILE and IM2COL exist for every operation; the other modes for some
        ErrorCode.OPERATION_MODE: bool(modes - {AccessMode.TILE, AccessMode.IM2COL}),
        ErrorCode.FLIP_8B_DIRECTION: Swizzle.B128_ATOM_32B_FLIP_8B in swizzles,
    }
    out |= {code for code, reachable in only_with.items() if not reachable}
    return frozenset(out)


#: Bits of the tensor's last byte and of the stride extents, signed: four products of a
#: stride under 2^40 and a count under 2^32 (each under 2^72) and a 64-bit address add up
#: to under 2^75, so 75 bits and a sign hold any sum without wrapping.
SPAN_WIDTH = 76


def smem_alignment_log2(swizzle):
    """log2 of the shared-memory alignment a swizzle (the driver's number) needs: the
    model's table (``model.swizzle.smem_alignment``, docs/decisions.md) as a lookup."""
    values = {int(value) for value in Swizzle}
    return Array(Const(smem_alignment(value).bit_length() - 1 if value in values else 0, 3)
                 for value in range(1 << len(Value.cast(swizzle))))[swizzle]


def swizzle_span(swizzle_mode):
    """Bytes of a box row a stored swizzle mode spreads over (the model's ``SWIZZLE_SPANS``;
    0 for a number that is no mode, which ENUM_RANGE refuses first)."""
    return Array(Const(SWIZZLE_SPANS.get(mode, 0), 8) for mode in range(1 << len(swizzle_mode)))[swizzle_mode]


def in_set(value, members):
    """Whether ``value`` equals one of ``members`` (a constant 0 for none)."""
    out = Const(0, 1)
    for member in members:
        out = out | (value == member)
    return out


def _ptx(dtype):
    return TYPE_INFO[dtype].ptx_code


def product_terms(d, multiply=None):
    """The partial products (:func:`.arith.partial_products`) of ``(dim[i] - 1) *
    stride[i-1]`` for dimensions i = 1..4 (0 past the rank), one list per dimension:
    summed, term i plus ``stride[i-1]`` is the extent ``dim[i] * stride[i-1]``, and the
    four plus ``dim0_bytes - 1`` are the tensor's last byte. ``multiply``: as for
    :func:`.arith.partial_products`. A stride's low bits, 0 as stored
    (:data:`.decode.STRIDE_ZERO_BITS`), are not multiplied."""
    return [partial_products(d.dims_used_less_one[i], d.strides[i - 1], SPAN_WIDTH, multiply, STRIDE_ZERO_BITS)
            for i in range(1, MAX_RANK)]


class _Rules:
    """The (broken?, code) pairs, in the order they are added: the model's order."""

    def __init__(self):
        self.list = []

    def __call__(self, condition, code):
        self.list.append((condition, code))


def rule_list(d, req, kinds, extents, slot_valid, config, checked_code=None):
    """(broken?, code) pairs in the model's order of checking, all but the last two
    (:func:`smem_overflows`, :func:`address_wraps`). ``kinds``: the request's mode as
    bits (:class:`.frontend.ModeKinds`); ``extents``: ``stride[i-1] * dim[i]`` for
    i = 1..3; ``config``: the modes and swizzles built. A unit that checks at commit
    passes ``checked_code``, the first broken rule of :func:`descriptor_rules` found when
    the slot was committed (0: none), which stands for them (``extents`` unused)."""
    rule = _Rules()
    rule(~slot_valid, ErrorCode.SLOT_INVALID)
    if checked_code is None:
        rule.list += descriptor_rules(d, extents)
    else:
        rule(checked_code != ErrorCode.OK, checked_code)
    _request_rules(rule, d, req, kinds, config)
    return rule.list


def descriptor_rules(d, extents):
    """(broken?, code) pairs of the rules that read the descriptor alone, in the model's
    order: they come after SLOT_INVALID and before every rule that reads the request, so
    a unit that checks them at commit (rtl/commit.py) keeps the model's first broken
    rule by putting their first broken code in their place."""
    rule = _Rules()
    _image_rules(rule, d)
    _tensor_map_rules(rule, d, extents)
    _swizzle_rules(rule, d)
    return rule.list


def _align16b(d):
    return in_set(d.code, [_ptx(DataType.U4_ALIGN16B), _ptx(DataType.U6_ALIGN16B)])


def _image_rules(rule, d):
    """Decoding the image (model/layout.py ``tensor_map_from_fields``)."""
    rule(rank_above(d, MAX_RANK), ErrorCode.RANK_RANGE)
    rule(d.swizzle_mode > SwizzleMode.B96, ErrorCode.ENUM_RANGE)
    rule((d.swizzle_atomicity != SwizzleAtomicity.A16B) & (d.swizzle_mode != SwizzleMode.B128),
         ErrorCode.SWIZZLE_ATOMICITY)
    rule(d.kind == 3, ErrorCode.ENUM_RANGE)
    rule(d.interleave == 3, ErrorCode.ENUM_RANGE)


def _tensor_map_rules(rule, d, extents):
    """The tensor map's rules (model/tensormap.py ``_validate``): rank, address, dims and
    strides, then the box (tiled maps) or the corners and channels (im2col maps)."""
    align16b = _align16b(d)
    rule(~d.tiled & ~rank_above(d, 2), ErrorCode.RANK_RANGE)
    rule((d.interleave != Interleave.NONE) & ~rank_above(d, 2), ErrorCode.RANK_INTERLEAVE)
    align32 = (d.interleave == Interleave.B32) | align16b
    address = d.global_address
    rule((address[:4] != 0) | (align32 & address[4]), ErrorCode.ADDRESS_ALIGN)
    rule(align16b & (d.dims[0][:7] != 0), ErrorCode.DIM_PACKED)
    b4x16 = d.code == _ptx(DataType.U4_ALIGN8B)
    rule(b4x16 & d.dims[0][0], ErrorCode.DIM_PACKED)
    extent = d.dim0_bytes
    for i, stride in enumerate(d.strides):
        used = rank_above(d, i + 1)
        rule(used & ((stride == 0) | (align32 & stride[4])), ErrorCode.STRIDE_ALIGN)
        rule(used & less_than(stride, extent), ErrorCode.STRIDE_EXTENT)
        if i < len(extents):
            extent = extents[i]
    # tiled boxes
    inner_bits = Mux(d.padded, d.box[0] << 3, d.box_bits)
    rule(d.tiled & align16b & (d.box[0] != 128), ErrorCode.BOX_PACKED)
    rule(d.tiled & (d.interleave == Interleave.NONE) & (inner_bits[:7] != 0), ErrorCode.BOX_INNER_BYTES)
    # b4x16 rows are whole bytes: an even box_dims[0] (docs/decisions.md)
    rule(d.tiled & b4x16 & d.box[0][0], ErrorCode.BOX_PACKED)
    # im2col maps: corners in the rank's range (rank - 2 of them), then a box of non-zero
    # area (im2col-wide maps: one)
    for outside in d.corners_outside:
        broken = Const(0, 1)
        for r, bit in zip(CORNER_RANGES, outside):
            broken = broken | (rank_is(d, r) & bit)
        rule(d.im2col & broken, ErrorCode.CORNER_RANGE)
    for i in range(SPATIAL):
        corner_used = Mux(d.im2col, rank_above(d, i + 2), i == 0)
        rule(~d.tiled & corner_used & (d.corner_area[i] <= 0), ErrorCode.CORNER_AREA)
    rule(~d.tiled & align16b & (d.channels != 128), ErrorCode.CHANNELS_RANGE)
    rule(~d.tiled & (d.interleave == Interleave.NONE) & ~d.padded & (d.channel_bits[:7] != 0),
         ErrorCode.BOX_INNER_BYTES)
    rule(~d.tiled & b4x16 & d.channels[0], ErrorCode.CHANNELS_RANGE)
    rule(d.wide & (d.interleave != Interleave.NONE), ErrorCode.WIDE_INTERLEAVE)
    rule(d.wide & ~in_set(d.swizzle, [Swizzle.B64, Swizzle.B128, Swizzle.B128_ATOM_32B]),
         ErrorCode.WIDE_SWIZZLE)


def _swizzle_rules(rule, d):
    """The swizzle's rules (model/tensormap.py ``_validate_swizzle``)."""
    swizzle = d.swizzle
    rule((d.interleave == Interleave.B32) & (swizzle != Swizzle.B32), ErrorCode.INTERLEAVE_SWIZZLE)
    rule((d.code == _ptx(DataType.U6_ALIGN16B)) & (d.interleave != Interleave.NONE), ErrorCode.PACKED_INTERLEAVE)
    rule((swizzle == Swizzle.B96) & (d.interleave != Interleave.NONE), ErrorCode.SWIZZLE_96B)
    rule((d.interleave == Interleave.NONE) & (swizzle != Swizzle.NONE) & (d.row_bytes > swizzle_span(d.swizzle_mode)),
         ErrorCode.SWIZZLE_SPAN)
    for dtype, sets in PACKED_SWIZZLES.items():
        allowed = sets["load"] | sets["store"]
        broken = ~in_set(swizzle, allowed) | (d.wide & (swizzle == Swizzle.NONE))
        rule((d.code == _ptx(dtype)) & broken, ErrorCode.PACKED_SWIZZLE)
    rule(d.fill_nan & (~d.is_float | d.packed), ErrorCode.OOB_NAN_TYPE)


def _request_rules(rule, d, req, kinds, config):
    """The request's rules: the mode's number, the mode and swizzle built (model/unit.py
    ``check_built``), then model/request.py ``validate_request``: its mode and operation
    against the map, its coordinates, then the rules of each mode."""
    op, mode = req.operation.as_value(), req.mode.as_value()      # compared with the model's numbers
    load_side = (op == Operation.LOAD) | (op == Operation.PREFETCH)
    writes = ~load_side
    swizzle = d.swizzle
    rule(mode > AccessMode.IM2COL_W_128, ErrorCode.ENUM_RANGE)
    # only a unit built without some modes or swizzles has these rules, so a full unit's
    # rule list is the same as without the option (a mode past the enumeration broke the
    # rule above: in_set of the built modes needs no range test)
    if not config.builds_every_mode:
        rule(~in_set(mode, sorted(config.built_modes)), ErrorCode.MODE_NOT_BUILT)
    if not config.builds_every_swizzle:
        rule(~in_set(swizzle, sorted(config.built_swizzles)), ErrorCode.SWIZZLE_NOT_BUILT)
    modes_ok = Mux(load_side, in_set(mode, [AccessMode.TILE, AccessMode.GATHER4, AccessMode.IM2COL,
                                               AccessMode.IM2COL_W, AccessMode.IM2COL_W_128]),
                   Mux(op == Operation.STORE, in_set(mode, [AccessMode.TILE, AccessMode.SCATTER4, AccessMode.IM2COL]),
                       in_set(mode, [AccessMode.TILE, AccessMode.IM2COL])))
    rule(~modes_ok, ErrorCode.OPERATION_MODE)
    gather, wide_mode = kinds.gather, kinds.wide | kinds.wide128
    needs = Mux(kinds.im2col, MapKind.IM2COL, Mux(wide_mode, MapKind.IM2COL_WIDE, MapKind.TILED))
    rule(d.kind != needs, ErrorCode.MODE_MISMATCH)
    rule(gather & ~rank_is(d, 2), ErrorCode.GATHER4_MAP)
    rule(gather & (d.box[1] != 1), ErrorCode.GATHER4_MAP)
    rule(gather & (d.interleave != Interleave.NONE), ErrorCode.GATHER4_MAP)
    negative = Const(0, 1)
    for coordinate, in_rank in zip(req.coordinates, d.in_rank):
        negative = negative | ((gather | in_rank) & coordinate[-1])
    rule(writes & negative, ErrorCode.STORE_NEGATIVE_COORD)
    rule((op != Operation.LOAD) & (req.multicast_mask != 0), ErrorCode.MULTICAST_DIRECTION)
    rule((swizzle == Swizzle.B128_ATOM_32B_FLIP_8B) & (writes | kinds.wide),
         ErrorCode.FLIP_8B_DIRECTION)
    rule((swizzle == Swizzle.B96) & kinds.wide128, ErrorCode.SWIZZLE_96B)
    for dtype, sets in PACKED_SWIZZLES.items():
        direction_ok = Mux(load_side, in_set(swizzle, sets["load"]), in_set(swizzle, sets["store"]))
        rule((d.code == _ptx(dtype)) & ~direction_ok, ErrorCode.PACKED_DIRECTION)
    rule(d.packed & (req.coordinates[0][:7] != 0), ErrorCode.PACKED_COORD)
    reduce_ok = Const(0, 1)
    for reduce_op, dtypes in REDUCE_TYPES.items():
        reduce_ok = reduce_ok | ((req.reduce_op.as_value() == reduce_op) & in_set(d.code, [_ptx(t) for t in dtypes]))
    rule((op == Operation.REDUCE) & ~reduce_ok, ErrorCode.REDUCE_TYPE)
    align_log2 = smem_alignment_log2(swizzle)
    misaligned = Const(0, 1)
    for bits in sorted({smem_alignment(value).bit_length() - 1 for value in Swizzle}):
        misaligned = misaligned | ((align_log2 == bits) & (req.smem_address[:bits] != 0))
    rule((op != Operation.PREFETCH) & misaligned, ErrorCode.SMEM_ALIGN)
    _im2col_request_rules(rule, d, req, kinds, load_side)


def _im2col_request_rules(rule, d, req, kinds, load_side):
    """The im2col modes' request rules: offsets in the rank's range (loads), corners that
    do not pad (stores), the wide mode and its halo."""
    writes = ~load_side
    wide_mode = kinds.wide | kinds.wide128
    im2col_load = kinds.im2col & load_side
    for i in range(SPATIAL):
        broken = Const(0, 1)
        for r, (low, high) in IM2COL_OFFSET_RANGES.items():
            if r - 2 > i:
                broken = broken | (rank_is(d, r) & outside_field_range(req.im2col_offsets[i], low, high))
        rule(im2col_load & broken, ErrorCode.IM2COL_OFFSET_RANGE)
    im2col_store = kinds.im2col & writes
    corner_broken = Const(0, 1)
    for i in range(SPATIAL):
        corner_broken = corner_broken | (rank_above(d, i + 2) & d.corners_pad[i])
    rule(im2col_store & corner_broken, ErrorCode.IM2COL_STORE_CORNER)
    wide_kind = Mux(kinds.wide, 0, 1)
    rule(wide_mode & (d.wide_mode != wide_kind), ErrorCode.MODE_MISMATCH)
    halo_max = Mux(kinds.wide, MAX_W_HALO[AccessMode.IM2COL_W], MAX_W_HALO[AccessMode.IM2COL_W_128])
    rule(wide_mode & (req.w_halo >= halo_max), ErrorCode.WHALO_RANGE)


@bundle
class SmemRoom:
    """The part of SMEM_BOUNDS known before the box's byte count (:func:`smem_room`)."""
    bytes: Value        # shared-memory bytes from the request's address on
    past: Value         # the address is past the end


def smem_room(req, config) -> SmemRoom:
    """The part of SMEM_BOUNDS known before the box's byte count: the bytes of shared
    memory from the request's address on, and whether the address is past the end."""
    return SmemRoom(bytes=(config.smem_bytes - req.smem_address)[:config.smem_address_width + 1],
                    past=req.smem_address > config.smem_bytes)


def smem_overflows(req, box_bytes, room):
    """The second-last rule: the box runs past the unit's shared memory (SMEM_BOUNDS;
    a prefetch writes none). ``room``: :func:`smem_room`."""
    return (req.operation.as_value() != Operation.PREFETCH) & (room.past | less_than(room.bytes, box_bytes))


def address_wraps(last_byte, config):
    """The last rule: the tensor's last byte, ``global address + span`` (``span``: the
    four products plus ``dim0_bytes - 1``, at least -1), is at or past
    ``2**address_width`` (code ADDRESS_WRAP). ``last_byte`` is that sum, signed, as
    :data:`SPAN_WIDTH` bits: the rule is broken when it is not negative and has a bit set
    from ``address_width`` up, which takes a few levels of logic and no compare."""
    return ~last_byte[SPAN_WIDTH - 1] & (last_byte[config.address_width:SPAN_WIDTH - 1] != 0)


def first_broken(rules):
    """(any rule broken, the code of the first broken one): halves of the list decided
    separately and joined, the earlier half winning, so the depth is log2(rules). A code
    is a constant or a value (a group's first code, decided a stage earlier)."""
    if len(rules) == 1:
        condition, code = rules[0]
        return condition, Const(code, 8) if isinstance(code, int) else code
    middle = len(rules) // 2
    early_broken, early_code = first_broken(rules[:middle])
    late_broken, late_code = first_broken(rules[middle:])
    return early_broken | late_broken, Mux(early_broken, early_code, late_code)
