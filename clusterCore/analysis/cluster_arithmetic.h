/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cluster_arithmetic.h: the per-cluster formulas of docs/spec.md §4.4,
 * §4.5-§4.6, §7.2-§7.7 and §9.3 (energy, spectrum bin, hit-map window,
 * energy window, η, transport map, position, image bin, a flat field's
 * spectrum bin), shared by the host (C) and the
 * CUDA backend (CUDA C++) so that both compute the same doubles: sums
 * are exact integers, and every floating-point step is one IEEE-754
 * double operation in the order the spec writes it (builds must not
 * contract them into FMA).
 *
 * The includer defines CC__HD (empty in C, __host__ __device__ in CUDA)
 * and includes clustercore.h, <math.h> and <stdbool.h> first.
 */
#ifndef CLUSTERCORE_CLUSTER_ARITHMETIC_H
#define CLUSTERCORE_CLUSTER_ARITHMETIC_H

/* What positions and image bins need of an interpolator: its map (host
 * or device pointers) and the image's geometry. */
struct cc__image_map {
    cc_eta_function function;
    double low, high, width; /* the η range and one bin's width */
    uint32_t bins;
    int windowed;
    cc_energy_window window;
    uint32_t rows, cols, subpixels;
    const double *fx, *fy;    /* CDFs at bin ix's (iy's) upper edge, [ix][iy] */
    const uint8_t *row_empty; /* [iy]: ux is the identity */
    const uint8_t *column_empty; /* [ix]: uy is the identity */
};

/* Sum of the 2x2 cells whose top-left cell is (row, col). */
static inline CC__HD int64_t cluster_sum_2x2(uint32_t size_x,
                                             const int32_t *values,
                                             uint32_t row, uint32_t col)
{
    const int32_t *top = values + (size_t)row * size_x + col;
    return (int64_t)top[0] + top[1] + top[size_x] + top[size_x + 1];
}

/* The largest sum of the four 2x2 windows holding the centre, the first
 * of them on ties (top-left, top-right, bottom-left, bottom-right), and
 * its top-left cell. */
static inline CC__HD int64_t cluster_best_2x2(uint32_t size_x, uint32_t size_y,
                                              const int32_t *values,
                                              uint32_t *row, uint32_t *col)
{
    uint32_t cx = size_x / 2, cy = size_y / 2;
    int64_t best = cluster_sum_2x2(size_x, values, cy - 1, cx - 1);
    *row = cy - 1;
    *col = cx - 1;
    for (uint32_t r = cy - 1; r <= cy; r++)
        for (uint32_t c = cx - 1; c <= cx; c++) {
            int64_t sum = cluster_sum_2x2(size_x, values, r, c);
            if (sum > best) {
                best = sum;
                *row = r;
                *col = c;
            }
        }
    return best;
}

static inline CC__HD int64_t cluster_energy(cc_energy energy, uint32_t size_x,
                                            uint32_t size_y,
                                            const int32_t *values)
{
    if (energy == CC_ENERGY_SUM2X2) {
        uint32_t row, col;
        return cluster_best_2x2(size_x, size_y, values, &row, &col);
    }
    if (size_x == 3 && size_y == 3) /* the usual size, unrolled */
        return (int64_t)values[0] + values[1] + values[2] + values[3] +
               values[4] + values[5] + values[6] + values[7] + values[8];
    int64_t sum = 0;
    for (size_t i = 0; i < (size_t)size_x * size_y; i++)
        sum += values[i];
    return sum;
}

/* docs/spec.md §9.3: how a flat field's clusters enter their centre
 * pixels' spectra. */
struct cc__gain_binning {
    uint32_t bins;
    int every_cluster; /* CC_GAIN_EVENTS_SUM; else single events only */
    double fraction;   /* a single event's least centre share */
    double low, high;  /* the spectra's range */
    double scale;      /* bins / (high - low) */
};
enum { CC__GAIN_NO_EVENT = -1, CC__GAIN_OUTSIDE = -2 };

/* The bin of its centre pixel's spectrum a cluster enters;
 * CC__GAIN_NO_EVENT when it is not one of the events asked for,
 * CC__GAIN_OUTSIDE when its sum lies outside [low, high). */
static inline CC__HD int32_t gain_event_bin(const struct cc__gain_binning *b,
                                            uint32_t size_x, uint32_t size_y,
                                            const int32_t *values)
{
    int64_t sum = cluster_energy(CC_ENERGY_SUM, size_x, size_y, values);
    int32_t centre = values[(size_y / 2) * size_x + size_x / 2];
    double energy = (double)sum;
    if (!b->every_cluster &&
        !(sum > 0 && (double)centre >= b->fraction * energy))
        return CC__GAIN_NO_EVENT;
    if (!(energy >= b->low && energy < b->high))
        return CC__GAIN_OUTSIDE;
    uint32_t bin = (uint32_t)((energy - b->low) * b->scale);
    return bin < b->bins ? (int32_t)bin : (int32_t)b->bins - 1;
}

/* docs/spec.md §4.5-§4.6: what a spectrum and a hit map (the counting
 * image) need to count a cluster, on the host or the GPU. */
struct cc__tally_binning {
    int counts_spectrum, counts_hitmap; /* which of the two are kept */
    cc_energy energy;                   /* the spectrum's */
    uint32_t bins;
    double min, max;     /* the spectrum's range [min, max) */
    uint32_t rows, cols; /* the hit map's */
    int windowed;        /* the hit map counts only the window's photons */
    cc_energy window_energy;
    int64_t first, end; /* the window on integer energies: [first, end) */
};
enum { CC__SPECTRUM_UNDER = -1, CC__SPECTRUM_OVER = -2 };

/* The spectrum bin of an energy in [min, max). */
static inline CC__HD uint32_t spectrum_bin(double min, double max,
                                           uint32_t bins, double e)
{
    /* Rounding can put e just under max into bin `bins`. */
    uint32_t bin = (uint32_t)((e - min) / (max - min) * bins);
    return bin < bins ? bin : bins - 1;
}

/* The spectrum bin of an integer energy, or CC__SPECTRUM_UNDER / _OVER. */
static inline CC__HD int64_t
tally_spectrum_bin(const struct cc__tally_binning *b, int64_t energy)
{
    double e = (double)energy;
    if (e < b->min)
        return CC__SPECTRUM_UNDER;
    if (e >= b->max)
        return CC__SPECTRUM_OVER;
    return spectrum_bin(b->min, b->max, b->bins, e);
}

/* Whether the integer window [first, end) holds energy. Unsigned, so
 * that the widest window (2^63 wide) does not overflow: energy - first
 * below end - first, modulo 2^64, is first <= energy < end. */
static inline CC__HD bool integer_window_holds(int64_t first, int64_t end,
                                               int64_t energy)
{
    return (uint64_t)energy - (uint64_t)first < (uint64_t)end - (uint64_t)first;
}

static inline CC__HD bool cluster_in_window(const cc_energy_window *window,
                                            uint32_t size_x, uint32_t size_y,
                                            const int32_t *values)
{
    /* An int64 energy of a cluster converts to double exactly. */
    double e = (double)cluster_energy(window->energy, size_x, size_y, values);
    return e >= window->low && e < window->high;
}

/* numerator / denominator when the denominator is positive and the
 * quotient lies in [low, high]; else false. */
static inline CC__HD bool eta_share(int64_t numerator, int64_t denominator,
                                    double low, double high, double *out)
{
    if (denominator <= 0)
        return false;
    double q = (double)numerator / (double)denominator;
    if (!(q >= low && q <= high))
        return false;
    *out = q;
    return true;
}

/* The η of one cluster of size_x * size_y values (both odd, >= 3), on the
 * function's range [low, high] (docs/spec.md §7.3). */
static inline CC__HD cc_eta_value cluster_eta(cc_eta_function function,
                                              double low, double high,
                                              uint32_t size_x, uint32_t size_y,
                                              const int32_t *v)
{
    const uint32_t cx = size_x / 2, cy = size_y / 2;
#define AT(row, col) ((int64_t)v[(size_t)(row)*size_x + (col)])
    cc_eta_value eta = {0, 0, 0, 0, 0};
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
        int64_t sum = cluster_best_2x2(size_x, size_y, v, &row, &col);
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
    if (eta_share(num_x, den_x, low, high, &eta.x) &&
        eta_share(num_y, den_y, low, high, &eta.y))
        eta.valid = 1;
    else
        eta.x = eta.y = 0.0;
    return eta;
}

/* The bin of an η in [low, high] among `bins` of width `width`: the last
 * whose lower edge low + ix * width (each edge one multiplication and one
 * addition, as the transport map computes it) is at most η, so that η
 * lies in [edge, next edge) as docs/spec.md §7.4 says; η = high is in
 * range and goes into the last bin. The quotient is a first guess that
 * rounding may leave one bin off. */
static inline CC__HD uint32_t eta_bin(double eta, double low, double width,
                                      uint32_t bins)
{
    double guess = (eta - low) / width;
    uint32_t bin = guess < (double)bins ? (uint32_t)guess : bins - 1;
    if (bin + 1 < bins && low + (double)(bin + 1) * width <= eta)
        bin++;
    else if (bin > 0 && low + (double)bin * width > eta)
        bin--;
    return bin;
}

/* u of one axis: linear in η within its bin between the CDF at the bin's
 * lower edge (f_below, 0 for the first bin) and its upper edge (f_at). */
static inline CC__HD double eta_transport(const struct cc__image_map *map,
                                          double eta, uint32_t bin,
                                          double f_below, double f_at,
                                          bool empty)
{
    if (empty)
        return (eta - map->low) / (map->high - map->low);
    double edge = map->low + (double)bin * map->width;
    double t = (eta - edge) / map->width;
    return f_below + t * (f_at - f_below);
}

/* The position of one cluster centred at (cx, cy) (docs/spec.md §7.6). */
static inline CC__HD cc_position cluster_position(
    const struct cc__image_map *map, uint32_t size_x, uint32_t size_y,
    const int32_t *values, uint32_t cx, uint32_t cy)
{
    cc_position at = {0, 0, 0};
    if (map->windowed &&
        !cluster_in_window(&map->window, size_x, size_y, values)) {
        at.status = CC_POSITION_OUTSIDE_WINDOW;
        return at;
    }
    cc_eta_value eta = cluster_eta(map->function, map->low, map->high, size_x,
                                   size_y, values);
    if (!eta.valid) {
        at.status = CC_POSITION_UNINTERPOLABLE;
        at.x = (double)cx + 0.5;
        at.y = (double)cy + 0.5;
        return at;
    }
    const uint32_t b = map->bins;
    uint32_t ix = eta_bin(eta.x, map->low, map->width, b);
    uint32_t iy = eta_bin(eta.y, map->low, map->width, b);
    size_t here = (size_t)ix * b + iy;
    double ux = eta_transport(map, eta.x, ix, ix > 0 ? map->fx[here - b] : 0.0,
                              map->fx[here], map->row_empty[iy]);
    double uy = eta_transport(map, eta.y, iy, iy > 0 ? map->fy[here - 1] : 0.0,
                              map->fy[here], map->column_empty[ix]);
    at.status = CC_POSITION_INTERPOLATED;
    if (map->function == CC_ETA3) {
        at.x = (double)cx + ux;
        at.y = (double)cy + uy;
    } else {
        at.x = (double)cx + 0.5 + (double)eta.dx + ux;
        at.y = (double)cy + 0.5 + (double)eta.dy + uy;
    }
    return at;
}

/* floor(v * S) clipped to [0, limit); *clipped set when it had to be. */
static inline CC__HD size_t image_subpixel(double v, uint32_t subpixels,
                                           size_t limit, bool *clipped)
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

/* The image bin (row-major index) of a photon's position (§7.7). */
static inline CC__HD size_t image_bin(const struct cc__image_map *map,
                                      cc_position at, bool *clipped)
{
    const size_t width = (size_t)map->cols * map->subpixels;
    const size_t height = (size_t)map->rows * map->subpixels;
    size_t row = image_subpixel(at.y, map->subpixels, height, clipped);
    size_t col = image_subpixel(at.x, map->subpixels, width, clipped);
    return row * width + col;
}

#endif
