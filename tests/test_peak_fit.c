/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_peak_fit.c: the spectrum's line fit of docs/spec.md §4.7 on a
 * spectrum built from a known Gaussian on a background, on spectra that
 * have no line, and against the simulator's Kα line.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"
#include "suites.h"

/* A spectrum of 5-ADU bins on [0, 2000) holding, in each bin, the
 * rounded counts of a Gaussian of the given area, mean and sigma on a
 * flat background (clusters of one cell each, at the bin's centre). */
static cc_spectrum *gaussian_spectrum(double area, double mean, double sigma,
                                      double background)
{
    cc_spectrum *spectrum;
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 400, 0, 2000),
                     CC_OK);
    int32_t values[9] = {0};
    for (int bin = 0; bin < 400; bin++) {
        double centre = 5.0 * bin + 2.5, z = (centre - mean) / sigma;
        double expected = area * 5 / (sigma * sqrt(2 * 3.141592653589793)) *
                              exp(-0.5 * z * z) +
                          background;
        long n = lround(expected);
        values[4] = (int32_t)lround(centre - 0.5); /* inside the bin */
        cc_clusters *one = test_clusters(3, 3, 1, values, NULL);
        for (long k = 0; k < n; k++)
            ck_assert_int_eq(cc_spectrum_add(spectrum, one), CC_OK);
        cc_clusters_destroy(one);
    }
    return spectrum;
}

/* The fit gives back the line it was made of: its mean, width and
 * area, around the highest bin or in a range given. */
START_TEST(fit_recovers_a_known_line)
{
    cc_spectrum *spectrum = gaussian_spectrum(20000, 803.7, 31.5, 12);
    cc_peak peak;
    ck_assert_int_eq(cc_spectrum_fit_peak(spectrum, 0, 0, &peak), CC_OK);
    ck_assert_double_eq_tol(peak.position, 803.7, 0.1);
    ck_assert_double_eq_tol(peak.sigma, 31.5, 0.3);
    ck_assert_double_eq_tol(peak.fwhm, 2.3548 * 31.5, 1);
    ck_assert_double_eq_tol(peak.resolution, peak.fwhm / peak.position, 1e-12);
    ck_assert_double_eq_tol(peak.counts, 20000, 200);
    ck_assert_double_eq_tol(peak.background, 12, 2);
    ck_assert_double_lt(peak.chi2_per_dof, 2);
    ck_assert(peak.low < 803.7 - 50 && peak.high > 803.7 + 50);
    cc_peak given;
    ck_assert_int_eq(cc_spectrum_fit_peak(spectrum, 700, 900, &given), CC_OK);
    ck_assert(given.low == 700 && given.high == 900 && given.bins == 40);
    ck_assert_double_eq_tol(given.position, 803.7, 0.1);

    /* The CSV's last line gives the fit back to the bit. */
    char path[] = "/tmp/cc_peak_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    char message[CC_MESSAGE_SIZE];
    ck_assert_int_eq(cc_spectrum_write_csv(spectrum, &peak, path, message),
                     CC_OK);
    FILE *file = fopen(path, "r");
    ck_assert_ptr_nonnull(file);
    char line[1024], last[1024] = "";
    while (fgets(line, sizeof line, file) != NULL)
        snprintf(last, sizeof last, "%s", line);
    fclose(file);
    unlink(path);
    double position, sigma;
    unsigned bins;
    ck_assert_int_eq(sscanf(last, "# peak: position=%lf sigma=%lf", &position,
                            &sigma),
                     2);
    ck_assert(position == peak.position && sigma == peak.sigma);
    ck_assert_ptr_nonnull(strstr(last, " bins="));
    ck_assert_int_eq(sscanf(strstr(last, " bins="), " bins=%u", &bins), 1);
    ck_assert_uint_eq(bins, peak.bins);
    cc_spectrum_destroy(spectrum);
}
END_TEST

/* Nothing to fit: an empty spectrum, a flat one, a range of five bins or
 * one without the line; *peak is untouched. */
START_TEST(fit_refuses_what_has_no_line)
{
    cc_peak peak = {.position = -1};
    cc_spectrum *spectrum;
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 400, 0, 2000),
                     CC_OK);
    ck_assert_int_eq(cc_spectrum_fit_peak(spectrum, 0, 0, &peak), CC_ESTATE);
    cc_spectrum_destroy(spectrum);
    spectrum = gaussian_spectrum(0, 800, 30, 20);
    ck_assert_int_eq(cc_spectrum_fit_peak(spectrum, 0, 0, &peak), CC_ESTATE);
    cc_spectrum_destroy(spectrum);
    spectrum = gaussian_spectrum(20000, 800, 30, 5);
    ck_assert_int_eq(cc_spectrum_fit_peak(spectrum, 790, 815, &peak),
                     CC_ESTATE);
    ck_assert_int_eq(cc_spectrum_fit_peak(spectrum, 1500, 1900, &peak),
                     CC_ESTATE);
    ck_assert_int_eq(cc_spectrum_fit_peak(spectrum, NAN, 900, &peak),
                     CC_EINVAL);
    ck_assert_int_eq(cc_spectrum_fit_peak(NULL, 0, 0, &peak), CC_EINVAL);
    ck_assert(peak.position == -1);
    cc_spectrum_destroy(spectrum);
}
END_TEST

/* The simulator's Kα line alone (no Kβ beside it): the fitted position is
 * within 0.5 % of the median cluster sum of the isolated Kα photons and
 * sigma within 10 % of their spread, both from the truth. */
START_TEST(fit_matches_the_simulated_line)
{
    enum { SIDE = 100, DARK = 100, FRAMES = 1000 };
    cc_simulator_config model = test_simulator_config(SIDE, SIDE, 31, 40);
    model.n_lines = 1; /* Cu Kα only */
    model.threads = 0;
    cc_simulator *simulator = test_simulator(&model);
    size_t pixels = (size_t)SIDE * SIDE;
    uint16_t *frames = malloc(FRAMES * pixels * sizeof *frames);
    uint64_t *numbers = malloc(FRAMES * sizeof *numbers);
    ck_assert(frames != NULL && numbers != NULL);
    cc_config config = test_config(SIDE, SIDE);
    config.pedestal_frames = DARK;
    config.threads = 0;
    cc_finder *finder = test_finder(&config);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, DARK, frames),
                     CC_OK);
    ck_assert_int_eq(cc_finder_train(finder, frames, DARK), CC_OK);
    cc_truth *truth;
    cc_truth_score *score;
    cc_clusters *clusters;
    cc_spectrum *spectrum;
    ck_assert_int_eq(cc_truth_new(&truth), CC_OK);
    ck_assert_int_eq(cc_truth_score_new(&score, SIDE, SIDE, model.gain), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 400, 0, 2000),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, DARK, FRAMES, frames,
                                         truth),
                     CC_OK);
    for (uint32_t k = 0; k < FRAMES; k++)
        numbers[k] = DARK + k;
    ck_assert_int_eq(cc_finder_process(finder, frames, numbers, FRAMES,
                                       clusters),
                     CC_OK);
    ck_assert_int_eq(cc_truth_score_add(score, clusters, truth), CC_OK);
    ck_assert_int_eq(cc_spectrum_add(spectrum, clusters), CC_OK);
    cc_score result;
    ck_assert_int_eq(cc_truth_score_get(score, &result), CC_OK);
    double line = model.lines[0].energy_kev * model.gain;
    double median = result.line0_ratio * line;
    double spread = result.line0_spread * line;
    cc_peak peak;
    ck_assert_int_eq(cc_spectrum_fit_peak(spectrum, 0, 0, &peak), CC_OK);
    printf("  Ka alone: fit %.2f ADU, sigma %.2f ADU (chi2/dof %.2f, %u "
           "bins); truth: median cluster sum %.2f ADU, spread %.2f ADU of "
           "%llu photons\n",
           peak.position, peak.sigma, peak.chi2_per_dof, (unsigned)peak.bins,
           median, spread, (unsigned long long)result.line0_found);
    ck_assert_uint_gt(result.line0_found, 10000);
    ck_assert_double_eq_tol(peak.position, median, 0.005 * median);
    ck_assert_double_eq_tol(peak.sigma, spread, 0.1 * spread);
    cc_spectrum_destroy(spectrum);
    cc_clusters_destroy(clusters);
    cc_truth_score_destroy(score);
    cc_truth_destroy(truth);
    cc_finder_destroy(finder);
    cc_simulator_destroy(simulator);
    free(frames);
    free(numbers);
}
END_TEST

Suite *suite_peak_fit(void)
{
    Suite *suite = suite_create("peak fit");
    TCase *fit = tcase_create("fit");
    tcase_set_timeout(fit, 60);
    tcase_add_test(fit, fit_recovers_a_known_line);
    tcase_add_test(fit, fit_refuses_what_has_no_line);
    tcase_add_test(fit, fit_matches_the_simulated_line);
    suite_add_tcase(suite, fit);
    return suite;
}
