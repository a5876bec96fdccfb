/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gain_calibration.c: a gain map from a flat field (docs/spec.md §9.3):
 * per-pixel spectra of the clusters centred on each pixel, each pixel's
 * line fitted as the spectrum's is (peak_fit.c), gains over the median
 * line or over the line's energy.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

struct cc_gain_calibration {
    cc_gain_calibration_config config;
    size_t pixels;
    uint64_t photons, outside;
    uint32_t *counts; /* pixels * bins */
};

void cc_gain_calibration_config_init(cc_gain_calibration_config *config)
{
    if (config != NULL)
        *config = (cc_gain_calibration_config){.bins = 40,
                                               .events = CC_GAIN_EVENTS_SINGLE,
                                               .fraction = 0.8,
                                               .min_photons = 50};
}

static int check_config(const cc_gain_calibration_config *c, char *message)
{
    if (c == NULL)
        return cc__message(message, CC_EINVAL, "config is NULL");
    if (c->rows == 0 || c->cols == 0 || c->rows > CC_FRAME_SIDE_MAX ||
        c->cols > CC_FRAME_SIDE_MAX)
        return cc__message(message, CC_EINVAL,
                           "frame size %" PRIu32 " x %" PRIu32
                           " is outside 1..%u pixels a side",
                           c->rows, c->cols, CC_FRAME_SIDE_MAX);
    if (c->bins < 6 || c->bins > 1000)
        return cc__message(message, CC_EINVAL,
                           "%" PRIu32 " bins a pixel: 6..1000, a line's fit "
                           "needs 6",
                           c->bins);
    if (!isfinite(c->low) || !isfinite(c->high) || !(c->low < c->high))
        return cc__message(message, CC_EINVAL,
                           "the range [%g, %g) around the line must be "
                           "finite and not empty",
                           c->low, c->high);
    if (c->events != CC_GAIN_EVENTS_SINGLE && c->events != CC_GAIN_EVENTS_SUM)
        return cc__message(message, CC_EINVAL,
                           "unknown events %d: single (0) or sum (1)",
                           (int)c->events);
    if (!(c->fraction > 0.5 && c->fraction <= 1))
        return cc__message(message, CC_EINVAL,
                           "fraction %g: a single event's centre holds more "
                           "than half its sum, (0.5, 1]",
                           c->fraction);
    return CC_OK;
}

int cc_gain_calibration_new(cc_gain_calibration **calibration,
                            const cc_gain_calibration_config *config,
                            char *message)
{
    if (calibration == NULL)
        return cc__message(message, CC_EINVAL, "calibration is NULL");
    *calibration = NULL;
    int rc = check_config(config, message);
    if (rc != CC_OK)
        return rc;
    cc_gain_calibration *made = calloc(1, sizeof *made);
    size_t pixels = (size_t)config->rows * config->cols;
    if (made != NULL)
        made->counts = calloc(pixels * config->bins, sizeof *made->counts);
    if (made == NULL || made->counts == NULL) {
        free(made);
        return cc__message(message, CC_ENOMEM,
                           "no memory for %zu spectra of %" PRIu32 " bins",
                           pixels, config->bins);
    }
    made->config = *config;
    made->pixels = pixels;
    *calibration = made;
    return CC_OK;
}

void cc_gain_calibration_destroy(cc_gain_calibration *calibration)
{
    if (calibration == NULL)
        return;
    free(calibration->counts);
    free(calibration);
}

void cc__gain_calibration_binning(const cc_gain_calibration *calibration,
                                  struct cc__gain_binning *binning)
{
    const cc_gain_calibration_config *c = &calibration->config;
    *binning = (struct cc__gain_binning){.bins = c->bins,
                                         .every_cluster = c->events ==
                                                          CC_GAIN_EVENTS_SUM,
                                         .fraction = c->fraction,
                                         .low = c->low,
                                         .high = c->high,
                                         .scale = (double)c->bins /
                                                  (c->high - c->low)};
}

/* A count that stops at UINT32_MAX rather than wrap. */
static void add_count(uint32_t *count, uint64_t n)
{
    uint64_t sum = *count + n;
    *count = sum < UINT32_MAX ? (uint32_t)sum : UINT32_MAX;
}

void cc__gain_calibration_add_frame(cc_gain_calibration *calibration,
                                    const cc_frame_clusters *frame)
{
    const cc_gain_calibration_config *c = &calibration->config;
    struct cc__gain_binning binning;
    cc__gain_calibration_binning(calibration, &binning);
    const uint32_t cells = frame->size_x * frame->size_y;
    for (uint32_t i = 0; i < frame->count; i++) {
        int32_t bin = gain_event_bin(&binning, frame->size_x, frame->size_y,
                                     frame->values + (size_t)i * cells);
        if (bin == CC__GAIN_NO_EVENT)
            continue;
        if (bin == CC__GAIN_OUTSIDE) {
            calibration->outside++;
            continue;
        }
        size_t pixel = (size_t)frame->y[i] * c->cols + frame->x[i];
        add_count(&calibration->counts[pixel * c->bins + (uint32_t)bin], 1);
        calibration->photons++;
    }
}

int cc_gain_calibration_add(cc_gain_calibration *calibration,
                            const cc_clusters *clusters)
{
    if (calibration == NULL || clusters == NULL)
        return CC_EINVAL;
    const cc_gain_calibration_config *c = &calibration->config;
    size_t frames = cc_clusters_frame_count(clusters);
    for (size_t k = 0; k < frames; k++) { /* checked whole first */
        cc_frame_clusters frame;
        cc_clusters_frame(clusters, k, &frame);
        for (uint32_t i = 0; i < frame.count; i++)
            if (frame.x[i] >= c->cols || frame.y[i] >= c->rows)
                return CC_EINVAL;
    }
    for (size_t k = 0; k < frames; k++) {
        cc_frame_clusters frame;
        cc_clusters_frame(clusters, k, &frame);
        cc__gain_calibration_add_frame(calibration, &frame);
    }
    return CC_OK;
}

const cc_gain_calibration_config *
cc__gain_calibration_config(const cc_gain_calibration *calibration)
{
    return &calibration->config;
}

bool cc__gain_calibration_same(const cc_gain_calibration *a,
                               const cc_gain_calibration *b)
{
    const cc_gain_calibration_config *x = &a->config, *y = &b->config;
    return x->rows == y->rows && x->cols == y->cols && x->bins == y->bins &&
           x->low == y->low && x->high == y->high && x->events == y->events &&
           x->fraction == y->fraction && x->min_photons == y->min_photons;
}

void cc__gain_calibration_absorb(cc_gain_calibration *into,
                                 const uint64_t *counts, uint64_t photons,
                                 uint64_t outside)
{
    size_t n = into->pixels * into->config.bins;
    for (size_t i = 0; i < n; i++)
        if (counts[i] != 0)
            add_count(&into->counts[i], counts[i]);
    into->photons += photons;
    into->outside += outside;
}

void cc__gain_calibration_move(cc_gain_calibration *into,
                               cc_gain_calibration *from)
{
    size_t n = from->pixels * from->config.bins;
    for (size_t i = 0; i < n; i++)
        add_count(&into->counts[i], from->counts[i]);
    into->photons += from->photons;
    into->outside += from->outside;
    memset(from->counts, 0, n * sizeof *from->counts);
    from->photons = from->outside = 0;
}

const uint32_t *
cc_gain_calibration_counts(const cc_gain_calibration *calibration, size_t pixel)
{
    if (calibration == NULL || pixel >= calibration->pixels)
        return NULL;
    return calibration->counts + pixel * calibration->config.bins;
}

void cc_gain_calibration_entered(const cc_gain_calibration *calibration,
                                 uint64_t *photons, uint64_t *outside)
{
    if (photons != NULL)
        *photons = calibration != NULL ? calibration->photons : 0;
    if (outside != NULL)
        *outside = calibration != NULL ? calibration->outside : 0;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n values (sorted in place); 0 for none. */
static double median(double *values, size_t n)
{
    if (n == 0)
        return 0;
    qsort(values, n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* The value below which a share q of a histogram's counts lie (total of
 * them), linear within the bin. */
static double quantile(const double *counts, uint32_t bins, double low,
                       double width, double total, double q)
{
    double below = 0, want = q * total;
    for (uint32_t b = 0; b < bins; b++) {
        if (counts[b] > 0 && below + counts[b] >= want)
            return low + width * (b + (want - below) / counts[b]);
        below += counts[b];
    }
    return low + width * bins;
}

/* Where a pixel's line is fitted (docs/spec.md §9.3): its median +- 2
 * times its spread (1.4826 MAD, from the quartiles), at least 4 bins
 * each way, so that a second line (Kβ beside Kα) stays out and a sparse
 * spectrum still has the bins a fit needs. */
static void fit_range(const double *counts, uint32_t bins, double low,
                      double width, double total, double *from, double *to)
{
    double centre = quantile(counts, bins, low, width, total, 0.5);
    double spread = 1.4826 * 0.5 *
                    (quantile(counts, bins, low, width, total, 0.75) -
                     quantile(counts, bins, low, width, total, 0.25)) /
                    0.6745;
    double half = fmax(2 * spread, 4 * width);
    *from = centre - half;
    *to = centre + half;
}

/* One pixel's line (counts, bins of them with their centres): its
 * position into *line and CC_GAIN_GOOD, or CC_GAIN_FIT_FAILED. */
static uint8_t pixel_line(const double *counts, const double *centres,
                          const cc_gain_calibration_config *c, double width,
                          double photons, double *line)
{
    double from, to;
    fit_range(counts, c->bins, c->low, width, photons, &from, &to);
    cc_peak peak;
    if (cc_fit_peak(counts, centres, c->bins, from, to, &peak) != CC_OK ||
        !(peak.position > from && peak.position < to))
        return CC_GAIN_FIT_FAILED;
    *line = peak.position;
    return CC_GAIN_GOOD;
}

/* Each pixel's line in the clusters' unit (0 when flagged) and quality. */
static void fit_pixels(const cc_gain_calibration *calibration, double *line,
                       uint8_t *quality)
{
    const cc_gain_calibration_config *c = &calibration->config;
    double counts[1000], centres[1000];
    double width = (c->high - c->low) / c->bins;
    for (uint32_t b = 0; b < c->bins; b++)
        centres[b] = c->low + (b + 0.5) * width;
    for (size_t p = 0; p < calibration->pixels; p++) {
        const uint32_t *spectrum = calibration->counts + p * c->bins;
        uint64_t photons = 0;
        for (uint32_t b = 0; b < c->bins; b++) {
            counts[b] = spectrum[b];
            photons += spectrum[b];
        }
        line[p] = 0;
        quality[p] = photons < c->min_photons
                         ? CC_GAIN_FEW_PHOTONS
                         : pixel_line(counts, centres, c, width,
                                      (double)photons, &line[p]);
    }
}

int cc_gain_calibration_solve(const cc_gain_calibration *calibration,
                              const double *prior, cc_gain_unit prior_unit,
                              cc_gain_unit unit, double line_energy_kev,
                              double *gain, uint8_t *quality,
                              cc_gain_calibration_result *result, char *message)
{
    if (calibration == NULL || gain == NULL)
        return cc__message(message, CC_EINVAL, "calibration or gain is NULL");
    if (cc_gain_unit_name(unit) == NULL ||
        (prior != NULL && cc_gain_unit_name(prior_unit) == NULL))
        return cc__message(message, CC_EINVAL, "unknown gain unit");
    if (unit == CC_GAIN_ADU_PER_KEV &&
        !(isfinite(line_energy_kev) && line_energy_kev > 0))
        return cc__message(message, CC_EINVAL,
                           "a map in ADU per keV needs the flat field's "
                           "line energy, not %g keV",
                           line_energy_kev);
    size_t pixels = calibration->pixels;
    double *line = malloc(pixels * sizeof *line);
    double *good = malloc(pixels * sizeof *good);
    uint8_t *flags = quality != NULL ? quality : malloc(pixels);
    if (line == NULL || good == NULL || flags == NULL) {
        free(line);
        free(good);
        if (flags != quality)
            free(flags);
        return cc__message(message, CC_ENOMEM, "no memory to fit %zu pixels",
                           pixels);
    }
    fit_pixels(calibration, line, flags);
    cc_gain_calibration_result r = {.photons = calibration->photons,
                                    .outside = calibration->outside};
    /* The gain each pixel's line says, in the prior's terms: the clusters
     * were divided by the prior, so the new gain multiplies it. */
    size_t n_good = 0;
    for (size_t p = 0; p < pixels; p++) {
        r.pixels_good += flags[p] == CC_GAIN_GOOD;
        r.pixels_few += flags[p] == CC_GAIN_FEW_PHOTONS;
        r.pixels_failed += flags[p] == CC_GAIN_FIT_FAILED;
        gain[p] = (prior != NULL ? prior[p] : 1.0) * line[p];
        if (flags[p] == CC_GAIN_GOOD) {
            line[n_good] = line[p];
            good[n_good++] = gain[p];
        }
    }
    r.reference = median(line, n_good);
    double typical = median(good, n_good);
    /* In eV when the prior was in ADU per keV (docs/spec.md §9.1). */
    double per_kev = prior != NULL && prior_unit == CC_GAIN_ADU_PER_KEV
                         ? 1000 * line_energy_kev
                         : line_energy_kev;
    double divisor = unit == CC_GAIN_RELATIVE ? typical : per_kev;
    int rc = CC_OK;
    if (n_good == 0 || !(divisor > 0))
        rc = cc__message(message, CC_ESTATE,
                         "no pixel has a line in [%g, %g): %" PRIu64
                         " with too few photons, %" PRIu64 " whose fit failed",
                         calibration->config.low, calibration->config.high,
                         r.pixels_few, r.pixels_failed);
    double sum = 0, sum_sq = 0;
    for (size_t p = 0; rc == CC_OK && p < pixels; p++) {
        gain[p] = flags[p] == CC_GAIN_GOOD ? gain[p] / divisor
                                           : typical / divisor;
        if (flags[p] == CC_GAIN_GOOD) {
            sum += gain[p];
            sum_sq += gain[p] * gain[p];
        }
    }
    if (rc == CC_OK) {
        double mean = sum / (double)n_good;
        double var = sum_sq / (double)n_good - mean * mean;
        r.spread = var > 0 ? sqrt(var) / mean : 0;
        if (result != NULL)
            *result = r;
    }
    free(line);
    free(good);
    if (flags != quality)
        free(flags);
    return rc;
}
