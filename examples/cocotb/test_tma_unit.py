"""A cocotb testbench of the exported unit, written from the exported files alone: the
Verilog and its SystemVerilog package (tma_unit_pkg.sv), whose constants give every
payload field's place, the register map and the configuration. It imports nothing of
tma-unit: it resets the unit, reads its ID and CONFIG registers, writes a descriptor into
a slot over Wishbone, sets the slot's SLOT_VALID bit, sends one request and checks every
beat and the completion against the golden model's answer, read from a vectors file
(``tma-unit layout --vectors``). ``run.py`` beside it builds and runs it
(docs/export.md, "Examples").

Environment: ``TMA_UNIT_PKG``, the package's path; ``TMA_UNIT_VECTORS``, the vectors'.
"""

import os
import re

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly


def read_package(path: str) -> dict:
    """The package's numeric constants (``localparam int NAME = VALUE;``) by name."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    return {name: int(value) for name, value in re.findall(r"localparam int (\w+) = (\d+);", text)}


def read_vectors(path: str) -> dict:
    """The model's answer: the descriptor's writes, the request's, beats' and completion's
    fields, the chunks in order."""
    vectors = {"word": [], "request": {}, "beat": {}, "row": {}, "completion": {}, "chunk": []}
    with open(path, encoding="utf-8") as file:
        lines = file.read().splitlines()
    for line in lines:
        items = line.split()
        if not items or items[0].startswith("#"):
            continue
        kind, rest = items[0], items[1:]
        if kind == "word":
            vectors["word"].append((int(rest[1], 0), int(rest[2], 0)))
        elif kind == "chunk":
            vectors["chunk"].append({name: int(value, 0) for name, value in zip(rest[::2], rest[1::2])})
        else:
            vectors[kind][rest[0]] = int(rest[1], 0)
    return vectors


class Fields:
    """Payload fields where the package puts them: ``P_F_LSB + entry * P_F_STRIDE``,
    ``P_F_WIDTH`` bits (``F``: the field's path, ``.`` as ``_``, in capitals)."""

    def __init__(self, constants: dict, payload: str):
        self.constants, self.payload = constants, payload

    def place(self, name: str, entry: int = 0) -> tuple[int, int]:
        stem = f"{self.payload}_{name.replace('.', '_').upper()}"
        if entry >= self.constants[f"{stem}_COUNT"]:
            raise KeyError(f"{name}[{entry}] is past the field's entries")
        return self.constants[f"{stem}_LSB"] + entry * self.constants[f"{stem}_STRIDE"], self.constants[f"{stem}_WIDTH"]

    def get(self, word: int, name: str, entry: int = 0) -> int:
        lsb, width = self.place(name, entry)
        return (word >> lsb) & ((1 << width) - 1)

    def put(self, word: int, name: str, value: int, entry: int = 0) -> int:
        lsb, width = self.place(name, entry)
        mask = (1 << width) - 1
        return word & ~(mask << lsb) | (value & mask) << lsb


def high(port) -> bool:
    """Whether a one-bit port is 1 (not 0, nor x before the first clock edge of reset)."""
    return str(port.value) == "1"


class Bench:
    """Drives the unit from the falling edge; :meth:`cycle` records what the streams
    transfer at the next rising edge (the beat and completion streams are always ready)."""

    def __init__(self, dut):
        self.dut = dut
        self.beats, self.completions = [], []

    async def cycle(self) -> dict:
        dut = self.dut
        await ReadOnly()
        if high(dut.beats__valid):
            self.beats.append(int(dut.beats__payload.value))
        if high(dut.completions__valid):
            self.completions.append(int(dut.completions__payload.value))
        seen = {"ack": high(dut.bus__ack), "err": high(dut.bus__err), "requests_ready": high(dut.requests__ready)}
        seen["dat_r"] = int(dut.bus__dat_r.value) if seen["ack"] else None
        await FallingEdge(dut.clk)
        return seen

    async def bus(self, write: bool, address: int, data: int = 0) -> int:
        """A Wishbone classic access: strobe until ack or err."""
        dut = self.dut
        dut.bus__cyc.value = dut.bus__stb.value = 1
        dut.bus__we.value = int(write)
        dut.bus__adr.value = address // 4
        dut.bus__dat_w.value = data
        dut.bus__sel.value = 0xF
        for _ in range(64):
            seen = await self.cycle()
            if seen["ack"] or seen["err"]:
                dut.bus__cyc.value = dut.bus__stb.value = 0
                assert not seen["err"], f"the bus answered err at {address:#x}"
                return seen["dat_r"]
        raise AssertionError(f"no bus answer at {address:#x}")


@cocotb.test()
async def copy_matches_the_model(dut):
    constants = read_package(os.environ["TMA_UNIT_PKG"])
    vectors = read_vectors(os.environ["TMA_UNIT_VECTORS"])
    request, beat, completion = (Fields(constants, payload) for payload in ("REQUEST", "BEAT", "COMPLETION"))
    bench = Bench(dut)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    await FallingEdge(dut.clk)
    dut.rst.value = 1
    for port in ("bus__cyc", "bus__stb", "bus__we", "requests__valid"):
        getattr(dut, port).value = 0
    dut.beats__ready.value = dut.completions__ready.value = 1
    for _ in range(4):
        await bench.cycle()
    dut.rst.value = 0

    assert await bench.bus(False, constants["REG_ID"]) == constants["ID_VALUE"]
    config = await bench.bus(False, constants["REG_CONFIG"])
    lanes = constants["CONFIG_LANES"]
    assert config >> constants["REG_CONFIG_LANES_LSB"] & ((1 << constants["REG_CONFIG_LANES_WIDTH"]) - 1) == lanes

    for address, data in vectors["word"]:
        await bench.bus(True, address, data)
    await bench.bus(True, constants["REG_SLOT_VALID"], 1 << vectors["request"]["slot"])

    payload = 0
    for name, value in vectors["request"].items():
        field, _, entry = name.partition("[")
        payload = request.put(payload, field, value, int(entry.rstrip("]") or 0))
    dut.requests__payload.value = payload
    dut.requests__valid.value = 1
    for _ in range(1000):
        if (await bench.cycle())["requests_ready"]:
            break
    else:
        raise AssertionError("the request was never taken")
    dut.requests__valid.value = 0
    for _ in range(1_000_000):
        if bench.completions:
            break
        await bench.cycle()
    for _ in range(8):          # nothing more may come
        await bench.cycle()

    # a beat holds up to `lanes` chunks of one row: a row takes ceil(row_chunks / lanes)
    # beats, lane j of its beat g holding its chunk g * lanes + j if it has one
    chunks, row_chunks = vectors["chunk"], vectors["row"]["chunks"]
    per_row = -(-row_chunks // lanes)
    expected_beats = len(chunks) // row_chunks * per_row
    assert len(bench.beats) == expected_beats
    for index, word in enumerate(bench.beats):
        for name, value in vectors["beat"].items():
            assert beat.get(word, name) == value & ((1 << beat.place(name)[1]) - 1), f"beat {index} {name}"
        assert beat.get(word, "last") == (index == expected_beats - 1), f"beat {index} last"
        row, group = divmod(index, per_row)
        for lane in range(lanes):
            inside = group * lanes + lane < row_chunks
            chunk = row * row_chunks + group * lanes + lane
            assert beat.get(word, "lanes.valid", lane) == inside, f"beat {index} lane {lane} valid"
            if inside:
                for name, value in chunks[chunk].items():
                    got = beat.get(word, f"lanes.{name}", lane)
                    assert got == value, f"chunk {chunk} {name}: expected {value:#x}, got {got:#x}"
    assert len(bench.completions) == 1
    for name, value in vectors["completion"].items():
        assert completion.get(bench.completions[0], name) == value, f"completion {name}"
    assert await bench.bus(False, constants["REG_COMPLETED"]) == 1
    status = await bench.bus(False, constants["REG_STATUS"])
    assert status >> constants["REG_STATUS_ERROR_LSB"] & 1 == 0
    dut._log.info("%d chunks in %d beats and the completion (request %d, %d bytes) match the model", len(chunks),
                  len(bench.beats), completion.get(bench.completions[0], "request_id"),
                  completion.get(bench.completions[0], "transaction_bytes"))
