"""The path ranking (src/paths.py) on small netlists whose delays are derived by hand from
its documented delay table."""

import pytest

from tma_unit.paths import rank_paths, DELAYS


def _ff(d, q):
    return {"type": "TRELLIS_FF", "port_directions": {"CLK": "input", "DI": "input", "Q": "output"},
            "connections": {"CLK": [1], "DI": [d], "Q": [q]}}


def _lut(inputs, z):
    a, b, c, d = (inputs + ["0"] * 4)[:4]
    return {"type": "LUT4", "port_directions": {"A": "input", "B": "input", "C": "input", "D": "input",
                                                "Z": "output"},
            "connections": {"A": [a], "B": [b], "C": [c], "D": [d], "Z": [z]}}


def _carry(a0, cin, s0, cout):
    pins = {f"{p}{h}": "input" for p in "ABCD" for h in "01"}
    pins.update(CIN="input", S0="output", S1="output", COUT="output")
    connections = {f"{p}{h}": ["0"] for p in "ABCD" for h in "01"}
    connections.update(A0=[a0], CIN=[cin], S0=[s0], S1=[99], COUT=[cout])
    return {"type": "CCU2C", "port_directions": pins, "connections": connections}


def _netlist(cells, names):
    return {"modules": {"top": {"attributes": {"top": "00000000000000000000000000000001"}, "cells": cells,
                                "netnames": {name: {"bits": [bit]} for name, bit in names.items()}}}}


def test_a_lut_chain_and_a_carry_chain_rank_by_their_derived_delays():
    # q0 -> two LUTs -> ff1: clock to Q, then per LUT a hop and the LUT, then a hop and setup
    # q0 -> a carry cell's entry, one cell along the chain, its sum -> ff2
    cells = {
        "ff0": _ff(50, 10), "lut_a": _lut([10], 11), "lut_b": _lut([11], 12), "ff1": _ff(12, 13),
        "c0": _carry(10, "0", 98, 20), "c1": _carry("0", 20, 21, 97), "ff2": _ff(21, 22),
    }
    names = {"first": 10, "second_q": 13, "third_q": 22}
    d = DELAYS
    luts = d["clock_to_q"] + 2 * (d["route"] + d["lut"]) + d["route"] + d["setup"]
    carry = d["clock_to_q"] + d["route"] + d["carry_in"] + d["carry_sum"] + d["route"] + d["setup"]
    ranked = rank_paths(_netlist(cells, names), count=10)
    by_end = {path.end: path for path in ranked}
    assert by_end["ff1.DI"].delay_ns == pytest.approx(luts, abs=0.01)
    assert by_end["ff1.DI"].start == "first" and by_end["ff1.DI"].luts == 2
    assert by_end["ff2.DI"].delay_ns == pytest.approx(carry, abs=0.01)
    assert by_end["ff2.DI"].carry_cells == 2
    assert [p.delay_ns for p in ranked] == sorted((p.delay_ns for p in ranked), reverse=True)


def test_a_netlist_without_one_top_is_refused():
    netlist = {"modules": {"a": {"cells": {}, "netnames": {}}, "b": {"cells": {}, "netnames": {}}}}
    with pytest.raises(ValueError, match="0 top modules"):
        rank_paths(netlist)
