"""The vectorized traversal and transaction stream against the slow per-element loop."""

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from tma_unit.model import (DataType, Interleave, Operation, Request, Swizzle, TensorMap,
                            MapKind, box_elements, row_walk, transactions, transaction_bytes, TYPE_INFO)
from tma_unit.model.reference import reference_elements

from strategies import tiled_cases, gather4_cases, im2col_cases, wide_cases


def _vectorized(tm, req):
    e = box_elements(tm, req)
    return list(zip(e.global_address.reshape(-1).tolist(), e.smem_address.reshape(-1).tolist(),
                    e.in_bounds.reshape(-1).tolist()))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_cases())
def test_vectorized_equals_per_element_loop(case):
    tm, req = case
    assert _vectorized(tm, req) == reference_elements(tm, req)


@settings(max_examples=200)
@given(tiled_cases())
def test_transactions_group_the_elements_into_chunks(case):
    """Each transaction is the next 16 smem bytes of its row: its first unit's addresses,
    its units' in-bounds bits; consecutive chunks tile each row."""
    tm, req = case
    info = tm.info
    elements = reference_elements(tm, req)
    per_chunk = 16 // info.unit_smem_bytes
    units = len(elements) // box_elements(tm, req).shape[0]
    stream = transactions(tm, req)
    i = 0
    expected = []
    for row_start in range(0, len(elements), units):
        for first in range(row_start, row_start + units, per_chunk):
            chunk = elements[first:min(first + per_chunk, row_start + units)]
            mask = sum(1 << u for u, (_, _, inside) in enumerate(chunk) if inside)
            smem = 0 if req.operation == Operation.PREFETCH else chunk[0][1]
            expected.append((chunk[0][0], smem, mask, len(chunk), len(chunk) * info.unit_global_bytes))
    got = [(t.global_address, t.smem_address, t.mask, t.units, t.global_length) for t in stream]
    assert got == expected
    assert [t.last for t in stream] == [False] * (len(stream) - 1) + [True]


def test_gemm_tile_order_and_byte_count():
    """A 64 x 256 fp16 tile, 128B swizzle: 256 rows of 8 chunks, row r chunk c at
    dst + 128 r + 16 (c ^ (r % 8))."""
    tm = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x10000, (4096, 4096), (8192,), (64, 256), (1, 1),
                   swizzle=Swizzle.B128)
    req = Request(Operation.LOAD, (128, 512), smem_address=0x2000)
    stream = transactions(tm, req)
    assert len(stream) == 256 * 8
    for i, t in enumerate(stream):
        r, c = divmod(i, 8)
        assert t.global_address == 0x10000 + (512 + r) * 8192 + 2 * 128 + 16 * c
        assert t.smem_address == 0x2000 + 128 * r + 16 * (c ^ (r % 8))
        assert t.mask == 0xFF and t.global_length == 16
    assert transaction_bytes(tm, req) == 64 * 256 * 2


def test_oob_corner_masks():
    """A box hanging off the top-left corner: negative coordinates are out of bounds."""
    tm = TensorMap(MapKind.TILED, DataType.FLOAT32, 0x0, (10, 10), (64,), (8, 4), (1, 1))
    req = Request(Operation.LOAD, (-2, -1))
    stream = list(transactions(tm, req))
    assert len(stream) == 4 * 2
    # row 0 is y = -1: all out; rows 1..3: x = -2..5, chunk 0 holds x -2..1, chunk 1 x 2..5
    assert [t.mask for t in stream] == [0, 0, 0b1100, 0b1111, 0b1100, 0b1111, 0b1100, 0b1111]


def test_element_strides_skip_elements():
    """Element strides (2 in dim 1) keep ceil(box / stride) rows, every other one."""
    tm = TensorMap(MapKind.TILED, DataType.UINT8, 0x0, (64, 64), (64,), (16, 7), (1, 2))
    stream = list(transactions(tm, Request(Operation.LOAD, (0, 3))))
    assert [t.global_address for t in stream] == [64 * y for y in (3, 5, 7, 9)]


def test_interleave_rows_are_padded_to_chunks():
    """16B interleave, fp16, box[0] = 3 with element stride 2: 2 elements a row (4 bytes),
    a 16-byte row pitch; the unit pitch in global memory is 4 bytes."""
    tm = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x0, (8, 4, 2), (16, 64), (3, 2, 1), (2, 1, 1),
                   interleave=Interleave.B16)
    stream = list(transactions(tm, Request(Operation.LOAD, (0, 0, 0), smem_address=0x100)))
    assert [(t.smem_address, t.units, t.global_length, t.element_pitch) for t in stream] == [
        (0x100, 2, 4, 4), (0x110, 2, 4, 4)]


def test_packed_lengths():
    """b4x16_p64 moves 8 global bytes a chunk, b6x16_p32 12, b4x16 16."""
    for dtype, length in ((DataType.U4_ALIGN16B, 8), (DataType.U6_ALIGN16B, 12), (DataType.U4_ALIGN8B, 16)):
        stride = 128 if dtype != DataType.U4_ALIGN8B else 64
        tm = TensorMap(MapKind.TILED, dtype, 0x0, (128, 4), (stride,), (128, 2), (1, 1))
        stream = list(transactions(tm, Request(Operation.LOAD, (0, 0))))
        assert {t.global_length for t in stream} == {length}
        assert len(stream) == 2 * (8 if TYPE_INFO[dtype].padded else 4)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(tiled_cases(operations=tuple(Operation)), gather4_cases(),
                 im2col_cases(operations=tuple(Operation)), wide_cases(max_halo=31)))
def test_byte_count_from_the_fields_equals_the_walk(case):
    """transaction_bytes counts the rows from the map and the request (every access mode,
    im2col::w halos included); the rows walked and the chunks emitted give the same."""
    tm, req = case
    walked = row_walk(tm, req).rows * tm.row_pitch()
    assert transaction_bytes(tm, req) == walked == 16 * len(transactions(tm, req))
