"""Malformed and unusual input at every edge of the command line and the Python API: each
is refused naming the field, the value and the rule (the CLI: exit status 2, one line on
stderr, no traceback, before any long work; the API: a TmaError or a ValueError), or, where
the input is an everyday value (a negative coordinate), answered."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from tma_unit.cli import main, DEFAULT_TENSOR_MAP, DEFAULT_REQUEST
from tma_unit.model import (DataType, ErrorCode, GlobalMemory, Operation, Request, Swizzle, TmaError, encode_tiled,
                            load, swizzle, transaction_bytes, transactions)
from tma_unit.model.config import HOPPER_SMEM_BYTES, UnitConfig
from tma_unit.model.unit import check

CORPUS = Path(__file__).resolve().parent / "corpus"

#: A tensor that ends past 2^64: the unit refuses every copy of it (ADDRESS_WRAP).
WRAPPING = dataclasses.replace(DEFAULT_TENSOR_MAP, global_address=0xFFFF_FFFF_FFFF_FFF0)
#: A 256 x 256 fp32 box: 256 KiB, past the 227 KiB of shared memory (SMEM_BOUNDS).
LARGE = encode_tiled(DataType.FLOAT32, 2, 0x10000, [4096, 4096], [16384], [256, 256], [1, 1])
AT_ORIGIN = Request(Operation.LOAD, (0, 0), smem_address=0x400)


def run(capsys, argv):
    """`tma-unit ARGV`: the exit status, stdout and stderr."""
    status = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def refused(capsys, argv, message):
    """`tma-unit ARGV` exits 2 with the one line ``tma-unit: MESSAGE`` on stderr."""
    status, out, err = run(capsys, argv)
    assert (status, err) == (2, f"tma-unit: {message}\n"), out


def case_file(tmp_path, tm, req, name="case.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"tensor_map": tm.to_dict(), "request": req.to_dict()}))
    return str(path)


# -- the unit's limits: layout, draw and transactions() --------------------------------

def test_the_model_refuses_what_the_unit_refuses():
    """transactions() answers as model/unit.py's check does for the same copy."""
    from tma_unit.model import encode_descriptor
    from tma_unit.model.unit import fields_from_request
    for tm, code in ((WRAPPING, ErrorCode.ADDRESS_WRAP), (LARGE, ErrorCode.SMEM_BOUNDS)):
        assert check(encode_descriptor(tm), fields_from_request(AT_ORIGIN, 0), UnitConfig())[0] == code
        with pytest.raises(TmaError) as caught:
            transactions(tm, AT_ORIGIN)
        assert caught.value.code == code


def test_a_refused_copy_is_listed_on_request_marked_refused():
    stream = transactions(LARGE, AT_ORIGIN, refused=True)
    assert stream.refused.code == ErrorCode.SMEM_BOUNDS
    assert len(stream) == 256 * 256 * 4 // 16
    assert int(stream.smem_address.max()) + 16 > HOPPER_SMEM_BYTES       # the chunks past shared memory
    # the same copy on a unit with room for it is not refused
    roomy = transactions(LARGE, AT_ORIGIN, UnitConfig(smem_bytes=1 << 20))
    assert roomy.refused is None and len(roomy) == len(stream)
    assert transactions(DEFAULT_TENSOR_MAP, DEFAULT_REQUEST, refused=True).refused is None
    # a rule of the spec is raised either way: such a request has no chunks
    with pytest.raises(TmaError) as caught:
        transactions(LARGE, dataclasses.replace(AT_ORIGIN, smem_address=0x404), refused=True)
    assert caught.value.code == ErrorCode.SMEM_ALIGN


def test_layout_refuses_a_wrapping_tensor_unless_asked(tmp_path, capsys):
    path = case_file(tmp_path, WRAPPING, AT_ORIGIN)
    last = 0xFFFF_FFFF_FFFF_FFF0 + 1000 * 2 - 1 + 999 * 2048
    refused(capsys, ["layout", path], f"error 98 ADDRESS_WRAP: global_address = 0xfffffffffffffff0 puts the "
                                      f"tensor's last byte at {last:#x}, past the 64-bit address space")
    status, out, _ = run(capsys, ["layout", path, "--refused"])
    assert status == 0
    assert out.startswith("REFUSED    : the unit answers error 98 ADDRESS_WRAP")
    status, out, _ = run(capsys, ["layout", path, "--refused", "--json"])
    assert status == 0 and json.loads(out)["refused"].startswith("error 98 ADDRESS_WRAP")


def test_layout_and_draw_refuse_a_box_past_shared_memory(tmp_path, capsys):
    path = case_file(tmp_path, LARGE, AT_ORIGIN)
    message = ("error 97 SMEM_BOUNDS: smem_address = 0x400 puts the box's last byte at 0x403ff, past the 0x38c00 "
               "bytes of shared memory")
    refused(capsys, ["layout", path], message)
    picture = tmp_path / "large.png"
    refused(capsys, ["draw", path, "-o", str(picture)], message)
    assert not picture.exists()
    status, out, _ = run(capsys, ["draw", path, "-o", str(picture), "--refused"])
    assert status == 0 and picture.read_bytes().startswith(b"\x89PNG")


# -- layout's own JSON, read back --------------------------------------------------------

@pytest.mark.parametrize("name,edit", [
    ("descriptor_hex", lambda value: format(int(value[:2], 16) ^ 1, "02x") + value[2:]),
    ("transaction_bytes", lambda value: value + 16),
    ("chunks", lambda value: value[:-1]),
    ("refused", lambda value: "error 97 SMEM_BOUNDS"),
])
def test_layout_checks_its_own_output_fields_read_back(tmp_path, capsys, name, edit):
    status, out, _ = run(capsys, ["layout", "--json"])
    data = json.loads(out)
    data[name] = edit(data.get(name))
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    status, _, err = run(capsys, ["layout", str(path)])
    assert status == 2
    assert err.startswith(f"tma-unit: error 3 ENUM_RANGE: {name} = ")
    assert err.endswith("is not what layout computes for the case's tensor_map and request: edit those, not "
                        "layout's output fields\n")


# -- negative numbers on the command line ------------------------------------------------

def test_negative_coordinates_are_values_not_options(capsys):
    status, out, _ = run(capsys, ["layout", "--coords", "-1,0"])
    assert status == 0 and "coordinates [-1, 0]" in out
    # the same box as with --coords=-1,0, which argparse always read
    assert run(capsys, ["layout", "--coords=-1,0"])[1] == out


def test_a_negative_shared_memory_address_gets_the_models_error(capsys):
    refused(capsys, ["layout", "--smem", "-0x10"],
            "error 80 FIELD_WIDTH: smem_address = -0x10 does not fit the request's 32-bit field (0..0xffffffff)")


# -- every command: malformed flags, refused before any work ------------------------------

#: (argv, the one line on stderr). "{tmp}" is a folder that exists; "{missing}" one that does not.
COMMAND_CASES = [
    (["draw", "--operation", "PREFETCH", "-o", "{tmp}/p.png"],
     "error 73 OPERATION_MODE: operation = PREFETCH writes no shared memory: there is no layout to draw"),
    (["draw", "-o", "{tmp}/x.txt"], "--output = {tmp}/x.txt: a picture is written as .png, .svg, .pdf"),
    (["draw", "-o", "{missing}/x.png"], "--output = {missing}/x.png: the folder {missing} does not exist"),
    (["export", "-o", "{missing}/unit.v"], "--output = {missing}/unit.v: the folder {missing} does not exist"),
    (["demo", "--vcd", "{missing}/demo.vcd"], "--vcd = {missing}/demo.vcd: the folder {missing} does not exist"),
    (["build", "--mhz", "0"],
     "error 3 ENUM_RANGE: mhz = 0 is not a clock the ECP5's PLL makes from the board's 25 MHz within 5 %"),
    (["build", "--mhz", "nan"],
     "error 3 ENUM_RANGE: mhz = nan is not a clock the ECP5's PLL makes from the board's 25 MHz within 5 %"),
    (["build", "--device", "85", "--mhz", "0"],
     "error 3 ENUM_RANGE: device = '85' is not one of 12F, 25F, 45F, 85F (any case; 85k and LFE5U-85F name 85F)"),
    (["build", "--seed", "2147483648", "--mhz", "0", "-o", "{tmp}/b"],
     "error 3 ENUM_RANGE: --seed = 2147483648 is outside -2147483648..2147483647, the seeds nextpnr takes"),
    (["build", "--seed=-2147483649", "--mhz", "0", "-o", "{tmp}/b"],
     "error 3 ENUM_RANGE: --seed = -2147483649 is outside -2147483648..2147483647, the seeds nextpnr takes"),
    (["build", "--seed", "2.5", "--mhz", "0", "-o", "{tmp}/b"],
     "error 22 FIELD_TYPE: --seed = '2.5' is not a decimal or 0x-hex integer"),
    (["build", "--device", "LFE5U-85", "--mhz", "0"],
     "error 3 ENUM_RANGE: device = 'LFE5U-85' is not one of 12F, 25F, 45F, 85F (any case; 85k and LFE5U-85F "
     "name 85F)"),
    (["explore", "--device", "12k", "--no-synthesis", "-o", "{missing}"],
     "error 3 ENUM_RANGE: device = '12k' is not one of 25k, 45k, 85k (any case; 85F and LFE5U-85F name 85k)"),
    (["explore", "--latency", "300", "--no-synthesis", "-o", "{missing}"],
     "error 3 ENUM_RANGE: latency = '300' is given without --memory, which alone reads it"),
    (["explore", "--granule", "64", "--no-synthesis", "-o", "{missing}"],
     "error 3 ENUM_RANGE: granule = '64' is given without --memory, which alone reads it"),
    (["verify", "--optimize=-Onope", "--cases", "1"],
     "error 3 ENUM_RANGE: optimize = '-Onope' is not an optimisation flag (-O0..-O3, -Os, -Oz, -Og, -Ofast, -m..., "
     "-f..., -g..., -D...)"),
    (["verify", "--optimize", "-O3 out.o", "--cases", "1"],
     "error 3 ENUM_RANGE: optimize = 'out.o' is not an optimisation flag (-O0..-O3, -Os, -Oz, -Og, -Ofast, -m..., "
     "-f..., -g..., -D...)"),
    (["verify", "--start", "-5", "--cases", "1"],
     "error 3 ENUM_RANGE: --start = -5 is negative: scenarios are numbered from 0"),
    (["verify", "--vcd", "{tmp}/run.vcd", "--cases", "1"],
     "error 3 ENUM_RANGE: --vcd = '{tmp}/run.vcd' is given without --replay: a campaign records no waveform "
     "(replay one of its reproducers with --vcd)"),
    (["verify", "--json", "{missing}/report.json", "--cases", "1"],
     "--json = {missing}/report.json: the folder {missing} does not exist"),
    (["verify", "--replay", str(CORPUS / "former-chunk-below-address-0.json"), "--vcd", "{missing}/run.vcd"],
     "--vcd = {missing}/run.vcd: the folder {missing} does not exist"),
]


@pytest.mark.parametrize("argv,message", COMMAND_CASES, ids=[" ".join(c[0][:2]) for c in COMMAND_CASES])
def test_commands_refuse_before_any_work(tmp_path, capsys, argv, message):
    def fill(text):
        return text.replace("{tmp}", str(tmp_path)).replace("{missing}", str(tmp_path / "missing"))
    refused(capsys, [fill(a) for a in argv], fill(message))
    assert list(tmp_path.iterdir()) == []           # nothing written, no folder made


@pytest.mark.parametrize("spelling", ["85k", "85K", "85f", "85F", "LFE5U-85F", "lfe5u-85f"])
def test_every_spelling_of_a_device_names_it(capsys, spelling):
    """build and explore read the same spellings of a part (stopped by a bad clock, so
    that nothing is built)."""
    refused(capsys, ["build", "--device", spelling, "--mhz", "0"],
            "error 3 ENUM_RANGE: mhz = 0 is not a clock the ECP5's PLL makes from the board's 25 MHz within 5 %")
    refused(capsys, ["explore", "--device", spelling, "--lanes", "3", "--no-synthesis"],
            "error 3 ENUM_RANGE: config.lanes = 3 is not 1, 2, 4 or 8")


def test_prove_refuses_a_name_that_names_no_proof(capsys):
    """An empty name is the prefix of every proof's: refused, not taken as all of them."""
    from tma_unit.sim.formal import PROOFS
    listed = ", ".join(p.name for p in PROOFS)
    for name in ("", "nope"):
        refused(capsys, ["prove", "swizzle", name],
                f"error 3 ENUM_RANGE: names = {name!r} is not the name or a prefix of the name of a proof ({listed})")


# -- verify --replay of a file that is not a reproducer ------------------------------------

def _reproducer():
    return json.loads((CORPUS / "former-chunk-below-address-0.json").read_text())


def _edited(change):
    data = _reproducer()
    change(data)
    return data


REPLAY_CASES = [
    ("truncated", (CORPUS / "former-chunk-below-address-0.json").read_text()[:300],
     "{path} is not JSON: Unterminated string starting at: line 12 column 10 (char 183)"),
    ("list", [1, 2], "error 22 FIELD_TYPE: reproducer = [1, 2] is not an object of named fields"),
    ("no-scenario", _edited(lambda d: d.pop("scenario")),
     "error 22 FIELD_TYPE: reproducer.scenario = (not given) is a required field"),
    ("mode-name", _edited(lambda d: d["scenario"]["requests"][0].update(mode="IM2COL_W")),
     "error 22 FIELD_TYPE: scenario.requests[0].mode = 'IM2COL_W' is not an integer"),
    ("mode-wide", _edited(lambda d: d["scenario"]["requests"][0].update(mode=9)),
     "error 80 FIELD_WIDTH: scenario.requests[0].mode = 9 does not fit the request's 3-bit field (0..7)"),
    ("coordinate-wide", _edited(lambda d: d["scenario"]["requests"][0].update(coordinates=[2 ** 31, 0, 0])),
     "error 80 FIELD_WIDTH: scenario.requests[0].coordinates[0] = 2147483648 does not fit the request's 32-bit "
     "field (-2147483648..2147483647)"),
    ("request-missing", _edited(lambda d: d["scenario"]["requests"][0].pop("slot")),
     "error 22 FIELD_TYPE: scenario.requests[0].slot = (not given) is a required field"),
    ("image-hex", _edited(lambda d: d["scenario"]["images"].update({"1": "zz"})),
     "error 22 FIELD_TYPE: scenario.images['1'] = 'zz' is not null or 128 bytes as 256 hex digits"),
    ("image-slot", _edited(lambda d: d["scenario"]["images"].update({"x": None})),
     "error 3 ENUM_RANGE: scenario.images['x'] = 'x' is not a slot number below 8"),
    ("valid-string", _edited(lambda d: d["scenario"].update(valid_slots="2")),
     "error 22 FIELD_TYPE: scenario.valid_slots = '2' is not an integer"),
    ("unknown-field", _edited(lambda d: d["scenario"].update(speed=1)),
     "error 3 ENUM_RANGE: scenario.speed = 1 is not a field of scenario (config, images, valid_slots, requests, "
     "seed, ready_probability, max_gap, completion_ready_probability, completion_stall, reset_cycle, reset_first, "
     "rewrite)"),
    ("config-unknown", _edited(lambda d: d["scenario"]["config"].update(lane=1)),
     "error 3 ENUM_RANGE: scenario.config.lane = 1 is not a field of scenario.config (lanes, slots, address_width, "
     "smem_bytes, id_width, completion_depth, beat_queue, modes, swizzles, addressing, checks, request_former, "
     "request_interval)"),
    ("config-lanes", _edited(lambda d: d["scenario"]["config"].update(lanes=3)),
     "error 3 ENUM_RANGE: config.lanes = 3 is not 1, 2, 4 or 8"),
    ("rewrite-short", _edited(lambda d: d["scenario"].update(rewrite=[1, 2])),
     "error 21 ARRAY_LENGTH: scenario.rewrite = [1, 2] has 2 entries, not 4"),
    ("backend", _edited(lambda d: d.update(backend="iverilog")),
     "error 3 ENUM_RANGE: reproducer.backend = 'iverilog' is not one of cxxrtl, verilator"),
]


@pytest.mark.parametrize("content,message", [c[1:] for c in REPLAY_CASES], ids=[c[0] for c in REPLAY_CASES])
def test_replay_refuses_a_file_that_is_not_a_reproducer(tmp_path, capsys, content, message):
    path = tmp_path / "reproducer.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    refused(capsys, ["verify", "--replay", str(path)], message.replace("{path}", str(path)))


def test_the_corpus_reads_as_reproducers():
    """The checks take every reproducer the campaigns wrote."""
    from tma_unit.sim.campaign import read_reproducer
    for path in CORPUS.glob("*.json"):
        scenario, context = read_reproducer(path)
        assert scenario.requests and context["backend"] in ("cxxrtl", "verilator")


def test_every_generated_scenario_passes_the_checks():
    """The checks refuse no scenario a generator makes: 200 of a campaign, written as a
    reproducer holds them and read back, are the scenarios made."""
    from tma_unit.sim.campaign import DEFAULT_WEIGHTS, scenario_at, scenario_from_json, scenario_to_json
    for index in range(200):
        _, scenario = scenario_at(7, index, UnitConfig(request_former=128), DEFAULT_WEIGHTS)
        back = scenario_from_json(json.loads(json.dumps(scenario_to_json(scenario))))
        assert dataclasses.replace(back, names=scenario.names) == scenario, index


# -- verify --cases stops near the count ---------------------------------------------------

def test_chunk_for_cases_sends_what_is_still_needed():
    from tma_unit.sim.campaign import chunk_for_cases
    # nothing back yet: one scenario a worker
    assert [chunk_for_cases(1, 0, 0, out, 2, 200) for out in (0, 1, 2)] == [1, 1, 0]
    # 4 scenarios checked 40 cases (10 each): 60 more need 6 scenarios, 3 a worker
    assert chunk_for_cases(100, 40, 4, 0, 2, 200) == 3
    assert chunk_for_cases(100, 40, 4, 6, 2, 200) == 0
    assert chunk_for_cases(10 ** 6, 40, 4, 0, 2, 200) == 200
    # scenarios that checked nothing: more are sent
    assert chunk_for_cases(5, 0, 3, 0, 1, 200) == 15


@pytest.mark.parametrize("cases,per_scenario,most", [(1, 7, 2), (50, 7, 10), (1000, 7, 160)])
def test_a_campaign_of_some_cases_stops_near_them(monkeypatch, cases, per_scenario, most):
    """Chunks of made-up scenarios, each checking ``per_scenario`` requests, on two
    threads: the campaign runs at most ``most`` scenarios (not a chunk of 200 a worker)."""
    import concurrent.futures
    from tma_unit.sim import campaign

    def fake_chunk(config, backend, seed, start, count, generators, optimize=None):
        coverage = campaign.Coverage()
        coverage.scenarios["legal"] += count
        coverage.requests["legal"] += count * per_scenario
        return coverage, [], count

    monkeypatch.setattr(campaign, "make_unit", lambda *a: None)
    monkeypatch.setattr(campaign, "run_chunk", fake_chunk)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        report = campaign.run_campaign(seed=1, cases=cases, executor=pool, workers=2)
    assert sum(report["coverage"].requests.values()) >= cases
    assert report["scenarios"] <= most


# -- the Python API --------------------------------------------------------------------------

API_CASES = [
    ("map-none", lambda: transactions(None, DEFAULT_REQUEST), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: tm = None is not a TensorMap"),
    ("request-none", lambda: transactions(DEFAULT_TENSOR_MAP, None), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: req = None is not a Request"),
    ("swapped", lambda: transactions(DEFAULT_REQUEST, DEFAULT_TENSOR_MAP), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: tm = Request(operation=<Operation.LOAD: 0>... is a Request: the tensor map comes first, "
     "then the request"),
    ("bytes-swapped", lambda: transaction_bytes(DEFAULT_REQUEST, DEFAULT_TENSOR_MAP), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: tm = Request(operation=<Operation.LOAD: 0>... is a Request: the tensor map comes first, "
     "then the request"),
    ("config-string", lambda: transactions(DEFAULT_TENSOR_MAP, DEFAULT_REQUEST, "lanes 2"), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: config = 'lanes 2' is not a UnitConfig"),
    ("swizzle-negative", lambda: swizzle(-128, Swizzle.B128), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: address = -0x80 is negative: a shared-memory address is 0 or more"),
    ("swizzle-negative-array", lambda: swizzle(np.array([0, -128]), Swizzle.B128), ErrorCode.FIELD_WIDTH,
     "FIELD_WIDTH: address = -0x80 is negative: a shared-memory address is 0 or more"),
    ("swizzle-float", lambda: swizzle(128.0, Swizzle.B128), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: address = 128.0 is not an integer or an array of integers"),
    ("swizzle-float-array", lambda: swizzle(np.array([128.0]), Swizzle.B128), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: address = an array of float64 is not an array of integers"),
    ("swizzle-string-address", lambda: swizzle("0x400", Swizzle.B128), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: address = '0x400' is not an integer or an array of integers"),
    ("swizzle-bad-name", lambda: swizzle(0x400, "B256"), ErrorCode.ENUM_RANGE,
     "ENUM_RANGE: swizzle = 'B256' is not a Swizzle (one of NONE, B32, B64, B128, B128_ATOM_32B, "
     "B128_ATOM_32B_FLIP_8B, B128_ATOM_64B, B96)"),
    ("encode-past-rank", lambda: encode_tiled(DataType.FLOAT16, 2, 0x10000, [4096, 4096, 7], [8192], [64, 256],
                                              [1, 1]), ErrorCode.ARRAY_LENGTH,
     "ARRAY_LENGTH: global_dims = [4096, 4096, 7] has 3 entries, more than the 2 tensorRank gives"),
    ("load-list", lambda: load(DEFAULT_TENSOR_MAP, DEFAULT_REQUEST, GlobalMemory.zeros(0, 16), [0] * 16),
     ErrorCode.FIELD_TYPE, "FIELD_TYPE: smem = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ... is not a one-dimensional "
                           "numpy array of uint8"),
    ("load-array-as-gmem", lambda: load(DEFAULT_TENSOR_MAP, DEFAULT_REQUEST, np.zeros(16, np.uint8),
                                        np.zeros(1 << 16, np.uint8)), ErrorCode.FIELD_TYPE,
     "FIELD_TYPE: gmem = array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ... is not a GlobalMemory"),
]


@pytest.mark.parametrize("call,code,message", [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES])
def test_the_api_refuses_malformed_arguments_by_name(call, code, message):
    with pytest.raises(TmaError) as caught:
        call()
    assert caught.value.code == code and str(caught.value) == message


def test_swizzle_takes_the_modes_name_as_the_encoders_do():
    # 0x480: line 1 of the 128-byte pattern; the 128B swizzle XORs chunk 0 with 1 -> 0x490
    for mode in (Swizzle.B128, 3, "B128", "128B", "CU_TENSOR_MAP_SWIZZLE_128B"):
        assert swizzle(0x480, mode) == 0x490
    assert swizzle(np.array([0x480], np.uint32), "B128").tolist() == [0x490]


def test_load_names_a_memory_window_too_small_for_the_box():
    req = Request(Operation.LOAD, (0, 0), smem_address=0x400)
    window = GlobalMemory.zeros(DEFAULT_TENSOR_MAP.global_address, 100)
    with pytest.raises(ValueError) as caught:
        load(DEFAULT_TENSOR_MAP, req, window, np.zeros(1 << 16, np.uint8))
    # the box's first row reads 128 bytes from the tensor's start: byte 100 is the first outside
    assert str(caught.value) == ("gmem = [0x7f0000000000, 0x7f0000000064) does not hold global address "
                                 "0x7f0000000064 of the box: the window is too small for the copy")
