"""A copy as the ordered stream of 16-byte chunk transactions the hardware moves.

This stream is the contract with the RTL: the unit must emit these transactions, in this
order, field for field. The order is defined here, once (docs/transactions.md):

* rows in the order of the access mode's row walk (tiled: the dense box order, dimension 1
  fastest, then 2, 3, 4; im2col: pixels in walk order; gather4: the four rows in request
  order);
* within a row, chunks from the row's start, each covering the next 16 bytes of the
  shared-memory row (its units: 16 / unit bytes of them; the last chunk of a row may hold
  fewer when interleave leaves the row short of a whole chunk).

Each transaction names the global address of its first unit, the global bytes its units
occupy (16; 8 or 12 for the padded sub-byte types; fewer in a short last chunk), the byte
distance between consecutive units in global memory (``element_pitch``: the unit size,
times the dimension-0 element stride with interleave), the absolute shared-memory address
after the swizzle (8 past a 16-byte boundary where the 8B-flip atomicity swaps the halves:
byte ``i`` of the chunk lands at ``smem & ~15 | (smem + i) & 15``), one in-bounds bit per
unit, and the fill of out-of-bounds units on a load.
"""

from dataclasses import dataclass, field

import numpy as np

from .errors import ErrorCode, TmaError, shown
from .request import Request, check_arguments, validate_request
from .tensormap import TensorMap
from .traversal import box_elements, row_count, row_walk, units_per_chunk
from .types import Fill, OobFill, Operation

__all__ = ["Transaction", "Transactions", "transactions", "transaction_bytes", "check_built", "check_unit_limits",
           "beats_per_row", "beat_count"]


def _carried(per: str, width, enum=None):
    """How the unit's beat stream carries a field (:class:`Transaction`)."""
    return field(metadata={"per": per, "width": width, "enum": enum})


@dataclass(frozen=True)
class Transaction:
    """One 16-byte chunk moved between global and shared memory.

    Every field is carried by the unit's beat stream, as its metadata says: ``per`` is
    ``chunk`` (each lane of a beat has its own) or ``beat`` (the beat's chunks, all of
    one request, share it), ``width`` its bits (a ``UnitConfig`` attribute's name where
    the configuration sets it). The RTL's beat layout is made from these fields
    (``tma_unit.rtl.layouts.beat_layout``) and the lockstep checker compares each by
    name, so a field added here is in the layout and compared with no other change; the
    RTL block that makes it (the datapath for a chunk's, the front end for a beat's)
    must drive it.
    """
    global_address: int = _carried("chunk", "address_width")
    global_length: int = _carried("chunk", 5)         # bytes in global memory: up to 16
    element_pitch: int = _carried("beat", 7)           # a unit's bytes (<= 12) x dim-0 stride (<= 8)
    smem_address: int = _carried("chunk", "smem_address_width")
    mask: int = _carried("chunk", 16)                  # a bit per unit: up to 16 units
    units: int = _carried("chunk", 5)                  # up to 16
    fill: Fill = _carried("beat", 2, Fill)
    last: bool = _carried("beat", 1)                   # the request's last chunk


@dataclass(frozen=True)
class Transactions:
    """The transaction stream of one request, as parallel numpy arrays."""
    global_address: np.ndarray  # uint64
    global_length: np.ndarray   # int64
    element_pitch: int
    smem_address: np.ndarray    # int64
    mask: np.ndarray            # int64, bit u = unit u of the chunk is in bounds
    units: np.ndarray           # int64, units in the chunk
    fill: Fill
    chunk_units: int            # units a whole chunk holds
    refused: TmaError | None = None     # what the unit answers instead, when listed anyway
    row_chunks: int = 1         # chunks of each row (every row of a copy has as many)

    def __len__(self) -> int:
        return len(self.global_address)

    def beats(self, lanes: int) -> int:
        """Beats of the copy on a unit of ``lanes`` lanes (:meth:`places`)."""
        return beat_count(len(self) // self.row_chunks, self.row_chunks, lanes)

    def places(self, lanes: int) -> tuple[np.ndarray, np.ndarray]:
        """Each chunk's beat and lane on a unit of ``lanes`` lanes. A beat holds up to
        ``lanes`` consecutive chunks of one row: a row of ``row_chunks`` chunks takes
        :func:`beats_per_row` beats, its chunk ``k`` in lane ``k % lanes`` of the row's
        beat ``k // lanes``, and the next row starts a beat (docs/architecture.md, "Beats")."""
        chunk = np.arange(len(self), dtype=np.int64)
        row, within = np.divmod(chunk, self.row_chunks)
        return row * beats_per_row(self.row_chunks, lanes) + within // lanes, within % lanes

    def __getitem__(self, i: int) -> Transaction:
        return Transaction(int(self.global_address[i]), int(self.global_length[i]),
                           self.element_pitch, int(self.smem_address[i]), int(self.mask[i]),
                           int(self.units[i]), self.fill, i == len(self) - 1)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def transactions(tm: TensorMap, req: Request, config: "UnitConfig | None" = None, *,
                 refused: bool = False) -> Transactions:
    """The ordered chunk transactions of ``req`` on ``tm``.

    Checks what the unit checks, in its order (model/unit.py): the unit of ``config``
    (default :class:`UnitConfig()`) is built with the request's mode and the map's swizzle
    (MODE_NOT_BUILT, SWIZZLE_NOT_BUILT), the request keeps its rules, the box fits the
    shared memory (SMEM_BOUNDS) and the tensor the address width (ADDRESS_WRAP).

    Parameters
    ----------
    refused : bool
        List the chunks of a copy the unit refuses for its build or its limits anyway (a
        box past shared memory, a tensor whose addresses wrap, as the walk would make them)
        with the unit's error in ``Transactions.refused``. A request that breaks a rule
        of the spec is raised either way: it has no chunks.
    """
    check_arguments(tm, req)
    from .config import UnitConfig          # here: config imports the memory model, which imports this module
    if config is None:
        config = UnitConfig()
    elif not isinstance(config, UnitConfig):
        raise TmaError(ErrorCode.FIELD_TYPE, "config", shown(config), "is not a UnitConfig")
    refusal = None
    try:
        check_built(tm, req, config)
    except TmaError as error:
        if not refused:
            raise
        refusal = error
    validate_request(tm, req)
    if refusal is None:
        try:
            check_unit_limits(tm, req, config)
        except TmaError as error:
            if not refused:
                raise
            refusal = error
    return _stream(tm, req, refusal)


def _stream(tm: TensorMap, req: Request, refusal: TmaError | None) -> Transactions:
    """The transactions of a request that keeps the spec's rules."""
    walk = row_walk(tm, req, validate=False)
    elements = box_elements(tm, req, walk)
    info = tm.info
    per_chunk = units_per_chunk(tm)
    rows, units = elements.shape
    chunks = -(-units // per_chunk)
    padded = chunks * per_chunk
    present = np.zeros((rows, padded), dtype=bool)
    present[:, :units] = True
    in_bounds = np.zeros((rows, padded), dtype=bool)
    in_bounds[:, :units] = elements.in_bounds
    weights = (np.int64(1) << np.arange(per_chunk, dtype=np.int64))
    mask = (in_bounds.reshape(rows, chunks, per_chunk) * weights).sum(axis=2).reshape(-1)
    count = present.reshape(rows, chunks, per_chunk).sum(axis=2).reshape(-1)
    first = np.arange(chunks) * per_chunk
    global_address = elements.global_address[:, first].reshape(-1)
    smem_address = elements.smem_address[:, first].reshape(-1)
    if req.operation == Operation.PREFETCH:
        smem_address = np.zeros_like(smem_address)
    if req.operation == Operation.LOAD:
        fill = Fill.NAN if tm.oob_fill == OobFill.NAN_REQUEST_ZERO_FMA else Fill.ZERO
    else:
        fill = Fill.NONE
    pitch = info.unit_global_bytes * walk.dim0_step // info.values_per_unit
    return Transactions(global_address, count * info.unit_global_bytes, pitch, smem_address,
                        mask, count, fill, per_chunk, refusal, chunks)


def beats_per_row(row_chunks: int, lanes: int) -> int:
    """Beats a row of ``row_chunks`` chunks takes on ``lanes`` lanes: a beat never holds
    chunks of two rows (:meth:`Transactions.places`)."""
    return -(-row_chunks // lanes)


def beat_count(rows: int, row_chunks: int, lanes: int) -> int:
    """Beats of a copy of ``rows`` rows of ``row_chunks`` chunks each on ``lanes`` lanes."""
    return rows * beats_per_row(row_chunks, lanes)


def transaction_bytes(tm: TensorMap, req: Request) -> int:
    """The mbarrier transaction count of a load (validating the request): every
    shared-memory byte the box fills, out-of-bounds and padding bytes included
    (docs/decisions.md). Computed from the fields, without building the box's rows, so
    that the unit's SMEM_BOUNDS check costs the same for any box (model/unit.py)."""
    validate_request(tm, req)
    return row_count(tm, req) * tm.row_pitch()


def check_built(tm: TensorMap, req: Request, config: "UnitConfig") -> None:
    """MODE_NOT_BUILT or SWIZZLE_NOT_BUILT unless ``config`` builds the request's mode and
    the map's swizzle."""
    if req.mode not in config.built_modes:
        raise TmaError(ErrorCode.MODE_NOT_BUILT, "mode", req.mode.name, f"is not built (modes {config.modes})")
    if tm.swizzle not in config.built_swizzles:
        raise TmaError(ErrorCode.SWIZZLE_NOT_BUILT, "swizzle", tm.swizzle.name,
                       f"is not built (swizzles {config.swizzles})")


def check_unit_limits(tm: TensorMap, req: Request, config: "UnitConfig") -> None:
    """The checks that keep a legal request inside memory the unit owns."""
    if req.operation != Operation.PREFETCH:
        end = req.smem_address + transaction_bytes(tm, req)
        if end > config.smem_bytes:
            raise TmaError(ErrorCode.SMEM_BOUNDS, "smem_address", hex(req.smem_address),
                           f"puts the box's last byte at {end - 1:#x}, past the {config.smem_bytes:#x} "
                           "bytes of shared memory")
    last = tm.global_address + tm.info.global_bytes(tm.global_dims[0]) - 1
    for dim in range(1, tm.rank):
        last += (tm.global_dims[dim] - 1) * tm.global_strides[dim - 1]
    if last >> config.address_width:
        raise TmaError(ErrorCode.ADDRESS_WRAP, "global_address", hex(tm.global_address),
                       f"puts the tensor's last byte at {last:#x}, past the {config.address_width}-bit address space")
