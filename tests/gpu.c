/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu.c: the CUDA backend against the CPU backend, byte for byte
 * (tests/gpu): the clusters and pedestal (gpu_identity.c), what is kept
 * across batches (gpu_accumulators.c), the pedestal and frames moved
 * (gpu_moves.c), and failures planted (gpu_faults.c).
 * Exits 77 (Automake's SKIP) with the reason when no GPU answers.
 * CC_GPU_TEST_FRAMES shortens the runs (for compute-sanitizer).
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"

int main(void)
{
    cc_config config = test_config(8, 8);
    config.backend = CC_BACKEND_CUDA;
    char message[CC_MESSAGE_SIZE];
    cc_finder *probe;
    int rc = cc_finder_new(&probe, &config, message);
    if (rc != CC_OK) {
        printf("SKIP: CUDA tests: %s\n", message);
        return 77;
    }
    printf("CUDA tests on %s\n", cc_finder_backend_description(probe));
    cc_finder_destroy(probe);

    Suite *suite = suite_create("cuda");
    gpu_identity_cases(suite);
    gpu_accumulator_cases(suite);
    gpu_move_cases(suite);
    gpu_fault_cases(suite);
    SRunner *runner = srunner_create(suite);
    /* CUDA is initialised in this process already: no forks. */
    srunner_set_fork_status(runner, CK_NOFORK);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
