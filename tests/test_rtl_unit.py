"""The unit's bus-side behaviour: a descriptor rewritten while a request using it is in
flight, back-to-back requests without bubbles, the status registers after a rejection,
COMPLETED and the error status counting completions taken, STATUS.BUSY over a request's
whole life, a slot's valid bit needing a write to the slot, and reset in the middle of
a copy."""

import math

import pytest
from amaranth.hdl import ClockDomain, Elaboratable, Module, Signal

from tma_unit.model import DataType, MapKind, Operation, Request, Swizzle, TensorMap, encode_descriptor, ErrorCode
from tma_unit.model.config import UnitConfig
from tma_unit.model.layout import REQUEST_FIELDS, pack_payload
from tma_unit.model.unit import COUNT_LIMIT, fields_from_request, check, reported_bytes
from tma_unit.rtl.layouts import RequestLayout
from tma_unit.rtl.regfile import REGISTERS, descriptor_writes
from tma_unit.rtl.unit import TmaUnit
from tma_unit.sim.cosim import LockstepChecker, Scenario
from tma_unit.sim.testbench import wb_read, wb_write, write_descriptor, set_slot_valid, stream_put, stream_get

from simulator import simulate

CONFIG = UnitConfig(lanes=2, slots=4)
A = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x10000, (64, 64), (128,), (64, 32), (1, 1), swizzle=Swizzle.B128)
B = TensorMap(MapKind.TILED, DataType.FLOAT32, 0x80000, (16, 8), (64,), (16, 8), (1, 1))
#: a box of 64 rows of 128 bytes: 512 chunks, 256 beats at lanes 2
C = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x20000, (64, 64), (128,), (64, 64), (1, 1), swizzle=Swizzle.B128)
OFFSET = {register.name: register.offset for register in REGISTERS}
BUSY = 1 << 1           # STATUS[1]


def payload(request, slot):
    return RequestLayout.from_bits(pack_payload(REQUEST_FIELDS, fields_from_request(request, slot)))


def test_rewrite_in_flight_and_back_to_back():
    dut = TmaUnit(CONFIG)
    first = Request(Operation.LOAD, (0, 0), smem_address=0x400, request_id=1)
    second = Request(Operation.LOAD, (0, 0), smem_address=0x8000, request_id=2)
    burst = [Request(Operation.LOAD, (0, y), smem_address=0x9000, request_id=10 + y) for y in range(3)]
    check_a = LockstepChecker(Scenario(CONFIG, {0: encode_descriptor(A)}, 1,
                                       [fields_from_request(first, 0)]))
    check_b = LockstepChecker(Scenario(CONFIG, {0: encode_descriptor(B)}, 1,
                                       [fields_from_request(r, 0) for r in [second] + burst]))
    beat_cycles = {}
    state = {"release": False, "completions": 0}

    async def driver(ctx):
        await write_descriptor(ctx, dut.bus, 0, encode_descriptor(A))
        await set_slot_valid(ctx, dut.bus, 1)
        await stream_put(ctx, dut.requests, payload(first, 0))
        # the first request is in flight (its beats are held back): rewrite its slot
        await write_descriptor(ctx, dut.bus, 0, encode_descriptor(B))
        assert await wb_read(ctx, dut.bus, 0x018) == 0          # the write cleared the valid bit
        await set_slot_valid(ctx, dut.bus, 1)
        state["release"] = True
        for request in [second] + burst:                        # back to back
            await stream_put(ctx, dut.requests, payload(request, 0))

    async def consumer(ctx):
        cycle = 0
        ctx.set(dut.completions.ready, 1)
        while state["completions"] < 5:
            ctx.set(dut.beats.ready, int(state["release"]))
            _, _, valid, ready, beat, done, completion = await ctx.tick().sample(
                dut.beats.valid, dut.beats.ready, dut.beats.payload, dut.completions.valid, dut.completions.payload)
            if valid and ready:
                request_id = int(beat.request_id)
                (check_a if request_id == 1 else check_b).on_beat(cycle, beat.as_bits())
                beat_cycles.setdefault(request_id, []).append(cycle)
            if done:
                checker = check_a if completion.request_id == 1 else check_b
                checker.on_completion(cycle, completion.as_bits())
                state["completions"] += 1
            cycle += 1
            assert cycle < 5000

    simulate(dut, driver, consumer)
    check_a.finish(0)
    check_b.finish(0)
    # the burst's beats follow each other with no idle cycle between requests
    cycles = [c for rid in (2, 10, 11, 12) for c in beat_cycles[rid]]
    assert cycles == list(range(cycles[0], cycles[0] + len(cycles)))


def test_status_after_a_rejection():
    dut = TmaUnit(CONFIG)

    async def bench(ctx):
        ctx.set(dut.completions.ready, 1)
        ctx.set(dut.requests.payload, payload(Request(Operation.LOAD, (0, 0), request_id=0x77), 3))
        ctx.set(dut.requests.valid, 1)
        await ctx.tick().until(dut.requests.ready)
        ctx.set(dut.requests.valid, 0)
        await ctx.tick().until(dut.completions.valid)
        assert ctx.get(dut.completions.payload.status) == ErrorCode.SLOT_INVALID
        await ctx.tick().repeat(2)
        status = await wb_read(ctx, dut.bus, 0x00C)
        assert status & 1 and (status >> 8) & 0xFF == ErrorCode.SLOT_INVALID and status >> 16 == 1
        assert await wb_read(ctx, dut.bus, 0x010) == 0x77
        assert await wb_read(ctx, dut.bus, 0x014) == 1          # one completion taken
        await wb_write(ctx, dut.bus, 0x00C, 1)                  # write 1 to clear
        assert await wb_read(ctx, dut.bus, 0x00C) == 0

    simulate(dut, bench)


class Harness(Elaboratable):
    """The unit under a ``sync`` domain of the test's own, and a cycle count.

    Amaranth 0.5's simulator refuses ``ctx.set(ResetSignal("sync"), ...)`` ("cannot be
    assigned"): the implicit domain's reset is not a signal a testbench holds. A domain
    the top module declares is, so a testbench drives ``domain.rst`` like any input, and
    the unit sees it as its real reset (``ResetSignal()`` inside reads it too, which a
    ``ResetInserter`` around the unit would not give). The count is reset-less, so it
    keeps counting through a reset: a testbench reads it to say in which cycle something
    happened (cycle ``n`` is the one in which it reads ``n``)."""

    def __init__(self, config):
        self.unit = TmaUnit(config)
        self.domain = ClockDomain("sync")
        self.cycle = Signal(32, reset_less=True)

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = self.domain
        m.submodules.unit = self.unit
        m.d.sync += self.cycle.eq(self.cycle + 1)
        return m


def test_slot_valid_set_for_a_slot_never_written_is_refused():
    """SLOT_VALID set by software for a slot no bus write has reached does not take, so a
    request on it completes SLOT_INVALID (the model's answer for a slot with no image),
    not with a rule the zeroed slot memory breaks."""
    dut = TmaUnit(CONFIG)
    fields = fields_from_request(Request(Operation.LOAD, (0, 0), smem_address=0x400, request_id=0x42), 2)
    expected, _ = check(None, fields, CONFIG)

    async def bench(ctx):
        ctx.set(dut.completions.ready, 1)
        await set_slot_valid(ctx, dut.bus, 0b1111)
        assert await wb_read(ctx, dut.bus, OFFSET["SLOT_VALID"]) == 0
        await stream_put(ctx, dut.requests, RequestLayout.from_bits(pack_payload(REQUEST_FIELDS, fields)))
        completion = await stream_get(ctx, dut.completions)
        assert (completion.request_id, completion.status) == (0x42, expected)

    simulate(dut, bench)


def test_completed_counts_completions_taken():
    """COMPLETED, STATUS's error fields and ERROR_ID count a completion when it is taken
    (valid and ready on the completion stream), not when the unit queues it: with the
    stream stalled, four completions waiting in the unit read as none taken; each take
    then counts one, and the rejected request's error shows once its completion is
    taken."""
    dut = TmaUnit(CONFIG)       # completion_depth 4: all four wait in the unit
    image = encode_descriptor(B)
    requests = [fields_from_request(Request(Operation.LOAD, (0, 0), smem_address=0x1000 * k, request_id=rid), slot)
                for k, (rid, slot) in enumerate([(1, 0), (0x77, 3), (3, 0), (4, 0)])]   # slot 3: never written
    expected = [check(image if fields["slot"] == 0 else None, fields, CONFIG)[0] for fields in requests]
    assert expected[1] != ErrorCode.OK and expected.count(ErrorCode.OK) == 3

    async def bench(ctx):
        ctx.set(dut.beats.ready, 1)
        await write_descriptor(ctx, dut.bus, 0, image)
        await set_slot_valid(ctx, dut.bus, 0b0001)
        for fields in requests:
            await stream_put(ctx, dut.requests, RequestLayout.from_bits(pack_payload(REQUEST_FIELDS, fields)))
        await ctx.tick().repeat(100)        # 3 x 16 beats and the completions queued long since
        assert ctx.get(dut.completions.valid)
        assert await wb_read(ctx, dut.bus, OFFSET["COMPLETED"]) == 0
        assert await wb_read(ctx, dut.bus, OFFSET["STATUS"]) & ~BUSY == 0
        assert await wb_read(ctx, dut.bus, OFFSET["ERROR_ID"]) == 0
        errors, last_code, last_id = 0, 0, 0
        for taken, (fields, code) in enumerate(zip(requests, expected), 1):
            completion = await stream_get(ctx, dut.completions)
            assert (completion.request_id, completion.status) == (fields["request_id"], code)
            assert await wb_read(ctx, dut.bus, OFFSET["COMPLETED"]) == taken
            if code != ErrorCode.OK:
                errors, last_code, last_id = errors + 1, code, fields["request_id"]
            status = await wb_read(ctx, dut.bus, OFFSET["STATUS"])
            assert (status & 1, (status >> 8) & 0xFF, status >> 16) == (int(errors > 0), last_code, errors), taken
            assert await wb_read(ctx, dut.bus, OFFSET["ERROR_ID"]) == last_id
        assert await wb_read(ctx, dut.bus, OFFSET["STATUS"]) & BUSY == 0

    simulate(dut, bench)


#: cycles before a request's accept and after its take at which STATUS.BUSY is checked
MARGIN = 8


def test_busy_from_accept_until_completion_taken():
    """STATUS.BUSY reads 1 from the cycle after a request is accepted to the cycle its
    completion is taken, both included, and 0 before and after, here with the
    completion held ready in the unit for some 20 cycles before it is taken (BUSY once
    missed front-end stages 1 to 10 and the completion FIFO).

    Every STATUS read over the bus samples the register in one cycle (the one before the
    answer: docs/registers.md), and back-to-back reads sample one cycle in three. So the
    request runs three times, accepted one cycle later in the reads' period each time,
    and the three runs together sample every cycle from ``MARGIN`` before the accept to
    ``MARGIN`` after the take."""
    harness = Harness(CONFIG)
    dut = harness.unit
    hold = 60           # the accept to the take; the completion is ready after its 16 beats + 21 cycles
    samples, runs = [], []          # (cycle, BUSY), (accept cycle, take cycle)
    state = {"setup": False, "done": False}

    async def reader(ctx):
        while not state["setup"]:
            await ctx.tick()
        while not state["done"]:
            status = await wb_read(ctx, dut.bus, OFFSET["STATUS"])
            samples.append((ctx.get(harness.cycle) - 1, bool(status & BUSY)))

    async def driver(ctx):
        ctx.set(dut.beats.ready, 1)
        await write_descriptor(ctx, dut.bus, 0, encode_descriptor(B))
        await set_slot_valid(ctx, dut.bus, 0b0001)
        state["setup"] = True
        for phase in range(3):
            await ctx.tick().repeat(2 * MARGIN)
            while ctx.get(harness.cycle) % 3 != phase:
                await ctx.tick()
            request = Request(Operation.LOAD, (0, 0), smem_address=0x1000, request_id=phase)
            await stream_put(ctx, dut.requests, payload(request, 0))     # the unit is idle: taken at once
            accept = ctx.get(harness.cycle) - 1
            await ctx.tick().repeat(accept + hold - ctx.get(harness.cycle))
            assert ctx.get(dut.completions.valid)
            await stream_get(ctx, dut.completions)
            runs.append((accept, ctx.get(harness.cycle) - 1))
        await ctx.tick().repeat(2 * MARGIN)
        state["done"] = True

    simulate(harness, reader, driver)
    covered = set()
    for accept, take in runs:
        assert take == accept + hold
        for cycle, busy in samples:
            if accept - MARGIN <= cycle <= take + MARGIN:
                assert busy == (accept < cycle <= take), (
                    f"STATUS.BUSY read {int(busy)} {cycle - accept} cycles after the accept (taken after {hold})")
                covered.add(cycle - accept)
    assert covered == set(range(-MARGIN, hold + MARGIN + 1))


def test_reset_in_the_middle_of_a_copy_aborts_it():
    """Reset is an abort (docs/registers.md, "Reset"). A one-cycle reset at beat 10 of a
    256-beat copy: nothing is transferred on any stream in the reset cycle, the streams
    are idle in the next, and the copy sends no more beats and no completion; STATUS,
    ERROR_ID and COMPLETED (non-zero before, from a rejected request) read 0; SLOT_VALID
    reads 0, and the slot memory still holds the image, but setting the slot's valid bit
    without writing the slot again does not take (a request on it is refused). Written
    again and marked valid, the slot runs a copy whose beats and completion are the
    golden model's."""
    harness = Harness(CONFIG)
    dut = harness.unit
    image = encode_descriptor(C)
    copy = Request(Operation.LOAD, (0, 0), smem_address=0x2000, request_id=5)
    again = Request(Operation.LOAD, (0, 0), smem_address=0x4000, request_id=6)
    last = Request(Operation.LOAD, (0, 0), smem_address=0x8000, request_id=7)
    rejected = Request(Operation.LOAD, (0, 0), request_id=0x77)
    assert check(image, fields_from_request(copy, 1), CONFIG) == (ErrorCode.OK, 256 * 32)   # 256 beats of 2 chunks

    async def bench(ctx):
        ctx.set(dut.beats.ready, 1)
        await write_descriptor(ctx, dut.bus, 1, image)
        await set_slot_valid(ctx, dut.bus, 0b0010)
        await stream_put(ctx, dut.requests, payload(rejected, 3))           # slot 3: never written
        assert (await stream_get(ctx, dut.completions)).status == ErrorCode.SLOT_INVALID
        assert await wb_read(ctx, dut.bus, OFFSET["COMPLETED"]) == 1
        await stream_put(ctx, dut.requests, payload(copy, 1))
        ctx.set(dut.completions.ready, 1)
        beats = 0
        while beats < 10:
            _, _, valid, ready = await ctx.tick().sample(dut.beats.valid, dut.beats.ready)
            beats += valid and ready
        # one cycle of reset, with both output streams ready and a request offered
        ctx.set(harness.domain.rst, 1)
        ctx.set(dut.requests.payload, payload(again, 1))
        ctx.set(dut.requests.valid, 1)
        _, _, *handshakes = await ctx.tick().sample(dut.requests.ready, dut.beats.valid, dut.completions.valid)
        ctx.set(harness.domain.rst, 0)
        ctx.set(dut.requests.valid, 0)
        assert handshakes == [0, 0, 0], "a transfer in the reset cycle"
        assert (ctx.get(dut.beats.valid), ctx.get(dut.completions.valid), ctx.get(dut.requests.ready)) == (0, 0, 1)
        # had the copy gone on, its last 246 beats and its completion would be out by now
        for cycle in range(400):
            _, _, beat, completion = await ctx.tick().sample(dut.beats.valid, dut.completions.valid)
            assert (beat, completion) == (0, 0), f"a transfer {cycle} cycles after the reset"
        for name in ("STATUS", "ERROR_ID", "COMPLETED", "SLOT_VALID"):
            assert await wb_read(ctx, dut.bus, OFFSET[name]) == 0, name
        for address, word in descriptor_writes(1, image):
            assert await wb_read(ctx, dut.bus, address) == word
        await set_slot_valid(ctx, dut.bus, 0b0010)
        assert await wb_read(ctx, dut.bus, OFFSET["SLOT_VALID"]) == 0
        await stream_put(ctx, dut.requests, payload(again, 1))
        completion = await stream_get(ctx, dut.completions)
        assert (completion.request_id, completion.status) == (6, ErrorCode.SLOT_INVALID)

        await write_descriptor(ctx, dut.bus, 1, image)
        await set_slot_valid(ctx, dut.bus, 0b0010)
        assert await wb_read(ctx, dut.bus, OFFSET["SLOT_VALID"]) == 0b0010
        checker = LockstepChecker(Scenario(CONFIG, {1: image}, 0b0010, [fields_from_request(last, 1)]))
        await stream_put(ctx, dut.requests, payload(last, 1))
        ctx.set(dut.completions.ready, 1)
        for cycle in range(1000):
            _, _, beat_valid, beat, done, completion = await ctx.tick().sample(
                dut.beats.valid, dut.beats.payload, dut.completions.valid, dut.completions.payload)
            if beat_valid:
                checker.on_beat(cycle, beat.as_bits())
            if done:
                checker.on_completion(cycle, completion.as_bits())
                break
        assert checker.finish(cycle).beats == 256

    simulate(harness, bench)


class _FrontEndOnly(Elaboratable):
    """The descriptor file and the front end, joined as in the unit, with the job stream
    left at the front end's port (a test reads the job a request becomes)."""

    def __init__(self, config):
        from tma_unit.rtl.frontend import FrontEnd
        from tma_unit.rtl.regfile import DescriptorFile
        self.regfile, self.frontend = DescriptorFile(config), FrontEnd(config)

    def elaborate(self, platform):
        from amaranth.lib import wiring
        m = Module()
        m.submodules.regfile, m.submodules.frontend = self.regfile, self.frontend
        wiring.connect(m, self.frontend.snapshot, self.regfile.snapshot)
        return m


@pytest.mark.parametrize("box", [(256, 256, 256, 32), (16, 256, 256, 256, 256)],
                         ids=["u64-2^32-bytes", "u8-2^36-bytes"])
def test_prefetch_past_four_gibibytes(box):
    """A legal tiled prefetch of 2^32 bytes or more: the job's count of beats is exact
    (the walker stops at the box's end), and the completion's 32-bit count saturates at
    the model's COUNT_LIMIT (docs/decisions.md). Expected values from the model's check
    and the box's size; the 2^36-byte box is 2^32 beats at lanes 1."""
    dtype = DataType.UINT64 if len(box) == 4 else DataType.UINT8
    element = 8 if dtype == DataType.UINT64 else 1
    dims = box
    strides, extent = [], dims[0] * element
    for d in dims[1:]:
        strides.append(extent)
        extent *= d
    tm = TensorMap(MapKind.TILED, dtype, 0x1000, dims, tuple(strides), dims, (1,) * len(dims))
    config = UnitConfig(lanes=1, slots=2, address_width=48)
    fields = fields_from_request(Request(Operation.PREFETCH, (0,) * len(dims), request_id=7), 1)
    status, box_bytes = check(encode_descriptor(tm), fields, config)
    assert status == ErrorCode.OK and box_bytes == math.prod(dims) * element >= 1 << 32
    dut = _FrontEndOnly(config)
    job = dut.frontend.job

    async def bench(ctx):
        await write_descriptor(ctx, dut.regfile.bus, 1, encode_descriptor(tm))
        await set_slot_valid(ctx, dut.regfile.bus, 0b10)
        await stream_put(ctx, dut.frontend.requests, RequestLayout.from_bits(pack_payload(REQUEST_FIELDS, fields)))
        for _ in range(40):
            if ctx.get(job.valid):
                break
            await ctx.tick()
        assert ctx.get(job.valid)
        assert ctx.get(job.payload.code) == ErrorCode.OK
        assert ctx.get(job.payload.transaction_bytes) == reported_bytes(box_bytes) == COUNT_LIMIT
        assert ctx.get(job.payload.beats) == box_bytes // 16

    simulate(dut, bench)
