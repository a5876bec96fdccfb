/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eta.c: the η of clusters, where in its pixel each photon landed from how
 * its charge is shared (docs/spec.md §7.3). A pure function of a cluster's
 * int32 values: sums are exact integers and each quotient one division in
 * double, so every program gets the same bits.
 */
#include "internal.h"

int cc_eta_range(cc_eta_function function, double *low, double *high)
{
    if (low == NULL || high == NULL)
        return CC_EINVAL;
    switch (function) {
    case CC_ETA2:
    case CC_ETA2_FULL:
        *low = 0.0;
        *high = 1.0;
        return CC_OK;
    case CC_ETA3:
        *low = -0.5;
        *high = 0.5;
        return CC_OK;
    }
    return CC_EINVAL;
}

/* numerator / denominator when the denominator is positive and the
 * quotient lies in [low, high]; else false. */
static bool share(int64_t numerator, int64_t denominator, double low,
                  double high, double *out)
{
    if (denominator <= 0)
        return false;
    double q = (double)numerator / (double)denominator;
    if (!(q >= low && q <= high))
        return false;
    *out = q;
    return true;
}

cc_eta_value cc__eta_of(cc_eta_function function, double low, double high,
                        uint32_t size_x, uint32_t size_y, const int32_t *v)
{
    const uint32_t cx = size_x / 2, cy = size_y / 2;
#define AT(row, col) ((int64_t)v[(size_t)(row) * size_x + (col)])
    cc_eta_value eta = {0};
    /* Numerators and denominators of ηx and ηy. */
    int64_t num_x, den_x, num_y, den_y;
    if (function == CC_ETA3) {
        int64_t left = 0, right = 0, top = 0, bottom = 0, sum = 0;
        for (uint32_t k = 0; k < 3; k++) {
            left += AT(cy - 1 + k, cx - 1);
            right += AT(cy - 1 + k, cx + 1);
            top += AT(cy - 1, cx - 1 + k);
            bottom += AT(cy + 1, cx - 1 + k);
            for (uint32_t j = 0; j < 3; j++)
                sum += AT(cy - 1 + k, cx - 1 + j);
        }
        num_x = right - left;
        num_y = bottom - top;
        den_x = den_y = sum;
    } else {
        uint32_t row, col;
        int64_t sum = cc__best_2x2(size_x, size_y, v, &row, &col);
        eta.dx = col < cx ? -1 : 0;
        eta.dy = row < cy ? -1 : 0;
        if (function == CC_ETA2) {
            /* L and R: the centre's row in the window; T and B: its column. */
            num_x = AT(cy, col + 1);
            den_x = AT(cy, col) + num_x;
            num_y = AT(row + 1, cx);
            den_y = AT(row, cx) + num_y;
        } else {
            num_x = AT(row, col + 1) + AT(row + 1, col + 1);
            num_y = AT(row + 1, col) + AT(row + 1, col + 1);
            den_x = den_y = sum;
        }
    }
#undef AT
    if (share(num_x, den_x, low, high, &eta.x) &&
        share(num_y, den_y, low, high, &eta.y))
        eta.valid = 1;
    else
        eta.x = eta.y = 0.0;
    return eta;
}

int cc_eta_frame(cc_eta_function function, const cc_frame_clusters *frame,
                 cc_eta_value *eta)
{
    double low, high;
    if (frame == NULL || (eta == NULL && frame->count > 0) ||
        cc_eta_range(function, &low, &high) != CC_OK ||
        frame->size_x < CC_CLUSTER_SIZE_MIN || frame->size_y < CC_CLUSTER_SIZE_MIN)
        return CC_EINVAL;
    const size_t cells = (size_t)frame->size_x * frame->size_y;
    for (uint32_t i = 0; i < frame->count; i++)
        eta[i] = cc__eta_of(function, low, high, frame->size_x,
                            frame->size_y, frame->values + i * cells);
    return CC_OK;
}

int cc_eta(cc_eta_function function, const cc_clusters *clusters,
           cc_eta_value *eta)
{
    double low, high;
    if (clusters == NULL || cc_eta_range(function, &low, &high) != CC_OK ||
        (eta == NULL && cc_clusters_total(clusters) > 0))
        return CC_EINVAL;
    size_t done = 0;
    for (size_t k = 0; k < cc_clusters_frame_count(clusters); k++) {
        cc_frame_clusters frame;
        int rc = cc_clusters_frame(clusters, k, &frame);
        if (rc == CC_OK)
            rc = cc_eta_frame(function, &frame,
                              eta == NULL ? NULL : eta + done);
        if (rc != CC_OK)
            return rc;
        done += frame.count;
    }
    return CC_OK;
}

uint32_t cc__eta_bin(double eta, double low, double high, uint32_t bins)
{
    /* As the spectrum bins energies; η = high is in range and goes into
     * the last bin (docs/spec.md §7.9). */
    uint32_t bin = (uint32_t)((eta - low) / (high - low) * (double)bins);
    return bin < bins ? bin : bins - 1;
}
