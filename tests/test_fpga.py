"""The ULX3S board top: the PLL settings and the build plan amaranth-boards makes of it
(pins, clock constraint, the PLL instance), without running the tools; `tma-unit build`
runs them (minutes; docs/fpga.md gives its figures)."""

import re

import pytest

from tma_unit.constraints.ulx3s import (NEXTPNR_OPTIONS, PFD_MIN_MHZ, PROTO_NAME, VCO_MHZ, Ulx3sTop, _lut_mappers,
                                        _platform, nextpnr_command, nextpnr_options, pll_dividers)
from tma_unit.model.config import UnitConfig
from tma_unit.rtl.pipeline import KEEP_COPIES
from tma_unit.rtl.regfile import UNDEFINED_COLLISIONS


@pytest.mark.parametrize("mhz", [8, 10, 25, 40, 50, 100, 125])
def test_pll_dividers_keep_the_ecp5_limits(mhz):
    input_div, feedback_div, output_div, achieved = pll_dividers(mhz)
    pfd = 25 / input_div
    assert pfd >= PFD_MIN_MHZ
    assert achieved == pytest.approx(pfd * feedback_div)
    assert VCO_MHZ[0] <= achieved * output_div <= VCO_MHZ[1]
    assert abs(achieved - mhz) <= 0.05 * mhz


def test_pll_refuses_what_it_cannot_make():
    with pytest.raises(ValueError, match="no ECP5 PLL setting makes 1000 MHz"):
        pll_dividers(1000)


def test_build_plan_has_the_pins_the_clock_and_the_pll():
    plan = _platform("85F").build(Ulx3sTop(UnitConfig(lanes=1, slots=2), mhz=10), name="proto", do_build=False)
    lpf = plan.files["proto.lpf"]
    assert 'LOCATE COMP "clk25_0__io" SITE "G2"' in lpf
    assert 'SITE "M1"' in lpf and 'SITE "L4"' in lpf            # the FTDI UART's rx and tx
    # the oscillator's constraint, from which nextpnr derives the PLL output's
    assert 'FREQUENCY PORT "clk25_0__io" 25000000.0 HZ' in lpf
    rtlil = plan.files["proto.il"]
    assert "EHXPLLL" in rtlil and "CLKI_DIV 5" in rtlil and "CLKFB_DIV 2" in rtlil and "CLKOP_DIV 40" in rtlil


def test_the_unit_s_reset_comes_from_the_synchronizer_through_a_global_buffer():
    """The reset the PLL's lock releases is synchronized in a domain of its own, and that
    synchronizer's output reaches the unit's domain only through a DCCA, which nextpnr
    routes on a global network (docs/fpga.md, "The board top")."""
    rtlil = _platform("85F").build(Ulx3sTop(UnitConfig(lanes=1, slots=2), mhz=10), name="proto",
                                   do_build=False).files["proto.il"]

    def cell(kind, name):
        return re.search(rf"cell \\{re.escape(kind)} \\{name}\n(.*?)\n  end", rtlil, re.S).group(1)

    assert "connect \\stage1 \\reset_rst [0]" in cell("proto.reset", "reset")
    buffer = cell("DCCA", "reset_buffer")
    assert "connect \\CLKI \\reset_rst [0]" in buffer and "connect \\CLKO \\rst" in buffer
    assert "connect \\rst \\rst [0]" in cell("proto.top", "top")
    # in the board top's module, the synchronizer's output has its wire, its driver and one load, the buffer
    board = re.search(r"module \\proto\n(.*?)\nend\n", rtlil, re.S).group(1)
    assert board.count("\\reset_rst") == 3


def test_the_build_script_runs_nextpnr_with_the_options_given():
    """amaranth-boards writes the nextpnr options into its build script: ``--seed N`` only
    where a seed is asked for."""
    plan = _platform("85F").build(Ulx3sTop(UnitConfig(lanes=1, slots=2), mhz=10), name="proto", do_build=False,
                                  nextpnr_opts=nextpnr_options(7))
    assert NEXTPNR_OPTIONS + " --seed 7" in plan.files["build_proto.sh"]
    assert nextpnr_options(None) == NEXTPNR_OPTIONS


def test_a_netlist_placed_again_keeps_the_build_options_but_its_own_report_log_and_seed(tmp_path):
    """bench/seeds.py places a build's netlist again with nextpnr's command from the build
    plan, less the report, log, seed and bitstream configuration it gives anew."""
    import os
    plan = _platform("85F").build(Ulx3sTop(UnitConfig(lanes=1, slots=2), mhz=10), name=PROTO_NAME, do_build=False,
                                  nextpnr_opts=nextpnr_options(7))
    for name, contents in plan.files.items():
        (tmp_path / name).write_bytes(contents if isinstance(contents, bytes) else contents.encode())
    command = nextpnr_command(tmp_path)
    assert command[0] == os.environ["NEXTPNR_ECP5"]
    words = command[1:]
    for option in ("--report", "--log", "--textcfg", "--seed"):
        assert not [w for w in words if w == option or w.startswith(option + "=")], option
    assert words[words.index("--json") + 1] == f"{PROTO_NAME}.json"
    assert words[words.index("--lpf") + 1] == f"{PROTO_NAME}.lpf"
    assert words[words.index("--threads") + 1] == "1"
    assert {"--85k", "--timing-allow-fail"} <= set(words)
    assert nextpnr_command(tmp_path / "elsewhere") is None


@pytest.mark.parametrize("argv,expected", [([], NEXTPNR_OPTIONS), (["--seed", "7"], NEXTPNR_OPTIONS + " --seed 7"),
                                           (["--seed=-3"], NEXTPNR_OPTIONS + " --seed -3")])
def test_build_hands_the_seed_to_nextpnr(tmp_path, monkeypatch, capsys, argv, expected):
    """`tma-unit build --seed N` reaches the platform's build as nextpnr's options, and no
    seed leaves nextpnr's own: the platform is replaced by one that records what it is
    asked and writes the report a build leaves, so nothing is synthesized. The build
    prints the slowest clock's longest path, named as in the design."""
    import json
    from tma_unit import cli
    from tma_unit.constraints import ulx3s
    asked = []

    def path(clock, start, end):
        return {"from": f"posedge {clock}", "to": f"posedge {clock}",
                "path": [{"from": {"cell": start}, "to": {"cell": start}}, {"from": {"cell": end}, "to": {"cell": end}}]}

    report = {"fmax": {"fast": {"achieved": 120.0}, "slow": {"achieved": 50.0}},
              "critical_paths": [path("fast", "top.a_TRELLIS_FF_Q", "top.b_TRELLIS_FF_Q"),
                                 path("slow", "top.unit.datapath.level_TRELLIS_FF_Q_3",
                                      "top.unit.datapath.completions.storage.0.12$DPRAM_COMB3")]}

    class Platform:
        def build(self, top, name, build_dir, do_program, nextpnr_opts, **overrides):
            asked.append(nextpnr_opts)
            (tmp_path / f"{name}.json").write_text("{}")
            (tmp_path / "report.json").write_text(json.dumps(report))

    monkeypatch.setattr(ulx3s, "_platform", lambda device: Platform())
    assert cli.main(["build", "--mhz", "25", "-o", str(tmp_path), *argv]) == 0
    assert asked == [expected]
    assert "longest path  datapath.level -> datapath.completions.storage.0.12\n" in capsys.readouterr().out


@pytest.mark.parametrize("written,status,message", [
    ((), 1, "Yosys ended with status 1; its log is {}/tma_unit_proto.rpt"),
    (("tma_unit_proto.json",), 143, "nextpnr-ecp5 was stopped by signal 15; its log is {}/tma_unit_proto.tim"),
    (("tma_unit_proto.json", "report.json"), 2, "ecppack ended with status 2, after nextpnr-ecp5 wrote {}/report.json")])
def test_a_build_whose_tool_stops_names_the_step_and_its_log(tmp_path, monkeypatch, capsys, written, status, message):
    """A tool of the build that fails or is killed: one line naming the step (by the
    files the build has written so far) and its log, no traceback; an earlier build's
    report in the folder does not count."""
    import subprocess
    from tma_unit import cli
    from tma_unit.constraints import ulx3s
    (tmp_path / "report.json").write_text("{}")        # an earlier build's

    class Platform:
        def build(self, top, name, build_dir, do_program, nextpnr_opts, **overrides):
            for file in written:
                (tmp_path / file).write_text("{}")
            raise subprocess.CalledProcessError(status, ["sh", f"build_{name}.sh"])

    monkeypatch.setattr(ulx3s, "_platform", lambda device: Platform())
    assert cli.main(["build", "--mhz", "25", "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"tma-unit: the build stopped: {message.format(tmp_path)}"
    assert "Traceback" not in err


def test_unknown_device_is_refused():
    with pytest.raises(ValueError, match="device '99F' is not one of"):
        _platform("99F")


def test_the_classic_abc_fallback_replaces_only_the_lut_mapping():
    """The build's second LUT mapper (when Yosys's ABC9 stops): synth_ecp5 up to its LUT
    mapping, classic ABC, then synth_ecp5 from its cell mapping on, in that order; both
    mappers keep the copied registers apart (KEEP_COPIES) and leave the slot memories'
    read-during-write data undefined (UNDEFINED_COLLISIONS) before synthesis."""
    overrides = _lut_mappers("proto")["abc"]
    plan = _platform("85F").build(Ulx3sTop(UnitConfig(lanes=1, slots=2), mhz=10), name="proto", do_build=False,
                                  **overrides)
    script = plan.files["proto.ys"]
    steps = ["read_rtlil", KEEP_COPIES, UNDEFINED_COLLISIONS, "synth_ecp5 -run :map_luts -top proto",
             "abc -lut 4 -dress", "synth_ecp5 -top proto -run map_cells:", "write_json proto.json"]
    places = [script.find(step) for step in steps]
    assert -1 not in places, script
    assert places == sorted(places)
    assert _lut_mappers("proto")["abc9"] == {"script_after_read": f"{KEEP_COPIES}; {UNDEFINED_COLLISIONS}"}
