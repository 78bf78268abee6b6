// Hardware capture for the conformance issue: runs each case of a case file on a Hopper
// (or Blackwell) GPU with cp.async.bulk.tensor and writes what landed where.
//
// Input (cases.bin, written by tools/hwcapture/cases.py): a header and fixed-size case
// records (CaseRecord below, little-endian). Output (results.bin): per case a ResultHeader
// and the captured bytes: for a load, the shared-memory window (poisoned with 0xA5
// first); for a store, the global buffer (pre-filled with 0x5A) after the store.
// cases.py turns results.bin into tests/vectors/*.npz.
//
// The tensor maps are built with the driver's own encoders (cuTensorMapEncodeTiled,
// cuTensorMapEncodeIm2col), reached through cudaGetDriverEntryPoint so that building needs
// only the CUDA toolkit, not a driver.
//
// Build: nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a capture.cu -o capture
// Run:   ./capture cases.bin results.bin

#include <algorithm>
#include <cstring>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const uint32_t CASES_MAGIC = 0x43414D54;    // "TMAC"
static const uint32_t RESULTS_MAGIC = 0x52414D54;  // "TMAR"
static const uint32_t FORMAT_VERSION = 1;

#pragma pack(push, 1)
struct CaseRecord {              // 256 bytes; cases.py CASE_FORMAT mirrors this
    uint32_t id;
    uint8_t kind;                // 0 tiled, 1 im2col
    uint8_t operation;           // 0 load, 1 store
    uint8_t mode;                // 0 tile, 1 gather4, 3 im2col
    uint8_t dtype;               // CUtensorMapDataType
    uint32_t rank;
    uint64_t dims[5];
    uint64_t strides[4];
    uint32_t box[5];
    uint32_t element_strides[5];
    int32_t lower[3];
    int32_t upper[3];
    uint32_t channels;
    uint32_t pixels;
    uint8_t interleave, swizzle, l2, fill;
    int32_t coords[5];
    uint16_t offsets[3];
    uint16_t pad0;
    uint32_t smem_offset;        // dstMem / srcMem offset inside the 1024-aligned buffer
    uint32_t smem_bytes;         // shared-memory window captured (and, for stores, filled)
    uint32_t expect_tx;          // the model's mbarrier byte count
    uint64_t global_bytes;       // tensor buffer size
    uint64_t global_offset;      // tensor base offset inside the buffer (alignment tests)
    uint8_t reserved[256 - 216];
};
struct ResultHeader {            // 32 bytes
    uint32_t id;
    int32_t encode_status;       // CUresult of the encoder
    int32_t tx_complete;         // 1: the mbarrier phase completed with expect_tx bytes, 0: it
                                 // did not; -e: the case stopped on CUDA error e (no payload)
    uint32_t payload_bytes;      // bytes following this header
    uint8_t reserved[16];
};
#pragma pack(pop)
static_assert(sizeof(CaseRecord) == 256, "CaseRecord must be 256 bytes");
static_assert(sizeof(ResultHeader) == 32, "ResultHeader must be 32 bytes");

// ---------------------------------------------------------------------------------
// Device side
// ---------------------------------------------------------------------------------


template <int Rank, bool Im2col>
__device__ __forceinline__ void issue_load(uint32_t dst, const CUtensorMap *map, const int32_t *c,
                                           const uint16_t *off, uint32_t bar) {
    uint64_t m = reinterpret_cast<uint64_t>(map);
    if constexpr (!Im2col) {
        if constexpr (Rank == 1)
            asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2}], [%3];" :: "r"(dst), "l"(m), "r"(c[0]), "r"(bar) : "memory");
        if constexpr (Rank == 2)
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3}], [%4];" :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(bar) : "memory");
        if constexpr (Rank == 3)
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4}], [%5];"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar) : "memory");
        if constexpr (Rank == 4)
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4, %5}], [%6];"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar) : "memory");
        if constexpr (Rank == 5)
            asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar)
                         : "memory");
    } else {
        if constexpr (Rank == 3)
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4}], [%5], {%6};"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar), "h"(off[0]) : "memory");
        if constexpr (Rank == 4)
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar),
                            "h"(off[0]), "h"(off[1]) : "memory");
        if constexpr (Rank == 5)
            asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar),
                            "h"(off[0]), "h"(off[1]), "h"(off[2]) : "memory");
    }
}

template <int Rank>
__device__ __forceinline__ void issue_store(const CUtensorMap *map, const int32_t *c, uint32_t src) {
    uint64_t m = reinterpret_cast<uint64_t>(map);
    if constexpr (Rank == 1)
        asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];"
                     :: "l"(m), "r"(c[0]), "r"(src) : "memory");
    if constexpr (Rank == 2)
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                     :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(src) : "memory");
    if constexpr (Rank == 3)
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];"
                     :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(src) : "memory");
    if constexpr (Rank == 4)
        asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];"
                     :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(src) : "memory");
    if constexpr (Rank == 5)
        asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];"
                     :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(src) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

struct LaunchArgs {
    int32_t coords[5];
    uint16_t offsets[3];
    uint32_t smem_offset, smem_bytes, expect_tx;
    int rank, im2col, store;
};

__global__ void capture_kernel(const __grid_constant__ CUtensorMap map, LaunchArgs a,
                               uint8_t *window, int *tx_complete) {
    extern __shared__ __align__(1024) uint8_t smem[];
    __shared__ __align__(8) uint64_t bar;
    uint8_t *base = aligned_base(smem);
    for (uint32_t i = threadIdx.x; i < a.smem_bytes; i += blockDim.x)
        base[i] = a.store ? window[i] : 0xA5;             // poison, or the bytes to store
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        if (a.store) {
            uint32_t src = smem_ptr(base + a.smem_offset);
            switch (a.rank) {
                case 1: issue_store<1>(&map, a.coords, src); break;
                case 2: issue_store<2>(&map, a.coords, src); break;
                case 3: issue_store<3>(&map, a.coords, src); break;
                case 4: issue_store<4>(&map, a.coords, src); break;
                case 5: issue_store<5>(&map, a.coords, src); break;
            }
            *tx_complete = 1;
        } else {
            uint32_t b = smem_ptr(&bar), dst = smem_ptr(base + a.smem_offset);
            init_bar(b);
            expect(b, a.expect_tx);
            switch (a.rank * 2 + a.im2col) {
                case 2: issue_load<1, false>(dst, &map, a.coords, a.offsets, b); break;
                case 4: issue_load<2, false>(dst, &map, a.coords, a.offsets, b); break;
                case 6: issue_load<3, false>(dst, &map, a.coords, a.offsets, b); break;
                case 7: issue_load<3, true>(dst, &map, a.coords, a.offsets, b); break;
                case 8: issue_load<4, false>(dst, &map, a.coords, a.offsets, b); break;
                case 9: issue_load<4, true>(dst, &map, a.coords, a.offsets, b); break;
                case 10: issue_load<5, false>(dst, &map, a.coords, a.offsets, b); break;
                case 11: issue_load<5, true>(dst, &map, a.coords, a.offsets, b); break;
            }
            // wait for phase 0 with a bound: a phase that never completes means the
            // hardware credited a different byte count than expect_tx
            bool done = false;
            for (int spin = 0; spin < (1 << 22) && !done; spin++)
                done = try_wait(b, 0);
            *tx_complete = done;
        }
    }
    __syncthreads();
    if (!a.store)
        for (uint32_t i = threadIdx.x; i < a.smem_bytes; i += blockDim.x) window[i] = base[i];
}

// ---------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------

// The number of result records in the file at path (each process appends to it).
static size_t records_in(const char *path) {
    FILE *f = std::fopen(path, "rb");
    size_t count = 0;
    if (!f) return 0;
    std::fseek(f, 16, SEEK_SET);
    ResultHeader r;
    while (std::fread(&r, sizeof r, 1, f) == 1 && std::fseek(f, r.payload_bytes, SEEK_CUR) == 0) count++;
    std::fclose(f);
    return count;
}

static int run_cases(const std::vector<CaseRecord> &cases, size_t first, const char *path);

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s cases.bin results.bin\n", argv[0]);
        return 2;
    }
    FILE *in = std::fopen(argv[1], "rb");
    if (!in) { std::perror(argv[1]); return 2; }
    uint32_t header[4];
    if (std::fread(header, sizeof header, 1, in) != 1 || header[0] != CASES_MAGIC || header[1] != FORMAT_VERSION) {
        std::fprintf(stderr, "%s: not a version-%u case file\n", argv[1], FORMAT_VERSION);
        return 2;
    }
    std::vector<CaseRecord> cases(header[2]);
    if (std::fread(cases.data(), sizeof(CaseRecord), cases.size(), in) != cases.size()) {
        std::fprintf(stderr, "%s: truncated\n", argv[1]);
        return 2;
    }
    std::fclose(in);

    FILE *out = std::fopen(argv[2], "wb");
    if (!out) { std::perror(argv[2]); return 2; }
    uint32_t out_header[4] = {RESULTS_MAGIC, FORMAT_VERSION, header[2], 0};
    std::fwrite(out_header, sizeof out_header, 1, out);
    std::fclose(out);
    // Each run of cases is a process of its own that starts CUDA afresh: a case that
    // faults (an error the CUDA context cannot recover from) or whose copy never completes
    // ends its process after recording itself, and the next case starts in a new one. This
    // process makes no CUDA call, so forking it is safe.
    size_t next = 0, restarts = 0;
    while (next < cases.size()) {
        std::fflush(stdout);
        pid_t child = fork();
        if (child == 0) _exit(run_cases(cases, next, argv[2]));
        int status = 0;
        waitpid(child, &status, 0);
        size_t done = records_in(argv[2]);
        if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3) || done <= next) {
            std::fprintf(stderr, "the capture of case %zu stopped without a record (status %d)\n", next, status);
            return 2;
        }
        next = done;
        restarts += WEXITSTATUS(status) == 3;
    }
    std::printf("captured %u cases into %s (%zu in a fresh process after a fault or an incomplete copy)\n",
                header[2], argv[2], restarts);
    return 0;
}

// Cases first.. in this process, each result appended to path; returns 0 when all are
// done, 3 after a case that faulted or did not complete (the caller goes on from the next).
static int run_cases(const std::vector<CaseRecord> &cases, size_t first, const char *path) {
    auto encode_tiled = driver_entry<EncodeTiled>("cuTensorMapEncodeTiled");
    auto encode_im2col = driver_entry<EncodeIm2col>("cuTensorMapEncodeIm2col");
    // the most dynamic shared memory a block may ask for: the device's limit less the
    // kernel's own (static) shared memory, its mbarrier
    cudaDeviceProp prop;
    cudaFuncAttributes attributes;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaFuncGetAttributes(&attributes, capture_kernel));
    CHECK(cudaFuncSetAttribute(capture_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)(prop.sharedMemPerBlockOptin - attributes.sharedSizeBytes)));

    FILE *out = std::fopen(path, "ab");
    for (size_t index = first; index < cases.size(); index++) {
        const CaseRecord &c = cases[index];
        // a CUDA error in this case: record it and end the process
        auto check = [&](cudaError_t e) {
            if (e == cudaSuccess) return;
            std::fprintf(stderr, "case %u: %s\n", c.id, cudaGetErrorString(e));
            ResultHeader failed = {};
            failed.id = c.id;
            failed.tx_complete = -(int32_t)e;
            std::fwrite(&failed, sizeof failed, 1, out);
            std::fclose(out);
            std::_Exit(3);
        };
        uint8_t *global = nullptr, *window = nullptr;
        int *tx = nullptr;
        size_t buffer = c.global_bytes + c.global_offset;
        check(cudaMalloc(&global, buffer));
        check(cudaMalloc(&window, c.smem_bytes));
        check(cudaMalloc(&tx, sizeof(int)));
        // the global pattern: 32-bit word w holds w (every word distinct); stores start from 0x5A
        std::vector<uint8_t> host(buffer, 0x5A);
        if (c.operation == 0) {
            std::fill(host.begin(), host.end(), 0);
            for (size_t w = 0; w + 4 <= buffer; w += 4) { uint32_t v = w / 4; std::memcpy(&host[w], &v, 4); }
        }
        check(cudaMemcpy(global, host.data(), buffer, cudaMemcpyHostToDevice));
        std::vector<uint8_t> window_host(c.smem_bytes);
        for (uint32_t i = 0; i < c.smem_bytes; i++) window_host[i] = static_cast<uint8_t>(i * 131 + 17);
        check(cudaMemcpy(window, window_host.data(), c.smem_bytes, cudaMemcpyHostToDevice));

        CUtensorMap map;
        cuuint64_t dims[5], strides[4];
        cuuint32_t box[5], es[5];
        for (int i = 0; i < 5; i++) { dims[i] = c.dims[i]; box[i] = c.box[i]; es[i] = c.element_strides[i]; }
        for (int i = 0; i < 4; i++) strides[i] = c.strides[i];
        CUresult status;
        if (c.kind == 0)
            status = encode_tiled(&map, (CUtensorMapDataType)c.dtype, c.rank, global + c.global_offset, dims, strides,
                                  box, es, (CUtensorMapInterleave)c.interleave, (CUtensorMapSwizzle)c.swizzle,
                                  (CUtensorMapL2promotion)c.l2, (CUtensorMapFloatOOBfill)c.fill);
        else
            status = encode_im2col(&map, (CUtensorMapDataType)c.dtype, c.rank, global + c.global_offset, dims,
                                   strides, c.lower, c.upper, c.channels, c.pixels, es,
                                   (CUtensorMapInterleave)c.interleave, (CUtensorMapSwizzle)c.swizzle,
                                   (CUtensorMapL2promotion)c.l2, (CUtensorMapFloatOOBfill)c.fill);
        ResultHeader result = {};
        result.id = c.id;
        result.encode_status = status;
        std::vector<uint8_t> payload;
        if (status == CUDA_SUCCESS) {
            LaunchArgs a = {};
            std::memcpy(a.coords, c.coords, sizeof a.coords);
            std::memcpy(a.offsets, c.offsets, sizeof a.offsets);
            a.smem_offset = c.smem_offset;
            a.smem_bytes = c.smem_bytes;
            a.expect_tx = c.expect_tx;
            a.rank = c.rank;
            a.im2col = c.kind == 1;
            a.store = c.operation == 1;
            capture_kernel<<<1, 128, c.smem_bytes + 1024>>>(map, a, window, tx);
            check(cudaGetLastError());
            check(cudaDeviceSynchronize());
            check(cudaMemcpy(&result.tx_complete, tx, sizeof(int), cudaMemcpyDeviceToHost));
            if (c.operation == 0) {
                payload.resize(c.smem_bytes);
                check(cudaMemcpy(payload.data(), window, c.smem_bytes, cudaMemcpyDeviceToHost));
            } else {
                payload.resize(c.global_bytes);
                check(cudaMemcpy(payload.data(), global + c.global_offset, c.global_bytes, cudaMemcpyDeviceToHost));
            }
        }
        check(cudaFree(global));
        check(cudaFree(window));
        check(cudaFree(tx));
        result.payload_bytes = payload.size();
        std::fwrite(&result, sizeof result, 1, out);
        std::fwrite(payload.data(), 1, payload.size(), out);
        if (status == CUDA_SUCCESS && !result.tx_complete) {
            // the copy may still be in flight: the next case gets a context of its own
            std::fclose(out);
            return 3;
        }
    }
    std::fclose(out);
    return 0;
}
