/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simulate_raw.c: the simulator and the raw writer through the public
 * API. Writes a simulated MÖNCH dark run and data run as raw files, in the
 * receiver's own format, ready for clusterfind or any reader of real runs:
 *
 *   simulate_raw [--layout LAYOUT] DIRECTORY [DARK_FRAMES [DATA_FRAMES
 *                [SEED [PHOTONS]]]]
 *
 * gives DIRECTORY/dark_master_0.json and DIRECTORY/data_master_0.json
 * (defaults: 1000 dark frames, 100 data frames, seed 1, 2330 photons per
 * frame on average). LAYOUT is how the data files hold the pixels: rows
 * (today's receivers, the default), or an ADC order of older runs,
 * moench03-old, ctb-moench03 or ctb-moench04 (cc_raw_layout_name).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clustercore.h"

enum { BATCH = 16, FRAMES_PER_FILE = 1000 };

/* Writes one run: dark frames, or frames with photons. */
static int write_run(cc_simulator *simulator, const char *master, bool dark,
                     uint64_t frames, uint32_t rows, uint32_t cols,
                     cc_raw_layout layout)
{
    char message[CC_MESSAGE_SIZE];
    cc_raw_writer *writer;
    if (cc_raw_writer_new_layout(&writer, master, rows, cols, FRAMES_PER_FILE,
                                 layout, message) != CC_OK) {
        fprintf(stderr, "simulate_raw: %s\n", message);
        return -1;
    }
    uint16_t *batch = malloc(sizeof(uint16_t) * BATCH * rows * cols);
    uint64_t numbers[BATCH];
    int rc = batch == NULL ? CC_ENOMEM : CC_OK;
    for (uint64_t k = 0; k < frames && rc == CC_OK; k += BATCH) {
        size_t n = frames - k < BATCH ? (size_t)(frames - k) : BATCH;
        rc = dark ? cc_simulator_dark_frames(simulator, k, n, batch)
                  : cc_simulator_frames(simulator, k, n, batch, NULL);
        for (size_t i = 0; i < n; i++)
            numbers[i] = k + i + 1; /* receivers count frames from 1 */
        if (rc == CC_OK)
            rc = cc_raw_writer_write(writer, batch, numbers, n, message);
    }
    if (rc == CC_OK)
        rc = cc_raw_writer_finish(writer, message);
    if (rc != CC_OK)
        fprintf(stderr, "simulate_raw: %s: %s\n", master,
                rc == CC_ENOMEM ? cc_strerror(rc) : message);
    cc_raw_writer_destroy(writer); /* removes the run unless finished */
    free(batch);
    return rc == CC_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    cc_raw_layout layout = CC_RAW_LAYOUT_ROWS;
    if (argc > 2 && strcmp(argv[1], "--layout") == 0) {
        while (cc_raw_layout_name(layout) != NULL &&
               strcmp(cc_raw_layout_name(layout), argv[2]) != 0)
            layout++;
        if (cc_raw_layout_name(layout) == NULL) {
            fprintf(stderr,
                    "simulate_raw: unknown layout '%s': rows, "
                    "moench03-old, ctb-moench03 or ctb-moench04\n",
                    argv[2]);
            return 2;
        }
        argc -= 2;
        argv += 2;
    }
    if (argc < 2 || argc > 6) {
        fprintf(stderr, "usage: simulate_raw [--layout LAYOUT] DIRECTORY "
                        "[DARK_FRAMES [DATA_FRAMES [SEED [PHOTONS]]]]\n");
        return 2;
    }
    uint64_t dark = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
    uint64_t data = argc > 3 ? strtoull(argv[3], NULL, 10) : 100;
    cc_simulator_config config;
    cc_simulator_config_init(&config);
    config.threads = 0; /* frames are independent: use every CPU */
    if (argc > 4)
        config.seed = strtoull(argv[4], NULL, 10);
    if (argc > 5)
        config.flux = strtod(argv[5], NULL);
    char message[CC_MESSAGE_SIZE];
    cc_simulator *simulator;
    if (cc_simulator_new(&simulator, &config, message) != CC_OK) {
        fprintf(stderr, "simulate_raw: %s\n", message);
        return 1;
    }
    char dark_master[4096], data_master[4096];
    snprintf(dark_master, sizeof dark_master, "%s/dark_master_0.json", argv[1]);
    snprintf(data_master, sizeof data_master, "%s/data_master_0.json", argv[1]);
    int failed = write_run(simulator, dark_master, true, dark, config.rows,
                           config.cols, layout) != 0 ||
                 write_run(simulator, data_master, false, data, config.rows,
                           config.cols, layout) != 0;
    cc_simulator_destroy(simulator);
    if (!failed)
        printf("wrote %s (%" PRIu64 " dark frames) and %s (%" PRIu64
               " frames, seed %" PRIu64 ")\n",
               dark_master, dark, data_master, data, config.seed);
    return failed ? 1 : 0;
}
