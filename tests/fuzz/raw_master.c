/* SPDX-License-Identifier: BSD-3-Clause */
/* raw_master.c: the master file parser on any text; what it accepts is
 * self-consistent, because the reader sizes its reads from it. */
#include "files/raw.h"
#include "internal.h"
#include "targets.h"

void fuzz_raw_master(const uint8_t *data, size_t size)
{
    cc_raw_info info;
    char message[CC_MESSAGE_SIZE];
    if (cc__raw_master_parse((const char *)data, size, "fuzz_master_0.json",
                             &info, message) != CC_OK) {
        FUZZ_REQUIRE(message[0] != '\0');
        return;
    }
    FUZZ_REQUIRE(info.rows >= 1 && info.rows <= CC_FRAME_SIDE_MAX);
    FUZZ_REQUIRE(info.cols >= 1 && info.cols <= CC_FRAME_SIDE_MAX);
    FUZZ_REQUIRE(info.image_bytes * info.interfaces ==
                 2ull * info.rows * info.cols);
    FUZZ_REQUIRE(info.interfaces >= 1 &&
                 info.interfaces <= CC_RAW_INTERFACES_MAX);
    uint64_t per_file = info.max_frames_per_file == 0
                            ? info.frames
                            : info.max_frames_per_file;
    FUZZ_REQUIRE(info.frames == 0
                     ? info.files == 0
                     : (uint64_t)info.files * per_file >= info.frames &&
                           ((uint64_t)info.files - 1) * per_file <
                               info.frames);
}
