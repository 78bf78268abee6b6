"""Probe set 3 for the H200 capture (tests/vectors/h200-findings.md): which conversion a
tf32 load makes, and the interleave cases probe set 2 left open. Writes a cases file and
a pickle of (HardwareCase, window_override_or_None, note).

Usage: python probes3.py probes3.bin probes3.pkl

"""
import sys
from tma_unit.sim.conformance import case_list, HardwareCase, _tiled
from tma_unit.model import DataType, Interleave, OobFill, Operation, Request, Swizzle
from probeset import ProbeSet

cs = case_list()
probes = ProbeSet(3000)
F16, F32, U8 = DataType.FLOAT16, DataType.FLOAT32, DataType.UINT8
W64K = 65536


def add(tm, req, note, window=None, offset=0, expect=None):
    probes.add(HardwareCase(0, tm, req, offset), note, window, expect)


L, S = Operation.LOAD, Operation.STORE

# --- E: which conversion a tf32 load makes (word w holds w: at these offsets the words are
# normal floats whose low 13 mantissa bits are above half (E1, E2) or start at exactly
# half (E3): truncation, round-to-nearest and a denormal flush each give other bits)
add(_tiled(DataType.TFLOAT32, (16, 8), (8, 4)), Request(L, (0, 0), 0), "E1 load TFLOAT32 words 0x803F80..", offset=0x200FE00)
add(_tiled(DataType.TFLOAT32_FTZ, (16, 8), (8, 4)), Request(L, (0, 0), 0), "E2 load TFLOAT32_FTZ words 0x803F80..", offset=0x200FE00)
add(_tiled(DataType.TFLOAT32, (16, 8), (8, 4)), Request(L, (0, 0), 0), "E3 load TFLOAT32 words 0x801000.. (a tie first)", offset=0x2004000)

# --- F: interleave cases the C probes left open
def il(dtype, dims, box, inter=Interleave.B16, sw=Swizzle.NONE, es=None):
    return _tiled(dtype, dims, box, es, interleave=inter, swizzle=sw)
add(il(F16, (16, 20, 10, 3, 2), (16, 8, 4, 2, 2)), Request(L, (0, 0, 0, 0, 0), 0), "F1 16B rank 5 box (16,8,4,2,2): which dimension is not walked?", window=W64K)
add(il(U8, (32, 20, 10), (16, 8, 4)), Request(L, (0, 3, 0), 0), "F2 16B rank 3, dim-1 coordinate 3: applied?", window=W64K)
add(il(F16, (16, 20, 10, 2), (16, 8, 4, 1)), Request(L, (0, 0, 12, 0), 0), "F3 16B rank 4, the skipped dimension's coordinate 12 past its 10: filled?", window=W64K)
add(il(F16, (16, 20, 10, 2), (16, 8, 4, 1)), Request(L, (0, 0, -1, 0), 0), "F4 16B rank 4, the skipped dimension's coordinate -1", window=W64K)
add(il(F16, (16, 20, 10, 2), (16, 8, 4, 1), sw=Swizzle.NONE), Request(S, (0, 0, 0, 0), 0), "F5 16B store rank 4", window=W64K)

probes.write(sys.argv[1], sys.argv[2])
