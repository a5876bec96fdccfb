/* SPDX-License-Identifier: BSD-3-Clause */
/* suites.h: the Check suites of the unit test runner, one per file. */
#ifndef SUITES_H
#define SUITES_H

#include <check.h>

Suite *suite_decisions(void);
Suite *suite_pedestal(void);
Suite *suite_pedestal_file(void);
Suite *suite_batches(void);
Suite *suite_accumulators(void);
Suite *suite_errors(void);
Suite *suite_simulator(void);
Suite *suite_ground_truth(void);
Suite *suite_files(void);
Suite *suite_raw_layouts(void);
Suite *suite_imaging(void);
Suite *suite_mask(void);
Suite *suite_interpolation(void);
Suite *suite_peak_fit(void);
Suite *suite_common_mode(void);
Suite *suite_gain(void);
Suite *suite_agreement(void);

#endif
