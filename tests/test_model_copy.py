"""Functional copies: load/store round trips, OOB fill, reductions, prefetch."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tma_unit.model import (DataType, GlobalMemory, MapKind, OobFill, Operation, ReduceOp,
                            Request, Swizzle, TensorMap, TmaError, ErrorCode, load, store,
                            reduce, prefetch, box_elements, TYPE_INFO, OOB_NAN_PATTERNS)
from tma_unit.model.copy import pack_b6, unpack_b6
from tma_unit.model.reference import reference_elements

from memory import peak_bytes
from strategies import tiled_cases

SMEM = 1 << 18


def _memory(tm, rng):
    """A window holding the whole tensor plus a margin, every byte random."""
    extent = tm.global_strides[-1] * tm.global_dims[-1] if tm.rank > 1 else tm.info.global_bytes(tm.global_dims[0])
    return GlobalMemory(tm.global_address - 16, rng.integers(0, 256, extent + 64, dtype=np.uint8))


def _in_tensor_bytes(tm, gmem, req):
    """Bytes of every in-bounds unit of the box, from the slow reference."""
    marks = np.zeros(len(gmem.data), dtype=bool)
    gbytes = tm.info.unit_global_bytes
    for address, _, inside in reference_elements(tm, req):
        if inside:
            marks[address - gmem.base: address - gmem.base + gbytes] = True
    return marks


@settings(max_examples=150)
@given(tiled_cases(operations=(Operation.STORE,)), st.integers(0, 2**32 - 1))
def test_load_then_store_round_trip(case, seed):
    """Load a box from A, store it into a zeroed copy B: B holds A's bytes exactly at the
    box's in-bounds elements and is untouched (zero) everywhere else."""
    tm, store_req = case
    if tm.dtype == DataType.U4_ALIGN16B:
        return                                              # load-only type
    rng = np.random.default_rng(seed)
    source = _memory(tm, rng)
    # 128B_ATOM_64B is store-only for U6_ALIGN16B: load with a load-legal swizzle and move
    # the units to where the store's swizzle expects them
    load_tm = tm if tm.swizzle != Swizzle.B128_ATOM_64B else tm.replace(swizzle=Swizzle.B128_ATOM_32B)
    load_req = Request(Operation.LOAD, store_req.coordinates, smem_address=store_req.smem_address)
    smem = np.full(SMEM, 0xAA, dtype=np.uint8)
    load(load_tm, load_req, source, smem)
    if load_tm is not tm:
        smem = _reswizzle(load_tm, load_req, tm, store_req, smem)
    if tm.dtype == DataType.U6_ALIGN16B:
        smem = _b6_p32_to_p2(tm, store_req, smem)
    target = GlobalMemory(source.base, np.zeros_like(source.data))
    store(tm, store_req, smem, target)
    marks = _in_tensor_bytes(tm, source, store_req)
    assert (target.data[marks] == source.data[marks]).all()
    assert (target.data[~marks] == 0).all()


def _reswizzle(src_tm, src_req, dst_tm, dst_req, smem):
    """Move each unit from src_tm's swizzled place to dst_tm's (same dense offsets)."""
    out = smem.copy()
    a = box_elements(src_tm, src_req).smem_address.reshape(-1)
    b = box_elements(dst_tm, dst_req).smem_address.reshape(-1)
    for j in range(src_tm.info.unit_smem_bytes):
        out[b + j] = smem[a + j]
    return out


def _b6_p32_to_p2(tm, req, smem):
    """A load of U6_ALIGN16B gives .b6x16_p32 (12 packed bytes + 4 padding); the store
    reads .b6p2x16 (one 6-bit value a byte): unpack each 16-byte unit in place."""
    out = smem.copy()
    for address in box_elements(tm, req).smem_address.reshape(-1):
        out[address:address + 16] = unpack_b6(smem[address:address + 12].reshape(1, 12))[0]
    return out


def test_b6_packing_round_trip():
    values = np.arange(64, dtype=np.uint8).reshape(4, 16)
    packed = pack_b6(values | 0xC0)                 # the 2 MSBs are dropped
    assert (unpack_b6(packed) == values).all()
    # value i at bits [6i, 6i+6) of the little-endian 96-bit group
    group = int.from_bytes(packed[1].tobytes(), "little")
    assert [(group >> (6 * i)) & 63 for i in range(16)] == values[1].tolist()


@pytest.mark.parametrize("fill,dtype,pattern", [
    (OobFill.NONE, DataType.FLOAT32, b"\0\0\0\0"),
    (OobFill.NAN_REQUEST_ZERO_FMA, DataType.FLOAT32, (0x7FFFFFFF).to_bytes(4, "little")),
    (OobFill.NAN_REQUEST_ZERO_FMA, DataType.FLOAT16, (0x7FFF).to_bytes(2, "little")),
    (OobFill.NAN_REQUEST_ZERO_FMA, DataType.BFLOAT16, (0x7FFF).to_bytes(2, "little")),
])
def test_oob_fill(fill, dtype, pattern):
    """A 16-byte row starting one row above the tensor: row 0 all fill, row 1 data."""
    size = TYPE_INFO[dtype].unit_global_bytes
    n = 16 // size
    tm = TensorMap(MapKind.TILED, dtype, 0x100, (n, 4), (16,), (n, 2), (1, 1), oob_fill=fill)
    gmem = GlobalMemory(0x100, np.arange(64, dtype=np.uint8))
    smem = np.zeros(64, dtype=np.uint8)
    result = load(tm, Request(Operation.LOAD, (0, -1)), gmem, smem)
    assert smem[:16].tobytes() == pattern * n
    assert (smem[16:32] == np.arange(16)).all()
    assert result.transaction_bytes == 32 and result.defined[:32].all() and not result.defined[32:].any()


def test_padding_is_dont_care():
    tm = TensorMap(MapKind.TILED, DataType.U4_ALIGN16B, 0x0, (128, 1), (64,), (128, 1), (1, 1))
    gmem = GlobalMemory(0, np.arange(64, dtype=np.uint8))
    smem = np.full(128, 0xEE, dtype=np.uint8)
    result = load(tm, Request(Operation.LOAD, (0, 0)), gmem, smem)
    for chunk in range(8):
        assert (smem[16 * chunk:16 * chunk + 8] == np.arange(8 * chunk, 8 * chunk + 8)).all()
        assert not result.defined[16 * chunk + 8:16 * chunk + 16].any()
    assert result.transaction_bytes == 128


# reductions: expected values derived here from PTX's definitions
def _reduce_case(dtype, old, src, op):
    info = TYPE_INFO[dtype]
    n = len(old)
    tm = TensorMap(MapKind.TILED, dtype, 0x0, (n, 1), (n * info.unit_global_bytes,), (n, 1), (1, 1))
    gmem = GlobalMemory(0, np.array(old, dtype=info.numpy_dtype).view(np.uint8).copy())
    smem = np.array(src, dtype=info.numpy_dtype).view(np.uint8).copy()
    reduce(tm, Request(Operation.REDUCE, (0, 0), reduce_op=op), smem, gmem)
    return gmem.data.view(info.numpy_dtype).tolist()


@pytest.mark.parametrize("op,old,src,expected", [
    (ReduceOp.ADD, [1, 2, 0xFFFFFFFF, 7], [5, 6, 2, 0], [6, 8, 1, 7]),          # wraps mod 2^32
    (ReduceOp.MIN, [1, 9, 3, 3], [5, 6, 2, 3], [1, 6, 2, 3]),
    (ReduceOp.MAX, [1, 9, 3, 3], [5, 6, 2, 3], [5, 9, 3, 3]),
    (ReduceOp.INC, [0, 4, 5, 9], [5, 5, 5, 5], [1, 5, 0, 0]),                   # old >= src ? 0 : old + 1
    (ReduceOp.DEC, [0, 4, 5, 9], [5, 5, 5, 5], [5, 3, 4, 5]),                   # old == 0 or old > src ? src : old - 1
    (ReduceOp.AND, [0b1100] * 4, [0b1010] * 4, [0b1000] * 4),
    (ReduceOp.OR, [0b1100] * 4, [0b1010] * 4, [0b1110] * 4),
    (ReduceOp.XOR, [0b1100] * 4, [0b1010] * 4, [0b0110] * 4),
])
def test_reduce_u32(op, old, src, expected):
    assert _reduce_case(DataType.UINT32, old, src, op) == expected


def test_reduce_floats():
    assert _reduce_case(DataType.FLOAT32, [1.5, -2.0, 0.25, 8.0], [0.5, 2.0, 0.25, -1.0], ReduceOp.ADD) == [2.0, 0.0, 0.5, 7.0]
    f16 = _reduce_case(DataType.FLOAT16, [1.0] * 8, [2048.0] * 8, ReduceOp.ADD)
    assert f16 == [2048.0] * 8      # 2049 is not an f16 (11-bit significand): ties to even
    # bf16 1.0 = 0x3F80, 2.0 = 0x4000, 3.0 = 0x4040; min(1, 2) = 1
    assert _reduce_case(DataType.BFLOAT16, [0x3F80] * 8, [0x4000] * 8, ReduceOp.ADD) == [0x4040] * 8
    assert _reduce_case(DataType.BFLOAT16, [0x3F80] * 8, [0x4000] * 8, ReduceOp.MIN) == [0x3F80] * 8
    assert _reduce_case(DataType.INT32, [-5, 3, 0, 1], [2, -7, 0, 1], ReduceOp.MIN) == [-5, -7, 0, 1]


def test_reduce_skips_out_of_bounds_and_rejects_illegal_pairs():
    tm = TensorMap(MapKind.TILED, DataType.UINT32, 0x0, (2, 1), (16,), (4, 1), (1, 1))
    gmem = GlobalMemory(0, np.array([10, 20, 30, 40], dtype="<u4").view(np.uint8).copy())
    smem = np.array([1, 1, 1, 1], dtype="<u4").view(np.uint8).copy()
    reduce(tm, Request(Operation.REDUCE, (0, 0)), smem, gmem)
    assert gmem.data.view("<u4").tolist() == [11, 21, 30, 40]
    with pytest.raises(TmaError) as caught:
        reduce(tm.replace(dtype=DataType.FLOAT64, box_dims=(2, 1)), Request(Operation.REDUCE, (0, 0)), smem, gmem)
    assert caught.value.code == ErrorCode.REDUCE_TYPE


def test_prefetch_lists_in_bounds_addresses():
    tm = TensorMap(MapKind.TILED, DataType.UINT8, 0x1000, (20, 3), (32,), (16, 2), (1, 1))
    addresses = prefetch(tm, Request(Operation.PREFETCH, (8, 2))).tolist()
    assert addresses == [0x1000 + 2 * 32 + x for x in range(8, 20)]


@pytest.mark.parametrize("operation", [Operation.LOAD, Operation.STORE])
def test_box_larger_than_shared_memory_is_refused_before_it_is_built(operation):
    """A box of 16 x 256^4 bytes cannot fit a 64 KiB shared memory: SMEM_BOUNDS from the
    fields alone, holding under 1 MiB (building its rows took 32 GiB)."""
    tm = TensorMap(MapKind.TILED, DataType.UINT8, 0x1000, (16, 256, 256, 256, 256), (16, 4096, 1 << 20, 1 << 28),
                   (16, 256, 256, 256, 256), (1,) * 5)
    smem, gmem = np.zeros(1 << 16, dtype=np.uint8), GlobalMemory.zeros(0x1000, 16)
    copy = {Operation.LOAD: lambda: load(tm, Request(operation, (0,) * 5), gmem, smem),
            Operation.STORE: lambda: store(tm, Request(operation, (0,) * 5), smem, gmem)}[operation]

    def refused():
        with pytest.raises(TmaError) as caught:
            copy()
        return caught.value

    error, peak = peak_bytes(refused)
    assert str(error) == ("SMEM_BOUNDS: smem_address = 0x0 needs 68719476736 bytes for the box, "
                          "more than the 65536 bytes of shared memory")
    assert peak < 1 << 20
