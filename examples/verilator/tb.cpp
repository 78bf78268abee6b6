// A C++ testbench of the exported unit under Verilator, written from the exported files
// alone: the Verilog (tma_unit.v) and its C header (tma_unit.h), which gives every
// payload field's place, the register map and the configuration. It resets the unit,
// reads its ID and CONFIG registers, writes a descriptor into a slot over Wishbone, sets
// the slot's SLOT_VALID bit, sends one request and checks every beat and the completion
// against the golden model's answer, read from a vectors file (`tma-unit layout
// --vectors`). docs/export.md, "Examples", walks through it.
//
//     ./Vtma_unit VECTORS [+skip_reset] [+verilator+rand+reset+2 +verilator+seed+N]
//
// Exit status 0 when everything matches, 1 at the first difference (printed).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "Vtma_unit.h"
#include "verilated.h"

#include "tma_unit.h"

// Verilator spells a port's "__" as "___05F": the unit's `beats__payload` is the model's
// `beats___05Fpayload`.

static uint64_t mask(unsigned width) { return width >= 64 ? ~0ull : (1ull << width) - 1; }

// A field of a port: ports of up to 64 bits are integers, wider ones VlWide words.
template <typename T> static uint64_t get_bits(const T &port, unsigned lsb, unsigned width) {
    return (static_cast<uint64_t>(port) >> lsb) & mask(width);
}
template <std::size_t N> static uint64_t get_bits(const VlWide<N> &port, unsigned lsb, unsigned width) {
    uint64_t value = 0;
    for (unsigned i = 0; i < width; i++) {
        unsigned bit = lsb + i;
        value |= static_cast<uint64_t>((port[bit / 32] >> (bit % 32)) & 1u) << i;
    }
    return value;
}
template <std::size_t N> static void set_bits(VlWide<N> &port, unsigned lsb, unsigned width, uint64_t value) {
    for (unsigned i = 0; i < width; i++) {
        unsigned bit = lsb + i;
        uint32_t one = 1u << (bit % 32);
        port[bit / 32] = ((value >> i) & 1) ? (port[bit / 32] | one) : (port[bit / 32] & ~one);
    }
}

// A field by its path name ("smem_address", "lanes.mask") in one of the header's tables;
// `entry` picks an array's entry.
struct Place {
    unsigned lsb, width;
};
template <std::size_t N> static Place place(const tma_unit_field (&table)[N], const std::string &name, unsigned entry = 0) {
    for (const tma_unit_field &f : table)
        if (name == f.name) {
            if (entry >= f.count) break;
            return Place{f.lsb + entry * f.stride, f.width};
        }
    std::fprintf(stderr, "tb: no field %s[%u] in the header\n", name.c_str(), entry);
    std::exit(2);
}

// The golden model's answer for one copy (tma-unit layout --vectors).
struct Vectors {
    std::vector<std::pair<uint32_t, uint32_t>> words;  // (byte address, data)
    std::map<std::string, int64_t> request, beat, row, completion;
    std::vector<std::map<std::string, uint64_t>> chunks;
};

static Vectors read_vectors(const char *path) {
    Vectors v;
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "tb: cannot read %s\n", path);
        std::exit(2);
    }
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream items(line);
        std::string kind, name, value;
        items >> kind;
        if (kind.empty() || kind[0] == '#') continue;
        if (kind == "word") {
            std::string adr, address, data;
            items >> adr >> address >> data;
            v.words.emplace_back(std::stoul(address, nullptr, 0), std::stoul(data, nullptr, 0));
        } else if (kind == "chunk") {
            std::map<std::string, uint64_t> chunk;
            while (items >> name >> value) chunk[name] = std::stoull(value, nullptr, 0);
            v.chunks.push_back(chunk);
        } else {
            items >> name >> value;
            int64_t number = std::stoll(value, nullptr, 0);
            (kind == "request" ? v.request : kind == "beat" ? v.beat : kind == "row" ? v.row : v.completion)[name] = number;
        }
    }
    return v;
}

struct Bench {
    Vtma_unit *top;
    uint64_t cycle = 0;
    std::vector<VlWide<(TMA_UNIT_BEAT_WIDTH + 31) / 32>> beats;
    std::vector<uint64_t> completions;

    // One clock cycle: what the streams transfer at its rising edge (the unit's beat and
    // completion streams are always ready here), then the edge.
    void step() {
        top->eval();
        if (top->beats___05Fvalid) beats.push_back(top->beats___05Fpayload);
        if (top->completions___05Fvalid) completions.push_back(top->completions___05Fpayload);
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
        cycle++;
    }

    // A Wishbone classic access: strobe until ack (or err), which the unit gives two or
    // more cycles later.
    uint32_t bus(bool write, uint32_t address, uint32_t data) {
        top->bus___05Fcyc = top->bus___05Fstb = 1;
        top->bus___05Fwe = write;
        top->bus___05Fadr = address / 4;
        top->bus___05Fdat_w = data;
        top->bus___05Fsel = 0xF;
        for (int wait = 0; wait < 64; wait++) {
            top->eval();
            bool ack = top->bus___05Fack, err = top->bus___05Ferr;
            uint32_t read = top->bus___05Fdat_r;
            step();
            if (ack || err) {
                top->bus___05Fcyc = top->bus___05Fstb = 0;
                if (err) fail("bus err", address, 0, 1);
                return read;
            }
        }
        fail("bus answer", address, 1, 0);
        return 0;
    }

    [[noreturn]] void fail(const char *what, uint64_t where, uint64_t expected, uint64_t got) {
        std::printf("tb: FAIL %s at %#llx: expected %#llx, got %#llx (cycle %llu)\n", what,
                    (unsigned long long)where, (unsigned long long)expected, (unsigned long long)got,
                    (unsigned long long)cycle);
        std::exit(1);
    }
};

static void expect(Bench &b, const std::string &what, uint64_t where, uint64_t expected, uint64_t got) {
    if (expected != got) b.fail(what.c_str(), where, expected, got);
}

int main(int argc, char **argv) {
    VerilatedContext context;
    context.commandArgs(argc, argv);   // +verilator+rand+reset+2, +verilator+seed+N
    if (argc < 2 || argv[1][0] == '+') {
        std::fprintf(stderr, "usage: %s VECTORS [+skip_reset] [+verilator+...]\n", argv[0]);
        return 2;
    }
    Vectors v = read_vectors(argv[1]);
    Vtma_unit top{&context};
    Bench b{&top};
    top.beats___05Fready = 1;
    top.completions___05Fready = 1;
    top.rst = 1;
    if (!context.commandArgsPlusMatch("skip_reset")[0]) {
        for (int i = 0; i < 4; i++) b.step();
    }
    top.rst = 0;

    expect(b, "ID", TMA_UNIT_REG_ID, TMA_UNIT_ID_VALUE, b.bus(false, TMA_UNIT_REG_ID, 0));
    uint32_t config = b.bus(false, TMA_UNIT_REG_CONFIG, 0);
    expect(b, "CONFIG.lanes", TMA_UNIT_REG_CONFIG, TMA_UNIT_CONFIG_LANES,
           get_bits(config, TMA_UNIT_REG_CONFIG_LANES_LSB, TMA_UNIT_REG_CONFIG_LANES_WIDTH));

    // the descriptor, word 0 first, then its slot's SLOT_VALID bit
    for (const auto &word : v.words) b.bus(true, word.first, word.second);
    unsigned slot = static_cast<unsigned>(v.request.at("slot"));
    b.bus(true, TMA_UNIT_REG_SLOT_VALID, 1u << slot);

    // the request: each field packed where the header puts it
    for (const auto &field : v.request) {
        std::string name = field.first;
        unsigned entry = 0;
        size_t bracket = name.find('[');
        if (bracket != std::string::npos) {
            entry = static_cast<unsigned>(std::stoul(name.substr(bracket + 1)));
            name = name.substr(0, bracket);
        }
        Place p = place(tma_unit_request_fields, name, entry);
        set_bits(top.requests___05Fpayload, p.lsb, p.width, static_cast<uint64_t>(field.second) & mask(p.width));
    }
    top.requests___05Fvalid = 1;
    for (int wait = 0;; wait++) {
        top.eval();
        bool taken = top.requests___05Fready;
        b.step();
        if (taken) break;
        if (wait == 1000) b.fail("request taken", 0, 1, 0);
    }
    top.requests___05Fvalid = 0;
    for (uint64_t wait = 0; b.completions.empty(); wait++) {
        if (wait == 1000000) b.fail("completion", 0, 1, 0);
        b.step();
    }
    for (int i = 0; i < 8; i++) b.step();   // nothing more may come

    // every beat: up to `lanes` chunks of one row (a row takes ceil(row_chunks / lanes)
    // beats, lane j of its beat g holding its chunk g * lanes + j if it has one), what
    // it shares, `last` on the last one
    const unsigned lanes = TMA_UNIT_CONFIG_LANES;
    size_t chunks = v.chunks.size(), row_chunks = static_cast<size_t>(v.row.at("chunks"));
    size_t per_row = (row_chunks + lanes - 1) / lanes, expected_beats = chunks / row_chunks * per_row;
    expect(b, "beats", 0, expected_beats, b.beats.size());
    for (size_t beat = 0; beat < b.beats.size(); beat++) {
        const auto &payload = b.beats[beat];
        for (const auto &field : v.beat) {
            Place p = place(tma_unit_beat_fields, field.first);
            expect(b, "beat " + field.first, beat, static_cast<uint64_t>(field.second) & mask(p.width),
                   get_bits(payload, p.lsb, p.width));
        }
        Place last = place(tma_unit_beat_fields, "last");
        expect(b, "beat last", beat, beat + 1 == expected_beats, get_bits(payload, last.lsb, last.width));
        size_t row = beat / per_row, group = beat % per_row;
        for (unsigned lane = 0; lane < lanes; lane++) {
            bool inside = group * lanes + lane < row_chunks;
            size_t index = row * row_chunks + group * lanes + lane;
            Place valid = place(tma_unit_beat_fields, "lanes.valid", lane);
            expect(b, "lane valid", index, inside, get_bits(payload, valid.lsb, valid.width));
            if (!inside) continue;
            for (const auto &field : v.chunks[index]) {
                Place p = place(tma_unit_beat_fields, "lanes." + field.first, lane);
                expect(b, "chunk " + field.first, index, field.second & mask(p.width), get_bits(payload, p.lsb, p.width));
            }
        }
    }
    expect(b, "completions", 0, 1, b.completions.size());
    for (const auto &field : v.completion) {
        Place p = place(tma_unit_completion_fields, field.first);
        expect(b, "completion " + field.first, 0, static_cast<uint64_t>(field.second) & mask(p.width),
               get_bits(b.completions[0], p.lsb, p.width));
    }
    // the status registers count it
    expect(b, "COMPLETED", TMA_UNIT_REG_COMPLETED, 1, b.bus(false, TMA_UNIT_REG_COMPLETED, 0));
    uint32_t status = b.bus(false, TMA_UNIT_REG_STATUS, 0);
    expect(b, "STATUS.ERROR", TMA_UNIT_REG_STATUS, 0,
           get_bits(status, TMA_UNIT_REG_STATUS_ERROR_LSB, TMA_UNIT_REG_STATUS_ERROR_WIDTH));

    std::printf("tb: PASS: %zu chunks in %zu beats and the completion (request %lld, %lld bytes) match the "
                "model; %llu cycles\n", chunks, b.beats.size(), (long long)v.completion.at("request_id"),
                (long long)v.completion.at("transaction_bytes"), (unsigned long long)b.cycle);
    top.final();
    return 0;
}
