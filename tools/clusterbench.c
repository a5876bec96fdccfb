/*
 * clusterbench: sustained frames per second of the cluster finder on
 * simulated MÖNCH-like frames, for each cluster size and thread count
 * asked for. Frames are made and the pedestal trained before the clock
 * starts; each figure is the median of several timed runs, and the minor
 * page faults inside the timed runs are reported so that a figure paid
 * for by first-touch memory shows itself.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "clustercore.h"

struct options {
    uint32_t rows, cols;
    uint32_t frames;     /* distinct frames cycled through */
    uint32_t batch;      /* frames per cc_finder_process call */
    uint32_t photons;    /* per frame */
    uint32_t repeats;    /* timed runs per figure; the median is reported */
    double seconds;      /* length of one timed run */
    cc_precision precision;
    char sizes[64];      /* "3,9" */
    char threads[64];    /* "1,0": 0 = one per CPU */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: clusterbench [options]\n"
            "  --sizes LIST      cluster sizes, e.g. 3,9 or 3x5 (default 3,9)\n"
            "  --threads LIST    CPU thread counts, 0 = one per CPU (default 1,0)\n"
            "  --rows N --cols N frame size (default 400 x 400)\n"
            "  --frames N        distinct frames to cycle through (default 128)\n"
            "  --batch N         frames per process call (default 16)\n"
            "  --photons N       mean photons per frame (default 2330)\n"
            "  --seconds S       length of one timed run (default 1)\n"
            "  --repeats N       timed runs per figure, median reported (default 5)\n"
            "  --precision float|double (default float)\n");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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

struct workload {
    uint16_t *dark;   /* frames for training */
    uint16_t *frames; /* frames with photons */
    uint32_t dark_frames;
};

/* Measures one configuration; prints a table row. */
static int bench_one(const struct options *options, const struct workload *work,
                     uint32_t nx, uint32_t ny, uint32_t threads)
{
    cc_config config;
    cc_config_init(&config);
    config.rows = options->rows;
    config.cols = options->cols;
    config.cluster_size_x = nx;
    config.cluster_size_y = ny;
    config.precision = options->precision;
    config.threads = threads;
    config.pedestal_frames = work->dark_frames;
    config.backend = CC_BACKEND_CPU;
    char message[CC_MESSAGE_SIZE];
    cc_finder *finder;
    int rc = cc_finder_new(&finder, &config, message);
    if (rc != CC_OK) {
        fprintf(stderr, "clusterbench: %s\n", message);
        return -1;
    }
    cc_clusters *clusters;
    if (cc_clusters_new(&clusters) != CC_OK ||
        cc_finder_train(finder, work->dark, work->dark_frames) != CC_OK) {
        fprintf(stderr, "clusterbench: %s\n", cc_finder_last_error(finder));
        return -1;
    }
    size_t pixels = (size_t)options->rows * options->cols;
    uint32_t batches = options->frames / options->batch;
    /* One warm-up pass sizes the cluster lists and touches every page. */
    for (uint32_t b = 0; b < batches; b++)
        cc_finder_process(finder, work->frames + (size_t)b * options->batch * pixels,
                          NULL, options->batch, clusters);

    double *rates = calloc(options->repeats, sizeof *rates);
    uint64_t frames_done = 0, clusters_found = 0;
    long faults = minor_faults();
    for (uint32_t r = 0; r < options->repeats; r++) {
        uint64_t done = 0;
        double start = now(), elapsed = 0;
        while (elapsed < options->seconds) {
            for (uint32_t b = 0; b < batches; b++) {
                rc = cc_finder_process(
                    finder, work->frames + (size_t)b * options->batch * pixels,
                    NULL, options->batch, clusters);
                if (rc != CC_OK) {
                    fprintf(stderr, "clusterbench: %s\n",
                            cc_finder_last_error(finder));
                    return -1;
                }
                clusters_found += cc_clusters_total(clusters);
            }
            done += (uint64_t)batches * options->batch;
            elapsed = now() - start;
        }
        rates[r] = (double)done / elapsed;
        frames_done += done;
    }
    faults = minor_faults() - faults;
    qsort(rates, options->repeats, sizeof *rates, compare_doubles);
    double median = rates[options->repeats / 2];
    printf("| %ux%u | %u | %s | %.0f | %.0f | %.0f | %.1f | %ld |\n", nx, ny,
           (unsigned)cc_finder_threads(finder),
           options->precision == CC_PRECISION_DOUBLE ? "double" : "float",
           median, rates[0], rates[options->repeats - 1],
           (double)clusters_found / (double)frames_done, faults);
    fflush(stdout);
    free(rates);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
    return 0;
}

static void print_machine(int argc, char **argv)
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
    printf("\n\n| cluster | threads | precision | frames/s (median) | min | max "
           "| clusters/frame | page faults timed |\n"
           "|---|---|---|---|---|---|---|---|\n");
}

int main(int argc, char **argv)
{
    struct options options = {
        .rows = 400, .cols = 400, .frames = 128, .batch = 16,
        .photons = 2330, .repeats = 5, .seconds = 1.0,
        .precision = CC_PRECISION_FLOAT, .sizes = "3,9", .threads = "1,0"};
    static const struct option long_options[] = {
        {"sizes", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"rows", required_argument, NULL, 'r'},
        {"cols", required_argument, NULL, 'c'},
        {"frames", required_argument, NULL, 'f'},
        {"batch", required_argument, NULL, 'b'},
        {"photons", required_argument, NULL, 'p'},
        {"seconds", required_argument, NULL, 'S'},
        {"repeats", required_argument, NULL, 'R'},
        {"precision", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        switch (opt) {
        case 's': snprintf(options.sizes, sizeof options.sizes, "%s", optarg); break;
        case 't': snprintf(options.threads, sizeof options.threads, "%s", optarg); break;
        case 'r': options.rows = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'c': options.cols = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'f': options.frames = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'b': options.batch = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'p': options.photons = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'S': options.seconds = strtod(optarg, NULL); break;
        case 'R': options.repeats = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'P':
            if (strcmp(optarg, "double") == 0)
                options.precision = CC_PRECISION_DOUBLE;
            else if (strcmp(optarg, "float") == 0)
                options.precision = CC_PRECISION_FLOAT;
            else {
                fprintf(stderr, "clusterbench: precision is float or double\n");
                return EXIT_FAILURE;
            }
            break;
        case 'h': usage(stdout); return EXIT_SUCCESS;
        default: usage(stderr); return EXIT_FAILURE;
        }
    }
    if (options.rows == 0 || options.cols == 0 || options.batch == 0 ||
        options.frames < options.batch || options.repeats == 0 ||
        !(options.seconds > 0)) {
        fprintf(stderr, "clusterbench: sizes, frames >= batch >= 1, repeats "
                        "and seconds must be positive\n");
        return EXIT_FAILURE;
    }

    struct workload work = {.dark_frames = 100};
    size_t pixels = (size_t)options.rows * options.cols;
    work.dark = malloc(pixels * work.dark_frames * sizeof(uint16_t));
    work.frames = malloc(pixels * options.frames * sizeof(uint16_t));
    if (work.dark == NULL || work.frames == NULL) {
        fprintf(stderr, "clusterbench: out of memory for the frames\n");
        return EXIT_FAILURE;
    }
    cc_simulator_config model;
    cc_simulator_config_init(&model);
    model.rows = options.rows;
    model.cols = options.cols;
    model.seed = 2026;
    model.flux = options.photons;
    model.threads = 0; /* frames are independent: use every CPU */
    char message[CC_MESSAGE_SIZE];
    cc_simulator *simulator;
    if (cc_simulator_new(&simulator, &model, message) != CC_OK) {
        fprintf(stderr, "clusterbench: %s\n", message);
        return EXIT_FAILURE;
    }
    int rc = cc_simulator_dark_frames(simulator, 0, work.dark_frames,
                                      work.dark);
    if (rc == CC_OK)
        rc = cc_simulator_frames(simulator, 0, options.frames, work.frames,
                                 NULL);
    cc_simulator_destroy(simulator);
    if (rc != CC_OK) {
        fprintf(stderr, "clusterbench: simulating: %s\n", cc_strerror(rc));
        return EXIT_FAILURE;
    }

    print_machine(argc, argv);
    char sizes[64];
    snprintf(sizes, sizeof sizes, "%s", options.sizes);
    char *saved_size = NULL;
    for (char *size = strtok_r(sizes, ",", &saved_size); size != NULL;
         size = strtok_r(NULL, ",", &saved_size)) {
        uint32_t nx, ny;
        if (parse_size(size, &nx, &ny) != 0) {
            fprintf(stderr, "clusterbench: bad cluster size '%s'\n", size);
            return EXIT_FAILURE;
        }
        char threads[64];
        snprintf(threads, sizeof threads, "%s", options.threads);
        char *save = NULL;
        for (char *t = strtok_r(threads, ",", &save); t != NULL;
             t = strtok_r(NULL, ",", &save))
            if (bench_one(&options, &work, nx, ny,
                          (uint32_t)strtoul(t, NULL, 10)) != 0)
                return EXIT_FAILURE;
    }
    free(work.dark);
    free(work.frames);
    return EXIT_SUCCESS;
}
