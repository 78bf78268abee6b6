"""Hypothesis strategies for legal tensor maps and requests (REFERENCE.md section 1 rules,
built so that every generated case is legal by construction)."""

from hypothesis import strategies as st

from tma_unit.model import (DataType, Interleave, Swizzle, OobFill, L2Promotion, Operation,
                            Request, TensorMap, MapKind, TYPE_INFO, smem_alignment, ReduceOp)
from tma_unit.model.request import REDUCE_TYPES
from tma_unit.model.tensormap import PACKED_SWIZZLES

ALL_SWIZZLES = list(Swizzle)


def _align(info, interleave):
    return 32 if (interleave == Interleave.B32 or info.align16b) else 16


@st.composite
def tiled_cases(draw, operations=(Operation.LOAD, Operation.STORE, Operation.PREFETCH),
                max_rows=64, dtypes=tuple(DataType)):
    """A legal (TensorMap, Request) pair for a tiled copy, often partly out of bounds."""
    operation = draw(st.sampled_from(operations))
    store = operation in (Operation.STORE, Operation.REDUCE)
    usable = [d for d in dtypes if not (store and d == DataType.U4_ALIGN16B)]
    if operation == Operation.REDUCE:
        usable = [d for d in usable if any(d in types for types in REDUCE_TYPES.values())]
    dtype = draw(st.sampled_from(usable))
    info = TYPE_INFO[dtype]
    if operation == Operation.REDUCE:
        op = draw(st.sampled_from([o for o in ReduceOp if dtype in REDUCE_TYPES[o]]))
    else:
        op = ReduceOp.ADD
    rank = draw(st.integers(1, 5))
    interleaves = [Interleave.NONE]
    if rank >= 3 and dtype != DataType.U6_ALIGN16B:
        interleaves += [Interleave.B16] + ([] if info.align16b else [Interleave.B32])
    interleave = draw(st.sampled_from(interleaves))

    # dimension 0 of the box
    if info.align16b:
        box0 = 128
    elif interleave == Interleave.NONE:
        # whole chunks; packed b4x16 counts two values a byte
        chunk_values = 16 * info.values_per_unit // info.unit_smem_bytes
        box0 = chunk_values * draw(st.integers(1, max(1, 256 // chunk_values)))
        box0 = min(box0, 256 - 256 % chunk_values)
    else:
        box0 = draw(st.integers(1, 32))
    row_bytes = info.smem_bytes(box0)

    if interleave == Interleave.B32:
        swizzle = Swizzle.B32
    else:
        choices = list(Swizzle)
        if interleave == Interleave.NONE:
            choices = [s for s in choices if s == Swizzle.NONE or row_bytes <= s.span]
        else:
            choices = [s for s in choices if s != Swizzle.B96]
        if info.align16b:
            allowed = PACKED_SWIZZLES[dtype]["store" if store else "load"]
            choices = [s for s in choices if s in allowed]
        if store or operation == Operation.PREFETCH:
            choices = [s for s in choices if s != Swizzle.B128_ATOM_32B_FLIP_8B]
        swizzle = draw(st.sampled_from(choices))

    es = [draw(st.integers(1, 8)) for _ in range(rank)]
    if info.packed and interleave != Interleave.NONE:
        es[0] = 1
    box = [box0] + [draw(st.integers(1, 6)) for _ in range(rank - 1)]
    # keep boxes small so a property test stays fast
    rows = 1
    for d in range(1, rank):
        rows *= -(-box[d] // es[d])
    if rows > max_rows:
        box = [box0] + [1] * (rank - 1)

    dims = []
    for d in range(rank):
        if d == 0 and info.align16b:
            dims.append(128 * draw(st.integers(1, 3)))
        elif d == 0 and dtype == DataType.U4_ALIGN8B:
            dims.append(2 * draw(st.integers(1, 200)))
        else:
            dims.append(draw(st.integers(1, box[d] * es[d] + 8)))
    align = _align(info, interleave)
    strides = []
    extent = info.global_bytes(dims[0])
    for d in range(1, rank):
        stride = -(-extent // align) * align + align * draw(st.integers(0, 2))
        strides.append(stride)
        extent = stride * dims[d]
    address = align * draw(st.integers(1, 64))
    fill = OobFill.NONE
    if info.is_float and not info.packed:
        fill = draw(st.sampled_from(list(OobFill)))
    tm = TensorMap(MapKind.TILED, dtype, address, dims, strides, box, es, interleave, swizzle,
                   draw(st.sampled_from(list(L2Promotion))), fill)

    coords = []
    for d in range(rank):
        low = 0 if store else -box[d] * es[d]
        c = draw(st.integers(low, dims[d] + 2))
        if d == 0 and info.packed:
            c = 128 * draw(st.integers(0 if store else -1, dims[0] // 128 + 1))
        coords.append(c)
    smem = smem_alignment(swizzle) * draw(st.integers(0, 24))
    request = Request(operation, coords, smem_address=smem, reduce_op=op,
                      request_id=draw(st.integers(0, 255)))
    return tm, request


def _channels(draw, info, swizzle_span=None):
    """A channels-per-pixel value whose row is whole chunks (and fits a swizzle span)."""
    if info.align16b:
        return 128
    chunk_values = 16 * info.values_per_unit // info.unit_smem_bytes
    most = 256 // chunk_values
    if swizzle_span:
        most = min(most, swizzle_span // 16)
    return chunk_values * draw(st.integers(1, max(1, min(most, 8))))


def _strides(draw, info, dims, align):
    strides = []
    extent = info.global_bytes(dims[0])
    for d in range(1, len(dims)):
        stride = -(-extent // align) * align + align * draw(st.integers(0, 1))
        strides.append(stride)
        extent = stride * dims[d]
    return strides


IM2COL_DTYPES = [d for d in DataType if d != DataType.U4_ALIGN8B]


@st.composite
def im2col_cases(draw, operations=(Operation.LOAD, Operation.PREFETCH, Operation.STORE), max_pixels=48):
    """A legal (TensorMap, Request) pair for an im2col copy (im2col_no_offs for stores and
    reductions)."""
    from tma_unit.model import AccessMode
    from tma_unit.model.tensormap import CORNER_RANGES
    from tma_unit.model.request import IM2COL_OFFSET_RANGES
    operation = draw(st.sampled_from(operations))
    store = operation in (Operation.STORE, Operation.REDUCE)
    usable = [d for d in IM2COL_DTYPES if not (store and d == DataType.U4_ALIGN16B)]
    if operation == Operation.REDUCE:
        usable = [d for d in usable if any(d in types for types in REDUCE_TYPES.values())]
    dtype = draw(st.sampled_from(usable))
    reduce_op = ReduceOp.ADD
    if operation == Operation.REDUCE:
        reduce_op = draw(st.sampled_from([o for o in ReduceOp if dtype in REDUCE_TYPES[o]]))
    info = TYPE_INFO[dtype]
    rank = draw(st.integers(3, 5))
    if info.align16b:
        swizzles = PACKED_SWIZZLES[dtype]["store" if store else "load"] - {Swizzle.B128_ATOM_64B}
        swizzle = draw(st.sampled_from(sorted(swizzles)))
    else:
        swizzle = draw(st.sampled_from([s for s in Swizzle if not (store and s == Swizzle.B128_ATOM_32B_FLIP_8B)]))
    channels = _channels(draw, info, swizzle.span or None)
    spatial = rank - 2
    low, high = CORNER_RANGES[rank]
    dims = [channels * draw(st.integers(1, 2)) + (0 if info.packed else draw(st.integers(0, 3)))]
    lower, upper = [], []
    for i in range(spatial):
        dim = draw(st.integers(1, 9))
        lo = draw(st.integers(0, min(3, dim - 1)) if store else st.integers(max(low, -3), 3))
        up = draw(st.integers(max(low, lo - dim + 1), 0 if store else min(high, 3)))
        dims.append(dim)
        lower.append(lo)
        upper.append(up)
    dims.append(draw(st.integers(1, 3)))                 # N
    align = 32 if info.align16b else 16
    es = [1] + [draw(st.integers(1, 3)) for _ in range(spatial)] + [1]
    fill = OobFill.NONE
    if info.is_float and not info.packed:
        fill = draw(st.sampled_from(list(OobFill)))
    tm = TensorMap(MapKind.IM2COL, dtype, align * draw(st.integers(1, 8)), dims, _strides(draw, info, dims, align),
                   (), es, Interleave.NONE, swizzle, L2Promotion.NONE, fill, lower, upper, channels,
                   draw(st.integers(1, max_pixels)))
    coords = [0 if info.packed else draw(st.integers(0 if store else -4, dims[0]))]
    for i in range(spatial):
        coords.append(draw(st.integers(0 if store else lower[i] - 2, dims[i + 1] + upper[i] + 1)))
    coords.append(draw(st.integers(0, dims[-1])))
    offsets = ()
    if not store:
        top = IM2COL_OFFSET_RANGES[rank][1]
        offsets = tuple(draw(st.integers(0, min(top, 3))) for _ in range(spatial))
    smem = smem_alignment(swizzle) * draw(st.integers(0, 16))
    return tm, Request(operation, coords, smem_address=smem, mode=AccessMode.IM2COL, im2col_offsets=offsets,
                       reduce_op=reduce_op)


@st.composite
def wide_cases(draw, max_pixels=48, max_halo=8):
    """A legal (TensorMap, Request) pair for an im2col::w or im2col::w::128 load."""
    from tma_unit.model import AccessMode, Im2colWideMode
    dtype = draw(st.sampled_from(IM2COL_DTYPES))
    info = TYPE_INFO[dtype]
    rank = draw(st.integers(3, 5))
    wide = draw(st.sampled_from(list(Im2colWideMode)))
    choices = [Swizzle.B64, Swizzle.B128, Swizzle.B128_ATOM_32B]
    if info.align16b:
        choices = [Swizzle.B128, Swizzle.B128_ATOM_32B]
    swizzle = draw(st.sampled_from(choices))
    channels = _channels(draw, info, swizzle.span)
    dims = [channels + (0 if info.packed else draw(st.integers(0, 3)))]
    dims += [draw(st.integers(1, 40))] + [draw(st.integers(1, 4)) for _ in range(rank - 3)] + [draw(st.integers(1, 3))]
    lo = draw(st.integers(-3, 3))
    up = draw(st.integers(lo - dims[1] + 1, 3))
    es = [1, draw(st.integers(1, 3))] + [1] * (rank - 2)
    align = 32 if info.align16b else 16
    tm = TensorMap(MapKind.IM2COL_WIDE, dtype, align * draw(st.integers(1, 8)), dims,
                   _strides(draw, info, dims, align), (), es, Interleave.NONE, swizzle, L2Promotion.NONE,
                   OobFill.NONE, (lo,), (up,), channels, draw(st.integers(1, max_pixels)), wide)
    mode = AccessMode.IM2COL_W if wide == Im2colWideMode.W else AccessMode.IM2COL_W_128
    coords = [0 if info.packed else draw(st.integers(-4, dims[0]))]
    coords += [draw(st.integers(lo - 4, dims[1] + up + 1))]
    coords += [draw(st.integers(-1, d)) for d in dims[2:-1]] + [draw(st.integers(0, dims[-1]))]
    halo = draw(st.integers(0, max_halo))
    return tm, Request(Operation.LOAD, coords, smem_address=smem_alignment(swizzle) * draw(st.integers(0, 8)),
                       mode=mode, w_halo=halo, w_offset=draw(st.integers(0, 4)))


@st.composite
def gather4_cases(draw):
    """A legal (TensorMap, Request) pair for a gather4 load or scatter4 store."""
    from tma_unit.model import AccessMode
    scatter = draw(st.booleans())
    dtype = draw(st.sampled_from([d for d in DataType if d != DataType.U4_ALIGN16B]))
    info = TYPE_INFO[dtype]
    if info.align16b:
        box0 = 128
    else:
        chunk_values = 16 * info.values_per_unit // info.unit_smem_bytes
        box0 = chunk_values * draw(st.integers(1, max(1, min(8, 256 // chunk_values))))
    row_bytes = info.smem_bytes(box0)
    choices = [s for s in Swizzle if s == Swizzle.NONE or row_bytes <= s.span]
    if info.align16b:
        choices = [s for s in choices if s in PACKED_SWIZZLES[dtype]["store" if scatter else "load"]]
    if scatter:
        choices = [s for s in choices if s != Swizzle.B128_ATOM_32B_FLIP_8B]
    swizzle = draw(st.sampled_from(choices))
    if info.align16b:
        dim0 = 128 * draw(st.integers(1, 3))
    elif info.packed:
        dim0 = 2 * draw(st.integers(1, 200))
    else:
        dim0 = draw(st.integers(1, box0 + 8))
    dims = (dim0, draw(st.integers(1, 12)))
    tm = TensorMap(MapKind.TILED, dtype, 32 * draw(st.integers(1, 8)), dims,
                   _strides(draw, info, dims, 32 if info.align16b else 16), (box0, 1), (1, 1),
                   Interleave.NONE, swizzle)
    low = 0 if scatter else -2
    column = draw(st.integers(low, dim0))
    if info.packed:
        column = 128 * draw(st.integers(0, dim0 // 128))
    rows = [draw(st.integers(low, dims[1] + 1)) for _ in range(4)]
    operation, mode = (Operation.STORE, AccessMode.SCATTER4) if scatter else (Operation.LOAD, AccessMode.GATHER4)
    return tm, Request(operation, [column] + rows, smem_address=smem_alignment(swizzle) * draw(st.integers(0, 8)),
                       mode=mode)


#: The request kinds a scenario draws from, by access mode family.
CASE_KINDS = ("tiled", "gather4", "im2col", "wide")


def _cases(kind, max_rows):
    if kind == "tiled":
        return tiled_cases(operations=(Operation.LOAD, Operation.STORE, Operation.REDUCE, Operation.PREFETCH),
                           max_rows=max_rows)
    if kind == "gather4":
        return gather4_cases()
    if kind == "im2col":
        return im2col_cases(operations=tuple(Operation), max_pixels=max_rows)
    return wide_cases(max_pixels=max_rows, max_halo=min(8, max_rows))


@st.composite
def scenarios(draw, config, max_requests=6, legal_only=True, max_rows=16, kinds=CASE_KINDS):
    """A co-simulation scenario: up to ``max_requests`` requests of the ``kinds`` on their
    own slots, random backpressure and gaps. With ``legal_only`` False, some descriptors
    have a random field overwritten and some requests random fields, so many break a rule."""
    from tma_unit.model import encode_descriptor
    from tma_unit.model.layout import flat_fields
    from tma_unit.model.unit import fields_from_request
    from tma_unit.sim.cosim import Scenario
    count = draw(st.integers(1, max_requests))
    images, requests = {}, []
    valid = 0
    for i in range(count):
        tm, req = draw(st.one_of(*[_cases(kind, max_rows) for kind in kinds]))
        slot = i % config.slots
        image = encode_descriptor(tm)
        fields = fields_from_request(req.__class__(**{**req.__dict__, "request_id": i}), slot)
        if not legal_only and draw(st.booleans()):
            if draw(st.booleans()):
                name, offset, width, _ = draw(st.sampled_from(list(flat_fields())))
                bits = int.from_bytes(image, "little") & ~(((1 << width) - 1) << offset)
                image = (bits | (draw(st.integers(0, (1 << width) - 1)) << offset)).to_bytes(128, "little")
            else:
                key = draw(st.sampled_from(["operation", "mode", "reduce_op", "smem_address", "multicast_mask",
                                            "coordinates", "slot"]))
                if key == "coordinates":
                    fields["coordinates"] = [draw(st.integers(-(1 << 31), (1 << 31) - 1))] + fields["coordinates"][1:]
                elif key == "slot":
                    fields["slot"] = draw(st.integers(0, 255))
                else:
                    width = {"operation": 2, "mode": 3, "reduce_op": 3, "smem_address": 32, "multicast_mask": 16}[key]
                    fields[key] = draw(st.integers(0, (1 << width) - 1))
            if draw(st.integers(0, 3)) == 0:
                continue_valid = False
            else:
                continue_valid = True
        else:
            continue_valid = True
        images[slot] = image
        if continue_valid:
            valid |= 1 << slot
        requests.append(fields)
    return Scenario(config, images, valid, requests, seed=draw(st.integers(0, 1 << 16)),
                    ready_probability=draw(st.sampled_from([1.0, 0.7, 0.3])), max_gap=draw(st.integers(0, 3)))
