"""Host side of the prototyping top (rtl/proto.py): the UART protocol of rtl/bridge.py, a
driver over any byte port, and the beat checksum the golden model predicts.

On a board::

    import serial                                    # pyserial
    link = PrototypeLink(serial.Serial("/dev/ttyUSB0", 115200, timeout=1))
    link.write_descriptor(0, encode_descriptor(tensor_map))
    link.set_slot_valid(0b1)
    link.clear()
    link.push(fields_from_request(request, slot=0))
    print(link.counters(), expected_counters(config, [(tensor_map, request)]))

The same command bytes drive the top in simulation (tests/test_proto.py).
"""

import struct
from dataclasses import dataclass

from .model.config import UnitConfig
from .model.layout import REQUEST_FIELDS, pack_payload
from .rtl.bridge import COMMAND_READ, COMMAND_WRITE, REPLY_ACK, REPLY_ERR
from .rtl.layouts import REQUEST_SLOTS_PER_LANE
from .rtl.proto import PROTO_BASE, PROTO_REGISTERS, REQUEST_WORDS, CHECKSUM_ROTATE, lane_word, request_word
from .rtl.regfile import SLOT_VALID_ADDRESS, descriptor_writes

__all__ = ["PrototypeLink", "LinkError", "Counters", "write_command", "read_command", "expected_counters",
           "register_address"]


class LinkError(Exception):
    """The board answered ``err`` or something the protocol does not allow."""


def write_command(address: int, value: int) -> bytes:
    return struct.pack("<BII", COMMAND_WRITE, address, value & 0xFFFF_FFFF)


def read_command(address: int) -> bytes:
    return struct.pack("<BI", COMMAND_READ, address)


def register_address(name: str) -> int:
    return PROTO_BASE + PROTO_REGISTERS[name][0]


@dataclass(frozen=True)
class Counters:
    beats: int
    checksum: int
    completions: int
    last_request_id: int
    last_status: int
    bytes: int
    request_checksum: int   # 0 without a request former


class PrototypeLink:
    """A board (or a simulation) behind ``port``: anything with ``write(bytes)`` and
    ``read(n) -> bytes`` (a ``serial.Serial``)."""

    def __init__(self, port):
        self.port = port

    def _reply(self, size: int) -> bytes:
        status = self.port.read(1)
        if status == bytes([REPLY_ERR]):
            raise LinkError("the board answered err (unmapped or read-only address, or a refused access)")
        if status != bytes([REPLY_ACK]):
            raise LinkError(f"unexpected reply {status!r}: the link is out of step")
        data = self.port.read(size)
        if len(data) != size:
            raise LinkError(f"reply cut short: {len(data)} of {size} bytes")
        return data

    def write(self, address: int, value: int) -> None:
        self.port.write(write_command(address, value))
        self._reply(0)

    def read(self, address: int) -> int:
        self.port.write(read_command(address))
        return int.from_bytes(self._reply(4), "little")

    def write_descriptor(self, slot: int, image: bytes) -> None:
        for address, value in descriptor_writes(slot, image):
            self.write(address, value)

    def set_slot_valid(self, mask: int) -> None:
        self.write(SLOT_VALID_ADDRESS, mask)

    def push(self, fields: dict) -> None:
        """Stage a request (hardware request fields, model/unit.py ``fields_from_request``)
        and send it; returns once the unit has taken it."""
        payload = pack_payload(REQUEST_FIELDS, fields)
        for word in range(REQUEST_WORDS):
            self.write(register_address("REQUEST") + 4 * word, (payload >> (32 * word)) & 0xFFFF_FFFF)
        self.write(register_address("PUSH"), 1)

    def clear(self) -> None:
        self.write(register_address("CLEAR"), 1)

    def counters(self) -> Counters:
        last = self.read(register_address("LAST_COMPLETION"))
        return Counters(self.read(register_address("BEATS")), self.read(register_address("CHECKSUM")),
                        self.read(register_address("COMPLETIONS")), last & 0xFFFF, (last >> 16) & 0xFF,
                        self.read(register_address("BYTES")), self.read(register_address("REQUEST_CHECKSUM")))


def _rotate(value: int) -> int:
    return ((value << CHECKSUM_ROTATE) | (value >> (32 - CHECKSUM_ROTATE))) & 0xFFFF_FFFF


def expected_counters(config: UnitConfig, copies) -> Counters:
    """What the monitors read after ``copies``, a list of (descriptor image, request
    fields), all sent after a CLEAR: from the golden model (model/unit.py ``complete``;
    with a request former, its L2 requests from model/memory.py's ``merge``, in the
    beat's request slots, ``sim.cosim.request_slots``)."""
    from .model.unit import complete
    from .sim.cosim import request_slots
    beats = checksum = requests = total = 0
    request_id = status = 0
    for image, fields in copies:
        done = complete(image, fields, config)
        chunks = done.transactions
        count = 0 if chunks is None else len(chunks.global_address)
        for i in range(count):
            word = lane_word(int(chunks.global_address[i]) % (1 << config.address_width), int(chunks.smem_address[i]),
                             int(chunks.mask[i]), int(chunks.units[i]))
            checksum = _rotate(checksum) ^ word
        if count and config.request_former:
            slots = request_slots(chunks, fields["operation"], config.lanes, config.request_former,
                                  config.address_width)
            for beat in range(chunks.beats(config.lanes)):
                for s in range(REQUEST_SLOTS_PER_LANE * config.lanes):
                    if slots[f"requests[{s}].valid"][beat]:
                        requests = _rotate(requests) ^ request_word(
                            *(int(slots[f"requests[{s}].{name}"][beat]) for name in ("address", "sectors", "lanes")))
        beats += 0 if chunks is None else chunks.beats(config.lanes)
        total += done.transaction_bytes
        request_id, status = fields["request_id"], done.status
    return Counters(beats, checksum, len(copies), request_id, status, total & 0xFFFF_FFFF, requests)
