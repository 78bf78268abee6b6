"""The SystemVerilog package and C header that ``tma-unit export`` writes beside the
Verilog: every constant a testbench or a driver of the exported unit needs, for one
configuration, so that no offset is copied by hand from a doc into someone else's flow.

Everything here is read from the tables the RTL is built from: the payloads' bit layouts
from ``rtl/layouts.py`` (``RequestLayout``, ``beat_layout(config)``, ``CompletionLayout``,
themselves made from ``model/layout.py`` and the model's ``Transaction``), the register map
from ``rtl/regfile.py`` (``REGISTERS``, ``SLOT_BASE``, ``SLOT_STRIDE``, ``bus_addr_width``)
and the configuration's values. :func:`constants` lists them once; :func:`package` and
:func:`c_header` only spell that list in two languages.

Each payload field ``F`` of payload ``P`` (``REQUEST``, ``BEAT``, ``COMPLETION``) gives
``P_F_LSB`` (its entry 0's first bit), ``P_F_WIDTH`` (an entry's bits), ``P_F_COUNT``
(its entries) and ``P_F_STRIDE`` (bits from one entry to the next): entry ``i`` is bits
``[LSB + i * STRIDE + WIDTH - 1 : LSB + i * STRIDE]``. The beat's lanes are an array of
records, so a lane's field (``BEAT_LANES_SMEM_ADDRESS``) has the lanes' count and stride.
"""

import dataclasses
import re

from amaranth.hdl import Shape
from amaranth.lib import data, enum

from .export import header, top_name
from .model.config import UnitConfig
from .rtl.layouts import CompletionLayout, RequestLayout, beat_layout
from .rtl.regfile import ID_VALUE, REGISTERS, SLOT_BASE, SLOT_STRIDE, WORDS_PER_SLOT, bus_addr_width

__all__ = ["FieldPlace", "field_places", "constants", "package", "c_header", "package_name", "macro_prefix"]


@dataclasses.dataclass(frozen=True)
class FieldPlace:
    """Where a payload field's entries lie: entry ``i`` at ``lsb + i * stride``, ``width``
    bits each. ``name`` is the field's path, records' members joined by ``.``."""
    name: str
    lsb: int
    width: int
    count: int = 1
    stride: int = 0
    signed: bool = False
    enum: type | None = None

    @property
    def constant(self) -> str:
        """The field's name in the package's and header's constants."""
        return self.name.replace(".", "_").upper()


def field_places(layout: data.Layout, offset: int = 0, path: str = "", count: int = 1,
                 stride: int = 0) -> list[FieldPlace]:
    """Every field of a payload ``layout``, records inside arrays included (their members
    take the array's count and stride)."""
    places = []
    for name, field in layout:
        at, shape = offset + field.offset, field.shape
        here = path + name
        if isinstance(shape, data.ArrayLayout):
            if count > 1:
                raise ValueError(f"{here}: an array inside an array has no (lsb, count, stride) place")
            elem = shape.elem_shape
            width = Shape.cast(elem).width
            if isinstance(elem, data.StructLayout):
                places.append(FieldPlace(here, at, width, shape.length, width))
                places += field_places(elem, at, here + ".", shape.length, width)
            else:
                places.append(FieldPlace(here, at, width, shape.length, width, Shape.cast(elem).signed,
                                         _enum_of(elem)))
        elif isinstance(shape, data.StructLayout):
            places += field_places(shape, at, here + ".", count, stride)
        else:
            cast = Shape.cast(shape)
            places.append(FieldPlace(here, at, cast.width, count, stride if count > 1 else cast.width, cast.signed,
                                     _enum_of(shape)))
    return places


def _enum_of(shape):
    return shape if isinstance(shape, type) and issubclass(shape, enum.Enum) else None


def payloads(config: UnitConfig) -> dict[str, data.Layout]:
    """The stream payloads of a unit of ``config``, by the name their constants start with."""
    return {"REQUEST": RequestLayout, "BEAT": beat_layout(config), "COMPLETION": CompletionLayout}


def _words(name: str) -> str:
    """``AccessMode`` as ``ACCESS_MODE``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def constants(config: UnitConfig) -> list[tuple[str, int | str, str]]:
    """The package's and the header's constants, in order: (name, value, what it is)."""
    out = []
    settings = config.to_dict()
    for name, value in settings.items():
        out.append((f"CONFIG_{name.upper()}", value, f"configuration: {name}"))
    out.append(("CONFIG_SMEM_ADDRESS_WIDTH", config.smem_address_width, "bits of a shared-memory address in a beat"))
    layouts = payloads(config)
    for payload, layout in layouts.items():
        out.append((f"{payload}_WIDTH", layout.size, f"bits of {payload.lower()}s__payload"))
    out.append(("BUS_ADR_WIDTH", bus_addr_width(config), "bits of bus__adr, the Wishbone word address"))
    out.append(("BUS_DATA_WIDTH", 32, "bits of bus__dat_w and bus__dat_r"))
    out.append(("ID_VALUE", ID_VALUE, "what the ID register reads"))
    out.append(("SLOT_BASE", SLOT_BASE, "byte address of slot 0's descriptor word 0"))
    out.append(("SLOT_STRIDE", SLOT_STRIDE, "bytes from one slot's descriptor to the next"))
    out.append(("SLOT_WORDS", WORDS_PER_SLOT, "32-bit words of a descriptor: word w at SLOT_BASE + SLOT_STRIDE * s + 4 * w"))
    for register in REGISTERS:
        out.append((f"REG_{register.name}", register.offset, f"byte address of {register.name} ({register.access})"))
        for bits in register.fields:
            name = f"REG_{register.name}_{bits.name.upper()}"
            out.append((f"{name}_LSB", bits.low, f"{register.name}{bits.bits} {bits.name}"))
            out.append((f"{name}_WIDTH", bits.width, ""))
    enums = {}
    for payload, layout in layouts.items():
        for place in field_places(layout):
            what = f"{payload.lower()}s__payload {place.name}" + (" (signed)" if place.signed else "")
            stem = f"{payload}_{place.constant}"
            out.append((f"{stem}_LSB", place.lsb, what))
            out.append((f"{stem}_WIDTH", place.width, ""))
            out.append((f"{stem}_COUNT", place.count, ""))
            out.append((f"{stem}_STRIDE", place.stride, ""))
            if place.enum is not None:
                enums.setdefault(place.enum.__name__, place.enum)
    for name, members in enums.items():
        for member in members:
            out.append((f"{_words(name)}_{member.name}", member.value, f"{name}.{member.name}"))
    return out


def package_name(prefix: str | None = None) -> str:
    return top_name(prefix) + "_pkg"


def macro_prefix(prefix: str | None = None) -> str:
    return top_name(prefix).upper() + "_"


def package(config: UnitConfig, prefix: str | None = None, init: bool = True) -> str:
    """The SystemVerilog package ``<prefix>tma_unit_pkg`` of :func:`constants`: numbers as
    ``localparam int``, strings untyped (what Icarus Verilog 11 reads as well as Verilator)."""
    lines = [header(config, prefix=prefix, init=init).rstrip("\n"),
             f"// the constants of `{top_name(prefix)}` (docs/export.md, \"Package and header\")",
             f"package {package_name(prefix)};"]
    for name, value, what in constants(config):
        comment = f"  // {what}" if what else ""
        if isinstance(value, str):
            lines.append(f'  localparam {name} = "{value}";{comment}')
        elif 0 <= value < 1 << 31:
            lines.append(f"  localparam int {name} = {value};{comment}")
        else:
            raise ValueError(f"{name} = {value} is no SystemVerilog int")
    lines.append(f"endpackage : {package_name(prefix)}")
    return "\n".join(lines) + "\n"


def c_header(config: UnitConfig, prefix: str | None = None, init: bool = True) -> str:
    """The C header of :func:`constants` (macros ``<PREFIX>TMA_UNIT_<NAME>``) and of each
    payload's fields as a table (``<prefix>tma_unit_<payload>_fields``, by path name), for
    C and C++."""
    macro = macro_prefix(prefix)
    lower = top_name(prefix)
    guard = f"{macro}H"
    lines = [header(config, prefix=prefix, init=init).rstrip("\n"),
             f"// the constants of `{top_name(prefix)}` (docs/export.md, \"Package and header\")",
             f"#ifndef {guard}", f"#define {guard}", ""]
    for name, value, what in constants(config):
        comment = f"  /* {what} */" if what else ""
        text = f'"{value}"' if isinstance(value, str) else f"{value}u"
        lines.append(f"#define {macro}{name} {text}{comment}")
    lines += ["", f"/* a payload field: entry i is bits [lsb + i * stride + width - 1 : lsb + i * stride] */",
              f"struct {lower}_field {{", "    const char *name;  /* its path: record members joined by '.' */",
              "    unsigned lsb, width, count, stride;", "    int is_signed;", "};"]
    for payload, layout in payloads(config).items():
        places = field_places(layout)
        lines.append(f"static const struct {lower}_field {lower}_{payload.lower()}_fields[{len(places)}] = {{")
        for place in places:
            lines.append(f'    {{"{place.name}", {place.lsb}u, {place.width}u, {place.count}u, {place.stride}u, '
                         f"{int(place.signed)}}},")
        lines.append("};")
        lines.append(f"#define {macro}{payload}_FIELDS {len(places)}u")
    lines += ["", f"#endif /* {guard} */"]
    return "\n".join(lines) + "\n"
