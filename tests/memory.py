"""Measuring what a model call allocates, for the tests that a call stays small: Python's
``tracemalloc`` (numpy reports its arrays to it) gives a deterministic peak, and a cap on
the address space turns a call that would allocate gigabytes into a MemoryError instead
of taking the machine's memory."""

import tracemalloc
from contextlib import contextmanager

__all__ = ["peak_bytes"]


@contextmanager
def _address_space_cap(extra):
    """Cap the process's address space ``extra`` bytes above its size (Linux; elsewhere
    no cap)."""
    try:
        import resource
        with open("/proc/self/statm") as statm:
            size = int(statm.read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError):
        yield
        return
    cap = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def peak_bytes(call, cap=1 << 30):
    """``call()``'s result and the most memory Python and numpy held during it, with the
    address space capped ``cap`` bytes above its size."""
    tracemalloc.start()
    try:
        with _address_space_cap(cap):
            result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
