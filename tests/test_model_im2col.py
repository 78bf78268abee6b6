"""im2col, im2col::w, im2col::w::128, gather4 and scatter4 in the golden model: the worked
examples of PTX section 5.5, derived by hand, and the vectorized walks against the loops."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from tma_unit.model import (AccessMode, DataType, ErrorCode, Im2colWideMode, MapKind,
                            Operation, Request, Swizzle, TensorMap, TmaError, box_elements,
                            encode_descriptor, decode_descriptor, encode_im2col,
                            encode_im2col_wide, im2col_pixels, transactions, validate_request)
from tma_unit.model.reference import reference_elements
from tma_unit.model.tensormap import dense_strides

from strategies import im2col_cases, wide_cases, gather4_cases

def im2col_map(dims, lower, upper, channels, pixels, strides=None, dtype=DataType.FLOAT16):
    es = strides or [1] * len(dims)
    return encode_im2col(dtype, len(dims), 0x10000, dims, dense_strides(dims, 2), lower, upper,
                         channels, pixels, es)


def pixels(tm, req):
    return [tuple(p) for p in im2col_pixels(tm, req).access.tolist()]


def odometer(start_w, start_h, w_range, h_range, n, count):
    """Hand walk helper: (W, H, N) from (start_w, start_h), W over w_range then H over
    h_range, then N + 1 -- the reading written out in docs/decisions.md."""
    out, w, h = [], start_w, start_h
    w_list, h_list = list(w_range), list(h_range)
    while len(out) < count:
        out.append((w, h, n))
        later = [x for x in w_list if x > w]
        if later:
            w = later[0]
            continue
        w = w_list[0]
        later = [x for x in h_list if x > h]
        if later:
            h = later[0]
        else:
            h, n = h_list[0], n + 1
    return out


def test_im2col_example_1():
    """5.5.4 example 1: NHWC, C 64, W 9, H 14, N 64; corners -1/-1 in W and H; request
    (C 7, W 7, H 4, N 0), offsets (0, 0); 64 pixels of 8 channels.
    W runs over [-1, 9 - 1) = -1..7, H over [-1, 14 - 1) = -1..12. From (7, 4): W 7 is the
    last of its range, so the second pixel is W -1 of H 5; rows of 9 pixels follow:
    1 pixel at H 4, 9 at each H 5..10 (54), then 9 more at H 11 = 64."""
    tm = im2col_map([64, 9, 14, 64], [-1, -1], [-1, -1], 8, 64)
    req = Request(Operation.LOAD, (7, 7, 4, 0), mode=AccessMode.IM2COL, im2col_offsets=(0, 0))
    expected = [(7, 4, 0)] + [(w, h, 0) for h in range(5, 12) for w in range(-1, 8)]
    assert len(expected) == 64
    assert pixels(tm, req) == expected
    # the box reads channels 7..14 of each pixel: 8 fp16 = one 16-byte chunk a pixel
    stream = list(transactions(tm, req))
    assert len(stream) == 64 and all(t.units == 8 for t in stream)
    # pixels at W = -1 or H = -1 are outside the image: zero filled
    assert [t.mask for t in stream] == [0 if w < 0 else 0xFF for w, h, n in expected]


def test_im2col_example_2():
    """Example 2: corners 0/0 lower, -2/-2 upper; request (7, 7, 4, 0), offsets (2, 2).
    Filter-base W runs over [0, 9 - 2) = 0..6, H over [0, 12) = 0..11. W 7 is past the
    range, so the first pixel (base 7, 4) is followed by base (0, 5). Each pixel reads
    base + (2, 2)."""
    tm = im2col_map([64, 9, 14, 64], [0, 0], [-2, -2], 8, 64)
    req = Request(Operation.LOAD, (7, 7, 4, 0), mode=AccessMode.IM2COL, im2col_offsets=(2, 2))
    bases = [(7, 4, 0)] + [(w, h, 0) for h in range(5, 12) for w in range(0, 7)]
    bases += [(w, h, 1) for h in range(0, 12) for w in range(0, 7)]
    expected = [(w + 2, h + 2, n) for w, h, n in bases[:64]]
    assert pixels(tm, req) == expected
    assert expected[:3] == [(9, 6, 0), (2, 7, 0), (3, 7, 0)]


def test_im2col_traversal_stride_example():
    """5.5.4.2: C 64, W 8, H 14, N 64; stride 2; 32 pixels of 16 channels; corners -1;
    request (7, 7, 5, 0), offsets (1, 1).
    W bases: [-1, 8 - 1) stepped by 2 = -1, 1, 3, 5; H bases: [-1, 13) by 2 = -1, 1, .., 11.
    Start (7, 5): W 7 + 2 passes the range: next W -1, H 7. H 7, 9, 11 give 4 pixels each
    (13 so far); then image N 1 from H -1: 19 more pixels (H -1, 1, 3, 5 and 3 of H 7).
    Each pixel reads base + (1, 1)."""
    tm = im2col_map([64, 8, 14, 64], [-1, -1], [-1, -1], 16, 32, strides=[1, 2, 2, 1])
    req = Request(Operation.LOAD, (7, 7, 5, 0), mode=AccessMode.IM2COL, im2col_offsets=(1, 1))
    bases = odometer(7, 5, range(-1, 7, 2), range(-1, 13, 2), 0, 32)
    assert bases[:6] == [(7, 5, 0), (-1, 7, 0), (1, 7, 0), (3, 7, 0), (5, 7, 0), (-1, 9, 0)]
    assert bases[13] == (-1, -1, 1) and bases[-1] == (3, 7, 1)
    assert pixels(tm, req) == [(w + 1, h + 1, n) for w, h, n in bases]
    # 16 fp16 channels = 2 chunks a pixel
    assert len(transactions(tm, req)) == 64


def wide_map(dims, lower_w, upper_w, channels, pixels, mode, stride_w=1):
    es = [1, stride_w] + [1] * (len(dims) - 2)
    return encode_im2col_wide(DataType.FLOAT16, len(dims), 0x10000, dims, dense_strides(dims, 2),
                              lower_w, upper_w, channels, pixels, es, mode=mode, swizzle=Swizzle.B128)


def test_im2col_w_example_with_halo():
    """5.5.5.3 im2col::w: C 128, W 9, H 7, N 64; 128 pixels of 64 channels; corners 0/0;
    request (7, 2, 3, 0); wHalo 2. W runs over [0, 9): from W 2, 7 pixels (2..8) in image
    0, then whole rows of 9 in images 1.. : 7 + 13 * 9 = 124, and 4 more (0..3) in image 14.
    H stays 3. The 2 halo pixels continue the last W (3) in image 14: W 4 and 5."""
    tm = wide_map([128, 9, 7, 64], 0, 0, 64, 128, Im2colWideMode.W)
    req = Request(Operation.LOAD, (7, 2, 3, 0), mode=AccessMode.IM2COL_W, w_halo=2)
    main = [(w, 3, 0) for w in range(2, 9)] + [(w, 3, n) for n in range(1, 15) for w in range(9)]
    expected = main[:128] + [(4, 3, 14), (5, 3, 14)]
    walk = im2col_pixels(tm, req)
    assert pixels(tm, req) == expected
    assert walk.halo.tolist() == [False] * 128 + [True] * 2
    # 64 fp16 channels = 128 bytes = 8 chunks a pixel
    assert len(transactions(tm, req)) == 130 * 8


def test_im2col_w_128_example():
    """5.5.5.3 im2col::w::128: same tensor, corners 0/0, request (7, 2, 3, 0), wHalo 2:
    four groups of 32 main pixels, each followed by 2 halo pixels continuing the group's
    last W. Main walk as above: W 2..8 of image 0, then rows of 9."""
    tm = wide_map([128, 9, 7, 64], 0, 0, 64, 0, Im2colWideMode.W128)
    req = Request(Operation.LOAD, (7, 2, 3, 0), mode=AccessMode.IM2COL_W_128, w_halo=2)
    main = ([(w, 3, 0) for w in range(2, 9)] + [(w, 3, n) for n in range(1, 15) for w in range(9)])[:128]
    expected = []
    for g in range(4):
        group = main[32 * g:32 * g + 32]
        last_w, _, last_n = group[-1]
        expected += group + [(last_w + 1, 3, last_n), (last_w + 2, 3, last_n)]
    assert tm.pixels_per_column == 128
    assert pixels(tm, req) == expected
    # main[31]: image 0 holds pixels 0..6, images 1, 2, 3 start at 7, 16, 25: W 31 - 25 = 6
    # of image 3, so group 0's halo is W 7 and 8 of image 3
    assert expected[32:34] == [(7, 3, 3), (8, 3, 3)]
    assert len(expected) == 136


def test_woffset_example_1():
    """5.5.5.4 example 1: C 128, W 9, H 67, N 64; 128 pixels of 64 channels; lower W -1,
    upper W 0, stride 2; request (7, 2, -1, 0).
    Buffer 1 (wHalo 1, wOffset 0): W over [-1, 9) by 2 from W 2: 2, 4, 6, 8, then rows
    -1, 1, 3, 5, 7 in images 1, 2, ...; one halo pixel after the last, W + 2.
    Buffer 2 (wHalo 0, wOffset 1): corners and W shift by 1: W over [0, 10) by 2 from 3:
    3, 5, 7, 9, then rows 0, 2, 4, 6, 8.
    H is -1 throughout (a padding row: every pixel is out of bounds)."""
    tm = wide_map([128, 9, 67, 64], -1, 0, 64, 128, Im2colWideMode.W, stride_w=2)
    first = Request(Operation.LOAD, (7, 2, -1, 0), mode=AccessMode.IM2COL_W, w_halo=1, w_offset=0)
    second = Request(Operation.LOAD, (7, 2, -1, 0), mode=AccessMode.IM2COL_W, w_halo=0, w_offset=1)
    main1 = ([(w, -1, 0) for w in (2, 4, 6, 8)] + [(w, -1, n) for n in range(1, 30) for w in (-1, 1, 3, 5, 7)])[:128]
    assert pixels(tm, first) == main1 + [(main1[-1][0] + 2, -1, main1[-1][2])]
    main2 = ([(w, -1, 0) for w in (3, 5, 7, 9)] + [(w, -1, n) for n in range(1, 30) for w in (0, 2, 4, 6, 8)])[:128]
    assert pixels(tm, second) == main2
    assert all(t.mask == 0 for t in transactions(tm, first))


def test_woffset_example_2():
    """5.5.5.4 example 2: C 128, W 7, H 7, N 64; lower W -1, upper W -1, stride 3;
    request (7, 2, -1, 0); three buffers, wOffset 0, 1, 2, no halo.
    W range [-1 + o, 7 - 1 + o) by 3, start 2 + o: o = 0: 2, 5, then -1, 2, 5 per image;
    o = 1: range [0, 7): 3, 6, then 0, 3, 6 per image; o = 2: range [1, 8): 4, 7, then 1, 4, 7.
    """
    tm = wide_map([128, 7, 7, 64], -1, -1, 64, 128, Im2colWideMode.W, stride_w=3)
    expected = {
        0: [(2, -1, 0), (5, -1, 0)] + [(w, -1, n) for n in range(1, 64) for w in (-1, 2, 5)],
        1: [(3, -1, 0), (6, -1, 0)] + [(w, -1, n) for n in range(1, 64) for w in (0, 3, 6)],
        2: [(4, -1, 0), (7, -1, 0)] + [(w, -1, n) for n in range(1, 64) for w in (1, 4, 7)],
    }
    for offset, walk in expected.items():
        req = Request(Operation.LOAD, (7, 2, -1, 0), mode=AccessMode.IM2COL_W, w_offset=offset)
        assert pixels(tm, req) == walk[:128], offset


def test_gather4_example():
    """5.5.3.4 Figure 10: start coordinates (1, 2), (1, 5), (1, 0), (1, 9): column 1,
    rows 2, 5, 0, 9, in that order, one after another in shared memory."""
    tm = TensorMap(MapKind.TILED, DataType.FLOAT32, 0x1000, (16, 12), (64,), (8, 1), (1, 1))
    req = Request(Operation.LOAD, (1, 2, 5, 0, 9), mode=AccessMode.GATHER4, smem_address=0x200)
    stream = list(transactions(tm, req))
    rows = [2, 5, 0, 9]
    assert [(t.global_address, t.smem_address) for t in stream] == [
        (0x1000 + 64 * row + 4 * (1 + 4 * c), 0x200 + 32 * i + 16 * c) for i, row in enumerate(rows) for c in range(2)]
    assert all(t.mask == 0xF for t in stream)


def test_gather4_rows_out_of_bounds_and_scatter4_skips_them():
    tm = TensorMap(MapKind.TILED, DataType.UINT8, 0x0, (16, 4), (16,), (16, 1), (1, 1))
    stream = list(transactions(tm, Request(Operation.LOAD, (0, 1, -1, 4, 3), mode=AccessMode.GATHER4)))
    assert [t.mask for t in stream] == [0xFFFF, 0, 0, 0xFFFF]
    from tma_unit.model import GlobalMemory, store
    gmem = GlobalMemory(0, np.zeros(64, dtype=np.uint8))
    smem = np.arange(64, dtype=np.uint8)
    store(tm, Request(Operation.STORE, (0, 3, 5, 0, 9), mode=AccessMode.SCATTER4), smem, gmem)
    assert (gmem.data[48:64] == np.arange(16)).all()          # row 3 <- smem row 0
    assert (gmem.data[0:16] == np.arange(32, 48)).all()       # row 0 <- smem row 2
    assert (gmem.data[16:48] == 0).all()                      # rows 5 and 9 do not exist


def test_im2col_no_offs_store_skips_out_of_bounds():
    """A store walks the same pixels with no offsets; pixels past the batch are skipped."""
    tm = im2col_map([8, 3, 1], [0], [0], 8, 5)                  # NWC: C 8, W 3, N 1
    from tma_unit.model import GlobalMemory, store
    gmem = GlobalMemory(0x10000, np.zeros(48, dtype=np.uint8))
    smem = np.arange(80, dtype=np.uint8)
    store(tm, Request(Operation.STORE, (0, 1, 0), mode=AccessMode.IM2COL), smem, gmem)
    # pixels W 1, 2 of image 0, then image 1 (past N = 1): only the first two are written
    assert (gmem.data[16:48] == np.arange(32)).all() and (gmem.data[:16] == 0).all()


# -- validation of the im2col rules --------------------------------------------------------

RULE_CASES = [
    ("corner-range-4d", lambda: im2col_map([64, 9, 14, 4], [-129, 0], [0, 0], 8, 8), ErrorCode.CORNER_RANGE,
     "CORNER_RANGE: lower_corner[0] = -129 is outside [-128, 127] for a rank-4 IM2COL map"),
    ("corner-range-5d", lambda: im2col_map([64, 4, 4, 4, 2], [0, 0, 0], [0, 16, 0], 8, 8), ErrorCode.CORNER_RANGE,
     "CORNER_RANGE: upper_corner[1] = 16 is outside [-16, 15] for a rank-5 IM2COL map"),
    ("corner-range-3d", lambda: im2col_map([64, 9, 4], [-32769], [0], 8, 8), ErrorCode.CORNER_RANGE,
     "CORNER_RANGE: lower_corner[0] = -32769 is outside [-32768, 32767] for a rank-3 IM2COL map"),
    ("corner-area", lambda: im2col_map([64, 4, 4, 4], [2, 0], [-2, 0], 8, 8), ErrorCode.CORNER_AREA,
     "CORNER_AREA: upper_corner[0] = -2 with lower_corner[0] = 2 and global_dims[1] = 4 leaves no pixel"),
    ("channels", lambda: im2col_map([64, 9, 14, 4], [0, 0], [0, 0], 0, 8), ErrorCode.CHANNELS_RANGE,
     "CHANNELS_RANGE: channels_per_pixel = 0 is outside 1..256"),
    ("channels-packed", lambda: encode_im2col(DataType.U6_ALIGN16B, 3, 0, [256, 4, 2], [192, 768], [0], [0], 64, 8, [1, 1, 1]),
     ErrorCode.CHANNELS_RANGE, "CHANNELS_RANGE: channels_per_pixel = 64 is not 128 for U6_ALIGN16B"),
    ("channels-packed-odd", lambda: encode_im2col(DataType.U4_ALIGN8B, 3, 0, [64, 8, 2], [32, 256], [0], [0], 3, 4,
                                                  [1, 1, 1], interleave=1),
     ErrorCode.CHANNELS_RANGE, "CHANNELS_RANGE: channels_per_pixel = 3 is not even for U4_ALIGN8B"),
    ("pixels", lambda: im2col_map([64, 9, 14, 4], [0, 0], [0, 0], 8, 1025), ErrorCode.PIXELS_RANGE,
     "PIXELS_RANGE: pixels_per_column = 1025 is outside 1..1024"),
    ("rank-im2col", lambda: encode_im2col(DataType.FLOAT16, 2, 0, [64, 4], [128], [], [], 8, 8, [1, 1]),
     ErrorCode.RANK_RANGE, "RANK_RANGE: rank = 2 is outside 3..5 for a IM2COL map"),
    ("wide-swizzle", lambda: encode_im2col_wide(DataType.FLOAT16, 3, 0, [64, 9, 4], [128, 1152], 0, 0, 8, 8, [1, 1, 1],
                                                swizzle=Swizzle.B32), ErrorCode.WIDE_SWIZZLE,
     "WIDE_SWIZZLE: swizzle = B32 is not 64B, 128B or 128B_ATOM_32B for an im2col-wide map"),
    ("wide-interleave", lambda: encode_im2col_wide(DataType.FLOAT16, 3, 0, [64, 9, 4], [128, 1152], 0, 0, 8, 8, [1, 1, 1],
                                                   interleave=1), ErrorCode.WIDE_INTERLEAVE,
     "WIDE_INTERLEAVE: interleave = B16 is not NONE for an im2col-wide map"),
    ("wide-corner", lambda: encode_im2col_wide(DataType.FLOAT16, 3, 0, [64, 9, 4], [128, 1152], 1 << 15, 0, 8, 8, [1, 1, 1]),
     ErrorCode.CORNER_RANGE, "CORNER_RANGE: lower_corner[0] = 32768 is outside [-32768, 32767] for a rank-3 IM2COL_WIDE map"),
    ("im2col-swizzle-span", lambda: encode_im2col(DataType.FLOAT16, 3, 0, [64, 9, 4], [128, 1152], [0], [0], 64, 8, [1, 1, 1],
                                                  swizzle=Swizzle.B64), ErrorCode.SWIZZLE_SPAN,
     "SWIZZLE_SPAN: channels_per_pixel = 64 gives an inner row of 128 bytes, wider than the 64-byte span of swizzle B64"),
]


@pytest.mark.parametrize("build,code,message", [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_im2col_map_rule(build, code, message):
    with pytest.raises(TmaError) as caught:
        build()
    assert caught.value.code == code and str(caught.value) == message


IM2COL = im2col_map([64, 9, 14, 4], [-1, -1], [-1, -1], 8, 8)
WIDE = wide_map([128, 9, 7, 64], 0, 0, 64, 128, Im2colWideMode.W)
WIDE128 = wide_map([128, 9, 7, 64], 0, 0, 64, 0, Im2colWideMode.W128)
REQUEST_CASES = [
    ("offset-range", IM2COL, Request(Operation.LOAD, (0, 0, 0, 0), mode=AccessMode.IM2COL, im2col_offsets=(256, 0)),
     ErrorCode.IM2COL_OFFSET_RANGE, "IM2COL_OFFSET_RANGE: im2col_offsets[0] = 256 is outside [0, 255] for rank 4"),
    ("offset-count", IM2COL, Request(Operation.LOAD, (0, 0, 0, 0), mode=AccessMode.IM2COL, im2col_offsets=(1,)),
     ErrorCode.COORD_COUNT, "COORD_COUNT: im2col_offsets = [1] has 1 entries, not 2"),
    ("store-corner", IM2COL, Request(Operation.STORE, (0, 0, 0, 0), mode=AccessMode.IM2COL),
     ErrorCode.IM2COL_STORE_CORNER, "IM2COL_STORE_CORNER: lower_corner[0] = -1 is negative in an im2col store"),
    ("whalo-w", WIDE, Request(Operation.LOAD, (0, 0, 0, 0), mode=AccessMode.IM2COL_W, w_halo=512),
     ErrorCode.WHALO_RANGE, "WHALO_RANGE: w_halo = 512 is outside [0, 512) for IM2COL_W"),
    ("whalo-w128", WIDE128, Request(Operation.LOAD, (0, 0, 0, 0), mode=AccessMode.IM2COL_W_128, w_halo=32),
     ErrorCode.WHALO_RANGE, "WHALO_RANGE: w_halo = 32 is outside [0, 32) for IM2COL_W_128"),
    ("woffset", WIDE, Request(Operation.LOAD, (0, 0, 0, 0), mode=AccessMode.IM2COL_W, w_offset=32),
     ErrorCode.WOFFSET_RANGE, "WOFFSET_RANGE: w_offset = 32 is outside [0, 32)"),
    ("wide-mode", WIDE, Request(Operation.LOAD, (0, 0, 0, 0), mode=AccessMode.IM2COL_W_128),
     ErrorCode.MODE_MISMATCH, "MODE_MISMATCH: mode = IM2COL_W_128 needs wide mode W128, not W"),
    ("w-store", WIDE, Request(Operation.STORE, (0, 0, 0, 0), mode=AccessMode.IM2COL_W),
     ErrorCode.OPERATION_MODE, "OPERATION_MODE: mode = IM2COL_W does not exist for STORE"),
    ("gather4-box", TensorMap(MapKind.TILED, DataType.FLOAT32, 0, (16, 12), (64,), (8, 2), (1, 1)),
     Request(Operation.LOAD, (0, 0, 0, 0, 0), mode=AccessMode.GATHER4),
     ErrorCode.GATHER4_MAP, "GATHER4_MAP: box_dims[1] = 2 is not 1 for GATHER4"),
    ("gather4-count", TensorMap(MapKind.TILED, DataType.FLOAT32, 0, (16, 12), (64,), (8, 1), (1, 1)),
     Request(Operation.LOAD, (0, 0), mode=AccessMode.GATHER4),
     ErrorCode.COORD_COUNT, "COORD_COUNT: coordinates = [0, 0] has 2 entries, not 5"),
    ("96b-w128", None, None, ErrorCode.SWIZZLE_96B, None),
]


@pytest.mark.parametrize("tm,request_,code,message", [c[1:] for c in REQUEST_CASES[:-1]],
                         ids=[c[0] for c in REQUEST_CASES[:-1]])
def test_im2col_request_rule(tm, request_, code, message):
    with pytest.raises(TmaError) as caught:
        validate_request(tm, request_)
    assert caught.value.code == code and str(caught.value) == message


def test_flip_8b_not_with_im2col_w():
    """The 8B flip is not allowed with im2col::w: the wide maps' swizzle list already
    excludes it, so the map itself is refused."""
    with pytest.raises(TmaError) as caught:
        encode_im2col_wide(DataType.FLOAT16, 3, 0, [64, 9, 4], [128, 1152], 0, 0, 8, 8, [1, 1, 1],
                           swizzle=Swizzle.B128_ATOM_32B_FLIP_8B)
    assert caught.value.code == ErrorCode.WIDE_SWIZZLE


# -- vectorized walks against the per-pixel loops -------------------------------------------

def _vectorized(tm, req):
    e = box_elements(tm, req)
    return list(zip(e.global_address.reshape(-1).tolist(), e.smem_address.reshape(-1).tolist(),
                    e.in_bounds.reshape(-1).tolist()))


@pytest.mark.parametrize("cases,examples", [(im2col_cases, 300), (wide_cases, 300), (gather4_cases, 200)],
                         ids=["im2col", "im2col-w", "gather4"])
def test_vectorized_walk_equals_loop(cases, examples):
    """Each element's global address, shared-memory address and bounds, from the
    vectorized walk and from the per-pixel loop; and the map's image round trip."""
    @settings(max_examples=examples, suppress_health_check=[HealthCheck.too_slow])
    @given(cases())
    def check(case):
        tm, req = case
        assert _vectorized(tm, req) == reference_elements(tm, req)
        assert decode_descriptor(encode_descriptor(tm)) == tm

    check()
