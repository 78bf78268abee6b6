"""The descriptor register file behind Wishbone (pysim, async testbenches)."""

import pytest
from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from tma_unit.model import encode_descriptor, decode_descriptor, TensorMap, MapKind, DataType, Swizzle, ErrorCode
from tma_unit.model.config import UnitConfig
from tma_unit.model.layout import flat_fields
from tma_unit.rtl.layouts import EARLY_BYTES, EARLY_FIELDS, EarlyLayout
from tma_unit.rtl.regfile import DescriptorFile, REGISTERS, ID_VALUE, SLOT_BASE, SLOT_STRIDE, descriptor_writes
from tma_unit.sim.testbench import BusError, wb_read, wb_write, write_descriptor, set_slot_valid

CONFIG = UnitConfig(slots=4)


def run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def test_every_slot_word_with_byte_enables():
    """Each word of each slot: a full write reads back; then a write with one byte enable
    changes only that byte. The snapshot's row holds the same words: the bus reads a
    memory of words, the snapshot one of rows, and both take every write."""
    dut = DescriptorFile(CONFIG)

    def expected(slot, word):
        return (slot << 24) | (word << 16) | 0xA5C3 | (0xFF << (8 * (word % 4)))

    async def bench(ctx):
        for slot in range(CONFIG.slots):
            for word in range(32):
                address = SLOT_BASE + slot * SLOT_STRIDE + 4 * word
                value = (slot << 24) | (word << 16) | 0xA5C3
                await wb_write(ctx, dut.bus, address, value)
                assert await wb_read(ctx, dut.bus, address) == value
                await wb_write(ctx, dut.bus, address, 0xFFFFFFFF, sel=1 << (word % 4))
                assert await wb_read(ctx, dut.bus, address) == expected(slot, word), (slot, word)
        for slot in range(CONFIG.slots):
            ctx.set(dut.snapshot.slot, slot)
            ctx.set(dut.snapshot.en, 1)
            await ctx.tick()
            ctx.set(dut.snapshot.en, 0)
            row = ctx.get(dut.snapshot.data.as_value())
            assert [(row >> (32 * word)) & 0xFFFFFFFF for word in range(32)] == [expected(slot, word)
                                                                                 for word in range(32)], slot
            # the copy of the bytes the first decode reads took the same writes
            image = sum(expected(slot, word) << (32 * word) for word in range(32))
            early = ctx.get(dut.snapshot.early.as_value())
            assert early == (image >> (8 * EARLY_BYTES.start)) & ((1 << EarlyLayout.size) - 1), slot
    run(dut, bench)


def test_registers_and_unmapped_addresses():
    dut = DescriptorFile(CONFIG)

    async def bench(ctx):
        assert await wb_read(ctx, dut.bus, 0x000) == ID_VALUE
        config = await wb_read(ctx, dut.bus, 0x004)
        assert config & 0xF == CONFIG.lanes and (config >> 4) & 0xFF == CONFIG.slots - 1
        assert (config >> 12) & 0x7F == CONFIG.address_width
        assert await wb_read(ctx, dut.bus, 0x008) == CONFIG.smem_bytes
        for register in REGISTERS:                      # every register reads
            await wb_read(ctx, dut.bus, register.offset)
        for register in REGISTERS:                      # read-only ones refuse writes
            if register.access == "ro":
                with pytest.raises(BusError):
                    await wb_write(ctx, dut.bus, register.offset, 1)
        for address in (0x01C, 0x100, 0x3FC, SLOT_BASE + CONFIG.slots * SLOT_STRIDE):
            with pytest.raises(BusError):
                await wb_read(ctx, dut.bus, address)
            with pytest.raises(BusError):
                await wb_write(ctx, dut.bus, address, 0)
        # the bus still works after the errors
        assert await wb_read(ctx, dut.bus, 0x000) == ID_VALUE
    run(dut, bench)


def test_slot_valid_and_write_clearing_it():
    dut = DescriptorFile(CONFIG)

    async def bench(ctx):
        assert await wb_read(ctx, dut.bus, 0x018) == 0
        for slot in (0, 1, 3):                  # a valid bit takes only for a slot written
            await wb_write(ctx, dut.bus, SLOT_BASE + slot * SLOT_STRIDE, slot)
        await set_slot_valid(ctx, dut.bus, 0b1011)
        assert await wb_read(ctx, dut.bus, 0x018) == 0b1011
        await wb_write(ctx, dut.bus, SLOT_BASE + 1 * SLOT_STRIDE + 8, 5)     # a word of slot 1
        assert await wb_read(ctx, dut.bus, 0x018) == 0b1001
        await wb_write(ctx, dut.bus, 0x018, 0xFF, sel=0b0010)               # byte 1 only: no change
        assert await wb_read(ctx, dut.bus, 0x018) == 0b1001
    run(dut, bench)


def test_slot_valid_only_for_slots_written_since_reset():
    """A SLOT_VALID bit set for a slot no bus write has reached stays 0 (it reads back 0,
    and a snapshot of the slot is not valid), so a request on it completes SLOT_INVALID
    as docs/architecture.md says, not with whatever the zeroed memory decodes to. Any
    word of the slot, with any byte enables, counts as a write."""
    dut = DescriptorFile(CONFIG)

    async def snapshot_valid(ctx, slot):
        ctx.set(dut.snapshot.slot, slot)
        ctx.set(dut.snapshot.en, 1)
        await ctx.tick()
        ctx.set(dut.snapshot.en, 0)
        return ctx.get(dut.snapshot.valid)

    async def bench(ctx):
        await set_slot_valid(ctx, dut.bus, 0b1111)
        assert await wb_read(ctx, dut.bus, 0x018) == 0
        assert await snapshot_valid(ctx, 0) == 0
        await wb_write(ctx, dut.bus, SLOT_BASE + 2 * SLOT_STRIDE + 4 * 31, 0, sel=0b0100)  # slot 2, last word
        await set_slot_valid(ctx, dut.bus, 0b1111)
        assert await wb_read(ctx, dut.bus, 0x018) == 0b0100
        assert await snapshot_valid(ctx, 2) == 1
        assert await snapshot_valid(ctx, 0) == 0
        await wb_write(ctx, dut.bus, SLOT_BASE + 0 * SLOT_STRIDE + 4 * 7, 0x1234)   # slot 0, word 7
        await set_slot_valid(ctx, dut.bus, 0b1111)
        assert await wb_read(ctx, dut.bus, 0x018) == 0b0101
    run(dut, bench)


def test_snapshot_reads_the_model_fields():
    """A descriptor encoded by the model, written over the bus, reads back in the RTL's
    view field by field as the model's decoder sees it."""
    dut = DescriptorFile(CONFIG)
    tm = TensorMap(MapKind.TILED, DataType.BFLOAT16, 0x7F123450, (1000, 77, 5), (2048, 2048 * 77),
                   (64, 8, 2), (1, 2, 1), swizzle=Swizzle.B128_ATOM_32B, l2_promotion=2)
    image = encode_descriptor(tm)
    bits = int.from_bytes(image, "little")

    async def bench(ctx):
        await write_descriptor(ctx, dut.bus, 2, image)
        await set_slot_valid(ctx, dut.bus, 0b0100)
        ctx.set(dut.snapshot.slot, 2)
        ctx.set(dut.snapshot.en, 1)
        await ctx.tick()
        ctx.set(dut.snapshot.en, 0)
        assert ctx.get(dut.snapshot.valid) == 1
        view = ctx.get(dut.snapshot.data)
        for name, offset, width, field in flat_fields():
            base = name.split("[")[0]
            value = getattr(view, base)
            if "[" in name:
                value = value[int(name.split("[")[1][:-1])]
            expected = (bits >> offset) & ((1 << width) - 1)
            if field.signed and expected >> (width - 1):
                expected -= 1 << width
            assert int(value) == expected, name
        # the early fields' copy holds the same fields
        early = ctx.get(dut.snapshot.early)
        for name in EARLY_FIELDS:
            assert int(getattr(early, name)) == int(getattr(view, name)), name
        # and the model's decoder of the same image gives the map back
        assert view.global_address == tm.global_address
        assert view.box_dim[2] + 1 == tm.box_dims[2]
        assert decode_descriptor(image) == tm
    run(dut, bench)


def test_reset_clears_the_status_and_the_written_bits_and_redoes_a_bus_access():
    """Reset (docs/registers.md, "Reset"): STATUS, ERROR_ID, COMPLETED and SLOT_VALID read
    0; the slot memory keeps its contents, but a slot must be written again before its
    valid bit takes; a bus read that reset interrupts is done again from its strobe and
    answered once, with the right word. The reset is the ``sync`` domain's own, driven
    through a domain the top declares (Amaranth 0.5's simulator cannot assign the implicit
    domain's ``ResetSignal``)."""
    dut = DescriptorFile(CONFIG)
    top = Module()
    top.domains.sync = domain = ClockDomain("sync")
    top.submodules.dut = dut
    image = bytes(range(SLOT_STRIDE))
    address, word = descriptor_writes(1, image)[3]
    offset = {register.name: register.offset for register in REGISTERS}

    async def bench(ctx):
        bus = dut.bus
        await write_descriptor(ctx, bus, 1, image)
        await set_slot_valid(ctx, bus, 0b0010)
        ctx.set(dut.report.taken, 1)        # a rejection's completion taken
        ctx.set(dut.report.code, ErrorCode.SLOT_INVALID)
        ctx.set(dut.report.request_id, 0x77)
        await ctx.tick()
        ctx.set(dut.report.taken, 0)
        assert await wb_read(ctx, bus, offset["COMPLETED"]) == 1
        assert await wb_read(ctx, bus, offset["ERROR_ID"]) == 0x77
        # a slot read (answered four cycles after its strobe), reset in its third cycle
        ctx.set(bus.cyc, 1)
        ctx.set(bus.stb, 1)
        ctx.set(bus.adr, address >> 2)
        answers = []
        for cycle in range(16):
            ctx.set(domain.rst, cycle == 2)
            await ctx.tick()
            if ctx.get(bus.ack) or ctx.get(bus.err):
                answers.append((cycle, ctx.get(bus.ack), ctx.get(bus.dat_r)))
                ctx.set(bus.cyc, 0)
                ctx.set(bus.stb, 0)
        assert [(ack, data) for _, ack, data in answers] == [(1, word)] and answers[0][0] > 4, answers
        for name in ("STATUS", "ERROR_ID", "COMPLETED", "SLOT_VALID"):
            assert await wb_read(ctx, bus, offset[name]) == 0, name
        for address_, word_ in descriptor_writes(1, image):         # the memory kept the image
            assert await wb_read(ctx, bus, address_) == word_
        await set_slot_valid(ctx, bus, 0b0010)                      # not written since reset
        assert await wb_read(ctx, bus, offset["SLOT_VALID"]) == 0
        await wb_write(ctx, bus, address, word)
        await set_slot_valid(ctx, bus, 0b0010)
        assert await wb_read(ctx, bus, offset["SLOT_VALID"]) == 0b0010
    run(top, bench)
