/* SPDX-License-Identifier: BSD-3-Clause */
/* targets.c: the table of fuzz targets and their scratch folder. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "targets.h"

const struct fuzz_target fuzz_targets[] = {
    {"raw_master", "the text of a raw run's master file", fuzz_raw_master},
    {"raw_run", "a master file and the data file it names (raw_run.c)",
     fuzz_raw_run},
    {"pedestal_file", "a pedestal file for 8 x 16 pixels", fuzz_pedestal_file},
    {"eta_file", "an eta calibration file", fuzz_eta_file},
    {"mask_npy", "a mask .npy for 8 x 16 pixels", fuzz_mask_npy},
    {"gain_map", "a gain map, .npy or TIFF, for 8 x 16 pixels", fuzz_gain_map},
    {"clust_file", "a cluster size byte and a .clust file", fuzz_clust_file},
    {"npy_round_trip", "a shape and the bytes of an array to write and read",
     fuzz_npy_round_trip},
    {NULL, NULL, NULL},
};

const struct fuzz_target *fuzz_target_named(const char *name)
{
    for (const struct fuzz_target *target = fuzz_targets; target->name;
         target++)
        if (strcmp(target->name, name) == 0)
            return target;
    return NULL;
}

static char scratch[64];

static void remove_scratch(void)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", scratch);
    if (system(command) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", scratch);
}

const char *fuzz_scratch_file(const char *name, const void *data, size_t size)
{
    if (scratch[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch, sizeof scratch, "%s/cc_fuzz_XXXXXX",
                 tmp != NULL && strlen(tmp) < 40 ? tmp : "/tmp");
        if (mkdtemp(scratch) == NULL) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(remove_scratch);
    }
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    FILE *file = fopen(path, "wb");
    if (file == NULL || fwrite(data, 1, size, file) != size ||
        fclose(file) != 0) {
        perror(path);
        abort();
    }
    return path;
}

cc_finder *fuzz_finder(cc_precision precision)
{
    static cc_finder *finders[2];
    cc_finder **finder = &finders[precision == CC_PRECISION_DOUBLE];
    if (*finder == NULL) {
        cc_config config;
        cc_config_init(&config);
        config.rows = FUZZ_ROWS;
        config.cols = FUZZ_COLS;
        config.backend = CC_BACKEND_CPU;
        config.threads = 1;
        config.precision = precision;
        FUZZ_REQUIRE(cc_finder_new(finder, &config, NULL) == CC_OK);
    }
    return *finder;
}

void fuzz_fail(const char *what, const char *file, int line)
{
    fprintf(stderr, "fuzz: %s:%d: invariant broken: %s\n", file, line, what);
    abort();
}
