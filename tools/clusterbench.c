/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterbench: sustained frames per second of the cluster finder on
 * simulated MÖNCH-like frames, for each backend, input memory, cluster
 * size, thread or stream count and batch size asked for, and (with CUDA)
 * the host-to-device copy ceiling of the same frames in the same run.
 * Frames are made and the pedestal trained before the clock starts; each
 * figure is the median of several timed runs, and the minor page faults
 * inside the timed runs are reported so that a figure paid for by
 * first-touch memory shows itself.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "clustercore.h"
#include "finder/finder.h" /* cc__finder_tune_cuda, for --cuda-shape */
#ifdef CC_HAVE_CUDA
#include "copy_ceiling.h"
#endif

enum input { INPUT_PINNED, INPUT_PAGEABLE, INPUT_REGISTERED, INPUT_LIST, INPUTS };
static const char *const input_names[] = {"pinned", "pageable", "registered",
                                          "list"};

struct options {
    uint32_t rows, cols;
    uint32_t frames;  /* distinct frames cycled through */
    uint32_t photons; /* per frame */
    uint32_t repeats; /* timed runs per figure; the median is reported */
    double seconds;   /* length of one timed run */
    cc_precision precision;
    char sizes[64], threads[64], streams[64], batches[64];
    char side_by_side[64]; /* CPU: finders of one thread run at once */
    char backends[64], inputs[64];
    char copies[64]; /* how the CUDA backend issues copies */
    struct cc__cuda_tuning shape; /* zeros: the backend's own choice */
    bool accumulators; /* also time the spectrum and the hit map */
    bool image;        /* the finder images as it finds (--image) */
    bool flat_field;   /* ... and keeps a flat field's spectra */
    cc_common_mode common_mode; /* --common-mode; none by default */
    double gain_spread; /* --gain-spread; 0: no gain map */
};

/* Frames in the kinds of memory a caller may hand over. */
struct workload {
    uint16_t *dark;
    uint32_t dark_frames;
    uint16_t *frames[INPUTS]; /* by enum input; NULL until asked for */
    /* INPUT_LIST: each frame in its own page-locked buffer, as in an
     * areaDetector NDArray pool; frames[INPUT_LIST] is list[0]. */
    uint16_t **list;
    uint32_t list_frames;
    double *gain; /* the simulated gains, with --gain-spread; else NULL */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: clusterbench [options]   (LIST: comma-separated values)\n"
            "  --backends LIST   cpu, cuda (default cpu)\n"
            "  --sizes LIST      cluster sizes, e.g. 3,9 or 3x5 (default 3,9)\n"
            "  --threads LIST    CPU threads, 0 = one per CPU (default 1,0)\n"
            "  --side-by-side LIST  CPU: that many finders of one thread\n"
            "                    each, on all the frames at once, nothing\n"
            "                    shared: the machine's own ceiling for as\n"
            "                    many threads; 0 = one per CPU (default none)\n"
            "  --streams LIST    CUDA streams (default 2)\n"
            "  --batches LIST    frames per process call (default 16)\n"
            "  --inputs LIST     pinned, pageable, registered, list: the memory\n"
            "                    the frames are in (default pageable); list:\n"
            "                    each frame in its own page-locked buffer,\n"
            "                    given by cc_finder_process_list\n"
            "  --rows N --cols N frame size (default 400 x 400)\n"
            "  --frames N        distinct frames to cycle through (default 256)\n"
            "  --photons N       mean photons per frame (default 2330)\n"
            "  --seconds S       length of one timed run (default 1)\n"
            "  --repeats N       timed runs per figure, median reported (default 5)\n"
            "  --precision float|double (default float)\n"
            "  --image           the finder also images what it finds: Cu Ka\n"
            "                    window of sum2x2, eta2, 5 x 5 sub-pixels; each\n"
            "                    timed run ends by taking the image\n"
            "  --flat-field      the finder also enters what it finds into a\n"
            "                    flat field's per-pixel spectra: single\n"
            "                    events, 40 bins on [500, 1100) ADU; each\n"
            "                    timed run ends by taking them\n"
            "  --accumulators    also time what a plugin does with the\n"
            "                    clusters: cc_spectrum_add (sum, 400 bins on\n"
            "                    [0, 2000)) and cc_hitmap_add, per frame\n"
            "  --copies LIST     how CUDA issues copies of several buffers (a\n"
            "                    list's frames in, a chunk's clusters out):\n"
            "                    each (a cudaMemcpyAsync each), batched (one\n"
            "                    cudaMemcpyBatchAsync), default (the backend's\n"
            "                    choice, the default)\n"
            "  --cuda-shape STEPS,ROWS,COLS,THREADS[,CHUNK]\n"
            "                    CUDA frames a decide launch, tile, threads a\n"
            "                    block and frames a chunk (0: the backend's\n"
            "                    choice, the default)\n"
            "  --common-mode MODE  none, supercolumn, row or half: the\n"
            "                    finder corrects it, and the frames carry\n"
            "                    30 ADU rms of it (default none)\n"
            "  --gain-spread X   the frames' pixels have gains of X rms, and\n"
            "                    the finder their map (default 0: none)\n");
}

/* Seconds on a clock: CLOCK_MONOTONIC for wall time,
 * CLOCK_PROCESS_CPUTIME_ID for the CPU time of every thread. */
static double clock_seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now(void)
{
    return clock_seconds(CLOCK_MONOTONIC);
}

static double cpu_seconds(void)
{
    return clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

static long minor_faults(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse_size(const char *text, uint32_t *nx, uint32_t *ny)
{
    unsigned a, b;
    if (sscanf(text, "%ux%u", &a, &b) == 2) {
        *nx = a;
        *ny = b;
        return 0;
    }
    if (sscanf(text, "%u", &a) == 1) {
        *nx = *ny = a;
        return 0;
    }
    return -1;
}

/* Splits list at commas into at most `most` items; returns the count. */
static int split(const char *list, char items[][16], int most)
{
    int n = 0;
    const char *start = list;
    while (*start != '\0' && n < most) {
        size_t length = strcspn(start, ",");
        snprintf(items[n], 16, "%.*s", (int)length, start);
        n++;
        start += length + (start[length] == ',');
    }
    return n;
}

/* One page-locked buffer per frame, copies of the pageable frames. */
static uint16_t *frames_in_list(struct workload *work, size_t bytes,
                                uint32_t n_frames)
{
    size_t frame_bytes = bytes / n_frames;
    work->list = calloc(n_frames, sizeof *work->list);
    if (work->list == NULL)
        return NULL;
    for (uint32_t k = 0; k < n_frames; k++) {
        work->list[k] = cc_host_alloc(frame_bytes);
        if (work->list[k] == NULL)
            return NULL;
        work->list_frames = k + 1;
        memcpy(work->list[k],
               (const char *)work->frames[INPUT_PAGEABLE] + k * frame_bytes,
               frame_bytes);
    }
    work->frames[INPUT_LIST] = work->list[0];
    return work->list[0];
}

static uint16_t *frames_in(struct workload *work, enum input input,
                           size_t bytes, uint32_t n_frames)
{
    if (work->frames[input] != NULL)
        return work->frames[input];
    if (input == INPUT_LIST)
        return frames_in_list(work, bytes, n_frames);
    uint16_t *frames = input == INPUT_PINNED ? cc_host_alloc(bytes)
                                             : malloc(bytes);
    if (frames == NULL)
        return NULL;
    memcpy(frames, work->frames[INPUT_PAGEABLE], bytes);
    if (input == INPUT_REGISTERED && cc_host_register(frames, bytes) != CC_OK) {
        fprintf(stderr, "clusterbench: cannot register frames\n");
        free(frames);
        return NULL;
    }
    work->frames[input] = frames;
    return frames;
}

/* Indexed by CC__COPIES_* (0: the backend's choice). */
static const char *const copies_names[] = {"default", "each", "batched"};
enum { COPIES_NAMES = 3 };

/* One configuration to measure. */
struct run {
    cc_backend backend;
    enum input input;
    uint32_t copies; /* CC__COPIES_*, 0: the backend's choice */
    uint32_t nx, ny, threads, streams, batch;
};

/* Batch b of a run (of `batch` frames) through the finder. */
static int process_batch(cc_finder *finder, const struct workload *work,
                         const struct run *run, const uint16_t *frames,
                         size_t pixels, uint32_t b, cc_clusters *clusters)
{
    size_t first = (size_t)b * run->batch;
    if (run->input == INPUT_LIST)
        return cc_finder_process_list(
            finder, (const uint16_t *const *)work->list + first, NULL,
            run->batch, clusters);
    return cc_finder_process(finder, frames + first * pixels, NULL,
                             run->batch, clusters);
}

static int add_to_image(void *interpolator, const cc_clusters *clusters)
{
    return cc_interpolator_add(interpolator, clusters);
}

/* --flat-field's spectra of the frame, around the simulated Cu Ka line;
 * a failure is said on stderr. */
static int make_spectra(const struct options *options,
                        cc_gain_calibration **spectra)
{
    cc_gain_calibration_config config;
    cc_gain_calibration_config_init(&config);
    config.rows = options->rows;
    config.cols = options->cols;
    config.low = 500;
    config.high = 1100;
    char message[CC_MESSAGE_SIZE];
    int rc = cc_gain_calibration_new(spectra, &config, message);
    if (rc != CC_OK)
        fprintf(stderr, "clusterbench: flat field: %s\n", message);
    return rc;
}

/* The interpolator of --accumulators: eta2 on a map of the workload's own
 * photons in the Cu Ka window of sum2x2, 5 x 5 sub-pixels, as a beamline
 * would image. */
static int make_interpolator(const struct options *options,
                             const cc_clusters *clusters,
                             cc_interpolator **interpolator)
{
    const cc_energy_window window = {CC_ENERGY_SUM2X2, 650, 1000};
    cc_eta_calibration *calibration;
    char message[CC_MESSAGE_SIZE];
    int rc = cc_eta_calibration_new(&calibration, CC_ETA2, 100, &window,
                                    message);
    if (rc == CC_OK)
        rc = cc_eta_calibration_add(calibration, clusters);
    if (rc == CC_OK)
        rc = cc_interpolator_new(interpolator, calibration, &window,
                                 options->rows, options->cols, 5, message);
    cc_eta_calibration_destroy(calibration);
    return rc;
}

/* A trained finder for a run, with its frames in the run's memory and a
 * cluster list, after one untimed pass that sizes the lists and touches
 * every page. */
struct bench_finder {
    cc_finder *finder;
    const uint16_t *frames;
    cc_clusters *clusters;
};

static void close_bench_finder(struct bench_finder *bench)
{
    cc_clusters_destroy(bench->clusters);
    cc_finder_destroy(bench->finder);
}

static int open_bench_finder(const struct options *options,
                             struct workload *work, const struct run *run,
                             struct bench_finder *bench)
{
    *bench = (struct bench_finder){0};
    cc_config config;
    cc_config_init(&config);
    config.rows = options->rows;
    config.cols = options->cols;
    config.cluster_size_x = run->nx;
    config.cluster_size_y = run->ny;
    config.precision = options->precision;
    config.threads = run->threads;
    config.streams = run->streams;
    config.pedestal_frames = work->dark_frames;
    config.backend = run->backend;
    config.common_mode = options->common_mode;
    char message[CC_MESSAGE_SIZE];
    if (cc_finder_new(&bench->finder, &config, message) != CC_OK) {
        fprintf(stderr, "clusterbench: %s\n", message);
        return -1;
    }
    struct cc__cuda_tuning tuning = options->shape;
    tuning.copies = run->copies;
    if (run->backend == CC_BACKEND_CUDA &&
        cc__finder_tune_cuda(bench->finder, &tuning) != CC_OK) {
        fprintf(stderr, "clusterbench: the GPU cannot take that shape\n");
        close_bench_finder(bench);
        return -1;
    }
    if (work->gain != NULL &&
        cc_finder_set_gain(bench->finder, work->gain, CC_GAIN_RELATIVE) !=
            CC_OK) {
        fprintf(stderr, "clusterbench: %s\n",
                cc_finder_last_error(bench->finder));
        close_bench_finder(bench);
        return -1;
    }
    size_t pixels = (size_t)options->rows * options->cols;
    bench->frames = frames_in(work, run->input, pixels * options->frames * 2,
                              options->frames);
    if (bench->frames == NULL || cc_clusters_new(&bench->clusters) != CC_OK ||
        cc_finder_train(bench->finder, work->dark, work->dark_frames) !=
            CC_OK) {
        fprintf(stderr, "clusterbench: set-up failed: %s\n",
                cc_finder_last_error(bench->finder));
        close_bench_finder(bench);
        return -1;
    }
    for (uint32_t b = 0; b < options->frames / run->batch; b++)
        process_batch(bench->finder, work, run, bench->frames, pixels, b,
                      bench->clusters);
    return 0;
}

/* Whole passes over the frames until options->seconds have gone by:
 * the frames done, the clusters found added to *clusters_found; -1 if a
 * batch failed. */
static int64_t timed_passes(const struct options *options,
                            const struct workload *work, const struct run *run,
                            struct bench_finder *bench,
                            uint64_t *clusters_found)
{
    size_t pixels = (size_t)options->rows * options->cols;
    uint32_t batches = options->frames / run->batch;
    int64_t done = 0;
    for (double start = now(); now() - start < options->seconds;) {
        for (uint32_t b = 0; b < batches; b++) {
            if (process_batch(bench->finder, work, run, bench->frames, pixels,
                              b, bench->clusters) != CC_OK) {
                fprintf(stderr, "clusterbench: %s\n",
                        cc_finder_last_error(bench->finder));
                return -1;
            }
            *clusters_found += cc_clusters_total(bench->clusters);
        }
        done += (int64_t)batches * run->batch;
    }
    return done;
}

/* What a configuration's timed runs measured. */
struct measured {
    const double *rates;   /* frames/s of each run, sorted */
    double per_frame;      /* clusters a frame */
    double cpu_per_frame;  /* seconds of CPU, all threads */
    long faults;
};

/* Prints the table row of a measured configuration, the parallelism as
 * words. */
static void print_row(const struct options *options, const struct run *run,
                      const char *parallel, const struct measured *m)
{
    char input[32];
    snprintf(input, sizeof input, "%s", input_names[run->input]);
    if (run->copies != 0)
        snprintf(input, sizeof input, "%s (%s)", input_names[run->input],
                 copies_names[run->copies]);
    double median = m->rates[options->repeats / 2];
    printf("| %s | %s | %ux%u | %s | %s | %u | %.0f | %.0f | %.0f | %.2f | "
           "%.2f | %.1f | %ld |\n",
           run->backend == CC_BACKEND_CUDA ? "cuda" : "cpu",
           input, run->nx, run->ny,
           options->precision == CC_PRECISION_DOUBLE ? "double" : "float",
           parallel, run->batch, median, m->rates[0],
           m->rates[options->repeats - 1], 1e6 / median,
           1e6 * m->cpu_per_frame, m->per_frame, m->faults);
    fflush(stdout);
}

/* Measures one configuration; prints a table row and returns the median
 * frames per second (negative on failure), and the clusters a frame in
 * *per_frame. */
static double bench_one(const struct options *options, struct workload *work,
                        const struct run *run, double *per_frame)
{
    struct bench_finder bench;
    if (open_bench_finder(options, work, run, &bench) != 0)
        return -1;
    /* --image: a map of the untimed pass's last photons, and an image to
     * take the finder's into. */
    cc_interpolator *image = NULL;
    if (options->image &&
        (make_interpolator(options, bench.clusters, &image) != CC_OK ||
         cc_finder_set_interpolator(bench.finder, image) != CC_OK)) {
        fprintf(stderr, "clusterbench: imaging: %s\n",
                cc_finder_last_error(bench.finder));
        return -1;
    }
    /* --flat-field: spectra to take the finder's into. */
    cc_gain_calibration *spectra = NULL;
    if (options->flat_field && make_spectra(options, &spectra) != CC_OK)
        return -1;
    if (spectra != NULL &&
        cc_finder_set_gain_calibration(bench.finder, spectra) != CC_OK) {
        fprintf(stderr, "clusterbench: flat field: %s\n",
                cc_finder_last_error(bench.finder));
        return -1;
    }

    double *rates = calloc(options->repeats, sizeof *rates);
    uint64_t frames_done = 0, clusters_found = 0;
    long faults = minor_faults();
    double cpu = cpu_seconds();
    for (uint32_t r = 0; r < options->repeats; r++) {
        double start = now();
        int64_t done = timed_passes(options, work, run, &bench,
                                    &clusters_found);
        if (done < 0)
            return -1;
        if ((image != NULL &&
             cc_finder_take_image(bench.finder, image) != CC_OK) ||
            (spectra != NULL &&
             cc_finder_take_gain_calibration(bench.finder, spectra) !=
                 CC_OK)) {
            fprintf(stderr, "clusterbench: %s\n",
                    cc_finder_last_error(bench.finder));
            return -1;
        }
        rates[r] = (double)done / (now() - start);
        frames_done += (uint64_t)done;
    }
    struct measured measured = {
        .rates = rates,
        .per_frame = (double)clusters_found / (double)frames_done,
        .cpu_per_frame = (cpu_seconds() - cpu) / (double)frames_done,
        .faults = minor_faults() - faults};
    qsort(rates, options->repeats, sizeof *rates, compare_doubles);
    double median = rates[options->repeats / 2];
    *per_frame = measured.per_frame;
    char parallel[64];
    snprintf(parallel, sizeof parallel, "%u %s%s%s",
             run->backend == CC_BACKEND_CUDA ? run->streams
                                             : cc_finder_threads(bench.finder),
             run->backend == CC_BACKEND_CUDA ? "streams" : "threads",
             image != NULL ? ", imaging" : "",
             spectra != NULL ? ", flat field" : "");
    print_row(options, run, parallel, &measured);
    free(rates);
    cc_interpolator_destroy(image);
    cc_gain_calibration_destroy(spectra);
    close_bench_finder(&bench);
    return median;
}

/* One of the finders that --side-by-side runs at once. */
struct alone {
    const struct options *options;
    const struct workload *work;
    const struct run *run;
    struct bench_finder bench;
    pthread_barrier_t *start;
    int64_t done;
    double seconds;
    uint64_t clusters_found;
};

static void *run_alone(void *context)
{
    struct alone *alone = context;
    pthread_barrier_wait(alone->start);
    double start = now();
    alone->done = timed_passes(alone->options, alone->work, alone->run,
                               &alone->bench, &alone->clusters_found);
    alone->seconds = now() - start;
    return NULL;
}

/* --side-by-side: n finders of one thread each, each on all the frames,
 * started together: what n CPUs do with nothing shared between them, the
 * machine's own ceiling for n threads. Prints a table row and returns
 * the median of the summed frames per second (negative on failure). */
static double bench_side_by_side(const struct options *options,
                                 struct workload *work, const struct run *run,
                                 unsigned n)
{
    struct alone *alones = calloc(n, sizeof *alones);
    pthread_t *threads = calloc(n, sizeof *threads);
    double *rates = calloc(options->repeats, sizeof *rates);
    pthread_barrier_t start;
    unsigned opened = 0;
    int rc = alones != NULL && threads != NULL && rates != NULL &&
                     pthread_barrier_init(&start, NULL, n) == 0
                 ? 0
                 : -1;
    bool barrier = rc == 0;
    while (rc == 0 && opened < n) {
        alones[opened] = (struct alone){.options = options, .work = work,
                                        .run = run, .start = &start};
        rc = open_bench_finder(options, work, run, &alones[opened].bench);
        opened += rc == 0;
    }
    uint64_t frames_done = 0, clusters_found = 0;
    long faults = minor_faults();
    double cpu = cpu_seconds();
    for (uint32_t r = 0; rc == 0 && r < options->repeats; r++) {
        unsigned started = 0;
        while (started < n && pthread_create(&threads[started], NULL,
                                             run_alone, &alones[started]) == 0)
            started++;
        if (started < n) {
            fprintf(stderr, "clusterbench: could not start %u threads\n", n);
            exit(EXIT_FAILURE); /* the started ones wait at the barrier */
        }
        rates[r] = 0;
        for (unsigned i = 0; i < n; i++) {
            pthread_join(threads[i], NULL);
            if (alones[i].done < 0)
                rc = -1;
            rates[r] += (double)alones[i].done / alones[i].seconds;
            frames_done += (uint64_t)alones[i].done;
        }
    }
    struct measured measured = {
        .rates = rates,
        .cpu_per_frame = (cpu_seconds() - cpu) / (double)frames_done,
        .faults = minor_faults() - faults};
    double median = -1;
    if (rc == 0) {
        for (unsigned i = 0; i < n; i++)
            clusters_found += alones[i].clusters_found;
        measured.per_frame = (double)clusters_found / (double)frames_done;
        qsort(rates, options->repeats, sizeof *rates, compare_doubles);
        median = rates[options->repeats / 2];
        char parallel[48];
        snprintf(parallel, sizeof parallel, "%u finders side by side", n);
        print_row(options, run, parallel, &measured);
    }
    if (barrier)
        pthread_barrier_destroy(&start);
    for (unsigned i = 0; i < opened; i++)
        close_bench_finder(&alones[i].bench);
    free(alones);
    free(threads);
    free(rates);
    return median;
}

/* Median frames/s of add(accumulator, clusters) over the workload's
 * clusters (one call for all its frames), as bench_one times. */
static double time_accumulator(const struct options *options,
                               int (*add)(void *, const cc_clusters *),
                               void *accumulator, const cc_clusters *clusters)
{
    double *rates = calloc(options->repeats, sizeof *rates);
    if (rates == NULL)
        return -1;
    size_t frames = cc_clusters_frame_count(clusters);
    for (uint32_t r = 0; r < options->repeats; r++) {
        uint64_t done = 0;
        double start = now(), elapsed = 0;
        while (elapsed < options->seconds) {
            add(accumulator, clusters);
            done += frames;
            elapsed = now() - start;
        }
        rates[r] = (double)done / elapsed;
    }
    qsort(rates, options->repeats, sizeof *rates, compare_doubles);
    double median = rates[options->repeats / 2];
    free(rates);
    return median;
}

static int add_to_spectrum(void *spectrum, const cc_clusters *clusters)
{
    return cc_spectrum_add(spectrum, clusters);
}

static int add_to_hitmap(void *hitmap, const cc_clusters *clusters)
{
    return cc_hitmap_add(hitmap, clusters);
}

/* --accumulators: the spectrum and hit map of the clusters the CPU
 * backend finds in the workload's frames; one table row each. */
static int bench_accumulators(const struct options *options,
                              struct workload *work, uint32_t nx, uint32_t ny)
{
    cc_config config;
    cc_config_init(&config);
    config.rows = options->rows;
    config.cols = options->cols;
    config.cluster_size_x = nx;
    config.cluster_size_y = ny;
    config.pedestal_frames = work->dark_frames;
    config.backend = CC_BACKEND_CPU;
    config.threads = 0;
    char message[CC_MESSAGE_SIZE];
    cc_finder *finder;
    cc_clusters *clusters = NULL;
    cc_spectrum *spectrum = NULL;
    cc_hitmap *hitmap = NULL;
    cc_interpolator *interpolator = NULL;
    int rc = cc_finder_new(&finder, &config, message);
    if (rc == CC_OK)
        rc = cc_clusters_new(&clusters);
    if (rc == CC_OK)
        rc = cc_finder_train(finder, work->dark, work->dark_frames);
    if (rc == CC_OK)
        rc = cc_finder_process(finder, work->frames[INPUT_PAGEABLE], NULL,
                               options->frames, clusters);
    if (rc == CC_OK)
        rc = cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 400, 0, 2000);
    if (rc == CC_OK)
        rc = cc_hitmap_new(&hitmap, options->rows, options->cols);
    if (rc == CC_OK)
        rc = make_interpolator(options, clusters, &interpolator);
    if (rc != CC_OK) {
        fprintf(stderr, "clusterbench: accumulators: %s\n", cc_strerror(rc));
    } else {
        double per_frame = (double)cc_clusters_total(clusters) /
                           (double)cc_clusters_frame_count(clusters);
        const char *names[3] = {"spectrum", "hit map",
                                "image (window, eta2, 5x5)"};
        double rates[3] = {
            time_accumulator(options, add_to_spectrum, spectrum, clusters),
            time_accumulator(options, add_to_hitmap, hitmap, clusters),
            time_accumulator(options, add_to_image, interpolator, clusters)};
        for (int a = 0; a < 3; a++)
            printf("| %s | %ux%u | %.1f | %.0f | %.2f | %.2f |\n", names[a],
                   nx, ny, per_frame, rates[a], 1e6 / rates[a],
                   1e9 / rates[a] / per_frame);
    }
    cc_hitmap_destroy(hitmap);
    cc_interpolator_destroy(interpolator);
    cc_spectrum_destroy(spectrum);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
    return rc == CC_OK ? 0 : -1;
}

static void print_header(int argc, char **argv)
{
    char model[256] = "unknown CPU";
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (cpuinfo != NULL && fgets(line, sizeof line, cpuinfo) != NULL)
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon != NULL) {
                snprintf(model, sizeof model, "%s", colon + 2);
                model[strcspn(model, "\n")] = '\0';
            }
            break;
        }
    if (cpuinfo != NULL)
        fclose(cpuinfo);
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    printf("clusterbench (clustercore %s), %s\n", cc_version(), date);
    printf("machine: %s, %ld online CPUs\ncommand: clusterbench", model,
           sysconf(_SC_NPROCESSORS_ONLN));
    for (int i = 1; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n\n| backend | input | cluster | precision | parallel | batch "
           "| frames/s (median) | min | max | us/frame | CPU us/frame "
           "| clusters/frame | page faults timed |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

static int parse_options(int argc, char **argv, struct options *options)
{
    static const struct option long_options[] = {
        {"backends", required_argument, NULL, 'B'},
        {"inputs", required_argument, NULL, 'I'},
        {"sizes", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"side-by-side", required_argument, NULL, 'i'},
        {"streams", required_argument, NULL, 'T'},
        {"batches", required_argument, NULL, 'b'},
        {"rows", required_argument, NULL, 'r'},
        {"cols", required_argument, NULL, 'c'},
        {"frames", required_argument, NULL, 'f'},
        {"photons", required_argument, NULL, 'p'},
        {"seconds", required_argument, NULL, 'S'},
        {"repeats", required_argument, NULL, 'R'},
        {"precision", required_argument, NULL, 'P'},
        {"cuda-shape", required_argument, NULL, 'G'},
        {"copies", required_argument, NULL, 'L'},
        {"accumulators", no_argument, NULL, 'A'},
        {"image", no_argument, NULL, 'M'},
        {"flat-field", no_argument, NULL, 'F'},
        {"common-mode", required_argument, NULL, 'C'},
        {"gain-spread", required_argument, NULL, 'K'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        char *list = NULL;
        switch (opt) {
        case 'B': list = options->backends; break;
        case 'I': list = options->inputs; break;
        case 's': list = options->sizes; break;
        case 't': list = options->threads; break;
        case 'i': list = options->side_by_side; break;
        case 'T': list = options->streams; break;
        case 'b': list = options->batches; break;
        case 'L': list = options->copies; break;
        case 'r': options->rows = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'c': options->cols = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'f': options->frames = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'p': options->photons = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'S': options->seconds = strtod(optarg, NULL); break;
        case 'R': options->repeats = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'P':
            if (strcmp(optarg, "double") != 0 && strcmp(optarg, "float") != 0) {
                fprintf(stderr, "clusterbench: precision is float or double\n");
                return -1;
            }
            options->precision = strcmp(optarg, "double") == 0
                                     ? CC_PRECISION_DOUBLE
                                     : CC_PRECISION_FLOAT;
            break;
        case 'G':
            if (sscanf(optarg,
                       "%" SCNu32 ",%" SCNu32 ",%" SCNu32 ",%" SCNu32
                       ",%" SCNu32,
                       &options->shape.steps, &options->shape.tile_rows,
                       &options->shape.tile_cols, &options->shape.threads,
                       &options->shape.chunk_frames) < 4) {
                fprintf(stderr, "clusterbench: --cuda-shape is "
                                "STEPS,ROWS,COLS,THREADS[,CHUNK]\n");
                return -1;
            }
            break;
        case 'A': options->accumulators = true; break;
        case 'M': options->image = true; break;
        case 'F': options->flat_field = true; break;
        case 'C': {
            char message[CC_MESSAGE_SIZE];
            if (cc_common_mode_parse(optarg, &options->common_mode,
                                     message) != CC_OK) {
                fprintf(stderr, "clusterbench: --common-mode: %s\n", message);
                return -1;
            }
            break;
        }
        case 'K': {
            char *end;
            options->gain_spread = strtod(optarg, &end);
            if (*end != '\0' || !(options->gain_spread >= 0 &&
                                   options->gain_spread <= 0.2)) {
                fprintf(stderr, "clusterbench: --gain-spread %s: a spread in "
                                "[0, 0.2]\n",
                        optarg);
                return -1;
            }
            break;
        }
        case 'h': usage(stdout); exit(EXIT_SUCCESS);
        default: usage(stderr); return -1;
        }
        if (list != NULL)
            snprintf(list, 64, "%s", optarg);
    }
    if (options->rows == 0 || options->cols == 0 || options->repeats == 0 ||
        options->frames == 0 || !(options->seconds > 0)) {
        fprintf(stderr, "clusterbench: sizes, frames, repeats and seconds "
                        "must be positive\n");
        return -1;
    }
    return 0;
}

static int make_workload(const struct options *options, struct workload *work)
{
    size_t pixels = (size_t)options->rows * options->cols;
    work->dark_frames = 100;
    work->dark = malloc(pixels * work->dark_frames * sizeof(uint16_t));
    work->frames[INPUT_PAGEABLE] =
        malloc(pixels * options->frames * sizeof(uint16_t));
    if (work->dark == NULL || work->frames[INPUT_PAGEABLE] == NULL) {
        fprintf(stderr, "clusterbench: out of memory for the frames\n");
        return -1;
    }
    cc_simulator_config model;
    cc_simulator_config_init(&model);
    model.rows = options->rows;
    model.cols = options->cols;
    model.seed = 2026;
    model.flux = options->photons;
    model.threads = 0; /* frames are independent: use every CPU */
    model.common_mode = options->common_mode;
    model.common_mode_rms =
        options->common_mode != CC_COMMON_MODE_NONE ? 30 : 0;
    model.gain_spread = options->gain_spread;
    char message[CC_MESSAGE_SIZE];
    cc_simulator *simulator;
    if (cc_simulator_new(&simulator, &model, message) != CC_OK) {
        fprintf(stderr, "clusterbench: %s\n", message);
        return -1;
    }
    if (options->gain_spread > 0) {
        work->gain = malloc((size_t)model.rows * model.cols *
                            sizeof *work->gain);
        if (work->gain == NULL ||
            cc_simulator_gain_map(simulator, work->gain) != CC_OK) {
            fprintf(stderr, "clusterbench: out of memory for the gains\n");
            cc_simulator_destroy(simulator);
            return -1;
        }
    }
    int rc = cc_simulator_dark_frames(simulator, 0, work->dark_frames,
                                      work->dark);
    if (rc == CC_OK)
        rc = cc_simulator_frames(simulator, work->dark_frames, options->frames,
                                 work->frames[INPUT_PAGEABLE], NULL);
    cc_simulator_destroy(simulator);
    if (rc != CC_OK)
        fprintf(stderr, "clusterbench: simulating: %s\n", cc_strerror(rc));
    return rc == CC_OK ? 0 : -1;
}

/* With CUDA: the copy ceiling of the largest batch, from pinned frames:
 * in_bytes a frame to the GPU and out_bytes back, at once (either may be
 * 0); a table row named what. */
static double measure_ceiling(const struct options *options,
                              struct workload *work, uint32_t batch,
                              size_t in_bytes, size_t out_bytes,
                              const char *what)
{
#ifdef CC_HAVE_CUDA
    size_t pixels = (size_t)options->rows * options->cols;
    const uint16_t *frames = frames_in(work, INPUT_PINNED,
                                       pixels * options->frames * 2,
                                       options->frames);
    char message[256] = "";
    double *rates = calloc(options->repeats, sizeof *rates);
    for (uint32_t r = 0; frames != NULL && r < options->repeats; r++)
        rates[r] = copy_ceiling(frames, in_bytes, out_bytes, options->frames,
                                batch, options->seconds, message,
                                sizeof message);
    qsort(rates, options->repeats, sizeof *rates, compare_doubles);
    double median = frames != NULL ? rates[options->repeats / 2] : -1;
    if (median > 0)
        printf("| %s | pinned | - | - | %zu B in, %zu B out a frame | %u "
               "| %.0f | %.0f | %.0f | %.2f | - | - | - |\n",
               what, in_bytes, out_bytes, batch, median, rates[0],
               rates[options->repeats - 1], 1e6 / median);
    else
        fprintf(stderr, "clusterbench: %s: %s\n", what, message);
    free(rates);
    return median;
#else
    (void)options;
    (void)work;
    (void)batch;
    (void)in_bytes;
    (void)out_bytes;
    (void)what;
    return -1;
#endif
}

/* The bytes a frame's clusters take on their way back from the GPU:
 * x, y and the values of each, and the frame's stored and dropped. */
static size_t cluster_bytes(double per_frame, uint32_t nx, uint32_t ny)
{
    return (size_t)(per_frame * (4.0 + 4.0 * nx * ny)) + 8;
}

int main(int argc, char **argv)
{
    struct options options = {
        .rows = 400, .cols = 400, .frames = 256, .photons = 2330,
        .repeats = 5, .seconds = 1.0, .precision = CC_PRECISION_FLOAT,
        .sizes = "3,9", .threads = "1,0", .streams = "2", .batches = "16",
        .backends = "cpu", .inputs = "pageable", .copies = "default"};
    if (parse_options(argc, argv, &options) != 0)
        return EXIT_FAILURE;
    struct workload work = {0};
    if (make_workload(&options, &work) != 0)
        return EXIT_FAILURE;
    char backends[8][16], inputs[4][16], sizes[8][16], threads[8][16],
        side[8][16], streams[8][16], batches[8][16], copies[4][16];
    int n_backends = split(options.backends, backends, 8);
    int n_inputs = split(options.inputs, inputs, 4);
    int n_sizes = split(options.sizes, sizes, 8);
    int n_threads = split(options.threads, threads, 8);
    int n_side = split(options.side_by_side, side, 8);
    int n_streams = split(options.streams, streams, 8);
    int n_batches = split(options.batches, batches, 8);
    int n_copies = split(options.copies, copies, 4);
    uint32_t copies_way[4];
    for (int c = 0; c < n_copies; c++) {
        copies_way[c] = COPIES_NAMES;
        for (uint32_t m = 0; m < COPIES_NAMES; m++)
            if (strcmp(copies[c], copies_names[m]) == 0)
                copies_way[c] = m;
        if (copies_way[c] == COPIES_NAMES) {
            fprintf(stderr, "clusterbench: copies are default, each and "
                            "batched\n");
            return EXIT_FAILURE;
        }
    }
    uint32_t largest_batch = 0;
    for (int b = 0; b < n_batches; b++) {
        uint32_t batch = (uint32_t)strtoul(batches[b], NULL, 10);
        if (batch == 0 || batch > options.frames) {
            fprintf(stderr, "clusterbench: a batch must be 1..frames\n");
            return EXIT_FAILURE;
        }
        largest_batch = batch > largest_batch ? batch : largest_batch;
    }
    print_header(argc, argv);
    double ceiling = -1, best_cpu[8] = {0}, best_cuda[8] = {0};
    double both_ways[8] = {0};
    size_t frame_bytes = (size_t)options.rows * options.cols * 2;
    for (int k = 0; k < n_backends; k++) {
        bool cuda = strcmp(backends[k], "cuda") == 0;
        if (!cuda && strcmp(backends[k], "cpu") != 0) {
            fprintf(stderr, "clusterbench: backends are cpu and cuda\n");
            return EXIT_FAILURE;
        }
        if (cuda && ceiling < 0)
            ceiling = measure_ceiling(&options, &work, largest_batch,
                                      frame_bytes, 0, "copy ceiling");
        /* Every combination, the copies varying fastest. */
        int n_parallel = cuda ? n_streams : n_threads + n_side;
        int combinations =
            n_sizes * n_inputs * n_parallel * n_batches * n_copies;
        for (int n = 0; n < combinations; n++) {
            int c = n % n_copies, b = n / n_copies % n_batches;
            int p = n / n_copies / n_batches % n_parallel;
            int i = n / n_copies / n_batches / n_parallel % n_inputs;
            int s = n / n_copies / n_batches / n_parallel / n_inputs;
            /* CPU: the thread counts, then the finders side by side. */
            bool alone = !cuda && p >= n_threads;
            struct run run = {
                .backend = cuda ? CC_BACKEND_CUDA : CC_BACKEND_CPU,
                .threads = cuda || alone ? 1
                                         : (uint32_t)strtoul(threads[p], NULL, 10),
                .streams = cuda ? (uint32_t)strtoul(streams[p], NULL, 10) : 2,
                .batch = (uint32_t)strtoul(batches[b], NULL, 10),
                .input = INPUT_PAGEABLE};
            for (int kind = 0; kind < INPUTS; kind++)
                if (strcmp(inputs[i], input_names[kind]) == 0)
                    run.input = (enum input)kind;
            /* The copies matter only to CUDA. */
            if (c > 0 && !cuda)
                continue;
            run.copies = cuda ? copies_way[c] : 0;
            if (parse_size(sizes[s], &run.nx, &run.ny) != 0) {
                fprintf(stderr, "clusterbench: bad size '%s'\n", sizes[s]);
                return EXIT_FAILURE;
            }
            double per_frame = 0;
            if (alone) {
                unsigned finders =
                    (unsigned)strtoul(side[p - n_threads], NULL, 10);
                if (finders == 0)
                    finders = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
                if (bench_side_by_side(&options, &work, &run, finders) < 0)
                    return EXIT_FAILURE;
                continue;
            }
            double rate = bench_one(&options, &work, &run, &per_frame);
            if (rate < 0)
                return EXIT_FAILURE;
            double *best = cuda ? best_cuda : best_cpu;
            best[s] = rate > best[s] ? rate : best[s];
            /* The size's clusters back, alone and beside the frames in:
             * its ceilings, after its first run. */
            if (cuda && both_ways[s] == 0) {
                size_t out = cluster_bytes(per_frame, run.nx, run.ny);
                measure_ceiling(&options, &work, largest_batch, 0, out,
                                "copy ceiling, back");
                both_ways[s] =
                    measure_ceiling(&options, &work, largest_batch,
                                    frame_bytes, out, "copy ceiling, both ways");
            }
        }
    }
    if (options.accumulators) {
        printf("\n| accumulator | cluster | clusters/frame | frames/s (median) "
               "| us/frame | ns/cluster |\n|---|---|---|---|---|---|\n");
        for (int s = 0; s < n_sizes; s++) {
            uint32_t nx, ny;
            if (parse_size(sizes[s], &nx, &ny) != 0 ||
                bench_accumulators(&options, &work, nx, ny) != 0)
                return EXIT_FAILURE;
        }
    }
    /* The ratios the results file asks for, per cluster size. */
    for (int s = 0; s < n_sizes; s++) {
        if (best_cuda[s] > 0 && ceiling > 0)
            printf("\n%s: best CUDA / copy ceiling = %.2f", sizes[s],
                   best_cuda[s] / ceiling);
        if (best_cuda[s] > 0 && both_ways[s] > 0)
            printf("\n%s: best CUDA / copy ceiling both ways = %.2f",
                   sizes[s], best_cuda[s] / both_ways[s]);
        if (best_cuda[s] > 0 && best_cpu[s] > 0)
            printf("\n%s: best CUDA / best CPU = %.1f", sizes[s],
                   best_cuda[s] / best_cpu[s]);
    }
    printf("\n");
    for (int i = 0; i < INPUT_LIST; i++) {
        if (i == INPUT_REGISTERED && work.frames[i] != NULL)
            cc_host_unregister(work.frames[i]);
        if (i == INPUT_PINNED)
            cc_host_free(work.frames[i]);
        else
            free(work.frames[i]);
    }
    for (uint32_t k = 0; k < work.list_frames; k++)
        cc_host_free(work.list[k]);
    free(work.list);
    free(work.dark);
    free(work.gain);
    return EXIT_SUCCESS;
}
