"""The hardware-capture harness without a GPU: the case list, the file formats and the
comparison with the model, on synthetic results; and the harness builds with the nvcc of
the dev extra."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from tma_unit.model import Operation, Swizzle, AccessMode, Interleave, OobFill
from tma_unit.sim.conformance import (case_list, compare_vectors, pack_results, read_cases,
                                      synthetic_results, write_cases, read_results)

HARNESS = Path(__file__).resolve().parent.parent / "tools" / "hwcapture"
VECTORS = Path(__file__).resolve().parent / "vectors"


def test_case_list_covers_the_issue():
    cases = case_list()
    assert len(cases) >= 200
    swizzles = {c.tensor_map.swizzle for c in cases}
    assert {Swizzle.NONE, Swizzle.B32, Swizzle.B64, Swizzle.B128} <= swizzles
    assert {c.request.smem_address % 1024 for c in cases if c.tensor_map.swizzle == Swizzle.B128} > {0}
    assert {c.tensor_map.rank for c in cases} == {1, 2, 3, 4, 5}
    assert {c.tensor_map.interleave for c in cases} == set(Interleave)
    assert {c.tensor_map.oob_fill for c in cases} == set(OobFill)
    assert {e for c in cases for e in c.tensor_map.element_strides} >= set(range(1, 9))
    assert {c.tensor_map.rank for c in cases if c.request.mode == AccessMode.IM2COL} == {3, 4, 5}
    assert any(c.request.operation == Operation.STORE for c in cases)


def test_formats_round_trip_and_model_matches_itself(tmp_path):
    cases = case_list(random_cases=40)
    write_cases(cases, tmp_path / "cases.bin")
    assert [r[0] for r in read_cases(tmp_path / "cases.bin")] == [c.id for c in cases]
    synthetic_results(cases, tmp_path / "results.bin")
    assert len(read_results(tmp_path / "results.bin")) == len(cases)
    pack_results(cases, tmp_path / "results.bin", tmp_path / "vectors.npz", "synthetic", "none")
    assert compare_vectors(cases, tmp_path / "vectors.npz") == []


def test_comparison_catches_a_wrong_byte(tmp_path):
    cases = case_list(random_cases=0)[:20]
    synthetic_results(cases, tmp_path / "results.bin")
    pack_results(cases, tmp_path / "results.bin", tmp_path / "vectors.npz", "synthetic", "none")
    vectors = dict(np.load(tmp_path / "vectors.npz"))
    start = int(vectors["offsets"][5]) + cases[5].request.smem_address
    vectors["payload"][start] ^= 0xFF                  # the first byte of case 5's box
    vectors["tx_complete"][7] = 0
    vectors["tx_complete"][9] = -715                  # capture.cu's record of a copy that faulted
    np.savez(tmp_path / "bad.npz", **vectors)
    problems = compare_vectors(cases, tmp_path / "bad.npz")
    assert len(problems) == 3
    assert problems[0].startswith("case 5 ") and "1 bytes differ" in problems[0]
    assert problems[1] == "case 7: the mbarrier did not complete with the model's byte count"
    assert problems[2] == ("case 9: the copy faulted on the GPU (CUDA error 715, an illegal instruction) where the "
                           "model accepts it")


def test_the_h200_capture_is_of_todays_case_list():
    """tests/vectors/h200.npz (README.md beside it) holds one result per case of the
    case list, captured from exactly these parameters."""
    vectors = np.load(VECTORS / "h200.npz")
    cases = case_list()
    assert len(vectors["records"]) == len(vectors["encode_status"]) == len(cases)
    assert all(record.tobytes() == case.record() for record, case in zip(vectors["records"], cases))
    assert str(vectors["device"]) == "NVIDIA H200"


def test_harness_builds_with_nvcc(tmp_path):
    """build.sh finds the nvcc that the dev extra installs (PyPI's nvidia-cuda-nvcc, with
    cuda.h and cuda_runtime.h beside it) for this Python and builds a Linux executable
    with it; no CUDA toolkit, driver or GPU is needed."""
    env = {**{k: v for k, v in os.environ.items() if k != "NVCC"}, "PYTHON": sys.executable}
    built = subprocess.run([str(HARNESS / "build.sh"), str(tmp_path / "capture")], env=env, capture_output=True,
                           text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    assert built.stdout.startswith(f"built {tmp_path / 'capture'} and {tmp_path / 'timing'} with {sys.prefix}"), \
        built.stdout
    assert (tmp_path / "capture").read_bytes()[:4] == (tmp_path / "timing").read_bytes()[:4] == b"\x7fELF"


def test_without_nvcc_the_build_says_how_to_get_one(tmp_path):
    """Where there is no nvcc (no wheel for the Python given, none on PATH, no $NVCC), the
    build stops at once with one line saying how to install it."""
    env = {"PATH": str(tmp_path), "PYTHON": str(tmp_path / "no-python")}
    stopped = subprocess.run([shutil.which("bash"), str(HARNESS / "build.sh"), str(tmp_path / "capture")], env=env,
                             capture_output=True, text=True)
    assert (stopped.returncode, stopped.stdout) == (1, "")
    assert stopped.stderr == ("build.sh: no nvcc (the CUDA compiler): pip install -e '.[dev]' installs it "
                              "(nvidia-cuda-nvcc), or put the CUDA toolkit's bin on PATH, or set NVCC\n")
    assert not (tmp_path / "capture").exists()
