"""The command line: `tma-unit layout` on the default and on JSON input; generated docs."""

import json
from pathlib import Path

import pytest

from tma_unit.cli import main, DEFAULT_TENSOR_MAP, DEFAULT_REQUEST
from tma_unit.docgen import GENERATED
from tma_unit.model import transactions

from units import DEFAULT, grouped

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


TM, REQ = DEFAULT_TENSOR_MAP.to_dict(), DEFAULT_REQUEST.to_dict()


def with_map(**changes):
    """A case file's contents: the default copy with tensor-map fields changed (None drops one)."""
    return {"tensor_map": {k: v for k, v in {**TM, **changes}.items() if v is not None}, "request": REQ}


def with_request(**changes):
    return {"tensor_map": TM, "request": {k: v for k, v in {**REQ, **changes}.items() if v is not None}}


#: Malformed input at every edge of `tma-unit layout`: (id, what the file holds (JSON-dumped,
#: or raw text if a str or bytes; None: no file), arguments ("{path}" is the file; without
#: it the file is the case), the one line on stderr). Every one exits 2 with no traceback.
ERROR_CASES = [
    # the case file's shape
    ("case-list", [1, 2], [],
     "error 22 FIELD_TYPE: case = [1, 2] is not an object with a tensor_map and a request"),
    ("case-no-map", {"request": REQ}, [], "error 22 FIELD_TYPE: tensor_map = (not given) is a required case field"),
    ("case-unknown", {"tensor_map": TM, "requests": {}}, [],
     "error 3 ENUM_RANGE: requests = {} is not a case field (tensor_map, request)"),
    ("map-null", {"tensor_map": None}, [],
     "error 22 FIELD_TYPE: tensor_map = None is not an object of tensor-map fields"),
    ("map-list", {"tensor_map": [TM]}, [],
     "error 22 FIELD_TYPE: tensor_map = [{'kind': 'TILED', 'dtype': 'FLOAT16'... is not an object of tensor-map fields"),
    ("map-no-dims", with_map(global_dims=None), [],
     "error 22 FIELD_TYPE: global_dims = (not given) is a required tensor-map field"),
    ("map-unknown", {"tensor_map": {**TM, "global_dim": [1000, 1000]}, "request": REQ}, [],
     "error 3 ENUM_RANGE: global_dim = [1000, 1000] is not a tensor-map field"),
    ("request-list", {"tensor_map": TM, "request": [1, 2]}, [],
     "error 22 FIELD_TYPE: request = [1, 2] is not an object of request fields"),
    ("request-null", {"tensor_map": TM, "request": None}, [],
     "error 22 FIELD_TYPE: request = None is not an object of request fields"),
    ("request-no-coords", with_request(coordinates=None), [],
     "error 22 FIELD_TYPE: coordinates = (not given) is a required request field"),
    # numbers are JSON integers: no strings, floats, bools, NaN
    ("address-string", with_map(global_address="0x1000"), [],
     "error 22 FIELD_TYPE: global_address = '0x1000' is not an integer"),
    ("address-nan", json.dumps(with_map(global_address=4242)).replace("4242", "NaN"), [],
     "error 22 FIELD_TYPE: global_address = nan is not an integer"),
    ("address-infinity", json.dumps(with_map(global_address=4242)).replace("4242", "-Infinity"), [],
     "error 22 FIELD_TYPE: global_address = -inf is not an integer"),
    ("address-fraction", with_map(global_address=4096.5), [],
     "error 22 FIELD_TYPE: global_address = 4096.5 is not an integer"),
    ("address-negative", with_map(global_address=-16), [],
     "error 4 ADDRESS_ALIGN: global_address = -0x10 is not a 64-bit address"),
    ("dims-fraction", with_map(global_dims=[1000.7, 1000]), [],
     "error 22 FIELD_TYPE: global_dims[0] = 1000.7 is not an integer"),
    ("dims-exponent", json.dumps(with_map(global_dims=[4242, 1000])).replace("4242", "1e3"), [],
     "error 22 FIELD_TYPE: global_dims[0] = 1000.0 is not an integer"),
    ("strides-scalar", with_map(global_strides=2048), [],
     "error 22 FIELD_TYPE: global_strides = 2048 is not a list of integers"),
    ("box-string", with_map(box_dims="64,8"), [], "error 22 FIELD_TYPE: box_dims = '64,8' is not a list of integers"),
    ("channels-string", with_map(channels_per_pixel="8"), [],
     "error 22 FIELD_TYPE: channels_per_pixel = '8' is not an integer"),
    ("swizzle-bool", with_map(swizzle=True), [],
     "error 3 ENUM_RANGE: swizzle = True is not a Swizzle (one of NONE, B32, B64, B128, B128_ATOM_32B, "
     "B128_ATOM_32B_FLIP_8B, B128_ATOM_64B, B96)"),
    ("coords-string", with_request(coordinates="0,0"), [],
     "error 22 FIELD_TYPE: coordinates = '0,0' is not a list of integers"),
    ("coords-number", with_request(coordinates=5), [], "error 22 FIELD_TYPE: coordinates = 5 is not a list of integers"),
    ("coords-object", with_request(coordinates={"a": 1}), [],
     "error 22 FIELD_TYPE: coordinates = {'a': 1} is not a list of integers"),
    ("coords-nested", with_request(coordinates=[[1], 2]), [], "error 22 FIELD_TYPE: coordinates[0] = [1] is not an integer"),
    ("smem-bool", with_request(smem_address=True), [], "error 22 FIELD_TYPE: smem_address = True is not an integer"),
    ("operation-bool", with_request(operation=True), [],
     "error 3 ENUM_RANGE: operation = True is not a Operation (one of LOAD, STORE, REDUCE, PREFETCH)"),
    ("multicast-fraction", with_request(multicast_mask=1.5), [],
     "error 22 FIELD_TYPE: multicast_mask = 1.5 is not an integer"),
    # values past the request payload's field widths
    ("smem-2-70", with_request(smem_address=2 ** 70), [],
     "error 80 FIELD_WIDTH: smem_address = 0x400000000000000000 does not fit the request's 32-bit field "
     "(0..0xffffffff)"),
    ("smem-2-32", with_request(smem_address=0x100000000), [],
     "error 80 FIELD_WIDTH: smem_address = 0x100000000 does not fit the request's 32-bit field (0..0xffffffff)"),
    ("request-id", with_request(request_id=70000), [],
     "error 80 FIELD_WIDTH: request_id = 70000 does not fit the request's 16-bit field (0..65535)"),
    ("w-halo-unread", with_request(w_halo=2000), [],
     "error 80 FIELD_WIDTH: w_halo = 2000 does not fit the request's 10-bit field (0..1023)"),
    # the flags: decimal or 0x-hex integers
    ("flag-coords-letters", None, ["--coords", "a,b"],
     "error 22 FIELD_TYPE: coordinates[0] = 'a' is not a decimal or 0x-hex integer"),
    ("flag-coords-exponent", None, ["--coords", "1e3,5"],
     "error 22 FIELD_TYPE: coordinates[0] = '1e3' is not a decimal or 0x-hex integer"),
    ("flag-coords-empty", None, ["--coords", ""],
     "error 22 FIELD_TYPE: coordinates[0] = '' is not a decimal or 0x-hex integer"),
    ("flag-coords-gap", None, ["--coords", "1,,2"],
     "error 22 FIELD_TYPE: coordinates[1] = '' is not a decimal or 0x-hex integer"),
    ("flag-coords-int32", None, ["--coords", "99999999999,0"],
     "error 66 COORD_RANGE: coordinates[0] = 99999999999 is not a signed 32-bit value"),
    ("flag-coords-count", None, ["--coords", "0,0,0"],
     "error 65 COORD_COUNT: coordinates = [0, 0, 0] has 3 entries, not 2"),
    ("flag-smem-letters", None, ["--smem", "zz"],
     "error 22 FIELD_TYPE: smem_address = 'zz' is not a decimal or 0x-hex integer"),
    ("flag-smem-fraction", None, ["--smem", "1024.0"],
     "error 22 FIELD_TYPE: smem_address = '1024.0' is not a decimal or 0x-hex integer"),
    ("flag-smem-binary", None, ["--smem", "0b10000000000"],
     "error 22 FIELD_TYPE: smem_address = '0b10000000000' is not a decimal or 0x-hex integer"),
    ("flag-smem-negative", None, ["--smem=-128"],
     "error 80 FIELD_WIDTH: smem_address = -0x80 does not fit the request's 32-bit field (0..0xffffffff)"),
    ("flag-smem-2-32", None, ["--smem", "0x100000000"],
     "error 80 FIELD_WIDTH: smem_address = 0x100000000 does not fit the request's 32-bit field (0..0xffffffff)"),
    ("flag-smem-digits", None, ["--smem", "9" * 5000],
     "error 22 FIELD_TYPE: smem_address = '999999999999999999999999999999999999... has too many digits to read"),
    ("flag-operation", None, ["--operation", "lod"],
     "error 3 ENUM_RANGE: operation = 'lod' is not a Operation (one of LOAD, STORE, REDUCE, PREFETCH)"),
    ("flag-mode-empty", None, ["--mode", ""],
     "error 3 ENUM_RANGE: mode = '' is not a AccessMode (one of TILE, GATHER4, SCATTER4, IM2COL, IM2COL_W, "
     "IM2COL_W_128)"),
    ("flag-example", None, ["--example", "gemm"],
     "error 3 ENUM_RANGE: example = 'gemm' is not one of gemm-edge, gemm-128x64, im2col-1, im2col-2, "
     "im2col-stride, im2col-w-halo, im2col-w-128, woffset-1-buffer-2, gather4"),
    ("descriptor-list", [TM], ["--descriptor", "{path}"],
     "error 22 FIELD_TYPE: tensor_map = [{'kind': 'TILED', 'dtype': 'FLOAT16'... is not an object of tensor-map fields"),
    ("request-file-string", "\"LOAD\"", ["--request", "{path}"],
     "error 22 FIELD_TYPE: request = 'LOAD' is not an object of request fields"),
    # files that are not JSON
    ("not-json", "{", [], "{path} is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ("not-utf8", b"\xff\xfe{}", [],
     "{path} is not JSON: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
    ("too-deep", "[" * 100000 + "]" * 100000, [], "{path} nests its JSON too deeply to read"),
    ("too-many-digits", "1" * 5000, [], "{path} holds a number of more than 4300 digits"),
]


def assert_refused(capsys, argv, message):
    """`tma-unit ARGV` exits 2 with ``message`` as the one line on stderr (so no traceback)
    and nothing on stdout."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"tma-unit: {message}\n"


@pytest.mark.parametrize("content,arguments,message", [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_layout_refuses_malformed_input(tmp_path, capsys, content, arguments, message):
    path = tmp_path / "case.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    elif content is not None:
        path.write_text(json.dumps(content))
    argv = [a.replace("{path}", str(path)) for a in arguments]
    if content is not None and "{path}" not in arguments:
        argv.insert(0, str(path))
    assert_refused(capsys, ["layout", *argv], message.replace("{path}", str(path)))


#: The other commands' flags: (argv, the one line on stderr), each refused before any work.
COMMAND_CASES = [
    (["explore", "--lanes", "a", "--no-synthesis"],
     "error 22 FIELD_TYPE: lanes[0] = 'a' is not a decimal or 0x-hex integer"),
    (["explore", "--slots", "8,", "--no-synthesis"],
     "error 22 FIELD_TYPE: slots[1] = '' is not a decimal or 0x-hex integer"),
    (["explore", "--address-width", "0b110000", "--no-synthesis"],
     "error 22 FIELD_TYPE: address_width[0] = '0b110000' is not a decimal or 0x-hex integer"),
    (["explore", "--lanes", "3", "--no-synthesis"], "error 3 ENUM_RANGE: config.lanes = 3 is not 1, 2, 4 or 8"),
    (["explore", "--ready", "0", "--no-synthesis"], "error 3 ENUM_RANGE: ready = 0.0 is outside (0, 1]"),
    (["explore", "--ready", "nan", "--no-synthesis"], "error 3 ENUM_RANGE: ready = nan is outside (0, 1]"),
    (["explore", "--beat-queue", "16,8", "--no-synthesis"],
     "error 3 ENUM_RANGE: config.beat_queue = 8 is outside 9..256"),
    (["explore", "--ready-bursts", "128", "--no-synthesis"], "error 3 ENUM_RANGE: ready_bursts = 128 is not ON:OFF"),
    (["explore", "--ready-bursts", "0:64", "--no-synthesis"],
     "error 3 ENUM_RANGE: ready_bursts = 0:64 is not ON in 1..65536 and OFF in 0..65536 cycles"),
    (["explore", "--ready-bursts", "16,16", "--no-synthesis"], "error 3 ENUM_RANGE: ready_bursts = 16,16 is not ON:OFF"),
    (["explore", "--ready", "0.5", "--ready-bursts", "16:16", "--no-synthesis"],
     "error 3 ENUM_RANGE: ready = 0.5 is given with ready_bursts: one or the other"),
    (["explore", "--completion-bursts", "1:1000000", "--no-synthesis"],
     "error 3 ENUM_RANGE: completion_bursts = 1:1000000 is not ON in 1..65536 and OFF in 0..65536 cycles"),
    (["explore", "--completion-depth", "4,2", "--no-synthesis"],
     "error 3 ENUM_RANGE: config.completion_depth = 2 is outside 3..64"),
    (["explore", "--request-gap=-1", "--no-synthesis"], "error 3 ENUM_RANGE: request_gap = -1 is outside 0..65536"),
    (["explore", "--request-gap", "70000", "--no-synthesis"],
     "error 3 ENUM_RANGE: request_gap = 70000 is outside 0..65536"),
    (["demo", "--copies", "0"], "error 3 ENUM_RANGE: copies = 0 is not 1 or more"),
    (["demo", "--beat-queue", "0x10.0"],
     "error 22 FIELD_TYPE: beat_queue = '0x10.0' is not a decimal or 0x-hex integer"),
    (["export", "--lanes", "3", "-o", "-"], "error 3 ENUM_RANGE: config.lanes = 3 is not 1, 2, 4 or 8"),
    (["export", "--prefix", "9cfg_", "-o", "-"],
     "error 3 ENUM_RANGE: prefix = '9cfg_' is not a Verilog identifier's start: a letter or _, then letters, digits or _"),
    (["export", "--prefix", "cfg.a_", "-o", "-"],
     "error 3 ENUM_RANGE: prefix = 'cfg.a_' is not a Verilog identifier's start: a letter or _, then letters, digits "
     "or _"),
    (["export", "-o", "unit.h"], "error 3 ENUM_RANGE: output = 'unit.h' is the name of the package or header written "
                                 "beside it"),
    (["layout", "--words", "--slot", "32"], "error 3 ENUM_RANGE: slot = 32 is outside 0..31"),
    (["layout", "--vectors", "--slot", "0x1f.0"], "error 22 FIELD_TYPE: slot = '0x1f.0' is not a decimal or 0x-hex integer"),
    (["layout", "--json", "--words"],
     "error 3 ENUM_RANGE: output = --json --words is more than one of --json, --words, --vectors"),
]


@pytest.mark.parametrize("argv,message", COMMAND_CASES, ids=[" ".join(c[0][:3]) for c in COMMAND_CASES])
def test_commands_refuse_malformed_flags(capsys, argv, message):
    assert_refused(capsys, argv, message)


def test_input_policy_reads_flags_in_decimal_or_hex(capsys):
    """The flags take decimal or 0x-hex integers, spaces around a comma allowed; the same
    copy either way."""
    assert main(["layout", "--coords", "960,996", "--smem", "1024"]) == 0
    decimal = capsys.readouterr().out
    assert main(["layout", "--coords", "0x3C0, 0x3e4", "--smem", "0x400"]) == 0
    assert capsys.readouterr().out == decimal
    assert main(["layout", "--coords=-64,-0x10"]) == 0
    assert "coordinates [-64, -16]" in capsys.readouterr().out


def test_layout_json_output_reads_back(tmp_path, capsys):
    """What `layout --json` prints is a case file (its computed fields are ignored), with
    or without a byte-order mark."""
    assert main(["layout", "--json"]) == 0
    printed = capsys.readouterr().out
    for name, text in (("plain.json", printed), ("bom.json", "\ufeff" + printed)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert main(["layout", str(tmp_path / name), "--json"]) == 0
        assert capsys.readouterr().out == printed


def test_refused_input_writes_nothing(tmp_path, capsys):
    """A refused copy draws no picture: the input is checked before any file is written."""
    picture = tmp_path / "layout.png"
    assert main(["draw", "--smem", "0x100000000", "-o", str(picture)]) == 2
    assert not picture.exists()
    assert main(["explore", "--lanes", "1,x", "--no-synthesis", "-q", "-o", str(tmp_path / "explore")]) == 2
    assert not (tmp_path / "explore").exists()
    assert capsys.readouterr().err.splitlines() == [
        "tma-unit: error 80 FIELD_WIDTH: smem_address = 0x100000000 does not fit the request's 32-bit field "
        "(0..0xffffffff)",
        "tma-unit: error 22 FIELD_TYPE: lanes[1] = 'x' is not a decimal or 0x-hex integer"]


def test_generated_docs_are_current():
    for name, build in GENERATED.items():
        assert (DOCS / name).read_text() == build(), f"docs/{name} is stale: run `tma-unit docs`"


def test_every_example_lays_out(capsys):
    from tma_unit.model.examples import EXAMPLES
    for name in EXAMPLES:
        assert main(["layout", "--example", name]) == 0, name
    out = capsys.readouterr().out
    assert "IM2COL_W_128" in out and "GATHER4" in out


@pytest.mark.slow          # the demo suite on pysim, then on both compiled backends
@grouped("cxxrtl", DEFAULT[1])
def test_demo_runs_every_case_in_lockstep(capsys, monkeypatch, tmp_path):
    assert main(["demo", "--copies", "1"]) == 0
    out = capsys.readouterr().out
    from tma_unit.sim.demo import DEMO_CASES
    assert out.count(" match") == len(DEMO_CASES)
    assert f"{len(DEMO_CASES)} passed, 0 failed" in out
    # a compiled backend runs every case on one library, one after another: its table is
    # the Python simulator's, which simulates each case on a unit fresh from reset, cycle
    # for cycle (the libraries are test_sim_waveform's: CXXRTL's default, Verilator's with
    # a recorder)
    from waveforms import TOP, Waveform
    from tma_unit.sim.native import PERIOD_NS
    for backend in ("cxxrtl", "verilator"):
        top = TOP[backend]
        waves = tmp_path / backend                      # the demo writes into a folder that exists
        waves.mkdir()
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
