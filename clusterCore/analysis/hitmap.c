/* SPDX-License-Identifier: BSD-3-Clause */
/* hitmap.c: the count of cluster centres per pixel; with an energy window,
 * of the photons inside it (the counting image). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

struct cc_hitmap {
    uint32_t rows, cols;
    bool windowed; /* count only clusters inside window */
    cc_energy_window window;
    /* The window on integer energies: [first, end) holds exactly the
     * energies e with low <= e < high. */
    int64_t first, end;
    uint64_t outside;  /* clusters left out by the window */
    uint32_t counts[]; /* rows * cols, row-major */
};

int cc_hitmap_new(cc_hitmap **hitmap, uint32_t rows, uint32_t cols)
{
    if (hitmap == NULL)
        return CC_EINVAL;
    *hitmap = NULL;
    if (rows == 0 || cols == 0 || rows > CC_FRAME_SIDE_MAX ||
        cols > CC_FRAME_SIDE_MAX)
        return CC_EINVAL;
    cc_hitmap *made = calloc(1, sizeof *made +
                                    (size_t)rows * cols * sizeof(uint32_t));
    if (made == NULL)
        return CC_ENOMEM;
    made->rows = rows;
    made->cols = cols;
    *hitmap = made;
    return CC_OK;
}

void cc_hitmap_destroy(cc_hitmap *hitmap)
{
    free(hitmap);
}

int cc__hitmap_check(const cc_hitmap *hitmap, const uint16_t *x,
                     const uint16_t *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] >= hitmap->cols || y[i] >= hitmap->rows)
            return CC_EINVAL;
    return CC_OK;
}

bool cc__hitmap_window_energy(const cc_hitmap *hitmap, cc_energy *energy)
{
    *energy = hitmap->window.energy;
    return hitmap->windowed;
}

void cc__hitmap_count(cc_hitmap *hitmap, const uint16_t *x, const uint16_t *y,
                      const int64_t *energies, size_t n)
{
    const int64_t first = hitmap->first, end = hitmap->end;
    const bool windowed = hitmap->windowed;
    uint32_t *counts = hitmap->counts;
    const size_t cols = hitmap->cols;
    uint64_t outside = 0;
    for (size_t i = 0; i < n; i++) {
        /* Without branches on the window: photons and other clusters
         * come in no order a predictor could learn. */
        uint32_t in = !windowed ||
                      integer_window_holds(first, end, energies[i]);
        uint32_t *count = &counts[(size_t)y[i] * cols + x[i]];
        *count += in & (*count < UINT32_MAX);
        outside += !in;
    }
    hitmap->outside += outside;
}

/* n clusters of size_x * size_y values: their centres counted, those
 * outside the window (if any) only counted as outside. */
static int add_centres(cc_hitmap *hitmap, const uint16_t *x, const uint16_t *y,
                       const int32_t *values, uint32_t size_x, uint32_t size_y,
                       size_t n)
{
    if (cc__hitmap_check(hitmap, x, y, n) != CC_OK)
        return CC_EINVAL;
    if (!hitmap->windowed) {
        cc__hitmap_count(hitmap, x, y, NULL, n);
        return CC_OK;
    }
    const size_t cells = (size_t)size_x * size_y;
    int64_t energies[CC__ENERGY_CHUNK];
    for (size_t at = 0; at < n; at += CC__ENERGY_CHUNK) {
        size_t chunk = n - at < CC__ENERGY_CHUNK ? n - at : CC__ENERGY_CHUNK;
        cc__cluster_energies(hitmap->window.energy, size_x, size_y,
                             values + at * cells, chunk, energies);
        cc__hitmap_count(hitmap, x + at, y + at, energies, chunk);
    }
    return CC_OK;
}

int cc_hitmap_add(cc_hitmap *hitmap, const cc_clusters *clusters)
{
    if (hitmap == NULL || clusters == NULL)
        return CC_EINVAL;
    return add_centres(hitmap, clusters->x, clusters->y, clusters->values,
                       clusters->size_x, clusters->size_y,
                       clusters->n_clusters);
}

int cc_hitmap_add_frame(cc_hitmap *hitmap, const cc_frame_clusters *frame)
{
    if (hitmap == NULL || frame == NULL ||
        (frame->count > 0 &&
         (frame->x == NULL || frame->y == NULL || frame->values == NULL)))
        return CC_EINVAL;
    return add_centres(hitmap, frame->x, frame->y, frame->values, frame->size_x,
                       frame->size_y, frame->count);
}

int cc_hitmap_set_window(cc_hitmap *hitmap, const cc_energy_window *window)
{
    if (hitmap == NULL ||
        (window != NULL && cc_energy_window_check(window, NULL) != CC_OK))
        return CC_EINVAL;
    hitmap->windowed = window != NULL;
    if (window != NULL) {
        hitmap->window = *window;
        /* Cluster energies are integers far inside +-2^62: bounds
         * beyond are clamped there, which keeps end - first exact. */
        const double limit = 0x1p62;
        hitmap->first = (int64_t)fmax(-limit, fmin(limit, ceil(window->low)));
        hitmap->end = (int64_t)fmax(-limit, fmin(limit, ceil(window->high)));
    }
    return CC_OK;
}

uint64_t cc_hitmap_outside(const cc_hitmap *hitmap)
{
    return hitmap == NULL ? 0 : hitmap->outside;
}

void cc_hitmap_reset(cc_hitmap *hitmap)
{
    if (hitmap == NULL)
        return;
    memset(hitmap->counts, 0,
           (size_t)hitmap->rows * hitmap->cols * sizeof(uint32_t));
    hitmap->outside = 0;
}

const uint32_t *cc_hitmap_counts(const cc_hitmap *hitmap)
{
    return hitmap == NULL ? NULL : hitmap->counts;
}

void cc__hitmap_size(const cc_hitmap *hitmap, uint32_t *rows, uint32_t *cols)
{
    *rows = hitmap->rows;
    *cols = hitmap->cols;
}

void cc__hitmap_binning(const cc_hitmap *hitmap,
                        struct cc__tally_binning *binning)
{
    binning->counts_hitmap = 1;
    binning->rows = hitmap->rows;
    binning->cols = hitmap->cols;
    binning->windowed = hitmap->windowed;
    binning->window_energy = hitmap->window.energy;
    binning->first = hitmap->first;
    binning->end = hitmap->end;
}

int cc__hitmap_copy_empty(const cc_hitmap *hitmap, cc_hitmap **copy)
{
    int rc = cc_hitmap_new(copy, hitmap->rows, hitmap->cols);
    if (rc == CC_OK && hitmap->windowed)
        cc_hitmap_set_window(*copy, &hitmap->window);
    return rc;
}

bool cc__hitmap_same(const cc_hitmap *a, const cc_hitmap *b)
{
    return a->rows == b->rows && a->cols == b->cols &&
           a->windowed == b->windowed &&
           (!a->windowed || (a->window.energy == b->window.energy &&
                             a->first == b->first && a->end == b->end));
}

/* A count plus more, stopping at 2^32 - 1 (docs/spec.md §4.6). */
static uint32_t saturating_add(uint32_t count, uint64_t more)
{
    return more > UINT32_MAX - count ? UINT32_MAX : count + (uint32_t)more;
}

void cc__hitmap_absorb(cc_hitmap *into, const uint64_t *counts,
                       uint64_t outside)
{
    const size_t pixels = (size_t)into->rows * into->cols;
    for (size_t p = 0; p < pixels; p++)
        into->counts[p] = saturating_add(into->counts[p], counts[p]);
    into->outside += outside;
}

void cc__hitmap_move(cc_hitmap *into, cc_hitmap *from)
{
    const size_t pixels = (size_t)into->rows * into->cols;
    for (size_t p = 0; p < pixels; p++)
        into->counts[p] = saturating_add(into->counts[p], from->counts[p]);
    into->outside += from->outside;
    cc_hitmap_reset(from);
}
