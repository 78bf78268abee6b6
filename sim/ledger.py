"""A record of what a run built and checked: each compiled unit with the seconds its build
took, each scenario checked in lockstep with the model (on which backend, which
configuration), each proof. It is off unless ``$TMA_UNIT_LEDGER`` names a file; then every
process of the run (pool workers, test workers, cluster workers on this machine) appends
one JSON line per event to it. The test suite sets it and prints a summary at its end
(tests/conftest.py), so a run says where its time went and how much it checked.
"""

import json
import os
from dataclasses import fields

from ..model.config import UnitConfig

__all__ = ["LEDGER_ENV", "note", "describe", "read"]

#: The environment variable naming the ledger file.
LEDGER_ENV = "TMA_UNIT_LEDGER"


def describe(config: UnitConfig) -> str:
    """``config`` as its fields that differ from the default (``"lanes=8 slots=8"``;
    ``"default"`` for none): short, and equal for equal configurations."""
    default = UnitConfig()
    changed = [f"{f.name}={getattr(config, f.name)}" for f in fields(UnitConfig)
               if getattr(config, f.name) != getattr(default, f.name)]
    return " ".join(changed) or "default"


def note(kind: str, **event):
    """Append one event (``kind`` and ``event``'s fields) to the ledger, if there is one.
    One ``write`` of one line to a file opened for appending: lines from processes
    writing at once do not interleave."""
    path = os.environ.get(LEDGER_ENV)
    if not path:
        return
    line = json.dumps({"kind": kind, "pid": os.getpid(), **event}, default=str) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def read(path) -> list[dict]:
    """The events of the ledger file ``path``, in the order they were written."""
    try:
        with open(path) as file:
            return [json.loads(line) for line in file if line.strip()]
    except FileNotFoundError:
        return []
