/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * source_totals: what the finder finds in the frames the example IOC's
 * simulated source (ADMoenchSim) sends, computed with the core alone, so
 * that an IOC run can be compared with it exactly.
 *
 * The source sends DARK dark frames (simulator dark frames 0, 1, ...),
 * then data frames DARK, DARK + 1, ...; with --cycle K the data frames
 * DARK .. DARK + K - 1 over and over. A chain that loses the first frames
 * of an acquisition (a ZMQ subscriber that joins late) is described by
 * --lost-dark and --lost: the plugin gets the dark frames from LOST_DARK
 * on and the data frames from DARK + LOST on. A chain that loses frames
 * anywhere (a receiver's UDP socket that overflows) is described by
 * --frame-numbers: the detector's frame number of each array the plugin
 * got, in order, where frame number f carries simulator frame f - 1, as
 * moenchSimReceiver fills it; a number followed by "p" was a pedestal
 * frame (FrameMode Pedestal or NewPedestal: cc_finder_add_pedestal). The
 * plugin trains on the first PEDESTAL arrays it gets and finds clusters
 * in the rest, but for its pedestal frames. This
 * program does the same, on the CPU backend, and prints the frames, clusters stored and
 * dropped; the spectrum (the plugin's defaults: sum, 400 bins on
 * [0, 2000)) and the hit map can be written one count a line.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clustercore.h"

#define BATCH 64

struct options {
    uint64_t seed, dark, pedestal, frames, cycle, lost_dark, lost;
    double flux, nsigma;
    uint32_t size, max_clusters, threads, hot_pixels;
    const char *spectrum_path, *hitmap_path;
    const char *frame_numbers_path; /* one detector frame number a line */
    const char *mask_path;          /* bad pixels, .npy */
    const char *maps_prefix;        /* PREFIX_mean.txt, _rms.txt, _mask.txt */
    const char *analog_path;        /* the analog image's sums, one a line */
    double auto_mask;               /* the rms rule's k, 0 = off */
    bool windowed; /* the hit map counts [low, high) ADU of sum */
    double window_low, window_high;
};

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: source_totals --frames N [options]\n"
        "  --frames N          arrays the source sends after its dark frames\n"
        "  --dark N            dark frames first (MoenchDarkFrames, default 0)\n"
        "  --pedestal N        arrays the plugin trains on (PedestalFrames,\n"
        "                      default 1000)\n"
        "  --cycle K           data frames repeated (MoenchCycleFrames, 0 = none)\n"
        "  --lost-dark N       the first N dark frames never reach the plugin\n"
        "  --lost N            the first N data frames never reach the plugin\n"
        "  --frame-numbers FILE  instead of --frames, --lost-dark and --lost:\n"
        "                      the frame number (from 1) of each array the\n"
        "                      plugin got, one a line, as moenchSimReceiver\n"
        "                      numbers them (frame f: simulator frame f - 1);\n"
        "                      \"f p\": a pedestal frame (FrameMode Pedestal)\n"
        "  --seed N --flux X   MoenchSeed (default 1), MoenchFlux (default 2330)\n"
        "  --hot-pixels N      MoenchHotPixels (default 0); prints how many\n"
        "                      of them the mask takes out\n"
        "  --size N            cluster size N x N (default 3)\n"
        "  --nsigma X          (default 5)\n"
        "  --max-clusters N    MaxClusters (default 5000)\n"
        "  --threads N         CPU threads, 0 = one per CPU (default 0)\n"
        "  --spectrum FILE     spectrum counts, one a line\n"
        "  --hitmap FILE       hit map counts, row-major, one a line\n"
        "  --mask FILE.npy     bad pixels (LoadMask of MaskFile)\n"
        "  --auto-mask K       the rms rule (AutoMaskFactor, default 0: off)\n"
        "  --energy-window LO:HI  the hit map counts the clusters of sum in\n"
        "                      [LO, HI) ADU (WindowEnable, WindowLow, WindowHigh)\n"
        "  --maps PREFIX       the pedestal's mean and rms (as the plugin's\n"
        "                      float maps, %%.6f) and the mask, one pixel a line,\n"
        "                      in PREFIX_mean.txt, PREFIX_rms.txt, PREFIX_mask.txt\n"
        "  --analog FILE       the analog image (DetectorMode Analog), each\n"
        "                      pixel's sum, %%.17g, one a line\n");
}

static int parse(int argc, char **argv, struct options *o)
{
    static const struct option longs[] = {{"frames", 1, 0, 'f'},
                                          {"dark", 1, 0, 'd'},
                                          {"pedestal", 1, 0, 'p'},
                                          {"cycle", 1, 0, 'c'},
                                          {"seed", 1, 0, 's'},
                                          {"flux", 1, 0, 'x'},
                                          {"size", 1, 0, 'z'},
                                          {"nsigma", 1, 0, 'n'},
                                          {"max-clusters", 1, 0, 'm'},
                                          {"threads", 1, 0, 't'},
                                          {"spectrum", 1, 0, 'S'},
                                          {"hitmap", 1, 0, 'H'},
                                          {"lost-dark", 1, 0, 'L'},
                                          {"lost", 1, 0, 'l'},
                                          {"mask", 1, 0, 'M'},
                                          {"auto-mask", 1, 0, 'a'},
                                          {"energy-window", 1, 0, 'w'},
                                          {"maps", 1, 0, 'P'},
                                          {"analog", 1, 0, 'A'},
                                          {"hot-pixels", 1, 0, 'o'},
                                          {"frame-numbers", 1, 0, 'F'},
                                          {"help", 0, 0, 'h'},
                                          {0, 0, 0, 0}};
    *o = (struct options){.seed = 1,
                          .pedestal = 1000,
                          .flux = 2330,
                          .nsigma = 5,
                          .size = 3,
                          .max_clusters = 5000};
    bool have_frames = false;
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        char *end = NULL;
        unsigned long long n = 0;
        if (c != 'x' && c != 'n' && c != 'S' && c != 'H' && c != 'h' &&
            c != 'M' && c != 'a' && c != 'w' && c != 'P' && c != 'F' &&
            c != 'A' && c != '?')
            n = strtoull(optarg, &end, 10);
        switch (c) {
        case 'f':
            o->frames = n;
            have_frames = true;
            break;
        case 'd': o->dark = n; break;
        case 'p': o->pedestal = n; break;
        case 'c': o->cycle = n; break;
        case 'L': o->lost_dark = n; break;
        case 'l': o->lost = n; break;
        case 's': o->seed = n; break;
        case 'z': o->size = (uint32_t)n; break;
        case 'm': o->max_clusters = (uint32_t)n; break;
        case 't': o->threads = (uint32_t)n; break;
        case 'o': o->hot_pixels = (uint32_t)n; break;
        case 'x': o->flux = strtod(optarg, &end); break;
        case 'n': o->nsigma = strtod(optarg, &end); break;
        case 'S': o->spectrum_path = optarg; break;
        case 'H': o->hitmap_path = optarg; break;
        case 'M': o->mask_path = optarg; break;
        case 'P': o->maps_prefix = optarg; break;
        case 'A': o->analog_path = optarg; break;
        case 'F': o->frame_numbers_path = optarg; break;
        case 'a': o->auto_mask = strtod(optarg, &end); break;
        case 'w':
            o->windowed = true;
            o->window_low = strtod(optarg, &end);
            if (*end == ':')
                o->window_high = strtod(end + 1, &end);
            else
                end = optarg; /* no colon: bad */
            break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
        if (end != NULL && (*end != '\0' || end == optarg)) {
            fprintf(stderr, "source_totals: bad value '%s'\n", optarg);
            return -1;
        }
    }
    /* The frames the plugin got are either a range of each kind or a list. */
    const bool listed = o->frame_numbers_path != NULL;
    if (have_frames == listed || optind != argc || o->pedestal < 2 ||
        o->lost_dark > o->dark || o->lost > o->frames ||
        (listed && (o->lost_dark > 0 || o->lost > 0))) {
        usage(stderr);
        return -1;
    }
    return 0;
}

/* The whole run: array i the plugin gets is simulator frame sequence[i],
 * trained or processed. */
struct run {
    const struct options *o;
    cc_simulator *simulator;
    cc_finder *finder;
    cc_clusters *clusters;
    cc_spectrum *spectrum;
    cc_hitmap *hitmap;
    uint16_t *batch, *cycle;
    size_t pixels;
    uint64_t *sequence, arrays;
    uint8_t *pedestal_frame; /* of each array, with --frame-numbers */
};

/* The simulator frame of each array the plugin gets: the dark frames from
 * LOST_DARK on, then the data frames from DARK + LOST on. */
static int sequence_of_ranges(struct run *r)
{
    const struct options *o = r->o;
    r->arrays = o->dark - o->lost_dark + o->frames - o->lost;
    r->sequence = malloc((r->arrays ? r->arrays : 1) * sizeof *r->sequence);
    if (r->sequence == NULL)
        return CC_ENOMEM;
    uint64_t i = 0;
    for (uint64_t k = o->lost_dark; k < o->dark; k++)
        r->sequence[i++] = k;
    for (uint64_t k = o->lost; k < o->frames; k++)
        r->sequence[i++] = o->dark + k;
    return CC_OK;
}

/* The same from a file of detector frame numbers (frame f: simulator
 * frame f - 1). */
static int sequence_of_numbers(struct run *r, char *message)
{
    FILE *in = fopen(r->o->frame_numbers_path, "r");
    if (in == NULL) {
        snprintf(message, CC_MESSAGE_SIZE, "cannot open %s",
                 r->o->frame_numbers_path);
        return CC_EIO;
    }
    size_t capacity = 0;
    unsigned long long f;
    char line[64], mark[8];
    int got = EOF;
    r->arrays = 0;
    while (fgets(line, sizeof line, in) != NULL &&
           (got = sscanf(line, "%llu %7s", &f, mark)) >= 1 && f > 0 &&
           (got == 1 || strcmp(mark, "p") == 0)) {
        if (r->arrays == capacity) {
            capacity = capacity ? 2 * capacity : 1024;
            uint64_t *grown = realloc(r->sequence, capacity * sizeof *grown);
            if (grown != NULL)
                r->sequence = grown;
            uint8_t *marks = grown == NULL
                                 ? NULL
                                 : realloc(r->pedestal_frame, capacity);
            if (marks == NULL) {
                fclose(in);
                return CC_ENOMEM;
            }
            r->pedestal_frame = marks;
        }
        r->pedestal_frame[r->arrays] = got == 2;
        r->sequence[r->arrays++] = f - 1;
        got = EOF;
    }
    fclose(in);
    if (got != EOF) {
        snprintf(message, CC_MESSAGE_SIZE,
                 "%s: line %" PRIu64 " is not a frame number from 1, "
                 "alone or followed by p",
                 r->o->frame_numbers_path, r->arrays + 1);
        return CC_EINVAL;
    }
    return CC_OK;
}

static bool is_pedestal_frame(const struct run *r, uint64_t i)
{
    return r->pedestal_frame != NULL && r->pedestal_frame[i];
}

/* Up to n of the arrays the plugin gets from array i on, consecutive
 * simulator frames of one kind, not crossing the training and cycle
 * boundaries; *frames points at them. */
static int next_frames(struct run *r, uint64_t i, size_t *n,
                       const uint16_t **frames)
{
    const struct options *o = r->o;
    const uint64_t first = r->sequence[i];
    const bool dark = first < o->dark;
    uint64_t limit = *n;
    if (i < o->pedestal && o->pedestal - i < limit)
        limit = o->pedestal - i;
    if (dark && o->dark - first < limit)
        limit = o->dark - first;
    const uint64_t k = dark || o->cycle == 0 ? 0 : (first - o->dark) % o->cycle;
    if (!dark && o->cycle > 0 && o->cycle - k < limit)
        limit = o->cycle - k;
    uint64_t m = 1;
    while (m < limit && r->sequence[i + m] == first + m &&
           is_pedestal_frame(r, i + m) == is_pedestal_frame(r, i))
        m++;
    *n = (size_t)m;
    *frames = r->batch;
    if (dark)
        return cc_simulator_dark_frames(r->simulator, first, *n, r->batch);
    if (o->cycle > 0) {
        *frames = r->cycle + k * r->pixels;
        return CC_OK;
    }
    return cc_simulator_frames(r->simulator, first, *n, r->batch, NULL);
}

static int set_up(struct run *r, char *message)
{
    const struct options *o = r->o;
    cc_simulator_config sim;
    cc_simulator_config_init(&sim);
    sim.seed = o->seed;
    sim.flux = o->flux;
    sim.hot_pixels = o->hot_pixels;
    sim.threads = o->threads;
    int rc = cc_simulator_new(&r->simulator, &sim, message);
    if (rc != CC_OK)
        return rc;
    cc_config config;
    cc_config_init(&config);
    config.rows = sim.rows;
    config.cols = sim.cols;
    config.cluster_size_x = config.cluster_size_y = o->size;
    config.nsigma = o->nsigma;
    config.pedestal_frames = (uint32_t)o->pedestal;
    config.max_clusters = o->max_clusters;
    config.threads = o->threads;
    config.backend = CC_BACKEND_CPU; /* the reference; every backend agrees */
    config.mask_rms_factor = o->auto_mask;
    rc = cc_finder_new(&r->finder, &config, message);
    if (rc == CC_OK && o->analog_path != NULL)
        rc = cc_finder_set_analog(r->finder, 1);
    if (rc == CC_OK && o->mask_path != NULL &&
        (rc = cc_finder_load_mask(r->finder, o->mask_path)) != CC_OK)
        snprintf(message, CC_MESSAGE_SIZE, "%s",
                 cc_finder_last_error(r->finder));
    if (rc != CC_OK)
        return rc;
    r->pixels = (size_t)sim.rows * sim.cols;
    r->batch = malloc(BATCH * r->pixels * sizeof *r->batch);
    if (o->cycle > 0)
        r->cycle = malloc(o->cycle * r->pixels * sizeof *r->cycle);
    if (r->batch == NULL || (o->cycle > 0 && r->cycle == NULL) ||
        cc_clusters_new(&r->clusters) != CC_OK ||
        cc_spectrum_new(&r->spectrum, CC_ENERGY_SUM, 400, 0, 2000) != CC_OK ||
        cc_hitmap_new(&r->hitmap, sim.rows, sim.cols) != CC_OK) {
        snprintf(message, CC_MESSAGE_SIZE, "out of memory");
        return CC_ENOMEM;
    }
    const cc_energy_window window = {CC_ENERGY_SUM, o->window_low,
                                     o->window_high};
    if (o->windowed && cc_hitmap_set_window(r->hitmap, &window) != CC_OK) {
        snprintf(message, CC_MESSAGE_SIZE, "an empty energy window");
        return CC_EINVAL;
    }
    if (o->cycle > 0)
        rc = cc_simulator_frames(r->simulator, o->dark, (size_t)o->cycle,
                                 r->cycle, NULL);
    return rc;
}

static int run_all(struct run *r, char *message)
{
    const struct options *o = r->o;
    const uint64_t total = r->arrays;
    for (uint64_t i = 0; i < total;) {
        size_t n = total - i < BATCH ? (size_t)(total - i) : BATCH;
        const uint16_t *frames;
        int rc = next_frames(r, i, &n, &frames);
        const bool pedestal_frames = is_pedestal_frame(r, i);
        if (rc == CC_OK)
            rc = pedestal_frames ? cc_finder_add_pedestal(r->finder, frames, n)
                 : i < o->pedestal ? cc_finder_train(r->finder, frames, n)
                                   : cc_finder_process(r->finder, frames, NULL,
                                                       n, r->clusters);
        if (rc == CC_OK && i >= o->pedestal && !pedestal_frames &&
            ((rc = cc_spectrum_add(r->spectrum, r->clusters)) == CC_OK))
            rc = cc_hitmap_add(r->hitmap, r->clusters);
        if (rc != CC_OK) {
            snprintf(message, CC_MESSAGE_SIZE, "frame %" PRIu64 ": %s", i,
                     cc_strerror(rc));
            return rc;
        }
        i += n;
    }
    return CC_OK;
}

static int write_counts(const char *path, const void *counts, size_t n,
                        bool wide)
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%" PRIu64 "\n",
                wide ? ((const uint64_t *)counts)[i]
                     : (uint64_t)((const uint32_t *)counts)[i]);
    return fclose(out);
}

/* Of the hot pixels planted, how many the finder's mask takes out. */
static int hot_masked(const struct run *r, uint64_t *hot, uint64_t *masked)
{
    uint8_t *defects = malloc(r->pixels), *mask = malloc(r->pixels);
    int rc = defects != NULL && mask != NULL &&
                     cc_simulator_defects(r->simulator, defects) == CC_OK &&
                     cc_finder_get_mask(r->finder, mask) == CC_OK
                 ? 0
                 : -1;
    *hot = *masked = 0;
    for (size_t p = 0; rc == 0 && p < r->pixels; p++)
        if (defects[p] == CC_PIXEL_HOT) {
            (*hot)++;
            *masked += mask[p];
        }
    free(defects);
    free(mask);
    return rc;
}

/* The maps the plugin publishes on addresses 2 to 4, as caget prints
 * them: each value rounded to float, then %.6f. */
/* The analog image's sums, exactly (17 significant digits). */
static int write_analog(cc_finder *finder, size_t pixels, const char *path)
{
    double *sums = calloc(pixels, sizeof *sums);
    uint64_t frames = 0;
    FILE *out = NULL;
    int rc = sums != NULL &&
                     cc_finder_take_analog(finder, sums, &frames) == CC_OK &&
                     (out = fopen(path, "w")) != NULL
                 ? 0
                 : -1;
    for (size_t p = 0; rc == 0 && p < pixels; p++)
        fprintf(out, "%.17g\n", sums[p]);
    if (out != NULL && fclose(out) != 0)
        rc = -1;
    free(sums);
    return rc;
}

static int write_maps(cc_finder *finder, size_t pixels, const char *prefix)
{
    double *mean = malloc(2 * pixels * sizeof *mean);
    uint8_t *mask = malloc(pixels);
    int rc = mean != NULL && mask != NULL &&
                     cc_finder_pedestal_maps(finder, mean, mean + pixels) ==
                         CC_OK &&
                     cc_finder_get_mask(finder, mask) == CC_OK
                 ? 0
                 : -1;
    static const char *const suffixes[3] = {"_mean.txt", "_rms.txt",
                                            "_mask.txt"};
    for (int m = 0; rc == 0 && m < 3; m++) {
        char path[1024];
        snprintf(path, sizeof path, "%s%s", prefix, suffixes[m]);
        FILE *out = fopen(path, "w");
        if (out == NULL) {
            rc = -1;
            break;
        }
        for (size_t p = 0; p < pixels; p++)
            if (m < 2)
                fprintf(out, "%.6f\n", (double)(float)mean[m * pixels + p]);
            else
                fprintf(out, "%u\n", (unsigned)mask[p]);
        rc = fclose(out);
    }
    free(mean);
    free(mask);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
    if (parse(argc, argv, &o) != 0)
        return 2;
    struct run r = {.o = &o};
    char message[CC_MESSAGE_SIZE] = "";
    int rc = o.frame_numbers_path != NULL ? sequence_of_numbers(&r, message)
                                          : sequence_of_ranges(&r);
    if (rc == CC_OK)
        rc = set_up(&r, message);
    if (rc == CC_OK)
        rc = run_all(&r, message);
    cc_finder_stats stats;
    if (rc == CC_OK)
        rc = cc_finder_get_stats(r.finder, &stats);
    if (rc == CC_OK) {
        printf("frames %" PRIu64 "\nclusters %" PRIu64 "\ndropped %" PRIu64
               "\nmasked %" PRIu64 "\noutside %" PRIu64 "\n",
               stats.frames_processed, stats.clusters, stats.clusters_dropped,
               stats.masked_pixels, cc_hitmap_outside(r.hitmap));
        /* The line as the plugin fits it (docs/spec.md §4.7). */
        cc_peak peak;
        if (cc_spectrum_fit_peak(r.spectrum, 0, 0, &peak) == CC_OK)
            printf("peak %.4f %.4f\n", peak.position, peak.sigma);
        else
            printf("peak none\n");
        uint64_t hot, masked;
        if (o.hot_pixels > 0 && hot_masked(&r, &hot, &masked) == 0)
            printf("hot %" PRIu64 " masked %" PRIu64 "\n", hot, masked);
        if ((o.spectrum_path != NULL &&
             write_counts(o.spectrum_path, cc_spectrum_counts(r.spectrum),
                          cc_spectrum_bins(r.spectrum), true) != 0) ||
            (o.hitmap_path != NULL &&
             write_counts(o.hitmap_path, cc_hitmap_counts(r.hitmap), r.pixels,
                          false) != 0) ||
            (o.maps_prefix != NULL &&
             write_maps(r.finder, r.pixels, o.maps_prefix) != 0) ||
            (o.analog_path != NULL &&
             write_analog(r.finder, r.pixels, o.analog_path) != 0)) {
            snprintf(message, sizeof message, "cannot write the counts");
            rc = CC_EIO;
        }
    }
    if (rc != CC_OK)
        fprintf(stderr, "source_totals: %s\n",
                message[0] != '\0' ? message : cc_strerror(rc));
    cc_hitmap_destroy(r.hitmap);
    cc_spectrum_destroy(r.spectrum);
    cc_clusters_destroy(r.clusters);
    cc_finder_destroy(r.finder);
    cc_simulator_destroy(r.simulator);
    free(r.batch);
    free(r.cycle);
    free(r.sequence);
    free(r.pedestal_frame);
    return rc == CC_OK ? 0 : 1;
}
