/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_raw_layouts.c: raw runs in the ADC orders of the chip test board
 * and of MÖNCH's older receivers (docs/spec.md §5.2). Simulated frames
 * written in each layout read back byte for byte; the maps put the
 * samples where aare's GenerateMoench03PixelMap and
 * GenerateMoench04AnalogPixelMap do; what the reader does not know is
 * refused with the reason; damage is handled as in rows.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files/raw.h"
#include "frames.h"
#include "suites.h"

enum { SIDE = 400, PIXELS = SIDE * SIDE, FRAMES = 5, PER_FILE = 2 };

static char directory[] = "/tmp/cc_layouts_XXXXXX";
static char master[512];
static uint16_t *frames, *back;
static uint64_t numbers[FRAMES];

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(directory));
    snprintf(master, sizeof master, "%s/run_master_0.json", directory);
    frames = malloc(sizeof *frames * FRAMES * PIXELS);
    back = malloc(sizeof *back * FRAMES * PIXELS);
    ck_assert(frames != NULL && back != NULL);
    cc_simulator_config model = test_simulator_config(SIDE, SIDE, 11, 400);
    cc_simulator *simulator = test_simulator(&model);
    ck_assert_int_eq(cc_simulator_frames(simulator, 0, FRAMES, frames, NULL),
                     CC_OK);
    cc_simulator_destroy(simulator);
    for (int i = 0; i < FRAMES; i++)
        numbers[i] = 50 + 3 * (uint64_t)i;
}

static void teardown(void)
{
    test_remove_directory(directory);
    free(frames);
    free(back);
}

static char *path_in(const char *name)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    return path;
}

static void write_run(cc_raw_layout layout)
{
    char message[CC_MESSAGE_SIZE];
    cc_raw_writer *writer;
    ck_assert_msg(cc_raw_writer_new_layout(&writer, master, SIDE, SIDE,
                                           PER_FILE, layout, message) == CC_OK,
                  "%s", message);
    ck_assert_int_eq(cc_raw_writer_write(writer, frames, numbers, FRAMES,
                                         message),
                     CC_OK);
    ck_assert_int_eq(cc_raw_writer_finish(writer, message), CC_OK);
    cc_raw_writer_destroy(writer);
}

static cc_raw_chip chip_of(cc_raw_layout layout)
{
    return layout == CC_RAW_LAYOUT_CTB_MOENCH04   ? CC_RAW_CHIP_MOENCH04
           : layout == CC_RAW_LAYOUT_CTB_MOENCH03 ? CC_RAW_CHIP_MOENCH03
                                                  : CC_RAW_CHIP_UNSAID;
}

/* Reads the run at master with chip: the frames, into back, and the
 * notices joined. */
static size_t read_run(cc_raw_chip chip, uint64_t *out_numbers, char *notices,
                       size_t notices_size, cc_raw_stats *stats,
                       cc_raw_info *info)
{
    return test_read_raw_run(master, chip, PIXELS, back, out_numbers, notices,
                             notices_size, stats, info);
}

/* Value p of frame k in the first data file (PER_FILE frames a file). */
static uint16_t stored(size_t k, size_t p)
{
    FILE *file = fopen(path_in("run_d0_f0_0.raw"), "rb");
    ck_assert_ptr_nonnull(file);
    uint16_t value;
    long at = (long)(k * (CC_RAW_HEADER_SIZE + PIXELS * 2) +
                     CC_RAW_HEADER_SIZE + p * 2);
    ck_assert_int_eq(fseek(file, at, SEEK_SET), 0);
    ck_assert_uint_eq(fread(&value, sizeof value, 1, file), 1);
    fclose(file);
    return value;
}

static const cc_raw_layout adc_layouts[] = {CC_RAW_LAYOUT_MOENCH03_OLD,
                                            CC_RAW_LAYOUT_CTB_MOENCH03,
                                            CC_RAW_LAYOUT_CTB_MOENCH04};

/* Each layout: simulated frames written in it read back byte for byte,
 * with their numbers, the layout reported, the packets of 10 GbE. */
START_TEST(layouts_round_trip)
{
    cc_raw_layout layout = adc_layouts[_i];
    write_run(layout);
    uint64_t back_numbers[FRAMES];
    char notices[2048];
    cc_raw_stats stats;
    cc_raw_info info;
    ck_assert_uint_eq(read_run(chip_of(layout), back_numbers, notices,
                               sizeof notices, &stats, &info),
                      FRAMES);
    ck_assert_mem_eq(back, frames, sizeof *frames * FRAMES * PIXELS);
    ck_assert_mem_eq(back_numbers, numbers, sizeof numbers);
    ck_assert_str_eq(notices, "");
    ck_assert_int_eq(info.layout, layout);
    ck_assert_uint_eq(info.rows, SIDE);
    ck_assert_uint_eq(info.cols, SIDE);
    ck_assert_uint_eq(info.files, 3);
    ck_assert_uint_eq(info.packets_per_frame, 40); /* 320000 / 8144 */
    /* The data files are not in rows: a frame's first row differs. */
    size_t differ = 0;
    for (size_t p = 0; p < SIDE; p++)
        differ += stored(0, p) != frames[p];
    ck_assert_uint_gt(differ, SIDE / 2);
}
END_TEST

/* The maps put sample s of ADC a (value 32 s + a) where aare's do:
 * MÖNCH03, ADC a reads columns (3 - a/8)*100 + (a%4)*25 + s%25, rows
 * 199 - s/25 for (a/4) even and 200 + s/25 for odd; MÖNCH04, columns
 * (n%16)*25 + s%25 with n the board's ADC number, rows 199 - s/25 for
 * a < 16. */
START_TEST(layouts_maps_match_aare)
{
    static const struct {
        cc_raw_layout layout;
        uint32_t sample, adc, row, col;
    } cases[] = {
        {CC_RAW_LAYOUT_MOENCH03_OLD, 0, 0, 199, 300},
        {CC_RAW_LAYOUT_MOENCH03_OLD, 0, 1, 199, 325},
        {CC_RAW_LAYOUT_MOENCH03_OLD, 0, 4, 200, 300},
        {CC_RAW_LAYOUT_MOENCH03_OLD, 1, 0, 199, 301},
        {CC_RAW_LAYOUT_MOENCH03_OLD, 25, 0, 198, 300},
        {CC_RAW_LAYOUT_MOENCH03_OLD, 4999, 31, 399, 99},
        {CC_RAW_LAYOUT_CTB_MOENCH03, 26, 9, 198, 226},
        {CC_RAW_LAYOUT_CTB_MOENCH03, 0, 24, 199, 0},
        {CC_RAW_LAYOUT_CTB_MOENCH04, 0, 0, 199, 225},
        {CC_RAW_LAYOUT_CTB_MOENCH04, 0, 8, 199, 25},
        {CC_RAW_LAYOUT_CTB_MOENCH04, 0, 16, 200, 175},
        {CC_RAW_LAYOUT_CTB_MOENCH04, 52, 31, 202, 202},
        {CC_RAW_LAYOUT_CTB_MOENCH04, 4999, 15, 0, 174},
    };
    uint32_t *map = malloc(sizeof *map * PIXELS);
    ck_assert_ptr_nonnull(map);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_assert_int_eq(cc__raw_layout_map(cases[i].layout, map), CC_OK);
        ck_assert_msg(map[cases[i].row * SIDE + cases[i].col] ==
                          cases[i].sample * 32 + cases[i].adc,
                      "case %zu: (%u, %u) holds %u", i, cases[i].row,
                      cases[i].col, map[cases[i].row * SIDE + cases[i].col]);
    }
    /* Each map is a permutation. */
    for (size_t l = 0; l < 3; l++) {
        ck_assert_int_eq(cc__raw_layout_map(adc_layouts[l], map), CC_OK);
        static unsigned char seen[PIXELS];
        memset(seen, 0, sizeof seen);
        for (size_t k = 0; k < PIXELS; k++) {
            ck_assert_uint_lt(map[k], PIXELS);
            ck_assert(!seen[map[k]]);
            seen[map[k]] = 1;
        }
    }
    ck_assert_int_eq(cc__raw_layout_map(CC_RAW_LAYOUT_ROWS, map), CC_EINVAL);
    free(map);
    /* And the writer put frame 1's pixel (199, 300) first in MÖNCH03
     * order. */
    write_run(CC_RAW_LAYOUT_MOENCH03_OLD);
    ck_assert_uint_eq(stored(1, 0), frames[PIXELS + 199 * SIDE + 300]);
    ck_assert_uint_eq(stored(1, 4), frames[PIXELS + 200 * SIDE + 300]);
}
END_TEST

START_TEST(layouts_names)
{
    ck_assert_str_eq(cc_raw_layout_name(CC_RAW_LAYOUT_ROWS), "rows");
    ck_assert_str_eq(cc_raw_layout_name(CC_RAW_LAYOUT_MOENCH03_OLD),
                     "moench03-old");
    ck_assert_str_eq(cc_raw_layout_name(CC_RAW_LAYOUT_CTB_MOENCH03),
                     "ctb-moench03");
    ck_assert_str_eq(cc_raw_layout_name(CC_RAW_LAYOUT_CTB_MOENCH04),
                     "ctb-moench04");
    ck_assert_ptr_null(cc_raw_layout_name((cc_raw_layout)4));
    ck_assert_ptr_null(cc_raw_layout_name((cc_raw_layout)-1));
    /* The writer's ADC orders hold 400 x 400 frames only. */
    char message[CC_MESSAGE_SIZE];
    cc_raw_writer *writer;
    ck_assert_int_eq(cc_raw_writer_new_layout(&writer, master, 200, 400, 10,
                                              CC_RAW_LAYOUT_CTB_MOENCH04,
                                              message),
                     CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(message, "400 x 400"));
    ck_assert_int_eq(cc_raw_writer_new_layout(&writer, master, 400, 400, 10,
                                              (cc_raw_layout)9, message),
                     CC_EINVAL);
}
END_TEST

/* Replaces the first occurrence of from by to in the master file. */
static void edit_master(const char *from, const char *to)
{
    test_edit_file(master, from, to);
}

/* What a master file says that the reader does not know is refused with
 * the reason, never read as rows. */
START_TEST(layouts_unknown_refused)
{
    static const struct {
        cc_raw_layout layout;
        cc_raw_chip chip;
        const char *from, *to, *says;
        int code;
    } cases[] = {
        {CC_RAW_LAYOUT_CTB_MOENCH03, CC_RAW_CHIP_UNSAID, "", "",
         "does not say which chip", CC_ENOTSUP},
        {CC_RAW_LAYOUT_MOENCH03_OLD, CC_RAW_CHIP_MOENCH04, "", "",
         "chip test board runs only", CC_EINVAL},
        {CC_RAW_LAYOUT_CTB_MOENCH03, CC_RAW_CHIP_MOENCH03,
         "\"Digital Flag\": 0", "\"Digital Flag\": 1", "digital samples",
         CC_ENOTSUP},
        {CC_RAW_LAYOUT_CTB_MOENCH04, CC_RAW_CHIP_MOENCH04,
         "\"Transceiver Flag\": 0", "\"Transceiver Flag\": 1",
         "transceiver samples", CC_ENOTSUP},
        {CC_RAW_LAYOUT_CTB_MOENCH03, CC_RAW_CHIP_MOENCH03, "\"Analog Flag\": 1",
         "\"Analog Flag\": 0", "no analog samples", CC_ENOTSUP},
        {CC_RAW_LAYOUT_CTB_MOENCH03, CC_RAW_CHIP_MOENCH03,
         "\"Analog Flag\": 1,", "", "does not say that it holds analog",
         CC_ENOTSUP},
        {CC_RAW_LAYOUT_MOENCH03_OLD, CC_RAW_CHIP_UNSAID, "\"Analog Flag\": 1",
         "\"Analog Flag\": 0", "no analog samples", CC_ENOTSUP},
        {CC_RAW_LAYOUT_MOENCH03_OLD, CC_RAW_CHIP_UNSAID,
         "\"Analog Samples\": 5000", "\"Analog Samples\": 2500",
         "5000 samples of 32 ADCs", CC_ENOTSUP},
        {CC_RAW_LAYOUT_MOENCH03_OLD, CC_RAW_CHIP_UNSAID,
         "\"ADC Mask\": \"0xffffffff\"", "\"ADC Mask\": \"0xffff\"",
         "\"ADC Mask\" is 0xffff;", CC_ENOTSUP},
        {CC_RAW_LAYOUT_CTB_MOENCH03, CC_RAW_CHIP_MOENCH03,
         "\"ADC Mask\": \"0xffffffff\"", "\"ADC Mask\": 65535",
         "\"ADC Mask\" is 0xffff;", CC_ENOTSUP},
        {CC_RAW_LAYOUT_CTB_MOENCH03, CC_RAW_CHIP_MOENCH03,
         "\"ADC Mask\": \"0xffffffff\"", "\"ADC Mask\": \"ffffffffff\"",
         "must be 32 bits", CC_EFORMAT},
        {CC_RAW_LAYOUT_MOENCH03_OLD, CC_RAW_CHIP_UNSAID, "\"Ten Giga\": 1,", "",
         "no \"Ten Giga\"", CC_EFORMAT},
        {CC_RAW_LAYOUT_MOENCH03_OLD, CC_RAW_CHIP_UNSAID,
         "\"Number of UDP Interfaces\": 1", "\"Number of UDP Interfaces\": 2",
         "2 UDP interfaces in the ADC order of moench03-old", CC_ENOTSUP},
        {CC_RAW_LAYOUT_CTB_MOENCH03, CC_RAW_CHIP_MOENCH03,
         "\"Image Size in bytes\": 320000", "\"Image Size in bytes\": 360000",
         "take 320000", CC_EFORMAT},
        {CC_RAW_LAYOUT_CTB_MOENCH03, CC_RAW_CHIP_MOENCH03, "\"ChipTestBoard\"",
         "\"Xilinx_ChipTestBoard\"", "knows \"Moench\" and \"ChipTestBoard\"",
         CC_ENOTSUP},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_run(cases[i].layout);
        if (cases[i].from[0] != '\0')
            edit_master(cases[i].from, cases[i].to);
        char message[CC_MESSAGE_SIZE] = "";
        cc_raw_reader *reader = (cc_raw_reader *)&reader;
        ck_assert_msg(cc_raw_reader_open_chip(&reader, master, cases[i].chip,
                                              message) == cases[i].code,
                      "case %zu: %s", i, message);
        ck_assert_ptr_null(reader);
        ck_assert_msg(strstr(message, cases[i].says) != NULL,
                      "case %zu: '%s' lacks '%s'", i, message, cases[i].says);
    }
    /* A chip that is not one. */
    char message[CC_MESSAGE_SIZE];
    cc_raw_reader *reader;
    ck_assert_int_eq(cc_raw_reader_open_chip(&reader, master, (cc_raw_chip)3,
                                             message),
                     CC_EINVAL);
}
END_TEST

/* Master files of MÖNCH's receivers of the chip test board's time wrote
 * "Analog Samples" without "Analog Flag", in 7.x or 8.x keys, and the 8.x
 * chip test board "ADC Mask" as a number: each reads as the same run. */
START_TEST(layouts_older_keys)
{
    write_run(CC_RAW_LAYOUT_MOENCH03_OLD);
    edit_master("\"Analog Flag\": 1,", "");
    edit_master("\"ADC Mask\": \"0xffffffff\"", "\"ADC Mask\": \"0xFFFFFFFF\"");
    uint64_t back_numbers[FRAMES];
    char notices[2048];
    cc_raw_stats stats;
    cc_raw_info info;
    for (int version = 7; version <= 8; version++) {
        if (version == 8) {
            edit_master("\"Version\": 7.2", "\"Version\": 8.0");
            edit_master("\"Image Size in bytes\"", "\"Image Size\"");
        }
        ck_assert_uint_eq(read_run(CC_RAW_CHIP_UNSAID, back_numbers, notices,
                                   sizeof notices, &stats, &info),
                          FRAMES);
        ck_assert_int_eq(info.layout, CC_RAW_LAYOUT_MOENCH03_OLD);
        ck_assert_mem_eq(back, frames, sizeof *frames * FRAMES * PIXELS);
    }
    write_run(CC_RAW_LAYOUT_CTB_MOENCH04);
    edit_master("\"Version\": 7.2", "\"Version\": 8.0");
    edit_master("\"Image Size in bytes\"", "\"Image Size\"");
    edit_master("\"ADC Mask\": \"0xffffffff\"", "\"ADC Mask\": 4294967295");
    /* Over 1 GbE a complete frame is 239 packets of 1344 bytes: the
     * writer's 40 say each frame is padded. */
    edit_master("\"Ten Giga\": 1", "\"Ten Giga\": 0");
    ck_assert_uint_eq(read_run(CC_RAW_CHIP_MOENCH04, back_numbers, notices,
                               sizeof notices, &stats, &info),
                      0);
    ck_assert_uint_eq(info.packets_per_frame, 239);
    ck_assert_uint_eq(stats.frames_padded, FRAMES);
    edit_master("\"Ten Giga\": 0", "\"Ten Giga\": 1");
    ck_assert_uint_eq(read_run(CC_RAW_CHIP_MOENCH04, back_numbers, notices,
                               sizeof notices, &stats, &info),
                      FRAMES);
    ck_assert_int_eq(info.layout, CC_RAW_LAYOUT_CTB_MOENCH04);
    ck_assert_mem_eq(back, frames, sizeof *frames * FRAMES * PIXELS);
}
END_TEST

/* A truncated data file and a padded frame in ADC order: as in rows, the
 * complete frames are kept and the rest said. */
START_TEST(layouts_damage)
{
    write_run(CC_RAW_LAYOUT_CTB_MOENCH03);
    size_t frame_bytes = CC_RAW_HEADER_SIZE + PIXELS * 2;
    /* File 1 (frames 2, 3) cut inside frame 3; frame 0 short a packet. */
    ck_assert_int_eq(truncate(path_in("run_d0_f1_0.raw"),
                              (off_t)(frame_bytes + 1000)),
                     0);
    FILE *file = fopen(path_in("run_d0_f0_0.raw"), "r+b");
    ck_assert_ptr_nonnull(file);
    uint32_t packets = 39;
    fseek(file, 12, SEEK_SET);
    fwrite(&packets, sizeof packets, 1, file);
    fclose(file);
    uint64_t back_numbers[FRAMES];
    char notices[4096];
    cc_raw_stats stats;
    cc_raw_info info;
    size_t n = read_run(CC_RAW_CHIP_MOENCH03, back_numbers, notices,
                        sizeof notices, &stats, &info);
    ck_assert_uint_eq(n, 3); /* frames 1, 2 and 4 */
    uint64_t expected[3] = {numbers[1], numbers[2], numbers[4]};
    ck_assert_mem_eq(back_numbers, expected, sizeof expected);
    ck_assert_mem_eq(back, frames + PIXELS, sizeof *frames * 2 * PIXELS);
    ck_assert_mem_eq(back + 2 * PIXELS, frames + 4 * PIXELS,
                     sizeof *frames * PIXELS);
    ck_assert_uint_eq(stats.files_truncated, 1);
    ck_assert_uint_eq(stats.frames_padded, 1);
    ck_assert_ptr_nonnull(strstr(notices, "39 of 40 packets arrived"));
    ck_assert_ptr_nonnull(strstr(notices, "is truncated: it ends 1000 bytes "
                                          "into frame 2 of the file"));
}
END_TEST

Suite *suite_raw_layouts(void)
{
    Suite *suite = suite_create("raw_layouts");
    TCase *layouts = tcase_create("raw_layouts");
    tcase_add_checked_fixture(layouts, setup, teardown);
    tcase_set_timeout(layouts, 120);
    tcase_add_loop_test(layouts, layouts_round_trip, 0, 3);
    tcase_add_test(layouts, layouts_maps_match_aare);
    tcase_add_test(layouts, layouts_names);
    tcase_add_test(layouts, layouts_unknown_refused);
    tcase_add_test(layouts, layouts_older_keys);
    tcase_add_test(layouts, layouts_damage);
    suite_add_tcase(suite, layouts);
    return suite;
}
