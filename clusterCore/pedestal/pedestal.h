/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pedestal.h: the per-pixel state both backends keep (clusterCore/
 * pedestal/): the pedestal's sums and its working-precision form, the
 * bad-pixel mask, the gain map's factors. The formulas on them, shared by
 * the CPU and the CUDA backend, are pixel_arithmetic.h.
 */
#ifndef CLUSTERCORE_PEDESTAL_H
#define CLUSTERCORE_PEDESTAL_H

#include "../base/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- pedestal state (pedestal.c) ---- */

struct cc__pedestal {
    size_t pixels;
    cc_precision precision;
    cc_pedestal_state state;
    uint64_t frames_trained;
    uint32_t window;    /* N in force */
    uint64_t *sum;      /* training: sum of x per pixel */
    uint64_t *sum_sq;   /* training: sum of x^2 per pixel */
    uint16_t *baseline; /* X0 per pixel, fixed when training ends */
    void *s, *s2;       /* centred sums in the working precision */
    uint8_t *mask;      /* per pixel: CC__MASKED_BY_* bits, 0 = good */
    /* docs/spec.md §8.2: r and rms as the pedestal became READY, in the
     * working precision; the common mode is measured against them. */
    void *reference_offset, *reference_rms;
};

/* Why a pixel is masked (docs/spec.md §7.1); the backends skip a pixel
 * whose mask byte is not 0. */
enum { CC__MASKED_BY_USER = 1, CC__MASKED_BY_RMS = 2 };

size_t cc__precision_size(cc_precision precision);
int cc__pedestal_init(struct cc__pedestal *pedestal, size_t pixels,
                      cc_precision precision, uint32_t window);
void cc__pedestal_free(struct cc__pedestal *pedestal);
void cc__pedestal_reset(struct cc__pedestal *pedestal, uint32_t window);
/* Sums one dark frame; with common-mode regions (count > 0), each region's
 * shift against the frames before is taken out first (docs/spec.md §8.4),
 * using region_sums (3 * regions->count of room). */
void cc__pedestal_train(struct cc__pedestal *pedestal, const uint16_t *frame,
                        uint16_t adc_mask, const struct cc__regions *regions,
                        int64_t *region_sums);
/* Fixes X0 and converts the centred sums once to the working precision;
 * the frames trained so far become the window. Takes the reference. */
void cc__pedestal_freeze(struct cc__pedestal *pedestal);
/* Takes the common mode's reference from a READY pedestal's state. */
void cc__pedestal_take_reference(struct cc__pedestal *pedestal);
/* Moves the contents of src into dst (same size and precision). */
void cc__pedestal_swap(struct cc__pedestal *dst, struct cc__pedestal *src);

/* ---- the bad-pixel mask (mask.c) ---- */

/* Marks CC__MASKED_BY_RMS the pixels of a READY pedestal whose rms is 0 or
 * above factor times the median rms of the pixels the user did not mask;
 * clears those marks first, and sets none for factor 0 or a pedestal
 * still training. */
int cc__mask_by_rms(struct cc__pedestal *pedestal, double factor,
                    char *message);
/* Pixels masked for any reason. */
uint64_t cc__mask_count(const struct cc__pedestal *pedestal);
/* The user's part of src's mask, into dst's (of the same size). */
void cc__pedestal_copy_user_mask(struct cc__pedestal *dst,
                                 const struct cc__pedestal *src);

/* ---- the gain map (gain.c) ---- */

/* docs/spec.md §9: the map g in force and its factors k = u / g. */
struct cc__gain {
    double *map; /* rows * cols; NULL: no map */
    cc_gain_unit unit;
    void *factor; /* k in the working precision; NULL with no map */
};

/* A copy of map (NULL: no map) and its factors in precision, into *gain;
 * CC_EINVAL naming the first pixel whose g is not finite, not above 0 or
 * gives a factor adc_mask does not fit (docs/spec.md §9.1), CC_ENOMEM;
 * on failure *gain holds no map. */
int cc__gain_make(struct cc__gain *gain, const double *map, size_t pixels,
                  uint32_t cols, cc_gain_unit unit, cc_precision precision,
                  uint16_t adc_mask, char *message);
void cc__gain_free(struct cc__gain *gain);

/* The working precision's part, once per precision (pedestal_real.c). */
#define CC__DECLARE_PEDESTAL_PRECISION(real)                                   \
    void cc__pedestal_maps_##real(const struct cc__pedestal *pedestal,         \
                                  double *mean, double *rms);                  \
    void cc__pedestal_store_##real(void *s, void *s2, size_t pixel,            \
                                   int64_t centred_sum, int64_t centred_sq);   \
    void cc__pedestal_reference_##real(struct cc__pedestal *pedestal);
CC__DECLARE_PEDESTAL_PRECISION(float)
CC__DECLARE_PEDESTAL_PRECISION(double)
#undef CC__DECLARE_PEDESTAL_PRECISION

#ifdef __cplusplus
}
#endif

#endif /* CLUSTERCORE_PEDESTAL_H */
