"""Elements per second of the golden model's vectorized traversal against the slow
per-element loop, on the same boxes (issue targets: >= 20 M elements/s, >= 100x the loop).

Run: python bench/model_speed.py
"""

import time

from tma_unit.model import (DataType, Interleave, MapKind, Operation, Request, Swizzle,
                            TensorMap, OobFill, box_elements, transactions)
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
}


def _rate(function, elements, trials=5, min_seconds=0.1):
    """Elements per second of `function`: the best of `trials` timings, each repeating the
    call for at least `min_seconds` (the best is the least disturbed by other load)."""
    function()
    best = 0.0
    for _ in range(trials):
        repeats, elapsed = 0, 0.0
        start = time.perf_counter()
        while elapsed < min_seconds:
            function()
            repeats += 1
            elapsed = time.perf_counter() - start
        best = max(best, elements * repeats / elapsed)
    return best


def main():
    print(f"{'case':40} {'elements':>9} {'vectorized M/s':>15} {'chunks M/s':>11} {'loop M/s':>9} {'ratio':>7}")
    for name, (tm, req) in CASES.items():
        # elements as the spec counts them: individual values for the packed types
        count = box_elements(tm, req).in_bounds.size * tm.info.values_per_unit
        vector = _rate(lambda: box_elements(tm, req), count)
        chunked = _rate(lambda: transactions(tm, req), count)
        loop = _rate(lambda: reference_elements(tm, req), count, trials=3)
        print(f"{name:40} {count:>9} {vector / 1e6:>15.1f} {chunked / 1e6:>11.1f} "
              f"{loop / 1e6:>9.3f} {vector / loop:>6.0f}x")


if __name__ == "__main__":
    main()
