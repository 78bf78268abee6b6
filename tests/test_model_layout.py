"""The 128-byte descriptor image: round trips, the layout table, illegal stored values."""

import pytest
from hypothesis import given, settings

from tma_unit.model import (DataType, ErrorCode, MapKind, Swizzle, TensorMap, TmaError,
                            encode_descriptor, decode_descriptor, DESCRIPTOR_FIELDS, DESCRIPTOR_BYTES)
from tma_unit.model import layout
from tma_unit.model.layout import DescriptorField, descriptor_fields, flat_fields

from strategies import tiled_cases


@settings(max_examples=300)
@given(tiled_cases())
def test_round_trip(case):
    tm, _ = case
    image = encode_descriptor(tm)
    assert len(image) == DESCRIPTOR_BYTES
    assert decode_descriptor(image) == tm


@pytest.mark.parametrize("extra,message", [
    (DescriptorField("on_rank", 65, 2), "descriptor field on_rank overlaps or runs past the image"),
    (DescriptorField("past_the_end", 1020, 8), "descriptor field past_the_end overlaps or runs past the image"),
    (DescriptorField("array", 488, 8, 4), "descriptor field array[3] overlaps or runs past the image"),
])
def test_the_table_check_refuses_a_field_that_overlaps_or_runs_past_the_image(monkeypatch, extra, message):
    """model/layout.py checks its table when imported (the real table passes, or nothing
    imports it); the same check refuses the table with one more field: over the rank's
    bits 64..66, past the image's 1024 bits, or an array whose entries 0..2 fill the free
    bits 488..511 and whose entry 3 meets lower_corner at bit 512."""
    monkeypatch.setattr(layout, "DESCRIPTOR_FIELDS", DESCRIPTOR_FIELDS + (extra,))
    with pytest.raises(AssertionError) as caught:
        layout._check_table()
    assert str(caught.value) == message


def test_known_encoding():
    """Field values land where the table says, in the PTX encodings."""
    tm = TensorMap(MapKind.TILED, DataType.BFLOAT16, 0x12340, (64, 32), (256,), (64, 8), (1, 2),
                   swizzle=Swizzle.B128_ATOM_32B)
    bits = int.from_bytes(encode_descriptor(tm), "little")
    table = {name: (offset, width) for name, offset, width, _ in flat_fields()}

    def read(name):
        offset, width = table[name]
        return (bits >> offset) & ((1 << width) - 1)

    assert read("global_address") == 0x12340
    assert read("rank") == 1                    # rank - 1
    assert read("elemtype") == 10               # PTX bf16 (driver BFLOAT16 is 9)
    assert read("swizzle_mode") == 3 and read("swizzle_atomicity") == 1
    assert read("global_dim[0]") == 63 and read("global_dim[1]") == 31
    assert read("global_stride[0]") == 256 // 16
    assert read("box_dim[1]") == 7 and read("element_stride[1]") == 1


BASE = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x1000, (64, 32, 8), (128, 4096), (64, 16, 2), (1, 1, 1))


def _patched(name, value):
    offset, width = next((o, w) for n, o, w, _ in flat_fields() if n == name)
    bits = int.from_bytes(encode_descriptor(BASE), "little")
    bits = (bits & ~(((1 << width) - 1) << offset)) | (value << offset)
    return bits.to_bytes(DESCRIPTOR_BYTES, "little")


@pytest.mark.parametrize("name,value,code,message", [
    ("rank", 5, ErrorCode.RANK_RANGE, "RANK_RANGE: rank = 6 is outside 1..5"),
    ("interleave_layout", 3, ErrorCode.ENUM_RANGE,
     "ENUM_RANGE: interleave = 3 is not a Interleave (one of NONE, B16, B32)"),
    ("swizzle_mode", 5, ErrorCode.ENUM_RANGE, "ENUM_RANGE: swizzle_mode = 5 is not a SwizzleMode (0..4)"),
    ("swizzle_atomicity", 1, ErrorCode.SWIZZLE_ATOMICITY,
     "SWIZZLE_ATOMICITY: swizzle_atomicity = A32B is not allowed with swizzle mode NONE"),
    ("kind", 3, ErrorCode.ENUM_RANGE, "ENUM_RANGE: kind = 3 is not a MapKind (one of TILED, IM2COL, IM2COL_WIDE)"),
    ("global_stride[0]", 1, ErrorCode.STRIDE_EXTENT,
     "STRIDE_EXTENT: global_strides[0] = 16 is smaller than the 128 bytes of dimension 0"),
    ("box_dim[0]", 5, ErrorCode.BOX_INNER_BYTES,
     "BOX_INNER_BYTES: box_dims[0] = 6 gives an inner row of 12 bytes, not a multiple of 16"),
    ("global_address", 0x1004, ErrorCode.ADDRESS_ALIGN, "ADDRESS_ALIGN: global_address = 0x1004 is not a multiple of 16"),
])
def test_illegal_image_raises_the_validation_error(name, value, code, message):
    with pytest.raises(TmaError) as caught:
        decode_descriptor(_patched(name, value))
    assert caught.value.code == code
    assert str(caught.value) == message


def test_every_table_field_is_documented():
    assert all(f.doc for f in DESCRIPTOR_FIELDS)
    assert set(descriptor_fields(encode_descriptor(BASE))) == {f.name for f in DESCRIPTOR_FIELDS}


def test_element_stride_field_holds_exactly_the_legal_range():
    """3 bits store 1..8 as value - 1: every stored value is legal, the largest is 8."""
    assert decode_descriptor(_patched("element_stride[2]", 7)).element_strides[2] == 8
