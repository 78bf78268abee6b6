"""Random cases for checking the RTL against the golden model: legal copies of every access
mode, and the campaign's four generators (``legal``, ``boundary``, ``illegal``,
``faults``) that make whole co-simulation scenarios out of them.

Every generator draws its choices from a ``draw`` object with three methods,
``integers(low, high)`` (both ends included), ``choice(sequence)`` and ``boolean()``. The
campaign passes a :class:`RandomDraw` over a seeded :class:`random.Random`, which is
fast; the hypothesis tests pass an adapter over hypothesis's ``draw`` (tests/strategies.py),
which shrinks a failing case. So one generator serves both, and what the tests explore is
what the campaign explores.

The legal generators build each case legal by construction, from the driver's rules
(docs/errors.md): a rule the model adds is a rule a generator here must keep.
"""

import random

from ..model import (AccessMode, DataType, Im2colWideMode, Interleave, L2Promotion, MapKind, OobFill,
                     Operation, ReduceOp, Request, Swizzle, TensorMap, TYPE_INFO, encode_descriptor,
                     smem_alignment)
from ..model.config import UnitConfig
from ..model.gather import GATHER_ROWS
from ..model.layout import DESCRIPTOR_BYTES, REQUEST_FIELDS, flat_fields, payload_width, unpack_payload
from ..model.request import IM2COL_OFFSET_RANGES, REDUCE_TYPES
from ..model.tensormap import CORNER_RANGES, PACKED_SWIZZLES
from ..model.timing import FRONT_END_STAGES
from ..model.unit import fields_from_request
from .cosim import MAX_CASE_BEATS, Scenario

__all__ = ["RandomDraw", "tiled_case", "im2col_case", "wide_case", "gather4_case", "large_case", "CASE_KINDS",
           "legal_case", "legal_scenario", "boundary_scenario", "illegal_scenario", "faults_scenario", "GENERATORS"]


class RandomDraw:
    """The ``draw`` of the generators over a seeded :class:`random.Random`."""

    def __init__(self, seed):
        self.random = random.Random(seed)

    def integers(self, low: int, high: int) -> int:
        span = high - low + 1
        if span & (span - 1) == 0:          # a power of two (a field's range): one call, no rejection
            return low + self.random.getrandbits(span.bit_length() - 1)
        return self.random.randint(low, high)

    def choice(self, sequence):
        return self.random.choice(sorted(sequence) if isinstance(sequence, (set, frozenset)) else sequence)

    def boolean(self) -> bool:
        return self.random.random() < 0.5


ALL_SWIZZLES = list(Swizzle)


def _align(info, interleave):
    return 32 if (interleave == Interleave.B32 or info.align16b) else 16


def _operation_and_type(draw, operations, dtypes):
    """An operation of ``operations``, an element type of ``dtypes`` it can copy, and the
    reduce operation (ADD but for a reduction, one the type allows), drawn in that order;
    and whether the operation writes global memory."""
    operation = draw.choice(operations)
    store = operation in (Operation.STORE, Operation.REDUCE)
    usable = [d for d in dtypes if not (store and d == DataType.U4_ALIGN16B)]
    if operation == Operation.REDUCE:
        usable = [d for d in usable if any(d in types for types in REDUCE_TYPES.values())]
    dtype = draw.choice(usable)
    reduce_op = ReduceOp.ADD
    if operation == Operation.REDUCE:
        reduce_op = draw.choice([o for o in ReduceOp if dtype in REDUCE_TYPES[o]])
    return operation, store, dtype, reduce_op


def tiled_case(draw, operations=(Operation.LOAD, Operation.STORE, Operation.PREFETCH),
                max_rows=64, dtypes=tuple(DataType), large: int | None = None):
    """A legal (TensorMap, Request) pair for a tiled copy, often partly out of bounds.
    With ``large``, a box of up to about that many bytes (at least half of them where the
    rank allows): dimensions 1..4 up to 256."""
    operation, store, dtype, op = _operation_and_type(draw, operations, dtypes)
    info = TYPE_INFO[dtype]
    rank = draw.integers(1, 5)
    interleaves = [Interleave.NONE]
    if rank >= 3 and dtype != DataType.U6_ALIGN16B:
        interleaves += [Interleave.B16] + ([] if info.align16b else [Interleave.B32])
    interleave = draw.choice(interleaves)

    # dimension 0 of the box
    if info.align16b:
        box0 = 128
    elif interleave == Interleave.NONE:
        # whole chunks; packed b4x16 counts two values a byte
        chunk_values = 16 * info.values_per_unit // info.unit_smem_bytes
        box0 = chunk_values * draw.integers(1, max(1, 256 // chunk_values))
        box0 = min(box0, 256 - 256 % chunk_values)
    else:
        # packed 4-bit values fill whole bytes: an even count (docs/decisions.md)
        box0 = 2 * draw.integers(1, 16) if dtype == DataType.U4_ALIGN8B else draw.integers(1, 32)
    row_bytes = info.smem_bytes(box0)

    if interleave == Interleave.B32:
        swizzle = Swizzle.B32
    else:
        choices = list(Swizzle)
        if interleave == Interleave.NONE:
            choices = [s for s in choices if s == Swizzle.NONE or row_bytes <= s.span]
        else:
            choices = [s for s in choices if s != Swizzle.B96]
        if info.align16b:
            allowed = PACKED_SWIZZLES[dtype]["store" if store else "load"]
            choices = [s for s in choices if s in allowed]
        if store or operation == Operation.PREFETCH:
            choices = [s for s in choices if s != Swizzle.B128_ATOM_32B_FLIP_8B]
        swizzle = draw.choice(choices)

    es = [draw.integers(1, 8) for _ in range(rank)]
    if info.packed and interleave != Interleave.NONE:
        es[0] = 1
    if large is None:
        box = [box0] + [draw.integers(1, 6) for _ in range(rank - 1)]
        # keep boxes small so a property test stays fast
        rows = 1
        for d in range(1, rank):
            rows *= -(-box[d] // es[d])
        if rows > max_rows:
            box = [box0] + [1] * (rank - 1)
    else:
        # a shared-memory row: whole 16-byte chunks, a swizzle's span at least
        box, room = [box0], max(1, large // max(-(-row_bytes // 16) * 16, swizzle.span))
        for d in range(1, rank):
            most = min(256, room * es[d])
            box.append(draw.integers(max(1, most // 2), most))
            room = max(1, room // -(-box[d] // es[d]))

    dims = []
    for d in range(rank):
        if d == 0 and info.align16b:
            dims.append(128 * draw.integers(1, 3))
        elif d == 0 and dtype == DataType.U4_ALIGN8B:
            dims.append(2 * draw.integers(1, 200))
        else:
            dims.append(draw.integers(1, box[d] * es[d] + 8))
    align = _align(info, interleave)
    strides = []
    extent = info.global_bytes(dims[0])
    for d in range(1, rank):
        stride = -(-extent // align) * align + align * draw.integers(0, 2)
        strides.append(stride)
        extent = stride * dims[d]
    address = align * draw.integers(1, 64)
    fill = OobFill.NONE
    if info.is_float and not info.packed:
        fill = draw.choice(list(OobFill))
    tm = TensorMap(MapKind.TILED, dtype, address, dims, strides, box, es, interleave, swizzle,
                   draw.choice(list(L2Promotion)), fill)

    coords = []
    for d in range(rank):
        low = 0 if store else -box[d] * es[d]
        c = draw.integers(low, dims[d] + 2)
        if d == 0 and info.packed:
            c = 128 * draw.integers(0 if store else -1, dims[0] // 128 + 1)
        coords.append(c)
    smem = smem_alignment(swizzle) * draw.integers(0, 24)
    request = Request(operation, coords, smem_address=smem, reduce_op=op,
                      request_id=draw.integers(0, 255))
    return tm, request


def _channels(draw, info, swizzle_span=None):
    """A channels-per-pixel value whose row is whole chunks (and fits a swizzle span)."""
    if info.align16b:
        return 128
    chunk_values = 16 * info.values_per_unit // info.unit_smem_bytes
    most = 256 // chunk_values
    if swizzle_span:
        most = min(most, swizzle_span // 16)
    return chunk_values * draw.integers(1, max(1, min(most, 8)))


def _strides(draw, info, dims, align):
    strides = []
    extent = info.global_bytes(dims[0])
    for d in range(1, len(dims)):
        stride = -(-extent // align) * align + align * draw.integers(0, 1)
        strides.append(stride)
        extent = stride * dims[d]
    return strides


IM2COL_DTYPES = [d for d in DataType if d != DataType.U4_ALIGN8B]


def im2col_case(draw, operations=(Operation.LOAD, Operation.PREFETCH, Operation.STORE), max_pixels=48):
    """A legal (TensorMap, Request) pair for an im2col copy (im2col_no_offs for stores and
    reductions)."""
    operation, store, dtype, reduce_op = _operation_and_type(draw, operations, IM2COL_DTYPES)
    info = TYPE_INFO[dtype]
    rank = draw.integers(3, 5)
    if info.align16b:
        swizzles = PACKED_SWIZZLES[dtype]["store" if store else "load"] - {Swizzle.B128_ATOM_64B}
        swizzle = draw.choice(sorted(swizzles))
    else:
        swizzle = draw.choice([s for s in Swizzle if not (store and s == Swizzle.B128_ATOM_32B_FLIP_8B)])
    channels = _channels(draw, info, swizzle.span or None)
    spatial = rank - 2
    low, high = CORNER_RANGES[rank]
    dims = [channels * draw.integers(1, 2) + (0 if info.packed else draw.integers(0, 3))]
    lower, upper = [], []
    for i in range(spatial):
        dim = draw.integers(1, 9)
        lo = draw.integers(0, min(3, dim - 1)) if store else draw.integers(max(low, -3), 3)
        up = draw.integers(max(low, lo - dim + 1), 0 if store else min(high, 3))
        dims.append(dim)
        lower.append(lo)
        upper.append(up)
    dims.append(draw.integers(1, 3))                 # N
    align = 32 if info.align16b else 16
    es = [1] + [draw.integers(1, 3) for _ in range(spatial)] + [1]
    fill = OobFill.NONE
    if info.is_float and not info.packed:
        fill = draw.choice(list(OobFill))
    tm = TensorMap(MapKind.IM2COL, dtype, align * draw.integers(1, 8), dims, _strides(draw, info, dims, align),
                   (), es, Interleave.NONE, swizzle, L2Promotion.NONE, fill, lower, upper, channels,
                   draw.integers(1, max_pixels))
    coords = [0 if info.packed else draw.integers(0 if store else -4, dims[0])]
    for i in range(spatial):
        coords.append(draw.integers(0 if store else lower[i] - 2, dims[i + 1] + upper[i] + 1))
    coords.append(draw.integers(0, dims[-1]))
    offsets = ()
    if not store:
        top = IM2COL_OFFSET_RANGES[rank][1]
        offsets = tuple(draw.integers(0, min(top, 3)) for _ in range(spatial))
    smem = smem_alignment(swizzle) * draw.integers(0, 16)
    return tm, Request(operation, coords, smem_address=smem, mode=AccessMode.IM2COL, im2col_offsets=offsets,
                       reduce_op=reduce_op)


def wide_case(draw, max_pixels=48, max_halo=8):
    """A legal (TensorMap, Request) pair for an im2col::w or im2col::w::128 load."""
    dtype = draw.choice(IM2COL_DTYPES)
    info = TYPE_INFO[dtype]
    rank = draw.integers(3, 5)
    wide = draw.choice(list(Im2colWideMode))
    choices = [Swizzle.B64, Swizzle.B128, Swizzle.B128_ATOM_32B]
    if info.align16b:
        choices = [Swizzle.B128, Swizzle.B128_ATOM_32B]
    swizzle = draw.choice(choices)
    channels = _channels(draw, info, swizzle.span)
    dims = [channels + (0 if info.packed else draw.integers(0, 3))]
    dims += [draw.integers(1, 40)] + [draw.integers(1, 4) for _ in range(rank - 3)] + [draw.integers(1, 3)]
    lo = draw.integers(-3, 3)
    up = draw.integers(lo - dims[1] + 1, 3)
    es = [1, draw.integers(1, 3)] + [1] * (rank - 2)
    align = 32 if info.align16b else 16
    tm = TensorMap(MapKind.IM2COL_WIDE, dtype, align * draw.integers(1, 8), dims,
                   _strides(draw, info, dims, align), (), es, Interleave.NONE, swizzle, L2Promotion.NONE,
                   OobFill.NONE, (lo,), (up,), channels, draw.integers(1, max_pixels), wide)
    mode = AccessMode.IM2COL_W if wide == Im2colWideMode.W else AccessMode.IM2COL_W_128
    coords = [0 if info.packed else draw.integers(-4, dims[0])]
    coords += [draw.integers(lo - 4, dims[1] + up + 1)]
    coords += [draw.integers(-1, d) for d in dims[2:-1]] + [draw.integers(0, dims[-1])]
    halo = draw.integers(0, max_halo)
    return tm, Request(Operation.LOAD, coords, smem_address=smem_alignment(swizzle) * draw.integers(0, 8),
                       mode=mode, w_halo=halo, w_offset=draw.integers(0, 4))


def gather4_case(draw):
    """A legal (TensorMap, Request) pair for a gather4 load or scatter4 store."""
    scatter = draw.boolean()
    dtype = draw.choice([d for d in DataType if d != DataType.U4_ALIGN16B])
    info = TYPE_INFO[dtype]
    if info.align16b:
        box0 = 128
    else:
        chunk_values = 16 * info.values_per_unit // info.unit_smem_bytes
        box0 = chunk_values * draw.integers(1, max(1, min(8, 256 // chunk_values)))
    row_bytes = info.smem_bytes(box0)
    choices = [s for s in Swizzle if s == Swizzle.NONE or row_bytes <= s.span]
    if info.align16b:
        choices = [s for s in choices if s in PACKED_SWIZZLES[dtype]["store" if scatter else "load"]]
    if scatter:
        choices = [s for s in choices if s != Swizzle.B128_ATOM_32B_FLIP_8B]
    swizzle = draw.choice(choices)
    if info.align16b:
        dim0 = 128 * draw.integers(1, 3)
    elif info.packed:
        dim0 = 2 * draw.integers(1, 200)
    else:
        dim0 = draw.integers(1, box0 + 8)
    dims = (dim0, draw.integers(1, 12))
    tm = TensorMap(MapKind.TILED, dtype, 32 * draw.integers(1, 8), dims,
                   _strides(draw, info, dims, 32 if info.align16b else 16), (box0, 1), (1, 1),
                   Interleave.NONE, swizzle)
    low = 0 if scatter else -2
    column = draw.integers(low, dim0)
    if info.packed:
        column = 128 * draw.integers(0, dim0 // 128)
    rows = [draw.integers(low, dims[1] + 1) for _ in range(GATHER_ROWS)]
    operation, mode = (Operation.STORE, AccessMode.SCATTER4) if scatter else (Operation.LOAD, AccessMode.GATHER4)
    return tm, Request(operation, [column] + rows, smem_address=smem_alignment(swizzle) * draw.integers(0, 8),
                       mode=mode)



#: The request kinds a scenario draws from, by access mode family.
CASE_KINDS = ("tiled", "gather4", "im2col", "wide")

def large_case(draw, config: UnitConfig, beats: int):
    """A legal tiled copy with a large box: a load or store of up to the unit's shared
    memory, a prefetch of up to ``beats`` beats (a prefetch has no shared-memory bound;
    the budget keeps its run short)."""
    operation = draw.choice([Operation.LOAD, Operation.STORE, Operation.PREFETCH])
    if config.smem_bytes < 8192:
        operation = Operation.PREFETCH                      # no room for a large load
    budget = beats * config.lanes * 16
    if operation != Operation.PREFETCH:
        budget = min(budget, config.smem_bytes - 4096)     # room for the request's smem_address
    return tiled_case(draw, operations=(operation,), large=max(budget, 16))


def legal_case(draw, kind: str, max_rows: int = 16):
    """A legal (TensorMap, Request) pair of one kind (:data:`CASE_KINDS`), every operation
    the kind allows; a load is a multicast now and then."""
    if kind == "tiled":
        tm, req = tiled_case(draw, operations=tuple(Operation), max_rows=max_rows)
    elif kind == "gather4":
        tm, req = gather4_case(draw)
    elif kind == "im2col":
        tm, req = im2col_case(draw, operations=tuple(Operation), max_pixels=max_rows)
    else:
        tm, req = wide_case(draw, max_pixels=max_rows, max_halo=min(8, max_rows))
    if req.operation == Operation.LOAD and draw.integers(0, 3) == 0:
        req = Request(**{**req.__dict__, "multicast_mask": draw.integers(1, 0xFFFF)})
    return tm, req


def _scenario(config, pairs, draw, **faults) -> Scenario:
    """A scenario of (image, request fields) pairs, pair i on slot ``i % slots`` (or the
    slot its fields name) with request id i, every slot written valid, random backpressure
    and gaps between requests."""
    images = {i % config.slots: image for i, (image, _) in enumerate(pairs)}
    return _finish(config, images, [{"slot": i % config.slots, **fields} for i, (_, fields) in enumerate(pairs)],
                   draw, **faults)


def _finish(config, images: dict, requests: list, draw, **faults) -> Scenario:
    """The scenario of ``requests`` on the slots of ``images`` (all set valid): request ids
    in order, random backpressure and gaps between requests."""
    kept = [{**fields, "request_id": i % (1 << config.id_width)} for i, fields in enumerate(requests)]
    valid = sum(1 << slot for slot in images)
    return Scenario(config, images, valid, kept, seed=draw.integers(0, 1 << 30),
                    ready_probability=draw.choice([1.0, 1.0, 0.7, 0.3]), max_gap=draw.choice([0, 0, 1, 3]),
                    **faults)


#: The access-mode family (``UnitConfig.modes``) of each kind of case.
_FAMILY = {"tiled": "tiled", "gather4": "gather4", "im2col": "im2col", "wide": "im2col_w"}


#: One tiled case in this many has a large box (:func:`large_case`).
LARGE_ONE_IN = 32


def _legal_pairs(draw, config, count, max_rows=16, kinds=CASE_KINDS):
    """``count`` legal (image, request fields) pairs. On a unit built without some modes
    or swizzles, three in four cases of those are drawn again, so most cases exercise
    what is built and the rest its refusal (MODE_NOT_BUILT, SWIZZLE_NOT_BUILT). One
    tiled case in :data:`LARGE_ONE_IN` has a large box."""
    pairs = []
    while len(pairs) < count:
        kind = draw.choice(kinds)
        if not config.builds(_FAMILY[kind]) and draw.integers(0, 3):
            continue
        if kind == "tiled" and draw.integers(0, LARGE_ONE_IN - 1) == 0:
            tm, req = large_case(draw, config, MAX_CASE_BEATS)
        else:
            tm, req = legal_case(draw, kind, max_rows)
        if tm.swizzle not in config.built_swizzles and draw.integers(0, 3):
            continue
        fields = fields_from_request(req, 0)
        del fields["slot"]              # the scenario places it
        pairs.append((encode_descriptor(tm), fields))
    return pairs


def legal_scenario(draw, config: UnitConfig) -> Scenario:
    """Back-to-back legal requests of mixed modes, operations, types and swizzles, many
    partly out of bounds (the ``legal`` generator)."""
    return _scenario(config, _legal_pairs(draw, config, draw.integers(1, min(6, config.slots))), draw)


# -- boundary values ----------------------------------------------------------------------

def _edge(draw, width: int, signed: bool = False) -> int:
    """A value at an edge of a ``width``-bit field: 0, 1, 2^k - 1, 2^k, 2^k + 1, the largest
    (and for a signed field the negative ones), as the field stores it."""
    k = draw.integers(1, width - 1) if width > 1 else 1
    value = draw.choice([0, 1, (1 << k) - 1, 1 << k, (1 << k) + 1, (1 << width) - 1])
    if signed and draw.boolean():
        value = -value
    return value & ((1 << width) - 1)


def _store(image: bytes, offset: int, width: int, value: int) -> bytes:
    bits = int.from_bytes(image, "little") & ~(((1 << width) - 1) << offset)
    return (bits | (value & ((1 << width) - 1)) << offset).to_bytes(DESCRIPTOR_BYTES, "little")


_FIELDS = list(flat_fields())
_REQUEST_WIDTHS = {f.name: (f.width, f.count, f.signed) for f in REQUEST_FIELDS}


def _boundary_request(draw, config, fields: dict) -> dict:
    fields = dict(fields)
    name = draw.choice(["coordinates", "coordinates", "smem_address", "im2col_offsets", "w_halo", "w_offset",
                        "multicast_mask", "slot"])
    width, count, signed = _REQUEST_WIDTHS[name]
    if name == "coordinates":
        # near plus and minus 2^31, and the field's edges
        coordinates = (list(fields["coordinates"]) + [0] * 5)[:5]
        value = draw.choice([(1 << 31) - 1 - draw.integers(0, 300), -(1 << 31) + draw.integers(0, 300), -1, 0, 1,
                             _edge(draw, 32)])
        coordinates[draw.integers(0, 4)] = value - (1 << 32) if value >= 1 << 31 else value
        fields["coordinates"] = coordinates
    elif name == "smem_address":
        # near the end of the unit's shared memory, and the field's edges
        fields[name] = draw.choice([config.smem_bytes - 16 * draw.integers(0, 64), _edge(draw, width),
                                    (1 << 32) - 16 * draw.integers(1, 16)])
    elif name == "slot":
        fields[name] = draw.choice([config.slots - 1, config.slots, 255])
    elif count > 1:
        fields[name] = [_edge(draw, width) for _ in range(count)]
    else:
        fields[name] = _edge(draw, width)
    return fields


def _boundary_image(draw, config, image: bytes) -> bytes:
    name, offset, width, field = draw.choice(_FIELDS)
    if name == "global_address" and draw.boolean():
        # near the top of the address space, 16-byte aligned
        value = ((1 << config.address_width) - 16 * draw.integers(1, 1 << 12)) & ((1 << 64) - 1)
    elif name.startswith("global_dim") and draw.boolean():
        value = draw.choice([(1 << 32) - 1, (1 << 31) - 1, 1 << 31, (1 << 16) - 1])   # dims near 2^32
    elif name.startswith("global_stride") and draw.boolean():
        # strides (16-byte units) near 2^40 bytes, and products near 2^32 and 2^40
        value = draw.choice([(1 << 36) - 1, 1 << 35, (1 << 28) - 1, 1 << 28, (1 << 24) + 1])
    else:
        value = _edge(draw, width, field.signed)
    return _store(image, offset, width, value)


def boundary_scenario(draw, config: UnitConfig) -> Scenario:
    """Legal cases with one to three descriptor or request fields moved to an edge of their
    range (the ``boundary`` generator): many break a rule; those that do not must still
    agree beat for beat."""
    pairs = []
    for image, fields in _legal_pairs(draw, config, draw.integers(1, min(6, config.slots))):
        for _ in range(draw.integers(1, 3)):
            if draw.boolean():
                image = _boundary_image(draw, config, image)
            else:
                fields = _boundary_request(draw, config, fields)
        pairs.append((image, fields))
    return _scenario(config, pairs, draw)


# -- bad input ----------------------------------------------------------------------------

_REQUEST_BITS = payload_width(REQUEST_FIELDS)


def _random_request(draw, config) -> dict:
    """A request of random fields: every bit of the request payload random."""
    fields = unpack_payload(REQUEST_FIELDS, draw.integers(0, (1 << _REQUEST_BITS) - 1))
    # the request's own slot, but now and then a random one (one not written, or past the slots)
    if draw.integers(0, 7) != 0:
        del fields["slot"]
    return fields


def illegal_scenario(draw, config: UnitConfig) -> Scenario:
    """Bad input (the ``illegal`` generator): random 128-byte images and legal images with
    one to three bits flipped, each with one to eight requests: the legal request of the
    image it was flipped from, and others with some or all fields random (a random slot
    now and then). Every slot is filled, and the requests run in a random order, back to
    back."""
    images, requests = {}, []
    for slot in range(config.slots):
        kind = draw.integers(0, 1)
        if kind == 0:
            image = draw.integers(0, (1 << 8 * DESCRIPTOR_BYTES) - 1).to_bytes(DESCRIPTOR_BYTES, "little")
            fields = _random_request(draw, config)
        else:
            [(image, fields)] = _legal_pairs(draw, config, 1)
        if kind == 1:
            for _ in range(draw.integers(1, 3)):
                bit = draw.integers(0, 8 * DESCRIPTOR_BYTES - 1)
                image = _store(image, bit, 1, ~(image[bit // 8] >> (bit % 8)) & 1)
        images[slot] = image
        requests.append({"slot": slot, **fields})
        for _ in range(draw.integers(0, 7)):
            random_fields = _random_request(draw, config)
            if draw.boolean():      # some fields random, the others the legal request's
                random_fields = {k: v for k, v in random_fields.items() if draw.integers(0, 2) == 0}
            requests.append({"slot": slot, **fields, **random_fields})
    for i in range(len(requests) - 1, 0, -1):      # shuffled, with the draw's own choices
        j = draw.integers(0, i)
        requests[i], requests[j] = requests[j], requests[i]
    return _finish(config, images, requests, draw)


# -- faults -------------------------------------------------------------------------------

def faults_scenario(draw, config: UnitConfig) -> Scenario:
    """Legal traffic under faults (the ``faults`` generator, docs/verification.md's fault
    table): a reset at a random cycle of the run; SLOT_VALID set for slots never written
    since a reset; the completion stream stalled for thousands of cycles; random ready
    patterns and long gaps between requests; a slot rewritten at a cycle around the accept
    of a request on it."""
    pairs = _legal_pairs(draw, config, draw.integers(1, min(6, config.slots)))
    fault = draw.choice(["reset", "unwritten", "stall", "gaps", "rewrite"])
    if fault == "reset":
        return _scenario(config, pairs, draw, reset_cycle=draw.integers(0, 400))
    if fault == "unwritten":
        scenario = _scenario(config, pairs, draw, reset_first=True)
        for slot in list(scenario.images):
            if draw.boolean():
                scenario.images[slot] = None        # set valid, never written since the reset
        scenario.valid_slots = draw.integers(0, (1 << config.slots) - 1) | scenario.valid_slots
        return scenario
    if fault == "stall":
        return _scenario(config, pairs, draw, completion_stall=(draw.integers(0, 200), draw.integers(500, 5000)),
                         completion_ready_probability=draw.choice([1.0, 0.5, 0.1]))
    if fault == "rewrite":
        # a word of a request's slot written at a cycle around the request's accept
        scenario = _scenario(config, pairs, draw)
        scenario.max_gap = 0
        if scenario.requests:
            index = draw.integers(0, len(scenario.requests) - 1)
            scenario.rewrite = (max(0, _accept_cycle(config, index) + draw.integers(-4, 4)),
                                scenario.requests[index]["slot"], draw.integers(0, 31),
                                draw.integers(0, (1 << 32) - 1))
        return scenario
    scenario = _scenario(config, pairs, draw)
    scenario.max_gap = draw.integers(4, 64)
    scenario.ready_probability = draw.choice([0.9, 0.5, 0.05])
    return scenario


def _accept_cycle(config: UnitConfig, index: int) -> int:
    """The cycle request ``index`` is accepted in when requests come back to back from
    cycle 0 and nothing behind the front end holds it up (model/timing.py): one a cycle
    until the first reaches the job register, then one every ``request_interval``
    cycles."""
    filled = FRONT_END_STAGES[config.request_interval] - 1       # the stages before the job register
    return index if index <= filled else filled + config.request_interval * (index - filled)


#: The campaign's generators by name.
GENERATORS = {"legal": legal_scenario, "boundary": boundary_scenario, "illegal": illegal_scenario,
              "faults": faults_scenario}
