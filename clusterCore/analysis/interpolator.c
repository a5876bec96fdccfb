/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpolator.c: where in its pixel each photon landed, from its η and
 * the Rosenblatt transport map of a flat-field calibration, and the image
 * of S x S sub-pixels a pixel that those positions make (docs/spec.md
 * §7.5-§7.7). Every step is one IEEE-754 double operation in the order
 * the spec writes it, so any program gets the same positions.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

struct cc_interpolator {
    struct cc__image_map map; /* its tables are the arrays below */
    double *fx, *fy;
    uint8_t *row_empty, *column_empty;
    cc_image_stats stats;
    uint32_t *image; /* (rows * S) x (cols * S) */
};

/* F along one axis: for each line of H (fixed `other`), the running sum
 * over `along` divided by the line's total. */
static void build_cdf(const uint64_t *h, uint32_t bins, bool along_x, double *f,
                      uint8_t *empty)
{
    for (uint32_t other = 0; other < bins; other++) {
        /* H[ix][iy] is at ix * bins + iy. */
        size_t step = along_x ? bins : 1;
        size_t first = along_x ? other : (size_t)other * bins;
        uint64_t total = 0;
        for (uint32_t k = 0; k < bins; k++)
            total += h[first + k * step];
        empty[other] = total == 0;
        uint64_t running = 0;
        for (uint32_t k = 0; k < bins; k++) {
            running += h[first + k * step];
            f[first + k * step] = total == 0 ? 0.0
                                             : (double)running / (double)total;
        }
    }
}

int cc_interpolator_new(cc_interpolator **interpolator,
                        const cc_eta_calibration *calibration,
                        const cc_energy_window *window, uint32_t rows,
                        uint32_t cols, uint32_t subpixels, char *message)
{
    if (interpolator == NULL || calibration == NULL)
        return cc__message(message, CC_EINVAL,
                           "interpolator and calibration are needed");
    *interpolator = NULL;
    if (rows == 0 || cols == 0 || rows > CC_FRAME_SIDE_MAX ||
        cols > CC_FRAME_SIDE_MAX)
        return cc__message(message, CC_EINVAL,
                           "frame size %" PRIu32 " x %" PRIu32
                           " is outside 1..%u pixels a side",
                           rows, cols, CC_FRAME_SIDE_MAX);
    if (subpixels == 0 || subpixels > CC_SUBPIXELS_MAX)
        return cc__message(message, CC_EINVAL,
                           "subpixels %" PRIu32 " is outside 1..%u", subpixels,
                           CC_SUBPIXELS_MAX);
    if (window != NULL) {
        int rc = cc_energy_window_check(window, message);
        if (rc != CC_OK)
            return rc;
    }
    const cc_eta_calibration_info *info = &calibration->info;
    size_t cells = (size_t)info->bins * info->bins;
    size_t image = (size_t)rows * subpixels * cols * subpixels;
    cc_interpolator *made = calloc(1, sizeof *made);
    if (made != NULL) {
        made->fx = malloc(cells * sizeof *made->fx);
        made->fy = malloc(cells * sizeof *made->fy);
        made->row_empty = malloc(info->bins);
        made->column_empty = malloc(info->bins);
        made->image = calloc(image, sizeof *made->image);
    }
    if (made == NULL || made->fx == NULL || made->fy == NULL ||
        made->row_empty == NULL || made->column_empty == NULL ||
        made->image == NULL) {
        cc_interpolator_destroy(made);
        return cc__message(message, CC_ENOMEM,
                           "no memory for an image of %zu sub-pixels", image);
    }
    made->map = (struct cc__image_map){
        .function = info->function,
        .low = info->low,
        .high = info->high,
        .width = (info->high - info->low) / (double)info->bins,
        .bins = info->bins,
        .windowed = window != NULL,
        .window = window != NULL ? *window : (cc_energy_window){0},
        .rows = rows,
        .cols = cols,
        .subpixels = subpixels,
        .fx = made->fx,
        .fy = made->fy,
        .row_empty = made->row_empty,
        .column_empty = made->column_empty};
    build_cdf(calibration->counts, info->bins, true, made->fx, made->row_empty);
    build_cdf(calibration->counts, info->bins, false, made->fy,
              made->column_empty);
    *interpolator = made;
    return CC_OK;
}

void cc_interpolator_destroy(cc_interpolator *interpolator)
{
    if (interpolator == NULL)
        return;
    free(interpolator->fx);
    free(interpolator->fy);
    free(interpolator->row_empty);
    free(interpolator->column_empty);
    free(interpolator->image);
    free(interpolator);
}

const struct cc__image_map *
cc__interpolator_map(const cc_interpolator *interpolator)
{
    return &interpolator->map;
}

int cc__interpolator_copy(const cc_interpolator *from, cc_interpolator **copy,
                          char *message)
{
    const struct cc__image_map *map = &from->map;
    size_t cells = (size_t)map->bins * map->bins;
    /* An empty calibration of the same size gives every table its room;
     * the tables are then copied over. */
    cc_eta_calibration_info info = {.function = map->function,
                                    .bins = map->bins,
                                    .low = map->low,
                                    .high = map->high};
    cc_eta_calibration *empty = cc__eta_calibration_alloc(&info);
    int rc = empty == NULL
                 ? cc__message(message, CC_ENOMEM, "no memory for a map")
                 : cc_interpolator_new(copy, empty,
                                       map->windowed ? &map->window : NULL,
                                       map->rows, map->cols, map->subpixels,
                                       message);
    cc_eta_calibration_destroy(empty);
    if (rc != CC_OK)
        return rc;
    memcpy((*copy)->fx, from->fx, cells * sizeof *from->fx);
    memcpy((*copy)->fy, from->fy, cells * sizeof *from->fy);
    memcpy((*copy)->row_empty, from->row_empty, map->bins);
    memcpy((*copy)->column_empty, from->column_empty, map->bins);
    return CC_OK;
}

bool cc__interpolator_same_image(const cc_interpolator *a,
                                 const cc_interpolator *b)
{
    return a->map.rows == b->map.rows && a->map.cols == b->map.cols &&
           a->map.subpixels == b->map.subpixels;
}

void cc__interpolator_absorb(cc_interpolator *into, const uint32_t *counts32,
                             const uint64_t *counts64,
                             const cc_image_stats *stats)
{
    const struct cc__image_map *map = &into->map;
    size_t image = (size_t)map->rows * map->subpixels * map->cols *
                   map->subpixels;
    for (size_t i = 0; i < image; i++) {
        uint64_t sum = (uint64_t)into->image[i] +
                       (counts32 != NULL ? counts32[i] : counts64[i]);
        into->image[i] = sum < UINT32_MAX ? (uint32_t)sum : UINT32_MAX;
    }
    into->stats.photons += stats->photons;
    into->stats.uninterpolable += stats->uninterpolable;
    into->stats.clipped += stats->clipped;
    into->stats.outside += stats->outside;
}

void cc__interpolator_move(cc_interpolator *into, cc_interpolator *from)
{
    cc__interpolator_absorb(into, from->image, NULL, &from->stats);
    cc_interpolator_reset(from);
}

static bool frame_valid(const cc_frame_clusters *frame)
{
    return frame != NULL &&
           (frame->count == 0 ||
            (frame->x != NULL && frame->y != NULL && frame->values != NULL)) &&
           frame->size_x >= CC_CLUSTER_SIZE_MIN &&
           frame->size_y >= CC_CLUSTER_SIZE_MIN;
}

int cc_interpolator_positions(const cc_interpolator *interpolator,
                              const cc_frame_clusters *frame,
                              cc_position *positions)
{
    if (interpolator == NULL || !frame_valid(frame) ||
        (positions == NULL && frame->count > 0))
        return CC_EINVAL;
    const size_t cells = (size_t)frame->size_x * frame->size_y;
    for (uint32_t i = 0; i < frame->count; i++)
        positions[i] = cluster_position(&interpolator->map, frame->size_x,
                                        frame->size_y,
                                        frame->values + i * cells, frame->x[i],
                                        frame->y[i]);
    return CC_OK;
}

int cc_interpolator_add_frame(cc_interpolator *interpolator,
                              const cc_frame_clusters *frame)
{
    if (interpolator == NULL || !frame_valid(frame))
        return CC_EINVAL;
    const struct cc__image_map *map = &interpolator->map;
    for (uint32_t i = 0; i < frame->count; i++)
        if (frame->x[i] >= map->cols || frame->y[i] >= map->rows)
            return CC_EINVAL;
    const size_t cells = (size_t)frame->size_x * frame->size_y;
    cc_image_stats *stats = &interpolator->stats;
    for (uint32_t i = 0; i < frame->count; i++) {
        cc_position at = cluster_position(map, frame->size_x, frame->size_y,
                                          frame->values + i * cells,
                                          frame->x[i], frame->y[i]);
        if (at.status == CC_POSITION_OUTSIDE_WINDOW) {
            stats->outside++;
            continue;
        }
        bool clipped = false;
        uint32_t *count = &interpolator->image[image_bin(map, at, &clipped)];
        stats->photons++;
        stats->uninterpolable += at.status == CC_POSITION_UNINTERPOLABLE;
        stats->clipped += clipped;
        if (*count < UINT32_MAX)
            (*count)++;
    }
    return CC_OK;
}

int cc_interpolator_add(cc_interpolator *interpolator,
                        const cc_clusters *clusters)
{
    if (interpolator == NULL || clusters == NULL)
        return CC_EINVAL;
    for (size_t i = 0; i < clusters->n_clusters; i++)
        if (clusters->x[i] >= interpolator->map.cols ||
            clusters->y[i] >= interpolator->map.rows)
            return CC_EINVAL;
    for (size_t k = 0; k < cc_clusters_frame_count(clusters); k++) {
        cc_frame_clusters frame;
        int rc = cc_clusters_frame(clusters, k, &frame);
        if (rc == CC_OK)
            rc = cc_interpolator_add_frame(interpolator, &frame);
        if (rc != CC_OK)
            return rc;
    }
    return CC_OK;
}

void cc_interpolator_reset(cc_interpolator *interpolator)
{
    if (interpolator == NULL)
        return;
    memset(interpolator->image, 0,
           (size_t)interpolator->map.rows * interpolator->map.subpixels *
               interpolator->map.cols * interpolator->map.subpixels *
               sizeof *interpolator->image);
    interpolator->stats = (cc_image_stats){0};
}

const uint32_t *cc_interpolator_image(const cc_interpolator *interpolator)
{
    return interpolator == NULL ? NULL : interpolator->image;
}

int cc_interpolator_stats(const cc_interpolator *interpolator,
                          cc_image_stats *stats)
{
    if (interpolator == NULL || stats == NULL)
        return CC_EINVAL;
    *stats = interpolator->stats;
    return CC_OK;
}

int cc_interpolator_flatness(const cc_interpolator *interpolator,
                             double *chi2_per_dof)
{
    if (interpolator == NULL || chi2_per_dof == NULL)
        return CC_EINVAL;
    const uint32_t s = interpolator->map.subpixels;
    const size_t width = (size_t)interpolator->map.cols * s;
    const size_t height = (size_t)interpolator->map.rows * s;
    uint64_t folded[CC_SUBPIXELS_MAX * CC_SUBPIXELS_MAX] = {0};
    uint64_t total = 0;
    for (size_t row = 0; row < height; row++)
        for (size_t col = 0; col < width; col++) {
            uint32_t n = interpolator->image[row * width + col];
            folded[(row % s) * s + col % s] += n;
            total += n;
        }
    if (s == 1 || total == 0)
        return CC_ESTATE;
    double mean = (double)total / (double)(s * s), chi2 = 0;
    for (uint32_t i = 0; i < s * s; i++) {
        double d = (double)folded[i] - mean;
        chi2 += d * d / mean;
    }
    *chi2_per_dof = chi2 / (double)(s * s - 1);
    return CC_OK;
}
