"""One test per validation rule of docs/spec.md ("Tensor-map rules", "Request rules"):
each breaks one rule of an otherwise legal descriptor or request and asserts the exact
code and message."""

import numpy as np
import pytest

from tma_unit.model import (DataType, ErrorCode, Interleave, MapKind, Operation, Request,
                            ReduceOp, Swizzle, TensorMap, TmaError, OobFill, AccessMode,
                            encode_tiled, validate_request, RULES)
from tma_unit.model.config import UnitConfig
from tma_unit.model.layout import decode_descriptor, encode_descriptor

BASE = dict(kind=MapKind.TILED, dtype=DataType.FLOAT16, global_address=0x1000,
            global_dims=(64, 32, 8), global_strides=(128, 4096), box_dims=(64, 16, 2),
            element_strides=(1, 1, 1))


def tiled(**changes):
    return TensorMap(**{**BASE, **changes})


DESCRIPTOR_CASES = [
    # (id, changes, code, message)
    ("rank-0", dict(global_dims=(), global_strides=(), box_dims=(), element_strides=()),
     ErrorCode.RANK_RANGE, "RANK_RANGE: rank = 0 is outside 1..5 for a TILED map"),
    ("rank-6", dict(global_dims=(2,) * 6, global_strides=(16,) * 5, box_dims=(8,) * 6, element_strides=(1,) * 6),
     ErrorCode.RANK_RANGE, "RANK_RANGE: rank = 6 is outside 1..5 for a TILED map"),
    ("rank-interleave", dict(global_dims=(64, 32), global_strides=(128,), box_dims=(8, 4), element_strides=(1, 1),
                             interleave=Interleave.B16),
     ErrorCode.RANK_INTERLEAVE, "RANK_INTERLEAVE: rank = 2 is below 3 with interleave B16"),
    ("enum-dtype", dict(dtype=16), ErrorCode.ENUM_RANGE,
     "ENUM_RANGE: dtype = 16 is not a DataType (one of UINT8, UINT16, UINT32, INT32, UINT64, INT64, "
     "FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ, U4_ALIGN8B, U4_ALIGN16B, U6_ALIGN16B)"),
    ("enum-interleave", dict(interleave=3), ErrorCode.ENUM_RANGE,
     "ENUM_RANGE: interleave = 3 is not a Interleave (one of NONE, B16, B32)"),
    ("array-length", dict(box_dims=(64, 16)), ErrorCode.ARRAY_LENGTH,
     "ARRAY_LENGTH: box_dims = [64, 16] has 2 entries, not the 3 a rank-3 TILED map needs"),
    ("address-16", dict(global_address=0x1008), ErrorCode.ADDRESS_ALIGN,
     "ADDRESS_ALIGN: global_address = 0x1008 is not a multiple of 16"),
    ("address-32-interleave", dict(global_address=0x1010, interleave=Interleave.B32, swizzle=Swizzle.B32,
                                   global_strides=(128, 4096), box_dims=(16, 16, 2)),
     ErrorCode.ADDRESS_ALIGN, "ADDRESS_ALIGN: global_address = 0x1010 is not a multiple of 32"),
    ("address-32-packed", dict(dtype=DataType.U4_ALIGN16B, global_address=0x1010, global_dims=(128, 32, 8),
                               box_dims=(128, 16, 2)),
     ErrorCode.ADDRESS_ALIGN, "ADDRESS_ALIGN: global_address = 0x1010 is not a multiple of 32"),
    ("dim-zero", dict(global_dims=(64, 0, 8)), ErrorCode.DIM_RANGE,
     "DIM_RANGE: global_dims[1] = 0 is outside 1..2^32"),
    ("dim-large", dict(global_dims=(64, 32, (1 << 32) + 1)), ErrorCode.DIM_RANGE,
     "DIM_RANGE: global_dims[2] = 4294967297 is outside 1..2^32"),
    ("dim-packed-128", dict(dtype=DataType.U6_ALIGN16B, global_address=0x1000, global_dims=(192, 32, 8),
                            global_strides=(160, 8192), box_dims=(128, 16, 2)),
     ErrorCode.DIM_PACKED, "DIM_PACKED: global_dims[0] = 192 is not a multiple of 128 for U6_ALIGN16B"),
    ("dim-packed-even", dict(dtype=DataType.U4_ALIGN8B, global_dims=(63, 32, 8)), ErrorCode.DIM_PACKED,
     "DIM_PACKED: global_dims[0] = 63 is not even for U4_ALIGN8B"),
    ("stride-16", dict(global_strides=(200, 4096)), ErrorCode.STRIDE_ALIGN,
     "STRIDE_ALIGN: global_strides[0] = 200 is not a multiple of 16"),
    ("stride-32", dict(interleave=Interleave.B32, swizzle=Swizzle.B32, box_dims=(16, 16, 2),
                       global_strides=(144, 4608)),
     ErrorCode.STRIDE_ALIGN, "STRIDE_ALIGN: global_strides[0] = 144 is not a multiple of 32"),
    ("stride-range", dict(global_strides=(128, 1 << 40)), ErrorCode.STRIDE_RANGE,
     "STRIDE_RANGE: global_strides[1] = 1099511627776 is not below 2^40"),
    ("stride-extent-0", dict(global_strides=(112, 4096)), ErrorCode.STRIDE_EXTENT,
     "STRIDE_EXTENT: global_strides[0] = 112 is smaller than the 128 bytes of dimension 0"),
    ("stride-extent-1", dict(global_strides=(128, 2048)), ErrorCode.STRIDE_EXTENT,
     "STRIDE_EXTENT: global_strides[1] = 2048 is smaller than the 4096 bytes of dimension 1"),
    ("box-zero", dict(box_dims=(64, 0, 2)), ErrorCode.BOX_RANGE,
     "BOX_RANGE: box_dims[1] = 0 is outside 1..256"),
    ("box-257", dict(box_dims=(64, 16, 257)), ErrorCode.BOX_RANGE,
     "BOX_RANGE: box_dims[2] = 257 is outside 1..256"),
    ("box-inner", dict(box_dims=(12, 16, 2)), ErrorCode.BOX_INNER_BYTES,
     "BOX_INNER_BYTES: box_dims[0] = 12 gives an inner row of 24 bytes, not a multiple of 16"),
    ("box-packed", dict(dtype=DataType.U4_ALIGN16B, global_dims=(256, 32, 8), box_dims=(64, 16, 2)),
     ErrorCode.BOX_PACKED, "BOX_PACKED: box_dims[0] = 64 is not 128 for U4_ALIGN16B"),
    # b4x16 rows are whole bytes: with interleave no other rule keeps box_dims[0] even
    # (docs/decisions.md); a box of one value was an empty, 0-byte load
    ("box-packed-odd-1", dict(dtype=DataType.U4_ALIGN8B, interleave=Interleave.B16, box_dims=(1, 16, 2)),
     ErrorCode.BOX_PACKED, "BOX_PACKED: box_dims[0] = 1 is not even for U4_ALIGN8B"),
    ("box-packed-odd-7", dict(dtype=DataType.U4_ALIGN8B, interleave=Interleave.B16, box_dims=(7, 16, 2)),
     ErrorCode.BOX_PACKED, "BOX_PACKED: box_dims[0] = 7 is not even for U4_ALIGN8B"),
    ("element-stride", dict(element_strides=(1, 9, 1)), ErrorCode.ELEMENT_STRIDE_RANGE,
     "ELEMENT_STRIDE_RANGE: element_strides[1] = 9 is outside 1..8"),
    ("swizzle-span", dict(swizzle=Swizzle.B64), ErrorCode.SWIZZLE_SPAN,
     "SWIZZLE_SPAN: box_dims[0] = 64 gives an inner row of 128 bytes, wider than the 64-byte span of swizzle B64"),
    ("interleave-swizzle", dict(interleave=Interleave.B32, swizzle=Swizzle.B64, box_dims=(16, 16, 2)),
     ErrorCode.INTERLEAVE_SWIZZLE, "INTERLEAVE_SWIZZLE: swizzle = B64 is not 32B with interleave B32"),
    ("packed-interleave", dict(dtype=DataType.U6_ALIGN16B, global_address=0x1000, global_dims=(128, 32, 8),
                               global_strides=(128, 4096), box_dims=(128, 16, 2), interleave=Interleave.B16),
     ErrorCode.PACKED_INTERLEAVE, "PACKED_INTERLEAVE: interleave = B16 is not NONE for U6_ALIGN16B"),
    ("packed-swizzle", dict(dtype=DataType.U4_ALIGN16B, global_dims=(128, 32, 8), box_dims=(128, 16, 2),
                            swizzle=Swizzle.B128_ATOM_64B),
     ErrorCode.PACKED_SWIZZLE,
     "PACKED_SWIZZLE: swizzle = B128_ATOM_64B is not one of NONE, B128, B128_ATOM_32B for U4_ALIGN16B"),
    ("oob-nan-int", dict(dtype=DataType.UINT16, oob_fill=OobFill.NAN_REQUEST_ZERO_FMA), ErrorCode.OOB_NAN_TYPE,
     "OOB_NAN_TYPE: oob_fill = NAN_REQUEST_ZERO_FMA is not allowed for UINT16"),
    ("oob-nan-packed", dict(dtype=DataType.U4_ALIGN8B, box_dims=(64, 16, 2), oob_fill=OobFill.NAN_REQUEST_ZERO_FMA),
     ErrorCode.OOB_NAN_TYPE, "OOB_NAN_TYPE: oob_fill = NAN_REQUEST_ZERO_FMA is not allowed for U4_ALIGN8B"),
    ("swizzle-96-interleave", dict(interleave=Interleave.B16, swizzle=Swizzle.B96, box_dims=(8, 16, 2)),
     ErrorCode.SWIZZLE_96B, "SWIZZLE_96B: interleave = B16 is not NONE with the 96B swizzle"),
    ("swizzle-96-span", dict(swizzle=Swizzle.B96), ErrorCode.SWIZZLE_SPAN,
     "SWIZZLE_SPAN: box_dims[0] = 64 gives an inner row of 128 bytes, wider than the 96-byte span of swizzle B96"),
    # numbers are integers: nothing is truncated, parsed or iterated character by character
    ("address-float", dict(global_address=4096.5), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_address = 4096.5 is not an integer"),
    ("address-whole-float", dict(global_address=4096.0), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_address = 4096.0 is not an integer"),
    ("address-nan", dict(global_address=float("nan")), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_address = nan is not an integer"),
    ("address-string", dict(global_address="0x1000"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_address = '0x1000' is not an integer"),
    ("address-bool", dict(global_address=True), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_address = True is not an integer"),
    ("dims-float", dict(global_dims=(64, 32.7, 8)), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_dims[1] = 32.7 is not an integer"),
    ("dims-string", dict(global_dims="64"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_dims = '64' is not a list of integers"),
    ("strides-scalar", dict(global_strides=128), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_strides = 128 is not a list of integers"),
    ("box-none", dict(box_dims=None), ErrorCode.FIELD_TYPE, "FIELD_TYPE: box_dims = None is not a list of integers"),
    ("box-nested", dict(box_dims=(64, [16], 2)), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: box_dims[1] = [16] is not an integer"),
    ("channels-string", dict(channels_per_pixel="0"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: channels_per_pixel = '0' is not an integer"),
    ("long-value-cut", dict(global_strides="x" * 100), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: global_strides = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... is not a list of integers"),
]


@pytest.mark.parametrize("changes,code,message", [c[1:] for c in DESCRIPTOR_CASES],
                         ids=[c[0] for c in DESCRIPTOR_CASES])
def test_descriptor_rule(changes, code, message):
    with pytest.raises(TmaError) as caught:
        tiled(**changes)
    assert caught.value.code == code
    assert str(caught.value) == message


def test_base_is_legal_and_every_code_has_a_rule():
    tiled()
    assert set(RULES) == set(ErrorCode)


def test_encoder_arguments_match_the_driver():
    """encode_tiled takes cuTensorMapEncodeTiled's arguments in its order."""
    tm = encode_tiled(DataType.FLOAT16, 3, 0x1000, [64, 32, 8], [128, 4096], [64, 16, 2], [1, 1, 1],
                      "CU_TENSOR_MAP_INTERLEAVE_NONE", "CU_TENSOR_MAP_SWIZZLE_128B",
                      "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE")
    assert tm == tiled(swizzle=Swizzle.B128, l2_promotion=2)


TM = tiled()
REQUEST_CASES = [
    ("operation-mode", TM, Request(Operation.STORE, (0, 0, 0), mode=AccessMode.GATHER4),
     ErrorCode.OPERATION_MODE, "OPERATION_MODE: mode = GATHER4 does not exist for STORE"),
    ("mode-mismatch", TM, Request(Operation.LOAD, (0, 0, 0), mode=AccessMode.IM2COL),
     ErrorCode.MODE_MISMATCH, "MODE_MISMATCH: mode = IM2COL needs a IM2COL map, not TILED"),
    ("coord-count", TM, Request(Operation.LOAD, (0, 0)),
     ErrorCode.COORD_COUNT, "COORD_COUNT: coordinates = [0, 0] has 2 entries, not 3"),
    ("coord-range", TM, Request(Operation.LOAD, (0, 1 << 31, 0)),
     ErrorCode.COORD_RANGE, "COORD_RANGE: coordinates[1] = 2147483648 is not a signed 32-bit value"),
    ("store-negative", TM, Request(Operation.STORE, (0, -1, 0)),
     ErrorCode.STORE_NEGATIVE_COORD, "STORE_NEGATIVE_COORD: coordinates[1] = -1 is negative in a STORE"),
    ("multicast-store", TM, Request(Operation.STORE, (0, 0, 0), multicast_mask=3),
     ErrorCode.MULTICAST_DIRECTION, "MULTICAST_DIRECTION: multicast_mask = 0x3 is set on a STORE"),
    ("flip-store", tiled(swizzle=Swizzle.B128_ATOM_32B_FLIP_8B), Request(Operation.STORE, (0, 0, 0)),
     ErrorCode.FLIP_8B_DIRECTION,
     "FLIP_8B_DIRECTION: swizzle = B128_ATOM_32B_FLIP_8B is for the load direction only, and not with im2col::w (STORE TILE)"),
    ("packed-direction", tiled(dtype=DataType.U4_ALIGN16B, global_dims=(128, 32, 8), box_dims=(128, 16, 2)),
     Request(Operation.STORE, (0, 0, 0)), ErrorCode.PACKED_DIRECTION,
     "PACKED_DIRECTION: swizzle = NONE is not allowed for a STORE of U4_ALIGN16B"),
    ("packed-coord", tiled(dtype=DataType.U4_ALIGN8B, box_dims=(64, 16, 2)), Request(Operation.LOAD, (64, 0, 0)),
     ErrorCode.PACKED_COORD, "PACKED_COORD: coordinates[0] = 64 is not a multiple of 128 for U4_ALIGN8B"),
    ("smem-align", tiled(swizzle=Swizzle.B128), Request(Operation.LOAD, (0, 0, 0), smem_address=0x440),
     ErrorCode.SMEM_ALIGN, "SMEM_ALIGN: smem_address = 0x440 is not a multiple of 128 for swizzle B128"),
    ("reduce-type", tiled(dtype=DataType.FLOAT64, global_strides=(512, 16384)),
     Request(Operation.REDUCE, (0, 0, 0), reduce_op=ReduceOp.ADD),
     ErrorCode.REDUCE_TYPE, "REDUCE_TYPE: reduce_op = ADD is not defined for FLOAT64"),
    ("gather4-rank", TM, Request(Operation.LOAD, (0, 0, 0, 0, 0), mode=AccessMode.GATHER4),
     ErrorCode.GATHER4_MAP, "GATHER4_MAP: rank = 3 is not 2 for GATHER4"),
    # values the request payload (REQUEST_FIELDS) cannot hold
    ("smem-negative", tiled(swizzle=Swizzle.B128), Request(Operation.LOAD, (0, 0, 0), smem_address=-0x80),
     ErrorCode.FIELD_WIDTH, "FIELD_WIDTH: smem_address = -0x80 does not fit the request's 32-bit field (0..0xffffffff)"),
    ("smem-negative-unaligned", TM, Request(Operation.LOAD, (0, 0, 0), smem_address=-1),
     ErrorCode.FIELD_WIDTH, "FIELD_WIDTH: smem_address = -0x1 does not fit the request's 32-bit field (0..0xffffffff)"),
    ("smem-2-32", TM, Request(Operation.LOAD, (0, 0, 0), smem_address=1 << 32), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: smem_address = 0x100000000 does not fit the request's 32-bit field (0..0xffffffff)"),
    ("smem-prefetch", TM, Request(Operation.PREFETCH, (0, 0, 0), smem_address=1 << 70), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: smem_address = 0x400000000000000000 does not fit the request's 32-bit field (0..0xffffffff)"),
    ("request-id", TM, Request(Operation.LOAD, (0, 0, 0), request_id=1 << 16), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: request_id = 65536 does not fit the request's 16-bit field (0..65535)"),
    ("request-id-negative", TM, Request(Operation.LOAD, (0, 0, 0), request_id=-1), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: request_id = -1 does not fit the request's 16-bit field (0..65535)"),
    ("w-halo-unread", TM, Request(Operation.LOAD, (0, 0, 0), w_halo=1024), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: w_halo = 1024 does not fit the request's 10-bit field (0..1023)"),
    ("offsets-unread", TM, Request(Operation.LOAD, (0, 0, 0), im2col_offsets=(0, 1 << 16)), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: im2col_offsets[1] = 65536 does not fit the request's 16-bit field (0..65535)"),
    ("offsets-count", TM, Request(Operation.LOAD, (0, 0, 0), im2col_offsets=(0, 0, 0, 0)), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: im2col_offsets = [0, 0, 0, 0] has 4 entries; the request holds 3"),
]


@pytest.mark.parametrize("tm,request_,code,message", [c[1:] for c in REQUEST_CASES],
                         ids=[c[0] for c in REQUEST_CASES])
def test_request_rule(tm, request_, code, message):
    with pytest.raises(TmaError) as caught:
        validate_request(tm, request_)
    assert caught.value.code == code
    assert str(caught.value) == message


def test_failed_construction_leaves_nothing_and_the_next_works():
    with pytest.raises(TmaError):
        tiled(global_strides=(200, 4096))
    assert tiled().global_strides == (128, 4096)


REQUEST_FORM_CASES = [
    # (id, make, message): a request's fields in the wrong form, refused on construction
    ("coords-string", lambda: Request(Operation.LOAD, "0,0"),
     "FIELD_TYPE: coordinates = '0,0' is not a list of integers"),
    ("coords-none", lambda: Request(Operation.LOAD, None), "FIELD_TYPE: coordinates = None is not a list of integers"),
    ("coords-float", lambda: Request(Operation.LOAD, (0, 1.5, 0)), "FIELD_TYPE: coordinates[1] = 1.5 is not an integer"),
    ("coords-mapping", lambda: Request(Operation.LOAD, {"x": 0}),
     "FIELD_TYPE: coordinates = {'x': 0} is not a list of integers"),
    ("smem-bool", lambda: Request(Operation.LOAD, (0, 0, 0), smem_address=True),
     "FIELD_TYPE: smem_address = True is not an integer"),
    ("smem-string", lambda: Request(Operation.LOAD, (0, 0, 0), smem_address="0x400"),
     "FIELD_TYPE: smem_address = '0x400' is not an integer"),
    ("offsets-string", lambda: Request(Operation.LOAD, (0, 0, 0), im2col_offsets="1"),
     "FIELD_TYPE: im2col_offsets = '1' is not a list of integers"),
    ("w-halo-float", lambda: Request(Operation.LOAD, (0, 0, 0), w_halo=1.0),
     "FIELD_TYPE: w_halo = 1.0 is not an integer"),
    ("request-id-none", lambda: Request(Operation.LOAD, (0, 0, 0), request_id=None),
     "FIELD_TYPE: request_id = None is not an integer"),
    ("from-list", lambda: Request.from_dict([1, 2]), "FIELD_TYPE: request = [1, 2] is not an object of request fields"),
    ("from-none", lambda: Request.from_dict(None), "FIELD_TYPE: request = None is not an object of request fields"),
    ("from-missing", lambda: Request.from_dict({"operation": "LOAD"}),
     "FIELD_TYPE: coordinates = (not given) is a required request field"),
    ("from-unknown", lambda: Request.from_dict({"operation": "LOAD", "coordinates": [0], "smem": "0x400"}),
     "ENUM_RANGE: smem = '0x400' is not a request field"),
    ("map-from-missing", lambda: TensorMap.from_dict({k: v for k, v in TM.to_dict().items() if k != "global_dims"}),
     "FIELD_TYPE: global_dims = (not given) is a required tensor-map field"),
    ("map-from-string", lambda: TensorMap.from_dict("tiled"),
     "FIELD_TYPE: tensor_map = 'tiled' is not an object of tensor-map fields"),
]


OTHER_FORM_CASES = [
    # (id, make, message): the unit's configuration and a descriptor image in the wrong form
    ("config-bool", lambda: UnitConfig(lanes=True), "FIELD_TYPE: config.lanes = True is not an integer"),
    ("config-float", lambda: UnitConfig(slots=8.0), "FIELD_TYPE: config.slots = 8.0 is not an integer"),
    ("config-string", lambda: UnitConfig(lanes="2"), "FIELD_TYPE: config.lanes = '2' is not an integer"),
    ("image-string", lambda: decode_descriptor("00" * 64),
     "FIELD_TYPE: image = '000000000000000000000000000000000000... is not bytes"),
    ("image-none", lambda: decode_descriptor(None), "FIELD_TYPE: image = None is not bytes"),
    ("image-list", lambda: decode_descriptor([0] * 128),
     "FIELD_TYPE: image = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ... is not bytes"),
    ("image-short", lambda: decode_descriptor(bytes(127)), "ARRAY_LENGTH: image = 127 bytes is not 128 bytes"),
]
FORM_CASES = REQUEST_FORM_CASES + OTHER_FORM_CASES


@pytest.mark.parametrize("make,message", [c[1:] for c in FORM_CASES], ids=[c[0] for c in FORM_CASES])
def test_field_in_the_wrong_form(make, message):
    with pytest.raises(TmaError) as caught:
        make()
    assert str(caught.value) == message
    assert caught.value.code == ErrorCode[message.split(":")[0]]


def test_numpy_integers_and_a_bytearray_are_taken():
    """The right forms besides the plain ones: numpy integers in a request and a
    configuration, a bytearray image."""
    req = Request(Operation.LOAD, np.array([0, 4, 2]), smem_address=np.uint32(0x400), request_id=np.int16(3))
    assert req == Request(Operation.LOAD, (0, 4, 2), smem_address=0x400, request_id=3)
    assert type(req.smem_address) is int and all(type(c) is int for c in req.coordinates)
    assert UnitConfig(lanes=np.int64(2)).lanes == 2
    assert decode_descriptor(bytearray(encode_descriptor(TM))) == TM
