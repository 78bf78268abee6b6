// The waveform recorder of a CXXRTL-compiled unit (cxxrtl's VCD writer over a Window).
// Not compiled on its own: sim/cxxrtl.py puts it after sim/window.h and the port access.
#include <cerrno>
#include <cstdio>
#include <cxxrtl/cxxrtl_vcd.h>

struct Wave {
    debug_items items;
    vcd_writer vcd;
    value<1> clock;
    FILE *file = nullptr;
    Window window;

    Wave(long long first, long long last) : window(first, last) {}
    ~Wave() {
        if (file) {
            flush();
            std::fclose(file);
        }
    }
    int open(Harness *h, const char *path) {
        file = std::fopen(path, "w");
        if (file == nullptr)
            return errno;
        debug_info(h, items);
        vcd.timescale(1, "ns");
        // the partitions' clock inputs stand high from an evaluation to its edge: the
        // waveform's clock is the recorder's own. Anonymous signals (Amaranth names them
        // `$signal`, `$like`) are left out: a VCD name may not begin with `$`
        vcd.add(items, [](const std::string &name, const debug_item &) {
            bool clock = name.size() >= 4 && name.compare(name.size() - 4, 4, " clk") == 0;
            return !clock && name.find(" $") == std::string::npos;
        });
        vcd.add("bench top clk", debug_item(clock));
        return 0;
    }
    void flush() {
        std::fwrite(vcd.buffer.data(), 1, vcd.buffer.size(), file);
        vcd.buffer.clear();
    }
    void sample(Harness *, long long cycle) {
        long long time;
        if (!window.place(cycle, time))
            return;
        clock = value<1>{1u};
        vcd.sample(time);
        clock = value<1>{0u};
        vcd.sample(time + PERIOD / 2);
        if (vcd.buffer.size() > (1 << 20))
            flush();
    }
};
