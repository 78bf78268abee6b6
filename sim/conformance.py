"""Conformance against real Hopper hardware: the case list, the file formats of the
capture harness (``tools/hwcapture/capture.cu``), and the comparison of captured images
with the golden model.

Flow: :func:`case_list` -> :func:`write_cases` (cases.bin) -> the harness on a GPU
(results.bin) -> :func:`pack_results` (an .npz for ``tests/vectors/``) ->
:func:`compare_vectors` (every case against the model, byte for byte outside padding).
:func:`synthetic_results` writes the results.bin a conforming GPU would, from the model, so
the formats and the comparison are tested without a GPU.

What the harness does, which the model side mirrors here: global memory is a buffer whose
32-bit word ``w`` holds ``w`` (loads) or every byte 0x5A (stores), the tensor starting
``global_offset`` bytes in; shared memory is a 1024-byte-aligned window poisoned with 0xA5
(loads) or holding byte ``(131 * i + 17) & 0xFF`` at offset ``i`` (stores); the copy's
``dstMem``/``srcMem`` is ``smem_offset`` bytes into the window.
"""

import struct
from dataclasses import dataclass

import numpy as np

from ..model import (AccessMode, DataType, GlobalMemory, Interleave, MapKind, OobFill, Operation,
                     Request, Swizzle, TensorMap, TYPE_INFO, load, store, transaction_bytes)
from ..model.tensormap import CORNER_RANGES, dense_strides

__all__ = ["CASE_FORMAT", "HardwareCase", "case_list", "write_cases", "read_cases", "synthetic_results",
           "read_results", "write_records", "pack_results", "compare_vectors", "CASES_MAGIC", "RESULTS_MAGIC"]

CASES_MAGIC = 0x43414D54
RESULTS_MAGIC = 0x52414D54
FORMAT_VERSION = 1
POISON = 0xA5
STORE_FILL = 0x5A
FAKE_BASE = 0x7F0000000000          # where the model places the harness's buffer

#: struct layout of capture.cu's CaseRecord (256 bytes, little-endian)
CASE_FORMAT = struct.Struct("<IBBBBI5Q4Q5I5I3i3iIIBBBB5i3HHIIIQQ40x")
RESULT_FORMAT = struct.Struct("<IiiI16x")
assert CASE_FORMAT.size == 256 and RESULT_FORMAT.size == 32


@dataclass(frozen=True)
class HardwareCase:
    """One capture: a tensor map, a request, and where things sit in the harness."""
    id: int
    tensor_map: TensorMap
    request: Request
    global_offset: int = 0

    @property
    def window_bytes(self) -> int:
        """Shared-memory window: the box past ``smem_offset``, rounded to 1 KiB, plus 1 KiB
        of margin so stray writes would show."""
        end = self.request.smem_address + transaction_bytes(self.tensor_map, self.request)
        return (end + 1023) // 1024 * 1024 + 1024

    @property
    def global_bytes(self) -> int:
        tm = self.tensor_map
        if tm.rank == 1:
            return (TYPE_INFO[tm.dtype].global_bytes(tm.global_dims[0]) + 15) // 16 * 16
        return tm.global_strides[-1] * tm.global_dims[-1]

    def record(self, window: int | None = None, expect_tx: int | None = None) -> bytes:
        """The case as capture.cu reads it; a probe may give the shared-memory window's
        size and the mbarrier's byte count itself (default: :attr:`window_bytes` and the
        model's transaction bytes)."""
        tm, req = self.tensor_map, self.request
        pad = lambda values, n, fill=0: list(values) + [fill] * (n - len(values))
        kind = 0 if tm.kind == MapKind.TILED else 1
        return CASE_FORMAT.pack(
            self.id, kind, 0 if req.operation == Operation.LOAD else 1, int(req.mode), int(tm.dtype), tm.rank,
            *pad(tm.global_dims, 5, 1), *pad(tm.global_strides, 4), *pad(tm.box_dims, 5, 1),
            *pad(tm.element_strides, 5, 1), *pad(tm.lower_corner, 3), *pad(tm.upper_corner, 3),
            tm.channels_per_pixel, tm.pixels_per_column, int(tm.interleave), int(tm.swizzle),
            int(tm.l2_promotion), int(tm.oob_fill), *pad(req.coordinates, 5), *pad(req.im2col_offsets, 3), 0,
            req.smem_address, window or self.window_bytes, expect_tx or transaction_bytes(tm, req),
            self.global_bytes, self.global_offset)


def _tiled(dtype, dims, box, es=None, offset=0, **kw):
    info = TYPE_INFO[dtype]
    align = 32 if kw.get("interleave") == Interleave.B32 else 16
    return TensorMap(MapKind.TILED, dtype, FAKE_BASE + offset, dims, dense_strides(dims, info.bits / 8, align), box,
                     es or [1] * len(dims), **kw)


def case_list(seed: int = 2026, random_cases: int = 160) -> list[HardwareCase]:
    """The systematic cases and ``random_cases`` seeded random ones (Hopper features only:
    the 16B-atomicity swizzles NONE/32B/64B/128B, no packed types, no gather4 - those are
    sm_100 features)."""
    cases = []

    def add(tm, req, offset=0):
        cases.append(HardwareCase(len(cases), tm, req, offset))

    f16 = DataType.FLOAT16
    # every Hopper swizzle, aligned and unaligned destinations (the base-offset rule)
    for swizzle, width in ((Swizzle.NONE, 64), (Swizzle.B32, 16), (Swizzle.B64, 32), (Swizzle.B128, 64)):
        for dst in (0, 128, 256, 384, 640, 896):
            add(_tiled(f16, (256, 64), (width, 16), swizzle=swizzle), Request(Operation.LOAD, (0, 0), dst))
    # OOB on every side, zero and NaN fill
    for dtype in (DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT32):
        width = 64 // TYPE_INFO[dtype].unit_global_bytes
        for fill in OobFill:
            for coords in ((-8, 0), (0, -3), (40, 0), (0, 20), (-8, -3), (40, 20), (-width, 0), (0, 24)):
                add(_tiled(dtype, (48, 24), (width, 8), swizzle=Swizzle.B64, oob_fill=fill),
                    Request(Operation.LOAD, coords, 0))
    # element strides 1..8
    for es in range(1, 9):
        add(_tiled(DataType.FLOAT32, (16, 64, 8), (16, 16, 4), [1, es, 9 - es]), Request(Operation.LOAD, (0, 1, 0), 0))
    # interleave 16B and 32B
    for interleave, swizzle in ((Interleave.B16, Swizzle.NONE), (Interleave.B16, Swizzle.B64), (Interleave.B32, Swizzle.B32)):
        add(_tiled(f16, (16, 20, 10, 2), (16, 8, 4, 1), interleave=interleave, swizzle=swizzle),
            Request(Operation.LOAD, (0, 16, 8, 1), 0))
    # ranks 1..5
    for rank in range(1, 6):
        dims = [64, 9, 7, 5, 3][:rank]
        box = [32, 4, 3, 2, 2][:rank]
        add(_tiled(f16, dims, box, swizzle=Swizzle.B64), Request(Operation.LOAD, tuple([-4] * rank), 0))
    # im2col: the PTX 5.5.4 examples and each rank
    for lower, upper, offsets, coords in (((-1, -1), (-1, -1), (0, 0), (7, 7, 4, 0)),
                                          ((0, 0), (-2, -2), (2, 2), (7, 7, 4, 0))):
        dims = [64, 9, 14, 64]
        tm = TensorMap(MapKind.IM2COL, f16, FAKE_BASE, dims, dense_strides(dims, 2), (), [1, 1, 1, 1],
                       swizzle=Swizzle.B128, lower_corner=lower, upper_corner=upper, channels_per_pixel=8,
                       pixels_per_column=64)
        add(tm, Request(Operation.LOAD, coords, 0, AccessMode.IM2COL, offsets))
    for rank in (3, 4, 5):
        dims = [32, 6, 5, 4, 2][:rank - 1] + [2]
        low, _ = CORNER_RANGES[rank]
        tm = TensorMap(MapKind.IM2COL, f16, FAKE_BASE, dims, dense_strides(dims, 2), (), [1] * rank,
                       swizzle=Swizzle.B64, lower_corner=[-1] * (rank - 2), upper_corner=[-1] * (rank - 2),
                       channels_per_pixel=32, pixels_per_column=40)
        add(tm, Request(Operation.LOAD, tuple([0] + [1] * (rank - 2) + [0]), 0, AccessMode.IM2COL, (1,) * (rank - 2)))
    # stores with out-of-bounds elements skipped
    for coords in ((0, 0), (32, 16), (40, 20)):
        add(_tiled(f16, (48, 24), (32, 8), swizzle=Swizzle.B64), Request(Operation.STORE, coords, 0))

    rng = np.random.default_rng(seed)
    dtypes = [d for d in DataType if not TYPE_INFO[d].packed]
    for _ in range(random_cases):
        dtype = dtypes[rng.integers(len(dtypes))]
        info = TYPE_INFO[dtype]
        rank = int(rng.integers(1, 6))
        swizzle = [Swizzle.NONE, Swizzle.B32, Swizzle.B64, Swizzle.B128][rng.integers(4)]
        span = swizzle.span or 256
        chunk_values = 16 // info.unit_global_bytes
        box0 = chunk_values * int(rng.integers(1, max(2, min(span, 128) // 16 + 1)))
        box = [box0] + [int(rng.integers(1, 6)) for _ in range(rank - 1)]
        es = [1] + [int(rng.integers(1, 4)) for _ in range(rank - 1)]
        dims = [int(rng.integers(1, box0 + 16))] + [int(rng.integers(1, b * e + 4)) for b, e in zip(box[1:], es[1:])]
        fill = OobFill.NAN_REQUEST_ZERO_FMA if info.is_float and rng.random() < 0.4 else OobFill.NONE
        offset = 16 * int(rng.integers(0, 4))
        tm = _tiled(dtype, dims, box, es, offset=offset, swizzle=swizzle, oob_fill=fill)
        operation = Operation.STORE if rng.random() < 0.2 else Operation.LOAD
        low = 0 if operation == Operation.STORE else -4
        coords = tuple(int(rng.integers(low, d + 2)) for d in dims)
        dst = 128 * int(rng.integers(0, 8)) if swizzle != Swizzle.NONE else 16 * int(rng.integers(0, 64))
        add(tm, Request(operation, coords, dst), offset)
    return cases


def write_cases(cases, path) -> None:
    write_records([case.record() for case in cases], path)


def write_records(records, path) -> None:
    """A case file of ``records`` (:meth:`HardwareCase.record`)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<4I", CASES_MAGIC, FORMAT_VERSION, len(records), 0))
        f.write(b"".join(records))


def read_cases(path) -> list[tuple]:
    """The raw records of a case file (tuples in CASE_FORMAT order)."""
    data = open(path, "rb").read()
    magic, version, count, _ = struct.unpack_from("<4I", data)
    if magic != CASES_MAGIC or version != FORMAT_VERSION:
        raise ValueError(f"{path}: not a version-{FORMAT_VERSION} case file")
    return [CASE_FORMAT.unpack_from(data, 16 + 256 * i) for i in range(count)]


# -- what the model says the harness should capture --------------------------------------

def _global_buffer(case: HardwareCase) -> GlobalMemory:
    size = case.global_bytes + case.global_offset
    if case.request.operation == Operation.LOAD:
        words = np.arange(size // 4, dtype="<u4").view(np.uint8)
        data = np.zeros(size, dtype=np.uint8)
        data[:len(words)] = words
    else:
        data = np.full(size, STORE_FILL, dtype=np.uint8)
    return GlobalMemory(FAKE_BASE, data)


def expected_capture(case: HardwareCase):
    """(bytes the harness should return, mask of bytes to compare) per the model."""
    tm, req = case.tensor_map, case.request
    if req.operation == Operation.LOAD:
        window = np.full(case.window_bytes, POISON, dtype=np.uint8)
        result = load(tm, req, _global_buffer(case), window)
        box = np.zeros(case.window_bytes, dtype=bool)
        box[req.smem_address:req.smem_address + result.transaction_bytes] = True
        compare = result.defined | ~box           # data and fill, and untouched poison outside the box
        return window, compare
    window = (np.arange(case.window_bytes, dtype=np.uint32) * 131 + 17).astype(np.uint8)
    memory = _global_buffer(case)
    store(tm, req, window, memory)
    data = memory.data[case.global_offset:]
    return data, np.ones(len(data), dtype=bool)


def synthetic_results(cases, path) -> None:
    """The results.bin a GPU that behaves exactly as the model would write."""
    with open(path, "wb") as f:
        f.write(struct.pack("<4I", RESULTS_MAGIC, FORMAT_VERSION, len(cases), 0))
        for case in cases:
            payload, _ = expected_capture(case)
            f.write(RESULT_FORMAT.pack(case.id, 0, 1, len(payload)))
            f.write(payload.tobytes())


def read_results(path) -> list[tuple[int, int, int, bytes]]:
    data = open(path, "rb").read()
    magic, version, count, _ = struct.unpack_from("<4I", data)
    if magic != RESULTS_MAGIC or version != FORMAT_VERSION:
        raise ValueError(f"{path}: not a version-{FORMAT_VERSION} results file")
    offset, out = 16, []
    for _ in range(count):
        case_id, status, tx, size = RESULT_FORMAT.unpack_from(data, offset)
        offset += RESULT_FORMAT.size
        out.append((case_id, status, tx, data[offset:offset + size]))
        offset += size
    return out


def pack_results(cases, results_path, npz_path, device: str, driver: str) -> None:
    """results.bin + the case list -> one compact .npz for tests/vectors/."""
    results = read_results(results_path)
    payloads = [np.frombuffer(r[3], dtype=np.uint8) for r in results]
    np.savez_compressed(
        npz_path, records=np.frombuffer(b"".join(c.record() for c in cases), dtype=np.uint8).reshape(-1, 256),
        encode_status=np.array([r[1] for r in results], dtype=np.int32),
        tx_complete=np.array([r[2] for r in results], dtype=np.int32),
        offsets=np.cumsum([0] + [len(p) for p in payloads]).astype(np.int64),
        payload=np.concatenate(payloads) if payloads else np.zeros(0, np.uint8),
        device=np.array(device), driver=np.array(driver), format_version=np.array(FORMAT_VERSION))


#: The CUDA errors a faulting copy stops with (cudaError_t, driver_types.h), as
#: capture.cu records them (tx_complete = -error).
CUDA_ERRORS = {700: "an illegal memory access", 715: "an illegal instruction", 716: "a misaligned address"}


def compare_vectors(cases, npz_path) -> list[str]:
    """Every captured case against the model; one line per difference found."""
    vectors = np.load(npz_path)
    problems = []
    by_id = {case.id: case for case in cases}
    for index, record in enumerate(vectors["records"]):
        case_id = CASE_FORMAT.unpack(record.tobytes())[0]
        case = by_id[case_id]
        if record.tobytes() != case.record():
            problems.append(f"case {case_id}: the vectors were captured from different parameters")
            continue
        if vectors["encode_status"][index] != 0:
            problems.append(f"case {case_id}: the driver refused the tensor map (CUresult "
                            f"{vectors['encode_status'][index]}) that the model accepts")
            continue
        if vectors["tx_complete"][index] < 0:
            error = -int(vectors["tx_complete"][index])
            problems.append(f"case {case_id}: the copy faulted on the GPU (CUDA error {error}"
                            f"{', ' + CUDA_ERRORS[error] if error in CUDA_ERRORS else ''}) where the model "
                            "accepts it")
            continue
        if not vectors["tx_complete"][index]:
            problems.append(f"case {case_id}: the mbarrier did not complete with the model's byte count")
        got = vectors["payload"][vectors["offsets"][index]:vectors["offsets"][index + 1]]
        want, compare = expected_capture(case)
        if len(got) != len(want):
            problems.append(f"case {case_id}: {len(got)} bytes captured, {len(want)} expected")
            continue
        wrong = np.flatnonzero(compare & (got != want))
        if len(wrong):
            first = int(wrong[0])
            problems.append(f"case {case_id} ({case.request.operation.name} {case.tensor_map.dtype.name} "
                            f"swizzle {case.tensor_map.swizzle.name}): {len(wrong)} bytes differ, first at "
                            f"offset {first:#x}: hardware {int(got[first]):#04x}, model {int(want[first]):#04x}")
    return problems
