/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simulator.c: MÖNCH-like frames with ground truth. A frame is the
 * per-pixel dark level, Gaussian noise of the pixel's rms, and the charge
 * of Poisson(flux) photons, each spread by a Gaussian cloud integrated over
 * the pixel areas, then rounded and clipped like a 14-bit ADC. A mask in
 * front of the sensor may absorb photons, and planted hot and dead pixels
 * override what their pixels would read.
 *
 * Photons are drawn serially (a few thousand per frame, cheap); the frames
 * are rendered in parallel, one whole frame per thread at a time. Every
 * random number comes from random.c's counters, so neither the thread
 * count nor the batch changes a single value.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simulation.h"

/* Random streams: each purpose draws from its own numbers. */
enum stream {
    STREAM_PEDESTAL,
    STREAM_NOISE_LEVEL,
    STREAM_NOISE,
    STREAM_DARK_NOISE,
    STREAM_PHOTON_COUNT,
    STREAM_PHOTONS,
    STREAM_DEFECTS,     /* new streams go last: the others keep their numbers */
    STREAM_COMMON_MODE, /* data frames' offsets */
    STREAM_DARK_COMMON_MODE, /* dark frames' */
    STREAM_GAIN
};

struct cc_simulator {
    cc_simulator_config config;
    size_t pixels;
    double *pedestal; /* dark level per pixel, ADU */
    double *noise;    /* noise rms per pixel, ADU */
    double *gain;     /* relative gain per pixel; NULL without a spread */
    uint8_t *defects; /* cc_sim_pixel per pixel */
    struct cc__pool *pool;
    unsigned threads;
    double *charge;      /* threads * pixels of scratch */
    cc_truth *own_truth; /* photons when the caller wants no truth */
};

void cc_simulator_config_init(cc_simulator_config *config)
{
    if (config == NULL)
        return;
    *config = (cc_simulator_config){
        .rows = 400,
        .cols = 400,
        .seed = 1,
        .pedestal = 4655.0,
        .pedestal_spread = 100.0,
        .noise_min = 15.0,
        .noise_max = 50.0,
        .flux = 2330.0,
        .beam = CC_BEAM_UNIFORM,
        .spot_x = 200.0,
        .spot_y = 200.0,
        .spot_sigma = 60.0,
        .n_lines = 2,
        .lines = {{8.048, 0.87}, {8.905, 0.13}},
        .gain = 100.0,
        .cloud_sigma = 0.25,
        .adc_max = 16383,
        .threads = 1,
        .pattern = CC_PATTERN_NONE,
        .pattern_period = 1.0,
        .pattern_spokes = 36,
        .hot_noise = 2000.0,
        .common_mode = CC_COMMON_MODE_NONE,
        .common_mode_rms = 0.0,
    };
}

static bool finite_at_least(double value, double low)
{
    return isfinite(value) && value >= low;
}

int cc_simulator_config_check(const cc_simulator_config *config, char *message)
{
    if (config == NULL)
        return cc__message(message, CC_EINVAL, "config is NULL");
    const cc_simulator_config *c = config;
    if (c->rows == 0 || c->rows > CC_FRAME_SIDE_MAX || c->cols == 0 ||
        c->cols > CC_FRAME_SIDE_MAX)
        return cc__message(message, CC_EINVAL,
                           "frame size %u x %u is outside 1..%u pixels a side",
                           (unsigned)c->rows, (unsigned)c->cols,
                           CC_FRAME_SIDE_MAX);
    if (!finite_at_least(c->pedestal, 0) ||
        !finite_at_least(c->pedestal_spread, 0) ||
        !finite_at_least(c->noise_min, 0) ||
        !finite_at_least(c->noise_max, c->noise_min))
        return cc__message(message, CC_EINVAL,
                           "pedestal, spread and noise must be finite and "
                           "non-negative, with noise_min <= noise_max");
    if (!finite_at_least(c->flux, 0) || c->flux > 1e7)
        return cc__message(message, CC_EINVAL,
                           "flux %g is outside 0..1e7 photons per frame",
                           c->flux);
    if (c->beam != CC_BEAM_UNIFORM && c->beam != CC_BEAM_SPOT)
        return cc__message(message, CC_EINVAL, "unknown beam profile %d",
                           (int)c->beam);
    if (c->beam == CC_BEAM_SPOT &&
        (!isfinite(c->spot_x) || !isfinite(c->spot_y) || !(c->spot_sigma > 0) ||
         !isfinite(c->spot_sigma)))
        return cc__message(message, CC_EINVAL,
                           "the beam spot needs a finite centre and a "
                           "positive rms");
    if (c->n_lines == 0 || c->n_lines > CC_SIM_LINES_MAX)
        return cc__message(message, CC_EINVAL, "n_lines %u is outside 1..%d",
                           (unsigned)c->n_lines, CC_SIM_LINES_MAX);
    double weights = 0;
    for (uint32_t i = 0; i < c->n_lines; i++) {
        if (!(c->lines[i].energy_kev > 0) ||
            !isfinite(c->lines[i].energy_kev) ||
            !finite_at_least(c->lines[i].weight, 0))
            return cc__message(message, CC_EINVAL,
                               "line %u needs a positive energy and a "
                               "non-negative weight",
                               (unsigned)i);
        weights += c->lines[i].weight;
    }
    if (!(weights > 0))
        return cc__message(message, CC_EINVAL,
                           "the line weights must not all be 0");
    if (!(c->gain > 0) || !isfinite(c->gain))
        return cc__message(message, CC_EINVAL,
                           "gain %g ADU/keV must be positive", c->gain);
    if (!(c->cloud_sigma >= 0.05 && c->cloud_sigma <= 2))
        return cc__message(message, CC_EINVAL,
                           "cloud_sigma %g is outside 0.05..2 pixels",
                           c->cloud_sigma);
    if (c->adc_max == 0)
        return cc__message(message, CC_EINVAL, "adc_max must be positive");
    if (c->threads > CC_THREADS_MAX)
        return cc__message(message, CC_EINVAL, "threads %u is above %u",
                           (unsigned)c->threads, CC_THREADS_MAX);
    if ((unsigned)c->pattern > CC_PATTERN_STAR)
        return cc__message(message, CC_EINVAL, "unknown pattern %d",
                           (int)c->pattern);
    uint32_t side = c->rows > c->cols ? c->rows : c->cols;
    if (!(c->pattern_period > 0 && c->pattern_period <= side))
        return cc__message(message, CC_EINVAL,
                           "pattern_period %g is outside (0, %u] pixels, "
                           "the frame's larger side",
                           c->pattern_period, (unsigned)side);
    if (c->pattern_spokes == 0 || c->pattern_spokes > 1000)
        return cc__message(message, CC_EINVAL,
                           "pattern_spokes %u is outside 1..1000",
                           (unsigned)c->pattern_spokes);
    if (c->pattern == CC_PATTERN_STAR &&
        (!isfinite(c->spot_x) || !isfinite(c->spot_y)))
        return cc__message(message, CC_EINVAL,
                           "the star pattern needs a finite centre "
                           "spot_x, spot_y");
    uint64_t pixels = (uint64_t)c->rows * c->cols;
    if ((uint64_t)c->hot_pixels + c->dead_pixels > pixels)
        return cc__message(message, CC_EINVAL,
                           "hot_pixels %u + dead_pixels %u is more than the "
                           "%llu pixels of the frame",
                           (unsigned)c->hot_pixels, (unsigned)c->dead_pixels,
                           (unsigned long long)pixels);
    if (!finite_at_least(c->hot_noise, 0))
        return cc__message(message, CC_EINVAL,
                           "hot_noise %g ADU must be finite and non-negative",
                           c->hot_noise);
    if (cc_common_mode_name(c->common_mode) == NULL ||
        !finite_at_least(c->common_mode_rms, 0))
        return cc__message(message, CC_EINVAL,
                           "common mode %d with rms %g ADU: the mode must be "
                           "none, supercolumn, row or half and the rms "
                           "finite and non-negative",
                           (int)c->common_mode, c->common_mode_rms);
    if (!finite_at_least(c->gain_spread, 0) || c->gain_spread > 0.2)
        return cc__message(message, CC_EINVAL,
                           "gain_spread %g must be in [0, 0.2]",
                           c->gain_spread);
    return CC_OK;
}

/* Draws the per-pixel dark level and noise, which stay fixed for a seed. */
static void draw_maps(cc_simulator *simulator)
{
    const cc_simulator_config *c = &simulator->config;
    uint64_t level_key = cc__random_key(c->seed, STREAM_PEDESTAL, 0);
    uint64_t noise_key = cc__random_key(c->seed, STREAM_NOISE_LEVEL, 0);
    for (size_t p = 0; p < simulator->pixels; p++) {
        double normal, unused;
        cc__random_normal_pair(cc__random_bits(level_key, p), &normal, &unused);
        simulator->pedestal[p] = c->pedestal + c->pedestal_spread * normal;
        double u = cc__random_uniform(cc__random_bits(noise_key, p));
        simulator->noise[p] = c->noise_min + (c->noise_max - c->noise_min) * u;
    }
    uint64_t gain_key = cc__random_key(c->seed, STREAM_GAIN, 0);
    for (size_t p = 0; simulator->gain != NULL && p < simulator->pixels; p++) {
        double normal, unused;
        cc__random_normal_pair(cc__random_bits(gain_key, p), &normal, &unused);
        /* 5 sigma of the largest spread is still a positive gain. */
        simulator->gain[p] = fmax(1.0 + c->gain_spread * normal, 0.01);
    }
}

/* Plants the hot pixels, then the dead ones, each at a pixel drawn from
 * the seed, drawing again when the pixel is taken: distinct, and uniform
 * over the frame. The maps then say what the dark frames show: a dead
 * pixel's level and noise are 0, a hot pixel's noise is hot_noise. */
static void draw_defects(cc_simulator *simulator)
{
    const cc_simulator_config *c = &simulator->config;
    const struct {
        uint32_t count;
        cc_sim_pixel kind;
    } plants[] = {{c->hot_pixels, CC_PIXEL_HOT},
                  {c->dead_pixels, CC_PIXEL_DEAD}};
    memset(simulator->defects, CC_PIXEL_GOOD, simulator->pixels);
    uint64_t key = cc__random_key(c->seed, STREAM_DEFECTS, 0);
    uint64_t draw = 0;
    for (size_t i = 0; i < sizeof plants / sizeof plants[0]; i++) {
        for (uint32_t planted = 0; planted < plants[i].count;) {
            /* The modulo's bias, below pixels / 2^64, is negligible. */
            size_t p = cc__random_bits(key, draw++) % simulator->pixels;
            if (simulator->defects[p] != CC_PIXEL_GOOD)
                continue;
            simulator->defects[p] = (uint8_t)plants[i].kind;
            planted++;
            if (plants[i].kind == CC_PIXEL_DEAD)
                simulator->pedestal[p] = simulator->noise[p] = 0;
            else
                simulator->noise[p] = c->hot_noise;
        }
    }
}

int cc_simulator_new(cc_simulator **simulator,
                     const cc_simulator_config *config, char *message)
{
    if (simulator == NULL)
        return cc__message(message, CC_EINVAL, "simulator is NULL");
    *simulator = NULL;
    int rc = cc_simulator_config_check(config, message);
    if (rc != CC_OK)
        return rc;
    cc_simulator *made = calloc(1, sizeof *made);
    if (made == NULL)
        return cc__message(message, CC_ENOMEM, "no memory for the simulator");
    made->config = *config;
    made->pixels = (size_t)config->rows * config->cols;
    made->threads = cc__resolve_threads(config->threads);
    made->pedestal = malloc(made->pixels * sizeof *made->pedestal);
    made->noise = malloc(made->pixels * sizeof *made->noise);
    made->defects = malloc(made->pixels);
    made->charge = malloc(made->threads * made->pixels * sizeof *made->charge);
    if (config->gain_spread > 0)
        made->gain = malloc(made->pixels * sizeof *made->gain);
    rc = made->pedestal && made->noise && made->defects && made->charge &&
                 (config->gain_spread == 0 || made->gain)
             ? cc_truth_new(&made->own_truth)
             : CC_ENOMEM;
    if (rc == CC_OK)
        rc = cc__pool_new(&made->pool, made->threads);
    if (rc != CC_OK) {
        cc_simulator_destroy(made);
        return cc__message(message, rc, "cannot set up the simulator: %s",
                           cc_strerror(rc));
    }
    draw_maps(made);
    draw_defects(made);
    *simulator = made;
    return CC_OK;
}

void cc_simulator_destroy(cc_simulator *simulator)
{
    if (simulator == NULL)
        return;
    if (simulator->pool != NULL)
        cc__pool_destroy(simulator->pool);
    free(simulator->pedestal);
    free(simulator->noise);
    free(simulator->gain);
    free(simulator->defects);
    free(simulator->charge);
    cc_truth_destroy(simulator->own_truth);
    free(simulator);
}

int cc_simulator_maps(const cc_simulator *simulator, double *pedestal,
                      double *noise)
{
    if (simulator == NULL)
        return CC_EINVAL;
    size_t bytes = simulator->pixels * sizeof(double);
    if (pedestal != NULL)
        memcpy(pedestal, simulator->pedestal, bytes);
    if (noise != NULL)
        memcpy(noise, simulator->noise, bytes);
    return CC_OK;
}

int cc_simulator_gain_map(const cc_simulator *simulator, double *gain)
{
    if (simulator == NULL || gain == NULL)
        return CC_EINVAL;
    for (size_t p = 0; p < simulator->pixels; p++)
        gain[p] = simulator->gain != NULL ? simulator->gain[p] : 1.0;
    return CC_OK;
}

int cc_simulator_defects(const cc_simulator *simulator, uint8_t *map)
{
    if (simulator == NULL || map == NULL)
        return CC_EINVAL;
    memcpy(map, simulator->defects, simulator->pixels);
    return CC_OK;
}

/* Which line a uniform u picks, by the cumulative weights. */
static uint32_t pick_line(const cc_simulator_config *c, double u)
{
    double total = 0;
    for (uint32_t i = 0; i < c->n_lines; i++)
        total += c->lines[i].weight;
    double cumulative = 0;
    for (uint32_t i = 0; i + 1 < c->n_lines; i++) {
        cumulative += c->lines[i].weight;
        if (u * total < cumulative)
            return i;
    }
    return c->n_lines - 1;
}

/* The fraction of v above floor(v), in [0, 1) for negative v too. */
static double fraction(double v)
{
    return v - floor(v);
}

/* Whether the mask lets a photon at (x, y) through to the sensor. */
static bool mask_open(const cc_simulator_config *c, double x, double y)
{
    const double turn = 6.283185307179586; /* 2 pi */
    switch (c->pattern) {
    case CC_PATTERN_SLITS: return fraction(x / c->pattern_period) < 0.5;
    case CC_PATTERN_GRID:
        return fraction(x / c->pattern_period) < 0.5 &&
               fraction(y / c->pattern_period) < 0.5;
    case CC_PATTERN_STAR:
        return fraction(c->pattern_spokes *
                        atan2(y - c->spot_y, x - c->spot_x) / turn) < 0.5;
    case CC_PATTERN_NONE: break;
    }
    return true;
}

/* Appends frame k's photons to truth. Photon i has its own numbers, 3 i
 * to 3 i + 2, so a photon the mask absorbs moves none of the others. */
static int draw_photons(const cc_simulator_config *c, uint64_t k,
                        cc_truth *truth)
{
    int rc = cc__truth_begin_frame(truth, k);
    uint64_t count = cc__random_poisson(cc__random_key(c->seed,
                                                       STREAM_PHOTON_COUNT, k),
                                        c->flux);
    uint64_t key = cc__random_key(c->seed, STREAM_PHOTONS, k);
    for (uint64_t i = 0; i < count && rc == CC_OK; i++) {
        uint64_t position = cc__random_bits(key, 3 * i);
        double x, y;
        if (c->beam == CC_BEAM_SPOT) {
            cc__random_normal_pair(position, &x, &y);
            x = c->spot_x + c->spot_sigma * x;
            y = c->spot_y + c->spot_sigma * y;
            if (!(x >= 0 && x < c->cols && y >= 0 && y < c->rows))
                continue; /* missed the sensor */
        } else {
            x = c->cols * cc__random_uniform(position);
            y = c->rows * cc__random_uniform(cc__random_bits(key, 3 * i + 1));
        }
        if (!mask_open(c, x, y))
            continue; /* absorbed by the mask */
        uint32_t line = pick_line(c, cc__random_uniform(
                                         cc__random_bits(key, 3 * i + 2)));
        cc_photon photon = {x, y, c->lines[line].energy_kev, line};
        rc = cc__truth_push(truth, &photon);
    }
    return rc;
}

/* Adds a photon's charge to the pixels its cloud reaches. */
static void deposit(const cc_simulator_config *c, const double *gain,
                    const cc_photon *photon, double *charge)
{
    enum { reach_max = 12 }; /* 6 sigma of the widest cloud allowed */
    int reach = (int)ceil(6 * c->cloud_sigma);
    double scale = 1.0 / (c->cloud_sigma * sqrt(2.0));
    long cx = (long)floor(photon->x), cy = (long)floor(photon->y);
    double fx[2 * reach_max + 1], fy[2 * reach_max + 1];
    for (int d = -reach; d <= reach; d++) {
        double left = (double)(cx + d) - photon->x;
        double top = (double)(cy + d) - photon->y;
        fx[d + reach] = 0.5 * (erf((left + 1) * scale) - erf(left * scale));
        fy[d + reach] = 0.5 * (erf((top + 1) * scale) - erf(top * scale));
    }
    double adu = photon->energy_kev * c->gain;
    for (int dy = -reach; dy <= reach; dy++) {
        long row = cy + dy;
        if (row < 0 || row >= (long)c->rows)
            continue;
        for (int dx = -reach; dx <= reach; dx++) {
            long col = cx + dx;
            if (col < 0 || col >= (long)c->cols)
                continue;
            size_t p = (size_t)row * c->cols + (size_t)col;
            double share = adu * fx[dx + reach] * fy[dy + reach];
            charge[p] += gain != NULL ? share * gain[p] : share;
        }
    }
}

/* Frame k's common-mode offset of a region, ADU: the region-th normal of
 * the frame's stream, so that a pixel's offset needs no table. */
static double common_mode_offset(const cc_simulator_config *c, bool dark,
                                 uint64_t k, uint32_t region)
{
    uint64_t key = cc__random_key(c->seed,
                                  dark ? STREAM_DARK_COMMON_MODE
                                       : STREAM_COMMON_MODE,
                                  k);
    double normal, unused;
    cc__random_normal_pair(cc__random_bits(key, region), &normal, &unused);
    return c->common_mode_rms * normal;
}

static bool has_common_mode(const cc_simulator_config *c)
{
    return c->common_mode != CC_COMMON_MODE_NONE && c->common_mode_rms > 0;
}

/* Adds frame k's common mode to the charge of every pixel, a run of
 * columns of one region at a time. */
static void add_common_mode(const cc_simulator_config *c, bool dark, uint64_t k,
                            double *charge)
{
    struct cc__regions regions = cc__regions_of((int)c->common_mode, c->rows,
                                                c->cols);
    for (uint32_t row = 0; row < c->rows; row++)
        for (uint32_t x0 = 0, end; x0 < c->cols; x0 = end) {
            end = cc__region_run_end(&regions, x0);
            double offset = common_mode_offset(c, dark, k,
                                               cc__region_of(&regions, row,
                                                             x0));
            for (uint32_t col = x0; col < end; col++)
                charge[(size_t)row * c->cols + col] += offset;
        }
}

/* Dark level + noise (+ charge), rounded half up and clipped to the ADC. */
static void render(const cc_simulator *simulator, uint32_t stream, uint64_t k,
                   const double *charge, uint16_t *frame)
{
    const cc_simulator_config *c = &simulator->config;
    uint64_t key = cc__random_key(c->seed, stream, k);
    double adc_max = c->adc_max;
    for (size_t p = 0; p < simulator->pixels; p += 2) {
        double normal[2];
        cc__random_normal_pair(cc__random_bits(key, p / 2), &normal[0],
                               &normal[1]);
        size_t end = p + 2 < simulator->pixels ? p + 2 : simulator->pixels;
        for (size_t q = p; q < end; q++) {
            double adu = simulator->pedestal[q] +
                         simulator->noise[q] * normal[q - p];
            if (charge != NULL)
                adu += charge[q];
            adu = floor(adu + 0.5);
            frame[q] = (uint16_t)(adu < 0 ? 0 : adu > adc_max ? adc_max : adu);
        }
    }
}

/* A defect overrides whatever charge reached its pixel in a data frame;
 * in dark frames the maps already make it read what it should. */
static void overwrite_defects(const cc_simulator *simulator, uint16_t *frame)
{
    for (size_t p = 0; p < simulator->pixels; p++) {
        if (simulator->defects[p] == CC_PIXEL_HOT)
            frame[p] = simulator->config.adc_max;
        else if (simulator->defects[p] == CC_PIXEL_DEAD)
            frame[p] = 0;
    }
}

struct render_job {
    const cc_simulator *simulator;
    uint64_t first;
    size_t n_frames;
    uint16_t *frames;
    const cc_truth *truth; /* NULL for dark frames */
};

static void render_task(void *context, unsigned thread)
{
    const struct render_job *job = context;
    const cc_simulator *simulator = job->simulator;
    size_t pixels = simulator->pixels;
    double *charge = simulator->charge + (size_t)thread * pixels;
    for (size_t i = thread; i < job->n_frames; i += simulator->threads) {
        uint16_t *frame = job->frames + i * pixels;
        bool common_mode = has_common_mode(&simulator->config);
        if (common_mode) {
            memset(charge, 0, pixels * sizeof *charge);
            add_common_mode(&simulator->config, job->truth == NULL,
                            job->first + i, charge);
        }
        if (job->truth == NULL) {
            render(simulator, STREAM_DARK_NOISE, job->first + i,
                   common_mode ? charge : NULL, frame);
            continue;
        }
        if (!common_mode)
            memset(charge, 0, pixels * sizeof *charge);
        cc_frame_truth photons;
        cc_truth_frame(job->truth, i, &photons);
        for (uint32_t j = 0; j < photons.count; j++)
            deposit(&simulator->config, simulator->gain, &photons.photons[j],
                    charge);
        render(simulator, STREAM_NOISE, job->first + i, charge, frame);
        overwrite_defects(simulator, frame);
    }
}

int cc_simulator_dark_frames(cc_simulator *simulator, uint64_t first,
                             size_t n_frames, uint16_t *frames)
{
    if (simulator == NULL || (frames == NULL && n_frames > 0))
        return CC_EINVAL;
    struct render_job job = {simulator, first, n_frames, frames, NULL};
    cc__pool_run(simulator->pool, render_task, &job);
    return CC_OK;
}

int cc_simulator_frames(cc_simulator *simulator, uint64_t first,
                        size_t n_frames, uint16_t *frames, cc_truth *truth)
{
    if (simulator == NULL || (frames == NULL && n_frames > 0))
        return CC_EINVAL;
    cc_truth *photons = truth != NULL ? truth : simulator->own_truth;
    cc__truth_clear(photons);
    for (size_t i = 0; i < n_frames; i++) {
        int rc = draw_photons(&simulator->config, first + i, photons);
        if (rc != CC_OK) {
            cc__truth_clear(photons);
            return rc;
        }
    }
    struct render_job job = {simulator, first, n_frames, frames, photons};
    cc__pool_run(simulator->pool, render_task, &job);
    return CC_OK;
}
