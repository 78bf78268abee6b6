"""Step addressing (``UnitConfig.addressing == "step"``): each beat adds deltas prepared per
job instead of multiplying coordinates by strides. The model's answers are the same for
both options, so every check here is the lockstep checker's: each beat's global addresses
against the golden model, on cases chosen to reach every delta (a carry out of each
digit, gather4's rows, the pixel walk's restarts, halo pixels and N), and on random
campaigns on both compiled backends."""

import pytest

from tma_unit.model import (AccessMode, DataType, ErrorCode, Im2colWideMode, MapKind, Operation, Request, Swizzle,
                            TensorMap, TmaError, encode_descriptor, encode_im2col, encode_im2col_wide)
from tma_unit.model.config import UnitConfig
from tma_unit.model.unit import fields_from_request
from tma_unit.sim.campaign import run_campaign
from tma_unit.sim.cosim import Scenario
from tma_unit.sim.generate import GENERATORS, RandomDraw
from tma_unit.sim.pysim import run_pysim

from units import OPTIONS, on

_F16 = DataType.FLOAT16

#: (descriptor, request): each reaches deltas of its own.
CASES = [
    # rank 5, element strides above 1 in every dimension, a box that starts outside the
    # tensor in two dimensions: the odometer carries out of every digit, into negative
    # coordinates (addresses below the base, modulo 2^address_width)
    (TensorMap(MapKind.TILED, _F16, 0x40, (96, 7, 6, 5, 4), (256, 2048, 16384, 98304), (40, 5, 4, 3, 2),
               (2, 3, 2, 1, 2), swizzle=Swizzle.NONE),
     Request(Operation.LOAD, (-8, -3, 1, -1, 0), smem_address=0x400)),
    # one chunk a row: every beat carries out of digit 0
    (TensorMap(MapKind.TILED, DataType.UINT8, 0x1000, (16, 64, 3), (16, 1024), (16, 24, 3), (1, 1, 1)),
     Request(Operation.STORE, (0, 5, 0), smem_address=0x800)),
    # gather4: four rows in no order, one past the tensor
    (TensorMap(MapKind.TILED, _F16, 0x2000, (128, 40), (512,), (64, 1), (1, 1), swizzle=Swizzle.B128),
     Request(Operation.LOAD, (0, 33, 2, 40, 17), smem_address=0x400, mode=AccessMode.GATHER4)),
    # im2col: W and H restart, N counts, offsets shift the window
    (encode_im2col(_F16, 4, 0x3000, [32, 5, 4, 3], [64, 320, 1280], [-1, -1], [0, 0], 16, 40, [2, 1, 1, 1]),
     Request(Operation.LOAD, (0, -1, 0, 0), smem_address=0, mode=AccessMode.IM2COL, im2col_offsets=(1, 1))),
    # im2col::w with halo pixels after each group, and ::w::128
    (encode_im2col_wide(_F16, 3, 0x5000, [64, 40, 3], [128, 5120], 0, 0, 32, 16, [1, 2, 1], swizzle=Swizzle.B64),
     Request(Operation.LOAD, (0, 2, 1), smem_address=0x400, mode=AccessMode.IM2COL_W, w_halo=3, w_offset=1)),
    (encode_im2col_wide(_F16, 3, 0x5000, [64, 300, 3], [128, 38400], 0, 0, 32, 0, [1, 1, 1],
                        mode=Im2colWideMode.W128),
     Request(Operation.LOAD, (0, 7, 1), smem_address=0x400, mode=AccessMode.IM2COL_W_128, w_halo=2)),
]


def _scenario(config, copies=2):
    """Every case, each twice back to back (a job's first beat after another's last)."""
    images = {slot: encode_descriptor(tm) for slot, (tm, _) in enumerate(CASES)}
    requests = [{**fields_from_request(request, index), "slot": slot}
                for index, (slot, (_, request)) in enumerate((s, c) for s, c in enumerate(CASES) for _ in range(copies))]
    return Scenario(config, images, (1 << len(CASES)) - 1, requests)


@pytest.mark.parametrize("lanes", [1, 2, pytest.param(8, marks=pytest.mark.slow)])     # lanes 8: a minute on pysim
def test_every_case_in_lockstep(lanes):
    """Every beat's addresses as the model gives them, and every case completes OK (an
    error would leave its deltas unchecked)."""
    config = UnitConfig(lanes=lanes, slots=8, address_width=40, addressing="step")
    result = run_pysim(_scenario(config))
    assert [status for _, status, _ in result.completions] == [ErrorCode.OK] * 2 * len(CASES)


def test_generated_scenarios_in_lockstep():
    """A few scenarios of each generator (seeded), on a unit with two lanes."""
    config = UnitConfig(lanes=2, slots=8, addressing="step")
    for index in range(8):
        name = list(GENERATORS)[index % len(GENERATORS)]
        run_pysim(GENERATORS[name](RandomDraw(f"step:{index}"), config))


def test_configuration_refuses_an_unknown_addressing():
    for value, code in (("stepped", ErrorCode.ENUM_RANGE), (1, ErrorCode.FIELD_TYPE)):
        with pytest.raises(TmaError) as error:
            UnitConfig(addressing=value)
        assert error.value.code == code and error.value.field == "config.addressing"


#: The compiled campaigns: both backends, lanes 1 and 8. The units are tests/units.py's
#: OPTIONS: some modes left out (gather4's rows at lanes 1, the pixel walk at lanes 8;
#: every mode steps on the Python simulator above), a request former too (the lockstep
#: checker compares every beat's L2 requests with the model's merge), the least queues
#: and the rules at commit, so one build of each backend and lane count serves every
#: option (tests/test_timing.py, tests/test_queue_depths.py, tests/test_built_options.py).
CAMPAIGN_CONFIGS = [on(backend, OPTIONS[lanes]) for backend in ("cxxrtl", "verilator") for lanes in (1, 8)]


@pytest.mark.slow           # a compiled build of each
@pytest.mark.parametrize("backend, config", CAMPAIGN_CONFIGS)
def test_campaign_on_a_unit_that_steps_addresses(backend, config):
    """Legal, boundary, illegal and fault scenarios in lockstep with the model: no
    difference, and every mode built completes OK somewhere."""
    report = run_campaign(config, backend, seed=32, scenarios=300 if config.lanes == 1 else 60, workers=1)
    assert not report["failures"], report["failures"][0].report
    modes_ok = {bucket.split("/")[0] for bucket, count in report["coverage"].buckets.items() if count}
    assert modes_ok == {mode.name for mode in config.built_modes}
