/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfuzzer_main.c: the targets under libFuzzer, one binary for all;
 * CC_FUZZ_TARGET names the one to fuzz (./quickstart fuzz sets it).
 */
#include <stdio.h>
#include <stdlib.h>

#include "targets.h"

static const struct fuzz_target *target;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *name = getenv("CC_FUZZ_TARGET");
    target = name == NULL ? NULL : fuzz_target_named(name);
    if (target == NULL) {
        fprintf(stderr, "set CC_FUZZ_TARGET to one of:");
        for (const struct fuzz_target *t = fuzz_targets; t->name; t++)
            fprintf(stderr, " %s", t->name);
        fprintf(stderr, "\n");
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    target->run(data, size);
    return 0;
}
