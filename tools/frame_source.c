/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frame_source.c: frames for clusterfind from a raw run or from the
 * simulator, behind one interface. The raw reader's notices (missing or
 * truncated files, padded frames) are passed on to the user as they come.
 */
#include <stdio.h>
#include <string.h>

#include "clusterfind.h"

int source_open_raw(struct source *source, const char *master_path,
                    cc_raw_chip chip)
{
    *source = (struct source){.name = master_path};
    char message[CC_MESSAGE_SIZE];
    int rc = cc_raw_reader_open_chip(&source->reader, master_path, chip,
                                     message);
    if (rc != CC_OK) {
        /* The library's sentence names what is not understood; the
         * option is the tool's. */
        bool unsaid = rc == CC_ENOTSUP && chip == CC_RAW_CHIP_UNSAID &&
                      strstr(message, "which chip") != NULL;
        fprintf(stderr, "clusterfind: %s%s\n", message,
                unsaid ? " (--chip moench03|moench04)" : "");
        return -1;
    }
    cc_raw_info info;
    cc_raw_reader_info(source->reader, &info);
    source->rows = info.rows;
    source->cols = info.cols;
    source->frames_expected = info.frames;
    source->layout = info.layout;
    return 0;
}

void source_open_simulated(struct source *source, cc_simulator *simulator,
                           bool dark, uint64_t frames)
{
    *source = (struct source){
        .name = dark ? "the simulated dark run" : "the simulated data run",
        .simulator = simulator,
        .dark = dark,
        .total = frames,
        .frames_expected = frames,
    };
    /* The simulator's configuration is the default one: 400 x 400. */
    cc_simulator_config config;
    cc_simulator_config_init(&config);
    source->rows = config.rows;
    source->cols = config.cols;
}

void source_close(struct source *source)
{
    cc_raw_reader_close(source->reader);
    source->reader = NULL;
}

int source_read(struct source *source, uint16_t *frames, uint64_t *numbers,
                size_t max_frames, size_t *n_read, cc_truth *truth)
{
    if (source->reader != NULL) {
        char message[CC_MESSAGE_SIZE];
        int rc = cc_raw_reader_read(source->reader, frames, numbers, max_frames,
                                    n_read, message);
        for (const char *notice = cc_raw_reader_notice(source->reader);
             notice != NULL; notice = cc_raw_reader_notice(source->reader))
            fprintf(stderr, "clusterfind: warning: %s\n", notice);
        if (rc != CC_OK)
            fprintf(stderr, "clusterfind: %s\n", message);
        return rc;
    }
    uint64_t left = source->total - source->next;
    size_t n = left < max_frames ? (size_t)left : max_frames;
    int rc = source->dark ? cc_simulator_dark_frames(source->simulator,
                                                     source->next, n, frames)
                          : cc_simulator_frames(source->simulator, source->next,
                                                n, frames, truth);
    if (rc != CC_OK) {
        fprintf(stderr, "clusterfind: simulating: %s\n", cc_strerror(rc));
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        numbers[i] = source->next + i;
    source->next += n;
    *n_read = n;
    return CC_OK;
}
