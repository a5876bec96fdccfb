/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * truth_score.c: how well clusters match the simulator's photons, by the
 * rules stated in clustercore.h: efficiency for isolated photons, false
 * clusters per pixel per frame, the median energy ratio of line 0 and,
 * with an interpolator, the error of the photons' positions.
 * Photons and cluster centres are dropped onto per-pixel grids so that
 * each question is a look at a small box of pixels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simulation.h"

struct cc_truth_score {
    uint32_t rows, cols;
    double gain;
    cc_score totals;
    uint16_t *photon_grid; /* photons per pixel in the current frame */
    int32_t *best_cluster; /* per pixel: index of the centre's cluster + 1 */
    double *ratios;
    size_t n_ratios, ratios_capacity;
    const cc_interpolator *interpolator;   /* borrowed; NULL: no positions */
    double position_error2, centre_error2; /* sums of squared errors */
};

int cc_truth_score_set_interpolator(cc_truth_score *score,
                                    const cc_interpolator *interpolator)
{
    if (score == NULL)
        return CC_EINVAL;
    score->interpolator = interpolator;
    return CC_OK;
}

/* Adds the position errors of the cluster that found a photon. */
static void score_position(cc_truth_score *score,
                           const cc_frame_clusters *frame, size_t index,
                           const cc_photon *photon)
{
    size_t cells = (size_t)frame->size_x * frame->size_y;
    cc_position at = cluster_position(cc__interpolator_map(score->interpolator),
                                      frame->size_x, frame->size_y,
                                      frame->values + index * cells,
                                      frame->x[index], frame->y[index]);
    if (at.status == CC_POSITION_OUTSIDE_WINDOW)
        return;
    double dx = at.x - photon->x, dy = at.y - photon->y;
    double mx = frame->x[index] + 0.5 - photon->x;
    double my = frame->y[index] + 0.5 - photon->y;
    score->position_error2 += dx * dx + dy * dy;
    score->centre_error2 += mx * mx + my * my;
    score->totals.positioned++;
}

int cc_truth_score_new(cc_truth_score **score, uint32_t rows, uint32_t cols,
                       double gain)
{
    if (score == NULL)
        return CC_EINVAL;
    *score = NULL;
    if (rows == 0 || cols == 0 || rows > CC_FRAME_SIDE_MAX ||
        cols > CC_FRAME_SIDE_MAX || !(gain > 0))
        return CC_EINVAL;
    cc_truth_score *made = calloc(1, sizeof *made);
    size_t pixels = (size_t)rows * cols;
    if (made != NULL) {
        made->photon_grid = calloc(pixels, sizeof *made->photon_grid);
        made->best_cluster = calloc(pixels, sizeof *made->best_cluster);
    }
    if (made == NULL || made->photon_grid == NULL ||
        made->best_cluster == NULL) {
        cc_truth_score_destroy(made);
        return CC_ENOMEM;
    }
    made->rows = rows;
    made->cols = cols;
    made->gain = gain;
    *score = made;
    return CC_OK;
}

void cc_truth_score_destroy(cc_truth_score *score)
{
    if (score == NULL)
        return;
    free(score->photon_grid);
    free(score->best_cluster);
    free(score->ratios);
    free(score);
}

/* Sum of grid over the box of half-width radius around (x, y), clipped. */
static uint32_t photons_near(const cc_truth_score *score, long x, long y,
                             long radius)
{
    uint32_t sum = 0;
    for (long row = y - radius; row <= y + radius; row++) {
        if (row < 0 || row >= (long)score->rows)
            continue;
        for (long col = x - radius; col <= x + radius; col++)
            if (col >= 0 && col < (long)score->cols)
                sum += score->photon_grid[(size_t)row * score->cols + col];
    }
    return sum;
}

/* Scores one isolated photon against the cluster centres around it. */
static int score_photon(cc_truth_score *score, const cc_frame_clusters *frame,
                        const cc_photon *photon, long x, long y)
{
    cc_score *totals = &score->totals;
    totals->isolated_photons++;
    int64_t best = INT64_MIN;
    size_t best_index = 0;
    for (long row = y - 1; row <= y + 1; row++)
        for (long col = x - 1; col <= x + 1; col++) {
            int32_t index =
                score->best_cluster[(size_t)row * score->cols + col];
            if (index == 0)
                continue;
            size_t cells = (size_t)frame->size_x * frame->size_y;
            int64_t sum = cc_cluster_energy(CC_ENERGY_SUM, frame->size_x,
                                            frame->size_y,
                                            frame->values +
                                                (size_t)(index - 1) * cells);
            if (sum > best) {
                best = sum;
                best_index = (size_t)(index - 1);
            }
        }
    if (best == INT64_MIN)
        return CC_OK;
    totals->isolated_found++;
    if (score->interpolator != NULL)
        score_position(score, frame, best_index, photon);
    if (photon->line != 0)
        return CC_OK;
    double *ratios = cc__grow(score->ratios, &score->ratios_capacity,
                              score->n_ratios + 1, sizeof *ratios);
    if (ratios == NULL)
        return CC_ENOMEM;
    score->ratios = ratios;
    ratios[score->n_ratios++] = (double)best /
                                (photon->energy_kev * score->gain);
    return CC_OK;
}

static int score_frame(cc_truth_score *score, const cc_frame_clusters *frame,
                       const cc_frame_truth *photons)
{
    long half = (long)(frame->size_x > frame->size_y ? frame->size_x
                                                     : frame->size_y) /
                2;
    long isolation = half + 3, border = half + 1;
    for (uint32_t j = 0; j < photons->count; j++) {
        const cc_photon *p = &photons->photons[j];
        score->photon_grid[(size_t)p->y * score->cols + (size_t)p->x]++;
    }
    for (uint32_t i = 0; i < frame->count; i++)
        score->best_cluster[(size_t)frame->y[i] * score->cols + frame->x[i]] =
            (int32_t)i + 1;
    int rc = CC_OK;
    for (uint32_t j = 0; j < photons->count && rc == CC_OK; j++) {
        const cc_photon *p = &photons->photons[j];
        long x = (long)p->x, y = (long)p->y;
        bool inside = x >= border && y >= border &&
                      x < (long)score->cols - border &&
                      y < (long)score->rows - border;
        if (inside && photons_near(score, x, y, isolation) == 1)
            rc = score_photon(score, frame, p, x, y);
    }
    for (uint32_t i = 0; i < frame->count; i++)
        if (photons_near(score, frame->x[i], frame->y[i], 2) == 0)
            score->totals.false_clusters++;
    score->totals.clusters += frame->count;
    score->totals.photons += photons->count;
    score->totals.frames++;
    /* Clear only what this frame touched. */
    for (uint32_t j = 0; j < photons->count; j++) {
        const cc_photon *p = &photons->photons[j];
        score->photon_grid[(size_t)p->y * score->cols + (size_t)p->x] = 0;
    }
    for (uint32_t i = 0; i < frame->count; i++)
        score->best_cluster[(size_t)frame->y[i] * score->cols + frame->x[i]] =
            0;
    return rc;
}

int cc_truth_score_add(cc_truth_score *score, const cc_clusters *clusters,
                       const cc_truth *truth)
{
    if (score == NULL || clusters == NULL || truth == NULL ||
        cc_clusters_frame_count(clusters) != cc_truth_frame_count(truth))
        return CC_EINVAL;
    size_t frames = cc_truth_frame_count(truth);
    for (size_t i = 0; i < frames; i++) {
        cc_frame_clusters frame;
        cc_frame_truth photons;
        cc_clusters_frame(clusters, i, &frame);
        cc_truth_frame(truth, i, &photons);
        if (frame.frame_number != photons.frame_number)
            return CC_EINVAL;
        for (uint32_t j = 0; j < photons.count; j++) {
            const cc_photon *p = &photons.photons[j];
            if (!(p->x >= 0 && p->y >= 0 && p->x < score->cols &&
                  p->y < score->rows))
                return CC_EINVAL;
        }
        for (uint32_t c = 0; c < frame.count; c++)
            if (frame.x[c] >= score->cols || frame.y[c] >= score->rows)
                return CC_EINVAL;
    }
    /* Checked whole first, so that a mismatch adds nothing. */
    for (size_t i = 0; i < frames; i++) {
        cc_frame_clusters frame;
        cc_frame_truth photons;
        cc_clusters_frame(clusters, i, &frame);
        cc_truth_frame(truth, i, &photons);
        int rc = score_frame(score, &frame, &photons);
        if (rc != CC_OK)
            return rc;
    }
    return CC_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of_sorted(const double *sorted, size_t n)
{
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

int cc_truth_score_get(const cc_truth_score *score, cc_score *result)
{
    if (score == NULL || result == NULL)
        return CC_EINVAL;
    cc_score totals = score->totals;
    totals.efficiency = totals.isolated_photons == 0
                            ? 0
                            : (double)totals.isolated_found /
                                  (double)totals.isolated_photons;
    totals.false_rate = totals.frames == 0 ? 0
                                           : (double)totals.false_clusters /
                                                 ((double)totals.frames *
                                                  score->rows * score->cols);
    /* Per axis: the mean of dx^2 + dy^2 over 2. */
    double n_positions = 2.0 * (double)totals.positioned;
    totals.position_rms = totals.positioned
                              ? sqrt(score->position_error2 / n_positions)
                              : 0;
    totals.centre_rms = totals.positioned
                            ? sqrt(score->centre_error2 / n_positions)
                            : 0;
    totals.line0_found = score->n_ratios;
    totals.line0_ratio = 0;
    if (score->n_ratios > 0) {
        /* The sort is on a copy: getting the score changes nothing. */
        double *sorted = malloc(score->n_ratios * sizeof *sorted);
        if (sorted == NULL)
            return CC_ENOMEM;
        memcpy(sorted, score->ratios, score->n_ratios * sizeof *sorted);
        qsort(sorted, score->n_ratios, sizeof *sorted, compare_doubles);
        size_t n = score->n_ratios;
        totals.line0_ratio = median_of_sorted(sorted, n);
        for (size_t i = 0; i < n; i++)
            sorted[i] = fabs(sorted[i] - totals.line0_ratio);
        qsort(sorted, n, sizeof *sorted, compare_doubles);
        /* For a Gaussian, sigma = 1.4826 x the median absolute deviation. */
        totals.line0_spread = 1.4826 * median_of_sorted(sorted, n);
        free(sorted);
    }
    *result = totals;
    return CC_OK;
}
