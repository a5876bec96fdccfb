/* SPDX-License-Identifier: BSD-3-Clause */
/* raw_master.c: the master file parser on any text, with each chip a
 * caller may name; what it accepts is self-consistent, because the reader
 * sizes its reads and builds its pixel map from it. */
#include "files/raw.h"
#include "targets.h"

/* One parse with the chip a caller named. */
static void parse_as(const uint8_t *data, size_t size, cc_raw_chip chip)
{
    cc_raw_info info;
    char message[CC_MESSAGE_SIZE];
    if (cc__raw_master_parse((const char *)data, size, "fuzz_master_0.json",
                             chip, &info, message) != CC_OK) {
        FUZZ_REQUIRE(message[0] != '\0');
        return;
    }
    FUZZ_REQUIRE(info.rows >= 1 && info.rows <= CC_FRAME_SIDE_MAX);
    FUZZ_REQUIRE(info.cols >= 1 && info.cols <= CC_FRAME_SIDE_MAX);
    FUZZ_REQUIRE(info.image_bytes * info.interfaces ==
                 2ull * info.rows * info.cols);
    FUZZ_REQUIRE(info.interfaces >= 1 &&
                 info.interfaces <= CC_RAW_INTERFACES_MAX);
    FUZZ_REQUIRE(cc_raw_layout_name(info.layout) != NULL);
    /* An ADC order is one interface's 400 x 400 frame, of the chip named
     * for a chip test board run. */
    FUZZ_REQUIRE(!cc__raw_layout_is_adc(info.layout) ||
                 (info.rows == CC_RAW_ADC_SIDE &&
                  info.cols == CC_RAW_ADC_SIDE && info.interfaces == 1));
    FUZZ_REQUIRE(chip != CC_RAW_CHIP_UNSAID ||
                 info.layout == CC_RAW_LAYOUT_ROWS ||
                 info.layout == CC_RAW_LAYOUT_MOENCH03_OLD);
    FUZZ_REQUIRE((info.layout == CC_RAW_LAYOUT_CTB_MOENCH04) ==
                 (chip == CC_RAW_CHIP_MOENCH04));
    uint64_t per_file = info.max_frames_per_file == 0
                            ? info.frames
                            : info.max_frames_per_file;
    FUZZ_REQUIRE(info.frames == 0
                     ? info.files == 0
                     : (uint64_t)info.files * per_file >= info.frames &&
                           ((uint64_t)info.files - 1) * per_file < info.frames);
}

void fuzz_raw_master(const uint8_t *data, size_t size)
{
    parse_as(data, size, CC_RAW_CHIP_UNSAID);
    parse_as(data, size, CC_RAW_CHIP_MOENCH03);
    parse_as(data, size, CC_RAW_CHIP_MOENCH04);
}
