"""Waveforms of co-simulation runs (issue 5, item 6): a compiled backend's recording of a
whole run (CXXRTL's, and Verilator's of the exported Verilog) holds, cycle by cycle, the
beats and completions the golden model expects; and an RTL bug (the swizzle left out, by
patching the datapath) stops a run on every backend with a report that names the beat,
the cycle and the field, and a waveform of the cycles before it."""

import dataclasses
import gc
import os

import pytest

from tma_unit.model import DataType, MapKind, Operation, Request, Swizzle, TensorMap, encode_descriptor
from tma_unit.model.unit import fields_from_request
from tma_unit.rtl.layouts import beat_layout
from tma_unit.sim.cosim import LockstepChecker, MISMATCH_VCD_ENV, MISMATCH_WINDOW, Mismatch, Scenario

from tma_unit.sim.native import PERIOD_NS as PERIOD

from units import DEFAULT, grouped
from waveforms import TOP, Waveform

#: fp16 rows of 64 elements: 128 bytes, eight 16-byte chunks, one 128B swizzle line each
TILE = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x10000000, (256, 64), (512,), (64, 4), (1, 1),
                 swizzle=Swizzle.B128)
PORTS = ("beats__valid", "beats__ready", "beats__payload", "completions__valid", "completions__ready",
         "completions__payload")


def tile_scenario(config, corners, **backpressure):
    requests = [fields_from_request(Request(Operation.LOAD, corner, smem_address=0x400, request_id=i), 0)
                for i, corner in enumerate(corners)]
    return Scenario(config, {0: encode_descriptor(TILE)}, 1, requests, **backpressure)


def recording(backend, config, optimize=None):
    """A unit of a compiled backend with a waveform recorder, and the backend's checked run:
    CXXRTL's library always has one (the default lanes-1 unit every CXXRTL test uses),
    Verilator's is a build of its own (``trace``)."""
    if backend == "cxxrtl":
        from tma_unit.sim.cxxrtl import CxxrtlUnit, run_cxxrtl
        return CxxrtlUnit(config, optimize), run_cxxrtl
    from tma_unit.sim.verilator import VerilatorUnit, run_verilator
    return VerilatorUnit(config, optimize, trace=True), run_verilator


#: The compiled backends, each test in the group of the default lanes-1 unit of its backend.
BACKENDS = [pytest.param("cxxrtl", marks=grouped("cxxrtl", DEFAULT[1])),
            pytest.param("verilator", marks=grouped("verilator", DEFAULT[1]))]


@pytest.mark.slow          # a recording build of each compiled backend
@pytest.mark.parametrize("backend", BACKENDS)
def test_waveform_holds_the_beats_and_completions_the_model_expects(backend, tmp_path):
    """Beats and completions read back from the waveform alone, at each cycle's time, go
    through a fresh lockstep checker, and arrive at the cycles the run took them: a
    waveform sampled a cycle early or late, or with a port missing, fails one or the other."""
    config = DEFAULT[1]
    # the second box is partly out of bounds (dimensions 0 and 1); beats wait on a ready
    # pattern and requests on gaps, so the handshakes and payloads change out of step
    scenario = tile_scenario(config, [(0, 0), (224, 62)], seed=5, ready_probability=0.6, max_gap=3)
    path = tmp_path / "run.vcd"
    unit, run = recording(backend, config)
    result = run(scenario, unit, vcd=str(path))

    top = TOP[backend]
    wave = Waveform(path, [f"{top} {port}" for port in PORTS] + [f"{top} clk"])
    checker = LockstepChecker(scenario)
    beats = set(wave.handshakes(f"{top} beats", range(result.cycles), PERIOD))
    completions = set(wave.handshakes(f"{top} completions", range(result.cycles), PERIOD))
    for cycle in range(result.cycles):
        time = cycle * PERIOD
        assert (wave.at(f"{top} clk", time), wave.at(f"{top} clk", time + PERIOD // 2)) == (1, 0)
        if cycle in beats:
            checker.on_beat(cycle, wave.at(f"{top} beats__payload", time))
        if cycle in completions:
            checker.on_completion(cycle, wave.at(f"{top} completions__payload", time))
    read_back = checker.finish(result.cycles)
    box_bytes = 64 * 4 * 2          # out-of-bounds elements included; 16-byte chunks, one a beat
    expected = (2 * box_bytes // 16, [(0, 0, box_bytes), (1, 0, box_bytes)])
    assert (read_back.beats, read_back.completions) == (result.beats, result.completions) == expected
    # and at the cycles the run loop took them: a registered port sampled after the edge
    # (the completion queue's head) shows the next cycle's handshake a cycle early
    assert (read_back.beat_cycles, read_back.completion_cycles) == (result.beat_cycles, result.completion_cycles)
    assert wave.times[-1] == (result.cycles - 1) * PERIOD + PERIOD // 2


@pytest.mark.slow          # a recording build of each compiled backend
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_waveform_that_cannot_be_written_is_an_error_and_the_unit_runs_on(backend, tmp_path):
    config = DEFAULT[1]
    unit, run = recording(backend, config)
    with pytest.raises(FileNotFoundError, match="no-such-folder"):
        run(tile_scenario(config, [(0, 0)]), unit, vcd=str(tmp_path / "no-such-folder" / "run.vcd"))
    path = tmp_path / "run.vcd"
    result = run(tile_scenario(config, [(0, 4)]), unit, vcd=str(path))
    assert result.beats == 64 * 4 * 2 // 16
    wave = Waveform(path, [f"{TOP[backend]} beats__valid", f"{TOP[backend]} beats__ready"])
    assert wave.handshakes(f"{TOP[backend]} beats", range(result.cycles), PERIOD) == result.beat_cycles


@pytest.mark.slow          # a recording build of each compiled backend
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_unit_freed_while_recording_finishes_its_waveform(backend, tmp_path):
    """A C caller may free a unit (``tma_free``) with its recorder still open: the file is
    finished, to the run's last cycle, not cut off where the writer's buffer last emptied."""
    from tma_unit.sim.native import run_native
    config = DEFAULT[1]
    unit, _ = recording(backend, config)
    path = tmp_path / "left-open.vcd"
    assert unit.lib.tma_wave_open(unit.handle, os.fsencode(path), 0, 1 << 62) == 0
    result = run_native(tile_scenario(config, [(0, 0), (0, 4)]), unit)
    del unit
    gc.collect()
    top = TOP[backend]
    wave = Waveform(path, [f"{top} beats__valid", f"{top} beats__ready"])
    assert wave.times[-1] == (result.cycles - 1) * PERIOD + PERIOD // 2
    assert wave.handshakes(f"{top} beats", range(result.cycles), PERIOD) == result.beat_cycles


@pytest.mark.slow          # a compiled build
@grouped("verilator", DEFAULT[1])
def test_a_unit_without_a_recorder_says_how_to_get_one(tmp_path):
    from tma_unit.sim.verilator import VerilatorUnit, run_verilator
    config = DEFAULT[1]
    with pytest.raises(ValueError, match=r"without a waveform recorder .*trace=True"):
        run_verilator(tile_scenario(config, [(0, 0)]), VerilatorUnit(config), vcd=str(tmp_path / "run.vcd"))
    assert not (tmp_path / "run.vcd").exists()


@pytest.mark.slow          # a compiled build
@grouped("cxxrtl", DEFAULT[1])
def test_cxxrtl_runs_recorded_in_one_waveform_follow_each_other(tmp_path):
    from tma_unit.sim.cxxrtl import CxxrtlUnit
    from tma_unit.sim.native import run_native
    config = DEFAULT[1]
    unit = CxxrtlUnit(config)
    path = tmp_path / "two.vcd"
    with unit.waveform(path):
        first = run_native(tile_scenario(config, [(0, 0)]), unit)
        second = run_native(tile_scenario(config, [(0, 4)], seed=3, ready_probability=0.5), unit)
    wave = Waveform(path, ["bench top beats__valid", "bench top beats__ready"])
    assert wave.times == sorted(set(wave.times))
    assert wave.times[-1] == (first.cycles + second.cycles - 1) * PERIOD + PERIOD // 2
    # the second run's beats, where it is in the file
    taken = wave.handshakes("bench top beats", range(first.cycles, first.cycles + second.cycles), PERIOD)
    assert [c - first.cycles for c in taken] == second.beat_cycles


def without_swizzle(monkeypatch):
    """The bug: the datapath passes the dense shared-memory address through unswizzled. The
    unit is then not the one the project's files make, so the digest of what it is made
    of, which keys every kept unit (a compiled library, a simulator), says so too."""
    import tma_unit.rtl.datapath
    from tma_unit.sim import native
    monkeypatch.setattr(tma_unit.rtl.datapath, "swizzle_address", lambda address, swizzle, built: address)
    digest = native.source_digest() + " without the swizzle"       # a new one with each change of the files
    monkeypatch.setattr(native, "source_digest", lambda: digest)


#: Copies the bug cannot touch (no swizzle) before the one it shows in, so that the
#: difference comes later than the waveform's window of cycles before it.
PLAIN_COPIES = 8

# What the model expects where the bug first shows (docs/spec.md, "Swizzle", 128B: address
# bits [6:4] XOR bits [9:7]): row 0 fills the 128-byte line at 0x400 unmoved (line 0), so
# the first difference is beat 8 of the swizzled copy, row 1's first chunk: dense 0x480,
# line 1, swizzled to chunk 0 ^ 1 of its line, 0x490.
FIRST_WRONG_BEAT, SWIZZLED, DENSE = 8, 0x490, 0x480


def bug_scenario(config):
    """PLAIN_COPIES copies of the tile unswizzled (slot 0), then one swizzled (slot 1)."""
    plain = dataclasses.replace(TILE, swizzle=Swizzle.NONE)
    requests = [fields_from_request(Request(Operation.LOAD, (0, 4 * i), smem_address=0x400, request_id=i),
                                    0 if i < PLAIN_COPIES else 1) for i in range(PLAIN_COPIES + 1)]
    return Scenario(config, {0: encode_descriptor(plain), 1: encode_descriptor(TILE)}, 0b11, requests)


@pytest.mark.parametrize("backend", ["pysim", pytest.param("cxxrtl", marks=pytest.mark.slow),
                                     pytest.param("verilator", marks=pytest.mark.slow)])
def test_an_rtl_bug_stops_the_run_with_a_report_and_a_waveform_of_its_last_cycles(backend, tmp_path, monkeypatch):
    without_swizzle(monkeypatch)
    config = DEFAULT[1]
    scenario = bug_scenario(config)
    if backend == "pysim":
        from tma_unit.sim.pysim import run_pysim
        path = tmp_path / "given.vcd"
        with pytest.raises(Mismatch) as caught:
            run_pysim(scenario, mismatch_vcd=str(path))
    else:
        unit, run = recording(backend, config, "-O0")     # a build of its own: the fastest to make
        monkeypatch.setenv(MISMATCH_VCD_ENV, str(tmp_path / "waves"))       # no file given: the folder's
        path = tmp_path / "waves" / f"mismatch-{backend}.vcd"
        with pytest.raises(Mismatch) as caught:
            run(scenario, unit)
    report, cycle = str(caught.value), caught.value.cycle
    assert f"RTL and model differ at cycle {cycle}: beat {FIRST_WRONG_BEAT} of request {PLAIN_COPIES}" in report
    assert f"lanes[0].smem_address: expected {SWIZZLED}, got {DENSE}" in report
    assert "'swizzle': 'B128'" in report            # the descriptor, decoded
    # at least one beat a cycle: the difference comes after the plain copies' beats
    assert cycle > PLAIN_COPIES * 32 > MISMATCH_WINDOW
    first = 0 if backend == "pysim" else cycle - MISMATCH_WINDOW
    assert f"waveform of cycles {first} to {cycle}: {path}" in report
    assert "did not differ at the same cycle" not in report

    top = TOP[backend]
    if backend == "pysim":
        # Amaranth's simulator records from the start; the run stops at the difference
        wave = Waveform(path, [f"{top} beats__payload"])
        assert wave.times[0] == 0 and len(wave.times) > 2 * cycle
    else:
        # the window: from MISMATCH_WINDOW cycles before the difference to it, and the
        # wrong beat on the ports at the difference's cycle
        wave = Waveform(path, [f"{top} {port}" for port in PORTS])
        assert (wave.times[0], wave.times[-1]) == (first * PERIOD, cycle * PERIOD + PERIOD // 2)
        time = cycle * PERIOD
        assert wave.handshakes(f"{top} beats", [cycle], PERIOD) == [cycle]
        beat = beat_layout(config).from_bits(wave.at(f"{top} beats__payload", time))
        assert beat.lanes[0].smem_address == DENSE
