/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_run.c: a whole raw run read frame by frame. The input is a 2-byte
 * little-endian length L, L bytes of master file, then the data: its
 * first half is the file d0_f0, its second d1_f0 (read with two UDP
 * interfaces). The reader must deliver only complete frames, count what
 * it skips, and end; a run in ADC order goes through its pixel map.
 */
#include <stdlib.h>
#include <string.h>

#include "clustercore.h"
#include "targets.h"

enum { frames_a_read = 3 };

void fuzz_raw_run(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    size_t master_size = data[0] | (size_t)data[1] << 8;
    if (master_size > size - 2)
        master_size = size - 2;
    const uint8_t *rest = data + 2 + master_size;
    size_t rest_size = size - 2 - master_size;
    fuzz_scratch_file("fuzz_d0_f0_0.raw", rest, rest_size / 2);
    fuzz_scratch_file("fuzz_d1_f0_0.raw", rest + rest_size / 2,
                      rest_size - rest_size / 2);
    const char *master = fuzz_scratch_file("fuzz_master_0.json", data + 2,
                                           master_size);

    char message[CC_MESSAGE_SIZE];
    cc_raw_reader *reader;
    int opened = cc_raw_reader_open(&reader, master, message);
    /* A chip test board run, opened again with a chip, by the master's
     * length: the fuzzer reaches both maps. */
    if (opened == CC_ENOTSUP)
        opened = cc_raw_reader_open_chip(&reader, master,
                                         master_size % 2 ? CC_RAW_CHIP_MOENCH04
                                                         : CC_RAW_CHIP_MOENCH03,
                                         message);
    if (opened != CC_OK) {
        FUZZ_REQUIRE(reader == NULL && message[0] != '\0');
        return;
    }
    cc_raw_info info;
    FUZZ_REQUIRE(cc_raw_reader_info(reader, &info) == CC_OK);
    size_t frame_pixels = (size_t)info.rows * info.cols;
    /* Frames of over a million pixels cannot be in the input: the reader
     * is then only opened and asked for none. */
    uint16_t *frames = frame_pixels <= (1u << 20)
                           ? malloc(frames_a_read * frame_pixels * 2)
                           : NULL;
    uint64_t numbers[frames_a_read];
    size_t n_read = 0, total = 0;
    int rc;
    do {
        rc = cc_raw_reader_read(reader, frames, numbers,
                                frames == NULL ? 0 : frames_a_read, &n_read,
                                message);
        total += n_read;
        while (cc_raw_reader_notice(reader) != NULL)
            ;
    } while (rc == CC_OK && n_read > 0);
    cc_raw_stats stats;
    FUZZ_REQUIRE(cc_raw_reader_stats(reader, &stats) == CC_OK);
    FUZZ_REQUIRE(stats.frames_read == total);
    FUZZ_REQUIRE((stats.frames_read + stats.frames_padded) *
                     (info.image_bytes + CC_RAW_HEADER_SIZE) <=
                 rest_size / 2);
    cc_raw_reader_close(reader);
    free(frames);
}
