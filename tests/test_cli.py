"""The command line: `tma-unit layout` on the default and on JSON input; generated docs."""

import json
from pathlib import Path

from tma_unit.cli import main, DEFAULT_TENSOR_MAP, DEFAULT_REQUEST
from tma_unit.docgen import GENERATED
from tma_unit.model import transactions

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_layout_default_prints_every_chunk(capsys):
    assert main(["layout"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip()[:1].isdigit()]
    expected = list(transactions(DEFAULT_TENSOR_MAP, DEFAULT_REQUEST))
    assert len(rows) == len(expected) == 64
    # chunk 9: row 997 (the box's row 1), columns 968..975; 128B swizzle moves chunk 1 of
    # line 1 to position 0: 0x400 + 128 + 16 * (1 ^ 1)
    fields = rows[9].split()
    assert fields[1] == "968,997" and int(fields[4], 16) == 0x400 + 128
    assert fields[5] == "-"
    # columns 1000.. are outside the 1000-wide tensor; rows 1000.. too
    assert rows[5].split()[5] == "all" and rows[63].split()[5] == "all"


def test_layout_json_input_and_output(tmp_path, capsys):
    case = {"tensor_map": DEFAULT_TENSOR_MAP.to_dict(), "request": {**DEFAULT_REQUEST.to_dict(), "coordinates": [0, 0]}}
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    assert main(["layout", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["transaction_bytes"] == 1024
    assert out["chunks"][0]["global_address"] == DEFAULT_TENSOR_MAP.global_address
    assert all(chunk["mask"] == 0xFF for chunk in out["chunks"])


def test_layout_reports_a_broken_rule(capsys):
    assert main(["layout", "--smem", "0x404"]) == 2
    assert capsys.readouterr().err.strip() == (
        "tma-unit: error 71 SMEM_ALIGN: smem_address = 0x404 is not a multiple of 128 for swizzle B128")


def test_generated_docs_are_current():
    for name, build in GENERATED.items():
        assert (DOCS / name).read_text() == build(), f"docs/{name} is stale: run `tma-unit docs`"


def test_every_example_lays_out(capsys):
    from tma_unit.model.examples import EXAMPLES
    for name in EXAMPLES:
        assert main(["layout", "--example", name]) == 0, name
    out = capsys.readouterr().out
    assert "IM2COL_W_128" in out and "GATHER4" in out


def test_demo_runs_every_case_in_lockstep(capsys, monkeypatch, tmp_path):
    assert main(["demo", "--copies", "1"]) == 0
    out = capsys.readouterr().out
    from tma_unit.sim.demo import DEMO_CASES
    assert out.count(" match") == len(DEMO_CASES)
    assert f"{len(DEMO_CASES)} passed, 0 failed" in out
    # a compiled backend runs every case on one library, one after another: its table is
    # the Python simulator's, which simulates each case on a fresh unit, cycle for cycle
    monkeypatch.setenv("TMA_UNIT_CXX_OPT", "-O0")      # the libraries test_sim_waveform builds
    from waveforms import TOP, Waveform
    from tma_unit.sim.native import PERIOD_NS
    for backend in ("cxxrtl", "verilator"):
        top = TOP[backend]
        waves = tmp_path / backend                      # made by the demo
        assert main(["demo", "--copies", "1", "--backend", backend, "--vcd", str(waves / "demo.vcd")]) == 0
        compiled = capsys.readouterr().out
        assert compiled.splitlines()[1:] == out.splitlines()[1:]
        assert f"({backend}, lanes 1)" in compiled.splitlines()[0]
        # a waveform per case, of that case's run: the beats its handshakes take, one a
        # cycle at most, are the beats the table (checked against the model) counts
        rows = {words[0]: words for words in map(str.split, compiled.splitlines()) if words and words[0] in DEMO_CASES}
        for name in DEMO_CASES:
            wave = Waveform(waves / f"demo-{name}.vcd", [f"{top} beats__valid", f"{top} beats__ready"])
            taken = wave.handshakes(f"{top} beats", range(int(rows[name][3])), PERIOD_NS)
            assert len(taken) == int(rows[name][2]), (backend, name)
