"""Probe set 2 for the H200 capture (tests/vectors/h200-findings.md): swizzled rows
narrower than the swizzle's span, interleave, stores of chunks that straddle the
tensor's end, FTZ and tf32 loads. Writes a cases file and a pickle of (HardwareCase,
window_override_or_None, note).

Usage: python probes2.py probes2.bin probes2.pkl

"""
import sys
from tma_unit.sim.conformance import case_list, HardwareCase, _tiled
from tma_unit.model import DataType, Interleave, OobFill, Operation, Request, Swizzle
from probeset import ProbeSet

cs = case_list()
probes = ProbeSet(2000)
F16, F32, U8 = DataType.FLOAT16, DataType.FLOAT32, DataType.UINT8
W64K = 65536


def add(tm, req, note, window=None, offset=0, expect=None):
    probes.add(HardwareCase(0, tm, req, offset), note, window, expect)


L, S = Operation.LOAD, Operation.STORE

# --- A/B: swizzled rows narrower than the swizzle span -----------------------------------
# Loads: pitch = span for every width seen (B32:16; B64:16,32; B128:64,96,112). Untested widths:
add(_tiled(F16, (64, 16), (24, 4), swizzle=Swizzle.B128), Request(L, (0, 0), 0), "A1 load B128 48-byte rows (pitch 128?)")
add(_tiled(F32, (64, 16), (4, 4), swizzle=Swizzle.B128), Request(L, (0, 0), 0), "A2 load B128 16-byte rows (pitch 128?)")
add(_tiled(F32, (64, 16), (8, 4), swizzle=Swizzle.B128), Request(L, (0, 0), 0), "A3 load B128 32-byte rows (pitch 128?)")
add(_tiled(F16, (64, 16), (24, 4), swizzle=Swizzle.B64), Request(L, (0, 0), 128), "A4 load B64 48-byte rows, dst 128 (pitch 64?)")
add(_tiled(F16, (64, 16, 4), (8, 3, 2), swizzle=Swizzle.B32), Request(L, (0, 0, 0), 384), "A5 load B32 16-byte rows rank 3")
# mbarrier credit: padded bytes instead of the dense count -> expect tx_complete 0 if the
# credit is the dense count (A1 dense 192, padded 512; case 130 dense 32, padded 64)
add(_tiled(F16, (64, 16), (24, 4), swizzle=Swizzle.B128), Request(L, (0, 0), 0), "A6 = A1 with padded count", expect=512)
c130 = cs[130]
add(c130.tensor_map, c130.request, "A7 case 130 (all OOB) with padded count", offset=c130.global_offset, expect=64)
add(c130.tensor_map, c130.request, "A8 case 130 (all OOB) with a 64 KiB window", window=W64K, offset=c130.global_offset)
# Stores: no captured store had >1 in-bounds narrow swizzled row. Which smem bytes are read?
add(_tiled(F32, (8, 8), (4, 4), swizzle=Swizzle.B32), Request(S, (0, 0), 0), "A9 store B32 16-byte rows")
add(_tiled(U8, (64, 8), (16, 4), swizzle=Swizzle.B64), Request(S, (0, 0), 128), "A10 store B64 16-byte rows")
add(_tiled(F16, (64, 8), (24, 3), swizzle=Swizzle.B128), Request(S, (0, 0), 0), "A11 store B128 48-byte rows")
add(_tiled(F32, (64, 8), (8, 4), swizzle=Swizzle.B64), Request(S, (8, 2), 256), "A12 store B64 32-byte rows")
# element stride on dim 0 without interleave (model: traversed as 1); rounding of box/estride
add(_tiled(F32, (64, 16), (8, 4), [2, 1]), Request(L, (0, 0), 0), "A13 load es[0]=2 no interleave", window=W64K)
add(_tiled(F32, (16, 32), (8, 5), [1, 2], swizzle=Swizzle.B32), Request(L, (0, 0), 0), "A14 load box1=5 es1=2: rows ceil(5/2)=3?", window=W64K)

# --- C: interleave (all with a 64 KiB window so writes past the model's box show) --------
def il(dtype, dims, box, inter=Interleave.B16, sw=Swizzle.NONE, es=None):
    return _tiled(dtype, dims, box, es, interleave=inter, swizzle=sw)
D4 = (16, 20, 10, 2)
add(il(F16, D4, (16, 8, 4, 2)), Request(L, (0, 0, 0, 0), 0), "C1 16B box (16,8,4,2) coords 0: are dims 2,3 traversed at all?", window=W64K)
add(il(F16, D4, (16, 8, 1, 1)), Request(L, (0, 0, 0, 0), 0), "C2 16B box (16,8,1,1)", window=W64K)
add(il(F16, D4, (16, 4, 4, 1)), Request(L, (0, 0, 0, 0), 0), "C3 16B box (16,4,4,1): rows = box1?", window=W64K)
add(il(F16, D4, (8, 8, 4, 1)), Request(L, (0, 0, 0, 0), 0), "C4 16B box0*2 = 16 B = one granule", window=W64K)
add(il(F16, D4, (4, 8, 4, 1)), Request(L, (0, 0, 0, 0), 0), "C5 16B box0 = 4 (8 bytes)", window=W64K)
add(il(F16, D4, (16, 8, 4, 1)), Request(L, (8, 0, 0, 0), 0), "C6 16B dim0 coordinate 8: elements or granules?", window=W64K)
add(il(F16, D4, (16, 8, 4, 1)), Request(L, (0, 0, 1, 0), 0), "C7 16B dim2 coordinate 1: stride 640 used?", window=W64K)
add(il(F16, (8, 20, 10, 2), (8, 8, 4, 1)), Request(L, (0, 0, 0, 0), 0), "C8 16B dims0=8 (one granule) strides 16", window=W64K)
add(il(F16, (8, 20, 10, 2), (8, 8, 4, 1)), Request(L, (0, 16, 0, 0), 0), "C9 = C8 at y=16: rows past dims1 filled?", window=W64K)
add(il(F32, (8, 20, 10, 2), (4, 8, 4, 1)), Request(L, (0, 0, 0, 0), 0), "C10 16B f32 box0 4 (one granule)", window=W64K)
add(il(U8, (32, 20, 10), (16, 8, 4)), Request(L, (0, 0, 0), 0), "C11 16B u8 rank 3 box0 16 (one granule)", window=W64K)
add(il(F16, D4, (16, 8, 4, 1), es=[2, 1, 1, 1]), Request(L, (0, 0, 0, 0), 0), "C12 16B es[0]=2", window=W64K)
add(il(F16, D4, (16, 8, 4, 1), Interleave.B32, Swizzle.B32), Request(L, (0, 0, 0, 0), 0), "C13 32B box (16,8,4,1) coords 0 (1026 faulted in 2 KiB)", window=W64K)
add(il(F16, D4, (8, 8, 4, 1), Interleave.B32, Swizzle.B32), Request(L, (0, 0, 0, 0), 0), "C14 32B box0*2 = 16 B", window=W64K)
add(il(F16, (16, 20, 10, 2), (16, 8, 4, 2), Interleave.B32, Swizzle.B32), Request(L, (0, 0, 0, 0), 0), "C15 32B box (16,8,4,2)", window=W64K)
add(il(F16, D4, (16, 8, 4, 1)), Request(L, (0, 0, 0, 0), 0), "C16 16B box (16,8,4,1) coords 0 with HI count", window=W64K, expect=2048)

# --- D: stores of a chunk that straddles globalDim[0]; FTZ / tf32 ----------------------
add(_tiled(F32, (6, 4), (8, 2)), Request(S, (0, 0), 0), "D1 store f32 dims0=6 stride 32: x=6,7 written (chunk-granular)?")
add(_tiled(F32, (2, 4), (8, 1)), Request(S, (0, 0), 0), "D2 store f32 dims0=2 stride 16: x=2,3 written? x=4..7 (next row) written?")
add(_tiled(F16, (5, 4), (8, 2)), Request(S, (0, 0), 0), "D3 store f16 dims0=5 stride 16")
add(_tiled(F32, (6,), (8,)), Request(S, (0,), 0), "D4 store rank-1 f32 dims 6 box 8")
add(_tiled(DataType.TFLOAT32, (6, 4), (8, 2)), Request(S, (0, 0), 0), "D5 store TFLOAT32 (no FTZ): raw 32 bits or rounded?")
add(_tiled(F32, (6, 4), (8, 2), swizzle=Swizzle.B32), Request(S, (0, 0), 0), "D6 = D1 with B32 swizzle")
# global word w holds w: small w are f32 denormals with low mantissa bits set
add(_tiled(DataType.FLOAT32_FTZ, (16, 8), (8, 4)), Request(L, (0, 0), 0), "D7 load FLOAT32_FTZ denormal words: flushed?")
add(_tiled(DataType.TFLOAT32, (16, 8), (8, 4)), Request(L, (0, 0), 0), "D8 load TFLOAT32 words: low 13 bits kept?")
add(_tiled(DataType.TFLOAT32_FTZ, (16, 8), (8, 4)), Request(L, (0, 0), 0), "D9 load TFLOAT32_FTZ denormals")

probes.write(sys.argv[1], sys.argv[2])
