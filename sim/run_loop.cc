// The C ABI over one compiled unit and its batched run loop, the same for both compiled
// backends. Not compiled on its own: sim/native.py appends it to a backend's port access
// (the Harness type and the SET, GET, PUT, TAKE, SETTLE, RISE, EVALUATE, EDGE macros) and
// renames the ports, written here as Amaranth names them, as that backend spells them.
#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

// The memory behind the beat stream (model/memory.py, MemoryGate, whose rules and arrays
// these are): beat n may leave from the cycle its requests find credits (a request's
// credit back the cycle after it returns), the request path has moved the previous
// beat's sectors, and, for a beat that reads shared memory as it leaves, the read port
// is free. Each only loosens with time, so the first such cycle is found once per beat.
// The request path holds a beat hold[n] whole cycles, or with carry (units_per_cycle > 0)
// path[n] units of 1/units_per_cycle cycle from where the previous beat's left it.
struct MemoryGate {
    long long in_flight, beats;
    const int32_t *requests, *hold, *reads, *latencies;
    const int64_t *path;
    long long units_per_cycle;
    std::priority_queue<long long, std::vector<long long>, std::greater<long long>> outstanding;
    long long earliest = 0, read_port = 0, next_request = 0, beat = -1, threshold = 0, path_free = 0;

    long long opens(long long n) {
        if (n != beat) {
            long long t = earliest;
            while ((long long)outstanding.size() + requests[n] > in_flight) {
                t = std::max(t, outstanding.top() + 1);
                outstanding.pop();
            }
            if (reads[n] >= 0) t = std::max(t, read_port);
            beat = n;
            threshold = t;
        }
        return threshold;
    }

    void take(long long n, long long cycle) {
        for (int k = 0; k < requests[n]; k++) outstanding.push(cycle + latencies[next_request++]);
        if (units_per_cycle > 0) {
            path_free = std::max(cycle * units_per_cycle, path_free) + path[n];
            earliest = std::max(cycle + 1, path_free / units_per_cycle);
        } else {
            earliest = cycle + hold[n];
        }
        if (reads[n] >= 0) read_port = cycle + reads[n];
        beat = -1;
    }
};

extern "C" {

void *tma_new() {
    Harness *h = new Harness;
    SET(clk, 0);
    SET(rst, 0);
    SETTLE();
    return h;
}

void tma_free(void *p) {
    CLOSE_WAVE(p);
    delete static_cast<Harness *>(p);
}

long long tma_cycle(void *p) { return static_cast<Harness *>(p)->cycle; }

// Cycles an access may wait for its answer. The longest is a SLOT_VALID write on a unit
// that checks descriptors at commit: it is answered once the slots it makes valid are
// checked, 137 cycles a slot (model/timing.py commit_cycles), 32 slots at most.
#define BUS_WAIT 8192

// One Wishbone classic access; returns 0 on ack, 1 on err, 2 on no answer.
int tma_bus(void *p, uint32_t word_address, int write, uint32_t data, uint32_t sel, uint32_t *read) {
    Harness *h = static_cast<Harness *>(p);
    SET(bus__cyc, 1); SET(bus__stb, 1); SET(bus__we, write != 0);
    SET(bus__adr, word_address); SET(bus__dat_w, data); SET(bus__sel, sel);
    int answer = 2;
    // a rising edge leaves the outputs settled (both backends evaluate the logic behind the
    // registers in the same call), so the answer is read straight after it; the settle
    // before it lets CXXRTL see the clock low, or the next rise would not be an edge
    for (int i = 0; i < BUS_WAIT && answer == 2; i++) {
        SETTLE();
        RISE();
        if (GET(bus__ack)) answer = 0;
        else if (GET(bus__err)) answer = 1;
    }
    *read = GET(bus__dat_r);
    SET(bus__cyc, 0); SET(bus__stb, 0); SET(bus__we, 0);
    return answer;
}

// n Wishbone accesses in a row (writes[i]: a write of data[i], else a read into reads[i]),
// cycle by cycle as the batched run loop steps (EVALUATE, EDGE), so a backend that skips
// idle partitions skips them here too: the strobe is held until the cycle whose outputs
// show ack or err, and the next access starts in the cycle after. Returns the index of
// the first access not acked (n if all were).
long long tma_bus_many(void *p, long long n, const uint32_t *word_addresses, const uint8_t *writes,
                       const uint32_t *data, uint32_t *reads) {
    Harness *h = static_cast<Harness *>(p);
    long long i = 0;
    for (; i < n; i++) {
        SET(bus__cyc, 1); SET(bus__stb, 1); SET(bus__we, writes[i] != 0);
        SET(bus__adr, word_addresses[i]); SET(bus__dat_w, data[i]); SET(bus__sel, 0xF);
        int answer = 2;
        for (int wait = 0; wait < BUS_WAIT && answer == 2; wait++) {
            EVALUATE();
            if (GET(bus__ack)) answer = 0;
            else if (GET(bus__err)) answer = 1;
            reads[i] = GET(bus__dat_r);
            EDGE();
            h->cycle++;
        }
        if (answer != 0) break;
    }
    SET(bus__cyc, 0); SET(bus__stb, 0); SET(bus__we, 0);
    SETTLE();
    return i;
}

#define TAIL 16
// Offer n_requests requests (REQUEST_WORDS words each), request i after gaps[i] idle
// cycles; the beat stream is ready on cycle c when ready[c % ready_length], the completion
// stream when completion_ready[c % completion_ready_length]. Runs until every request has
// completed, and TAIL cycles more, or max_cycles pass; returns the cycles until the last
// completion (not counting the TAIL cycles), or all run if it never came. Takes at
// most max_beats beats and n_requests + 1 completions. With reset_cycle >= 0, the reset
// is high in that cycle (the streams go on as before: the unit must transfer nothing in
// it); the requests in flight are abandoned (docs/registers.md, "Reset"), and those not
// yet accepted are offered after it. With
// bus_cycle >= 0, a Wishbone write of bus_data to bus_word_address starts in that cycle,
// beside the requests; *bus_done is the cycle it was acked (-1: not within the run). The
// cycle each request was accepted goes to accept_cycles. With memory_beats > 0 a memory
// gate (MemoryGate, from the arrays, in_flight credits; units_per_cycle > 0: the request
// path with carry) holds the beat stream back as well: beat n is taken only from the cycle
// the gate opens for it.
long long tma_run(void *p, long long max_cycles,
                  long long n_requests, const uint32_t *requests, const int32_t *gaps,
                  const uint8_t *ready, long long ready_length,
                  const uint8_t *completion_ready, long long completion_ready_length, long long reset_cycle,
                  long long bus_cycle, uint32_t bus_word_address, uint32_t bus_data, int64_t *bus_done,
                  int64_t *accept_cycles,
                  uint32_t *beats, int64_t *beat_cycles, long long max_beats, long long *n_beats,
                  uint32_t *completions, int64_t *completion_cycles, long long *n_completions,
                  long long in_flight, long long memory_beats, const int32_t *beat_requests, const int32_t *beat_hold,
                  const int32_t *beat_reads, const int32_t *latencies, const int64_t *beat_path,
                  long long units_per_cycle) {
    Harness *h = static_cast<Harness *>(p);
    MemoryGate gate{in_flight, memory_beats, beat_requests, beat_hold, beat_reads, latencies, beat_path,
                    units_per_cycle};
    long long next = 0, wait = n_requests ? gaps[0] : 0, cycles = 0, tail = 0, finished = -1;
    long long owed = n_requests;            // the completions the run waits for
    *n_beats = 0;
    *n_completions = 0;
    *bus_done = -1;
    bool bus_pending = bus_cycle >= 0;
    SET(bus__we, 1); SET(bus__adr, bus_word_address); SET(bus__dat_w, bus_data); SET(bus__sel, 0xF);
    // after the last completion owed, TAIL cycles with both streams ready: anything the
    // unit emits then is a difference of this run, not of the next
    while (cycles < max_cycles && tail < TAIL) {
        bool reset = cycles == reset_cycle;
        // a reset abandons the requests in flight: the run waits for the completions taken
        // so far and those of the requests not yet accepted, which are offered on
        if (reset) owed = *n_completions + (n_requests - next);
        bool done = *n_completions >= owed && cycles > reset_cycle && !bus_pending && next == n_requests;
        if (done && tail++ == 0) finished = cycles;
        SET(rst, reset);
        bool bus_on = bus_pending && cycles >= bus_cycle;
        SET(bus__cyc, bus_on); SET(bus__stb, bus_on);
        bool offer = next < n_requests && wait == 0;
        SET(requests__valid, offer);
        if (offer) PUT(requests__payload, requests + next * REQUEST_WORDS);
        bool beat_ready = done || ready[cycles % ready_length] != 0;
        bool gated = *n_beats < memory_beats;
        if (gated && !done) beat_ready = beat_ready && cycles >= gate.opens(*n_beats);
        bool completion_ready_now = done || completion_ready[cycles % completion_ready_length] != 0;
        SET(beats__ready, beat_ready);
        SET(completions__ready, completion_ready_now);
        EVALUATE();
        if (!done) SAMPLE(cycles);          // a waveform shows the run, not the check after it
        bool request_taken = offer && GET(requests__ready);
        if (request_taken) accept_cycles[next] = cycles;
        if (bus_on && (GET(bus__ack) || GET(bus__err))) {
            bus_pending = false;
            *bus_done = cycles;
        }
        if (beat_ready && GET(beats__valid) && *n_beats < max_beats) {
            if (gated) gate.take(*n_beats, cycles);
            TAKE(beats__payload, beats + *n_beats * BEAT_WORDS);
            beat_cycles[*n_beats] = cycles;
            ++*n_beats;
        }
        if (completion_ready_now && GET(completions__valid) && *n_completions <= n_requests) {
            TAKE(completions__payload, completions + *n_completions * COMPLETION_WORDS);
            completion_cycles[*n_completions] = cycles;
            ++*n_completions;
        }
        EDGE();
        h->cycle++;
        cycles++;
        if (request_taken) {
            next++;
            wait = next < n_requests ? gaps[next] : 0;
        } else if (!offer && wait > 0) {
            wait--;
        }
    }
    SET(rst, 0);
    SET(requests__valid, 0);
    SET(completions__ready, 1);
    SET(bus__cyc, 0); SET(bus__stb, 0); SET(bus__we, 0);
    SETTLE();
    return finished >= 0 ? finished : cycles;
}

}
