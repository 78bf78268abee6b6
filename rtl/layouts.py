"""Amaranth layouts and enumerations of the unit, each derived from the golden model's one
table (STYLE.md: a field offset or width is never written by hand in two places).

* :data:`DescriptorLayout`: the 1024-bit tensor-map image, from ``DESCRIPTOR_FIELDS``.
* :data:`RequestLayout`, :data:`CompletionLayout`: the stream payloads, from
  ``REQUEST_FIELDS`` and ``COMPLETION_FIELDS``.
* :func:`beat_layout`: the output beat for a configuration (``lanes`` chunk slots).
* The enumerations mirror the model's, with the shape of their table field.
"""

import types

from amaranth.hdl import unsigned, signed
from amaranth.lib import data, enum

from ..model import layout as tables
from ..model import types as model_types
from ..model.config import UnitConfig

__all__ = ["DescriptorLayout", "RequestLayout", "CompletionLayout", "beat_layout", "lane_layout",
           "Operation", "AccessMode", "ReduceOp", "Kind", "Fill"]


def _amaranth_enum(model_enum, width):
    """An Amaranth enumeration with the model enum's members, stored in ``width`` bits."""
    def body(namespace):
        for member in model_enum:
            namespace[member.name] = member.value
    return types.new_class(model_enum.__name__, (enum.Enum,), {"shape": unsigned(width)}, body)


Operation = _amaranth_enum(model_types.Operation, 2)
AccessMode = _amaranth_enum(model_types.AccessMode, 3)
ReduceOp = _amaranth_enum(model_types.ReduceOp, 3)
Kind = _amaranth_enum(model_types.MapKind, 2)


class Fill(enum.Enum, shape=2):
    """What the out-of-bounds units of a beat become (model/transactions.py FILL_*)."""
    NONE = 0
    ZERO = 1
    NAN = 2


def _descriptor_layout():
    members = {}
    for f in tables.DESCRIPTOR_FIELDS:
        shape = signed(f.width) if f.signed else unsigned(f.width)
        if f.count > 1:
            shape = data.ArrayLayout(shape, f.count)
        members[f.name] = data.Field(shape, f.offset)
    return data.FlexibleLayout(tables.DESCRIPTOR_BITS, members)


_ENUM_FIELDS = {"operation": Operation, "mode": AccessMode, "reduce_op": ReduceOp}


def _payload_layout(table):
    members = {}
    for f in table:
        shape = _ENUM_FIELDS.get(f.name) or (signed(f.width) if f.signed else unsigned(f.width))
        members[f.name] = data.ArrayLayout(shape, f.count) if f.count > 1 else shape
    return data.StructLayout(members)


DescriptorLayout = _descriptor_layout()
RequestLayout = _payload_layout(tables.REQUEST_FIELDS)
CompletionLayout = _payload_layout(tables.COMPLETION_FIELDS)


def lane_layout(config: UnitConfig) -> data.StructLayout:
    """One 16-byte chunk of a beat (model/transactions.py ``Transaction``)."""
    return data.StructLayout({
        "valid": 1,
        "global_address": unsigned(config.address_width),
        "global_length": unsigned(5),
        "smem_address": unsigned(config.smem_address_width),
        "mask": unsigned(16),
        "units": unsigned(5),
    })


def beat_layout(config: UnitConfig) -> data.StructLayout:
    """A beat: ``lanes`` chunks and what they share."""
    return data.StructLayout({
        "lanes": data.ArrayLayout(lane_layout(config), config.lanes),
        "element_pitch": unsigned(7),
        "fill": Fill,
        "request_id": unsigned(config.id_width),
        "operation": Operation,
        "reduce_op": ReduceOp,
        "multicast_mask": unsigned(16),
        "last": 1,
    })
