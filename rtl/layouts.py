"""Amaranth layouts and enumerations of the unit, each derived from the golden model's one
table, so that no field offset or width is written by hand in two places.

* :data:`DescriptorLayout`: the 1024-bit tensor-map image, from ``DESCRIPTOR_FIELDS``.
* :data:`RequestLayout`, :data:`CompletionLayout`: the stream payloads, from
  ``REQUEST_FIELDS`` and ``COMPLETION_FIELDS``.
* :func:`beat_layout`: the output beat for a configuration (``lanes`` chunk slots), from
  the model's ``Transaction`` fields, and with a request former its L2 requests
  (:func:`request_layout`).
* The enumerations mirror the model's, with the shape of their table field.
"""

import dataclasses
import functools
import types

from amaranth.hdl import Value, unsigned, signed
from amaranth.lib import data, enum

from ..model import layout as tables
from ..model.config import UnitConfig
from ..model.gather import GATHER_ROWS
from ..model.memory import SECTOR_BYTES
from ..model.tensormap import MAX_RANK
from ..model.transactions import Transaction
from ..model.unit import COUNT_LIMIT

__all__ = ["DescriptorLayout", "EARLY_FIELDS", "EARLY_BYTES", "EarlyLayout", "RequestLayout", "CompletionLayout",
           "beat_layout", "lane_layout", "request_layout", "REQUEST_SLOTS_PER_LANE",
           "Operation", "AccessMode", "ReduceOp", "Fill", "BEAT_REQUEST_FIELDS",
           "WAITING_JOBS", "beat_table_depth", "beat_tag_width", "beat_entry_layout", "carried_constants_layout",
           "coordinate_constants_layout", "address_constants_layout", "row_values_width", "CHUNK_VALUES_WIDTH"]


@functools.cache
def amaranth_enum(model_enum, width: int):
    """An Amaranth enumeration with the model enum's members, stored in ``width`` bits (one
    class per pair, so every layout that holds the field holds the same enumeration)."""
    def body(namespace):
        for member in model_enum:
            namespace[member.name] = member.value
    return types.new_class(model_enum.__name__, (enum.Enum,), {"shape": unsigned(width)}, body)


def _payload_shape(f):
    """A payload table field's shape: its enumeration, else a number of its width."""
    if f.enum is not None:
        return amaranth_enum(f.enum, f.width)
    return signed(f.width) if f.signed else unsigned(f.width)


def _descriptor_layout():
    members = {}
    for f in tables.DESCRIPTOR_FIELDS:
        shape = signed(f.width) if f.signed else unsigned(f.width)
        if f.count > 1:
            shape = data.ArrayLayout(shape, f.count)
        members[f.name] = data.Field(shape, f.offset)
    return data.FlexibleLayout(tables.DESCRIPTOR_BITS, members)


def _payload_layout(table):
    return data.StructLayout({f.name: data.ArrayLayout(_payload_shape(f), f.count) if f.count > 1 else _payload_shape(f)
                              for f in table})


DescriptorLayout = _descriptor_layout()

#: The descriptor fields the front end's first decode reads (:func:`.decode.decode_early`):
#: the descriptor file keeps the bytes that hold them once more, in LUT RAM, read with
#: the slot, so that the decode behind the snapshot starts at flip-flops and not at the
#: block RAM's output (docs/fpga.md, "Clock speed").
EARLY_FIELDS = ("rank", "elemtype", "interleave_layout", "kind")


def _early_layout():
    fields = {name: DescriptorLayout[name] for name in EARLY_FIELDS}
    first = min(f.offset for f in fields.values()) // 8
    end = -(-max(f.offset + f.width for f in fields.values()) // 8)
    return range(first, end), data.FlexibleLayout(8 * (end - first), {
        name: data.Field(f.shape, f.offset - 8 * first) for name, f in fields.items()})


#: The bytes of the image that hold :data:`EARLY_FIELDS`, and those bytes' layout.
EARLY_BYTES, EarlyLayout = _early_layout()
RequestLayout = _payload_layout(tables.REQUEST_FIELDS)
CompletionLayout = _payload_layout(tables.COMPLETION_FIELDS)

_REQUEST_FIELD = {f.name: f for f in tables.REQUEST_FIELDS}
Operation = _payload_shape(_REQUEST_FIELD["operation"])
AccessMode = _payload_shape(_REQUEST_FIELD["mode"])
ReduceOp = _payload_shape(_REQUEST_FIELD["reduce_op"])
#: What the out-of-bounds units of a beat become (the model's ``Fill``, as a beat holds it).
Fill = next(amaranth_enum(f.metadata["enum"], f.metadata["width"]) for f in dataclasses.fields(Transaction)
            if f.name == "fill")

#: The request's fields every beat carries beside its chunks (Glasgow's metadata): what a
#: beat is for and whose it is. The request id is ``id_width`` bits inside the unit.
BEAT_REQUEST_FIELDS = ("request_id", "operation", "reduce_op", "multicast_mask")


def _carried_shape(f, config: UnitConfig):
    """The shape of a :class:`Transaction` field on the beat stream (its metadata)."""
    width = f.metadata["width"]
    width = getattr(config, width) if isinstance(width, str) else width
    return amaranth_enum(f.metadata["enum"], width) if f.metadata["enum"] else unsigned(width)


def _carried(per: str, config: UnitConfig) -> dict:
    return {f.name: _carried_shape(f, config) for f in dataclasses.fields(Transaction) if f.metadata["per"] == per}


def lane_layout(config: UnitConfig) -> data.StructLayout:
    """One 16-byte chunk of a beat: whether the lane holds one, and the chunk fields of the
    model's ``Transaction``."""
    return data.StructLayout({"valid": 1, **_carried("chunk", config)})


def _sideband(config: UnitConfig) -> dict:
    """What every chunk of a beat shares, travelling beside them (Glasgow's metadata): the
    beat fields of the model's ``Transaction`` but ``last``, and the request's
    :data:`BEAT_REQUEST_FIELDS`."""
    side = _carried("beat", config)
    del side["last"]
    for name in BEAT_REQUEST_FIELDS:
        side[name] = unsigned(config.id_width) if name == "request_id" else _payload_shape(_REQUEST_FIELD[name])
    return side


#: L2 request slots a lane gives a formed beat: its chunk's granule and the next (a chunk
#: spans fewer than 128 bytes, so it touches at most two granules of 128 or more).
REQUEST_SLOTS_PER_LANE = 2


def request_layout(config: UnitConfig, granule: int, addressed: bool = True) -> data.StructLayout:
    """One L2 request slot of a formed beat: whether it holds a request, the granule's
    first byte, the ``granule / 32`` sectors it needs and the lanes whose chunks it
    serves. ``addressed`` False: without the address, which the slot's place gives (slot
    ``2j`` is lane ``j``'s chunk's granule, slot ``2j + 1`` the next), as the request
    former makes it and the beat queue keeps it (:func:`.request_former.addressed`)."""
    fields = {"valid": 1, "address": config.address_width, "sectors": granule // SECTOR_BYTES, "lanes": config.lanes}
    if not addressed:
        del fields["address"]
    return data.StructLayout(fields)


def beat_layout(config: UnitConfig, granule: int | None = None, addressed: bool = True) -> data.StructLayout:
    """A beat: ``lanes`` chunks, what they share, and ``last`` (the request's last beat);
    with a request former of ``granule`` bytes (default: the configuration's
    ``request_former``; 0 for none) also ``requests``, its ``REQUEST_SLOTS_PER_LANE x
    lanes`` L2 request slots (rtl/request_former.py says which slot holds which), with
    their addresses unless ``addressed`` is False (:func:`request_layout`)."""
    granule = config.request_former if granule is None else granule
    fields = {"lanes": data.ArrayLayout(lane_layout(config), config.lanes), **_sideband(config), "last": 1}
    if granule:
        fields["requests"] = data.ArrayLayout(request_layout(config, granule, addressed),
                                              REQUEST_SLOTS_PER_LANE * config.lanes)
    return data.StructLayout(fields)


DIGITS = MAX_RANK   # the walker's odometer: chunk in row, then box dimensions 1..4
RADIX_WIDTH = 11    # a radix is at most 1535 (im2col::w: 1024 pixels plus 511 halo pixels)
CHUNK_VALUES_WIDTH = 10     # values between chunks along dim 0: units per chunk, times step, times values a unit
SPATIAL = 3         # im2col walks W, H, D: tensor dimensions 1..3 at most
PIXEL_DIMENSIONS = MAX_RANK - 1     # a pixel walk's dimensions: 1..4 (dimension 0 is the row)
HALO_WIDTH = next(f.width for f in tables.REQUEST_FIELDS if f.name == "w_halo")
PIXEL_COORD = signed(34)    # a pixel's coordinate: a 32-bit start plus offsets and halo
#: Bits of a box's byte count: up to 2^32 rows of a 4096-byte pitch.
BOX_BYTES_WIDTH = 45
#: Bits of a completion's byte count, which saturates at model/unit.py's ``COUNT_LIMIT``.
COUNT_WIDTH = COUNT_LIMIT.bit_length()


def beats_width(config: UnitConfig) -> int:
    """Bits of a job's beat count: a box of any legal size (a prefetch may name 2^43
    bytes), whose rows may be a chunk each, so a beat each at any lane count."""
    return (((1 << BOX_BYTES_WIDTH) - 1) >> 4).bit_length()


def row_pad(row_chunks, config: UnitConfig):
    """The lane places a row of ``row_chunks`` chunks leaves empty in its last beat:
    ``-row_chunks`` modulo ``lanes``, its low ``log2(lanes)`` bits (none at lanes 1; the
    job's ``row_pad`` with more than one lane)."""
    return (-Value.cast(row_chunks))[:config.lanes.bit_length() - 1]


def row_values_width(config: UnitConfig) -> int:
    """Bits of a chunk's offset along dimension 0 from its row's start, in values: a
    chunk of the row (``digit0 * lanes + j``) times ``chunk_values``."""
    return RADIX_WIDTH + config.lanes.bit_length() - 1 + CHUNK_VALUES_WIDTH


def chunk_index_width(config: UnitConfig) -> int:
    """Bits of a chunk's place in the box's dense shared-memory image, in chunks: the
    shared-memory address's bits above a chunk's 4 (a prefetch's image, which may be
    larger, has no shared-memory address)."""
    return config.smem_address_width - 4


#: Parts of a stepped im2col row address (``pixel_state_layout``): dimensions 1..4
#: (dimension 4's holding the base) and the halo pixels' (:mod:`.stepping`).
PIXEL_PARTS = PIXEL_DIMENSIONS + 1
#: Carries that move a stepped tiled row address: out of digits 0..3 (a carry out of
#: digit 4 ends the lane).
CARRIES = DIGITS - 1


def steps_pixels(config: UnitConfig | None) -> bool:
    """Whether a unit of ``config`` steps the addresses of a pixel walk."""
    return config is not None and config.steps_addresses and config.builds_im2col_family


def address_layout(config: UnitConfig) -> data.StructLayout:
    """A job's step constants (``UnitConfig.addressing == "step"``, tiled and gather4,
    :mod:`.stepping`): the box's first row address, the step's offset ``K`` (a beat's
    step: one along digit 0, the row's beats), the carries' deltas ``T``, gather4's
    four row addresses."""
    width = config.address_width
    fields = {"start": width, "step": width, "carry": data.ArrayLayout(width, CARRIES)}
    if config.builds("gather4"):
        fields["gather"] = data.ArrayLayout(width, GATHER_ROWS)
    return data.StructLayout(fields)


def pixel_walk_layout(config: UnitConfig | None = None) -> data.StructLayout:
    """The im2col pixel walk of a job (docs/architecture.md, "The pixel walk").

    Tensor dimensions 1..4 each have a role: ``walks`` (a spatial dimension: steps by its
    traversal stride through ``[low, end)``, restarting at ``low`` and carrying), ``counts``
    (N: adds the carry) or neither (held: passes the carry on). Coordinates are already
    shifted by the im2col offsets or wOffset, so a position is the coordinate it reads.
    ``limit`` is ``end - stride``: a position at or past it restarts instead of stepping
    (the compare then needs no add before it). The fields from ``step_limit`` on are
    read ahead off the others by the front end (``rtl/pixelwalk.py`` ``pixel_walk_ahead``),
    so the walker compares nothing in series when it loads a job or steps a pixel:
    ``step_limit`` is ``limit - stride`` (a position at or past it steps to or past the
    limit), ``low_wraps`` whether ``low`` is at or past the limit, ``start_passes`` the
    first pixel's ``passes`` bits (``pixel_state_layout``); ``has_halo``, ``halo_less_one``, ``group_single`` (``group_last`` is
    0) and ``group_before_last`` (``group_last - 1``) decide a pixel state's halo and
    group bits a step ahead (``pixel_state_layout``).

    A unit that steps addresses (:func:`steps_pixels`) adds each dimension's part of the
    row address at the start (dimension 4's holding the base), at a restart
    (``address_low``) and a move's step (``address_step``).
    """
    addresses = {}
    if steps_pixels(config):
        width = config.address_width
        addresses = {"address_start": data.ArrayLayout(width, PIXEL_DIMENSIONS),
                     "address_low": data.ArrayLayout(width, SPATIAL),
                     "address_step": data.ArrayLayout(width, PIXEL_DIMENSIONS)}
    return data.StructLayout({
        "start": data.ArrayLayout(PIXEL_COORD, PIXEL_DIMENSIONS),
        "low": data.ArrayLayout(PIXEL_COORD, SPATIAL),
        "limit": data.ArrayLayout(PIXEL_COORD, SPATIAL),
        "stride": data.ArrayLayout(unsigned(4), PIXEL_DIMENSIONS),
        "walks": unsigned(PIXEL_DIMENSIONS),
        "counts": unsigned(PIXEL_DIMENSIONS),
        "halo": unsigned(HALO_WIDTH),   # halo pixels after each group (0: none)
        "group_last": unsigned(RADIX_WIDTH),    # main pixels in a group, minus 1
        # read ahead (pixel_walk_ahead)
        "step_limit": data.ArrayLayout(signed(PIXEL_COORD.width + 1), SPATIAL),
        "low_wraps": unsigned(SPATIAL),
        "start_passes": unsigned(SPATIAL),
        "has_halo": 1,
        "halo_less_one": unsigned(HALO_WIDTH),
        "group_single": 1,
        "group_before_last": unsigned(RADIX_WIDTH),
        **addresses,
    })


def job_layout(config: UnitConfig) -> data.StructLayout:
    """One accepted request, checked and set up: what the walker and the datapath need.

    The walker steps one odometer a beat, from 0: digit 0 counts a row's beats (a beat
    holds up to ``lanes`` chunks of one row, docs/architecture.md, "Beats"), the others
    the box's rows. ``step_digits`` is 1 written in the odometer's mixed radix,
    ``step_safe`` the largest digit that takes its step without wrapping, ``row_pad`` (with
    more than one lane) the lane places a row's last beat leaves empty (:func:`row_pad`).
    ``beats`` is the records the job makes (rows times beats a row; 1 for a rejected
    request), so the walker knows its last one from a counter, not from the odometer.
    A unit that steps addresses adds ``address`` (:func:`address_layout`).

    Of the job's beat constants only those the datapath's first stage reads are in it
    (``carried``): the front end writes the rest into the beat table as the request enters
    its stage 8 (:func:`beat_entry_layout`), and ``tag`` is their entry (:func:`beat_table_depth`).
    ``request_id`` and ``pixel_mode`` are what the walker reads of the request itself
    (and ``carried.gather``, for gather4's rows where it steps addresses).
    """
    steps = {"address": address_layout(config)} if config.steps_addresses else {}
    # no field of no bits: exported Verilog would declare it [-1:0]
    pad = {"row_pad": unsigned(config.lanes.bit_length() - 1)} if config.lanes > 1 else {}
    return data.StructLayout({
        "code": unsigned(8),
        "transaction_bytes": unsigned(COUNT_WIDTH),
        "beats": unsigned(beats_width(config)),
        "one_beat": 1,              # beats == 1, decided by the front end
        "radix": data.ArrayLayout(unsigned(RADIX_WIDTH), DIGITS),
        "step_digits": data.ArrayLayout(unsigned(RADIX_WIDTH), DIGITS),
        "step_safe": data.ArrayLayout(unsigned(RADIX_WIDTH), DIGITS),     # radix - step - 1
        "step_overflow": 1,         # the box is one beat: one step ends the walk
        **pad,
        "pixels": pixel_walk_layout(config),
        "tag": unsigned(beat_tag_width(config)),
        "carried": carried_constants_layout(config),
        "request_id": unsigned(config.id_width),
        "pixel_mode": 1,
        **steps,
    })


#: The most requests from the front end's stage 8 on as it writes the beat table: stages
#: 8 and 9's at a request interval of 2 (stage 10 is empty while the stages move), stages
#: 8, 9 and 10 and the job register at 1 (the skid is empty). The front end's proofs
#: assert it.
WAITING_JOBS = 4


def beat_table_depth(config: UnitConfig) -> int:
    """Entries of the beat table (rtl/datapath.py): a job's beat constants are written
    there as its request enters the front end's stage 8, one entry per request in turn,
    and read by the datapath for each record of the job, the last a cycle after the
    walker emits the job's last record. The entry is written again for the request
    ``depth`` after its own, and at that write at most :data:`WAITING_JOBS` (4) requests
    stand between stage 8 and the walker (the front end's proofs assert it,
    docs/formal.md), so the eleventh job after its own has been taken; a job takes a
    cycle at least, so that is nine cycles or more after its last read. Seven entries
    would do (``WAITING_JOBS + 3``); in block RAM (512 entries of 36 bits a DP16KD) the
    depth costs nothing, and sixteen leave room for a later stage to read the table
    without the argument changing. A power of two, so that the entries' numbers
    (:func:`beat_tag_width` bits) wrap as they count."""
    depth = 16
    assert depth >= WAITING_JOBS + 3, "an entry is written again before its last read"
    return depth


def beat_tag_width(config: UnitConfig) -> int:
    """Bits of an entry's number in the beat table (:func:`beat_table_depth`)."""
    depth = beat_table_depth(config)
    assert depth & (depth - 1) == 0, "the entries' numbers wrap as they count"
    return depth.bit_length() - 1


#: A kind of chunk (a row's full chunks, its last): its units, which of the 16 bits of
#: its mask they fill, and its bytes in global memory; a job holds both kinds, so the
#: datapath picks one rather than computing them per chunk (docs/fpga.md).
ChunkKindLayout = data.StructLayout({
    "units": unsigned(5),
    "live": unsigned(16),
    "length": unsigned(5),
})


def carried_constants_layout(config: UnitConfig) -> data.StructLayout:
    """The beat constants that ride in the job and the walk record: those the datapath's
    first stage (A0) reads with the walk register's digits, for the beat table's read
    would reach A0 a cycle late, and the bits the datapath clears the table's reads by
    (the coordinates, dimensions and strides past the rank, a prefetch's shared-memory
    address and swizzle), which then come from registers, not from the table's block
    RAM (rtl/datapath.py)."""
    return data.StructLayout({
        "element_strides": data.ArrayLayout(unsigned(4), MAX_RANK - 1),     # of dimensions 1..4
        "last_chunk": unsigned(RADIX_WIDTH),            # row_chunks - 1
        "chunk_values": unsigned(CHUNK_VALUES_WIDTH),   # values between chunks along dim 0
        "in_rank": unsigned(MAX_RANK),
        "gather": 1,
        "prefetch": 1,
    })


def coordinate_constants_layout(config: UnitConfig) -> data.StructLayout:
    """The beat constants stage A1 reads (a chunk's coordinates, kind and shared-memory
    place), from the beat table's first memory."""
    return data.StructLayout({
        "start": data.ArrayLayout(signed(32), MAX_RANK),        # coordinates (gather4: column, rows)
        "dim0": unsigned(33),
        "smem_base": unsigned(config.smem_address_width),
        "chunks": data.ArrayLayout(ChunkKindLayout, 2),     # a row's full chunk, its last
        "pixel_mode": 1,                                # im2col, ::w, ::w::128: rows are pixels
    })


def address_constants_layout(config: UnitConfig) -> data.StructLayout:
    """The beat constants of stage A2 on (the bounds, the address, the swizzle, the
    beat's sideband), from the beat table's second memory. The sideband's
    ``request_id`` is not among them: the walk record's completion carries it."""
    sideband = _sideband(config)
    del sideband["request_id"]
    return data.StructLayout({
        "dims": data.ArrayLayout(unsigned(33), MAX_RANK),
        "strides": data.ArrayLayout(unsigned(40), MAX_RANK - 1),      # of dimensions 1..4
        "base": unsigned(config.address_width),
        "swizzle": unsigned(3),
        "value_step": unsigned(5),                      # values between units along dim 0
        "values_per_unit_log2": unsigned(3),
        "unit_global_bytes": unsigned(5),
        **sideband,
    })


def beat_entry_layout(config: UnitConfig) -> data.StructLayout:
    """An entry of the beat table (:func:`beat_table_depth`): a job's beat constants as
    the front end writes them, for each of the table's two memories. The coordinates,
    dimensions and strides past the rank (and a prefetch's shared-memory address and
    swizzle) are not yet cleared: the datapath clears them as it registers a read, by
    the record's bits (:func:`carried_constants_layout`), where a cleared bit is a
    flip-flop's synchronous reset, not a LUT in front of the table's write."""
    return data.StructLayout({"coordinates": coordinate_constants_layout(config),
                              "address": address_constants_layout(config)})
