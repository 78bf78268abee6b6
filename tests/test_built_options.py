"""Units built without some access modes or swizzles (``UnitConfig.modes``, ``.swizzles``):
the configuration's own checks, the order in which the not-built codes come (after the
descriptor's rules and the mode's number, before the request's rules), every case through
the RTL in lockstep with the model, and random campaigns on both compiled backends."""

from collections import Counter

import pytest

from tma_unit.model import (AccessMode, DataType, ErrorCode, MapKind, Operation, Request, Swizzle, TensorMap,
                            TmaError, encode_descriptor, encode_im2col)
from tma_unit.model.config import ALL_MODES, UnitConfig
from tma_unit.model.layout import flat_fields
from tma_unit.model.unit import check, complete, fields_from_request
from tma_unit.rtl.validate import UNREACHABLE, unreachable
from tma_unit.sim.campaign import buckets_possible, run_campaign
from tma_unit.sim.generate import GENERATORS, RandomDraw
from tma_unit.sim.cosim import Scenario
from tma_unit.sim.pysim import run_pysim

from units import OPTIONS, on

TILED_SM90 = UnitConfig(lanes=1, slots=16, modes="tiled", swizzles="sm90")
FULL = UnitConfig(lanes=1, slots=16)


def tiled(swizzle=Swizzle.B128, box0=64, **patched):
    """The image of a rank-3 fp16 map, with stored fields overwritten (a rule broken)."""
    tm = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x1000, (64, 32, 8), (128, 4096), (box0, 16, 2), (1, 1, 1),
                   swizzle=swizzle)
    bits = int.from_bytes(encode_descriptor(tm), "little")
    table = {name: (offset, width) for name, offset, width, _ in flat_fields()}
    for name, value in patched.items():
        offset, width = table[name]
        bits = (bits & ~(((1 << width) - 1) << offset)) | (value << offset)
    return bits.to_bytes(128, "little")


GATHER = encode_descriptor(TensorMap(MapKind.TILED, DataType.FLOAT16, 0x1000, (64, 32), (128,), (64, 1), (1, 1),
                                     swizzle=Swizzle.B128))
IM2COL = encode_descriptor(encode_im2col(DataType.FLOAT16, 4, 0x1000, [64, 9, 14, 4], [128, 1152, 16128], [-1, -1],
                                         [-1, -1], 8, 16, [1, 1, 1, 1]))


def fields(request, **raw):
    return {**fields_from_request(request, 0), **raw}


LOAD3 = Request(Operation.LOAD, (0, 0, 0), smem_address=0x400)
GATHER_LOAD = Request(Operation.LOAD, (0, 1, 2, 3, 4), smem_address=0x400, mode=AccessMode.GATHER4)

# (name, descriptor image, request fields, code on TILED_SM90, code on FULL): each code follows from
# the order model/unit.py documents: descriptor rules, the mode's number (ENUM_RANGE),
# MODE_NOT_BUILT, SWIZZLE_NOT_BUILT, then the request's rules
CASES = [
    ("tiled load, 128B", tiled(), fields(LOAD3), ErrorCode.OK, ErrorCode.OK),
    ("gather4 load", GATHER, fields(GATHER_LOAD), ErrorCode.MODE_NOT_BUILT, ErrorCode.OK),
    ("im2col load", IM2COL,
     fields(Request(Operation.LOAD, (0, 0, 0, 0), smem_address=0x400, mode=AccessMode.IM2COL, im2col_offsets=(0, 0))),
     ErrorCode.MODE_NOT_BUILT, ErrorCode.OK),
    # a full unit refuses scatter4 on a load (OPERATION_MODE); this one has no scatter4
    ("scatter4 on a load", GATHER, fields(GATHER_LOAD, mode=int(AccessMode.SCATTER4)),
     ErrorCode.MODE_NOT_BUILT, ErrorCode.OPERATION_MODE),
    ("tiled load, 128B atom 32B", tiled(Swizzle.B128_ATOM_32B), fields(LOAD3), ErrorCode.SWIZZLE_NOT_BUILT,
     ErrorCode.OK),
    ("tiled load, 96B", tiled(Swizzle.B96, box0=48), fields(LOAD3), ErrorCode.SWIZZLE_NOT_BUILT, ErrorCode.OK),
    # a full unit refuses the 8B flip on a store (FLIP_8B_DIRECTION), a request rule
    ("store with the 8B flip", tiled(Swizzle.B128_ATOM_32B_FLIP_8B),
     fields(Request(Operation.STORE, (0, 0, 0), smem_address=0x400)), ErrorCode.SWIZZLE_NOT_BUILT,
     ErrorCode.FLIP_8B_DIRECTION),
    # the mode before the swizzle
    ("gather4 on an atom-32B map", tiled(Swizzle.B128_ATOM_32B), fields(GATHER_LOAD), ErrorCode.MODE_NOT_BUILT,
     ErrorCode.GATHER4_MAP),
    # the descriptor's rules before either
    ("gather4 on a misaligned map", tiled(Swizzle.B128_ATOM_32B, global_address=0x1008), fields(GATHER_LOAD),
     ErrorCode.ADDRESS_ALIGN, ErrorCode.ADDRESS_ALIGN),
    # the mode's number before whether it is built
    ("mode 7", tiled(Swizzle.B128_ATOM_32B), fields(LOAD3, mode=7), ErrorCode.ENUM_RANGE, ErrorCode.ENUM_RANGE),
]


@pytest.mark.parametrize("config, column", [(TILED_SM90, 3), (FULL, 4)], ids=["tiled-sm90", "full"])
def test_model_gives_each_case_its_code(config, column):
    for case in CASES:
        result = complete(case[1], {**case[2], "slot": 0}, config)
        assert result.status == case[column], (case[0], result.error)


def test_every_case_through_the_rtl_in_lockstep():
    """All cases in one scenario on the tiled, sm90 unit (case i on slot i), each followed
    by the legal load of case 0; the lockstep checker compares every beat and completion
    with the model, and each completion carries the code the table derives."""
    images, requests, names = {}, [], []
    for i, (name, image, request, code, _) in enumerate(CASES):
        images[i] = image
        requests += [{**request, "slot": i, "request_id": 2 * i}, {**CASES[0][2], "slot": 0, "request_id": 2 * i + 1}]
        names += [name, "legal load"]
    result = run_pysim(Scenario(TILED_SM90, images, (1 << len(CASES)) - 1, requests, names=names))
    assert [status for _, status, _ in result.completions] == [
        status for *_, code, _ in CASES for status in (code, ErrorCode.OK)]


def test_configuration_names_families_in_one_order():
    assert UnitConfig(modes="all").modes == ALL_MODES == "tiled+gather4+im2col+im2col_w"
    config = UnitConfig(modes="im2col_w+tiled")
    assert config.modes == "tiled+im2col_w"
    assert config.built_modes == {AccessMode.TILE, AccessMode.IM2COL_W, AccessMode.IM2COL_W_128}
    assert config.builds_im2col_family and not UnitConfig(modes="tiled+gather4").builds_im2col_family
    assert UnitConfig(swizzles="sm90").built_swizzles == {Swizzle.NONE, Swizzle.B32, Swizzle.B64, Swizzle.B128}


@pytest.mark.parametrize("modes", ["gather4", "tiled+im2col_wide", "", "tiled,gather4"])
def test_configuration_refuses_modes_without_tiled_or_unknown(modes):
    with pytest.raises(TmaError) as error:
        UnitConfig(modes=modes)
    assert error.value.code == ErrorCode.ENUM_RANGE and error.value.field == "config.modes"


def test_configuration_refuses_an_unknown_swizzle_set():
    with pytest.raises(TmaError) as error:
        UnitConfig(swizzles="sm100")
    assert error.value.code == ErrorCode.ENUM_RANGE and error.value.field == "config.swizzles"


def test_full_unit_expects_no_not_built_code():
    assert unreachable(FULL) == UNREACHABLE | {ErrorCode.MODE_NOT_BUILT, ErrorCode.SWIZZLE_NOT_BUILT}
    assert all(bucket.startswith("TILE/") and "ATOM" not in bucket and "B96" not in bucket
               for bucket in buckets_possible(TILED_SM90))


@pytest.mark.parametrize("config", [TILED_SM90, UnitConfig(modes="tiled+im2col", swizzles="all")],
                         ids=["tiled-sm90", "tiled-im2col"])
def test_codes_called_unreachable_never_come_from_such_a_unit(config):
    """The campaign does not expect the codes ``unreachable(config)`` lists (only a mode
    or swizzle the unit lacks can break their rules): the model, over 600 scenarios of
    every generator, reports none of them, while it reports many others."""
    never, seen = unreachable(config) - {ErrorCode.OK}, Counter()        # OK is no rule
    for index in range(600):
        name = list(GENERATORS)[index % len(GENERATORS)]
        scenario = GENERATORS[name](RandomDraw(f"unreachable:{config.modes}:{index}"), config)
        for fields in scenario.requests:
            slot = fields["slot"]
            image = scenario.images.get(slot) if scenario.valid_slots >> slot & 1 else None
            seen[check(image, fields, config)[0]] += 1
    assert not set(seen) & never, {code.name: seen[code] for code in set(seen) & never}
    assert len(seen) >= 25


#: The configurations the compiled campaigns run (tests/units.py's OPTIONS, built with
#: the other options too): gather4 without the pixel walk and the sm_100 swizzles at
#: lanes 1; the im2col family without gather4 at lanes 8.
CAMPAIGN_CONFIGS = [on(backend, OPTIONS[lanes]) for backend in ("cxxrtl", "verilator") for lanes in (1, 8)]


@pytest.mark.slow           # a compiled build of each
@pytest.mark.parametrize("backend, config", CAMPAIGN_CONFIGS)
def test_campaign_on_a_unit_built_without_some_modes(backend, config):
    """Legal, boundary, illegal and fault scenarios in lockstep with the model: no
    difference, every built mode and operation completes OK, the others are refused."""
    report = run_campaign(config, backend, seed=31, scenarios=300, workers=1)
    coverage = report["coverage"]
    assert not report["failures"], report["failures"][0].report
    assert coverage.codes["MODE_NOT_BUILT"] > 0
    assert (coverage.codes["SWIZZLE_NOT_BUILT"] > 0) == (config.swizzles != "all")
    modes_ok = {bucket.split("/")[0] for bucket, count in coverage.buckets.items() if count}
    assert modes_ok == {mode.name for mode in config.built_modes}
