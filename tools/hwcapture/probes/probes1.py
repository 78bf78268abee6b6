"""Probe set 1 for the H200 capture (tests/vectors/h200-findings.md): the innermost
coordinate's alignment, the shared-memory address's alignment without a swizzle, cases
82, 150 and 229 in a 64 KiB window, and interleaved cases moved in bounds. Writes a
cases file for tools/hwcapture/capture and a pickle of (case, window override, note).

Usage: python probes1.py probes1.bin probes1.pkl
"""
import dataclasses, sys
from tma_unit.sim.conformance import case_list
from probeset import ProbeSet
cs = case_list()
probes = ProbeSet(1000)
add = probes.add
def at(case, coords=None, smem=None):
    req = case.request
    if coords is not None: req = dataclasses.replace(req, coordinates=tuple(coords))
    if smem is not None: req = dataclasses.replace(req, smem_address=smem)
    return dataclasses.replace(case, request=req)
base = cs[0]        # f16 (256, 64) box (64, 16), no swizzle
for c in (1, 2, 4, 6, 8, 16, 24, -8, -4, -1):
    add(at(base, coords=(c, 0)), f"P1 f16 coord0={c}")
for c in (1, 3):
    add(at(base, coords=(0, c)), f"P1 f16 coord1={c}")
store = cs[93]      # f16 store (48, 24) box (32, 8) B64
for c in (4, 8):
    add(at(store, coords=(c, 0)), f"P1 store f16 coord0={c}")
for s in (0x10, 0x20, 0x40, 0x80, 0x200):
    add(at(base, smem=s), f"P2 no-swizzle smem={s:#x}")
for i in (82, 150, 229):
    add(cs[i], f"P3 case {i} with a 64 KiB window", window=65536)
for i in (80, 81, 82):
    add(at(cs[i], coords=(0, 0, 0, 0)), f"P4 case {i} in bounds at 0")
    add(at(cs[i], coords=(0, 8, 4, 0)), f"P4 case {i} in bounds at (0,8,4,0)")
probes.write(sys.argv[1], sys.argv[2])
