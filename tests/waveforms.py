"""Reading the waveforms the co-simulation writes (VCD), for the tests: pyvcd's tokenizer
does the parsing; this keeps, per variable asked for, its changes in time order."""

import bisect

from vcd.reader import TokenKind, tokenize

#: Where each backend's waveform has the unit's ports: under Amaranth's simulator's names
#: (the CXXRTL recorder follows them), and under Verilator's scopes over the exported Verilog.
TOP = {"pysim": "bench top", "cxxrtl": "bench top", "verilator": "TOP tma_unit"}


class Waveform:
    """The changes of some variables of a VCD file, each named by its scopes and reference
    joined with spaces (``"bench top beats__valid"``); ``times``: every timestamp in the
    file."""

    def __init__(self, path, names):
        self.changes = {name: ([], []) for name in names}
        self.times = []
        codes = {}              # id code -> the names (asked for) it stands for
        scope = []
        time = 0
        with open(path, "rb") as file:
            for token in tokenize(file):
                if token.kind is TokenKind.SCOPE:
                    scope.append(token.scope.ident)
                elif token.kind is TokenKind.UPSCOPE:
                    scope.pop()
                elif token.kind is TokenKind.VAR:
                    name = " ".join([*scope, token.var.reference])
                    if name in self.changes:
                        codes.setdefault(token.var.id_code, []).append(name)
                elif token.kind is TokenKind.CHANGE_TIME:
                    time = token.time_change
                    self.times.append(time)
                elif token.kind in (TokenKind.CHANGE_SCALAR, TokenKind.CHANGE_VECTOR):
                    change = token.scalar_change if token.kind is TokenKind.CHANGE_SCALAR else token.vector_change
                    for name in codes.get(change.id_code, ()):
                        stamps, values = self.changes[name]
                        stamps.append(time)
                        values.append(int(change.value))
        missing = [name for name, (stamps, _) in self.changes.items() if not stamps]
        assert not missing, f"{path} has no values of {missing}"

    def at(self, name: str, time: int) -> int:
        """The value of ``name`` at ``time`` (its last change at or before it)."""
        stamps, values = self.changes[name]
        index = bisect.bisect_right(stamps, time) - 1
        assert index >= 0, f"{name} has no value yet at {time}"
        return values[index]

    def handshakes(self, stream: str, cycles, period: int) -> list:
        """Of ``cycles`` (cycle ``c`` at ``c * period``), those in which the stream named
        ``stream`` (``"bench top beats"``: its ``__valid`` and ``__ready``) transfers."""
        return [c for c in cycles
                if self.at(f"{stream}__valid", c * period) and self.at(f"{stream}__ready", c * period)]
