// What a TMA load costs on real hardware, for the memory model's calibration
// (docs/memory.md): the latency of one cp.async.bulk.tensor load from issue to its
// mbarrier's completion, by box size, from L2 and from DRAM; what a tensor map that the
// SM has not seen costs on top (a descriptor fetch), and what prefetch.tensormap saves
// of it; and the bytes a cycle TMA loads bring to each SM when 1, 16 or every SM stream
// from L2 or from DRAM; and whether one SM's rate grows with more threads issuing.
//
// Build: tools/hwcapture/build.sh (builds this file too), or
//        nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a timing.cu -o timing
// Run:   ./timing > timing.json   (one JSON object; progress on stderr)

#include <algorithm>
#include <vector>

#include "harness.h"

// The tensor every measurement reads: 2D, uint8, rows of ROW bytes. A box is BOX_W bytes
// wide (the widest a 128B swizzle allows; no swizzle is used) and box_h rows high.
static const uint64_t ROW = 4096;
static const uint32_t BOX_W = 128;

__device__ __forceinline__ void load2d(uint32_t dst, const void *map, int x, int y, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory");
}

__device__ __forceinline__ void wait(uint32_t bar, uint32_t parity) {
    while (!try_wait(bar, parity)) {}
}

// -- latency ------------------------------------------------------------------------

// One thread of one block: `trials` loads one after another, each waited for before the
// next is issued; cycles[i] is clock64() from just before trial i's issue to its
// completion. Trial i reads the box at row rows[i] through maps[which[i]] (a generic
// address of a tensor map in global memory), after prefetch.tensormap of it when
// prefetch[i] (and a pause long enough for the prefetch to land).
__global__ void latency_kernel(const CUtensorMap *maps, const int *which, const int *rows, const int *prefetch,
                               int trials, uint32_t box_h, long long *cycles) {
    extern __shared__ __align__(1024) uint8_t smem[];
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x != 0) return;
    uint8_t *base = aligned_base(smem);
    uint32_t b = smem_ptr(&bar), dst = smem_ptr(base);
    init_bar(b);
    for (int i = 0; i < trials; i++) {
        const CUtensorMap *map = maps + which[i];
        if (prefetch[i]) {
            asm volatile("prefetch.tensormap [%0];" :: "l"(map) : "memory");
            long long until = clock64() + 20000;
            while (clock64() < until) {}
        }
        long long start = clock64();
        expect(b, BOX_W * box_h);
        load2d(dst, map, 0, rows[i], b);
        wait(b, i & 1);
        cycles[i] = clock64() - start;
    }
}

// -- streaming ----------------------------------------------------------------------

// Each block (one per SM): `issuers` threads, each in a warp of its own, each keeping
// `stages` loads of a box_h-row box in flight (its own barriers and buffers) and
// re-issuing each as it lands, for `loads` loads in all, across each row's columns and
// then down. Block b's issuer k reads rows from b * stride_rows + 64 k on, wrapping
// inside `span_rows` (a power of two): with a span that fits in L2 every load after the
// first pass is an L2 hit; with span 0 (no wrap) each block reads rows of its own never
// read before. With several issuers on one SM, whether its rate grows with them says
// whether the limit is the issuing thread's loop or the copy engine.
// cycles[b * issuers + k]: that issuer's clock64() from its first issue to its last completion.
__global__ void stream_kernel(const __grid_constant__ CUtensorMap map, int issuers, int stages, int loads,
                              uint32_t box_h, long long stride_rows, long long span_rows, long long *cycles) {
    extern __shared__ __align__(1024) uint8_t smem[];
    __shared__ __align__(8) uint64_t bars[32];      // issuers * stages <= 32
    int k = threadIdx.x / 32;
    if (threadIdx.x % 32 != 0 || k >= issuers) return;
    uint32_t bytes = BOX_W * box_h;
    uint64_t *mine = bars + k * stages;
    uint8_t *buffers = aligned_base(smem) + (size_t)k * stages * bytes;
    for (int s = 0; s < stages; s++) init_bar(smem_ptr(&mine[s]));
    // load n reads column n % COLUMNS of the box_h rows starting at box row n / COLUMNS
    const int COLUMNS = ROW / BOX_W;
    long long first = blockIdx.x * stride_rows + k * 64;
    auto row = [&](int n) {
        long long r = first + (long long)(n / COLUMNS) * box_h;
        return (int)(span_rows ? r & (span_rows - 1) : r);   // a mask: a 64-bit % here costs more than a load
    };
    auto column = [&](int n) { return (n % COLUMNS) * (int)BOX_W; };
    long long start = clock64();
    int issued = 0;
    for (; issued < stages && issued < loads; issued++) {
        expect(smem_ptr(&mine[issued]), bytes);
        load2d(smem_ptr(buffers + issued * bytes), &map, column(issued), row(issued), smem_ptr(&mine[issued]));
    }
    for (int n = 0; n < loads; n++) {
        int s = n % stages;
        wait(smem_ptr(&mine[s]), (n / stages) & 1);
        if (issued < loads) {
            expect(smem_ptr(&mine[s]), bytes);
            load2d(smem_ptr(buffers + s * bytes), &map, column(issued), row(issued), smem_ptr(&mine[s]));
            issued++;
        }
    }
    cycles[blockIdx.x * issuers + k] = clock64() - start;
}

// -- host ---------------------------------------------------------------------------

static EncodeTiled encode_tiled() { return driver_entry<EncodeTiled>("cuTensorMapEncodeTiled"); }

static CUtensorMap make_map(EncodeTiled encode, void *base, uint64_t rows, uint32_t box_h) {
    CUtensorMap map;
    cuuint64_t dims[2] = {ROW, rows}, strides[1] = {ROW};
    cuuint32_t box[2] = {BOX_W, box_h}, es[2] = {1, 1};
    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d) for box height %u\n", (int)r, box_h);
        std::exit(2);
    }
    return map;
}

static void median_and_spread(std::vector<long long> v, long long *lo, long long *med, long long *hi) {
    std::sort(v.begin(), v.end());
    *lo = v[v.size() / 10];
    *med = v[v.size() / 2];
    *hi = v[v.size() * 9 / 10];
}

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int clock_khz = 0, memory_khz = 0, bus_bits = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    CHECK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, 0));
    CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
    const int sms = prop.multiProcessorCount;
    auto encode = encode_tiled();

    // 8 GiB of rows: far more than L2, so a row never read before comes from DRAM
    const uint64_t rows = (8ull << 30) / ROW;
    uint8_t *tensor = nullptr;
    CHECK(cudaMalloc(&tensor, rows * ROW));
    CHECK(cudaMemset(tensor, 1, rows * ROW));
    CHECK(cudaFuncSetAttribute(latency_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));   // under every Hopper's limit
    CHECK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));   // under every Hopper's limit

    std::printf("{\n  \"device\": \"%s\", \"sms\": %d, \"sm_clock_khz\": %d, \"memory_clock_khz\": %d, "
                "\"memory_bus_bits\": %d, \"l2_bytes\": %d, \"smem_per_sm\": %zu,\n",
                prop.name, sms, clock_khz, memory_khz, bus_bits, prop.l2CacheSize, prop.sharedMemPerMultiprocessor);

    // -- latency by box height, from DRAM (rows never read) and from L2 (the same rows again)
    const int trials = 64;
    const int maps_count = 64;
    CUtensorMap *maps_d = nullptr;
    int *which_d, *rows_d, *prefetch_d;
    long long *cycles_d;
    CHECK(cudaMalloc(&maps_d, maps_count * sizeof(CUtensorMap)));
    CHECK(cudaMalloc(&which_d, trials * sizeof(int)));
    CHECK(cudaMalloc(&rows_d, trials * sizeof(int)));
    CHECK(cudaMalloc(&prefetch_d, trials * sizeof(int)));
    CHECK(cudaMalloc(&cycles_d, 1024 * sizeof(long long)));
    std::vector<int> which(trials), row(trials), prefetch(trials);
    std::vector<long long> cycles(1024);
    auto run_latency = [&](uint32_t box_h) {
        CHECK(cudaMemcpy(which_d, which.data(), trials * sizeof(int), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(rows_d, row.data(), trials * sizeof(int), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(prefetch_d, prefetch.data(), trials * sizeof(int), cudaMemcpyHostToDevice));
        latency_kernel<<<1, 32, BOX_W * box_h + 1024>>>(maps_d, which_d, rows_d, prefetch_d, trials, box_h, cycles_d);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(cycles.data(), cycles_d, trials * sizeof(long long), cudaMemcpyDeviceToHost));
        return std::vector<long long>(cycles.begin() + 1, cycles.begin() + trials);   // the first warms up
    };
    std::printf("  \"latency_cycles\": [\n");
    const uint32_t heights[] = {1, 8, 32, 64, 128, 256};
    uint64_t next_row = 0;
    bool first_line = true;
    for (uint32_t box_h : heights) {
        std::vector<CUtensorMap> maps(maps_count, make_map(encode, tensor, rows, box_h));
        CHECK(cudaMemcpy(maps_d, maps.data(), maps_count * sizeof(CUtensorMap), cudaMemcpyHostToDevice));
        for (const char *from : {"dram", "l2"}) {
            for (int i = 0; i < trials; i++) {
                which[i] = 0;
                prefetch[i] = 0;
                // DRAM: each trial a fresh 1 MiB-apart block of rows; L2: one block, again and again
                row[i] = from[0] == 'd' ? (int)(next_row + (uint64_t)i * 256) : (int)next_row;
            }
            std::vector<long long> got = run_latency(box_h);
            if (from[0] == 'd') next_row += (uint64_t)trials * 256;
            long long lo, med, hi;
            median_and_spread(got, &lo, &med, &hi);
            std::printf("%s    {\"from\": \"%s\", \"box_bytes\": %u, \"p10\": %lld, \"median\": %lld, \"p90\": %lld}",
                        first_line ? "" : ",\n", from, BOX_W * box_h, lo, med, hi);
            first_line = false;
        }
    }
    std::printf("\n  ],\n");

    // -- a tensor map the SM has not used: 63 copies of one map at 63 addresses, each used
    // once, its box already in L2; then the same with prefetch.tensormap first
    std::printf("  \"descriptor\": [\n");
    {
        uint32_t box_h = 8;
        std::vector<CUtensorMap> maps(maps_count, make_map(encode, tensor, rows, box_h));
        CHECK(cudaMemcpy(maps_d, maps.data(), maps_count * sizeof(CUtensorMap), cudaMemcpyHostToDevice));
        const char *names[] = {"same map", "new map", "new map, prefetched"};
        for (int variant = 0; variant < 3; variant++) {
            for (int i = 0; i < trials; i++) {
                which[i] = variant == 0 ? 0 : i % maps_count;
                prefetch[i] = variant == 2;
                row[i] = 0;
            }
            std::vector<long long> got = run_latency(box_h);
            long long lo, med, hi;
            median_and_spread(got, &lo, &med, &hi);
            std::printf("%s    {\"case\": \"%s\", \"box_bytes\": %u, \"p10\": %lld, \"median\": %lld, \"p90\": %lld}",
                        variant ? ",\n" : "", names[variant], BOX_W * box_h, lo, med, hi);
            // the variants after the first need maps the SM has not seen: new copies
            for (auto &m : maps) m = make_map(encode, tensor, rows, box_h);
            CHECK(cudaMalloc(&maps_d, maps_count * sizeof(CUtensorMap)));
            CHECK(cudaMemcpy(maps_d, maps.data(), maps_count * sizeof(CUtensorMap), cudaMemcpyHostToDevice));
        }
    }
    std::printf("\n  ],\n");

    // -- bandwidth: 1, 16 and every SM, from DRAM and from L2, 64 rows (8 KiB) and 256 rows
    // (32 KiB) a box, 2, 4 and 6 loads in flight a block
    // a buffer written between DRAM runs, several times L2's size, to push their rows out
    const size_t SCRATCH = 512ull << 20;
    uint8_t *scratch = nullptr;
    CHECK(cudaMalloc(&scratch, SCRATCH));
    CHECK(cudaMemset(scratch, 2, SCRATCH));
    std::printf("  \"bandwidth\": [\n");
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    first_line = true;
    for (uint32_t box_h : {64u, 256u}) {
        CUtensorMap map = make_map(encode, tensor, rows, box_h);
        for (int blocks : {1, 16, sms})
        for (int stages : {2, 4, 6})
            for (const char *from : {"dram", "l2"}) {
                // DRAM: each block its own rows, 1/blocks of the tensor (at most 2048 loads);
                // L2: every block cycles through the same 8 MiB
                long long span = from[0] == 'd' ? 0 : (8ll << 20) / ROW;
                long long stride = from[0] == 'd' ? (long long)(rows / blocks) / box_h * box_h : 0;
                int loads = from[0] == 'd' ? (int)std::min<long long>(2048, stride / box_h * (ROW / BOX_W)) : 2048;
                if (from[0] == 'l') {           // the L2 case reads its 8 MiB once before it is timed
                    stream_kernel<<<blocks, 32, stages * BOX_W * box_h + 1024>>>(map, 1, stages, loads, box_h, stride,
                                                                                     span, cycles_d);
                    CHECK(cudaGetLastError());
                    CHECK(cudaDeviceSynchronize());
                }
                CHECK(cudaEventRecord(t0));
                stream_kernel<<<blocks, 32, stages * BOX_W * box_h + 1024>>>(map, 1, stages, loads, box_h, stride, span,
                                                                                 cycles_d);
                CHECK(cudaEventRecord(t1));
                CHECK(cudaGetLastError());
                CHECK(cudaEventSynchronize(t1));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, t0, t1));
                CHECK(cudaMemcpy(cycles.data(), cycles_d, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
                long long worst = 0;
                double mean = 0;
                for (int k = 0; k < blocks; k++) { worst = std::max(worst, cycles[k]); mean += cycles[k]; }
                mean /= blocks;
                double bytes = (double)loads * BOX_W * box_h;
                std::printf("%s    {\"from\": \"%s\", \"blocks\": %d, \"box_bytes\": %u, \"in_flight\": %d, "
                            "\"bytes_per_block\": %.0f, \"seconds\": %.6f, \"total_gb_per_s\": %.1f, "
                            "\"mean_block_cycles\": %.0f, \"max_block_cycles\": %lld, \"bytes_per_cycle_per_sm\": %.2f}",
                            first_line ? "" : ",\n", from, blocks, BOX_W * box_h, stages, bytes, ms / 1e3,
                            bytes * blocks / (ms / 1e3) / 1e9, mean, worst, bytes / mean);
                first_line = false;
                std::fprintf(stderr, "bandwidth %s blocks %d box %u in flight %d: %.1f GB/s\n", from, blocks, BOX_W * box_h, stages,
                             bytes * blocks / (ms / 1e3) / 1e9);
                if (from[0] == 'd')             // the next run must not find these rows in L2
                    CHECK(cudaMemset(scratch, 2, SCRATCH));
            }
    }
    std::printf("\n  ],\n");

    // -- one SM, 1, 2 and 4 issuing threads, boxes of 8 KiB (and 1 KiB), 4 in flight each
    std::printf("  \"issuers\": [\n");
    first_line = true;
    for (uint32_t box_h : {8u, 64u}) {
        CUtensorMap map = make_map(encode, tensor, rows, box_h);
        for (int issuers : {1, 2, 4}) {
            const int stages = 4, loads = 1024;
            long long span = (8ll << 20) / ROW;
            size_t smem_bytes = (size_t)issuers * stages * BOX_W * box_h + 1024;
            for (int pass = 0; pass < 2; pass++) {       // the first pass brings the rows into L2
                stream_kernel<<<1, 32 * issuers, smem_bytes>>>(map, issuers, stages, loads, box_h, 0, span, cycles_d);
                CHECK(cudaGetLastError());
                CHECK(cudaDeviceSynchronize());
            }
            CHECK(cudaMemcpy(cycles.data(), cycles_d, issuers * sizeof(long long), cudaMemcpyDeviceToHost));
            long long worst = 0;
            for (int k = 0; k < issuers; k++) worst = std::max(worst, cycles[k]);
            double bytes = (double)issuers * loads * BOX_W * box_h;
            std::printf("%s    {\"issuers\": %d, \"box_bytes\": %u, \"in_flight_each\": %d, \"loads\": %d, "
                        "\"cycles\": %lld, \"cycles_per_load\": %.1f, \"bytes_per_cycle\": %.2f}",
                        first_line ? "" : ",\n", issuers, BOX_W * box_h, stages, issuers * loads, worst,
                        (double)worst / (issuers * loads), bytes / worst);
            first_line = false;
            std::fprintf(stderr, "issuers %d box %u: %.1f cycles a load\n", issuers, BOX_W * box_h,
                         (double)worst / (issuers * loads));
        }
    }
    std::printf("\n  ]\n}\n");
    return 0;
}
