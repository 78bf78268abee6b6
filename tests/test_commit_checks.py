"""Rules checked at commit (``UnitConfig.checks == "at_commit"``): the commit checker finds
the first broken descriptor rule when a SLOT_VALID write makes a slot valid, and a request
checks only its own rules. The codes are the model's for either option, so the lockstep
checker judges every scenario; the write's answer waits for the checks, by the cycles the
timing model gives (``commit_cycles``); a request during the check finds the slot not
valid yet. The compiled campaigns, both backends at lanes 1 and 8, are
tests/test_queue_depths.py's (on the least queues, checked at commit); the cycles of its
requests are tests/test_timing.py's."""

import pytest
from amaranth.sim import Simulator

from tma_unit.model import ErrorCode, TmaError, encode_descriptor
from tma_unit.model.config import CHECKS, UnitConfig
from tma_unit.model.examples import example
from tma_unit.model.layout import REQUEST_FIELDS, pack_payload
from tma_unit.model.timing import CHECK_CYCLES, commit_cycles
from tma_unit.model.unit import check, fields_from_request
from tma_unit.rtl.layouts import RequestLayout
from tma_unit.rtl.regfile import DescriptorFile, SLOT_VALID_ADDRESS
from tma_unit.rtl.unit import TmaUnit
from tma_unit.sim.generate import GENERATORS, RandomDraw
from tma_unit.sim.pysim import run_pysim
from tma_unit.sim.testbench import stream_get, stream_put, wb_read, wb_write, write_descriptor

AT_COMMIT = UnitConfig(lanes=1, slots=8, checks="at_commit")


def test_generated_scenarios_checked_at_commit():
    """A scenario of each generator (legal, boundary, illegal descriptors and requests,
    faults) in lockstep with the model: every slot the scenario makes valid is checked
    by the commit checker, and every illegal descriptor's first broken rule comes back
    from it."""
    for name in GENERATORS:
        run_pysim(GENERATORS[name](RandomDraw(f"commit:{name}"), AT_COMMIT))


async def _answer_cycles(ctx, bus, address, value):
    """Cycles from a write's strobe to its answer (ack)."""
    ctx.set(bus.cyc, 1)
    ctx.set(bus.stb, 1)
    ctx.set(bus.we, 1)
    ctx.set(bus.adr, address >> 2)
    ctx.set(bus.dat_w, value)
    ctx.set(bus.sel, 0xF)
    cycles = 0
    while True:
        await ctx.tick()
        cycles += 1
        if ctx.get(bus.ack) or ctx.get(bus.err):
            break
    assert ctx.get(bus.ack)
    ctx.set(bus.cyc, 0)
    ctx.set(bus.stb, 0)
    return cycles


@pytest.mark.parametrize("checks", CHECKS)
def test_a_slot_valid_write_is_answered_once_its_slots_are_checked(checks):
    """The SLOT_VALID writes below make 1, 0 (bits already set), 3 and 0 (bits of slots
    never written) slots valid; each is answered later than a STATUS write by
    ``commit_cycles`` of the slots it makes valid, and its bits read back set."""
    config = UnitConfig(slots=8, checks=checks)
    dut = DescriptorFile(config)
    tm, _ = example("gemm-128x64")
    image = encode_descriptor(tm)
    measured = {}

    async def bench(ctx):
        for slot in range(4):
            await write_descriptor(ctx, dut.bus, slot, image)
        plain = await _answer_cycles(ctx, dut.bus, 0x00C, 0)       # STATUS: no check
        for name, mask in (("one", 0b0001), ("again", 0b0001), ("three", 0b1111), ("unwritten", 0b11111111)):
            measured[name] = await _answer_cycles(ctx, dut.bus, SLOT_VALID_ADDRESS, mask) - plain
            assert await wb_read(ctx, dut.bus, SLOT_VALID_ADDRESS) == mask & 0b1111

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    newly = {"one": 1, "again": 0, "three": 3, "unwritten": 0}
    assert measured == {name: commit_cycles(config, count) for name, count in newly.items()}
    if checks == "at_commit":       # the derivation, not the function: a start cycle, then the checks
        assert measured["three"] == 1 + 3 * CHECK_CYCLES


def test_a_request_during_the_check_finds_the_slot_not_valid():
    """SLOT_VALID reads as before the write until its answer, so a request offered while
    the slot is checked completes SLOT_INVALID, as the model answers for a slot that is
    not valid; the same request after the answer completes as the model says."""
    dut = TmaUnit(AT_COMMIT)
    tm, req = example("gemm-128x64")
    image = encode_descriptor(tm)
    fields = fields_from_request(req, 0)
    payload = RequestLayout.from_bits(pack_payload(REQUEST_FIELDS, fields))
    state = {"answered": False, "statuses": []}

    async def bus(ctx):
        await write_descriptor(ctx, dut.bus, 0, image)
        state["writing"] = True
        await wb_write(ctx, dut.bus, SLOT_VALID_ADDRESS, 1)
        state["answered"] = True

    async def requests(ctx):
        while not state.get("writing"):
            await ctx.tick()
        for _ in range(CHECK_CYCLES // 2):              # in the middle of the check
            await ctx.tick()
        assert not state["answered"]
        await stream_put(ctx, dut.requests, payload)
        while not state["answered"]:
            await ctx.tick()
        await stream_put(ctx, dut.requests, payload)

    async def completions(ctx):
        ctx.set(dut.beats.ready, 1)
        for _ in range(2):
            completion = await stream_get(ctx, dut.completions)
            state["statuses"].append((completion.status, completion.transaction_bytes))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bus)
    sim.add_testbench(requests)
    sim.add_testbench(completions)
    sim.run()
    assert state["statuses"] == [check(None, fields, AT_COMMIT), check(image, fields, AT_COMMIT)]
    assert state["statuses"][0][0] == ErrorCode.SLOT_INVALID and state["statuses"][1][0] == ErrorCode.OK


@pytest.mark.parametrize("value, code", [("at_request", ErrorCode.ENUM_RANGE), (1, ErrorCode.FIELD_TYPE)])
def test_configuration_refuses_an_unknown_place_to_check(value, code):
    with pytest.raises(TmaError) as error:
        UnitConfig(checks=value)
    assert error.value.code == code and error.value.field == "config.checks"
