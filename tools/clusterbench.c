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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clusterbench.h"

static void usage(FILE *out)
{
    fprintf(
        out,
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
            if (cc_common_mode_parse(optarg, &options->common_mode, message) !=
                CC_OK) {
                fprintf(stderr, "clusterbench: --common-mode: %s\n", message);
                return -1;
            }
            break;
        }
        case 'K': {
            char *end;
            options->gain_spread = strtod(optarg, &end);
            if (*end != '\0' ||
                !(options->gain_spread >= 0 && options->gain_spread <= 0.2)) {
                fprintf(stderr,
                        "clusterbench: --gain-spread %s: a spread in "
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
    work->frames[INPUT_PAGEABLE] = malloc(pixels * options->frames *
                                          sizeof(uint16_t));
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
    model.common_mode_rms = options->common_mode != CC_COMMON_MODE_NONE ? 30
                                                                        : 0;
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

/* The bytes a frame's clusters take on their way back from the GPU:
 * x, y and the values of each, and the frame's stored and dropped. */
static size_t cluster_bytes(double per_frame, uint32_t nx, uint32_t ny)
{
    return (size_t)(per_frame * (4.0 + 4.0 * nx * ny)) + 8;
}

int main(int argc, char **argv)
{
    struct options options = {.rows = 400,
                              .cols = 400,
                              .frames = 256,
                              .photons = 2330,
                              .repeats = 5,
                              .seconds = 1.0,
                              .precision = CC_PRECISION_FLOAT,
                              .sizes = "3,9",
                              .threads = "1,0",
                              .streams = "2",
                              .batches = "16",
                              .backends = "cpu",
                              .inputs = "pageable",
                              .copies = "default"};
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
        int combinations = n_sizes * n_inputs * n_parallel * n_batches *
                           n_copies;
        for (int n = 0; n < combinations; n++) {
            int c = n % n_copies, b = n / n_copies % n_batches;
            int p = n / n_copies / n_batches % n_parallel;
            int i = n / n_copies / n_batches / n_parallel % n_inputs;
            int s = n / n_copies / n_batches / n_parallel / n_inputs;
            /* CPU: the thread counts, then the finders side by side. */
            bool alone = !cuda && p >= n_threads;
            struct run run = {
                .backend = cuda ? CC_BACKEND_CUDA : CC_BACKEND_CPU,
                .threads = cuda || alone
                               ? 1
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
                unsigned finders = (unsigned)strtoul(side[p - n_threads], NULL,
                                                     10);
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
                both_ways[s] = measure_ceiling(&options, &work, largest_batch,
                                               frame_bytes, out,
                                               "copy ceiling, both ways");
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
            printf("\n%s: best CUDA / copy ceiling both ways = %.2f", sizes[s],
                   best_cuda[s] / both_ways[s]);
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
