"""Named example copies: the worked examples of PTX section 5.5 and a few everyday tiles.

``tma-unit layout --example NAME`` prints any of them; tests and demos reuse them.
"""

from .request import Request
from .tensormap import TensorMap, dense_strides, encode_im2col, encode_im2col_wide, encode_tiled
from .types import AccessMode, DataType, Im2colWideMode, MapKind, Operation, Swizzle

__all__ = ["EXAMPLES", "example"]


def _im2col(dims, lower, upper, channels, pixels, es=None):
    return encode_im2col(DataType.FLOAT16, len(dims), 0x10000, dims, dense_strides(dims, 2), lower, upper,
                         channels, pixels, es or [1] * len(dims), swizzle=Swizzle.B128)


def _wide(dims, lower, upper, pixels, mode, es_w=1):
    return encode_im2col_wide(DataType.FLOAT16, len(dims), 0x10000, dims, dense_strides(dims, 2), lower, upper,
                              64, pixels, [1, es_w] + [1] * (len(dims) - 2), mode=mode, swizzle=Swizzle.B128)


def _load(coords, **kw):
    return Request(Operation.LOAD, coords, smem_address=0x400, **kw)


#: name -> (description, tensor map, request)
EXAMPLES = {
    "gemm-edge": (
        "fp16 GEMM tile, 64 x 8, 128B swizzle, at the bottom-right edge of a 1000 x 1000 matrix",
        TensorMap(MapKind.TILED, DataType.FLOAT16, 0x7F0000000000, (1000, 1000), (2048,), (64, 8), (1, 1),
                  swizzle=Swizzle.B128),
        _load((960, 996))),
    "gemm-128x64": (
        "fp16 GEMM operand tile as CUTLASS SM90 loads it: 64 x 128, 128B swizzle",
        encode_tiled(DataType.FLOAT16, 2, 0x10000, [4096, 4096], [8192], [64, 128], [1, 1], swizzle=Swizzle.B128),
        _load((64, 256))),
    "im2col-1": ("PTX 5.5.4 im2col example 1", _im2col([64, 9, 14, 64], [-1, -1], [-1, -1], 8, 64),
                 _load((7, 7, 4, 0), mode=AccessMode.IM2COL, im2col_offsets=(0, 0))),
    "im2col-2": ("PTX 5.5.4 im2col example 2", _im2col([64, 9, 14, 64], [0, 0], [-2, -2], 8, 64),
                 _load((7, 7, 4, 0), mode=AccessMode.IM2COL, im2col_offsets=(2, 2))),
    "im2col-stride": ("PTX 5.5.4.2 traversal-stride example",
                      _im2col([64, 8, 14, 64], [-1, -1], [-1, -1], 16, 32, [1, 2, 2, 1]),
                      _load((7, 7, 5, 0), mode=AccessMode.IM2COL, im2col_offsets=(1, 1))),
    "im2col-w-halo": ("PTX 5.5.5.3 im2col::w example, wHalo 2",
                      _wide([128, 9, 7, 64], 0, 0, 128, Im2colWideMode.W),
                      _load((7, 2, 3, 0), mode=AccessMode.IM2COL_W, w_halo=2)),
    "im2col-w-128": ("PTX 5.5.5.3 im2col::w::128 example, wHalo 2",
                     _wide([128, 9, 7, 64], 0, 0, 0, Im2colWideMode.W128),
                     _load((7, 2, 3, 0), mode=AccessMode.IM2COL_W_128, w_halo=2)),
    "woffset-1-buffer-2": ("PTX 5.5.5.4 wOffset example 1, buffer 2 (wOffset 1)",
                           _wide([128, 9, 67, 64], -1, 0, 128, Im2colWideMode.W, es_w=2),
                           _load((7, 2, -1, 0), mode=AccessMode.IM2COL_W, w_offset=1)),
    "gather4": ("PTX 5.5.3.4 gather4 example: rows 2, 5, 0, 9 from column 1",
                TensorMap(MapKind.TILED, DataType.FLOAT32, 0x1000, (16, 12), (64,), (8, 1), (1, 1)),
                _load((1, 2, 5, 0, 9), mode=AccessMode.GATHER4)),
}


def example(name: str):
    """(tensor map, request) of a named example."""
    _, tm, req = EXAMPLES[name]
    return tm, req
