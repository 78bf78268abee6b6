"""The driver encoders' arguments (``encode_tiled``, ``encode_im2col``, ``encode_im2col_wide``):
each argument in the wrong form is refused with FIELD_TYPE (or its range rule) naming the
field, never truncated, parsed or iterated character by character."""

import numpy as np
import pytest

from tma_unit.model import (DataType, ErrorCode, Swizzle, TmaError, encode_im2col, encode_im2col_wide,
                            encode_tiled)

#: cuTensorMapEncodeTiled's arguments for a legal fp16 4096 x 4096 map (the README's).
TILED = dict(tensorDataType=DataType.FLOAT16, tensorRank=2, globalAddress=0x10000, globalDim=[4096, 4096],
             globalStrides=[8192], boxDim=[64, 256], elementStrides=[1, 1], swizzle=Swizzle.B128)
#: cuTensorMapEncodeIm2col's, for an NHWC fp16 tensor of 8 x 9 x 14 x 64.
IM2COL = dict(tensorDataType=DataType.FLOAT16, tensorRank=4, globalAddress=0x10000, globalDim=[64, 14, 9, 8],
              globalStrides=[128, 1792, 16128], pixelBoxLowerCorner=[-1, -1], pixelBoxUpperCorner=[-1, -1],
              channelsPerPixel=64, pixelsPerColumn=32, elementStrides=[1, 1, 1, 1], swizzle=Swizzle.B128)
#: cuTensorMapEncodeIm2colWide's, for the same tensor.
WIDE = dict(tensorDataType=DataType.FLOAT16, tensorRank=4, globalAddress=0x10000, globalDim=[64, 14, 9, 8],
            globalStrides=[128, 1792, 16128], pixelBoxLowerCornerWidth=-1, pixelBoxUpperCornerWidth=-1,
            channelsPerPixel=64, pixelsPerColumn=32, elementStrides=[1, 1, 1, 1])

ENCODERS = {"tiled": (encode_tiled, TILED), "im2col": (encode_im2col, IM2COL), "wide": (encode_im2col_wide, WIDE)}

CASES = [
    # (id, encoder, changed arguments, code, message)
    ("rank-bool", "tiled", dict(tensorRank=True), ErrorCode.FIELD_TYPE, "FIELD_TYPE: rank = True is not an integer"),
    ("rank-none", "tiled", dict(tensorRank=None), ErrorCode.FIELD_TYPE, "FIELD_TYPE: rank = None is not an integer"),
    ("rank-string", "tiled", dict(tensorRank="2"), ErrorCode.FIELD_TYPE, "FIELD_TYPE: rank = '2' is not an integer"),
    ("rank-float", "tiled", dict(tensorRank=2.0), ErrorCode.FIELD_TYPE, "FIELD_TYPE: rank = 2.0 is not an integer"),
    ("rank-0", "tiled", dict(tensorRank=0), ErrorCode.RANK_RANGE, "RANK_RANGE: rank = 0 is outside 1..5"),
    ("rank-6", "tiled", dict(tensorRank=6), ErrorCode.RANK_RANGE, "RANK_RANGE: rank = 6 is outside 1..5"),
    ("address-none", "tiled", dict(globalAddress=None), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_address = None is not an integer"),
    ("address-string", "tiled", dict(globalAddress="0x10000"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_address = '0x10000' is not an integer"),
    ("address-float", "tiled", dict(globalAddress=65536.0), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_address = 65536.0 is not an integer"),
    ("address-numpy-float", "tiled", dict(globalAddress=np.float64(65536)), ErrorCode.FIELD_TYPE,
     f"FIELD_TYPE: global_address = {np.float64(65536)!r} is not an integer"),    # numpy 1 and 2 differ
    ("dims-none", "tiled", dict(globalDim=None), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_dims = None is not a list of integers"),
    ("dims-string", "tiled", dict(globalDim="4096"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_dims = '4096' is not a list of integers"),
    ("dims-float", "tiled", dict(globalDim=[4096, 1000.7]), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_dims[1] = 1000.7 is not an integer"),
    ("dims-short", "tiled", dict(globalDim=[4096]), ErrorCode.ARRAY_LENGTH,
     "ARRAY_LENGTH: global_dims = [4096] has fewer than 2 entries"),
    ("dims-junk-past-rank", "tiled", dict(globalDim=[4096, 4096, "x"]), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_dims[2] = 'x' is not an integer"),
    ("strides-string", "tiled", dict(globalStrides="8192"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_strides = '8192' is not a list of integers"),
    ("strides-none", "tiled", dict(globalStrides=None), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_strides = None is not a list of integers"),
    ("strides-scalar", "tiled", dict(globalStrides=8192), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_strides = 8192 is not a list of integers"),
    ("strides-float", "tiled", dict(globalStrides=[8192.0]), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_strides[0] = 8192.0 is not an integer"),
    ("strides-set", "tiled", dict(globalStrides={8192}), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_strides = {8192} is not a list of integers"),
    ("strides-empty", "tiled", dict(globalStrides=[]), ErrorCode.ARRAY_LENGTH,
     "ARRAY_LENGTH: global_strides = [] has 0 entries, not the 1 a rank-2 TILED map needs"),
    ("box-string", "tiled", dict(boxDim="64,256"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: box_dims = '64,256' is not a list of integers"),
    ("box-dict", "tiled", dict(boxDim={0: 64, 1: 256}), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: box_dims = {0: 64, 1: 256} is not a list of integers"),
    ("box-bool", "tiled", dict(boxDim=[64, True]), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: box_dims[1] = True is not an integer"),
    ("element-strides-none", "tiled", dict(elementStrides=None), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: element_strides = None is not a list of integers"),
    ("interleave-none", "tiled", dict(interleave=None), ErrorCode.ENUM_RANGE,
     "ENUM_RANGE: interleave = None is not a Interleave (one of NONE, B16, B32)"),
    ("swizzle-bool", "tiled", dict(swizzle=True), ErrorCode.ENUM_RANGE,
     "ENUM_RANGE: swizzle = True is not a Swizzle (one of NONE, B32, B64, B128, B128_ATOM_32B, "
     "B128_ATOM_32B_FLIP_8B, B128_ATOM_64B, B96)"),
    ("dtype-float", "tiled", dict(tensorDataType=6.0), ErrorCode.ENUM_RANGE,
     "ENUM_RANGE: dtype = 6.0 is not a DataType (one of UINT8, UINT16, UINT32, INT32, UINT64, INT64, "
     "FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ, U4_ALIGN8B, U4_ALIGN16B, "
     "U6_ALIGN16B)"),
    ("im2col-rank-bool", "im2col", dict(tensorRank=True), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: rank = True is not an integer"),
    ("im2col-strides-string", "im2col", dict(globalStrides="128"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_strides = '128' is not a list of integers"),
    ("im2col-corner-string", "im2col", dict(pixelBoxLowerCorner="-1-1"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: lower_corner = '-1-1' is not a list of integers"),
    ("im2col-corner-none", "im2col", dict(pixelBoxUpperCorner=None), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: upper_corner = None is not a list of integers"),
    ("im2col-channels-none", "im2col", dict(channelsPerPixel=None), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: channels_per_pixel = None is not an integer"),
    ("im2col-pixels-float", "im2col", dict(pixelsPerColumn=32.5), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: pixels_per_column = 32.5 is not an integer"),
    ("wide-rank-none", "wide", dict(tensorRank=None), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: rank = None is not an integer"),
    ("wide-corner-float", "wide", dict(pixelBoxLowerCornerWidth=-1.5), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: lower_corner[0] = -1.5 is not an integer"),
    ("wide-corner-list", "wide", dict(pixelBoxUpperCornerWidth=[-1]), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: upper_corner[0] = [-1] is not an integer"),
    ("wide-mode-none", "wide", dict(mode=None), ErrorCode.ENUM_RANGE,
     "ENUM_RANGE: wide_mode = None is not a Im2colWideMode (one of W, W128)"),
    ("wide-dims-string", "wide", dict(globalDim="64"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_dims = '64' is not a list of integers"),
]


@pytest.mark.parametrize("encoder,changes,code,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_encoder_refuses_an_argument_in_the_wrong_form(encoder, changes, code, message):
    encode, arguments = ENCODERS[encoder]
    encode(**arguments)                                     # legal as given
    with pytest.raises(TmaError) as caught:
        encode(**{**arguments, **changes})
    assert caught.value.code == code
    assert str(caught.value) == message


def test_numpy_integers_are_integers():
    """A numpy integer is an integer (arrays of shapes and strides often are numpy)."""
    tm = encode_tiled(DataType.FLOAT16, np.int64(2), np.uint64(0x10000), np.array([4096, 4096]),
                      np.array([8192], dtype=np.int32), (64, 256), [np.int8(1), np.int8(1)], swizzle=np.int64(3))
    assert tm == encode_tiled(**TILED)
    assert all(type(v) is int for v in (tm.global_address, *tm.global_dims, *tm.global_strides))


@pytest.mark.parametrize("argument,field_name,value,count", [
    ("globalDim", "global_dims", [4096, 4096, 7, 7, 7], 2),
    ("globalStrides", "global_strides", [8192, 16], 1),
    ("boxDim", "box_dims", [64, 256, 1], 2),
    ("elementStrides", "element_strides", [1, 1, 1, 1, 1], 2),
])
def test_entries_past_the_rank_are_refused(argument, field_name, value, count):
    """An array longer than tensorRank says is a mistake about the rank: refused, not cut
    to the rank (nothing is guessed at)."""
    with pytest.raises(TmaError) as caught:
        encode_tiled(**{**TILED, argument: value})
    assert caught.value.code == ErrorCode.ARRAY_LENGTH
    assert str(caught.value) == (f"ARRAY_LENGTH: {field_name} = {value} has {len(value)} entries, "
                                 f"more than the {count} tensorRank gives")
