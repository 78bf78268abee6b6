"""Docs generated from the project's tables, so they cannot drift from the code:
``docs/descriptor.md`` (the 128-byte layout) and ``docs/errors.md`` (the error codes).
``tma-unit docs`` rewrites them; a test checks the committed files equal the output.
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
        "(REFERENCE.md section 2). The golden model's encoder and decoder and the RTL register",
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
    from .rtl.regfile import REGISTERS, SLOT_BASE, SLOT_STRIDE
    from .model.layout import REQUEST_FIELDS, COMPLETION_FIELDS
    lines = [
        "# Register map and stream payloads",
        "",
        "Generated from `REGISTERS` in `rtl/regfile.py` and the payload tables in `model/layout.py`",
        "by `tma-unit docs`; do not edit.",
        "",
        "The unit is a Wishbone B4 target (classic cycles, 32-bit data, byte `sel`, word `adr`).",
        "Every access is answered one cycle later with `ack`, or with `err` when the address is",
        "unmapped or the register read-only. Byte address = 4 x `adr`.",
        "",
        "| offset | register | access | contents |",
        "| --- | --- | --- | --- |",
    ]
    for register in REGISTERS:
        lines.append(f"| `{register.offset:#05x}` | {register.name} | {register.access} | {register.doc} |")
    lines += [
        f"| `{SLOT_BASE:#05x} + {SLOT_STRIDE:#x} * s + 4 * w` | SLOT[s].WORD[w] | rw | word w (0..31) of slot s's "
        "128-byte descriptor image, bits 32w..32w+31 (docs/descriptor.md); a write clears SLOT_VALID bit s |",
        "",
        "Everything else reads and writes as `err`.",
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
    lines.append("")
    return "\n".join(lines)


GENERATED = {"descriptor.md": descriptor_md, "errors.md": errors_md, "registers.md": registers_md}


def write_docs(folder: Path) -> list[Path]:
    written = []
    for name, build in GENERATED.items():
        path = Path(folder) / name
        path.write_text(build())
        written.append(path)
    return written
