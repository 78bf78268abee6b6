"""The memory side of a copy (docs/memory.md): the L2 requests a copy's beats become, the
shared-memory wavefronts its chunks need, and a memory that answers the requests with a
latency and a limit on requests in flight.

Everything here is a function of the transaction stream (:mod:`.transactions`), the
unit's lanes and a few memory parameters, so it holds for any copy and is independent of
the RTL.

The request former (:func:`merge`). A beat is up to ``lanes`` consecutive chunks of one
row of one request (:meth:`.transactions.Transactions.places`).
Its in-bounds bytes are grouped by aligned *granule* (``granule`` bytes, 128 by default:
one L2 line); every granule the beat touches is one L2 request, carrying the mask of the
32-byte sectors it needs and the mask of the bytes the copy uses in it. So:

* an out-of-bounds unit is never requested: a load still writes its fill to shared
  memory, a store or reduction writes nothing for it; a beat with no in-bounds byte makes
  no request;
* a load or prefetch moves whole sectors (the byte mask says how many of their bytes the
  copy uses); a store or reduction writes the bytes of its byte mask only;
* a multicast load is one copy of the box for several CTAs: its requests are issued once,
  the same as without multicast (the returned bytes are written to each CTA of the mask;
  below, "The SM around the unit");
* within a beat, requests go in the order of the lowest lane that uses each granule,
  then by address.

Shared-memory wavefronts (:func:`smem_wavefronts`). Shared memory has 32 banks of 4 bytes
(:mod:`.banks`) and one port that takes one wavefront a cycle; a beat's chunks (a load's
writes, fill included; a store's or reduction's reads) need as many wavefronts as the
most distinct 4-byte words any bank holds among their bytes.

The memory (:class:`Memory`, :func:`simulate`). Beats leave the unit in order; a beat
leaves at the first cycle at or after the one the unit has it ready (the timing model's
cycle when the beat stream is always ready) and after the previous beat's, in which

* the memory has credits for all of the beat's requests: at most ``in_flight`` requests
  are outstanding, and a request's credit comes back in the cycle after it returns;
* the request path has moved the previous beat's sectors: a beat whose requests carry
  ``S`` sector bytes holds it for ``ceil(S / bytes_per_cycle)`` cycles (at least one), or,
  with ``carry``, for ``S / bytes_per_cycle`` cycles exactly: the path's part-used last
  cycle goes to the next beat, which may leave in that cycle (never two beats in one
  cycle), and its sectors start moving where the previous beat's ended; so a fractional
  ``bytes_per_cycle`` (36, 36.5) moves its bytes at that rate over a run;
* (a store or reduction) the shared-memory port has read the previous chunks.

All of a beat's requests issue in the cycle it leaves, and each returns ``latency``
cycles later (drawn per request from ``latency +- latency_spread`` when that is not 0, from
``seed``).

The GPU around the SM (``sms``, ``l2_bytes_per_cycle``, ``hbm_bytes_per_cycle``,
``hit_rate``, ``miss_latency``): ``sms`` SMs stream at once and share the L2's and the
HBM's bandwidth fairly, each SM getting ``1/sms`` of each. A beat's requests hit in L2
together (they are one or two adjacent granules) with probability ``hit_rate`` (drawn per
beat from ``seed``): a hit's sectors move at ``min(bytes_per_cycle, l2 / sms)`` and return
after ``latency``, a miss's at ``min(bytes_per_cycle, l2 / sms, hbm / sms)`` (it passes
through the L2 too) and return after ``miss_latency`` (with the same spread). The
request path then always carries (``carry``), since a share is rarely whole bytes.

A load's beat is written to shared memory once its last request has returned (at once, in
the cycle after it leaves, if it made none), beats in the order their data is complete,
each holding the port for its wavefronts.

The SM around the unit (``consumer_reads``, ``cluster_bytes_per_cycle``; none of it holds
the beat stream back, so the gate and the RTL's run loop are the same with it):

* a consumer (``ldmatrix``, or ``wgmma`` reading its operands from shared memory) reads a
  load's image once the whole box is in, as it waits on the load's mbarrier, in 8-row
  matrix reads: the 16 bytes at one chunk position of 8 consecutive rows
  (:func:`matrix_read_wavefronts`), each byte ``consumer_reads`` times, on the same port
  as the unit's writes: the port holds for the reads' wavefronts once the last of the
  copy's beats to be written is written;
* a multicast load to ``k`` CTAs (``k`` bits of its mask; the issuing CTA taken to be
  one of them) stands for a cluster of ``k`` CTAs that share a block, each loading
  ``1/k`` of it and multicasting that part to all ``k`` (PTX's
  ``cp.async.bulk.tensor .multicast::cluster`` writes the data to the same offset in
  each CTA of the mask): this SM's shared memory takes ``k`` times each beat's bytes (its
  own and the others' shares, taken to collide in the banks as its own do) and the
  consumer reads all of them, while the L2 sees this SM's requests once; the cluster
  delivers the beat's bytes to the ``k - 1`` other CTAs at ``cluster_bytes_per_cycle``
  (None: no limit), in the order the data is complete, and the run ends when it has.
  The run's shared-memory bytes count every share that lands in this SM.

That a stalled beat stream resumes with one beat a cycle (no bubble after a stall) is the
unit's timing model's behaviour, checked in tests/test_memory.py against
:func:`.timing.predict` with the stream not ready.
"""

import heapq
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .banks import BANKS, BANK_BYTES
from .errors import ErrorCode, TmaError
from .transactions import Transactions
from .types import CHUNK_BYTES, Operation

__all__ = ["SECTOR_BYTES", "LINE_BYTES", "SMEM_BYTES_PER_CYCLE", "MAX_GRANULE", "MAX_LATENCY", "L2Requests", "merge",
           "smem_wavefronts", "matrix_read_wavefronts", "MATRIX_ROWS", "coalesce_requests", "IssuedRequests",
           "Memory", "MemoryRun", "MemoryGate", "memory_run", "simulate"]

#: The L2's unit of transfer: a sector (32 bytes) of a 128-byte line (NVIDIA, CUDA C++
#: Best Practices Guide, "Coalesced Access to Global Memory"; the FlashGPU-Sim Hopper
#: model issues TMA requests at this granularity).
SECTOR_BYTES = 32
#: The default request granule: one L2 line, four sectors.
LINE_BYTES = 128
#: One SM's shared memory takes one wavefront a cycle: 32 banks of 4 bytes (CUDA C++
#: Programming Guide, "Shared Memory" of compute capability 5.x and later).
SMEM_BYTES_PER_CYCLE = BANKS * BANK_BYTES


@dataclass(frozen=True)
class L2Requests:
    """The L2 requests of one copy, in issue order, as parallel arrays.

    ``beat``: the copy's beat each belongs to; ``address``: the granule's first byte
    (uint64); ``sectors``: bit ``s``, sector ``s`` of the granule is requested;
    ``byte_mask``: bool, shape (requests, granule), the bytes the copy uses; ``lanes``:
    bit ``j``, lane ``j``'s chunk has bytes in it. ``beats``: the copy's beats, those
    with no request included."""
    beat: np.ndarray
    address: np.ndarray
    sectors: np.ndarray
    byte_mask: np.ndarray
    lanes: np.ndarray
    beats: int
    granule: int
    operation: Operation

    def __len__(self) -> int:
        return len(self.beat)

    @property
    def sector_count(self) -> np.ndarray:
        """Sectors of each request."""
        return np.array([bin(int(s)).count("1") for s in self.sectors], dtype=np.int64)

    @property
    def used_bytes(self) -> np.ndarray:
        """The copy's bytes in each request."""
        return self.byte_mask.sum(axis=1)

    def per_beat(self) -> np.ndarray:
        """Requests of each beat (0 for a beat whose chunks are all out of bounds)."""
        return np.bincount(self.beat, minlength=self.beats)

    def sector_bytes_per_beat(self) -> np.ndarray:
        """Sector bytes each beat's requests move."""
        return np.bincount(self.beat, weights=self.sector_count * SECTOR_BYTES, minlength=self.beats).astype(np.int64)

    def efficiency(self) -> float:
        """Bytes the copy uses over the bytes the requests move (a store's or
        reduction's, its bytes: 1); 1.0 for a copy with no request."""
        moved = (self.byte_mask.sum() if self.operation.writes_global else self.sector_count.sum() * SECTOR_BYTES)
        return float(self.byte_mask.sum() / moved) if moved else 1.0


def _unit_bytes(t: Transactions) -> np.ndarray:
    """Every in-bounds byte of the chunks in global memory: (chunk, address) pairs."""
    if not len(t):
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    unit_bytes = int(t.global_length[0] // t.units[0])
    units = np.arange(t.chunk_units, dtype=np.uint64)
    offsets = (units[:, None] * np.uint64(t.element_pitch) + np.arange(unit_bytes, dtype=np.uint64)[None, :])
    address = t.global_address.astype(np.uint64)[:, None, None] + offsets[None, :, :]      # wraps modulo 2^64
    in_bounds = ((t.mask[:, None] >> np.arange(t.chunk_units)[None, :]) & 1).astype(bool)
    keep = np.broadcast_to(in_bounds[:, :, None], address.shape)
    chunk = np.broadcast_to(np.arange(len(t))[:, None, None], address.shape)
    return chunk[keep], address[keep]


def merge(t: Transactions, lanes: int, operation: Operation, granule: int = LINE_BYTES) -> L2Requests:
    """The L2 requests of the copy whose transactions are ``t`` on a unit of ``lanes``
    lanes, each covering one aligned ``granule`` (a power of two, at least a sector)."""
    _check_granule(granule)
    chunk, address = _unit_bytes(t)
    beat_of, lane_of = t.places(lanes)
    beat, lane = beat_of[chunk], lane_of[chunk]
    g = np.uint64(granule)
    base = address - address % g
    # one group per (beat, granule); bytes sorted within it, so a repeated byte is found
    order = np.lexsort((address, base, beat))
    beat, lane, base, address = beat[order], lane[order], base[order], address[order]
    new_group = np.r_[True, (beat[1:] != beat[:-1]) | (base[1:] != base[:-1])] if len(beat) else np.zeros(0, bool)
    starts, group = np.flatnonzero(new_group), np.cumsum(new_group) - 1
    offset = (address - base).astype(np.int64)
    byte_mask = np.zeros((len(starts), granule), dtype=bool)
    byte_mask[group, offset] = True
    sectors = np.zeros(len(starts), dtype=np.int64)
    np.bitwise_or.at(sectors, group, np.int64(1) << (offset // SECTOR_BYTES))
    lane_mask = np.zeros(len(starts), dtype=np.int64)
    np.bitwise_or.at(lane_mask, group, np.int64(1) << lane)
    first_lane = np.full(len(starts), lanes, dtype=np.int64)
    np.minimum.at(first_lane, group, lane)
    group_beat, group_base = beat[starts], base[starts]
    issue = np.lexsort((group_base, first_lane, group_beat))
    return L2Requests(group_beat[issue], group_base[issue], sectors[issue], byte_mask[issue], lane_mask[issue],
                      t.beats(lanes), granule, operation)


#: Rows of one consumer read: ``ldmatrix`` reads an 8 x 8 matrix of 16-bit elements, 8
#: rows of 16 bytes, and ``wgmma`` reads its operands from shared memory in the same
#: 8-row core matrices (PTX ISA, "Warp-level matrix load instruction: ldmatrix" and
#: "Matrix Descriptor" of the asynchronous warpgroup MMA).
MATRIX_ROWS = 8


def matrix_read_wavefronts(t: Transactions) -> np.ndarray:
    """Wavefronts of each consumer read of a load's image: the 16 bytes at one chunk
    position of :data:`MATRIX_ROWS` consecutive rows (the copy's rows, ``t.row_chunks``
    chunks each; the last read of a column has the rows left), in the copy's order, the
    most distinct 4-byte words any bank holds among the read's bytes."""
    if not len(t):
        return np.zeros(0, dtype=np.int64)
    columns = t.row_chunks
    rows = len(t) // columns
    groups = -(-rows // MATRIX_ROWS)
    chunk = np.full((groups * MATRIX_ROWS, columns), -1, dtype=np.int64)
    chunk[:rows] = (t.smem_address.astype(np.int64) & ~np.int64(CHUNK_BYTES - 1)).reshape(rows, columns)
    # per read (a group of rows at one column): its chunks' 4-byte words
    chunk = chunk.reshape(groups, MATRIX_ROWS, columns).transpose(0, 2, 1).reshape(groups * columns, MATRIX_ROWS)
    words = (chunk[:, :, None] // BANK_BYTES + np.arange(CHUNK_BYTES // BANK_BYTES)).reshape(len(chunk), -1)
    words = np.where(np.repeat(chunk >= 0, CHUNK_BYTES // BANK_BYTES, axis=1), words, -1)
    words.sort(axis=1)
    distinct = (words >= 0) & np.concatenate([np.ones((len(words), 1), bool), words[:, 1:] != words[:, :-1]], axis=1)
    read = np.broadcast_to(np.arange(len(words))[:, None], words.shape)[distinct]
    per_bank = np.zeros((len(words), BANKS), dtype=np.int64)
    np.add.at(per_bank, (read, words[distinct] % BANKS), 1)
    return per_bank.max(axis=1)


def smem_wavefronts(t: Transactions, lanes: int, unit_smem_bytes: int, operation: Operation) -> np.ndarray:
    """Shared-memory wavefronts of each beat: the most distinct 4-byte words any bank
    holds among the beat's chunk bytes (a prefetch's: 0, it has none). A chunk's byte
    ``i`` is at ``smem & ~15 | (smem + i) & 15`` (the 8-byte flip's swapped halves)."""
    beats = t.beats(lanes)
    if operation == Operation.PREFETCH or not len(t):
        return np.zeros(beats, dtype=np.int64)
    smem = t.smem_address.astype(np.int64)
    i = np.arange(CHUNK_BYTES, dtype=np.int64)
    byte = (smem[:, None] & ~np.int64(CHUNK_BYTES - 1)) | ((smem[:, None] + i[None, :]) & (CHUNK_BYTES - 1))
    present = i[None, :] < (t.units * unit_smem_bytes)[:, None]
    beat = np.broadcast_to(t.places(lanes)[0][:, None], byte.shape)[present]
    words = np.unique(beat * (np.int64(1) << 40) + byte[present] // BANK_BYTES)
    word_beat, word = words >> 40, words & ((np.int64(1) << 40) - 1)
    per_bank = np.unique(word_beat * BANKS + word % BANKS, return_counts=True)
    result = np.zeros(beats, dtype=np.int64)
    np.maximum.at(result, per_bank[0] // BANKS, per_bank[1])
    return result


@dataclass(frozen=True)
class Memory:
    """A global memory and one SM's shared memory, as the copy unit sees them.

    ``latency``: cycles from a request's issue to its return; ``latency_spread``: each
    request's latency drawn uniformly from ``latency +- latency_spread`` (from ``seed``);
    ``in_flight``: requests outstanding at most (the credits); ``bytes_per_cycle``:
    sector bytes the request path moves a cycle (an integer, or with ``carry`` any number
    from 1 up: 36.5); ``carry``: a beat's part-used last cycle of the request path goes to
    the next beat rather than being rounded up (the module's rules); ``granule``: a
    request's bytes at most. The GPU around the SM (the module's rules): ``sms`` streaming
    at once; ``l2_bytes_per_cycle`` and ``hbm_bytes_per_cycle``, the whole GPU's (None: no
    limit past the request path); ``hit_rate``, the beats that hit in L2; ``miss_latency``,
    a miss's latency (None: ``latency``); ``coalesce``: the L2 coalescer's window in beats
    (0: none; :func:`coalesce_requests`). The SM around the unit (the module's rules):
    ``consumer_reads``, how many times a consumer reads each byte a load writes, in
    8-row matrix reads (0: no consumer); ``cluster_bytes_per_cycle``, the bytes a cycle
    the cluster carries from this SM's multicast loads to the other CTAs' shared memories
    (None: no limit)."""
    latency: int = 600
    in_flight: int = 256
    bytes_per_cycle: int | float | Fraction = SMEM_BYTES_PER_CYCLE
    latency_spread: int = 0
    seed: int = 0
    granule: int = LINE_BYTES
    carry: bool = False
    sms: int = 1
    l2_bytes_per_cycle: int | float | None = None
    hbm_bytes_per_cycle: int | float | None = None
    hit_rate: float = 1.0
    miss_latency: int | None = None
    coalesce: int = 0
    consumer_reads: int = 0
    cluster_bytes_per_cycle: int | float | None = None

    def __post_init__(self):
        if not isinstance(self.carry, bool):
            raise TmaError(ErrorCode.FIELD_TYPE, "memory.carry", repr(self.carry), "is not true or false")
        rate = self.bytes_per_cycle
        if isinstance(rate, (float, Fraction)):
            if not math.isfinite(rate):
                raise TmaError(ErrorCode.FIELD_TYPE, "memory.bytes_per_cycle", repr(rate), "is not a finite number")
            if rate == int(rate):                       # 36.0 is the integer 36
                object.__setattr__(self, "bytes_per_cycle", int(rate))
            elif rate < 1:
                raise TmaError(ErrorCode.ENUM_RANGE, "memory.bytes_per_cycle", rate, "is below 1")
            elif not self.carry:
                raise TmaError(ErrorCode.ENUM_RANGE, "memory.bytes_per_cycle", rate,
                               "is not a whole number, which only a request path with carry moves "
                               "(without it each beat takes whole cycles)")
            elif self.rate.denominator > MAX_RATE_DENOMINATOR:
                raise TmaError(ErrorCode.ENUM_RANGE, "memory.bytes_per_cycle", rate,
                               f"has a denominator past {MAX_RATE_DENOMINATOR} (six decimals at most): the "
                               "compiled run loop counts the request path in 64-bit parts of a cycle")
        whole = ("bytes_per_cycle",) if not isinstance(self.bytes_per_cycle, (float, Fraction)) else ()
        for name, low in (("latency", 1), ("in_flight", 1), ("latency_spread", 0), ("seed", 0),
                          ("granule", SECTOR_BYTES), ("coalesce", 0), ("consumer_reads", 0)) \
                + tuple((name, 1) for name in whole):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TmaError(ErrorCode.FIELD_TYPE, f"memory.{name}", repr(value), "is not an integer")
            if value < low:
                raise TmaError(ErrorCode.ENUM_RANGE, f"memory.{name}", value, f"is below {low}")
        self._check_gpu()
        if self.latency + self.latency_spread > MAX_LATENCY:
            raise TmaError(ErrorCode.ENUM_RANGE, "memory.latency", self.latency,
                           f"with its spread of {self.latency_spread} is past {MAX_LATENCY} cycles")
        if self.latency_spread >= self.latency:
            raise TmaError(ErrorCode.ENUM_RANGE, "memory.latency_spread", self.latency_spread,
                           f"is not below the latency, {self.latency}")
        _check_granule(self.granule)

    def _check_gpu(self):
        if not isinstance(self.sms, int) or isinstance(self.sms, bool) or self.sms < 1:
            raise TmaError(ErrorCode.ENUM_RANGE, "memory.sms", repr(self.sms), "is not a whole number from 1")
        for name in ("l2_bytes_per_cycle", "hbm_bytes_per_cycle", "cluster_bytes_per_cycle"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, Fraction))
                                      or not math.isfinite(value) or value < 1):
                raise TmaError(ErrorCode.ENUM_RANGE, f"memory.{name}", repr(value), "is not a number from 1")
            if value is not None and _exact(value).denominator > MAX_RATE_DENOMINATOR:
                raise TmaError(ErrorCode.ENUM_RANGE, f"memory.{name}", value, "has more than six decimals")
        if isinstance(self.hit_rate, bool) or not isinstance(self.hit_rate, (int, float)) \
                or not 0 <= self.hit_rate <= 1:
            raise TmaError(ErrorCode.ENUM_RANGE, "memory.hit_rate", repr(self.hit_rate), "is not from 0 to 1")
        miss = self.miss_latency
        if miss is not None and (not isinstance(miss, int) or isinstance(miss, bool)
                                 or not self.latency_spread < miss <= MAX_LATENCY - self.latency_spread):
            raise TmaError(ErrorCode.ENUM_RANGE, "memory.miss_latency", repr(miss),
                           f"is not a whole number of cycles above the spread, {self.latency_spread}, with "
                           f"the spread up to {MAX_LATENCY}")

    @property
    def shared(self) -> bool:
        """The GPU around the SM limits the request path (the module's rules)."""
        return (self.sms > 1 or self.l2_bytes_per_cycle is not None or self.hbm_bytes_per_cycle is not None
                or self.hit_rate < 1)

    @property
    def carries(self) -> bool:
        """The request path carries a part-used cycle to the next beat: ``carry``, or a
        path shared with the GPU."""
        return self.carry or self.shared

    @property
    def rate(self) -> Fraction:
        """``bytes_per_cycle`` exactly (a float as its decimal text reads: 36.6 is 183/5)."""
        return _exact(self.bytes_per_cycle)

    def rates(self) -> tuple[Fraction, Fraction]:
        """The request path's bytes a cycle for a beat that hits in L2 and for one that
        misses: the SM's own path, or its fair share of the L2 and the HBM if less."""
        hit = self.rate
        if self.l2_bytes_per_cycle is not None:
            hit = min(hit, _exact(self.l2_bytes_per_cycle) / self.sms)
        miss = hit
        if self.hbm_bytes_per_cycle is not None:
            miss = min(miss, _exact(self.hbm_bytes_per_cycle) / self.sms)
        return hit, miss


def _exact(rate) -> Fraction:
    """A rate exactly (a float as its decimal text reads: 36.6 is 183/5)."""
    return Fraction(rate) if isinstance(rate, (int, Fraction)) else Fraction(repr(rate))


#: The finest rate a request path with carry takes: ``bytes_per_cycle``'s denominator at
#: most a million, so that the compiled run loop's count of the path, in 64-bit units of
#: 1/numerator cycle, holds a run of 2^31 cycles.
MAX_RATE_DENOMINATOR = 10 ** 6
#: The largest granule taken: 1 KiB, 32 sectors, so a request's sector mask fits 32 bits
#: (the merge's masks are 64-bit integers, and a 2 KiB granule would set their sign bit).
MAX_GRANULE = 1024
#: The longest latency a memory takes, cycles: the compiled run loop's gate holds them as
#: 32-bit numbers, and a million cycles is three orders past any measured L2 or DRAM.
MAX_LATENCY = 1 << 20


def _check_granule(granule):
    if not SECTOR_BYTES <= granule <= MAX_GRANULE or granule & (granule - 1):
        raise TmaError(ErrorCode.ENUM_RANGE, "memory.granule", granule,
                       f"is not a power of two from {SECTOR_BYTES} to {MAX_GRANULE}")


@dataclass(frozen=True)
class MemoryRun:
    """What :func:`simulate` found. Per beat: ``departure`` (the cycle it left the unit and
    its requests issued), ``written`` (the cycle its shared-memory access began: a load's
    write, a store's read; -1 for a prefetch's); per request: ``issue`` and ``returned``
    cycles. ``cycles``: the cycle after the last write ended or the last request
    returned; ``smem_bytes``: bytes written to (or read from) shared memory."""
    departure: np.ndarray
    written: np.ndarray
    issue: np.ndarray
    returned: np.ndarray
    cycles: int
    smem_bytes: int
    stalled: int = field(default=0)     # cycles beats waited on the memory side

    def bytes_per_cycle(self) -> float:
        return self.smem_bytes / self.cycles if self.cycles else 0.0


class MemoryGate:
    """The memory's hold on the beat stream, beat by beat (the module's rules): the first
    cycle each beat may leave, given the beats before it. A beat's requests need credits,
    the request path must have moved the previous beat's sectors, and a store's or
    reduction's chunks wait for shared memory's read port; each of those only loosens
    with time, so a beat may leave in any cycle from :meth:`opens` on. The model's
    :func:`simulate` and the timing model (:func:`.timing.predict` with a gate) step it,
    and the co-simulation's run loop builds the same rules from its arrays
    (:meth:`arrays`): the latencies of the requests, drawn here once."""

    def __init__(self, requests_per_beat, sector_bytes, wavefronts, operations, memory: Memory):
        self.memory = memory
        self.requests = np.asarray(requests_per_beat, dtype=np.int64)
        sector_bytes = np.asarray(sector_bytes, dtype=np.int64)
        # which beats hit in L2 (all, unless the GPU around the SM says otherwise)
        self.hits = np.ones(len(sector_bytes), dtype=bool)
        if memory.hit_rate < 1:
            draw = np.random.default_rng([memory.seed, 1]).random(len(sector_bytes))
            self.hits = draw < memory.hit_rate
        # the request path in units of 1/U cycle: at p/q bytes a cycle, S sector bytes take
        # S * q * U / p units, an integer when U is a multiple of p (U: the rates' numerators'
        # least common multiple)
        hit_rate, miss_rate = memory.rates()
        self.units_per_cycle = math.lcm(hit_rate.numerator, miss_rate.numerator)
        per_byte = [r.denominator * self.units_per_cycle // r.numerator for r in (miss_rate, hit_rate)]
        self.path_units = [int(s) * per_byte[int(h)] for s, h in zip(sector_bytes, self.hits)]
        self.hold = np.maximum(1, -(-np.asarray(self.path_units, dtype=np.int64) // self.units_per_cycle))
        reads = np.array([Operation(int(op)).writes_global for op in operations], dtype=bool)
        self.reads = np.where(reads, np.asarray(wavefronts, dtype=np.int64), -1)    # -1: no read as it leaves
        total = int(self.requests.sum())
        if memory.latency_spread:
            rng = np.random.default_rng(memory.seed)
            self.latencies = rng.integers(memory.latency - memory.latency_spread,
                                          memory.latency + memory.latency_spread + 1, size=total)
        else:
            self.latencies = np.full(total, memory.latency, dtype=np.int64)
        if memory.miss_latency is not None and not self.hits.all():
            missed = np.repeat(~self.hits, self.requests)
            self.latencies = np.where(missed, self.latencies + (memory.miss_latency - memory.latency), self.latencies)
        if len(self.requests) and int(self.requests.max()) > memory.in_flight:
            raise TmaError(ErrorCode.ENUM_RANGE, "memory.in_flight", memory.in_flight,
                           f"is below the {int(self.requests.max())} requests of one beat "
                           f"(beat {int(self.requests.argmax())}), which issue together")
        self.outstanding = []       # return cycles of the requests in flight (a heap)
        self.earliest = 0           # the cycle after the previous beat's request path
        self.path_free = 0          # with carry: when the path has moved every sector so far, in units
        self.read_port = 0          # the first cycle shared memory's read port is free
        self.next_request = 0
        self.beat, self.threshold = -1, 0

    def opens(self, beat: int) -> int:
        """The first cycle beat ``beat``, the next to leave, may leave in (the same until
        it is taken); 0 for a beat past the gate's (it holds back only the beats it was
        made for, as the run loop's does)."""
        if beat >= len(self.requests):
            return 0
        if beat != self.beat:
            t, count = self.earliest, int(self.requests[beat])
            while len(self.outstanding) + count > self.memory.in_flight:
                t = max(t, heapq.heappop(self.outstanding) + 1)         # a credit, the cycle after its return
            if self.reads[beat] >= 0:
                t = max(t, self.read_port)
            self.beat, self.threshold = beat, t
        return self.threshold

    def take(self, beat: int, cycle: int):
        """Beat ``beat`` leaves in ``cycle``: its requests issue, each coming back its
        latency later."""
        if beat >= len(self.requests):
            return
        first, count = self.next_request, int(self.requests[beat])
        for latency in self.latencies[first:first + count]:
            heapq.heappush(self.outstanding, cycle + int(latency))
        self.next_request += count
        if self.memory.carries:
            start = max(cycle * self.units_per_cycle, self.path_free)
            self.path_free = start + self.path_units[beat]
            self.earliest = max(cycle + 1, self.path_free // self.units_per_cycle)
        else:
            self.earliest = cycle + int(self.hold[beat])
        if self.reads[beat] >= 0:
            self.read_port = cycle + int(self.reads[beat])
        self.beat = -1

    def arrays(self) -> dict:
        """The gate as arrays, for the compiled run loop: per beat its requests, the cycles
        its sectors hold the request path (``hold``; with ``carry``, ``path``: units of
        1/``units_per_cycle`` cycle, and ``units_per_cycle`` 0 without), its read-port
        cycles (-1: none); per request its latency; the credits."""
        carry = self.memory.carries
        return {"requests": self.requests, "hold": self.hold, "reads": self.reads, "latencies": self.latencies,
                "path": np.asarray(self.path_units if carry else [], dtype=np.int64),
                "units_per_cycle": self.units_per_cycle if carry else 0, "in_flight": self.memory.in_flight}


def coalesce_requests(listed, beats: int, window: int):
    """Per beat, the requests that reach the memory, their sector bytes, and the earlier
    requests (indices in issue order) whose returns the beat's coalesced sectors wait for;
    and the requests that reach the memory as :class:`IssuedRequests`. ``listed``: each
    copy's requests in issue order, ``(beat, granule address, sector mask, operation)`` arrays;
    ``beats``: the beats in all. With ``window`` > 0 the L2's coalescer takes a read
    (a load's or a prefetch's) sector that a request of the last ``window`` beats, this
    one's included, already asked for from the same granule: the sector is not asked for
    again, and the beat's data waits for that request's return; a request left with no
    sector is not made. Stores and reductions are never coalesced."""
    requests = np.zeros(beats, dtype=np.int64)
    sector_bytes = np.zeros(beats, dtype=np.int64)
    merged_into = [[] for _ in range(beats)]
    recent = {}             # granule -> [(beat, request index, sectors)] of the kept requests
    kept = 0
    issued = ([], [], [])   # address, sector mask, writes, of each kept request
    for beat_of, address, sectors, operation in listed:
        reads = window > 0 and not operation.writes_global
        for b, a, s in zip(beat_of.tolist(), address.tolist(), sectors.tolist()):
            if reads:
                earlier = [r for r in recent.get(a, ()) if r[0] > b - window]
                recent[a] = earlier
                covered = 0
                for _, index, asked in earlier:
                    if s & asked:
                        merged_into[b].append(index)
                    covered |= asked
                s &= ~covered
                if not s:
                    continue
                earlier.append((b, kept, s))
            requests[b] += 1
            sector_bytes[b] += bin(s).count("1") * SECTOR_BYTES
            kept += 1
            for column, value in zip(issued, (a, s, operation.writes_global)):
                column.append(value)
    return requests, sector_bytes, merged_into, IssuedRequests(*(np.array(c, dtype=np.int64) for c in issued))


@dataclass(frozen=True)
class IssuedRequests:
    """The L2 requests that reach the memory, in issue order: each one's granule address,
    sector mask and whether it writes (a store's or reduction's)."""
    address: np.ndarray
    sectors: np.ndarray
    writes: np.ndarray

    def trace_lines(self, issue) -> list[str]:
        """DRAMsim3's trace format, a line per sector requested: the sector's address in
        hex, ``READ`` or ``WRITE``, and the cycle its request issued (``issue``, per
        request: :attr:`MemoryRun.issue`)."""
        lines = []
        for address, sectors, writes, cycle in zip(self.address.tolist(), self.sectors.tolist(),
                                                   self.writes.tolist(), np.asarray(issue).tolist(), strict=True):
            kind = "WRITE" if writes else "READ"
            lines += [f"{address + SECTOR_BYTES * s:#x} {kind} {cycle}"
                      for s in range(MAX_GRANULE // SECTOR_BYTES) if sectors >> s & 1]
        return lines


def memory_run(gate: MemoryGate, departure, wavefronts, operations, smem_bytes: int, stalled: int = 0,
               merged_into=None, copy_index=None, multicast_ctas=None, beat_bytes=None,
               consumer_wavefronts=None) -> MemoryRun:
    """What follows from the beats' departures (each beat's requests issue as it leaves):
    every request's return, each beat's shared-memory access (a store's or reduction's
    read as it left; a load's write once its last request is back, and the requests its
    coalesced sectors wait for (``merged_into``, per beat: earlier requests' indices),
    beats in the order their data is complete, one port) and the run's end. Per beat,
    optional (the module's rules, "The SM around the unit"): the copy it belongs to
    (``copy_index``), the CTAs a load's data lands in (``multicast_ctas``, 1 without
    multicast), its shared-memory bytes in one CTA (``beat_bytes``: the cluster carries
    them to the others) and the wavefronts of the consumer's reads of its copy, once per
    byte (``consumer_wavefronts``, summed over the copy's beats), which the port serves
    after the copy's last beat to be written."""
    departure = np.asarray(departure, dtype=np.int64)
    beats = len(departure)
    operations = np.asarray(operations, dtype=np.int64)
    issue = np.repeat(departure, gate.requests)
    returned = issue + gate.latencies
    written = np.where(gate.reads >= 0, departure, -1)
    read_end = int((departure + gate.reads)[gate.reads >= 0].max()) if (gate.reads >= 0).any() else 0
    end = max(int(returned.max()) + 1 if len(returned) else 0, read_end, int(departure[-1]) + 1 if beats else 0)
    loads = np.flatnonzero(operations == Operation.LOAD)
    if len(loads):
        last_return = np.full(beats, -1, dtype=np.int64)
        np.maximum.at(last_return, np.repeat(np.arange(beats), gate.requests), returned)
        for i, waits in enumerate(merged_into or ()):
            if waits:
                last_return[i] = max(int(last_return[i]), int(returned[waits].max()))
        complete = np.where(last_return >= 0, last_return + 1, departure + 1)
        ctas = np.ones(beats, dtype=np.int64) if multicast_ctas is None else np.asarray(multicast_ctas)
        consumer_reads = gate.memory.consumer_reads if consumer_wavefronts is not None else 0
        if consumer_reads:
            copy_of = np.asarray(copy_index, dtype=np.int64)
            reads_of_copy = np.bincount(copy_of, np.asarray(consumer_wavefronts), copy_of.max() + 1).astype(np.int64)
            beats_left = np.bincount(copy_of[loads], minlength=len(reads_of_copy))
        cluster = gate.memory.cluster_bytes_per_cycle
        write_port, cluster_free = 0, Fraction(0)
        for i in loads[np.lexsort((loads, complete[loads]))]:
            written[i] = max(int(complete[i]), write_port)
            write_port = int(written[i]) + int(ctas[i]) * int(wavefronts[i])
            if consumer_reads:
                beats_left[copy_of[i]] -= 1
                if not beats_left[copy_of[i]]:          # the copy's whole box is in: its mbarrier completes
                    write_port += int(ctas[i]) * consumer_reads * int(reads_of_copy[copy_of[i]])
            if cluster is not None and ctas[i] > 1:
                cluster_free = max(Fraction(int(complete[i])), cluster_free) \
                    + (int(ctas[i]) - 1) * int(beat_bytes[i]) / _exact(cluster)
        end = max(end, write_port, math.ceil(cluster_free))
    return MemoryRun(departure, written, issue, returned, end, smem_bytes, stalled)


def simulate(ready, requests_per_beat, sector_bytes, wavefronts, operations, smem_bytes: int,
             memory: Memory, merged_into=None, **after) -> MemoryRun:
    """The memory side of a beat sequence (the module's rules). Per beat: ``ready``, the
    cycle the unit has it ready; its requests, their sector bytes, its wavefronts and its
    request's :class:`.types.Operation`. ``smem_bytes``: the bytes the beats write to or
    read from shared memory (for the run's bandwidth). A load's writes and a store's or
    reduction's reads are taken as two ports (a sequence of one kind uses one). Each beat
    leaves at the first cycle at or after its ``ready`` and its predecessor's next in
    which the gate (:class:`MemoryGate`) is open. ``after``: :func:`memory_run`'s
    per-beat multicast and consumer arrays."""
    gate = MemoryGate(requests_per_beat, sector_bytes, wavefronts, operations, memory)
    departure = np.zeros(len(ready), dtype=np.int64)
    stalled = 0
    for i in range(len(ready)):
        unit_ready = max(int(ready[i]), gate.earliest)
        departure[i] = max(unit_ready, gate.opens(i))
        stalled += int(departure[i]) - unit_ready
        gate.take(i, int(departure[i]))
    return memory_run(gate, departure, wavefronts, operations, smem_bytes, stalled, merged_into, **after)
