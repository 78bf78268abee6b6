"""What the whole unit answers to one hardware request: the model side of the RTL's
request and completion streams (issue "RTL: descriptor register file ...").

The RTL takes a request naming a descriptor slot; it completes with a status and the
mbarrier byte count, and emits the transactions of a legal request. :func:`complete`
gives the same answer from the slot's 128-byte image, checking in this order: the slot
holds a valid descriptor (SLOT_INVALID); the image decodes to a legal tensor map (its
validation rules, in the order ``TensorMap`` checks them); the unit is built with the
request's mode and the map's swizzle (MODE_NOT_BUILT, SWIZZLE_NOT_BUILT: ``check_built``,
after the request's fields are read, so a mode number past the enumeration is ENUM_RANGE
first); the request keeps its rules (``validate_request``); the box stays inside the
unit's shared memory (SMEM_BOUNDS) and the tensor inside its address width
(ADDRESS_WRAP). Every check is arithmetic on the fields: no row of the box is built before
the request is accepted, so a box far larger than shared memory is refused in constant
time and memory, as the RTL refuses it.
"""

from dataclasses import dataclass, field
from functools import cached_property, partial

from .config import UnitConfig
from .errors import ErrorCode, TmaError
from .layout import COMPLETION_FIELDS, REQUEST_FIELDS, decode_descriptor, pack_payload, unpack_payload
from .request import Request, validate_request
from .tensormap import TensorMap
from .transactions import Transactions, beat_count, check_built, check_unit_limits, transaction_bytes, transactions
from .traversal import row_count
from .types import CHUNK_BYTES, AccessMode, Operation

__all__ = ["Completion", "complete", "request_from_fields", "fields_from_request", "COUNT_LIMIT",
           "reported_bytes", "check_built", "check_unit_limits", "check", "check_beats", "encode_request",
           "decode_request"]

#: The largest byte count a completion reports: its ``transaction_bytes`` field is 32 bits.
#: A load's or a store's box fits shared memory, far below it. A prefetch
#: (``cp.async.bulk.prefetch.tensor``) has no mbarrier to count for and its box may hold up
#: to 2^43 bytes (256^5 eight-byte elements); its completion reports this value for 4 GiB
#: or more (docs/decisions.md).
COUNT_LIMIT = (1 << next(f.width for f in COMPLETION_FIELDS if f.name == "transaction_bytes")) - 1


def reported_bytes(box_bytes: int) -> int:
    """The count a completion reports for a box of ``box_bytes``: saturated at
    :data:`COUNT_LIMIT`."""
    return min(box_bytes, COUNT_LIMIT)


@dataclass(frozen=True)
class Completion:
    """A request's completion: its status and reported byte count, and for a legal request
    its transactions. ``listing`` is the transactions, or a function that lists them when
    :attr:`transactions` is first read, so that answering a prefetch of gigabytes costs no
    memory until its chunks are asked for."""
    request_id: int
    status: ErrorCode
    transaction_bytes: int
    listing: "Transactions | partial | None" = field(compare=False, repr=False)
    error: TmaError | None = None

    @cached_property
    def transactions(self) -> Transactions | None:
        return self.listing() if callable(self.listing) else self.listing


def fields_from_request(req: Request, slot: int) -> dict:
    """The hardware request's field values for a model request aimed at ``slot``."""
    return {"operation": int(req.operation), "mode": int(req.mode), "reduce_op": int(req.reduce_op),
            "slot": slot, "request_id": req.request_id, "multicast_mask": req.multicast_mask,
            "smem_address": req.smem_address, "coordinates": list(req.coordinates),
            "im2col_offsets": list(req.im2col_offsets), "w_halo": req.w_halo, "w_offset": req.w_offset}


def encode_request(req: Request, slot: int) -> int:
    return pack_payload(REQUEST_FIELDS, fields_from_request(req, slot))


def decode_request(word: int) -> dict:
    return unpack_payload(REQUEST_FIELDS, word)


def request_from_fields(fields: dict, tm: TensorMap) -> Request:
    """The model request a hardware request means on map ``tm``: the coordinates the map's
    rank (or gather4's five) uses, the im2col offsets of an im2col load, no offsets on an
    im2col_no_offs store. Fields the hardware cannot hold raise ENUM_RANGE."""
    mode = fields["mode"]
    count = 5 if mode in (AccessMode.GATHER4, AccessMode.SCATTER4) else tm.rank
    operation = fields["operation"]
    # the hardware request always holds five coordinates and three offsets (zero if unset)
    coordinates = (list(fields["coordinates"]) + [0] * 5)[:count]
    offsets = ()
    if mode == AccessMode.IM2COL and operation in (Operation.LOAD, Operation.PREFETCH):
        offsets = tuple((list(fields["im2col_offsets"]) + [0] * 3)[:max(tm.rank - 2, 0)])
    return Request(operation, tuple(coordinates), fields["smem_address"], mode,
                   offsets, fields["w_halo"], fields["w_offset"], fields["reduce_op"],
                   fields["multicast_mask"], fields["request_id"])


def _checked(image: bytes | None, fields: dict, config: UnitConfig):
    """The map and request of a hardware request after every check :func:`complete` makes."""
    if image is None or fields["slot"] >= config.slots:
        raise TmaError(ErrorCode.SLOT_INVALID, "slot", fields["slot"], "holds no valid descriptor")
    tm = decode_descriptor(image)
    req = request_from_fields(fields, tm)
    check_built(tm, req, config)
    validate_request(tm, req)
    check_unit_limits(tm, req, config)
    return tm, req


def check(image: bytes | None, fields: dict, config: UnitConfig) -> tuple[ErrorCode, int]:
    """The completion's status and the box's bytes (0 on error), without the transactions:
    the bytes the unit moves, which the completion reports up to :data:`COUNT_LIMIT`."""
    return check_beats(image, fields, config)[:2]


def check_beats(image: bytes | None, fields: dict, config: UnitConfig) -> tuple[ErrorCode, int, int]:
    """:func:`check`'s status and bytes, and the beats the copy takes on ``config.lanes``
    lanes (:meth:`.transactions.Transactions.places`; 0 on error), from the fields alone."""
    try:
        tm, req = _checked(image, fields, config)
    except TmaError as error:
        return error.code, 0, 0
    rows, pitch = row_count(tm, req), tm.row_pitch()
    return ErrorCode.OK, rows * pitch, beat_count(rows, pitch // CHUNK_BYTES, config.lanes)


def complete(image: bytes | None, fields: dict, config: UnitConfig) -> Completion:
    """The unit's completion (and transactions) for a hardware request on a slot holding
    ``image`` (None: never written or invalidated)."""
    request_id = fields["request_id"]
    try:
        tm, req = _checked(image, fields, config)
    except TmaError as error:
        return Completion(request_id, error.code, 0, None, error)
    return Completion(request_id, ErrorCode.OK, reported_bytes(transaction_bytes(tm, req)),
                      partial(transactions, tm, req, config))
