/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * moenchSimReceiver: PSI's slsReceiver, carrying simulated MÖNCH photons.
 *
 * It runs the receiver of slsDetectorPackage (sls::Receiver, the code the
 * slsReceiver program runs) on a TCP port, and replaces each frame's
 * pixels, in the receiver's own buffer before the receiver writes them to
 * its raw file and streams them on ZMQ, with libclustercore's simulated
 * frame for that frame number: the first DARK frame numbers are dark
 * frames, the rest data frames. So the detector server (the virtual MÖNCH
 * server, say), the receiver, its files, its ZMQ stream and the EPICS
 * driver that reads it all carry MÖNCH photons, and what the chain finds
 * can be compared with what the core finds in the same frames.
 *
 * Frame number f (the detector numbers frames from 1) is the simulator's
 * frame f - 1: dark frame f - 1 while f <= DARK, else data frame f - 1;
 * with --cycle K the data frames DARK .. DARK + K - 1 repeat, as
 * ADMoenchSim's MoenchCycleFrames does, and are made once at start-up so
 * that the receiver keeps up at kHz rates.
 *
 * C++ because slsDetectorPackage's receiver API is C++.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include <sls/Receiver.h>
#include <sls/sls_detector_defs.h>

#include "clustercore.h"

namespace {

struct Options {
    unsigned port = 1954;
    uint64_t dark = 1000, cycle = 500, seed = 1;
    double flux = 2330;
    unsigned threads = 0;
};

/* The frames handed out, and what happened to the frames received. */
struct Frames {
    Options options;
    cc_simulator *simulator = nullptr;
    size_t rows = 0, cols = 0;
    std::vector<uint16_t> dark;  /* DARK dark frames */
    std::vector<uint16_t> cycle; /* the K data frames repeated, or none */
    std::mutex simulating;       /* data frames made on demand (no cycle) */
    std::vector<uint16_t> scratch;
    std::atomic<uint64_t> replaced{0}, dark_replaced{0}, refused{0};
    std::atomic<uint64_t> first{0}, last{0};
};

void usage(FILE *out)
{
    fprintf(
        out,
        "usage: moenchSimReceiver [options]\n"
        "  --port N       the receiver's TCP port (default 1954), as slsReceiver -t\n"
        "  --dark N       the first N frame numbers are dark frames (default 1000)\n"
        "  --cycle K      K distinct data frames, repeated, made at start-up\n"
        "                 (default 500; 0: each frame made when it comes,\n"
        "                 about 200 frames/s a core)\n"
        "  --seed N       simulator seed (default 1), as ADMoenchSim's MoenchSeed\n"
        "  --flux X       photons per frame (default 2330), as MoenchFlux\n"
        "  --threads N    simulator threads at start-up, 0 = one per CPU (default 0)\n"
        "Runs until SIGINT or SIGTERM, then prints what it replaced.\n");
}

bool parse_number(const char *text, uint64_t *value)
{
    char *end = nullptr;
    unsigned long long n = strtoull(text, &end, 10);
    if (end == text || *end != '\0' || text[0] == '-')
        return false;
    *value = n;
    return true;
}

/* 0 when the options are good, 2 (after a message) when not. */
int parse(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; i++) {
        std::string name = argv[i];
        if (name == "-h" || name == "--help") {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "moenchSimReceiver: %s needs a value\n", argv[i]);
            return 2;
        }
        const char *text = argv[++i];
        uint64_t n = 0;
        bool number = parse_number(text, &n);
        char *end = nullptr;
        if (name == "--flux") {
            o->flux = strtod(text, &end);
            number = end != text && *end == '\0' && o->flux > 0;
        }
        if (name == "--port" && number && n >= 1 && n <= 65535)
            o->port = (unsigned)n;
        else if (name == "--dark" && number)
            o->dark = n;
        else if (name == "--cycle" && number)
            o->cycle = n;
        else if (name == "--seed" && number)
            o->seed = n;
        else if (name == "--threads" && number && n <= 256)
            o->threads = (unsigned)n;
        else if (name != "--flux" || !number) {
            fprintf(stderr, "moenchSimReceiver: bad option %s %s\n",
                    name.c_str(), text);
            usage(stderr);
            return 2;
        }
    }
    return 0;
}

/* Makes the simulator and the frames kept in memory (message on failure). */
int prepare(Frames *f, char *message)
{
    cc_simulator_config config;
    cc_simulator_config_init(&config);
    config.seed = f->options.seed;
    config.flux = f->options.flux;
    config.threads = f->options.threads;
    int rc = cc_simulator_new(&f->simulator, &config, message);
    if (rc != CC_OK)
        return rc;
    f->rows = config.rows;
    f->cols = config.cols;
    size_t pixels = f->rows * f->cols;
    try {
        f->dark.resize(f->options.dark * pixels);
        f->cycle.resize(f->options.cycle * pixels);
        f->scratch.resize(pixels);
    } catch (const std::bad_alloc &) {
        snprintf(message, CC_MESSAGE_SIZE,
                 "no memory for %llu dark and %llu data frames",
                 (unsigned long long)f->options.dark,
                 (unsigned long long)f->options.cycle);
        return CC_ENOMEM;
    }
    rc = cc_simulator_dark_frames(f->simulator, 0, f->options.dark,
                                  f->dark.data());
    if (rc == CC_OK && f->options.cycle > 0)
        rc = cc_simulator_frames(f->simulator, f->options.dark,
                                 f->options.cycle, f->cycle.data(), nullptr);
    if (rc != CC_OK)
        snprintf(message, CC_MESSAGE_SIZE, "the simulator failed: %s",
                 cc_strerror(rc));
    return rc;
}

/* The receiver's raw-data callback, in its DataProcessor thread (one per
 * UDP interface): the frame's pixels (or, with two interfaces, this
 * interface's rows of them, detHeader.row saying which) become the
 * simulated frame's. The size stays; a part of another size is left as
 * it came and counted. */
void replace_pixels(slsDetectorDefs::sls_receiver_header &header,
                    const slsDetectorDefs::dataCallbackHeader, char *data,
                    size_t &size, void *arg)
{
    Frames *f = static_cast<Frames *>(arg);
    const size_t row_bytes = f->cols * sizeof(uint16_t);
    const uint64_t number = header.detHeader.frameNumber;
    size_t part_rows = size / row_bytes;
    size_t first_row = (size_t)header.detHeader.row * part_rows;
    if (number == 0 || size % row_bytes != 0 || part_rows == 0 ||
        first_row + part_rows > f->rows) {
        f->refused++;
        return;
    }
    const uint64_t k = number - 1, dark = f->options.dark;
    const size_t pixels = f->rows * f->cols;
    const uint16_t *frame;
    std::unique_lock<std::mutex> made(f->simulating, std::defer_lock);
    if (k < dark) {
        frame = f->dark.data() + k * pixels;
        f->dark_replaced++;
    } else if (f->options.cycle > 0) {
        frame = f->cycle.data() + ((k - dark) % f->options.cycle) * pixels;
    } else {
        made.lock(); /* one simulator, one scratch frame */
        if (cc_simulator_frames(f->simulator, k, 1, f->scratch.data(),
                                nullptr) != CC_OK) {
            f->refused++;
            return;
        }
        frame = f->scratch.data();
    }
    memcpy(data, frame + first_row * f->cols, part_rows * row_bytes);
    f->replaced++;
    uint64_t seen = f->first.load();
    while ((seen == 0 || number < seen) &&
           !f->first.compare_exchange_weak(seen, number)) {
    }
    seen = f->last.load();
    while (number > seen && !f->last.compare_exchange_weak(seen, number)) {
    }
}

} // namespace

int main(int argc, char **argv)
{
    Frames frames;
    if (parse(argc, argv, &frames.options) != 0)
        return 2;
    char message[CC_MESSAGE_SIZE];
    if (prepare(&frames, message) != CC_OK) {
        fprintf(stderr, "moenchSimReceiver: %s\n", message);
        cc_simulator_destroy(frames.simulator);
        return 1;
    }
    /* The receiver's threads inherit this mask: the signals come to
     * sigwait below. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    int status = 0;
    try {
        sls::Receiver receiver((uint16_t)frames.options.port);
        receiver.registerCallBackRawDataReady(replace_pixels, &frames);
        printf(
            "moenchSimReceiver: slsReceiver %s on TCP port %u; frames 1 "
            "to %llu dark, then data (%s), seed %llu, flux %g\n",
            receiver.getReceiverVersion().c_str(), frames.options.port,
            (unsigned long long)frames.options.dark,
            frames.options.cycle > 0
                ? (std::to_string(frames.options.cycle) + " repeated").c_str()
                : "each made as it comes",
            (unsigned long long)frames.options.seed, frames.options.flux);
        fflush(stdout);
        int signal_number;
        sigwait(&stop, &signal_number);
    } catch (const std::exception &e) {
        fprintf(stderr, "moenchSimReceiver: the receiver failed: %s\n",
                e.what());
        status = 1;
    }
    printf("moenchSimReceiver: %llu frame parts replaced (%llu dark), "
           "frame numbers %llu to %llu; %llu left as they came (size or "
           "number not a MÖNCH frame's)\n",
           (unsigned long long)frames.replaced.load(),
           (unsigned long long)frames.dark_replaced.load(),
           (unsigned long long)frames.first.load(),
           (unsigned long long)frames.last.load(),
           (unsigned long long)frames.refused.load());
    cc_simulator_destroy(frames.simulator);
    return status;
}
