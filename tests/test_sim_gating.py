"""The CXXRTL backend's activity gating (sim/gating.py) on a small design, against
Amaranth's simulator: a gated partition that is skipped while idle, combinational paths
between the partitions in both directions (so a partition is evaluated twice in a cycle),
and a memory written in a cycle the partition is evaluated twice."""

import ctypes

import numpy as np
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from tma_unit.sim import cxxrtl

from simulator import simulate


class Holder(wiring.Component):
    """Loads ``d`` when ``load``, and writes it to a small memory at ``x``; ``y`` is the
    register XOR ``x``, ``z`` the memory word at ``x`` and ``e`` the input ``d`` plus one, all
    combinational from the inputs."""
    load: In(1)
    d: In(16)
    x: In(16)
    q: Out(16)
    y: Out(16)
    z: Out(16)
    e: Out(16)

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=16, depth=4, init=[])
        write, read = mem.write_port(), mem.read_port(domain="comb")
        with m.If(self.load):
            m.d.sync += self.q.eq(self.d)
        m.d.comb += [write.en.eq(self.load), write.addr.eq(self.x), write.data.eq(self.d),
                     read.addr.eq(self.x), self.y.eq(self.q ^ self.x), self.z.eq(read.data), self.e.eq(self.d + 1)]
        return m


class Pair(wiring.Component):
    """The holder (gated) and a core that sums the holder's ``y`` every cycle and feeds it
    ``x`` from the holder's own outputs: a combinational path out of the holder and back
    in, so that when ``d`` changes the holder is evaluated again within the cycle with a
    new ``x``, its memory write going to the new address."""
    load: In(1)
    d: In(16)
    out: Out(16)
    total: Out(16)

    def elaborate(self, platform):
        m = Module()
        m.submodules.holder = holder = Holder()
        total = Signal(16)
        m.d.sync += total.eq(total + holder.y)
        m.d.comb += [holder.load.eq(self.load), holder.d.eq(self.d), holder.x.eq(holder.q + holder.e),
                     self.out.eq(holder.y + holder.z), self.total.eq(total)]
        return m


DRIVER = r"""
extern "C" void run(int cycles, const uint16_t *load, const uint16_t *d, uint16_t *out, uint16_t *total,
                    long long *holder_active) {
    Harness *h = new Harness;
    h->top.p_clk = value<1>{0u};
    step(h);
    for (int i = 0; i < cycles; i++) {
        h->top.p_load.set<uint32_t>(load[i]);
        h->top.p_d.set<uint32_t>(d[i]);
        evaluate(h);
        out[i] = h->top.p_out.get<uint32_t>();
        total[i] = h->top.p_total.get<uint32_t>();
        edge(h);
    }
    *holder_active = h->active[1];
    delete h;
}
"""


def stimulus(cycles: int, seed: int = 3):
    """Loads with long idle stretches between them (a burst of four among them); ``d``
    takes a new value only in a cycle that loads."""
    rng = np.random.default_rng(seed)
    load = (rng.random(cycles) < 0.05).astype(np.uint16)
    load[40:44] = 1
    fresh = rng.integers(0, 1 << 16, cycles, dtype=np.uint16)
    d = fresh[np.maximum.accumulate(np.where(load == 1, np.arange(cycles), 0))]
    return load, d


def reference(load, d):
    """Each cycle's settled outputs on Amaranth's simulator."""
    design = Pair()
    out, total = [], []

    async def bench(ctx):
        for a, b in zip(load, d):
            ctx.set(design.load, int(a))
            ctx.set(design.d, int(b))
            out.append(ctx.get(design.out))
            total.append(ctx.get(design.total))
            await ctx.tick()

    simulate(design, bench)
    return out, total


def compiled(tmp_path, gated):
    source = cxxrtl.write_cxxrtl(Pair(), gated) + DRIVER
    (tmp_path / "pair.cc").write_text(source)
    library = tmp_path / "pair.so"
    cxxrtl.compile_library(tmp_path / "pair.cc", library, ["-O0"])
    return ctypes.CDLL(str(library))


def test_gated_partitions_match_the_python_simulator(tmp_path):
    cycles = 400
    load, d = stimulus(cycles)
    lib = compiled(tmp_path, ("holder",))
    out, total = np.zeros(cycles, np.uint16), np.zeros(cycles, np.uint16)
    active = ctypes.c_longlong()
    pointer = np.ctypeslib.as_ctypes
    lib.run(cycles, pointer(load), pointer(d), pointer(out), pointer(total), ctypes.byref(active))
    expected_out, expected_total = reference(load, d)
    assert out.tolist() == expected_out
    assert total.tolist() == expected_total
    # the holder is evaluated in a cycle it loads and in the next (its state changed),
    # and skipped in every other
    loads = int(load.sum())
    after = int(np.count_nonzero(load[:-1] & ~load[1:] & 1))
    assert active.value == loads + after + int(load[0] == 0)      # and the first cycle, after reset
