/*
 * synthetic.h: MÖNCH-like frames made from a seed, for the example, the
 * benchmark and the tests. Frame k of a seed is the same whichever order
 * frames are made in: every random number is a hash of (seed, frame,
 * purpose, index).
 */
#ifndef SYNTHETIC_H
#define SYNTHETIC_H

#include <stddef.h>
#include <stdint.h>

struct synthetic_model {
    uint32_t rows, cols;
    uint64_t seed;
    double pedestal;        /* mean dark level, ADU (4655) */
    double pedestal_spread; /* pixel-to-pixel spread of the dark level (100) */
    double noise_min;       /* per-pixel noise rms is uniform in */
    double noise_max;       /*   [noise_min, noise_max] ADU (15, 50) */
    uint32_t photons;       /* photons per frame (0 for dark frames) */
    double photon_adu;      /* charge of one photon, ADU (805: Cu Ka) */
    double cloud_sigma;     /* charge cloud rms, pixels (0.25) */
};

struct synthetic_photon {
    double x, y; /* position in pixels: column, row */
    double adu;
};

/* Fills model with the defaults in the comments above. */
void synthetic_defaults(struct synthetic_model *model, uint32_t rows,
                        uint32_t cols, uint64_t seed);

/* Writes frame k of the model into frame (rows * cols) and, when truth is
 * not NULL, its model->photons photons into truth. Returns 0, or -1 when
 * out of memory. */
int synthetic_frame(const struct synthetic_model *model, uint64_t k,
                    uint16_t *frame, struct synthetic_photon *truth);

/* The same frame with no photons. */
void synthetic_dark_frame(const struct synthetic_model *model, uint64_t k,
                          uint16_t *frame);

/* The model's noise rms of one pixel, ADU. */
double synthetic_noise(const struct synthetic_model *model, size_t pixel);

#endif
