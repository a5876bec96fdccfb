/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterbench_runs.c: the finder's timed runs for clusterbench: frames
 * in the memory asked for, a trained finder, whole passes over the
 * frames until the time is up, the medians and the table's rows; the
 * copy ceiling of the same frames (clusterbench.h).
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "clusterbench.h"
#ifdef CC_HAVE_CUDA
#include "copy_ceiling.h"
#endif

const char *const input_names[INPUTS] = {"pinned", "pageable", "registered",
                                         "list"};
const char *const copies_names[COPIES_NAMES] = {"default", "each", "batched"};

/* Seconds on a clock: CLOCK_MONOTONIC for wall time,
 * CLOCK_PROCESS_CPUTIME_ID for the CPU time of every thread. */
static double clock_seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double now(void)
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

int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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

/* Batch b of a run (of `batch` frames) through the finder. */
static int process_batch(cc_finder *finder, const struct workload *work,
                         const struct run *run, const uint16_t *frames,
                         size_t pixels, uint32_t b, cc_clusters *clusters)
{
    size_t first = (size_t)b * run->batch;
    if (run->input == INPUT_LIST)
        return cc_finder_process_list(finder,
                                      (const uint16_t *const *)work->list +
                                          first,
                                      NULL, run->batch, clusters);
    return cc_finder_process(finder, frames + first * pixels, NULL, run->batch,
                             clusters);
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
    if (work->gain != NULL && cc_finder_set_gain(bench->finder, work->gain,
                                                 CC_GAIN_RELATIVE) != CC_OK) {
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
    const double *rates;  /* frames/s of each run, sorted */
    double per_frame;     /* clusters a frame */
    double cpu_per_frame; /* seconds of CPU, all threads */
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
           run->backend == CC_BACKEND_CUDA ? "cuda" : "cpu", input, run->nx,
           run->ny,
           options->precision == CC_PRECISION_DOUBLE ? "double" : "float",
           parallel, run->batch, median, m->rates[0],
           m->rates[options->repeats - 1], 1e6 / median, 1e6 * m->cpu_per_frame,
           m->per_frame, m->faults);
    fflush(stdout);
}

double bench_one(const struct options *options, struct workload *work,
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
             cc_finder_take_gain_calibration(bench.finder, spectra) != CC_OK)) {
            fprintf(stderr, "clusterbench: %s\n",
                    cc_finder_last_error(bench.finder));
            return -1;
        }
        rates[r] = (double)done / (now() - start);
        frames_done += (uint64_t)done;
    }
    struct measured measured = {.rates = rates,
                                .per_frame = (double)clusters_found /
                                             (double)frames_done,
                                .cpu_per_frame = (cpu_seconds() - cpu) /
                                                 (double)frames_done,
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
double bench_side_by_side(const struct options *options, struct workload *work,
                          const struct run *run, unsigned n)
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
        alones[opened] = (struct alone){.options = options,
                                        .work = work,
                                        .run = run,
                                        .start = &start};
        rc = open_bench_finder(options, work, run, &alones[opened].bench);
        opened += rc == 0;
    }
    uint64_t frames_done = 0, clusters_found = 0;
    long faults = minor_faults();
    double cpu = cpu_seconds();
    for (uint32_t r = 0; rc == 0 && r < options->repeats; r++) {
        unsigned started = 0;
        while (started < n && pthread_create(&threads[started], NULL, run_alone,
                                             &alones[started]) == 0)
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
    struct measured measured = {.rates = rates,
                                .cpu_per_frame = (cpu_seconds() - cpu) /
                                                 (double)frames_done,
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

double measure_ceiling(const struct options *options, struct workload *work,
                       uint32_t batch, size_t in_bytes, size_t out_bytes,
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
