/* spectrum.c: the histogram of cluster energies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct cc_spectrum {
    cc_energy energy;
    uint32_t bins;
    double min, max;
    uint64_t underflow, overflow;
    uint64_t counts[]; /* bins of them */
};

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
    *spectrum = made;
    return CC_OK;
}

void cc_spectrum_destroy(cc_spectrum *spectrum)
{
    free(spectrum);
}

int cc_spectrum_add(cc_spectrum *spectrum, const cc_clusters *clusters)
{
    if (spectrum == NULL || clusters == NULL)
        return CC_EINVAL;
    size_t cells = (size_t)clusters->size_x * clusters->size_y;
    double width = spectrum->max - spectrum->min;
    for (size_t i = 0; i < clusters->n_clusters; i++) {
        double e = (double)cc_cluster_energy(spectrum->energy,
                                             clusters->size_x, clusters->size_y,
                                             clusters->values + i * cells);
        if (e < spectrum->min) {
            spectrum->underflow++;
        } else if (e >= spectrum->max) {
            spectrum->overflow++;
        } else {
            /* Rounding can put e just under max into bin `bins`. */
            uint32_t bin = (uint32_t)((e - spectrum->min) / width *
                                      spectrum->bins);
            spectrum->counts[bin < spectrum->bins ? bin : spectrum->bins - 1]++;
        }
    }
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
    return spectrum->min +
           (spectrum->max - spectrum->min) * i / spectrum->bins;
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
