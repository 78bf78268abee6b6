"""The co-simulation backend on Amaranth's Python simulator (async testbenches)."""

from amaranth.sim import Simulator

from ..model.layout import REQUEST_FIELDS, pack_payload
from ..rtl.layouts import RequestLayout
from ..rtl.unit import TmaUnit
from .cosim import (LockstepChecker, Scenario, completion_pattern, ready_pattern, request_gaps, RunResult,
                    waveform_on_mismatch)
from . import native
from .ledger import describe, note
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


#: The simulated units a process keeps for its next scenarios (:class:`_Bench`), by
#: configuration, the most recently used last; at most :data:`KEPT` of them.
_BENCHES = {}
KEPT = 4


def _run(scenario: Scenario, vcd: str | None, max_cycles: int) -> RunResult:
    key = (scenario.config, native.source_digest())        # a unit of other code is another unit
    bench = _BENCHES.pop(key, None) or _Bench(scenario.config)
    result = bench.run(scenario, vcd, max_cycles)          # raises on a difference: the bench is not kept
    _BENCHES[key] = bench
    while len(_BENCHES) > KEPT:
        del _BENCHES[next(iter(_BENCHES))]
    note("lockstep", backend="pysim", config=describe(scenario.config), requests=len(scenario.requests))
    return result


class _Bench:
    """A unit of one configuration in Amaranth's simulator with the two testbenches of a
    lockstep run, kept for the next scenario of that configuration: elaborating the unit
    and compiling it for the simulator take seconds, while a short scenario's cycles take
    a fraction of one. Each run starts with the simulator's reset (every signal and
    memory to its initial value, the clock and the testbenches started again from the
    top), which is the state of a simulator just made. A run that ended early (a
    difference, an error) leaves testbenches midway: that bench is dropped, not kept."""

    def __init__(self, config):
        self.dut = TmaUnit(config)
        self.sim = Simulator(self.dut)
        self.sim.add_clock(1e-8)
        self.sim.add_testbench(self._setup_and_requests)
        self.sim.add_testbench(self._consumer)
        self.job, self.used = None, False

    def run(self, scenario: Scenario, vcd: str | None, max_cycles: int) -> RunResult:
        self.job = _Job(scenario, max_cycles)
        if self.used:
            self.sim.reset()
        self.used = True
        if vcd:
            with self.sim.write_vcd(vcd):
                self.sim.run()
        else:
            self.sim.run()
        return self.job.checker.finish(self.job.cycle)

    async def _setup_and_requests(self, ctx):
        dut, job = self.dut, self.job
        for slot, image in job.scenario.images.items():
            if image is not None:
                await write_descriptor(ctx, dut.bus, slot, image)
        await set_slot_valid(ctx, dut.bus, job.scenario.valid_slots)
        job.setup_done = True
        for fields, gap in zip(job.scenario.requests, job.gaps):
            for _ in range(int(gap)):
                await ctx.tick()
            await stream_put(ctx, dut.requests, RequestLayout.from_bits(pack_payload(REQUEST_FIELDS, fields)))

    async def _consumer(self, ctx):
        dut, job = self.dut, self.job
        checker, ready, completion_ready = job.checker, job.ready, job.completion_ready
        cycle, start = 0, 0
        while checker.completion_index < len(job.scenario.requests):
            if not job.setup_done:
                start = cycle + 1          # cycles count from the first request offered
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
            if cycle > job.max_cycles:
                break
        job.cycle = cycle - start


class _Job:
    """One scenario's run on a :class:`_Bench`: its checker, its ready patterns and gaps,
    and how far the run has come."""

    def __init__(self, scenario: Scenario, max_cycles: int):
        self.scenario, self.max_cycles = scenario, max_cycles
        self.checker = LockstepChecker(scenario)
        self.ready = ready_pattern(scenario.seed, scenario.ready_probability)
        self.completion_ready = completion_pattern(scenario)
        self.gaps = request_gaps(scenario.seed, len(scenario.requests), scenario.max_gap)
        self.setup_done = False
        self.cycle = 0
