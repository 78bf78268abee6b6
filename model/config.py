"""The unit's configuration: the one object the model, the RTL, the exporter and the
explorer all read (lanes, descriptor slots, address widths, shared-memory size).
"""

from dataclasses import dataclass, asdict, fields

from .errors import ErrorCode, TmaError
from .tensormap import parse_int

__all__ = ["UnitConfig", "HOPPER_SMEM_BYTES"]

#: Shared memory of one Hopper SM usable by a thread block: 227 KB of the 228 KB per SM
#: (NVIDIA Hopper Tuning Guide, "Shared Memory"). The unit checks boxes against this.
HOPPER_SMEM_BYTES = 227 * 1024


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
        Completions the unit can hold while the completion stream is not ready.
    """
    lanes: int = 1
    slots: int = 8
    address_width: int = 64
    smem_bytes: int = HOPPER_SMEM_BYTES
    id_width: int = 16
    completion_depth: int = 4

    def __post_init__(self):
        for f in fields(self):          # ints only: lanes=True or 1.0 is no lane count
            object.__setattr__(self, f.name, parse_int(getattr(self, f.name), f"config.{f.name}"))
        checks = [
            ("lanes", self.lanes in (1, 2, 4, 8), "is not 1, 2, 4 or 8"),
            ("slots", 1 <= self.slots <= 32 and self.slots & (self.slots - 1) == 0,
             "is not a power of two in 1..32 (one SLOT_VALID register)"),
            ("address_width", 32 <= self.address_width <= 64, "is outside 32..64"),
            ("smem_bytes", 0 < self.smem_bytes <= (1 << 24) and self.smem_bytes % 1024 == 0,
             "is not a multiple of 1024 in 1 KiB..16 MiB"),
            ("id_width", 1 <= self.id_width <= 16, "is outside 1..16"),
            ("completion_depth", 1 <= self.completion_depth <= 64, "is outside 1..64"),
        ]
        for name, ok, detail in checks:
            if not ok:
                raise TmaError(ErrorCode.ENUM_RANGE, f"config.{name}", getattr(self, name), detail)

    @property
    def smem_address_width(self) -> int:
        """Bits of a shared-memory address inside the unit."""
        return max(1, (self.smem_bytes - 1).bit_length())

    def to_dict(self) -> dict:
        return asdict(self)
