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
* ``scatter4-rows``: the same table's rows written back (scatter4), two past its end.
* ``conv-resnet50-im2col``: an im2col load of an implicit-GEMM convolution over
  ResNet-50's conv3_x 3 x 3 layer (He et al. 2016, Table 1: 28 x 28 x 128 activations;
  batch 32, fp16 NHWC, padding 1): 128 output pixels x 64 channels for filter tap (0, 2),
  starting mid-row, so W restarts and H steps inside the tile.
* ``im2col-w-halo``: an im2col::w load (PTX 5.5.5) of a 1-D convolution along W with
  traversal stride 2: 64 pixels that run past the end of one image into the next, then
  3 halo pixels.
* ``im2col-w128-halo``: an im2col::w::128 load of a 1-D convolution along W: four groups
  of 32 pixels, each followed by 2 halo pixels, wOffset 1.
"""

from pathlib import Path
from dataclasses import dataclass

from ..model import (AccessMode, DataType, Im2colWideMode, Interleave, MapKind, OobFill, Operation, ReduceOp,
                     Request, Swizzle, TensorMap, encode_descriptor)
from ..model.tensormap import dense_strides
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
    "scatter4-rows": (
        TensorMap(MapKind.TILED, _F16, 0x90000000, (64, 50000), (128,), (64, 1), (1, 1), swizzle=Swizzle.B128),
        Request(Operation.STORE, (0, 5, 49999, 50000, 50001), smem_address=0x18400, mode=AccessMode.SCATTER4)),
    "conv-resnet50-im2col": (
        TensorMap(MapKind.IM2COL, _F16, 0xA0000000, (128, 28, 28, 32), dense_strides((128, 28, 28, 32), 2), (),
                  (1, 1, 1, 1), swizzle=Swizzle.B128, lower_corner=(-1, -1), upper_corner=(-1, -1),
                  channels_per_pixel=64, pixels_per_column=128),
        Request(Operation.LOAD, (64, 19, 12, 5), smem_address=0x1A000, mode=AccessMode.IM2COL, im2col_offsets=(0, 2))),
    "im2col-w-halo": (
        TensorMap(MapKind.IM2COL_WIDE, _F16, 0xB0000000, (64, 200, 1, 8), dense_strides((64, 200, 1, 8), 2), (),
                  (1, 2, 1, 1), swizzle=Swizzle.B128, lower_corner=(0,), upper_corner=(0,), channels_per_pixel=64,
                  pixels_per_column=64, wide_mode=Im2colWideMode.W),
        Request(Operation.LOAD, (0, 120, 0, 2), smem_address=0x1E000, mode=AccessMode.IM2COL_W, w_halo=3)),
    "im2col-w128-halo": (
        TensorMap(MapKind.IM2COL_WIDE, _F16, 0xB0000000, (64, 1024, 1, 8), dense_strides((64, 1024, 1, 8), 2), (),
                  (1, 1, 1, 1), swizzle=Swizzle.B128, lower_corner=(0,), upper_corner=(-2,), channels_per_pixel=64,
                  wide_mode=Im2colWideMode.W128),
        Request(Operation.LOAD, (0, 256, 0, 3), smem_address=0x20000, mode=AccessMode.IM2COL_W_128, w_halo=2,
                w_offset=1)),
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
    unit = None                             # a compiled backend: one library for every case
    if backend == "cxxrtl":
        from .cxxrtl import CxxrtlUnit, run_cxxrtl as run_compiled
        unit = CxxrtlUnit(config)
    elif backend == "verilator":
        from .verilator import VerilatorUnit, run_verilator as run_compiled
        unit = VerilatorUnit(config, trace=bool(vcd))
    elif backend != "pysim":
        raise ValueError(f"demo backend must be pysim, cxxrtl or verilator, not {backend!r}")
    if vcd:
        Path(vcd).parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in DEMO_CASES:
        scenario = demo_scenario(config, [name], copies)
        waveform = str(Path(vcd).with_name(f"{Path(vcd).stem}-{name}.vcd")) if vcd else None
        try:
            if backend == "pysim":
                from .pysim import run_pysim
                result = run_pysim(scenario, vcd=waveform)
            else:
                result = run_compiled(scenario, unit, vcd=waveform)
            verdict = "match"
        except Mismatch as error:
            rows.append(DemoRow(name, 0, 0, 0, "MISMATCH: " + str(error).splitlines()[0]))
            continue
        moved = sum(c[2] for c in result.completions)
        rows.append(DemoRow(name, moved, result.beats, result.cycles, verdict))
    return rows
