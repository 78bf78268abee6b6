"""The compiled units the suite builds, and how their tests share them.

A compiled unit costs far more to elaborate and build than most tests that run on it
take (bench/build_speed.py; the suite's summary prints each build's seconds).
So the suite builds few configurations, each once for the whole run on each backend, and
a test that needs "some unit with the least queues" takes one that is built anyway:

- ``DEFAULT``: the default unit, lanes 1 and 8;
- ``OPTIONS``: every option that changes a block of its own, built together at lanes 1
  and 8, so that one build of each backend and lane count checks them all: access modes
  and swizzles left out (the walker, the front end's checks: gather4 without the pixel
  walk at lanes 1, the im2col family without gather4 at lanes 8, Hopper's swizzles
  alone), addresses made by stepping (the walker), the request former (the datapath's
  back end), the least beat and completion queues such a unit may have (14 and 3: the
  datapath's queues), the rules checked at commit (the descriptor file, the front end),
  a request interval of 1 (the front end's skid register);
- for the timing model's queue tests under Verilator, whose lanes-1 builds are the
  cheapest: ``LEAST``, every mode on the least queues of a unit without a former (9 and
  3), and ``DEEP``, queues deeper than the default (40 beats, not a power of two; 12
  completions);
- ``LANES4``, the default unit at lanes 4, under Verilator.

Every test of one unit carries its :func:`group`, so pytest-xdist's ``loadgroup``
(pyproject.toml) runs them on one worker: the worker that builds the unit uses it, and no
other worker waits for the build. The builds themselves are once per run whichever
process asks (``tma_unit.sim.native.build_once``), and tests/conftest.py schedules the
groups of the largest units first. Each is built with the flags that make its tests
cheapest (:func:`optimize`).
"""

import pytest

from tma_unit.model.config import BEAT_QUEUE_RANGE, COMPLETION_DEPTH_RANGE, FORMER_STAGES, UnitConfig
from tma_unit.sim.ledger import describe

#: The default unit at lanes 1 and 8.
DEFAULT = {lanes: UnitConfig(lanes=lanes) for lanes in (1, 8)}

#: Every option with a block of its own, at lanes 1 and 8: some modes and the sm_100
#: swizzles left out, step addressing, a 128-byte request former, the least queues a unit
#: with a former may have, the rules at commit, a request interval of 1.
OPTIONS = {lanes: UnitConfig(lanes=lanes, modes=modes, swizzles="sm90", addressing="step", request_former=128,
                             beat_queue=BEAT_QUEUE_RANGE[0] + FORMER_STAGES,
                             completion_depth=COMPLETION_DEPTH_RANGE[0], checks="at_commit", request_interval=1)
           for lanes, modes in ((1, "tiled+gather4"), (8, "tiled+im2col+im2col_w"))}

#: Every mode on the least queues of a unit without a request former, at lanes 1.
LEAST = UnitConfig(beat_queue=BEAT_QUEUE_RANGE[0], completion_depth=COMPLETION_DEPTH_RANGE[0])

#: Queues deeper than the default, at lanes 1: 40 beats (past one LUT RAM's 16 entries,
#: and not a power of two: its pointers wrap at 40) and 12 completions.
DEEP = UnitConfig(beat_queue=40, completion_depth=12)

#: The default unit at lanes 4.
LANES4 = UnitConfig(lanes=4)



def built(backend: str) -> tuple:
    """The units the suite builds on ``backend``, the cheapest first."""
    verilator_only = (LEAST, DEEP, LANES4) if backend == "verilator" else ()
    return (DEFAULT[1], OPTIONS[1], *verilator_only, DEFAULT[8], OPTIONS[8])

#: The CXXRTL units that run campaigns, built at the default -O1: their C++ takes longer
#: to compile than at -O0 and runs much faster (bench/build_speed.py). The others run a
#: few scenarios each and are built at -O0.
CAMPAIGNED = (DEFAULT[1], OPTIONS[1], OPTIONS[8])


def optimize(backend: str, config: UnitConfig) -> str | None:
    """The compiler flags of ``config``'s unit on ``backend`` in the suite (None: the
    default, -O1)."""
    return "-O0" if backend == "cxxrtl" and config not in CAMPAIGNED else None


def group(backend: str, config: UnitConfig) -> str:
    """The xdist group of the tests that run on ``config``'s unit on ``backend``."""
    return f"{backend} {describe(config)}"


def on(backend: str, config: UnitConfig, *more, id=None):
    """A parameter set ``(backend, config, *more)`` for a test on that compiled unit, in
    the unit's :func:`group`."""
    return pytest.param(backend, config, *more, marks=pytest.mark.xdist_group(group(backend, config)),
                        id=id or f"{backend}-{describe(config).replace(' ', '-')}")


def grouped(backend: str, config: UnitConfig):
    """The mark that puts a test in the group of ``config``'s unit on ``backend``."""
    return pytest.mark.xdist_group(group(backend, config))
