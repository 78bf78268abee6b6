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

from dataclasses import dataclass

from .config import UnitConfig
from .errors import ErrorCode, TmaError
from .layout import REQUEST_FIELDS, decode_descriptor, pack_payload, unpack_payload
from .request import Request, validate_request
from .tensormap import TensorMap
from .transactions import Transactions, check_built, check_unit_limits, transaction_bytes, transactions
from .types import AccessMode, Operation

__all__ = ["Completion", "complete", "request_from_fields", "fields_from_request",
           "check_built", "check_unit_limits", "check", "encode_request", "decode_request"]


@dataclass(frozen=True)
class Completion:
    request_id: int
    status: ErrorCode
    transaction_bytes: int
    transactions: Transactions | None
    error: TmaError | None = None


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
    """The completion's status and byte count alone, without the transactions."""
    try:
        tm, req = _checked(image, fields, config)
    except TmaError as error:
        return error.code, 0
    return ErrorCode.OK, transaction_bytes(tm, req)


def complete(image: bytes | None, fields: dict, config: UnitConfig) -> Completion:
    """The unit's completion (and transactions) for a hardware request on a slot holding
    ``image`` (None: never written or invalidated)."""
    request_id = fields["request_id"]
    try:
        tm, req = _checked(image, fields, config)
    except TmaError as error:
        return Completion(request_id, error.code, 0, None, error)
    return Completion(request_id, ErrorCode.OK, transaction_bytes(tm, req), transactions(tm, req, config))
