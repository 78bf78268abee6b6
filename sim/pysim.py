"""The co-simulation backend on Amaranth's Python simulator (async testbenches)."""

from amaranth.sim import Simulator

from ..model.layout import REQUEST_FIELDS, pack_payload
from ..rtl.layouts import RequestLayout
from ..rtl.unit import TmaUnit
from .cosim import (LockstepChecker, Scenario, completion_pattern, ready_pattern, request_gaps, RunResult,
                    waveform_on_mismatch)
from .testbench import write_descriptor, set_slot_valid, stream_put

__all__ = ["run_pysim"]


def run_pysim(scenario: Scenario, vcd: str | None = None, max_cycles: int = 200000,
              mismatch_vcd: str | None = None) -> RunResult:
    """Run ``scenario`` on the RTL in Amaranth's simulator under the lockstep checker.
    ``vcd``: write a waveform to this path. ``mismatch_vcd``: if the RTL and the model
    differ, run the scenario again writing a waveform to this path, from the start to the
    difference, where the run stops (default: into the folder ``$TMA_UNIT_MISMATCH_VCD``
    if set; :func:`.cosim.waveform_on_mismatch`)."""
    return waveform_on_mismatch(lambda: _run(scenario, vcd, max_cycles),
                                lambda path, first, last: _run(scenario, path, max_cycles), mismatch_vcd, "pysim",
                                window=None)


def _run(scenario: Scenario, vcd: str | None, max_cycles: int) -> RunResult:
    dut = TmaUnit(scenario.config)
    checker = LockstepChecker(scenario)
    ready = ready_pattern(scenario.seed, scenario.ready_probability)
    completion_ready = completion_pattern(scenario)
    gaps = request_gaps(scenario.seed, len(scenario.requests), scenario.max_gap)
    state = {"cycle": 0, "setup_done": False}
    total = len(scenario.requests)

    async def setup_and_requests(ctx):
        for slot, image in scenario.images.items():
            if image is not None:
                await write_descriptor(ctx, dut.bus, slot, image)
        await set_slot_valid(ctx, dut.bus, scenario.valid_slots)
        state["setup_done"] = True
        for fields, gap in zip(scenario.requests, gaps):
            for _ in range(int(gap)):
                await ctx.tick()
            await stream_put(ctx, dut.requests, RequestLayout.from_bits(pack_payload(REQUEST_FIELDS, fields)))

    async def consumer(ctx):
        cycle = 0
        while checker.completion_index < total:
            if not state["setup_done"]:
                state["start"] = cycle + 1          # cycles count from the first request offered
            ctx.set(dut.beats.ready, int(ready[cycle % len(ready)]))
            ctx.set(dut.completions.ready, int(completion_ready[cycle % len(completion_ready)]))
            _, _, beat_valid, beat_ready, beat, done_valid, done_ready, done = await ctx.tick().sample(
                dut.beats.valid, dut.beats.ready, dut.beats.payload, dut.completions.valid, dut.completions.ready,
                dut.completions.payload)
            if beat_valid and beat_ready:
                checker.on_beat(cycle, beat.as_bits())
            if done_valid and done_ready:
                checker.on_completion(cycle, done.as_bits())
            cycle += 1
            if cycle > max_cycles:
                break
        state["cycle"] = cycle - state.get("start", 0)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(setup_and_requests)
    sim.add_testbench(consumer)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    return checker.finish(state["cycle"])
