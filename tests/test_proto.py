"""The prototyping top, UART included, in simulation against the golden model: the host
driver (tma_unit.proto) talks to the simulated board byte by byte over its serial line."""

from collections import deque

import pytest

from amaranth.sim import Simulator

from tma_unit.model import DataType, MapKind, Operation, Request, Swizzle, TensorMap, encode_descriptor
from tma_unit.model.config import UnitConfig
from tma_unit.model.unit import fields_from_request
from tma_unit.proto import LinkError, PrototypeLink, expected_counters, register_address
from tma_unit.rtl.proto import PrototypeTop
from tma_unit.rtl.regfile import descriptor_writes

DIVISOR = 4         # clock cycles per bit: the fastest the UART allows, to keep the test short
MAX_CYCLES_PER_READ = 200_000


class SimulatedBoard:
    """A serial port whose other end is the simulated top: ``write`` queues bytes that a
    testbench shifts onto its rx line; ``read`` runs the simulation until enough bytes
    have come back on its tx line. One thread: the driver's calls step the simulator."""

    def __init__(self, config):
        self.top = PrototypeTop(config, divisor=DIVISOR)
        self.outgoing, self.incoming = deque(), deque()
        self.sim = Simulator(self.top)
        self.sim.add_clock(1e-6)
        self.sim.add_testbench(self._send, background=True)
        self.sim.add_testbench(self._receive, background=True)

    # Plain ticks only: these testbenches are left suspended when the test ends, and a
    # suspended ``tick().repeat()`` or ``.until()`` complains when it is collected.
    async def _ticks(self, ctx, count):
        for _ in range(count):
            await ctx.tick()

    async def _send(self, ctx):
        top = self.top
        while True:
            if not self.outgoing:
                await ctx.tick()
                continue
            byte = self.outgoing.popleft()
            for level in [0] + [(byte >> i) & 1 for i in range(8)] + [1]:
                ctx.set(top.rx, level)
                await self._ticks(ctx, DIVISOR)

    async def _receive(self, ctx):
        top = self.top
        while True:
            while ctx.get(top.tx):                           # wait for a start bit
                await ctx.tick()
            await self._ticks(ctx, DIVISOR // 2)
            byte = 0
            for i in range(8):
                await self._ticks(ctx, DIVISOR)
                byte |= ctx.get(top.tx) << i
            await self._ticks(ctx, DIVISOR)
            assert ctx.get(top.tx) == 1, "the board sent a byte without its stop bit"
            self.incoming.append(byte)

    def write(self, data):
        self.outgoing.extend(data)

    def read(self, size):
        for _ in range(MAX_CYCLES_PER_READ):
            if len(self.incoming) >= size:
                break
            self.sim.advance()
        return bytes(self.incoming.popleft() for _ in range(min(size, len(self.incoming))))


@pytest.mark.slow          # the demo suite through the UART bridge on pysim: about 30 s
def test_prototype_top_against_the_model():
    config = UnitConfig(lanes=2, slots=2)
    link = PrototypeLink(SimulatedBoard(config))
    tile = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x1000, (100, 40), (256,), (32, 8), (1, 1),
                     swizzle=Swizzle.B64)
    image = encode_descriptor(tile)
    link.write_descriptor(0, image)
    link.set_slot_valid(0b1)
    address, word = descriptor_writes(0, image)[1]
    assert link.read(address) == word                                       # read back over the UART
    link.clear()
    copies = [
        (image, fields_from_request(Request(Operation.LOAD, (80, 36), smem_address=0x800, request_id=7), 0)),
        # slot 1 was never written: the unit rejects it with SLOT_INVALID and keeps going
        (None, fields_from_request(Request(Operation.LOAD, (0, 0), request_id=8), 1)),
        (image, fields_from_request(Request(Operation.STORE, (8, 4), smem_address=0x400, request_id=9), 0)),
    ]
    for _, fields in copies:
        link.push(fields)
    got = link.counters()
    expected = expected_counters(config, copies)
    assert got == expected
    assert got.beats == 2 * (8 * 4 // 2) and got.last_status == 0 and got.last_request_id == 9

    # a write to a read-only monitor answers err, and the link goes on working
    with pytest.raises(LinkError, match="err"):
        link.write(register_address("BEATS"), 0)
    link.clear()
    assert link.counters().beats == 0


def _copies_on_slot_0(config, tile, requests):
    """A simulated top with ``tile`` in slot 0, cleared, after ``requests`` pushed:
    its link, what its monitors read and what the golden model says they should."""
    link = PrototypeLink(SimulatedBoard(config))
    image = encode_descriptor(tile)
    link.write_descriptor(0, image)
    link.set_slot_valid(0b1)
    link.clear()
    copies = [(image, fields_from_request(request, 0)) for request in requests]
    for _, fields in copies:
        link.push(fields)
    return link, link.counters(), expected_counters(config, copies)


@pytest.mark.slow          # a lanes-4 top on pysim: about a minute
def test_checksum_of_beats_with_empty_lanes():
    """Rows of 3 chunks at lanes 4: every beat leaves its last lane empty, so the
    checksum's rotations count the valid lanes, not the lanes (the top makes a beat's
    part of the checksum in stages, rtl/proto.py)."""
    tile = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x2000, (64, 16), (256,), (24, 4), (1, 1))
    _, got, expected = _copies_on_slot_0(UnitConfig(lanes=4, slots=1), tile, [
        Request(Operation.LOAD, (8, 2), smem_address=0x200, request_id=3),
        Request(Operation.LOAD, (48, 14), request_id=4)])
    assert got == expected
    assert got.beats == 2 * 4                   # a beat a row: 3 chunks of 16 bytes each


@pytest.mark.slow          # a lanes-2 top with a request former on pysim: about a minute
def test_request_checksum_with_a_former():
    """A unit with a request former: REQUEST_CHECKSUM folds in every L2 request of the
    beats, in their slots' order, as the golden model's merge places them. A board top
    that read only the lanes would let synthesis trim the former's request logic."""
    # 48-byte rows at a 208-byte pitch (3 chunks a row): a lane's chunk may start in one
    # 128-byte granule and end in the next, so both of its request slots are used
    tile = TensorMap(MapKind.TILED, DataType.UINT8, 0x1030, (200, 10), (208,), (48, 3), (1, 1))
    link, got, expected = _copies_on_slot_0(UnitConfig(lanes=2, slots=1, request_former=128), tile, [
        Request(Operation.LOAD, (8, 1), smem_address=0x400, request_id=5),
        # partly out of bounds: no request for the bytes past the tensor
        Request(Operation.LOAD, (176, 8), request_id=6)])
    assert got == expected
    assert expected.request_checksum != 0 and got.beats == 2 * 3 * 2     # 3 rows of 2 beats (48 bytes, 32 a beat)
    link.clear()
    assert link.counters().request_checksum == 0
