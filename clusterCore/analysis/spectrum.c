/* SPDX-License-Identifier: BSD-3-Clause */
/* spectrum.c: the histogram of cluster energies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* Energies are integers: when [min, max) holds at most this many, each
 * one's bin is worked out once, at creation (a division per cluster
 * cost more than the rest of the plugin's per-cluster work). */
#define LOOKUP_MAX (1u << 20)

struct cc_spectrum {
    cc_energy energy;
    uint32_t bins;
    double min, max;
    uint64_t underflow, overflow;
    int64_t first;     /* the smallest integer energy >= min */
    size_t n_lookup;   /* integer energies in [min, max), 0 if not tabulated */
    uint32_t *lookup;  /* the bin of energy first + i */
    uint64_t counts[]; /* bins of them */
};

/* The bin of an energy e in [min, max). */
static uint32_t bin_of(const cc_spectrum *spectrum, double e)
{
    return spectrum_bin(spectrum->min, spectrum->max, spectrum->bins, e);
}

/* The bins of the integer energies in [min, max), if there are few. */
static int tabulate(cc_spectrum *spectrum)
{
    /* Integers e with min <= e < max are ceil(min) .. ceil(max) - 1; far
     * from 2^53 every one of them converts to double exactly. */
    double first = ceil(spectrum->min), end = ceil(spectrum->max);
    if (fabs(first) > 0x1p52 || fabs(end) > 0x1p52 || end - first > LOOKUP_MAX)
        return CC_OK;
    size_t n = (size_t)(end - first);
    spectrum->lookup = malloc((n > 0 ? n : 1) * sizeof *spectrum->lookup);
    if (spectrum->lookup == NULL)
        return CC_ENOMEM;
    spectrum->first = (int64_t)first;
    spectrum->n_lookup = n;
    for (size_t i = 0; i < n; i++)
        spectrum->lookup[i] = bin_of(spectrum, first + (double)i);
    return CC_OK;
}

int cc_spectrum_new(cc_spectrum **spectrum, cc_energy energy, uint32_t bins,
                    double min, double max)
{
    if (spectrum == NULL)
        return CC_EINVAL;
    *spectrum = NULL;
    if ((energy != CC_ENERGY_SUM && energy != CC_ENERGY_SUM2X2) || bins == 0 ||
        bins > (1u << 24) || !isfinite(min) || !isfinite(max) || !(min < max))
        return CC_EINVAL;
    cc_spectrum *made = calloc(1, sizeof *made + bins * sizeof(uint64_t));
    if (made == NULL)
        return CC_ENOMEM;
    made->energy = energy;
    made->bins = bins;
    made->min = min;
    made->max = max;
    if (tabulate(made) != CC_OK) {
        free(made);
        return CC_ENOMEM;
    }
    *spectrum = made;
    return CC_OK;
}

void cc_spectrum_destroy(cc_spectrum *spectrum)
{
    if (spectrum != NULL)
        free(spectrum->lookup);
    free(spectrum);
}

cc_energy cc__spectrum_energy(const cc_spectrum *spectrum)
{
    return spectrum->energy;
}

void cc__spectrum_count(cc_spectrum *spectrum, const int64_t *energies,
                        size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* Unsigned, so that energies below `first` wrap out of range. */
        uint64_t offset = (uint64_t)energies[i] - (uint64_t)spectrum->first;
        double e = (double)energies[i];
        if (offset < spectrum->n_lookup)
            spectrum->counts[spectrum->lookup[offset]]++;
        else if (e < spectrum->min)
            spectrum->underflow++;
        else if (e >= spectrum->max)
            spectrum->overflow++;
        else
            spectrum->counts[bin_of(spectrum, e)]++;
    }
}

static void add_values(cc_spectrum *spectrum, uint32_t size_x, uint32_t size_y,
                       const int32_t *values, size_t n)
{
    const size_t cells = (size_t)size_x * size_y;
    int64_t energies[CC__ENERGY_CHUNK];
    for (size_t at = 0; at < n; at += CC__ENERGY_CHUNK) {
        size_t chunk = n - at < CC__ENERGY_CHUNK ? n - at : CC__ENERGY_CHUNK;
        cc__cluster_energies(spectrum->energy, size_x, size_y,
                             values + at * cells, chunk, energies);
        cc__spectrum_count(spectrum, energies, chunk);
    }
}

int cc_spectrum_add(cc_spectrum *spectrum, const cc_clusters *clusters)
{
    if (spectrum == NULL || clusters == NULL)
        return CC_EINVAL;
    add_values(spectrum, clusters->size_x, clusters->size_y, clusters->values,
               clusters->n_clusters);
    return CC_OK;
}

int cc_spectrum_add_frame(cc_spectrum *spectrum, const cc_frame_clusters *frame)
{
    if (spectrum == NULL || frame == NULL ||
        frame->size_x < CC_CLUSTER_SIZE_MIN ||
        frame->size_y < CC_CLUSTER_SIZE_MIN ||
        (frame->count > 0 && frame->values == NULL))
        return CC_EINVAL;
    add_values(spectrum, frame->size_x, frame->size_y, frame->values,
               frame->count);
    return CC_OK;
}

void cc_spectrum_reset(cc_spectrum *spectrum)
{
    if (spectrum == NULL)
        return;
    memset(spectrum->counts, 0, spectrum->bins * sizeof(uint64_t));
    spectrum->underflow = spectrum->overflow = 0;
}

uint32_t cc_spectrum_bins(const cc_spectrum *spectrum)
{
    return spectrum == NULL ? 0 : spectrum->bins;
}

double cc_spectrum_edge(const cc_spectrum *spectrum, uint32_t i)
{
    if (spectrum == NULL)
        return NAN;
    return spectrum->min + (spectrum->max - spectrum->min) * i / spectrum->bins;
}

const uint64_t *cc_spectrum_counts(const cc_spectrum *spectrum)
{
    return spectrum == NULL ? NULL : spectrum->counts;
}

uint64_t cc_spectrum_underflow(const cc_spectrum *spectrum)
{
    return spectrum == NULL ? 0 : spectrum->underflow;
}

uint64_t cc_spectrum_overflow(const cc_spectrum *spectrum)
{
    return spectrum == NULL ? 0 : spectrum->overflow;
}

void cc__spectrum_binning(const cc_spectrum *spectrum,
                          struct cc__tally_binning *binning)
{
    binning->counts_spectrum = 1;
    binning->energy = spectrum->energy;
    binning->bins = spectrum->bins;
    binning->min = spectrum->min;
    binning->max = spectrum->max;
}

int cc__spectrum_copy_empty(const cc_spectrum *spectrum, cc_spectrum **copy)
{
    return cc_spectrum_new(copy, spectrum->energy, spectrum->bins,
                           spectrum->min, spectrum->max);
}

bool cc__spectrum_same(const cc_spectrum *a, const cc_spectrum *b)
{
    return a->energy == b->energy && a->bins == b->bins && a->min == b->min &&
           a->max == b->max;
}

void cc__spectrum_absorb(cc_spectrum *into, const uint64_t *counts,
                         uint64_t underflow, uint64_t overflow)
{
    for (uint32_t i = 0; i < into->bins; i++)
        into->counts[i] += counts[i];
    into->underflow += underflow;
    into->overflow += overflow;
}

void cc__spectrum_move(cc_spectrum *into, cc_spectrum *from)
{
    cc__spectrum_absorb(into, from->counts, from->underflow, from->overflow);
    cc_spectrum_reset(from);
}
