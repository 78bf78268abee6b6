"""Elements per second of the golden model's vectorized traversal against the slow
per-element loop, on the same boxes (issue targets: >= 20 M elements/s, >= 100x the loop).

Run: python bench/model_speed.py
"""

import ctypes
import statistics
import time

from tma_unit.model import (DataType, Interleave, MapKind, Operation, Request, Swizzle,
                            TensorMap, OobFill, box_elements, transactions)
from tma_unit.model.examples import example
from tma_unit.model.reference import reference_elements

CASES = {
    "fp16 64x256 128B swizzle (GEMM tile)": (
        TensorMap(MapKind.TILED, DataType.FLOAT16, 0x10000, (4096, 4096), (8192,), (64, 256), (1, 1),
                  swizzle=Swizzle.B128),
        Request(Operation.LOAD, (64, 128), smem_address=0x400)),
    "bf16 64x128 partly OOB, NaN fill": (
        TensorMap(MapKind.TILED, DataType.BFLOAT16, 0x10000, (100, 100), (256,), (64, 128), (1, 1),
                  swizzle=Swizzle.B128, oob_fill=OobFill.NAN_REQUEST_ZERO_FMA),
        Request(Operation.LOAD, (64, -10), smem_address=0x400)),
    "f32 rank-4 element strides 2": (
        TensorMap(MapKind.TILED, DataType.FLOAT32, 0x0, (32, 64, 64, 8), (128, 8192, 524288),
                  (32, 16, 16, 4), (1, 2, 2, 1), swizzle=Swizzle.B128),
        Request(Operation.LOAD, (0, 3, 5, 1), smem_address=0x0)),
    "u8 rank-3 interleave 32B": (
        TensorMap(MapKind.TILED, DataType.UINT8, 0x0, (32, 64, 64), (32, 2048), (32, 64, 8), (1, 1, 1),
                  interleave=Interleave.B32, swizzle=Swizzle.B32),
        Request(Operation.LOAD, (0, 0, 0), smem_address=0x0)),
    "b4x16_p64 128x128": (
        TensorMap(MapKind.TILED, DataType.U4_ALIGN16B, 0x0, (1024, 1024), (512,), (128, 128), (1, 1),
                  swizzle=Swizzle.B128),
        Request(Operation.LOAD, (128, 0), smem_address=0x0)),
    "im2col 3x3 NHWC, 256 px x 64 ch (ResNet-50 conv)": (
        TensorMap(MapKind.IM2COL, DataType.FLOAT16, 0x0, (64, 56, 56, 32), (128, 7168, 401408),
                  (), (1, 1, 1, 1), swizzle=Swizzle.B128, lower_corner=(-1, -1), upper_corner=(-1, -1),
                  channels_per_pixel=64, pixels_per_column=256),
        Request(Operation.LOAD, (0, -1, -1, 0), mode="IM2COL", im2col_offsets=(1, 1))),
    "im2col::w::128 wHalo 2 (PTX example)": example("im2col-w-128"),
    "im2col::w 128 px wHalo 2 (PTX example)": example("im2col-w-halo"),
    "gather4 fp32 4 x 64": (
        TensorMap(MapKind.TILED, DataType.FLOAT32, 0x0, (4096, 4096), (16384,), (32, 1), (1, 1),
                  swizzle=Swizzle.B128),
        Request(Operation.LOAD, (0, 3, 77, 1000, 4095), mode="GATHER4")),
}


def _steady_allocator():
    """Keep freed memory in the process. glibc otherwise returns the top of the heap to the
    OS after each call and page-faults it back in on the next; on this machine that made
    the same call's rate swing 3x between runs (measured: 33 to 168 M elements/s)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(libc.mallopt(M_TRIM_THRESHOLD, 1 << 28) and libc.mallopt(M_MMAP_THRESHOLD, 1 << 26))


def _rate(function, elements, min_seconds=0.1):
    """Elements per second of `function`, repeating the call for at least `min_seconds`."""
    repeats, elapsed = 0, 0.0
    start = time.perf_counter()
    while elapsed < min_seconds:
        function()
        repeats += 1
        elapsed = time.perf_counter() - start
    return elements * repeats / elapsed


def main(trials=5):
    """Vectorized, chunked and loop timings are taken side by side in each trial; the
    table shows the median over trials of each rate and of the per-trial ratio, which
    this noisy 2-core machine disturbs far less than either rate alone."""
    steady = _steady_allocator()
    print(f"allocator trimming off: {steady}")
    print(f"{'case':50} {'elements':>9} {'vectorized M/s':>15} {'chunks M/s':>11} {'loop M/s':>9} {'ratio':>7}")
    for name, (tm, req) in CASES.items():
        # elements as the spec counts them: individual values for the packed types
        count = box_elements(tm, req).in_bounds.size * tm.info.values_per_unit
        samples = []
        for _ in range(trials):
            vector = _rate(lambda: box_elements(tm, req), count)
            chunked = _rate(lambda: transactions(tm, req), count)
            loop = _rate(lambda: reference_elements(tm, req), count)
            samples.append((vector, chunked, loop, vector / loop))
        vector, chunked, loop, ratio = (statistics.median(column) for column in zip(*samples))
        print(f"{name:50} {count:>9} {vector / 1e6:>15.1f} {chunked / 1e6:>11.1f} "
              f"{loop / 1e6:>9.3f} {ratio:>6.0f}x")


if __name__ == "__main__":
    main()
