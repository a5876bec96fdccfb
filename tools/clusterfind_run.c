/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterfind_run.c: the job of clusterfind: train the pedestal on the
 * dark run, find the clusters of the data run batch by batch, write the
 * outputs (each under a temporary name until complete), and print the
 * summary; with --simulate, score the clusters against the ground truth.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clusterfind.h"

enum { BATCH = 32 }; /* frames per read and per finder call */

struct job {
    const struct options *options;
    struct source dark, data;
    cc_simulator *simulator;
    cc_finder *finder;
    cc_clusters *clusters;
    cc_truth *truth;
    cc_truth_score *score;
    cc_clust_writer *clust;
    cc_spectrum *spectrum;
    cc_hitmap *hitmap;
    struct imaging imaging;
    struct gain_job gain;
    cc_peak peak; /* the spectrum's line, when fitted */
    bool peak_fitted;
    uint16_t *frames;
    uint64_t numbers[BATCH];
    uint64_t frames_trained;
    bool noise_written;     /* --noise, written after training */
    uint64_t analog_frames; /* the frames --analog summed */
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fail(const char *format, const char *detail)
{
    fprintf(stderr, "clusterfind: ");
    fprintf(stderr, format, detail);
    fprintf(stderr, "\n");
    return EXIT_RUN_FAILED;
}

/* Opens the runs (real or simulated) and checks they fit together. */
static int open_sources(struct job *job)
{
    const struct options *o = job->options;
    if (o->simulate == 0) {
        if (source_open_raw(&job->dark, o->pedestal, o->chip) != 0 ||
            source_open_raw(&job->data, o->data, o->chip) != 0)
            return EXIT_RUN_FAILED;
        if (job->dark.rows != job->data.rows ||
            job->dark.cols != job->data.cols) {
            fprintf(stderr,
                    "clusterfind: the pedestal run has %u x %u "
                    "pixels, the data run %u x %u: they must match\n",
                    (unsigned)job->dark.rows, (unsigned)job->dark.cols,
                    (unsigned)job->data.rows, (unsigned)job->data.cols);
            return EXIT_RUN_FAILED;
        }
        return 0;
    }
    cc_simulator_config config;
    cc_simulator_config_init(&config);
    config.seed = o->seed;
    config.threads = o->threads;
    if (o->flux >= 0)
        config.flux = o->flux;
    config.pattern = o->pattern;
    config.pattern_period = o->pattern_period;
    config.hot_pixels = o->hot_pixels;
    config.dead_pixels = o->dead_pixels;
    config.common_mode = o->sim_common_mode;
    config.common_mode_rms = o->sim_common_mode_rms;
    config.gain_spread = o->sim_gain_spread;
    if (o->sim_noise_max > 0) {
        config.noise_min = o->sim_noise_min;
        config.noise_max = o->sim_noise_max;
    }
    char message[CC_MESSAGE_SIZE];
    if (cc_simulator_new(&job->simulator, &config, message) != CC_OK ||
        cc_truth_new(&job->truth) != CC_OK ||
        cc_truth_score_new(&job->score, config.rows, config.cols,
                           config.gain) != CC_OK)
        return fail("cannot set up the simulator: %s", message);
    if (o->sim_gain_map != NULL) {
        double *gain = malloc((size_t)config.rows * config.cols * sizeof *gain);
        int rc = gain == NULL ? CC_ENOMEM
                              : cc_simulator_gain_map(job->simulator, gain);
        if (rc == CC_OK)
            rc = cc_gain_map_write_npy(o->sim_gain_map, config.rows,
                                       config.cols, gain, message);
        free(gain);
        if (rc != CC_OK)
            return fail("the simulated gain map: %s",
                        rc == CC_ENOMEM ? "out of memory" : message);
    }
    source_open_simulated(&job->dark, job->simulator, true, o->pedestal_frames);
    source_open_simulated(&job->data, job->simulator, false, o->simulate);
    return 0;
}

/* Makes the finder, the outputs and the buffers. Outputs are opened
 * first thing so that an unwritable path fails before a long run. */
static int set_up(struct job *job)
{
    const struct options *o = job->options;
    char message[CC_MESSAGE_SIZE];
    if (o->output != NULL &&
        cc_clust_writer_new(&job->clust, o->output, message) != CC_OK)
        return fail("%s", message);
    const char *at_end[] = {o->spectrum,       o->hitmap,    o->eta_calibrate,
                            o->image,          o->counts,    o->noise,
                            o->gain_calibrate, o->gain_mask, o->analog};
    for (size_t i = 0; i < sizeof at_end / sizeof at_end[0]; i++) {
        const char *path = at_end[i];
        /* These are written at the end: check now that they can be. */
        char *directory = path == NULL ? NULL : strdup(path);
        char *slash = directory == NULL ? NULL : strrchr(directory, '/');
        if (slash != NULL)
            slash[slash == directory ? 1 : 0] = '\0';
        const char *where = slash != NULL ? directory : ".";
        bool writable = path == NULL || access(where, W_OK) == 0;
        free(directory);
        if (!writable)
            return fail("cannot write %s: its directory is not writable", path);
    }
    cc_config config;
    cc_config_init(&config);
    config.rows = job->data.rows;
    config.cols = job->data.cols;
    config.cluster_size_x = o->size_x;
    config.cluster_size_y = o->size_y;
    config.nsigma = o->nsigma;
    config.pedestal_frames = o->pedestal_frames;
    config.adc_mask = o->adc_mask;
    config.precision = o->precision;
    config.backend = o->backend;
    config.threads = o->threads;
    config.mask_rms_factor = o->auto_mask;
    config.common_mode = o->common_mode;
    if (cc_finder_new(&job->finder, &config, message) != CC_OK)
        return fail("%s", message);
    if (o->mask != NULL && cc_finder_load_mask(job->finder, o->mask) != CC_OK)
        return fail("%s", cc_finder_last_error(job->finder));
    if (o->gain_map != NULL &&
        cc_finder_load_gain(job->finder, o->gain_map, o->gain_unit) != CC_OK)
        return fail("%s", cc_finder_last_error(job->finder));
    if (o->analog != NULL && cc_finder_set_analog(job->finder, 1) != CC_OK)
        return fail("%s", cc_finder_last_error(job->finder));
    int status = imaging_open(&job->imaging, o, config.rows, config.cols);
    if (status == 0)
        status = gain_open(&job->gain, o, job->finder, config.rows,
                           config.cols);
    if (status != 0)
        return status;
    if (job->score != NULL && job->imaging.interpolator != NULL)
        cc_truth_score_set_interpolator(job->score, job->imaging.interpolator);
    size_t pixels = (size_t)config.rows * config.cols;
    /* Page-locked when a GPU is usable: the CUDA backend copies the batch
     * straight from it, without a staging copy on the host. */
    job->frames = cc_host_alloc(BATCH * pixels * sizeof *job->frames);
    if (job->frames == NULL || cc_clusters_new(&job->clusters) != CC_OK ||
        cc_spectrum_new(&job->spectrum, o->energy, o->bins, o->min, o->max) !=
            CC_OK ||
        cc_hitmap_new(&job->hitmap, config.rows, config.cols) != CC_OK)
        return fail("%s", "out of memory");
    return 0;
}

static int train(struct job *job)
{
    const struct options *o = job->options;
    while (job->frames_trained < o->pedestal_frames) {
        uint64_t left = o->pedestal_frames - job->frames_trained;
        size_t n;
        if (source_read(&job->dark, job->frames, job->numbers,
                        left < BATCH ? (size_t)left : BATCH, &n, NULL) != CC_OK)
            return EXIT_RUN_FAILED;
        if (n == 0)
            break;
        if (cc_finder_train(job->finder, job->frames, n) != CC_OK)
            return fail("training: %s", cc_finder_last_error(job->finder));
        job->frames_trained += n;
    }
    if (job->frames_trained < o->pedestal_frames) {
        if (job->frames_trained < 2) {
            fprintf(stderr,
                    "clusterfind: %s has %" PRIu64 " complete "
                    "frames; training needs at least 2\n",
                    job->dark.name, job->frames_trained);
            return EXIT_RUN_FAILED;
        }
        fprintf(stderr,
                "clusterfind: %s has only %" PRIu64 " complete "
                "frames: the pedestal is trained on them (asked "
                "for %u)\n",
                job->dark.name, job->frames_trained,
                (unsigned)o->pedestal_frames);
        if (cc_finder_finish_training(job->finder) != CC_OK)
            return fail("training: %s", cc_finder_last_error(job->finder));
    }
    /* The dark run's noise, before the data run's frames move it. */
    char message[CC_MESSAGE_SIZE];
    if (o->noise != NULL &&
        cc_finder_write_pedestal_maps(job->finder, NULL, o->noise, message) !=
            CC_OK)
        return fail("%s", message);
    job->noise_written = o->noise != NULL;
    return 0;
}

/* Progress on stderr once the run has lasted a second, then each second. */
static void progress(const struct job *job, uint64_t done, double start,
                     double *last)
{
    double t = now();
    if (t - start < 1.0 || t - *last < 1.0)
        return;
    *last = t;
    uint64_t expected = job->data.frames_expected;
    fprintf(stderr, "clusterfind: %" PRIu64 " frames, %.0f frames/s", done,
            (double)done / (t - start));
    if (expected > 0)
        fprintf(stderr, ", %.0f %% done", 100.0 * (double)done / expected);
    fprintf(stderr, isatty(fileno(stderr)) ? "   \r" : "\n");
}

static int process(struct job *job, uint64_t *frames_done, double *seconds)
{
    char message[CC_MESSAGE_SIZE];
    double start = now(), last = start;
    for (;;) {
        size_t n;
        if (source_read(&job->data, job->frames, job->numbers, BATCH, &n,
                        job->truth) != CC_OK)
            return EXIT_RUN_FAILED;
        if (n == 0)
            break;
        if (cc_finder_process(job->finder, job->frames, job->numbers, n,
                              job->clusters) != CC_OK)
            return fail("%s", cc_finder_last_error(job->finder));
        if (job->clust != NULL &&
            cc_clust_writer_write(job->clust, job->clusters, message) != CC_OK)
            return fail("%s", message);
        cc_spectrum_add(job->spectrum, job->clusters);
        cc_hitmap_add(job->hitmap, job->clusters);
        int status = imaging_add(&job->imaging, job->clusters);
        if (status != 0)
            return status;
        if (job->score != NULL &&
            cc_truth_score_add(job->score, job->clusters, job->truth) != CC_OK)
            return fail("%s", "scoring against the ground truth failed");
        *frames_done += n;
        progress(job, *frames_done, start, &last);
    }
    if (now() - start >= 1.0 && isatty(fileno(stderr)))
        fprintf(stderr, "\n");
    *seconds = now() - start;
    if (*frames_done == 0)
        return fail("%s has no complete frames", job->data.name);
    return 0;
}

/* Writes the outputs; if one fails, those already renamed are removed
 * again, so that a failed run leaves no output at all. */
static int write_outputs(struct job *job)
{
    const struct options *o = job->options;
    char message[CC_MESSAGE_SIZE];
    int rc = CC_OK;
    if (job->clust != NULL)
        rc = cc_clust_writer_finish(job->clust, message);
    bool clust_written = job->clust != NULL && rc == CC_OK;
    if (rc == CC_OK && o->spectrum != NULL)
        rc = cc_spectrum_write_csv(job->spectrum,
                                   job->peak_fitted ? &job->peak : NULL,
                                   o->spectrum, message);
    bool spectrum_written = o->spectrum != NULL && rc == CC_OK;
    bool hitmap_written = false;
    if (rc == CC_OK && o->hitmap != NULL)
        hitmap_written = (rc = cc_hitmap_write_npy(job->hitmap, o->hitmap,
                                                   message)) == CC_OK;
    bool analog_written = false;
    if (rc == CC_OK && o->analog != NULL)
        analog_written = (rc = cc_finder_write_analog(job->finder, o->analog,
                                                      &job->analog_frames,
                                                      message)) == CC_OK;
    const char *written[8];
    int n_written = 0;
    if (rc == CC_OK)
        rc = imaging_write(&job->imaging, written, &n_written, message);
    if (rc == CC_OK)
        rc = gain_write(&job->gain, job->finder, written, &n_written, message);
    if (rc == CC_OK)
        return 0;
    if (clust_written)
        unlink(o->output);
    if (spectrum_written)
        unlink(o->spectrum);
    if (hitmap_written)
        unlink(o->hitmap);
    if (analog_written)
        unlink(o->analog);
    for (int i = 0; i < n_written; i++)
        unlink(written[i]);
    return fail("%s", message);
}

/* One line on the common mode: its spread over regions and frames, and
 * the frames in which a region had too few quiet pixels. */
static void common_mode_summary(const struct job *job)
{
    cc_config config;
    cc_finder_get_config(job->finder, &config);
    uint32_t n = cc_common_mode_regions(&config);
    cc_common_mode_region *regions = calloc(n, sizeof *regions);
    if (n == 0 || regions == NULL ||
        cc_finder_common_mode(job->finder, regions, n) != CC_OK) {
        free(regions);
        return;
    }
    uint64_t estimated = 0, unestimated = 0;
    double sum_sq = 0, largest = 0;
    for (uint32_t r = 0; r < n; r++) {
        estimated += regions[r].frames_estimated;
        unestimated += regions[r].frames_unestimated;
        double frames = (double)regions[r].frames_estimated;
        sum_sq += frames * (regions[r].rms * regions[r].rms +
                            regions[r].mean * regions[r].mean);
        largest = fabs(regions[r].mean) > largest ? fabs(regions[r].mean)
                                                  : largest;
    }
    printf("common:    %s, %u regions: rms %.2f ADU over regions and frames, "
           "largest region mean %.2f ADU, %" PRIu64
           " region-frames with too few quiet pixels (of %" PRIu64 ")\n",
           cc_common_mode_name(config.common_mode), (unsigned)n,
           estimated > 0 ? sqrt(sum_sq / (double)estimated) : 0.0, largest,
           unestimated, estimated + unestimated);
    free(regions);
}

static void summary(const struct job *job, uint64_t frames, double seconds)
{
    const struct options *o = job->options;
    cc_finder_stats stats;
    cc_finder_get_stats(job->finder, &stats);
    printf("clusterfind %s: %ux%u clusters, nsigma %g, %s\n", cc_version(),
           (unsigned)o->size_x, (unsigned)o->size_y, o->nsigma,
           cc_finder_backend_description(job->finder));
    printf("pedestal:  %" PRIu64 " dark frames from %s\n", job->frames_trained,
           job->dark.name);
    if (job->dark.layout != CC_RAW_LAYOUT_ROWS ||
        job->data.layout != CC_RAW_LAYOUT_ROWS)
        printf("layout:    %s (pedestal), %s (data), read into rows\n",
               cc_raw_layout_name(job->dark.layout),
               cc_raw_layout_name(job->data.layout));
    printf("frames:    %" PRIu64 " in %.2f s, %.0f frames/s\n", frames, seconds,
           seconds > 0 ? (double)frames / seconds : 0.0);
    printf("clusters:  %" PRIu64 " (%.1f per frame), %" PRIu64
           " dropped in %" PRIu64 " frames\n",
           stats.clusters,
           frames > 0 ? (double)stats.clusters / (double)frames : 0.0,
           stats.clusters_dropped, stats.frames_truncated);
    if (o->mask != NULL || o->auto_mask > 0)
        printf("mask:      %" PRIu64 " bad pixels masked\n",
               stats.masked_pixels);
    common_mode_summary(job);
    gain_summary(&job->gain, job->finder);
    const char *energy = o->energy == CC_ENERGY_SUM ? "sum" : "sum2x2";
    uint32_t bins = cc_spectrum_bins(job->spectrum);
    const uint64_t *counts = cc_spectrum_counts(job->spectrum);
    uint32_t peak = 0;
    for (uint32_t i = 1; i < bins; i++)
        peak = counts[i] > counts[peak] ? i : peak;
    /* An empty histogram has no peak: bin 0 would only be the first. */
    const char *unit = o->energy_unit;
    double scale = o->energy_scale;
    if (counts[peak] > 0)
        printf("spectrum:  peak at %g %s (bin %g..%g, %s), ",
               0.5 *
                   (cc_spectrum_edge(job->spectrum, peak) +
                    cc_spectrum_edge(job->spectrum, peak + 1)) /
                   scale,
               unit, cc_spectrum_edge(job->spectrum, peak) / scale,
               cc_spectrum_edge(job->spectrum, peak + 1) / scale, energy);
    else
        printf("spectrum:  no clusters in [%g, %g) %s (%s), ",
               cc_spectrum_edge(job->spectrum, 0) / scale,
               cc_spectrum_edge(job->spectrum, bins) / scale, unit, energy);
    printf("%" PRIu64 " below, %" PRIu64 " above the range\n",
           cc_spectrum_underflow(job->spectrum),
           cc_spectrum_overflow(job->spectrum));
    if (job->peak_fitted)
        printf("peak:      %.2f %s, sigma %.2f %s, FWHM %.2f %s (%.2f %%), "
               "%.0f counts, chi2/dof %.2f (%u bins in [%g, %g) %s)\n",
               job->peak.position / scale, unit, job->peak.sigma / scale, unit,
               job->peak.fwhm / scale, unit, 100 * job->peak.resolution,
               job->peak.counts, job->peak.chi2_per_dof,
               (unsigned)job->peak.bins, job->peak.low / scale,
               job->peak.high / scale, unit);
    else
        printf("peak:      no line fitted (too few bins or no peak above "
               "the background)\n");
    if (job->score != NULL) {
        cc_score score;
        cc_truth_score_get(job->score, &score);
        printf("truth:     %" PRIu64 " photons; isolated photons found "
               "%.3f %% (%" PRIu64 " of %" PRIu64 ")\n",
               score.photons, 100 * score.efficiency, score.isolated_found,
               score.isolated_photons);
        printf("truth:     false clusters %.2g per pixel per frame (%" PRIu64
               "); ",
               score.false_rate, score.false_clusters);
        if (score.line0_found > 0)
            printf("Ka cluster sum / true energy %.4f (median of %" PRIu64
                   ")\n",
                   score.line0_ratio, score.line0_found);
        else
            printf("no Ka photon found\n");
        if (score.positioned > 0)
            printf("truth:     position error %.4f px rms per axis, against "
                   "%.4f for the centre pixel's middle (%" PRIu64
                   " isolated photons)\n",
                   score.position_rms, score.centre_rms, score.positioned);
    }
    imaging_summary(&job->imaging);
    if (o->analog != NULL)
        printf("analog:    %" PRIu64 " data frames summed\n",
               job->analog_frames);
    const char *outputs[] = {o->output,    o->spectrum,      o->hitmap,
                             o->noise,     o->eta_calibrate, o->image,
                             o->counts,    o->photons,       o->gain_calibrate,
                             o->gain_mask, o->analog};
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++)
        if (outputs[i] != NULL)
            printf("wrote:     %s\n", outputs[i]);
}

/* Sums the damage the raw readers met; says it on stderr if any. */
static bool input_damaged(const struct job *job)
{
    cc_raw_stats total = {0};
    const struct source *sources[] = {&job->dark, &job->data};
    for (int i = 0; i < 2; i++) {
        cc_raw_stats stats;
        if (sources[i]->reader == NULL ||
            cc_raw_reader_stats(sources[i]->reader, &stats) != CC_OK)
            continue;
        total.files_missing += stats.files_missing;
        total.files_truncated += stats.files_truncated;
        total.frames_padded += stats.frames_padded;
        for (int k = 0; k < CC_RAW_INTERFACES_MAX; k++)
            total.padded_by_interface[k] += stats.padded_by_interface[k];
    }
    if (total.files_missing + total.files_truncated + total.frames_padded == 0)
        return false;
    char by_interface[96] = "";
    if (total.padded_by_interface[1] > 0)
        snprintf(by_interface, sizeof by_interface,
                 ": %" PRIu64 " padded on UDP interface 0, %" PRIu64
                 " on interface 1",
                 total.padded_by_interface[0], total.padded_by_interface[1]);
    fprintf(stderr,
            "clusterfind: the input was damaged (%" PRIu64
            " missing files, %" PRIu64 " truncated files, %" PRIu64
            " padded frames skipped%s); the outputs hold every "
            "complete frame\n",
            total.files_missing, total.files_truncated, total.frames_padded,
            by_interface);
    return true;
}

static void clean_up(struct job *job)
{
    source_close(&job->dark);
    source_close(&job->data);
    cc_clust_writer_destroy(job->clust); /* removes an unfinished file */
    cc_spectrum_destroy(job->spectrum);
    cc_hitmap_destroy(job->hitmap);
    imaging_close(&job->imaging);
    gain_close(&job->gain);
    cc_clusters_destroy(job->clusters);
    cc_truth_score_destroy(job->score);
    cc_truth_destroy(job->truth);
    cc_finder_destroy(job->finder);
    cc_simulator_destroy(job->simulator);
    cc_host_free(job->frames);
}

int clusterfind_run(const struct options *options)
{
    struct job job = {.options = options};
    uint64_t frames = 0;
    double seconds = 0;
    int status = open_sources(&job);
    if (status == 0)
        status = set_up(&job);
    if (status == 0)
        status = train(&job);
    if (status == 0)
        status = process(&job, &frames, &seconds);
    if (status == 0)
        job.peak_fitted = cc_spectrum_fit_peak(job.spectrum, options->peak_low,
                                               options->peak_high,
                                               &job.peak) == CC_OK;
    if (status == 0)
        status = write_outputs(&job);
    if (status == 0)
        summary(&job, frames, seconds);
    if (status == 0 && input_damaged(&job))
        status = EXIT_INPUT_DAMAGED;
    if (status == EXIT_RUN_FAILED && job.noise_written)
        unlink(options->noise); /* a failed run leaves no output */
    clean_up(&job);
    return status;
}
