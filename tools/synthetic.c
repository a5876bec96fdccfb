/* synthetic.c: see synthetic.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synthetic.h"

enum purpose { PEDESTAL, NOISE_LEVEL, NOISE, PHOTON_X, PHOTON_Y };

/* A well-mixed 64-bit hash (splitmix64's finaliser) of the four inputs. */
static uint64_t hash4(uint64_t seed, uint64_t frame, uint64_t purpose,
                      uint64_t index)
{
    uint64_t z = seed ^ (frame * 0x9E3779B97F4A7C15ull) ^
                 (purpose * 0xC2B2AE3D27D4EB4Full) ^
                 (index * 0x165667B19E3779F9ull);
    for (int round = 0; round < 2; round++) {
        z += 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
    }
    return z;
}

/* Uniform in (0, 1). */
static double uniform(uint64_t bits)
{
    return ((double)(bits >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal by Box-Muller from one 64-bit hash split in two. */
static double normal(uint64_t bits)
{
    double u1 = ((double)(bits >> 32) + 0.5) / 4294967296.0;
    double u2 = ((double)(bits & 0xFFFFFFFFu) + 0.5) / 4294967296.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void synthetic_defaults(struct synthetic_model *model, uint32_t rows,
                        uint32_t cols, uint64_t seed)
{
    *model = (struct synthetic_model){
        .rows = rows,
        .cols = cols,
        .seed = seed,
        .pedestal = 4655.0,
        .pedestal_spread = 100.0,
        .noise_min = 15.0,
        .noise_max = 50.0,
        .photons = 0,
        .photon_adu = 805.0,
        .cloud_sigma = 0.25,
    };
}

double synthetic_noise(const struct synthetic_model *model, size_t pixel)
{
    double u = uniform(hash4(model->seed, 0, NOISE_LEVEL, pixel));
    return model->noise_min + (model->noise_max - model->noise_min) * u;
}

/* Fraction of a Gaussian cloud centred at c that lands in [edge, edge+1). */
static double cloud_fraction(double c, double edge, double sigma)
{
    double scale = 1.0 / (sigma * sqrt(2.0));
    return 0.5 * (erf((edge + 1.0 - c) * scale) - erf((edge - c) * scale));
}

/* Adds model noise to charge (ADU above pedestal) and digitises. */
static void digitise(const struct synthetic_model *model, uint64_t k,
                     const double *charge, uint16_t *frame)
{
    size_t pixels = (size_t)model->rows * model->cols;
    for (size_t p = 0; p < pixels; p++) {
        double level = model->pedestal +
                       model->pedestal_spread *
                           normal(hash4(model->seed, 0, PEDESTAL, p));
        double adu = level + synthetic_noise(model, p) *
                                 normal(hash4(model->seed, k, NOISE, p));
        if (charge != NULL)
            adu += charge[p];
        adu = nearbyint(adu);
        frame[p] = (uint16_t)(adu < 0 ? 0 : adu > 16383 ? 16383 : adu);
    }
}

void synthetic_dark_frame(const struct synthetic_model *model, uint64_t k,
                          uint16_t *frame)
{
    digitise(model, k, NULL, frame);
}

int synthetic_frame(const struct synthetic_model *model, uint64_t k,
                    uint16_t *frame, struct synthetic_photon *truth)
{
    size_t pixels = (size_t)model->rows * model->cols;
    double *charge = calloc(pixels, sizeof *charge);
    if (charge == NULL)
        return -1;
    for (uint32_t i = 0; i < model->photons; i++) {
        double x = model->cols * uniform(hash4(model->seed, k, PHOTON_X, i));
        double y = model->rows * uniform(hash4(model->seed, k, PHOTON_Y, i));
        if (truth != NULL)
            truth[i] = (struct synthetic_photon){x, y, model->photon_adu};
        /* sigma 0.25 px: cells two pixels away get < 1e-4 of the charge. */
        long cx = (long)x, cy = (long)y;
        for (long row = cy - 1; row <= cy + 1; row++) {
            if (row < 0 || row >= (long)model->rows)
                continue;
            double fy = cloud_fraction(y, (double)row, model->cloud_sigma);
            for (long col = cx - 1; col <= cx + 1; col++) {
                if (col < 0 || col >= (long)model->cols)
                    continue;
                double fx = cloud_fraction(x, (double)col, model->cloud_sigma);
                charge[(size_t)row * model->cols + col] +=
                    model->photon_adu * fx * fy;
            }
        }
    }
    digitise(model, k, charge, frame);
    free(charge);
    return 0;
}
