"""The unit's configuration: the one object the model, the RTL, the exporter and the
explorer all read (lanes, descriptor slots, address widths, shared-memory size, the
access modes and swizzles built).
"""

from dataclasses import dataclass, asdict

from .errors import ErrorCode, TmaError
from .memory import LINE_BYTES, MAX_GRANULE
from .tensormap import parse_int
from .types import AccessMode, Swizzle

__all__ = ["UnitConfig", "HOPPER_SMEM_BYTES", "MODE_FAMILIES", "ALL_MODES", "SWIZZLE_SETS", "ADDRESSING", "CHECKS",
           "REQUEST_INTERVALS", "BEAT_QUEUE_RANGE", "COMPLETION_DEPTH_RANGE", "FORMER_STAGES", "FORMER_GRANULE_RANGE"]

#: Shared memory of one Hopper SM usable by a thread block: 227 KB of the 228 KB per SM
#: (NVIDIA Hopper Tuning Guide, "Shared Memory"). The unit checks boxes against this.
HOPPER_SMEM_BYTES = 227 * 1024

#: The families of access modes a unit can be built with (``UnitConfig.modes``), each
#: with the request modes its walk serves. The tiled walk is the base every other family
#: extends (gather4 picks a box row per digit, the im2col family adds the pixel walk), so
#: every unit builds it.
MODE_FAMILIES = {
    "tiled": (AccessMode.TILE,),
    "gather4": (AccessMode.GATHER4, AccessMode.SCATTER4),
    "im2col": (AccessMode.IM2COL,),
    "im2col_w": (AccessMode.IM2COL_W, AccessMode.IM2COL_W_128),
}
#: ``UnitConfig.modes`` with every family: the default.
ALL_MODES = "+".join(MODE_FAMILIES)

#: The sets of swizzles a unit can be built with (``UnitConfig.swizzles``): ``sm90``,
#: Hopper's four modes at 16-byte atomicity; ``all`` adds sm_100's atomicities (32B, 32B
#: with the 8-byte flip, 64B) and the 96B mode (PTX 5.5.7, Table 14).
SWIZZLE_SETS = {
    "sm90": (Swizzle.NONE, Swizzle.B32, Swizzle.B64, Swizzle.B128),
    "all": tuple(Swizzle),
}

#: How the unit makes a chunk's global address (``UnitConfig.addressing``):
#: ``multiply``, each beat multiplies its row's coordinates by the strides;
#: ``step``, each beat adds to the last row address a delta prepared once per job, and the
#: few products a job needs are made once, at its set-up (docs/addressing.md). The
#: model's semantics are the same for both.
ADDRESSING = ("multiply", "step")

#: Where the unit checks the rules that depend on the descriptor alone
#: (``UnitConfig.checks``): ``per_request``, every request checks every rule and derives
#: the descriptor's products in the front end; ``at_commit``, a small sequential checker
#: does that once, when software sets the slot's SLOT_VALID bit, and stores the first
#: broken rule beside the slot, so a request checks only the rules that involve it
#: (docs/commit.md). The codes a request completes with are the same for both.
CHECKS = ("per_request", "at_commit")

#: The least cycles between two jobs the front end hands the walker
#: (``UnitConfig.request_interval``): 1, a job every cycle, which takes a job register
#: after the last stage and a skid register beside it so that the front end's stages
#: move on a registered enable; 2 (the default), a job every other cycle: the last stage
#: is the job register and the stages before it wait while it holds a job, so neither
#: register is needed and the latency is a cycle less, and one job waits for the walker,
#: not two (docs/architecture.md, "Timing"). The walker spends a cycle on each beat of a
#: job, so a request of two beats or more runs at full rate either way, as every request
#: of the workload suite does at every lane count (docs/exploration.md).
REQUEST_INTERVALS = (1, 2)

#: Entries the beat queue may have (``UnitConfig.beat_queue``). The least is the records
#: that can be on their way to the queue when its head stops (the walk register, six
#: datapath stages, the record the walker emits and the one it may emit: model/timing.py's
#: ``BACK_END_STAGES + 1``), so that a queue of any allowed depth gives a beat at every
#: ready cycle while the walker has work; more entries let the walker finish jobs, and
#: the front end take requests, while the beat stream is stalled (docs/queues.md).
BEAT_QUEUE_RANGE = (9, 256)

#: Registers a request former adds in front of the beat queue: its five stages
#: (rtl/request_former.py). A unit built with one needs that many more beat-queue
#: entries, for the same reason as above.
FORMER_STAGES = 5
#: The request former's granules (``UnitConfig.request_former``), bytes: a power of two
#: from one L2 line (a chunk's bytes span less than 128, so it touches two granules at
#: most) to the memory model's largest, 1 KiB.
FORMER_GRANULE_RANGE = (LINE_BYTES, MAX_GRANULE)

#: Entries the completion queue may have (``UnitConfig.completion_depth``). A completion
#: written to it is offered two cycles later (model/timing.py's ``COMPLETION_LATENCY``:
#: the queue's memory, then its output register), so with completions written one a
#: cycle and taken as soon as offered, two are inside; the least is one more, so that
#: the beat queue's head never waits for room while the completion stream keeps up. More
#: entries ride out longer stalls of the completion stream.
COMPLETION_DEPTH_RANGE = (3, 64)


@dataclass(frozen=True)
class UnitConfig:
    """Parameters of one copy unit.

    Parameters
    ----------
    lanes : int
        16-byte chunks emitted per cycle: 1, 2, 4 or 8 (8 lanes = 128 B/cycle, the
        shared-memory bandwidth of one Hopper SM).
    slots : int
        Descriptor (tensor-map) slots in the register file.
    address_width : int
        Bits of a global address; a tensor whose bytes would pass 2^address_width is
        refused (ADDRESS_WRAP).
    smem_bytes : int
        Shared memory the unit may write; a box past it is refused (SMEM_BOUNDS). A
        multiple of 1024, so a swizzle never moves a chunk past it.
    id_width : int
        Bits of a request id.
    completion_depth : int
        Completions the unit can hold while the completion stream is not ready
        (:data:`COMPLETION_DEPTH_RANGE`).
    beat_queue : int
        Entries of the beat queue, the records that wait for the beat stream
        (:data:`BEAT_QUEUE_RANGE`).
    modes : str
        The access-mode families built (:data:`MODE_FAMILIES`), joined by ``+``, ``tiled``
        among them (``"all"`` for every one); a request of a mode not built completes
        with MODE_NOT_BUILT.
    swizzles : str
        The swizzles built (:data:`SWIZZLE_SETS`): ``all`` or ``sm90``; a request on a map
        whose swizzle is not built completes with SWIZZLE_NOT_BUILT.
    addressing : str
        How global addresses are made (:data:`ADDRESSING`): ``multiply`` or ``step``.
    checks : str
        Where the descriptor's rules are checked (:data:`CHECKS`): ``per_request`` or
        ``at_commit``.
    request_former : int
        0: no request former. Otherwise the granule, in bytes, of the request former
        built in front of the beat queue (:data:`FORMER_GRANULE_RANGE`): every beat then
        carries its L2 requests, one per aligned granule its in-bounds bytes touch
        (docs/memory.md).
    request_interval : int
        The least cycles between two jobs leaving the front end (:data:`REQUEST_INTERVALS`):
        1 or 2 (the default). With 2 the front end's last stage is its job register (no
        job register of its own, no skid register, a cycle less latency); a stream of
        one-beat or rejected requests then runs at one request every other cycle.
    """
    lanes: int = 1
    slots: int = 8
    address_width: int = 64
    smem_bytes: int = HOPPER_SMEM_BYTES
    id_width: int = 16
    completion_depth: int = 4
    beat_queue: int = 16
    modes: str = ALL_MODES
    swizzles: str = "all"
    addressing: str = "multiply"
    checks: str = "per_request"
    request_former: int = 0
    request_interval: int = 2

    def __post_init__(self):
        for name in _INT_FIELDS:        # ints only: lanes=True or 1.0 is no lane count
            object.__setattr__(self, name, parse_int(getattr(self, name), f"config.{name}"))
        self._parse_modes()
        if not isinstance(self.swizzles, str):
            raise TmaError(ErrorCode.FIELD_TYPE, "config.swizzles", repr(self.swizzles), "is not a string")
        if self.swizzles not in SWIZZLE_SETS:
            raise TmaError(ErrorCode.ENUM_RANGE, "config.swizzles", self.swizzles,
                           f"is not one of {', '.join(SWIZZLE_SETS)}")
        for name, choices in (("addressing", ADDRESSING), ("checks", CHECKS)):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TmaError(ErrorCode.FIELD_TYPE, f"config.{name}", repr(value), "is not a string")
            if value not in choices:
                raise TmaError(ErrorCode.ENUM_RANGE, f"config.{name}", value, f"is not one of {', '.join(choices)}")
        ranges = [
            ("lanes", self.lanes in (1, 2, 4, 8), "is not 1, 2, 4 or 8"),
            ("slots", 1 <= self.slots <= 32 and self.slots & (self.slots - 1) == 0,
             "is not a power of two in 1..32 (one SLOT_VALID register)"),
            ("address_width", 32 <= self.address_width <= 64, "is outside 32..64"),
            ("smem_bytes", 0 < self.smem_bytes <= (1 << 24) and self.smem_bytes % 1024 == 0,
             "is not a multiple of 1024 in 1 KiB..16 MiB"),
            ("id_width", 1 <= self.id_width <= 16, "is outside 1..16"),
            ("completion_depth", COMPLETION_DEPTH_RANGE[0] <= self.completion_depth <= COMPLETION_DEPTH_RANGE[1],
             "is outside {}..{}".format(*COMPLETION_DEPTH_RANGE)),
            ("request_former", self.request_former == 0 or (
                FORMER_GRANULE_RANGE[0] <= self.request_former <= FORMER_GRANULE_RANGE[1]
                and self.request_former & (self.request_former - 1) == 0),
             "is not 0 (none) or a power of two from {} to {} bytes".format(*FORMER_GRANULE_RANGE)),
            ("request_interval", self.request_interval in REQUEST_INTERVALS,
             f"is not {' or '.join(map(str, REQUEST_INTERVALS))}"),
            ("beat_queue", self.least_beat_queue <= self.beat_queue <= BEAT_QUEUE_RANGE[1],
             f"is outside {self.least_beat_queue}..{BEAT_QUEUE_RANGE[1]}"
             + (f" (a request former's {FORMER_STAGES} stages add to the least)" if self.request_former else "")),
        ]
        for name, ok, detail in ranges:
            if not ok:
                raise TmaError(ErrorCode.ENUM_RANGE, f"config.{name}", getattr(self, name), detail)

    def _parse_modes(self):
        """``modes`` in the canonical order of :data:`MODE_FAMILIES`, or ENUM_RANGE."""
        given = self.modes
        if not isinstance(given, str):
            raise TmaError(ErrorCode.FIELD_TYPE, "config.modes", repr(given), "is not a string")
        names = list(MODE_FAMILIES) if given == "all" else given.split("+")
        unknown = [name for name in names if name not in MODE_FAMILIES]
        if unknown or "tiled" not in names:
            raise TmaError(ErrorCode.ENUM_RANGE, "config.modes", given,
                           f"is not 'all' or families of {', '.join(MODE_FAMILIES)} joined by '+', tiled among them")
        object.__setattr__(self, "modes", "+".join(name for name in MODE_FAMILIES if name in names))

    @property
    def built_modes(self) -> frozenset:
        """The request modes the unit serves."""
        return frozenset(mode for name in self.modes.split("+") for mode in MODE_FAMILIES[name])

    @property
    def built_swizzles(self) -> frozenset:
        """The swizzles (driver values) the unit serves."""
        return frozenset(SWIZZLE_SETS[self.swizzles])

    @property
    def builds_every_mode(self) -> bool:
        return self.built_modes == frozenset(AccessMode)

    @property
    def builds_every_swizzle(self) -> bool:
        return self.built_swizzles == frozenset(Swizzle)

    def builds(self, family: str) -> bool:
        """Whether the access-mode family ``family`` (:data:`MODE_FAMILIES`) is built."""
        return family in self.modes.split("+")

    @property
    def builds_im2col_family(self) -> bool:
        """Whether a mode whose rows are pixels (im2col, im2col::w, ::w::128) is built."""
        return self.builds("im2col") or self.builds("im2col_w")

    @property
    def steps_addresses(self) -> bool:
        """Whether beats step their row addresses by deltas (``addressing == "step"``)."""
        return self.addressing == "step"

    @property
    def checks_at_commit(self) -> bool:
        """Whether the descriptor's rules are checked when a slot is committed (``checks ==
        "at_commit"``), not by every request."""
        return self.checks == "at_commit"

    @property
    def least_beat_queue(self) -> int:
        """The fewest beat-queue entries this unit may have: :data:`BEAT_QUEUE_RANGE`'s
        least, and :data:`FORMER_STAGES` more with a request former (the records on their
        way to the queue when its head stops)."""
        return BEAT_QUEUE_RANGE[0] + (FORMER_STAGES if self.request_former else 0)

    @property
    def smem_address_width(self) -> int:
        """Bits of a shared-memory address inside the unit."""
        return max(1, (self.smem_bytes - 1).bit_length())

    def to_dict(self) -> dict:
        return asdict(self)


#: The fields that hold integers (the others name what is built).
_INT_FIELDS = ("lanes", "slots", "address_width", "smem_bytes", "id_width", "completion_depth", "beat_queue",
               "request_former", "request_interval")
