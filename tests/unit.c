/* SPDX-License-Identifier: BSD-3-Clause */
/* unit.c: runs every suite of libclustercore's unit tests. */
#include <stdlib.h>

#include "suites.h"

int main(void)
{
    SRunner *runner = srunner_create(suite_decisions());
    srunner_add_suite(runner, suite_pedestal());
    srunner_add_suite(runner, suite_pedestal_file());
    srunner_add_suite(runner, suite_batches());
    srunner_add_suite(runner, suite_accumulators());
    srunner_add_suite(runner, suite_errors());
    srunner_add_suite(runner, suite_simulator());
    srunner_add_suite(runner, suite_files());
    srunner_add_suite(runner, suite_raw_layouts());
    srunner_add_suite(runner, suite_ground_truth());
    srunner_add_suite(runner, suite_imaging());
    srunner_add_suite(runner, suite_mask());
    srunner_add_suite(runner, suite_common_mode());
    srunner_add_suite(runner, suite_gain());
    srunner_add_suite(runner, suite_interpolation());
    srunner_add_suite(runner, suite_peak_fit());
    srunner_add_suite(runner, suite_agreement());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
