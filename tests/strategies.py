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
