// The waveform recorder of the Verilated unit (Verilator's VCD writer over a Window). Not
// compiled on its own: sim/verilator.py puts it after sim/window.h and the port access.
#include <cerrno>
#include "verilated_vcd_c.h"
#include "Vtma_unit__Syms.h"
#include "Vtma_unit___024root.h"

struct Wave {
    VerilatedVcdC vcd;
    Window window;

    Wave(long long first, long long last) : window(first, last) {}
    ~Wave() { vcd.close(); }
    int open(Harness *h, const char *path) {
        h->top->trace(&vcd, 99);            // every level of the hierarchy
        errno = 0;
        vcd.open(path);
        return vcd.isOpen() ? 0 : errno ? errno : EIO;
    }
    void sample(Harness *h, long long cycle) {
        long long time;
        if (!window.place(cycle, time))
            return;
        // a dump records nothing unless the model evaluated since the last one (its
        // activity flag): the clock's fall, with no evaluation, is flagged by hand
        SET(clk, 1);
        h->top->rootp->vlSymsp->__Vm_activity = true;
        vcd.dump(uint64_t(time));
        SET(clk, 0);
        h->top->rootp->vlSymsp->__Vm_activity = true;
        vcd.dump(uint64_t(time + PERIOD / 2));
    }
};
