"""The beat queue (rtl/beat_queue.py): first in, first out, the head on ``r_data`` in the
cycle after its write, and the head's flags in registers equal to the head's first bits,
whatever the order of writes and reads, at depths a power of two and not."""

import collections
import random

import pytest

from tma_unit.rtl.beat_queue import BeatQueue

from simulator import simulate

WIDTH, FLAGS = 11, 2
CYCLES = 400


@pytest.mark.parametrize("depth", [1, 3, 9, 16])
def test_the_queue_keeps_order_and_its_head_flags_are_the_heads(depth):
    """A writer that never writes a full queue (as the credit keeps the datapath's) and a
    reader that takes the head at random: a deque in the test is the reference."""
    dut = BeatQueue(WIDTH, depth, FLAGS)
    rng = random.Random(depth)
    expected = collections.deque()
    read_count = [0]

    async def bench(ctx):
        for _ in range(CYCLES):
            assert ctx.get(dut.level) == len(expected)
            assert ctx.get(dut.r_rdy) == bool(expected)
            assert ctx.get(dut.w_rdy) == (len(expected) < depth)
            if expected:
                assert ctx.get(dut.r_data) == expected[0]
                assert ctx.get(dut.r_flags) == expected[0] & ((1 << FLAGS) - 1)
            read = bool(expected) and rng.random() < 0.5
            # a write may come when the queue is full only if the head leaves that cycle
            write = (len(expected) < depth or read) and rng.random() < 0.6
            value = rng.getrandbits(WIDTH)
            ctx.set(dut.r_en, read)
            ctx.set(dut.w_en, write)
            ctx.set(dut.w_data, value)
            await ctx.tick()
            if read:
                expected.popleft()
                read_count[0] += 1
            if write:
                expected.append(value)

    simulate(dut, bench)
    assert read_count[0] > CYCLES // 5, "the test read too little to exercise the queue"

