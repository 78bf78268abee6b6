// The C ABI of the waveform recorder, the same for both compiled backends. Not compiled on
// its own: it follows a backend's waveform header (sim/native.py assembles them).
extern "C" {

void tma_wave_close(void *p) {
    Harness *h = static_cast<Harness *>(p);
    delete h->wave;
    h->wave = nullptr;
}

// Records cycles first..last of the batched runs to the VCD file `path`, until
// tma_wave_close; returns 0, or the errno of opening the file.
int tma_wave_open(void *p, const char *path, long long first, long long last) {
    Harness *h = static_cast<Harness *>(p);
    tma_wave_close(p);
    Wave *wave = new Wave(first, last);
    if (int error = wave->open(h, path)) {
        delete wave;
        return error;
    }
    h->wave = wave;
    return 0;
}

}

#define SAMPLE(cycle) do { if (h->wave) h->wave->sample(h, cycle); } while (0)
// tma_free finishes and frees a recorder its caller left open
#define CLOSE_WAVE(p) tma_wave_close(p)
