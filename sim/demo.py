"""The demo suite: copies real kernels make, run through the RTL in lockstep with the golden
model (``tma-unit demo``).

Shapes and where they come from:

* ``gemm-cutlass-128x64``: the A operand tile of CUTLASS's SM90 fp16 GEMM with a 128 x 64
  (M x K) block: 64 fp16 = 128 bytes wide, 128B swizzle.
* ``gemm-fa3-k-tile``: a FlashAttention-3 K tile: head dimension 128 in two 64-element
  (128-byte) swizzle atoms; one atom is 128 rows x 64 columns of bf16, 128B swizzle.
* ``edge-oob``: a GEMM tile hanging over the bottom-right corner of a 1000 x 1000 matrix.
* ``strided``: fp32 with element strides 2 in dimensions 1 and 2 (a stride-2 convolution
  read as a tiled copy).
* ``interleave-nc8hwc8``: an NC/8HWC8 fp16 tensor (16-byte interleave).
* ``subbyte-b4x16-p64``: 4-bit weights, ``.b4x16_p64`` (padded in shared memory).
* ``store-epilogue``: an fp16 epilogue tile stored back, partly outside the matrix.
* ``reduce-add-f32``: a split-K fp32 partial sum added into global memory.
* ``gather4-rows``: four rows of an embedding table (gather4).
"""

import time
from dataclasses import dataclass

from ..model import (AccessMode, DataType, Interleave, MapKind, OobFill, Operation, ReduceOp,
                     Request, Swizzle, TensorMap, encode_descriptor)
from ..model.config import UnitConfig
from ..model.unit import fields_from_request
from .cosim import Scenario

__all__ = ["DEMO_CASES", "DemoRow", "run_demo", "demo_scenario"]

_F16 = DataType.FLOAT16


#: name -> (tensor map, request)
DEMO_CASES = {
    "gemm-cutlass-128x64": (
        TensorMap(MapKind.TILED, _F16, 0x10000000, (4096, 4096), (8192,), (64, 128), (1, 1), swizzle=Swizzle.B128),
        Request(Operation.LOAD, (64, 256), smem_address=0x0)),
    "gemm-fa3-k-tile": (
        TensorMap(MapKind.TILED, DataType.BFLOAT16, 0x20000000, (128, 8192, 16), (256, 256 * 8192),
                  (64, 128, 1), (1, 1, 1), swizzle=Swizzle.B128),
        Request(Operation.LOAD, (64, 1024, 3), smem_address=0x4000)),
    "edge-oob": (
        TensorMap(MapKind.TILED, _F16, 0x30000000, (1000, 1000), (2048,), (64, 32), (1, 1), swizzle=Swizzle.B128,
                  oob_fill=OobFill.NAN_REQUEST_ZERO_FMA),
        Request(Operation.LOAD, (960, 980), smem_address=0x8000)),
    "strided": (
        TensorMap(MapKind.TILED, DataType.FLOAT32, 0x40000000, (32, 64, 64), (128, 8192), (32, 16, 8), (1, 2, 2),
                  swizzle=Swizzle.B128),
        Request(Operation.LOAD, (0, 1, 1), smem_address=0xC000)),
    "interleave-nc8hwc8": (
        TensorMap(MapKind.TILED, _F16, 0x50000000, (8, 56, 56, 8), (16, 896, 50176), (8, 28, 4, 2), (1, 1, 1, 1),
                  interleave=Interleave.B16, swizzle=Swizzle.B32),
        Request(Operation.LOAD, (0, 0, 12, 2), smem_address=0x10000)),
    "subbyte-b4x16-p64": (
        TensorMap(MapKind.TILED, DataType.U4_ALIGN16B, 0x60000000, (4096, 4096), (2048,), (128, 64), (1, 1),
                  swizzle=Swizzle.B128),
        Request(Operation.LOAD, (256, 64), smem_address=0x12000)),
    "store-epilogue": (
        TensorMap(MapKind.TILED, _F16, 0x70000000, (1000, 1000), (2048,), (64, 64), (1, 1), swizzle=Swizzle.B128),
        Request(Operation.STORE, (960, 960), smem_address=0x14000)),
    "reduce-add-f32": (
        TensorMap(MapKind.TILED, DataType.FLOAT32, 0x80000000, (1024, 1024), (4096,), (32, 64), (1, 1),
                  swizzle=Swizzle.B128),
        Request(Operation.REDUCE, (128, 256), smem_address=0x16000, reduce_op=ReduceOp.ADD)),
    "gather4-rows": (
        TensorMap(MapKind.TILED, _F16, 0x90000000, (64, 50000), (128,), (64, 1), (1, 1), swizzle=Swizzle.B128),
        Request(Operation.LOAD, (0, 17, 4096, 33, 49999), smem_address=0x18000, mode=AccessMode.GATHER4)),
}


@dataclass
class DemoRow:
    case: str
    bytes: int
    beats: int
    cycles: int
    result: str

    @property
    def bytes_per_cycle(self) -> float:
        return self.bytes / self.cycles if self.cycles else 0.0


def demo_scenario(config: UnitConfig, names, copies: int = 1) -> Scenario:
    """One scenario holding ``copies`` back-to-back requests of each named case."""
    images, requests, labels = {}, [], []
    for slot, name in enumerate(names):
        tm, request = DEMO_CASES[name]
        images[slot % config.slots] = encode_descriptor(tm)
        for copy in range(copies):
            requests.append(fields_from_request(
                Request(**{**request.__dict__, "request_id": len(requests)}), slot % config.slots))
            labels.append(name)
    return Scenario(config, images, (1 << config.slots) - 1, requests, names=labels)


def run_demo(config: UnitConfig, backend: str = "pysim", vcd: str | None = None, copies: int = 4):
    """Run each case (``copies`` requests back to back) in lockstep; rows for the table.
    Cycles count from the first request offered to the last completion."""
    from .cosim import Mismatch
    rows = []
    for name in DEMO_CASES:
        scenario = demo_scenario(config, [name], copies)
        try:
            if backend == "pysim":
                from .pysim import run_pysim
                result = run_pysim(scenario, vcd=vcd.replace(".vcd", f"-{name}.vcd") if vcd else None)
            else:
                from .cxxrtl import run_cxxrtl
                result = run_cxxrtl(scenario)
            verdict = "match"
        except Mismatch as error:
            rows.append(DemoRow(name, 0, 0, 0, "MISMATCH: " + str(error).splitlines()[0]))
            continue
        moved = sum(c[2] for c in result.completions)
        rows.append(DemoRow(name, moved, result.beats, result.cycles, verdict))
    return rows
