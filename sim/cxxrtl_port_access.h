// Port access for a CXXRTL-compiled unit: the macros sim/run_loop.cc is written with. Not
// compiled on its own: sim/cxxrtl.py puts it after the generated unit (cxxrtl's value<N>).
#include <cstdint>
#include <cstring>

namespace {
template<size_t N> void put(value<N> &v, const uint32_t *words) { std::memcpy(v.data, words, sizeof(v.data)); }
template<size_t N> void take(const value<N> &v, uint32_t *words) { std::memcpy(words, v.data, sizeof(v.data)); }
}

// CXXRTL mangles port `a__b` to member `p_a____b`; the macros spell the Amaranth names.
#define PORT(name) h->top.p_##name
#define SET(name, v) PORT(name).set<uint32_t>(v)
#define GET(name) PORT(name).get<uint32_t>()
#define PUT(name, words) put(PORT(name), words)
#define TAKE(name, words) take(PORT(name), words)
#define SETTLE() step(h)
#define RISE() do { SET(clk, 1); step(h); SET(clk, 0); step(h); } while (0)
// One pass a cycle: the edge's pass computes the registers' next values and, from the
// registers' present values and the inputs just set, the cycle's outputs (a registered
// output is its present value; a combinational one is settled, no partition having a
// loop). Partitions with nothing to do are skipped (sim/gating.py).
#define EVALUATE() evaluate(h)
#define EDGE() edge(h)
