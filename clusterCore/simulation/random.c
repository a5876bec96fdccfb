/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * random.c: counter-based random numbers for the simulator. A number is a
 * hash of (seed, stream, frame, index) rather than the next state of a
 * sequence, so any frame can be made by any thread in any order and comes
 * out the same. The hash is splitmix64's finaliser applied to a key that
 * is itself mixed from the seed, stream and frame: splitmix64 passes
 * BigCrush as a counter-based generator, which is how we use it.
 */
#include <math.h>

#include "simulation.h"

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t cc__random_key(uint64_t seed, uint32_t stream, uint64_t frame)
{
    uint64_t key = mix64(seed + 0x9E3779B97F4A7C15ull * ((uint64_t)stream + 1));
    return mix64(key ^ mix64(frame + 0xD1B54A32D192ED03ull));
}

uint64_t cc__random_bits(uint64_t key, uint64_t index)
{
    return mix64(key + 0x9E3779B97F4A7C15ull * (index + 1));
}

double cc__random_uniform(uint64_t bits)
{
    /* 53 bits, offset by half a step: never 0 or 1, so log() is safe. */
    return ((double)(bits >> 11) + 0.5) * 0x1.0p-53;
}

void cc__random_normal_pair(uint64_t bits, double *first, double *second)
{
    /* Box-Muller on two 32-bit halves: one hash gives two normals. The
     * smallest u1 is 2^-33, so the tails reach 7.6 sigma. */
    double u1 = ((double)(bits >> 32) + 0.5) * 0x1.0p-32;
    double u2 = ((double)(bits & 0xFFFFFFFFu) + 0.5) * 0x1.0p-32;
    double radius = sqrt(-2.0 * log(u1));
    double angle = 6.283185307179586 * u2;
    *first = radius * cos(angle);
    *second = radius * sin(angle);
}

/* log(k!) without lgamma(), which writes the global signgam and so is not
 * safe in threads: a sum of logs for small k, Stirling's series (error
 * below 1e-16 relative for k >= 16) above. */
static double log_factorial(double k)
{
    if (k < 16) {
        double sum = 0;
        for (double i = 2; i <= k; i++)
            sum += log(i);
        return sum;
    }
    double inverse = 1.0 / k, inverse2 = inverse * inverse;
    return k * log(k) - k + 0.5 * log(6.283185307179586 * k) +
           inverse * (1.0 / 12 - inverse2 * (1.0 / 360 - inverse2 / 1260));
}

uint64_t cc__random_poisson(uint64_t key, double mean)
{
    if (!(mean > 0))
        return 0;
    uint64_t draw = 0;
    if (mean < 10) {
        /* Inversion: walk the cumulative distribution up to a uniform. */
        double u = cc__random_uniform(cc__random_bits(key, draw));
        double p = exp(-mean), cumulative = p;
        uint64_t k = 0;
        while (u > cumulative && k < 1000) {
            k++;
            p *= mean / (double)k;
            cumulative += p;
        }
        return k;
    }
    /* Hörmann's transformed rejection with squeeze (PTRS, 1993), exact in
     * distribution for mean >= 10; each try takes two uniforms. */
    double root = sqrt(mean), log_mean = log(mean);
    double b = 0.931 + 2.53 * root;
    double a = -0.059 + 0.02483 * b;
    double inverse_alpha = 1.1239 + 1.1328 / (b - 3.4);
    double v_r = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double u = cc__random_uniform(cc__random_bits(key, draw++)) - 0.5;
        double v = cc__random_uniform(cc__random_bits(key, draw++));
        double us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + mean + 0.43);
        if (us >= 0.07 && v <= v_r)
            return (uint64_t)k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + log(inverse_alpha) - log(a / (us * us) + b) <=
            -mean + k * log_mean - log_factorial(k))
            return (uint64_t)k;
    }
}
