/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peak_fit.c: a Gaussian line on a linear background fitted to a spectrum
 * (docs/spec.md §4.7): the gain and the energy resolution a scientist
 * reads off a spectrum first. Levenberg-Marquardt on the bins' counts,
 * weighted by Neyman's 1/max(n, 1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

enum { PARAMETERS = 5, ITERATIONS = 200 };

/* The model at bin centre c: p = {area a, mean, sigma, b0, b1} with the
 * background b0 + b1 (c - middle). */
struct fit {
    const double *centre, *count;
    uint32_t n;
    double middle;
};

static double model(const double p[PARAMETERS], double c, double middle,
                    double gradient[PARAMETERS])
{
    double z = (c - p[1]) / p[2];
    double g = exp(-0.5 * z * z);
    if (gradient != NULL) {
        gradient[0] = g;
        gradient[1] = p[0] * g * z / p[2];
        gradient[2] = p[0] * g * z * z / p[2];
        gradient[3] = 1;
        gradient[4] = c - middle;
    }
    return p[0] * g + p[3] + p[4] * (c - middle);
}

static double chi2_of(const struct fit *f, const double p[PARAMETERS])
{
    double chi2 = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        double d = f->count[i] - model(p, f->centre[i], f->middle, NULL);
        chi2 += d * d / (f->count[i] > 1 ? f->count[i] : 1);
    }
    return chi2;
}

/* Solves a x = b (n x n, row-major) by elimination with partial
 * pivoting; false when a is singular. */
static bool solve(double a[PARAMETERS][PARAMETERS], double b[PARAMETERS],
                  double x[PARAMETERS])
{
    for (int k = 0; k < PARAMETERS; k++) {
        int pivot = k;
        for (int i = k + 1; i < PARAMETERS; i++)
            if (fabs(a[i][k]) > fabs(a[pivot][k]))
                pivot = i;
        if (!(fabs(a[pivot][k]) > 0))
            return false;
        for (int j = 0; j < PARAMETERS; j++) {
            double t = a[k][j];
            a[k][j] = a[pivot][j];
            a[pivot][j] = t;
        }
        double t = b[k];
        b[k] = b[pivot];
        b[pivot] = t;
        for (int i = k + 1; i < PARAMETERS; i++) {
            double factor = a[i][k] / a[k][k];
            for (int j = k; j < PARAMETERS; j++)
                a[i][j] -= factor * a[k][j];
            b[i] -= factor * b[k];
        }
    }
    for (int k = PARAMETERS - 1; k >= 0; k--) {
        double sum = b[k];
        for (int j = k + 1; j < PARAMETERS; j++)
            sum -= a[k][j] * x[j];
        x[k] = sum / a[k][k];
    }
    return true;
}

/* Levenberg-Marquardt from p; true when it converged to a line of
 * positive width. */
static bool minimise(const struct fit *f, double p[PARAMETERS], double *chi2)
{
    double lambda = 1e-3;
    *chi2 = chi2_of(f, p);
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        double alpha[PARAMETERS][PARAMETERS] = {{0}}, beta[PARAMETERS] = {0};
        for (uint32_t i = 0; i < f->n; i++) {
            double g[PARAMETERS];
            double d = f->count[i] - model(p, f->centre[i], f->middle, g);
            double w = 1 / (f->count[i] > 1 ? f->count[i] : 1);
            for (int j = 0; j < PARAMETERS; j++) {
                beta[j] += w * d * g[j];
                for (int k = 0; k < PARAMETERS; k++)
                    alpha[j][k] += w * g[j] * g[k];
            }
        }
        for (int j = 0; j < PARAMETERS; j++)
            alpha[j][j] *= 1 + lambda;
        double step[PARAMETERS], next[PARAMETERS];
        if (!solve(alpha, beta, step))
            return false;
        for (int j = 0; j < PARAMETERS; j++)
            next[j] = p[j] + step[j];
        double next_chi2 = next[2] > 0 ? chi2_of(f, next) : INFINITY;
        if (next_chi2 <= *chi2) {
            bool done = *chi2 - next_chi2 <= 1e-10 * (*chi2 + 1e-30);
            memcpy(p, next, sizeof next);
            *chi2 = next_chi2;
            lambda /= 10;
            if (done)
                return p[2] > 0;
        } else {
            lambda *= 10;
            if (lambda > 1e12)
                return p[2] > 0; /* no step lowers chi^2: a minimum */
        }
    }
    return false;
}

/* The range to fit around the highest bin: mean +- 2 sigma, with sigma
 * from the width at half height. */
static void automatic_range(const double *count, const double *centre,
                            uint32_t bins, double width, double *low,
                            double *high)
{
    uint32_t peak = 0;
    for (uint32_t i = 1; i < bins; i++)
        peak = count[i] > count[peak] ? i : peak;
    uint32_t left = peak, right = peak;
    while (left > 0 && 2 * count[left - 1] > count[peak])
        left--;
    while (right + 1 < bins && 2 * count[right + 1] > count[peak])
        right++;
    double sigma = (double)(right - left + 1) * width / 2.3548200450309493;
    *low = centre[peak] - 2 * sigma;
    *high = centre[peak] + 2 * sigma;
}

/* The fit of n bins (centres and counts) of the range [low, high). */
static int fit_bins(const double *centre, const double *count, uint32_t n,
                    double low, double high, double width, cc_peak *peak)
{
    struct fit f = {centre, count, n, 0.5 * (centre[0] + centre[n - 1])};
    /* From the highest bin of the range, the smaller end as background. */
    uint32_t top = 0;
    for (uint32_t i = 1; i < n; i++)
        top = count[i] > count[top] ? i : top;
    double floor_level = count[0] < count[n - 1] ? count[0] : count[n - 1];
    double p[PARAMETERS] = {count[top] - floor_level, centre[top],
                            (high - low) / 4, floor_level, 0};
    if (!(p[0] > 0))
        return CC_ESTATE;
    double chi2;
    if (!minimise(&f, p, &chi2) || !(p[1] >= low && p[1] < high) ||
        !isfinite(chi2))
        return CC_ESTATE;
    const double fwhm_per_sigma = 2.3548200450309493; /* 2 sqrt(2 ln 2) */
    *peak = (cc_peak){
        .position = p[1],
        .sigma = p[2],
        .fwhm = fwhm_per_sigma * p[2],
        .resolution = fwhm_per_sigma * p[2] / p[1],
        .counts = p[0] * p[2] * 2.5066282746310002 / width, /* sqrt(2 pi) */
        .background = p[3] + p[4] * (p[1] - f.middle),
        .background_slope = p[4],
        .chi2_per_dof = chi2 / (double)(n - PARAMETERS),
        .low = low,
        .high = high,
        .bins = n,
    };
    return CC_OK;
}

int cc_fit_peak(const double *counts, const double *centres, uint32_t bins,
                double low, double high, cc_peak *peak)
{
    if (counts == NULL || centres == NULL || peak == NULL || bins < 2 ||
        !isfinite(low) || !isfinite(high))
        return CC_EINVAL;
    const double width = centres[1] - centres[0];
    if (!(low < high))
        automatic_range(counts, centres, bins, width, &low, &high);
    /* The bins whose centres lie in [low, high): centres increase, so
     * they follow one another. */
    uint32_t first = 0, n = 0;
    while (first < bins && !(centres[first] >= low))
        first++;
    while (first + n < bins && centres[first + n] < high)
        n++;
    if (n < PARAMETERS + 1)
        return CC_ESTATE;
    return fit_bins(centres + first, counts + first, n, low, high, width, peak);
}

int cc_spectrum_fit_peak(const cc_spectrum *spectrum, double low, double high,
                         cc_peak *peak)
{
    if (spectrum == NULL)
        return CC_EINVAL;
    uint32_t bins = cc_spectrum_bins(spectrum);
    double *centres = malloc(2 * (size_t)bins * sizeof *centres);
    if (centres == NULL)
        return CC_ENOMEM;
    double *counts = centres + bins;
    for (uint32_t i = 0; i < bins; i++) {
        centres[i] = 0.5 * (cc_spectrum_edge(spectrum, i) +
                            cc_spectrum_edge(spectrum, i + 1));
        counts[i] = (double)cc_spectrum_counts(spectrum)[i];
    }
    int rc = cc_fit_peak(counts, centres, bins, low, high, peak);
    free(centres);
    return rc;
}
