"""The SM's side of a TMA instruction, before the copy unit takes it: the issue cost and
the descriptor fetch (docs/memory.md, "Issue and descriptor fetch").

A kernel's thread issues copy instructions one after another. Instruction ``i`` reaches
the unit ``issue_cycles`` after instruction ``i - 1`` was accepted (the thread's turn:
wait, arm the barrier, issue), and, when its tensor map is not in the SM's descriptor
cache, ``fetch_latency`` cycles later still: the 128-byte map is read from memory first.
The cache holds ``descriptor_cache`` maps, least recently used first out; a map named by
``prefetched`` was brought in by ``prefetch.tensormap`` before the first use and is
fetched only if it has been evicted since. The unit's requests name a descriptor slot, so
a slot stands for one map here.

The effect on the unit is the idle cycles before each request, counted from the cycle
after the previous one was taken: the timing model's and the compiled run loop's
``gaps``, so the timing model predicts the RTL behind an issuer cycle for cycle. The
completion reaches the mbarrier ``mbarrier_latency`` cycles after the unit offers it.

Defaults from the H200 measurements (docs/memory.md, "Measured on an H200"): a map the
SM has not used costs about 420 cycles; four issuing threads take a load every 75 cycles.
"""

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .errors import ErrorCode, TmaError

__all__ = ["Issuer", "H200_FETCH_CYCLES"]

#: A tensor map the SM has not used, H200: 855 cycles against 432 for one it has.
H200_FETCH_CYCLES = 420


@dataclass(frozen=True)
class Issuer:
    """How requests reach the unit (the module's rules). ``descriptor_cache``: maps held
    (None: every map held, no fetch ever); ``prefetched``: the slots whose maps are
    prefetched before their first use."""
    issue_cycles: int = 0
    descriptor_cache: int | None = None
    fetch_latency: int = H200_FETCH_CYCLES
    prefetched: tuple = ()
    mbarrier_latency: int = 0

    def __post_init__(self):
        for name, low in (("issue_cycles", 0), ("fetch_latency", 0), ("mbarrier_latency", 0)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise TmaError(ErrorCode.ENUM_RANGE, f"issuer.{name}", repr(value), f"is not a whole number from {low}")
        cache = self.descriptor_cache
        if cache is not None and (not isinstance(cache, int) or isinstance(cache, bool) or cache < 0):
            raise TmaError(ErrorCode.ENUM_RANGE, "issuer.descriptor_cache", repr(cache),
                           "is not a whole number of maps from 0")

    def misses(self, slots) -> np.ndarray:
        """For each request (the slot it names, in order), whether its map is fetched."""
        slots = list(slots)
        if self.descriptor_cache is None:
            return np.zeros(len(slots), dtype=bool)
        held = OrderedDict()        # least recently used first

        def use(slot) -> bool:
            hit = slot in held
            held[slot] = None
            held.move_to_end(slot)
            if len(held) > self.descriptor_cache:
                held.popitem(last=False)
            return hit

        for slot in self.prefetched:
            use(slot)
        return np.array([not use(slot) for slot in slots], dtype=bool)

    def gaps(self, requests: list) -> np.ndarray:
        """Idle cycles before each request (hardware field dicts, each naming its
        ``slot``), from the cycle after the previous one was taken."""
        missed = self.misses([r["slot"] for r in requests])
        return (self.issue_cycles + np.where(missed, self.fetch_latency, 0)).astype(np.int64)

    def arrivals(self, completion_cycles) -> np.ndarray:
        """The cycle each completion reaches its mbarrier."""
        return np.asarray(completion_cycles, dtype=np.int64) + self.mbarrier_latency
