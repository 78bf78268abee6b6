"""Helpers for async Amaranth testbenches: Wishbone accesses and stream transfers.

Every helper takes the testbench context ``ctx`` first and returns after the clock edge
that completed its transfer, so calls compose in order.
"""

__all__ = ["BusError", "wb_write", "wb_read", "stream_put", "stream_get", "write_descriptor",
           "set_slot_valid"]

from ..rtl.regfile import SLOT_VALID_ADDRESS, descriptor_writes


class BusError(Exception):
    """The target answered a Wishbone access with ``err``."""


#: Cycles an access may wait for its answer. The longest is a SLOT_VALID write on a unit
#: that checks descriptors at commit: it is answered once the slots it makes valid are
#: checked (model/timing.py ``commit_cycles``), 32 slots at most.
BUS_WAIT = 8192


async def _wb_access(ctx, bus, byte_address, we, data=0, sel=0xF, timeout=BUS_WAIT):
    ctx.set(bus.cyc, 1)
    ctx.set(bus.stb, 1)
    ctx.set(bus.we, we)
    ctx.set(bus.adr, byte_address >> 2)
    ctx.set(bus.dat_w, data)
    ctx.set(bus.sel, sel)
    for _ in range(timeout):
        await ctx.tick()
        ack, err, value = ctx.get(bus.ack), ctx.get(bus.err), ctx.get(bus.dat_r)
        if ack or err:
            break
    else:
        raise TimeoutError(f"no Wishbone response at {byte_address:#x}")
    ctx.set(bus.cyc, 0)
    ctx.set(bus.stb, 0)
    ctx.set(bus.we, 0)
    if err:
        raise BusError(f"Wishbone err at {byte_address:#x}")
    return value


async def wb_write(ctx, bus, byte_address, data, sel=0xF):
    await _wb_access(ctx, bus, byte_address, 1, data, sel)


async def wb_read(ctx, bus, byte_address):
    return await _wb_access(ctx, bus, byte_address, 0)


async def write_descriptor(ctx, bus, slot, image: bytes):
    """Write a 128-byte image into ``slot`` word by word."""
    for address, value in descriptor_writes(slot, image):
        await wb_write(ctx, bus, address, value)


async def set_slot_valid(ctx, bus, mask):
    await wb_write(ctx, bus, SLOT_VALID_ADDRESS, mask)


async def stream_put(ctx, stream, payload, timeout=100000):
    """Offer ``payload`` on an input stream until the unit takes it."""
    ctx.set(stream.payload, payload)
    ctx.set(stream.valid, 1)
    for _ in range(timeout):
        _, _, ready = await ctx.tick().sample(stream.ready)    # as it was at the edge
        if ready:
            break
    else:
        raise TimeoutError("stream_put: the stream never became ready")
    ctx.set(stream.valid, 0)


async def stream_get(ctx, stream, timeout=100000):
    """Take one transfer from an output stream."""
    ctx.set(stream.ready, 1)
    for _ in range(timeout):
        _, _, valid, payload = await ctx.tick().sample(stream.valid, stream.payload)
        if valid:
            break
    else:
        raise TimeoutError("stream_get: the stream never became valid")
    ctx.set(stream.ready, 0)
    return payload
