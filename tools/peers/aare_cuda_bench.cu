// SPDX-License-Identifier: BSD-3-Clause
/*
 * aare_cuda_bench.cu: PSI aare's GPU cluster finder (ClusterFinderCUDA,
 * aare's branch feature/cuda_clusterfinder at 5922c73) beside this
 * project's CUDA backend, in one process, on the same page-locked frames:
 * frames/s of each against the copy ceilings of the same run, and how
 * their clusters agree (cc_agreement_add_frame). The frames are those of
 * clusterbench's simulator (its seed, 400 x 400, its photons a frame) or a
 * raw run's. C++ because aare's finder is a C++ template; our side is the
 * public C header. Built by tools/peers/build_aare_cuda.sh.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "aare/ClusterFinderCUDA.hpp"

#include "clustercore.h"
extern "C" {
#include "copy_ceiling.h"
}

namespace {

// aare's finder keeps a Pedestal of its default 1000 samples and divides
// by them on the GPU whatever was pushed: it needs 1000 dark frames.
constexpr size_t aare_pedestal_samples = 1000;
// Both finders' threshold, in units of each pixel's rms (both defaults).
constexpr double nsigma = 5;

struct options {
    std::vector<int> sizes{3, 9};
    size_t frames = 1024;
    size_t batch = 1024;
    double photons = 2330;
    int aare_streams = 5; // ClusterFinderCUDA's own default
    std::vector<int> streams{2};
    double seconds = 1;
    int repeats = 3;
    size_t aare_max = 0; // 0: from our clusters, see aare_capacity()
    const char *dark_master = nullptr;
    const char *data_master = nullptr;
};

struct workload {
    uint32_t rows = 400, cols = 400;
    std::vector<uint16_t> dark;
    uint16_t *frames = nullptr; // page-locked, options.frames of them
    size_t n_frames = 0;
    size_t pixels() const
    {
        return size_t(rows) * cols;
    }
};

double now()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void usage(FILE *out)
{
    std::fprintf(
        out,
        "usage: aare_cuda_bench [options]   (LIST: comma-separated)\n"
        "  --sizes LIST      square cluster sizes, 3, 5, 7, 9 (default 3,9)\n"
        "  --frames N        data frames, cycled through (default 1024)\n"
        "  --batch N         frames a call of either finder (default 1024)\n"
        "  --photons N       simulated photons a frame (default 2330)\n"
        "  --streams LIST    our CUDA streams (default 2, our default)\n"
        "  --aare-streams N  aare's CUDA streams (default 5, its default)\n"
        "  --aare-max N      clusters a frame aare's output holds (default:\n"
        "                    1.25 x the most we find in a frame, to 256)\n"
        "  --seconds S       one timed run (default 1)\n"
        "  --repeats N       timed runs a figure, median shown (default 3)\n"
        "  --raw DARK DATA   a raw run's master files instead of the\n"
        "                    simulator (DARK: at least 1000 frames)\n");
}

bool parse_list(const char *text, std::vector<int> &list)
{
    list.clear();
    for (const char *p = text; *p != '\0';) {
        char *end;
        long value = std::strtol(p, &end, 10);
        if (end == p || value <= 0)
            return false;
        list.push_back(int(value));
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return false;
    }
    return !list.empty();
}

bool parse_options(int argc, char **argv, options &o)
{
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool has_value = i + 1 < argc;
        const char *v = has_value ? argv[i + 1] : "";
        if (a == "--help") {
            usage(stdout);
            std::exit(0);
        } else if (a == "--raw" && i + 2 < argc) {
            o.dark_master = argv[++i];
            o.data_master = argv[++i];
            continue;
        } else if (!has_value) {
            return false;
        } else if (a == "--sizes") {
            if (!parse_list(v, o.sizes))
                return false;
            for (int s : o.sizes)
                if (s != 3 && s != 5 && s != 7 && s != 9)
                    return false;
        } else if (a == "--streams") {
            if (!parse_list(v, o.streams))
                return false;
        } else if (a == "--frames") {
            o.frames = std::strtoul(v, nullptr, 10);
        } else if (a == "--batch") {
            o.batch = std::strtoul(v, nullptr, 10);
        } else if (a == "--photons") {
            o.photons = std::atof(v);
        } else if (a == "--aare-streams") {
            o.aare_streams = std::atoi(v);
        } else if (a == "--aare-max") {
            o.aare_max = std::strtoul(v, nullptr, 10);
        } else if (a == "--seconds") {
            o.seconds = std::atof(v);
        } else if (a == "--repeats") {
            o.repeats = std::atoi(v);
        } else {
            return false;
        }
        i++;
    }
    return o.frames > 0 && o.batch > 0 && o.frames % o.batch == 0 &&
           o.aare_streams > 0 && o.seconds > 0 && o.repeats > 0;
}

bool simulate(const options &o, workload &w)
{
    cc_simulator_config model;
    cc_simulator_config_init(&model);
    model.rows = w.rows;
    model.cols = w.cols;
    model.seed = 2026; // clusterbench's
    model.flux = o.photons;
    model.threads = 0;
    char message[CC_MESSAGE_SIZE];
    cc_simulator *simulator;
    if (cc_simulator_new(&simulator, &model, message) != CC_OK) {
        std::fprintf(stderr, "aare_cuda_bench: %s\n", message);
        return false;
    }
    w.dark.resize(w.pixels() * aare_pedestal_samples);
    int rc = cc_simulator_dark_frames(simulator, 0, aare_pedestal_samples,
                                      w.dark.data());
    if (rc == CC_OK)
        rc = cc_simulator_frames(simulator, aare_pedestal_samples, o.frames,
                                 w.frames, nullptr);
    cc_simulator_destroy(simulator);
    if (rc != CC_OK)
        std::fprintf(stderr, "aare_cuda_bench: simulating: %s\n",
                     cc_strerror(rc));
    return rc == CC_OK;
}

// Up to max_frames frames of a raw run into out, or into *grow (sized to
// what was read) when given; the number read, or -1. aare's GPU finder
// takes the values as they come: the bits above the ADC's 14 (gain bits
// of a raw run) are cleared here, as our finder's adc_mask clears them.
long read_run(const char *master, uint16_t *out, std::vector<uint16_t> *grow,
              size_t max_frames, uint32_t *rows, uint32_t *cols)
{
    char message[CC_MESSAGE_SIZE];
    cc_raw_reader *reader;
    if (cc_raw_reader_open(&reader, master, message) != CC_OK) {
        std::fprintf(stderr, "aare_cuda_bench: %s\n", message);
        return -1;
    }
    cc_raw_info info;
    cc_raw_reader_info(reader, &info);
    *rows = info.rows;
    *cols = info.cols;
    size_t pixels = size_t(info.rows) * info.cols;
    if (grow != nullptr) {
        grow->resize(pixels * max_frames);
        out = grow->data();
    }
    size_t n_read = 0;
    int rc = cc_raw_reader_read(reader, out, nullptr, max_frames, &n_read,
                                message);
    cc_raw_reader_close(reader);
    if (rc != CC_OK) {
        std::fprintf(stderr, "aare_cuda_bench: %s: %s\n", master, message);
        return -1;
    }
    if (grow != nullptr) {
        grow->resize(pixels * n_read);
        out = grow->data();
    }
    for (size_t i = 0; i < pixels * n_read; i++)
        out[i] &= 0x3FFF;
    return long(n_read);
}

bool load(const options &o, workload &w)
{
    if (o.dark_master != nullptr) {
        // The data run's frame size decides the page-locked buffer.
        uint32_t rows, cols;
        std::vector<uint16_t> probe;
        if (read_run(o.data_master, nullptr, &probe, 1, &rows, &cols) < 0)
            return false;
        w.rows = rows;
        w.cols = cols;
    }
    w.frames = static_cast<uint16_t *>(
        cc_host_alloc(w.pixels() * o.frames * sizeof(uint16_t)));
    if (w.frames == nullptr || !cc_host_is_locked(w.frames)) {
        std::fprintf(stderr, "aare_cuda_bench: no page-locked memory for "
                             "the frames (is there a GPU?)\n");
        return false;
    }
    w.n_frames = o.frames;
    if (o.dark_master == nullptr)
        return simulate(o, w);
    uint32_t rows, cols;
    long dark = read_run(o.dark_master, nullptr, &w.dark, aare_pedestal_samples,
                         &rows, &cols);
    if (dark < 0 || rows != w.rows || cols != w.cols)
        return false;
    if (size_t(dark) < aare_pedestal_samples) {
        std::fprintf(stderr,
                     "aare_cuda_bench: %s has %ld frames: aare's GPU finder "
                     "divides by its pedestal's %zu samples, give as many\n",
                     o.dark_master, dark, aare_pedestal_samples);
        return false;
    }
    long data = read_run(o.data_master, w.frames, nullptr, o.frames, &rows,
                         &cols);
    if (data < long(o.batch)) {
        std::fprintf(stderr,
                     "aare_cuda_bench: %s: fewer frames than a "
                     "batch\n",
                     o.data_master);
        return false;
    }
    w.n_frames = size_t(data) / o.batch * o.batch;
    return true;
}

// Our finder, trained on the dark frames, on backend (the CPU on every
// CPU); nullptr if it cannot be had.
cc_finder *our_finder(const workload &w, int size, int streams,
                      cc_backend backend = CC_BACKEND_CUDA)
{
    cc_config config;
    cc_config_init(&config);
    config.rows = w.rows;
    config.cols = w.cols;
    config.cluster_size_x = config.cluster_size_y = uint32_t(size);
    config.nsigma = nsigma;
    config.pedestal_frames = aare_pedestal_samples;
    config.backend = backend;
    config.threads = 0;
    config.streams = uint32_t(streams);
    char message[CC_MESSAGE_SIZE];
    cc_finder *finder;
    if (cc_finder_new(&finder, &config, message) != CC_OK) {
        std::fprintf(stderr, "aare_cuda_bench: %s\n", message);
        return nullptr;
    }
    if (cc_finder_train(finder, w.dark.data(), aare_pedestal_samples) !=
            CC_OK ||
        cc_finder_backend(finder) != backend) {
        std::fprintf(stderr, "aare_cuda_bench: our finder: %s\n",
                     cc_finder_last_error(finder));
        cc_finder_destroy(finder);
        return nullptr;
    }
    return finder;
}

template <int N> using aare_cluster = aare::Cluster<int32_t, N, N, uint16_t>;
template <int N>
using aare_finder = aare::ClusterFinderCUDA<aare_cluster<N>, uint16_t, double>;

template <int N> void train_aare(aare_finder<N> &finder, const workload &w)
{
    for (size_t k = 0; k < aare_pedestal_samples; k++)
        finder.push_pedestal_frame(
            aare::NDView<uint16_t, 2>(const_cast<uint16_t *>(w.dark.data()) +
                                          k * w.pixels(),
                                      {ssize_t(w.rows), ssize_t(w.cols)}));
}

template <int N>
aare::NDView<uint16_t, 3> batch_view(const workload &w, size_t first,
                                     size_t count)
{
    return aare::NDView<uint16_t, 3>(w.frames + first * w.pixels(),
                                     {ssize_t(count), ssize_t(w.rows),
                                      ssize_t(w.cols)});
}

// The threshold of each pixel as aare's kernel computes it from the
// pedestal it was trained with: the GPU gets the host's double sums as
// floats and takes the textbook variance, sum2 / n - mean^2, in float.
// The host pedestal shows only its mean and rms, whence its sum2.
template <int N>
std::vector<double> aare_thresholds(aare_finder<N> &finder, size_t pixels)
{
    auto mean = finder.pedestal();
    auto noise = finder.noise();
    const float n = float(aare_pedestal_samples);
    std::vector<double> out(pixels);
    for (size_t p = 0; p < pixels; p++) {
        double m = mean.data()[p], s = noise.data()[p];
        float sum2 = float((s * s + m * m) * double(aare_pedestal_samples));
        float mf = float(m);
        float var = sum2 / n - mf * mf;
        out[p] = double(float(nsigma) * std::sqrt(std::max(var, 0.0f)));
    }
    return out;
}

std::vector<double> our_thresholds(cc_finder *finder, size_t pixels)
{
    std::vector<double> out(pixels);
    cc_finder_pedestal_maps(finder, nullptr, out.data());
    for (double &rms : out)
        rms *= nsigma;
    return out;
}

// aare's output holds a fixed number of clusters a frame and copies all of
// it back for every frame: 1.25 times the most we found (on its schedule),
// rounded up to 256.
size_t aare_capacity(const options &o, uint32_t most)
{
    if (o.aare_max > 0)
        return o.aare_max;
    return (size_t(most) * 5 / 4 + 255) / 256 * 256;
}

struct agreement_run {
    // Frame 0 (both pedestals as trained), frames 1 to aare's streams - 1
    // (the first of each of its streams, whose pedestal is as trained),
    // the rest.
    cc_agreement groups[3]{};
    cc_agreement scheduled{}; // all frames, ours on aare's schedule
    uint64_t aare_full = 0;   // frames whose aare output was full
    bool ok = false;
};

// Our clusters of the frames on aare's schedule: a finder of ours for
// each of its streams, given the frames it gives that stream (frame k of
// each batch goes to stream k mod streams), in order. Which stream's list
// holds a frame, and where. On the CPU: the backends give the same bytes.
struct schedule {
    std::vector<cc_clusters *> lists;
    std::vector<size_t> stream, index; // of each frame
    bool ok = false;
    schedule() = default;
    schedule(const schedule &) = delete; // it owns the lists
    ~schedule()
    {
        for (cc_clusters *list : lists)
            cc_clusters_destroy(list);
    }
    // The most clusters a frame holds, what aare's output must take.
    uint32_t most() const
    {
        uint32_t most = 0;
        for (cc_clusters *list : lists)
            for (size_t k = 0; k < cc_clusters_frame_count(list); k++) {
                cc_frame_clusters frame;
                cc_clusters_frame(list, k, &frame);
                most = std::max(most, frame.count);
            }
        return most;
    }
};

void on_schedule(const options &o, const workload &w, int size, schedule &s)
{
    size_t streams = size_t(o.aare_streams);
    std::vector<std::vector<const uint16_t *>> frames(streams);
    s.stream.resize(w.n_frames);
    s.index.resize(w.n_frames);
    for (size_t f = 0; f < w.n_frames; f++) {
        size_t k = f % o.batch % streams;
        s.stream[f] = k;
        s.index[f] = frames[k].size();
        frames[k].push_back(w.frames + f * w.pixels());
    }
    s.lists.assign(streams, nullptr);
    for (size_t k = 0; k < streams; k++) {
        cc_finder *finder = our_finder(w, size, 1, CC_BACKEND_CPU);
        bool done = finder != nullptr &&
                    cc_clusters_new(&s.lists[k]) == CC_OK &&
                    cc_finder_process_list(finder, frames[k].data(), nullptr,
                                           frames[k].size(),
                                           s.lists[k]) == CC_OK;
        if (!done && finder != nullptr)
            std::fprintf(stderr, "aare_cuda_bench: %s\n",
                         cc_finder_last_error(finder));
        cc_finder_destroy(finder);
        if (!done)
            return;
    }
    s.ok = true;
}

// One pass over the frames from the trained state through both finders,
// each frame also against ours on aare's schedule.
template <int N>
agreement_run agree(const options &o, const workload &w, size_t capacity,
                    const schedule &scheduled)
{
    agreement_run run;
    cc_finder *ours = our_finder(w, N, o.streams[0]);
    cc_clusters *clusters = nullptr;
    if (ours == nullptr || cc_clusters_new(&clusters) != CC_OK) {
        cc_finder_destroy(ours);
        return run;
    }
    aare_finder<N> peer({ssize_t(w.rows), ssize_t(w.cols)}, float(nsigma),
                        capacity, o.aare_streams);
    train_aare<N>(peer, w);
    std::vector<double> ours_thr = our_thresholds(ours, w.pixels());
    std::vector<double> peer_thr = aare_thresholds<N>(peer, w.pixels());
    cc_agreement_thresholds thresholds{w.rows,
                                       w.cols,
                                       {ours_thr.data(), peer_thr.data()},
                                       1.0};
    std::vector<uint16_t> x, y;
    std::vector<int32_t> values;
    char message[CC_MESSAGE_SIZE];
    run.ok = true;
    for (size_t first = 0; first < w.n_frames && run.ok; first += o.batch) {
        if (cc_finder_process(ours, w.frames + first * w.pixels(), nullptr,
                              o.batch, clusters) != CC_OK) {
            std::fprintf(stderr, "aare_cuda_bench: %s\n",
                         cc_finder_last_error(ours));
            run.ok = false;
            break;
        }
        auto peer_frames = peer.find_clusters_batched(batch_view<N>(w, first,
                                                                    o.batch),
                                                      first);
        for (size_t k = 0; k < o.batch; k++) {
            cc_frame_clusters a;
            cc_clusters_frame(clusters, k, &a);
            const auto &v = peer_frames[k];
            x.resize(v.size());
            y.resize(v.size());
            values.resize(v.size() * N * N);
            for (size_t i = 0; i < v.size(); i++) {
                x[i] = v[i].x;
                y[i] = v[i].y;
                std::memcpy(&values[i * N * N], v[i].data.data(),
                            sizeof(int32_t) * N * N);
            }
            run.aare_full += v.size() >= capacity;
            cc_frame_clusters b = {first + k, uint32_t(v.size()),
                                   0,         N,
                                   N,         x.data(),
                                   y.data(),  values.data()};
            size_t frame = first + k;
            cc_agreement *into =
                &run.groups[frame == 0                       ? 0
                            : frame < size_t(o.aare_streams) ? 1
                                                             : 2];
            cc_frame_clusters c;
            cc_clusters_frame(scheduled.lists[scheduled.stream[frame]],
                              scheduled.index[frame], &c);
            if (cc_agreement_add_frame(into, &a, &b, &thresholds, message) !=
                    CC_OK ||
                cc_agreement_add_frame(&run.scheduled, &c, &b, &thresholds,
                                       message) != CC_OK) {
                std::fprintf(stderr, "aare_cuda_bench: frame %zu: %s\n",
                             first + k, message);
                run.ok = false;
                break;
            }
        }
    }
    cc_clusters_destroy(clusters);
    cc_finder_destroy(ours);
    return run;
}

// The median frames/s of o.repeats runs of whole passes, each pass a call
// of pass(), each run about o.seconds.
double median_rate(const options &o, size_t frames_a_pass,
                   const std::function<bool()> &pass)
{
    std::vector<double> rates;
    if (!pass()) // untimed: first touches, lazily grown buffers
        return -1;
    for (int r = 0; r < o.repeats; r++) {
        size_t done = 0;
        double start = now();
        while (now() - start < o.seconds) {
            if (!pass())
                return -1;
            done += frames_a_pass;
        }
        rates.push_back(double(done) / (now() - start));
    }
    std::sort(rates.begin(), rates.end());
    return rates[rates.size() / 2];
}

// One row of the agreement table: list a is ours, b aare's.
void print_agreement(int n, const char *which, const cc_agreement &a)
{
    if (a.frames == 0)
        return;
    auto count = [](uint64_t v) { return (unsigned long long)v; };
    double per = 1.0 / double(a.frames);
    double ours = double(a.clusters[0]);
    std::printf("| %dx%d | %s | %llu | %.1f | %.1f | %.4f | %.4f | %lld | "
                "%llu (%llu not max, %llu at threshold, %llu other) | "
                "%llu (%llu at threshold, %llu other) |\n",
                n, n, which, count(a.frames), ours * per,
                double(a.clusters[1]) * per,
                ours > 0 ? double(a.same_place) / ours : 0.0,
                ours > 0 ? double(a.same_values) / ours : 0.0,
                (long long)a.largest_difference, count(a.only[1]),
                count(a.not_max[1]), count(a.at_threshold[1]),
                count(a.only[1] - a.not_max[1] - a.at_threshold[1]),
                count(a.only[0]), count(a.at_threshold[0]),
                count(a.only[0] - a.not_max[0] - a.at_threshold[0]));
}

template <int N> bool run_size(const options &o, const workload &w)
{
    size_t in_bytes = w.pixels() * sizeof(uint16_t);
    schedule scheduled;
    on_schedule(o, w, N, scheduled);
    if (!scheduled.ok)
        return false;
    size_t capacity = aare_capacity(o, scheduled.most());
    agreement_run run = agree<N>(o, w, capacity, scheduled);
    if (!run.ok)
        return false;
    std::printf("\n#### %dx%d: agreement, one pass of %zu frames from the "
                "trained state\n\n",
                N, N, w.n_frames);
    std::printf(
        "| size | frames | count | ours a frame | aare's a frame | same "
        "centre (of ours) | same centre and values | largest value "
        "difference | aare only | ours only |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    std::string middle = "1 to " + std::to_string(o.aare_streams - 1) +
                         ": aare's as trained";
    std::string rest = std::to_string(o.aare_streams) + " on";
    print_agreement(N, "0: both pedestals as trained", run.groups[0]);
    print_agreement(N, middle.c_str(), run.groups[1]);
    print_agreement(N, rest.c_str(), run.groups[2]);
    print_agreement(N, "all, ours on aare's schedule", run.scheduled);
    if (run.aare_full > 0)
        std::printf("\n%llu frames filled aare's output of %zu clusters: "
                    "it dropped clusters there\n",
                    (unsigned long long)run.aare_full, capacity);

    // The copy ceilings: frames in alone, and both ways with each finder's
    // bytes back (ours: its clusters; aare's: its whole output a frame).
    uint64_t clusters = 0, frames = 0;
    for (const cc_agreement &group : run.groups) {
        clusters += group.clusters[0];
        frames += group.frames;
    }
    double per_frame = double(clusters) / double(frames);
    size_t ours_out = size_t(per_frame * (4.0 + 4.0 * N * N)) + 8;
    size_t aare_out = sizeof(uint32_t) + capacity * sizeof(aare_cluster<N>);
    char message[256];
    double ceiling_in = copy_ceiling(w.frames, in_bytes, 0, w.n_frames, o.batch,
                                     o.seconds, message, sizeof message);
    double ceiling_ours = copy_ceiling(w.frames, in_bytes, ours_out, w.n_frames,
                                       o.batch, o.seconds, message,
                                       sizeof message);
    double ceiling_aare = copy_ceiling(w.frames, in_bytes, aare_out, w.n_frames,
                                       o.batch, o.seconds, message,
                                       sizeof message);
    if (ceiling_in < 0 || ceiling_ours < 0 || ceiling_aare < 0) {
        std::fprintf(stderr, "aare_cuda_bench: copy ceiling: %s\n", message);
        return false;
    }

    size_t batches = w.n_frames / o.batch;
    aare_finder<N> peer({ssize_t(w.rows), ssize_t(w.cols)}, float(nsigma),
                        capacity, o.aare_streams);
    train_aare<N>(peer, w);
    double aare_batched = median_rate(o, w.n_frames, [&] {
        for (size_t b = 0; b < batches; b++)
            peer.find_clusters_batched(batch_view<N>(w, b * o.batch, o.batch),
                                       b * o.batch);
        return true;
    });
    double aare_pipelined = median_rate(o, w.n_frames, [&] {
        auto token = peer.submit_batch(batch_view<N>(w, 0, o.batch), 0);
        for (size_t b = 1; b < batches; b++) {
            auto next = peer.submit_batch(batch_view<N>(w, b * o.batch,
                                                        o.batch),
                                          b * o.batch);
            peer.collect(token);
            token = next;
        }
        peer.collect(token);
        return true;
    });

    std::printf("\n#### %dx%d: frames/s, %zu frames in batches of %zu\n\n", N,
                N, w.n_frames, o.batch);
    std::printf("| finder | streams | frames/s | / copy ceiling in | / its "
                "ceiling both ways | ours / aare batched |\n");
    std::printf("|---|---|---|---|---|---|\n");
    std::printf("| copy ceiling, frames in | | %.0f | 1 | | |\n", ceiling_in);
    std::printf("| copy ceiling, in and our %zu bytes a frame back | | %.0f "
                "| | 1 | |\n",
                ours_out, ceiling_ours);
    std::printf("| copy ceiling, in and aare's %zu bytes a frame back | | "
                "%.0f | | 1 | |\n",
                aare_out, ceiling_aare);
    std::printf("| aare find_clusters_batched | %d | %.0f | %.3f | %.3f | |\n",
                o.aare_streams, aare_batched, aare_batched / ceiling_in,
                aare_batched / ceiling_aare);
    std::printf("| aare submit_batch/collect | %d | %.0f | %.3f | %.3f | |\n",
                o.aare_streams, aare_pipelined, aare_pipelined / ceiling_in,
                aare_pipelined / ceiling_aare);
    for (int streams : o.streams) {
        cc_finder *ours = our_finder(w, N, streams);
        cc_clusters *clusters = nullptr;
        if (ours == nullptr || cc_clusters_new(&clusters) != CC_OK)
            return false;
        bool failed = false;
        double rate = median_rate(o, w.n_frames, [&] {
            for (size_t b = 0; b < batches && !failed; b++)
                failed = cc_finder_process(ours,
                                           w.frames + b * o.batch * w.pixels(),
                                           nullptr, o.batch, clusters) != CC_OK;
            return !failed;
        });
        if (rate < 0)
            std::fprintf(stderr, "aare_cuda_bench: %s\n",
                         cc_finder_last_error(ours));
        cc_clusters_destroy(clusters);
        cc_finder_destroy(ours);
        if (rate < 0)
            return false;
        std::printf("| ours (cc_finder_process) | %d | %.0f | %.3f | %.3f | "
                    "%.2f |\n",
                    streams, rate, rate / ceiling_in, rate / ceiling_ours,
                    rate / aare_batched);
    }
    std::fflush(stdout);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    options o;
    if (!parse_options(argc, argv, o)) {
        usage(stderr);
        return 2;
    }
    cudaDeviceProp device;
    if (cudaGetDeviceProperties(&device, 0) != cudaSuccess) {
        std::fprintf(stderr, "aare_cuda_bench: no GPU\n");
        return 1;
    }
    workload w;
    if (!load(o, w))
        return 1;
    std::time_t t = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::gmtime(&t));
    std::printf("aare_cuda_bench on %s, %s UTC: %s, %u x %u, %zu dark and "
                "%zu data frames\n",
                device.name, date,
                o.dark_master ? o.data_master : "clusterbench's simulator",
                w.rows, w.cols, aare_pedestal_samples, w.n_frames);
    bool ok = true;
    for (int size : o.sizes) {
        switch (size) {
        case 3: ok = run_size<3>(o, w); break;
        case 5: ok = run_size<5>(o, w); break;
        case 7: ok = run_size<7>(o, w); break;
        default: ok = run_size<9>(o, w); break;
        }
        if (!ok)
            break;
    }
    cc_host_free(w.frames);
    return ok ? 0 : 1;
}
