// The cycles a waveform records: a window over the batched runs. Not compiled on its own:
// sim/native.py puts `#define PERIOD` (the clock period in the VCD's time unit) before it.
struct Window {
    long long first, last;      // the cycles of a run recorded
    long long previous = -1;    // the cycle last sampled
    long long offset = 0;       // the cycles of the runs recorded before this one

    Window(long long first, long long last) : first(first), last(last) {}
    // Whether `cycle` is recorded, and if so its time in the waveform.
    bool place(long long cycle, long long &time) {
        if (cycle <= previous)      // a new run, which follows the last in the file
            offset += previous + 1;
        previous = cycle;
        time = (offset + cycle) * PERIOD;
        return first <= cycle && cycle <= last;
    }
};
