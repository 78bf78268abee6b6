"""Built-in workloads: the request streams real kernels send their copy unit, as tensor
maps and requests (``tma-unit explore`` sweeps them).

A workload is a list of tensor maps and the requests made on them, in issue order, and
how many *tiles* they form (a tile is one pipeline stage a consumer waits on: the A and B
blocks of one k-step, a K or V block, one filter tap). Where each shape comes from:

* ``gemm-cutlass-sm90``: CUTLASS's Hopper warp-specialized fp16 GEMM with a 128 x 128 x 64
  tile shape (CUTLASS example 48, ``TileShape = Shape<_128,_128,_64>``): per k-step an A
  and a B block of 128 rows x 64 fp16 (128 bytes, 128B swizzle); one output tile of a
  4096 x 4096 x 4096 problem walks K in 64 steps.
* ``gemm-deepgemm-fp8``: DeepGEMM's FP8 (e4m3) GEMM: BLOCK_M = BLOCK_N = 128, BLOCK_K =
  128 (128 bytes, 128B swizzle), plus the per-128-column fp32 scales of A as a 128 x 1 box
  without swizzle; the 4096 x 7168 shape is one of DeepGEMM's test shapes (K = 7168, the
  DeepSeek-V3 hidden size), 56 k-steps.
* ``attention-fa3``: FlashAttention-3's forward kernel for head dimension 128 in bf16 uses
  128 x 176 blocks (kBlockM x kBlockN, hopper/tile_size.h, non-causal); Q once, then per
  key block a K and a V block of 176 rows, each as two 64-column (128-byte) swizzle atoms;
  sequence length 8192, so the last block hangs past the end (OOB fill).
* ``conv-resnet50-3x3``: the 3 x 3 convolutions of ResNet-50's conv2_x..conv5_x stages
  (He et al. 2016, Table 1: 56x56x64, 28x28x128, 14x14x256, 7x7x512), batch 32, NHWC
  fp16, as an implicit GEMM: one output tile of 128 pixels, per filter tap and 64-channel
  block an im2col load (128 pixels x 64 channels, 128B swizzle) and the weight block.
* ``gather-moe-rows``: gather4 loads of 128 token rows (64 bf16 = 128 bytes each) out of a
  4096-wide activation matrix, as a mixture-of-experts layer gathers the tokens routed to
  one expert; the shape is illustrative (PTX 5.5.3.4 defines the access, not a kernel).

The RTL walks every one of these modes at one chunk per lane and cycle, im2col included,
and the timing model is checked against it cycle for cycle (tests/test_timing.py).
"""

from dataclasses import dataclass

from .model import (TYPE_INFO, AccessMode, DataType, MapKind, OobFill, Operation, Request, Swizzle, TensorMap,
                    encode_descriptor)
from .model.config import UnitConfig
from .model.tensormap import dense_strides
from .model.unit import fields_from_request

__all__ = ["Workload", "WORKLOADS", "workload"]

KIB = 1024


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    maps: tuple                 # TensorMap per descriptor slot
    requests: tuple             # (map index, Request) in issue order
    tiles: int

    def served_by(self, config: UnitConfig) -> bool:
        """Whether a unit of ``config`` builds every mode and swizzle the workload uses
        and holds its descriptors."""
        return (len(self.maps) <= config.slots
                and all(req.mode in config.built_modes for _, req in self.requests)
                and all(tm.swizzle in config.built_swizzles for tm in self.maps))

    def stream(self, config: UnitConfig):
        """(descriptor images by slot, SLOT_VALID mask, hardware request fields) on a unit
        configured as ``config``; the maps take slots 0, 1, ..."""
        if len(self.maps) > config.slots:
            raise ValueError(f"workload {self.name} needs {len(self.maps)} descriptor slots; "
                             f"config.slots = {config.slots}")
        images = {slot: encode_descriptor(tm) for slot, tm in enumerate(self.maps)}
        fields = [fields_from_request(Request(**{**req.__dict__, "request_id": i % (1 << config.id_width)}), slot)
                  for i, (slot, req) in enumerate(self.requests)]
        return images, (1 << len(self.maps)) - 1, fields


def _tiled(dtype, dims, box, swizzle=Swizzle.B128, oob=OobFill.NONE, base=0x1000_0000):
    element_bytes = TYPE_INFO[dtype].global_bytes(1)
    return TensorMap(MapKind.TILED, dtype, base, tuple(dims), tuple(dense_strides(dims, element_bytes)), tuple(box),
                     (1,) * len(dims), swizzle=swizzle, oob_fill=oob)


def _load(coords, smem, **kw):
    return Request(Operation.LOAD, tuple(coords), smem_address=smem, **kw)


def _gemm(name, description, dtype, m, n, k, block_m, block_n, block_k_bytes, k_steps, scales=False, stages=4):
    element = 1 if dtype == DataType.UINT8 else 2
    block_k = block_k_bytes // element
    maps = [_tiled(dtype, (k, m), (block_k, block_m), base=0x1000_0000),
            _tiled(dtype, (k, n), (block_k, block_n), base=0x4000_0000)]
    if scales:
        maps.append(_tiled(DataType.FLOAT32, (m, k // 128), (block_m, 1), swizzle=Swizzle.NONE, base=0x7000_0000))
    stage_bytes = block_m * block_k_bytes + block_n * block_k_bytes + (block_m * 4 if scales else 0)
    stage_bytes = -(-stage_bytes // 1024) * 1024
    requests = []
    for step in range(k_steps):
        smem = (step % stages) * stage_bytes
        requests.append((0, _load((step * block_k, 0), smem)))
        requests.append((1, _load((step * block_k, 0), smem + block_m * block_k_bytes)))
        if scales:
            requests.append((2, _load((0, step), smem + (block_m + block_n) * block_k_bytes)))
    return Workload(name, description, tuple(maps), tuple(requests), k_steps)


def _attention():
    seq, hdim, heads, block_m, block_n = 8192, 128, 16, 128, 176
    q = _tiled(DataType.BFLOAT16, (hdim, seq, heads), (64, block_m, 1), base=0x1000_0000)
    kv = _tiled(DataType.BFLOAT16, (hdim, seq, heads), (64, block_n, 1), base=0x2000_0000)
    v = _tiled(DataType.BFLOAT16, (hdim, seq, heads), (64, block_n, 1), base=0x3000_0000)
    block = block_n * 128                       # bytes of one 64-column half of a K or V block
    requests = [(0, _load((half * 64, 0, 5), half * block_m * 128)) for half in (0, 1)]
    base = 2 * block_m * 128
    blocks = -(-seq // block_n)
    for j in range(blocks):
        stage = base + (j % 2) * 4 * block
        for which, offset in ((1, 0), (2, 2 * block)):
            for half in (0, 1):
                requests.append((which, _load((half * 64, j * block_n, 5), stage + offset + half * block)))
    return Workload("attention-fa3", "FlashAttention-3 forward, hdim 128 bf16, Q then K and V in 128 x 176 blocks",
                    (q, kv, v), tuple(requests), 1 + blocks)


def _convolution():
    batch, tile_pixels, channels_per_load = 32, 128, 64
    maps, requests = [], []
    stage = 0
    for height, channels in ((56, 64), (28, 128), (14, 256), (7, 512)):
        dims = (channels, height, height, batch)
        activations = TensorMap(MapKind.IM2COL, DataType.FLOAT16, 0x1000_0000 * (1 + len(maps)), dims,
                                tuple(dense_strides(dims, 2)), (), (1, 1, 1, 1), swizzle=Swizzle.B128,
                                lower_corner=(-1, -1), upper_corner=(-1, -1),
                                channels_per_pixel=channels_per_load, pixels_per_column=tile_pixels)
        weights = _tiled(DataType.FLOAT16, (9 * channels, channels), (64, 128), base=0x8000_0000 + len(maps) * 0x100_0000)
        a, b = len(maps), len(maps) + 1
        maps += [activations, weights]
        for tap in range(9):
            for block in range(channels // channels_per_load):
                smem = (stage % 4) * 32 * KIB
                requests.append((a, _load((block * channels_per_load, -1, -1, 0), smem, mode=AccessMode.IM2COL,
                                          im2col_offsets=(tap % 3, tap // 3))))
                requests.append((b, _load((tap * channels + block * channels_per_load, 0), smem + 16 * KIB)))
                stage += 1
    return Workload("conv-resnet50-3x3", "ResNet-50 3x3 convolutions (conv2_x..conv5_x) as im2col implicit GEMM, "
                    "fp16 NHWC, 128-pixel tiles", tuple(maps), tuple(requests), stage)


def _gather():
    hidden, tokens, routed = 4096, 16384, 128
    table = _tiled(DataType.BFLOAT16, (hidden, tokens), (64, 1), base=0x1000_0000)
    rows = [(i * 7919) % tokens for i in range(routed)]          # a scattered routing, spread over the table
    requests = []
    for k in range(8):
        for g in range(routed // 4):
            smem = (k % 4) * routed * 128 + g * 4 * 128
            requests.append((0, _load((k * 64, *rows[4 * g:4 * g + 4]), smem, mode=AccessMode.GATHER4)))
    return Workload("gather-moe-rows", "gather4 of 128 routed token rows, 64 bf16 per row, 8 column blocks",
                    (table,), tuple(requests), 8)


#: name -> Workload
WORKLOADS = {w.name: w for w in (
    _gemm("gemm-cutlass-sm90", "CUTLASS SM90 fp16 GEMM, 128x128x64 tile, 64 k-steps",
          DataType.FLOAT16, 4096, 4096, 4096, 128, 128, 128, 64),
    _gemm("gemm-deepgemm-fp8", "DeepGEMM FP8 GEMM, 128x128x128 blocks with A scales, 56 k-steps",
          DataType.UINT8, 4096, 4096, 7168, 128, 128, 128, 56, scales=True),
    _attention(),
    _convolution(),
    _gather(),
)}


def workload(name: str) -> Workload:
    if name not in WORKLOADS:
        raise KeyError(f"no workload {name!r}; known: {', '.join(WORKLOADS)}")
    return WORKLOADS[name]
