"""Docs generated from the project's tables, so they cannot drift from the code:
``docs/descriptor.md`` (the 128-byte layout), ``docs/errors.md`` (the error codes),
``docs/registers.md`` (the register map and reset) and ``docs/bank-conflicts.md`` (bank
conflicts per swizzle mode), the four of :data:`GENERATED`. ``tma-unit docs`` rewrites
them; a test checks the committed files equal the output.
"""

from pathlib import Path

from .model.errors import ErrorCode, RULES
from .model.layout import DESCRIPTOR_FIELDS, DESCRIPTOR_BYTES, flat_fields

__all__ = ["GENERATED", "write_docs"]

_ENCODINGS = {"raw": "as is", "minus1": "value - 1", "units16": "bytes / 16",
              "signed": "two's complement", "enum": "enumeration number"}


def descriptor_md() -> str:
    lines = [
        "# The 128-byte descriptor (tensor-map) image",
        "",
        "Generated from `DESCRIPTOR_FIELDS` in `model/layout.py` by `tma-unit docs`; do not edit.",
        "",
        "PTX calls the tensor map a 128-byte opaque object and publishes no bit layout, so this",
        "project defines its own with the field encodings of PTX `tensormap.replace`",
        "(docs/spec.md, \"Encodings\"). The golden model's encoder and decoder and the RTL register",
        "file are all derived from this one table. Bit *k* is bit *k* % 8 of byte *k* / 8",
        "(little-endian); 32-bit bus word *w* holds bits 32*w .. 32*w + 31.",
        "",
        "| field | bits | width | entries | stored as | meaning |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for f in DESCRIPTOR_FIELDS:
        last = f.offset + f.width * f.count - 1
        lines.append(f"| `{f.name}` | {f.offset}..{last} | {f.width} | {f.count} | "
                     f"{_ENCODINGS[f.encoding]} | {f.doc} |")
    used = sum(width for _, _, width, _ in flat_fields())
    lines += ["", f"{used} of the {8 * DESCRIPTOR_BYTES} bits are used; the rest read as zero and are ignored.",
              "Array entry *i* of a field sits at `offset + i * width`. Entries past the",
              "tensor's rank (or unused by its kind) are stored as zero.", ""]
    return "\n".join(lines)


def errors_md() -> str:
    lines = [
        "# Error codes",
        "",
        "Generated from `ErrorCode` and `RULES` in `model/errors.py` by `tma-unit docs`; do not edit.",
        "",
        "The golden model raises `TmaError` with one of these codes and a message",
        "`NAME: field = value what-is-wrong`; the RTL reports the same number on its completion",
        "stream and in its status register. Codes never change meaning.",
        "",
        "| code | name | rule |",
        "| --- | --- | --- |",
    ]
    for code in ErrorCode:
        lines.append(f"| {code.value} | `{code.name}` | {RULES[code]} |")
    lines.append("")
    return "\n".join(lines)


def registers_md() -> str:
    from .rtl.regfile import REGISTERS, RESET, SLOT_BASE, SLOT_STRIDE
    from .model.layout import REQUEST_FIELDS, COMPLETION_FIELDS
    lines = [
        "# Register map and stream payloads",
        "",
        "Generated from `REGISTERS` and `RESET` in `rtl/regfile.py` and the payload tables in `model/layout.py`",
        "by `tma-unit docs`; do not edit.",
        "",
        "The unit is a Wishbone B4 target (classic cycles, 32-bit data, byte `sel`, word `adr`).",
        "Every access is answered two cycles after its strobe (the first registers the address",
        "decode, the second acts on it), a slot read four (the word memory's register, then the word's),",
        "with `ack`, or with `err` when the address is unmapped or the register read-only.",
        "Byte address = 4 x `adr`.",
        "",
        "| offset | register | access | contents |",
        "| --- | --- | --- | --- |",
    ]
    for register in REGISTERS:
        lines.append(f"| `{register.offset:#05x}` | {register.name} | {register.access} | {register.contents} |")
    lines += [
        f"| `{SLOT_BASE:#05x} + {SLOT_STRIDE:#x} * s + 4 * w` | SLOT[s].WORD[w] | rw | word w (0..31) of slot s's "
        "128-byte descriptor image, bits 32w..32w+31 (docs/descriptor.md); a write clears SLOT_VALID bit s |",
        "",
        "Everything else reads and writes as `err`.",
        "",
        "## Reset",
        "",
        "Reset (the `sync` domain's `rst`, synchronous, for one cycle or more) is an abort:",
        "",
        "| state | after reset |",
        "| --- | --- |",
    ]
    lines += [f"| {state} | {after} |" for state, after in RESET]
    lines += [
        "",
        "## Request stream payload",
        "",
        "Packed from bit 0 in this order (`RequestLayout`, `model/layout.py` `REQUEST_FIELDS`).",
        "",
        "| field | bits | entries | meaning |",
        "| --- | --- | --- | --- |",
    ]
    offset = 0
    for f in REQUEST_FIELDS:
        lines.append(f"| `{f.name}` | {offset}..{offset + f.width * f.count - 1} | {f.count} x {f.width}"
                     f"{' signed' if f.signed else ''} | {f.doc} |")
        offset += f.width * f.count
    lines += ["", "## Completion stream payload", "", "| field | bits | meaning |", "| --- | --- | --- |"]
    offset = 0
    for f in COMPLETION_FIELDS:
        lines.append(f"| `{f.name}` | {offset}..{offset + f.width - 1} | {f.doc} |")
        offset += f.width
    from .rtl.proto import PROTO_BASE, PROTO_REGISTERS
    from .rtl.bridge import COMMAND_READ, COMMAND_WRITE, REPLY_ACK, REPLY_ERR, REPLY_UNKNOWN
    lines += ["", "## The prototyping top (FPGA, docs/fpga.md)", "",
              f"Over the UART: `{chr(COMMAND_WRITE)}` address:u32 data:u32 answers `{chr(REPLY_ACK)}` or "
              f"`{chr(REPLY_ERR)}`; `{chr(COMMAND_READ)}` address:u32 answers `{chr(REPLY_ACK)}` data:u32 or "
              f"`{chr(REPLY_ERR)}`; any other byte answers `{chr(REPLY_UNKNOWN)}` (little-endian byte addresses, "
              "`rtl/bridge.py`). Addresses below the unit's window reach the registers above; these sit at "
              f"`{PROTO_BASE:#x}` (`PROTO_REGISTERS` in `rtl/proto.py`):", "",
              "| offset | register | access | contents |", "| --- | --- | --- | --- |"]
    for name, (offset, access, doc) in PROTO_REGISTERS.items():
        lines.append(f"| `{PROTO_BASE + offset:#x}` | {name} | {access} | {doc} |")
    lines.append("")
    return "\n".join(lines)


def bank_conflicts_md() -> str:
    from .draw import swizzle_example
    from .model.banks import conflicts
    from .model.types import Swizzle
    lines = [
        "# Bank conflicts per swizzle mode",
        "",
        "Generated by `tma-unit docs` from `model/banks.py`; do not edit.",
        "",
        "Why the swizzle exists: the shared-memory image of each mode's example tile (fp16,",
        "16 rows as wide as the swizzle span, 128 bytes without one; the pictures are",
        "`docs/images/swizzle-*.png`), read by a warp two ways. Shared memory has 32 banks",
        "of 4 bytes; the figure is the average number of wavefronts an access takes",
        "(1: conflict-free; 8: eight-way).",
        "",
        "| swizzle | row width (bytes) | row read (32 x 4 B) | column read (8 rows x 16 B, ldmatrix) |",
        "| --- | --- | --- | --- |",
    ]
    for swizzle in Swizzle:
        tm, req = swizzle_example(swizzle)
        result = conflicts(tm, req)
        lines.append(f"| {swizzle.name} | {tm.inner_row_bytes()} | {result['row']:g} | {result['column']:g} |")
    lines += ["", "A row narrower than 128 bytes puts 128/width rows in each 128-byte line, so a row read",
              "uses a fraction of the banks and a column read spreads across fewer lines.", ""]
    return "\n".join(lines)


GENERATED = {"descriptor.md": descriptor_md, "errors.md": errors_md, "registers.md": registers_md,
             "bank-conflicts.md": bank_conflicts_md}


def write_docs(folder: Path) -> list[Path]:
    written = []
    for name, build in GENERATED.items():
        path = Path(folder) / name
        path.write_text(build())
        written.append(path)
    return written
