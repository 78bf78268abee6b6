"""What the three probe sets share: cases numbered from a first id, each with a note and,
where the probe asks for them, its own shared-memory window (to see writes past the
model's box) and mbarrier byte count (to see which count the hardware credits). Written
as a case file for tools/hwcapture/capture and a pickle of (case, window, note)."""

import dataclasses
import pickle

from tma_unit.model import transaction_bytes
from tma_unit.sim.conformance import HardwareCase, write_records


class ProbeSet:
    def __init__(self, first_id: int):
        self.first_id = first_id
        self.probes = []                # (case, window or None, mbarrier count or None, note)

    def add(self, case: HardwareCase, note: str, window: int | None = None, expect: int | None = None):
        """``case`` renumbered as the next probe; the model must accept it."""
        transaction_bytes(case.tensor_map, case.request)
        case = dataclasses.replace(case, id=self.first_id + len(self.probes))
        self.probes.append((case, window, expect, note + (f" expect_tx={expect}" if expect else "")))

    def write(self, cases_path: str, notes_path: str) -> None:
        write_records([case.record(window, expect) for case, window, expect, _ in self.probes], cases_path)
        with open(notes_path, "wb") as f:
            pickle.dump([(case, window, note) for case, window, _, note in self.probes], f)
        print(len(self.probes), "probes")
