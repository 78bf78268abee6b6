"""Register-to-register paths of a synthesized ECP5 netlist, ranked by an estimated delay.

A routed build takes 15 to 30 minutes on this machine and reports one critical path;
this ranks every path of the synthesized netlist (Yosys's JSON of ECP5 cells, as
``tma-unit build`` leaves it) in about a second, so the next cuts for the clock can be
chosen from the whole list (docs/fpga.md, "Clock speed").

The estimate is a longest-path search over the cells with fixed delays: the cells'
own, read off the critical paths nextpnr-ecp5 reported for our builds of the unit
(LUT4 0.24 ns, carry entry 0.45 and 0.07 a cell along the chain, carry to sum 0.40,
clock to Q 0.52, setup 0.08), and one average figure per routed hop (0.9 ns; 2.0 ns
into or out of a DSP block, whose routing measured 1.7 to 4.8 ns). Routed, a path
comes out about 1.2 to 1.5 times its estimate: routing is most of every path on this
chip, and congestion adds to it.

Start points are flip-flops and DSP blocks with output registers; end points are
flip-flop inputs (data, clock enable, set/reset), DSP block inputs (with the block's
multiplier added when its inputs are not registered) and LUT RAM write ports.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TimedPath", "rank_paths", "DELAYS"]

#: Delays in ns (see the module's docstring for where they come from).
DELAYS = {
    "clock_to_q": 0.52, "dsp_clock_to_out": 0.6, "setup": 0.08,
    "route": 0.9, "dsp_route": 2.0,
    "lut": 0.24, "mux": 0.2, "carry_in": 0.45, "carry_through": 0.07, "carry_sum": 0.40,
    "lutram_read": 0.6, "dsp_multiply": 3.9,
}

_LUTS = ("LUT4", "PFUMX", "L6MUX21")


@dataclass(frozen=True)
class TimedPath:
    """One ranked path: its estimate, its first register, its end (cell and pin) and
    the cells on it."""
    delay_ns: float
    start: str
    end: str
    luts: int
    carry_cells: int


def _cell_type(cell) -> str:
    return cell["type"].split("\\")[-1]        # parameterized cells: "$paramod$...\\TRELLIS_FF"


def _registered(cell, parameter: str) -> bool:
    return str(cell.get("parameters", {}).get(parameter, "NONE")).strip() != "NONE"


class _Netlist:
    def __init__(self, module: dict):
        self.cells = {name: (_cell_type(cell), cell) for name, cell in module["cells"].items()}
        self.driver = {}
        for name, (_, cell) in self.cells.items():
            for port, bits in cell["connections"].items():
                if cell["port_directions"].get(port) == "output":
                    for bit in bits:
                        if isinstance(bit, int):
                            self.driver[bit] = (name, port)
        self.names = {}
        for name, net in module["netnames"].items():
            if net.get("hide_name"):
                continue
            for i, bit in enumerate(net["bits"]):
                if isinstance(bit, int) and (bit not in self.names or len(name) < len(self.names[bit])):
                    self.names[bit] = name if len(net["bits"]) == 1 else f"{name}[{i}]"
        self.arrival, self.previous = {}, {}

    def _driver_type(self, bit) -> str | None:
        return self.cells[self.driver[bit][0]][0] if bit in self.driver else None

    def route(self, bit, plain: float) -> float:
        """The routing from ``bit`` into a pin (``plain``), or a DSP block's slower one."""
        return DELAYS["dsp_route"] if self._driver_type(bit) == "MULT18X18D" else plain

    def _inputs(self, name: str, port: str):
        """(input bit, cell delay, routing into the cell) for a combinational output;
        None for a start point."""
        kind, cell = self.cells[name]
        pins = cell["connections"]
        route, d = DELAYS["route"], DELAYS
        if kind == "TRELLIS_FF":
            return None
        if kind == "LUT4":
            return [(pins[p][0], d["lut"], route) for p in "ABCD"]
        if kind in ("PFUMX", "L6MUX21"):       # the slice's own muxes: their data inputs are local
            data = ("ALUT", "BLUT", "C0") if kind == "PFUMX" else ("D0", "D1", "SD")
            return [(pins[data[0]][0], d["mux"], 0.0), (pins[data[1]][0], d["mux"], 0.0),
                    (pins[data[2]][0], d["mux"], route)]
        if kind == "CCU2C":
            through = d["carry_through"] if port == "COUT" else d["carry_sum"]
            entry = d["carry_in"] if port == "COUT" else d["carry_sum"]
            halves = ("0", "1") if port in ("COUT", "S1") else ("0",)
            return [(pins["CIN"][0], through, 0.0)] + [(pins[p + h][0], entry, route) for h in halves for p in "ABCD"]
        if kind == "TRELLIS_DPR16X4":
            return [(bit, d["lutram_read"], route) for bit in pins["RAD"]]
        if kind == "MULT18X18D":
            if _registered(cell, "REG_OUTPUT_CLK"):
                return None
            return [(pins[f"{k}{i}"][0], d["dsp_multiply"], d["dsp_route"]) for k in "AB" for i in range(18)]
        return []

    def _start_time(self, name: str) -> float:
        kind, _ = self.cells[name]
        return {"MULT18X18D": DELAYS["dsp_clock_to_out"], "TRELLIS_FF": DELAYS["clock_to_q"]}.get(kind, 0.0)

    def arrival_of(self, bit) -> float:
        """The latest arrival at ``bit`` (an iterative longest-path search, memoized)."""
        stack = [bit]
        while stack:
            x = stack[-1]
            if x in self.arrival:
                stack.pop()
                continue
            if not isinstance(x, int) or x not in self.driver:
                self.arrival[x] = 0.0
                stack.pop()
                continue
            name, port = self.driver[x]
            inputs = self._inputs(name, port)
            if inputs is None:
                self.arrival[x] = self._start_time(name)
                stack.pop()
                continue
            inputs = [(i, delay, route) for i, delay, route in inputs if isinstance(i, int)]
            waiting = [i for i, _, _ in inputs if i not in self.arrival]
            if waiting:
                stack.extend(waiting)
                continue
            best, through = 0.0, None
            for i, delay, route in inputs:
                t = self.arrival[i] + self.route(i, route) + delay
                if t > best:
                    best, through = t, i
            self.arrival[x], self.previous[x] = best, through
            stack.pop()
        return self.arrival[bit]

    def endpoints(self):
        """(cell, pin, bit, setup, routing into it) of every end point."""
        d = DELAYS
        for name, (kind, cell) in self.cells.items():
            pins = cell["connections"]
            if kind == "TRELLIS_FF":
                for pin in ("DI", "M", "CE", "LSR"):
                    if pin in pins:
                        yield name, pin, pins[pin][0], d["setup"], d["route"]
            elif kind == "MULT18X18D":
                setup = d["setup"] if _registered(cell, "REG_INPUTA_CLK") else d["dsp_multiply"]
                for k in "AB":
                    for i in range(18):
                        yield name, f"{k}{i}", pins[f"{k}{i}"][0], setup, d["dsp_route"]
            elif kind == "TRELLIS_DPR16X4":
                for pin in ("DI", "WAD", "WRE"):
                    for bit in pins[pin]:
                        yield name, pin, bit, d["setup"], d["route"]

    def chain(self, bit) -> list:
        bits = []
        while bit is not None:
            bits.append(bit)
            bit = self.previous.get(bit)
        return bits[::-1]


def rank_paths(netlist: dict | str | Path, top: str | None = None, count: int = 40) -> list[TimedPath]:
    """The ``count`` slowest paths by estimate, one per (first register, last register)
    pair. ``netlist``: Yosys's JSON (a dict, or the file), ``top``: its top module (the
    one marked top by default)."""
    if not isinstance(netlist, dict):
        netlist = json.loads(Path(netlist).read_text())
    modules = netlist["modules"]
    if top is None:
        tops = [name for name, module in modules.items() if int(module.get("attributes", {}).get("top", 0) or 0)]
        if len(tops) != 1:
            raise ValueError(f"the netlist has {len(tops)} top modules; name one ({', '.join(tops) or 'none'})")
        top = tops[0]
    graph = _Netlist(modules[top])
    ends = []
    for name, pin, bit, setup, route in graph.endpoints():
        if isinstance(bit, int) and bit in graph.driver:
            ends.append((graph.arrival_of(bit) + graph.route(bit, route) + setup, name, pin, bit))
    ends.sort(key=lambda end: -end[0])
    ranked, seen = [], set()
    for delay, name, pin, bit in ends:
        bits = graph.chain(bit)
        start = re.sub(r"\[\d+\]$", "", graph.names.get(bits[0], f"${bits[0]}"))
        end = re.sub(r"_TRELLIS_FF.*|\[\d+\]$", "", name)
        if (start, end) in seen:
            continue
        seen.add((start, end))
        kinds = [graph._driver_type(b) for b in bits[1:]]
        ranked.append(TimedPath(round(delay, 2), start, f"{end}.{pin}", sum(k in _LUTS for k in kinds),
                            sum(k == "CCU2C" for k in kinds)))
        if len(ranked) == count:
            break
    return ranked
