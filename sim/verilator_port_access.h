// Port access for the Verilated unit: the macros sim/run_loop.cc is written with. Not
// compiled on its own: sim/verilator.py defines TRACE and the payload sizes before it.
#include <cstdint>
#include <cstring>
#include "verilated.h"
#include "Vtma_unit.h"

struct Wave;
namespace {
struct Harness {
    VerilatedContext context;
    Vtma_unit *top;
    long long cycle = 0;
    Wave *wave = nullptr;
    Harness() : top(nullptr) {
        context.traceEverOn(TRACE);         // before the model is made
        top = new Vtma_unit(&context);
        context.timeunit(-9);               // the waveform's times are in ns (after the
        context.timeprecision(-9);          // model, which sets the Verilog's own)
    }
    ~Harness() { top->final(); delete top; }
};
template<std::size_t N> void put(VlWide<N> &w, const uint32_t *words) { for (std::size_t i = 0; i < N; i++) w[i] = words[i]; }
inline void put(QData &q, const uint32_t *words) { q = QData(words[0]) | QData(words[1]) << 32; }
inline void put(IData &v, const uint32_t *words) { v = words[0]; }
template<std::size_t N> void take(const VlWide<N> &w, uint32_t *words) { for (std::size_t i = 0; i < N; i++) words[i] = w[i]; }
inline void take(QData q, uint32_t *words) { words[0] = uint32_t(q); words[1] = uint32_t(q >> 32); }
inline void take(IData v, uint32_t *words) { words[0] = v; }
}

#define PORT(name) h->top->name
#define SET(name, v) (PORT(name) = (v))
#define GET(name) uint32_t(PORT(name))
#define PUT(name, words) put(PORT(name), words)
#define TAKE(name, words) take(PORT(name), words)
#define SETTLE() h->top->eval()
#define RISE() do { SET(clk, 1); h->top->eval(); SET(clk, 0); } while (0)
#define EVALUATE() SETTLE()
#define EDGE() RISE()
