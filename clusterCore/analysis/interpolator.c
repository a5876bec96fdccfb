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

#include "internal.h"

struct cc_interpolator {
    cc_eta_function function;
    double low, high, width; /* the η range and one bin's width */
    uint32_t bins;
    bool windowed;
    cc_energy_window window;
    uint32_t rows, cols, subpixels;
    double *fx, *fy; /* the CDFs at bin ix's (iy's) upper edge, [ix][iy] */
    uint8_t *row_empty;    /* [iy]: H[.][iy] holds nothing: ux is identity */
    uint8_t *column_empty; /* [ix]: H[ix][.] holds nothing: uy is identity */
    cc_image_stats stats;
    uint32_t *image; /* (rows * S) x (cols * S) */
};

/* F along one axis: for each line of H (fixed `other`), the running sum
 * over `along` divided by the line's total. */
static void build_cdf(const uint64_t *h, uint32_t bins, bool along_x,
                      double *f, uint8_t *empty)
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
            f[first + k * step] =
                total == 0 ? 0.0 : (double)running / (double)total;
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
    made->function = info->function;
    made->low = info->low;
    made->high = info->high;
    made->bins = info->bins;
    made->width = (info->high - info->low) / (double)info->bins;
    made->windowed = window != NULL;
    if (window != NULL)
        made->window = *window;
    made->rows = rows;
    made->cols = cols;
    made->subpixels = subpixels;
    build_cdf(calibration->counts, info->bins, true, made->fx,
              made->row_empty);
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

/* u of one axis: linear in η within its bin between the CDF at the bin's
 * lower edge (f_below, 0 for the first bin) and its upper edge (f_at). */
static double transport(const cc_interpolator *in, double eta, uint32_t bin,
                        double f_below, double f_at, bool empty)
{
    if (empty)
        return (eta - in->low) / (in->high - in->low);
    double edge = in->low + (double)bin * in->width;
    double t = (eta - edge) / in->width;
    return f_below + t * (f_at - f_below);
}

cc_position cc__interpolator_position(const cc_interpolator *in,
                                      uint32_t size_x, uint32_t size_y,
                                      const int32_t *values, uint32_t cx,
                                      uint32_t cy)
{
    cc_position at = {0};
    if (in->windowed &&
        !cc__window_contains(&in->window, size_x, size_y, values)) {
        at.status = CC_POSITION_OUTSIDE_WINDOW;
        return at;
    }
    cc_eta_value eta =
        cc__eta_of(in->function, in->low, in->high, size_x, size_y, values);
    if (!eta.valid) {
        at.status = CC_POSITION_UNINTERPOLABLE;
        at.x = (double)cx + 0.5;
        at.y = (double)cy + 0.5;
        return at;
    }
    const uint32_t b = in->bins;
    uint32_t ix = cc__eta_bin(eta.x, in->low, in->high, b);
    uint32_t iy = cc__eta_bin(eta.y, in->low, in->high, b);
    size_t here = (size_t)ix * b + iy;
    double ux = transport(in, eta.x, ix, ix > 0 ? in->fx[here - b] : 0.0,
                          in->fx[here], in->row_empty[iy]);
    double uy = transport(in, eta.y, iy, iy > 0 ? in->fy[here - 1] : 0.0,
                          in->fy[here], in->column_empty[ix]);
    at.status = CC_POSITION_INTERPOLATED;
    if (in->function == CC_ETA3) {
        at.x = (double)cx + ux;
        at.y = (double)cy + uy;
    } else {
        at.x = (double)cx + 0.5 + (double)eta.dx + ux;
        at.y = (double)cy + 0.5 + (double)eta.dy + uy;
    }
    return at;
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
        positions[i] = cc__interpolator_position(
            interpolator, frame->size_x, frame->size_y,
            frame->values + i * cells, frame->x[i], frame->y[i]);
    return CC_OK;
}

/* floor(v * S) clipped to [0, limit); *clipped set when it had to be. */
static size_t subpixel(double v, uint32_t subpixels, size_t limit,
                       bool *clipped)
{
    double scaled = floor(v * (double)subpixels);
    if (!(scaled >= 0)) {
        *clipped = true;
        return 0;
    }
    if (scaled >= (double)limit) {
        *clipped = true;
        return limit - 1;
    }
    return (size_t)scaled;
}

int cc_interpolator_add_frame(cc_interpolator *interpolator,
                              const cc_frame_clusters *frame)
{
    if (interpolator == NULL || !frame_valid(frame))
        return CC_EINVAL;
    cc_interpolator *in = interpolator;
    for (uint32_t i = 0; i < frame->count; i++)
        if (frame->x[i] >= in->cols || frame->y[i] >= in->rows)
            return CC_EINVAL;
    const size_t cells = (size_t)frame->size_x * frame->size_y;
    const size_t width = (size_t)in->cols * in->subpixels;
    const size_t height = (size_t)in->rows * in->subpixels;
    for (uint32_t i = 0; i < frame->count; i++) {
        cc_position at = cc__interpolator_position(
            in, frame->size_x, frame->size_y, frame->values + i * cells,
            frame->x[i], frame->y[i]);
        if (at.status == CC_POSITION_OUTSIDE_WINDOW) {
            in->stats.outside++;
            continue;
        }
        bool clipped = false;
        size_t row = subpixel(at.y, in->subpixels, height, &clipped);
        size_t col = subpixel(at.x, in->subpixels, width, &clipped);
        in->stats.photons++;
        in->stats.uninterpolable += at.status == CC_POSITION_UNINTERPOLABLE;
        in->stats.clipped += clipped;
        uint32_t *count = &in->image[row * width + col];
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
        if (clusters->x[i] >= interpolator->cols ||
            clusters->y[i] >= interpolator->rows)
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
           (size_t)interpolator->rows * interpolator->subpixels *
               interpolator->cols * interpolator->subpixels *
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
    const uint32_t s = interpolator->subpixels;
    const size_t width = (size_t)interpolator->cols * s;
    const size_t height = (size_t)interpolator->rows * s;
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

int cc_interpolator_write_npy(const cc_interpolator *interpolator,
                              const char *path, char *message)
{
    if (interpolator == NULL || path == NULL)
        return cc__message(message, CC_EINVAL,
                           "interpolator and path are needed");
    const uint64_t shape[2] = {
        (uint64_t)interpolator->rows * interpolator->subpixels,
        (uint64_t)interpolator->cols * interpolator->subpixels};
    return cc__npy_write(path, "'<u4'", 2, shape, interpolator->image,
                         shape[0] * shape[1] * sizeof(uint32_t), message);
}
