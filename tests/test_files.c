/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_files.c: raw runs, .clust files, the spectrum CSV and the hit map
 * .npy: exact round trips, aare's own bytes, and damaged or wrong input
 * reported clearly without losing a complete frame.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/raw.h"
#include "frames.h"
#include "suites.h"

enum { ROWS = 24, COLS = 32, FRAMES = 10, PER_FILE = 4 };

static char directory[] = "/tmp/cc_files_XXXXXX";
static char master[512];
static uint16_t frames[FRAMES * ROWS * COLS];
static uint64_t numbers[FRAMES];

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(directory));
    snprintf(master, sizeof master, "%s/run_master_3.json", directory);
    cc_simulator_config model = test_simulator_config(ROWS, COLS, 4, 5);
    cc_simulator *simulator = test_simulator(&model);
    ck_assert_int_eq(cc_simulator_frames(simulator, 0, FRAMES, frames, NULL),
                     CC_OK);
    cc_simulator_destroy(simulator);
    for (int i = 0; i < FRAMES; i++)
        numbers[i] = 1000 + 7 * (uint64_t)i;
}

static void teardown(void)
{
    test_remove_directory(directory);
}

static char *path_in(const char *name)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    return path;
}

static void write_run(void)
{
    char message[CC_MESSAGE_SIZE];
    cc_raw_writer *writer;
    ck_assert_int_eq(cc_raw_writer_new(&writer, master, ROWS, COLS, PER_FILE,
                                       message),
                     CC_OK);
    ck_assert_int_eq(cc_raw_writer_write(writer, frames, numbers, FRAMES,
                                         message),
                     CC_OK);
    /* Nothing under its final name before finish. */
    ck_assert_int_ne(access(master, F_OK), 0);
    ck_assert_int_ne(access(path_in("run_d0_f0_3.raw"), F_OK), 0);
    ck_assert_int_eq(cc_raw_writer_finish(writer, message), CC_OK);
    cc_raw_writer_destroy(writer);
}

/* Reads the whole run of path, of frames of frame_pixels; returns the
 * frames read and the notices joined. */
static size_t read_run_of(const char *path, size_t frame_pixels, uint16_t *out,
                          uint64_t *out_numbers, char *notices,
                          size_t notices_size, cc_raw_stats *stats)
{
    return test_read_raw_run(path, CC_RAW_CHIP_UNSAID, frame_pixels, out,
                             out_numbers, notices, notices_size, stats, NULL);
}

/* read_run_of() for the ROWS x COLS runs this file writes. */
static size_t read_run(const char *path, uint16_t *out, uint64_t *out_numbers,
                       char *notices, size_t notices_size, cc_raw_stats *stats)
{
    return read_run_of(path, ROWS * COLS, out, out_numbers, notices,
                       notices_size, stats);
}

/* The run at master reads back whole: the frames and numbers written,
 * and no notice. */
static void assert_run_reads_back(void)
{
    static uint16_t back[FRAMES * ROWS * COLS];
    uint64_t back_numbers[FRAMES];
    char notices[2048];
    cc_raw_stats stats;
    ck_assert_uint_eq(read_run(master, back, back_numbers, notices,
                               sizeof notices, &stats),
                      FRAMES);
    ck_assert_mem_eq(back, frames, sizeof frames);
    ck_assert_mem_eq(back_numbers, numbers, sizeof numbers);
    ck_assert_str_eq(notices, "");
}

/* A raw run written and read back gives the same frames and numbers, in
 * three files of up to four frames, with the master's keys. */
START_TEST(raw_round_trip)
{
    write_run();
    ck_assert_int_eq(access(path_in("run_d0_f2_3.raw"), F_OK), 0);
    cc_raw_reader *reader;
    char message[CC_MESSAGE_SIZE];
    ck_assert_int_eq(cc_raw_reader_open(&reader, master, message), CC_OK);
    cc_raw_info info;
    cc_raw_reader_info(reader, &info);
    ck_assert_uint_eq(info.rows, ROWS);
    ck_assert_uint_eq(info.cols, COLS);
    ck_assert_uint_eq(info.frames, FRAMES);
    ck_assert_uint_eq(info.files, 3);
    ck_assert_uint_eq(info.image_bytes, ROWS * COLS * 2);
    cc_raw_reader_close(reader);
    assert_run_reads_back();
}
END_TEST

/* Version 8 keys ("Image Size") read the same run. */
START_TEST(raw_version_8)
{
    write_run();
    test_edit_file(master, "\"Version\": 7.2", "\"Version\": 8.0");
    test_edit_file(master, "\"Image Size in bytes\"", "\"Image Size\"");
    assert_run_reads_back();
    /* The v7 key in a v8 file is not the key: refused by name. */
    test_edit_file(master, "\"Image Size\"", "\"Image Size in bytes\"");
    char message[CC_MESSAGE_SIZE];
    cc_raw_reader *reader;
    ck_assert_int_eq(cc_raw_reader_open(&reader, master, message), CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(message, "\"Image Size\""));
}
END_TEST

/* A missing file, a truncated file and a padded frame are each skipped
 * and said; every complete frame of the rest arrives. */
START_TEST(raw_damage_reported)
{
    write_run();
    /* File 1 (frames 4..7) missing; file 2 (frames 8, 9) cut inside frame
     * 9; frame 1's header says two packets are missing. */
    ck_assert_int_eq(unlink(path_in("run_d0_f1_3.raw")), 0);
    size_t frame_bytes = CC_RAW_HEADER_SIZE + ROWS * COLS * 2;
    ck_assert_int_eq(truncate(path_in("run_d0_f2_3.raw"),
                              (off_t)(frame_bytes + 100)),
                     0);
    FILE *file = fopen(path_in("run_d0_f0_3.raw"), "r+b");
    ck_assert_ptr_nonnull(file);
    uint32_t packets = 0; /* 24 x 32 x 2 bytes fit one 6400-byte packet */
    fseek(file, (long)frame_bytes + 12, SEEK_SET);
    fwrite(&packets, sizeof packets, 1, file);
    fclose(file);
    static uint16_t back[FRAMES * ROWS * COLS];
    uint64_t back_numbers[FRAMES];
    char notices[4096];
    cc_raw_stats stats;
    size_t n = read_run(master, back, back_numbers, notices, sizeof notices,
                        &stats);
    ck_assert_uint_eq(n, 4); /* frames 0, 2, 3 and 8 */
    uint64_t expected[4] = {numbers[0], numbers[2], numbers[3], numbers[8]};
    ck_assert_mem_eq(back_numbers, expected, sizeof expected);
    size_t pixels = ROWS * COLS;
    ck_assert_mem_eq(back + 3 * pixels, frames + 8 * pixels,
                     pixels * sizeof *back);
    ck_assert_uint_eq(stats.files_missing, 1);
    ck_assert_uint_eq(stats.files_truncated, 1);
    ck_assert_uint_eq(stats.frames_padded, 1);
    ck_assert_msg(strstr(notices, "run_d0_f1_3.raw is missing") &&
                      strstr(notices, "run_d0_f2_3.raw is truncated") &&
                      strstr(notices, "is padded") &&
                      strstr(notices, "announces 10 frames"),
                  "notices were:\n%s", notices);
}
END_TEST

/* A run whose master file announces more files than are there reads
 * what is there; ten missing files are named, the rest only counted. */
START_TEST(raw_missing_files_counted)
{
    write_run();
    test_edit_file(master, "\"Frames in File\": 10\n",
                   "\"Frames in File\": 60\n");
    static uint16_t back[FRAMES * ROWS * COLS];
    uint64_t back_numbers[FRAMES];
    static char notices[8192];
    cc_raw_stats stats;
    ck_assert_uint_eq(read_run(master, back, back_numbers, notices,
                               sizeof notices, &stats),
                      FRAMES);
    ck_assert_mem_eq(back, frames, sizeof frames);
    ck_assert_uint_eq(stats.files_missing, 12);
    size_t named = 0;
    for (const char *at = notices; (at = strstr(at, " is missing")); at++)
        named++;
    ck_assert_uint_eq(named, 10);
    ck_assert_ptr_nonnull(strstr(notices, "12 data files were missing in all"));
    ck_assert_ptr_nonnull(strstr(notices, "announces 60 frames"));
}
END_TEST

/* Wrong master files are refused with a message that says what is
 * wrong; a file of another name is not taken for a master. */
START_TEST(raw_bad_masters)
{
    write_run();
    static const struct {
        const char *from, *to, *says;
        int code;
    } cases[] = {
        {"\"Frames in File\": 10\n", "\"Frames in File\": 10,\n",
         "not valid JSON", CC_EFORMAT},
        {"\"Moench\"", "\"Jungfrau\"", "not a MÖNCH run", CC_ENOTSUP},
        {"\"Image Size in bytes\": 1536", "\"Image Size in bytes\": 1600",
         "take 1536", CC_EFORMAT},
        {"\"Max Frames Per File\": 4,", "", "\"Max Frames Per File\"",
         CC_EFORMAT},
        {"\"Version\": 7.2", "\"Version\": 6.1", "version 6.1", CC_ENOTSUP},
        {"\"Geometry\": {\"x\": 1, \"y\": 1}",
         "\"Geometry\": {\"x\": 2, \"y\": 1}", "geometry", CC_ENOTSUP},
        {"\"Number of UDP Interfaces\": 1", "\"Number of UDP Interfaces\": 2",
         "1 x 1 parts with 2 UDP interfaces", CC_ENOTSUP},
        {"\"Number of UDP Interfaces\": 1", "\"Number of UDP Interfaces\": 3",
         "\"Number of UDP Interfaces\" must be", CC_EFORMAT},
        {"\"Frames in File\": 10\n", "\"Frames in File\": 4000001\n",
         "over 1000001 files, more than this reader's 1000000", CC_EFORMAT},
    };
    char original[600];
    snprintf(original, sizeof original, "%s.orig", master);
    char command[1300];
    snprintf(command, sizeof command, "cp '%s' '%s'", master, original);
    ck_assert_int_eq(system(command), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(command, sizeof command, "cp '%s' '%s'", original, master);
        ck_assert_int_eq(system(command), 0);
        test_edit_file(master, cases[i].from, cases[i].to);
        char message[CC_MESSAGE_SIZE] = "";
        cc_raw_reader *reader = (cc_raw_reader *)&reader;
        ck_assert_int_eq(cc_raw_reader_open(&reader, master, message),
                         cases[i].code);
        ck_assert_ptr_null(reader);
        ck_assert_msg(strstr(message, cases[i].says) != NULL,
                      "case %zu: '%s' lacks '%s'", i, message, cases[i].says);
    }
    char message[CC_MESSAGE_SIZE];
    cc_raw_reader *reader;
    ck_assert_int_eq(cc_raw_reader_open(&reader, path_in("run_d0_f0_3.raw"),
                                        message),
                     CC_EINVAL);
    ck_assert_int_eq(cc_raw_reader_open(&reader, path_in("none_master_0.json"),
                                        message),
                     CC_EIO);
}
END_TEST

/* Master files are taken only as exactly one RFC 8259 object without
 * duplicate keys: anything else is refused with the file, the line and
 * what is wrong, and a valid file with unusual but legal JSON still reads. */
START_TEST(raw_master_json_is_strict)
{
    write_run();
    static char text[8192];
    FILE *file = fopen(master, "rb");
    ck_assert_ptr_nonnull(file);
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    ck_assert_ptr_nonnull(strstr(text, "\"Frames in File\": 10\n}"));
    const char *end = strrchr(text, '}');
    int head = (int)(end - text); /* the text before the final brace */
    static const struct {
        const char *insert; /* put before the final brace */
        const char *says;
    } bad[] = {
        {",", "line"},
        {", \"Frames in File\": 4", "duplicate object key"},
        {", \"Note\": 01", "line"},
        {", \"Note\": 1.", "line"},
        {", \"Note\": +1", "line"},
        {", \"Note\": \"\\x\"", "line"},
        {", \"Note\": \"\\udc00\"", "line"},
        {", \"Note\": \"\t\"", "line"},
        {", \"Note\": \"\xc3\"", "line"},
        {", Note: 1", "line"},
        {", \"Note\": [1 2]", "line"},
        {", \"Note\": nul", "line"},
        {", \"Note\": \"open", "line"},
    };
    char variant[sizeof text + 64];
    cc_raw_info info;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int n = snprintf(variant, sizeof variant, "%.*s%s\n}", head, text,
                         bad[i].insert);
        char message[CC_MESSAGE_SIZE] = "";
        ck_assert_int_eq(cc__raw_master_parse(variant, (size_t)n, master,
                                              CC_RAW_CHIP_UNSAID, &info,
                                              message),
                         CC_EFORMAT);
        ck_assert_msg(strstr(message, master) && strstr(message, bad[i].says),
                      "case %zu: '%s' lacks the file or '%s'", i, message,
                      bad[i].says);
    }
    /* Cut anywhere, with a second value after it, with a NUL inside, or
     * nested deeper than any parser's stack should go. */
    char message[CC_MESSAGE_SIZE];
    for (size_t cut = 0; cut < length - 1; cut += 7)
        ck_assert_int_eq(cc__raw_master_parse(text, cut, master,
                                              CC_RAW_CHIP_UNSAID, &info,
                                              message),
                         CC_EFORMAT);
    int n = snprintf(variant, sizeof variant, "%s {}", text);
    ck_assert_int_eq(cc__raw_master_parse(variant, (size_t)n, master,
                                          CC_RAW_CHIP_UNSAID, &info, message),
                     CC_EFORMAT);
    memcpy(variant, text, length);
    variant[10] = '\0';
    ck_assert_int_eq(cc__raw_master_parse(variant, length, master,
                                          CC_RAW_CHIP_UNSAID, &info, message),
                     CC_EFORMAT);
    n = snprintf(variant, sizeof variant, "%.*s, \"Note\": ", head, text);
    for (int depth = 0; depth < 3000; depth++)
        variant[n++] = '[';
    ck_assert_int_eq(cc__raw_master_parse(variant, (size_t)n, master,
                                          CC_RAW_CHIP_UNSAID, &info, message),
                     CC_EFORMAT);
    ck_assert_int_eq(cc__raw_master_parse("[]", 2, master, CC_RAW_CHIP_UNSAID,
                                          &info, message),
                     CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(message, "not a JSON object"));
    /* Legal JSON the writer never writes. */
    n = snprintf(variant, sizeof variant,
                 "%.*s,\r\n\t\"Note\": [\"\\u00d6\\n\\ud83d\\ude00\", -1.5e+3, "
                 "{\"a\": null}, true, false]}\n",
                 head, text);
    ck_assert_int_eq(cc__raw_master_parse(variant, (size_t)n, master,
                                          CC_RAW_CHIP_UNSAID, &info, message),
                     CC_OK);
    ck_assert_uint_eq(info.frames, FRAMES);
    ck_assert_uint_eq(info.rows, ROWS);
    ck_assert_uint_eq(info.cols, COLS);
}
END_TEST

static long file_size(const char *path)
{
    struct stat status;
    return stat(path, &status) == 0 ? (long)status.st_size : -1;
}

/* A run that PSI's slsReceiver 9.2.0 wrote (version 7.2 master file) of
 * the virtual MÖNCH server, read as it is: 5 complete frames, numbered
 * from 1, of the server's fixed pattern (pixel = row / 8 + 1). */
START_TEST(raw_real_receiver_run)
{
    const char *receiver_master = TEST_DATA_DIR
        "/slsreceiver-9.2.0/moench_virtual_master_0.json";
    char message[CC_MESSAGE_SIZE];
    cc_raw_reader *reader;
    ck_assert_msg(cc_raw_reader_open(&reader, receiver_master, message) ==
                      CC_OK,
                  "%s", message);
    cc_raw_info info;
    ck_assert_int_eq(cc_raw_reader_info(reader, &info), CC_OK);
    ck_assert_uint_eq(info.rows, 400);
    ck_assert_uint_eq(info.cols, 400);
    ck_assert_uint_eq(info.frames, 5);
    ck_assert_uint_eq(info.files, 1);
    enum { PIXELS = 400 * 400 };
    uint16_t *pixels = malloc(6 * PIXELS * sizeof *pixels);
    ck_assert_ptr_nonnull(pixels);
    uint64_t read_numbers[6];
    size_t n;
    ck_assert_int_eq(cc_raw_reader_read(reader, pixels, read_numbers, 6, &n,
                                        message),
                     CC_OK);
    ck_assert_uint_eq(n, 5);
    for (size_t k = 0; k < n; k++) {
        ck_assert_uint_eq(read_numbers[k], k + 1);
        for (size_t p = 0; p < PIXELS; p++)
            ck_assert_uint_eq(pixels[k * PIXELS + p], p / 400 / 8 + 1);
    }
    ck_assert_ptr_null(cc_raw_reader_notice(reader));
    ck_assert_int_eq(cc_raw_reader_read(reader, pixels, read_numbers, 6, &n,
                                        message),
                     CC_OK);
    ck_assert_uint_eq(n, 0);
    cc_raw_stats stats;
    ck_assert_int_eq(cc_raw_reader_stats(reader, &stats), CC_OK);
    ck_assert_uint_eq(stats.frames_read, 5);
    ck_assert_uint_eq(stats.frames_padded + stats.files_missing +
                          stats.files_truncated,
                      0);
    cc_raw_reader_close(reader);
    free(pixels);
}
END_TEST

/* A run the real slsReceiver 9.2.0 wrote with two UDP interfaces (one
 * file a half, d0 the top 200 rows, d1 the bottom ones) reads as whole
 * frames; a half cut short, padded or missing costs exactly the frames it
 * holds, and is counted against its interface. */
START_TEST(raw_two_interfaces)
{
    enum { PIXELS = 400 * 400, HALF = 112 + 200 * 400 * 2 };
    static uint16_t pixels[6 * PIXELS];
    uint64_t read_numbers[6];
    char notices[4096];
    cc_raw_stats stats;
    const char *source = TEST_DATA_DIR "/slsreceiver-9.2.0-2udp";
    size_t n = read_run_of(TEST_DATA_DIR
                           "/slsreceiver-9.2.0-2udp/moench_2udp_master_0.json",
                           PIXELS, pixels, read_numbers, notices,
                           sizeof notices, &stats);
    ck_assert_msg(n == 5 && notices[0] == '\0', "%zu frames; %s", n, notices);
    for (size_t k = 0; k < n; k++) {
        ck_assert_uint_eq(read_numbers[k], k + 1);
        for (size_t p = 0; p < PIXELS; p++)
            ck_assert_uint_eq(pixels[k * PIXELS + p], p / 400 / 8 + 1);
    }
    cc_raw_reader *reader;
    char message[CC_MESSAGE_SIZE];
    ck_assert_int_eq(cc_raw_reader_open(&reader,
                                        TEST_DATA_DIR
                                        "/slsreceiver-9.2.0-2udp/"
                                        "moench_2udp_master_0.json",
                                        message),
                     CC_OK);
    cc_raw_info info;
    cc_raw_reader_info(reader, &info);
    ck_assert_uint_eq(info.interfaces, 2);
    ck_assert_uint_eq(info.rows, 400);
    cc_raw_reader_close(reader);

    /* A copy: d1 cut inside its last frame, frame 2's bottom half padded. */
    char command[1400];
    snprintf(command, sizeof command, "cp '%s'/moench_2udp_* '%s'", source,
             directory);
    ck_assert_int_eq(system(command), 0);
    ck_assert_int_eq(truncate(path_in("moench_2udp_d1_f0_0.raw"),
                              (off_t)(4 * HALF + 100)),
                     0);
    FILE *file = fopen(path_in("moench_2udp_d1_f0_0.raw"), "r+b");
    ck_assert_ptr_nonnull(file);
    uint32_t packets = 20; /* of 25 */
    fseek(file, (long)HALF + 12, SEEK_SET);
    fwrite(&packets, sizeof packets, 1, file);
    fclose(file);
    n = read_run_of(path_in("moench_2udp_master_0.json"), PIXELS, pixels,
                    read_numbers, notices, sizeof notices, &stats);
    ck_assert_uint_eq(n, 3); /* frames 1, 3 and 4 */
    ck_assert_uint_eq(read_numbers[1], 3);
    ck_assert_uint_eq(stats.files_truncated, 1);
    ck_assert_uint_eq(stats.frames_padded, 1);
    ck_assert_uint_eq(stats.padded_by_interface[0], 0);
    ck_assert_uint_eq(stats.padded_by_interface[1], 1);
    ck_assert_msg(strstr(notices, "moench_2udp_d1_f0_0.raw is truncated") &&
                      strstr(notices, "the halves beyond the shorter") &&
                      strstr(notices, "frame 2 in") &&
                      strstr(notices, "padded"),
                  "notices were:\n%s", notices);
    /* Without d1, no frame has its bottom half. */
    ck_assert_int_eq(unlink(path_in("moench_2udp_d1_f0_0.raw")), 0);
    n = read_run_of(path_in("moench_2udp_master_0.json"), PIXELS, pixels,
                    read_numbers, notices, sizeof notices, &stats);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(stats.files_missing, 1);
    ck_assert_msg(strstr(notices, "d1_f0_0.raw is missing") &&
                      strstr(notices, "other interface's halves"),
                  "notices were:\n%s", notices);
}
END_TEST

/* aare's own .clust file reads as docs/spec.md describes it and writes back
 * byte-identical. */
START_TEST(clust_fixture_round_trip)
{
    const char *fixture = TEST_DATA_DIR "/aare_single_frame_97.clust";
    char message[CC_MESSAGE_SIZE];
    cc_clust_reader *reader;
    ck_assert_msg(cc_clust_reader_open(&reader, fixture, 3, 3, message) ==
                      CC_OK,
                  "%s", message);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_clust_reader_read(reader, 10, clusters, message),
                     CC_OK);
    ck_assert_uint_eq(cc_clusters_frame_count(clusters), 1);
    cc_frame_clusters frame;
    cc_clusters_frame(clusters, 0, &frame);
    ck_assert_uint_eq(frame.frame_number, 135);
    ck_assert_uint_eq(frame.count, 97);
    ck_assert_uint_eq(frame.x[0], 1);
    ck_assert_uint_eq(frame.y[0], 200);
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(frame.values[i], i);
    const char *copy = path_in("copy.clust");
    cc_clust_writer *writer;
    ck_assert_int_eq(cc_clust_writer_new(&writer, copy, message), CC_OK);
    ck_assert_int_eq(cc_clust_writer_write(writer, clusters, message), CC_OK);
    ck_assert_int_eq(cc_clust_writer_finish(writer, message), CC_OK);
    cc_clust_writer_destroy(writer);
    char command[1200];
    snprintf(command, sizeof command, "cmp -s '%s' '%s'", fixture, copy);
    ck_assert_msg(system(command) == 0, "%s differs from aare's file", copy);
    /* Read again: the end of the file gives no frames. */
    ck_assert_int_eq(cc_clust_reader_read(reader, 10, clusters, message),
                     CC_OK);
    ck_assert_uint_eq(cc_clusters_frame_count(clusters), 0);
    cc_clust_reader_close(reader);
    /* Read as 9x9, the same bytes cannot be whole frames: refused. */
    ck_assert_int_eq(cc_clust_reader_open(&reader, fixture, 9, 9, message),
                     CC_OK);
    ck_assert_int_eq(cc_clust_reader_read(reader, 10, clusters, message),
                     CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(message, "truncated"));
    cc_clust_reader_close(reader);
    cc_clusters_destroy(clusters);
}
END_TEST

/* The clusters of size x size a finder trained on 2 simulated dark frames
 * finds in the fixture's frames: some. */
static cc_clusters *simulated_clusters(uint32_t size)
{
    cc_config config = test_config(ROWS, COLS);
    config.cluster_size_x = config.cluster_size_y = size;
    config.pedestal_frames = 2;
    cc_finder *finder = test_finder(&config);
    cc_simulator_config model = test_simulator_config(ROWS, COLS, 4, 0);
    cc_simulator *simulator = test_simulator(&model);
    uint16_t dark[2 * ROWS * COLS];
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, 2, dark), CC_OK);
    ck_assert_int_eq(cc_finder_train(finder, dark, 2), CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_finder_process(finder, frames, numbers, FRAMES,
                                       clusters),
                     CC_OK);
    ck_assert_uint_gt(cc_clusters_total(clusters), 0);
    cc_simulator_destroy(simulator);
    cc_finder_destroy(finder);
    return clusters;
}

/* Both lists hold the same frames: numbers, and clusters to the value. */
static void assert_same_frames(const cc_clusters *a_list,
                               const cc_clusters *b_list)
{
    ck_assert_uint_eq(cc_clusters_frame_count(b_list),
                      cc_clusters_frame_count(a_list));
    for (size_t i = 0; i < cc_clusters_frame_count(a_list); i++) {
        cc_frame_clusters a, b;
        cc_clusters_frame(a_list, i, &a);
        cc_clusters_frame(b_list, i, &b);
        size_t cells = (size_t)a.size_x * a.size_y;
        ck_assert_uint_eq(a.frame_number, b.frame_number);
        ck_assert_uint_eq(a.count, b.count);
        ck_assert_uint_eq(b.size_x * b.size_y, cells);
        ck_assert_mem_eq(a.x, b.x, a.count * sizeof *a.x);
        ck_assert_mem_eq(a.y, b.y, a.count * sizeof *a.y);
        ck_assert_mem_eq(a.values, b.values,
                         a.count * cells * sizeof *a.values);
    }
}

/* A list made frame by frame from a finder's views is that list again,
 * dropped counts included; a frame of another size, a bad size or missing
 * arrays are refused with the list unchanged. */
START_TEST(clusters_appended_from_views)
{
    cc_clusters *found = simulated_clusters(3), *made;
    ck_assert_int_eq(cc_clusters_new(&made), CC_OK);
    char message[CC_MESSAGE_SIZE];
    for (size_t i = 0; i < FRAMES; i++) {
        cc_frame_clusters view;
        cc_clusters_frame(found, i, &view);
        view.dropped = (uint32_t)i; /* carried as given */
        ck_assert_int_eq(cc_clusters_append_frame(made, &view, message), CC_OK);
    }
    assert_same_frames(found, made);
    for (size_t i = 0; i < FRAMES; i++) {
        cc_frame_clusters b;
        cc_clusters_frame(made, i, &b);
        ck_assert_uint_eq(b.dropped, i);
    }
    cc_frame_clusters bad;
    cc_clusters_frame(found, 0, &bad);
    bad.size_x = 5;
    ck_assert_int_eq(cc_clusters_append_frame(made, &bad, message), CC_EINVAL);
    ck_assert_str_eq(message,
                     "the frame's clusters are 5 x 3, the list's 3 x 3");
    bad.size_x = 4;
    ck_assert_int_eq(cc_clusters_append_frame(made, &bad, message), CC_EINVAL);
    ck_assert_str_eq(message, "cluster size 4 x 3 must be odd and 3..9 a side");
    bad.size_x = 3;
    bad.count = 2;
    bad.values = NULL;
    ck_assert_int_eq(cc_clusters_append_frame(made, &bad, message), CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(message, "no arrays"));
    ck_assert_int_eq(cc_clusters_append_frame(NULL, &bad, message), CC_EINVAL);
    ck_assert_uint_eq(cc_clusters_frame_count(made), FRAMES);
    ck_assert_uint_eq(cc_clusters_total(made), cc_clusters_total(found));
    /* An empty frame needs no arrays; an empty list takes any size. */
    cc_frame_clusters empty = {.frame_number = 99, .size_x = 5, .size_y = 7};
    cc_clusters *fresh;
    ck_assert_int_eq(cc_clusters_new(&fresh), CC_OK);
    ck_assert_int_eq(cc_clusters_append_frame(fresh, &empty, message), CC_OK);
    cc_frame_clusters back;
    ck_assert_int_eq(cc_clusters_frame(fresh, 0, &back), CC_OK);
    ck_assert_uint_eq(back.frame_number, 99);
    ck_assert_uint_eq(back.count, 0);
    ck_assert_uint_eq(back.size_y, 7);
    cc_clusters_destroy(fresh);
    cc_clusters_destroy(made);
    cc_clusters_destroy(found);
}
END_TEST

/* 9x9 clusters of simulated frames round-trip, empty frames included;
 * a writer destroyed before finish leaves nothing; an unwritable path is
 * refused at once. */
START_TEST(clust_round_trip_9x9)
{
    cc_clusters *clusters = simulated_clusters(9), *back;
    ck_assert_int_eq(cc_clusters_new(&back), CC_OK);
    char message[CC_MESSAGE_SIZE];
    const char *path = path_in("run.clust");
    cc_clust_writer *writer;
    ck_assert_int_eq(cc_clust_writer_new(&writer, path, message), CC_OK);
    ck_assert_int_eq(cc_clust_writer_write(writer, clusters, message), CC_OK);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(cc_clust_writer_finish(writer, message), CC_OK);
    cc_clust_writer_destroy(writer);
    ck_assert_int_eq(file_size(path),
                     FRAMES * 8 + (long)cc_clusters_total(clusters) * 328);
    cc_clust_reader *reader;
    ck_assert_int_eq(cc_clust_reader_open(&reader, path, 9, 9, message), CC_OK);
    ck_assert_int_eq(cc_clust_reader_read(reader, 100, back, message), CC_OK);
    cc_clust_reader_close(reader);
    ck_assert_uint_eq(cc_clusters_frame_count(back), FRAMES);
    assert_same_frames(clusters, back);
    const char *abandoned = path_in("abandoned.clust");
    ck_assert_int_eq(cc_clust_writer_new(&writer, abandoned, message), CC_OK);
    ck_assert_int_eq(cc_clust_writer_write(writer, clusters, message), CC_OK);
    cc_clust_writer_destroy(writer);
    char command[700];
    snprintf(command, sizeof command, "test $(ls '%s' | wc -l) -eq 1",
             directory);
    ck_assert_msg(system(command) == 0, "a temporary file was left behind");
    ck_assert_int_eq(cc_clust_writer_new(&writer, "/nonexistent/x.clust",
                                         message),
                     CC_EIO);
    ck_assert_ptr_nonnull(strstr(message, "/nonexistent/x.clust"));
    cc_clusters_destroy(clusters);
    cc_clusters_destroy(back);
}
END_TEST

/* The analog image as a .npy of float64: a write that fails keeps the
 * sums for the next; one that succeeds takes them. */
START_TEST(analog_image_file)
{
    cc_config config = test_config(8, 8);
    config.pedestal_frames = 2;
    config.precision = CC_PRECISION_DOUBLE;
    uint16_t dark[2][64], frame[64];
    for (int p = 0; p < 64; p++) {
        dark[0][p] = 99;
        dark[1][p] = 101;
        frame[p] = 101;
    }
    frame[9] = 200;
    cc_finder *finder = test_finder(&config);
    ck_assert_int_eq(cc_finder_train(finder, dark[0], 2), CC_OK);
    char message[CC_MESSAGE_SIZE];
    uint64_t summed = 7;
    ck_assert_int_eq(cc_finder_write_analog(finder, path_in("off.npy"), &summed,
                                            message),
                     CC_ESTATE);
    ck_assert_int_eq(cc_finder_set_analog(finder, 1), CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_finder_process(finder, frame, NULL, 1, clusters),
                     CC_OK);
    ck_assert_int_eq(cc_finder_write_analog(finder, "/nonexistent/a.npy",
                                            &summed, message),
                     CC_EIO);
    ck_assert_uint_eq(summed, 7);
    const char *path = path_in("analog.npy");
    ck_assert_int_eq(cc_finder_write_analog(finder, path, &summed, message),
                     CC_OK);
    ck_assert_uint_eq(summed, 1);
    size_t size;
    unsigned char *file = test_read_file(path, &size);
    ck_assert_uint_eq(size, 128 + 64 * sizeof(double));
    ck_assert_ptr_nonnull(strstr((const char *)file + 10, "'descr': '<f8'"));
    double sums[64];
    memcpy(sums, file + 128, sizeof sums);
    ck_assert(sums[0] == 1.0 && sums[9] == 100.0);
    free(file);
    /* Taken: the next write holds nothing. */
    ck_assert_int_eq(cc_finder_write_analog(finder, path, &summed, message),
                     CC_OK);
    ck_assert_uint_eq(summed, 0);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
}
END_TEST

/* The spectrum CSV has its header, one line per bin with exact edges, and
 * the under- and overflow; the hit map .npy has NumPy's header and the
 * counts. (tests/hitmap_numpy.sh opens one with NumPy itself.) */
START_TEST(spectrum_and_hitmap_files)
{
    cc_spectrum *spectrum;
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 4, 0, 100),
                     CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    cc__clusters_clear(clusters, 3, 3);
    ck_assert_int_eq(cc__clusters_begin_frame(clusters, 0), CC_OK);
    const int sums[] = {-5, 30, 30, 99, 100, 250};
    for (int i = 0; i < 6; i++) {
        int32_t *values;
        ck_assert_int_eq(cc__clusters_push(clusters, 0, (uint16_t)i, 1,
                                           &values),
                         CC_OK);
        memset(values, 0, 9 * sizeof *values);
        values[4] = sums[i];
    }
    ck_assert_int_eq(cc_spectrum_add(spectrum, clusters), CC_OK);
    char message[CC_MESSAGE_SIZE];
    const char *csv = path_in("spectrum.csv");
    ck_assert_int_eq(cc_spectrum_write_csv(spectrum, NULL, csv, message),
                     CC_OK);
    char text[512] = "";
    FILE *file = fopen(csv, "rb");
    ck_assert_ptr_nonnull(file);
    text[fread(text, 1, sizeof text - 1, file)] = '\0';
    fclose(file);
    ck_assert_str_eq(text, "low,high,count\n0,25,0\n25,50,2\n50,75,0\n"
                           "75,100,1\n-inf,0,1\n100,inf,2\n");
    cc_hitmap *hitmap;
    ck_assert_int_eq(cc_hitmap_new(&hitmap, 3, 7), CC_OK);
    ck_assert_int_eq(cc_hitmap_add(hitmap, clusters), CC_OK);
    const char *npy = path_in("hitmap.npy");
    ck_assert_int_eq(cc_hitmap_write_npy(hitmap, npy, message), CC_OK);
    unsigned char bytes[256];
    file = fopen(npy, "rb");
    ck_assert_ptr_nonnull(file);
    size_t length = fread(bytes, 1, sizeof bytes, file);
    fclose(file);
    ck_assert_mem_eq(bytes, "\x93NUMPY\x01\x00", 8);
    size_t data = 10 + bytes[8] + 256u * bytes[9]; /* where the data start */
    ck_assert_uint_eq(data % 64, 0);
    ck_assert_uint_eq(length, data + 3 * 7 * 4);
    ck_assert_uint_eq(bytes[data - 1], '\n');
    bytes[data - 1] = '\0';
    ck_assert_ptr_nonnull(strstr((const char *)bytes + 10,
                                 "{'descr': '<u4', 'fortran_order': False, "
                                 "'shape': (3, 7), }"));
    uint32_t counts[21];
    memcpy(counts, bytes + data, sizeof counts);
    ck_assert_mem_eq(counts, cc_hitmap_counts(hitmap), sizeof counts);
    ck_assert_uint_eq(counts[7 + 2], 1); /* the centre (2, 1) */
    ck_assert_int_eq(cc_hitmap_write_npy(hitmap, "/nonexistent/h.npy", message),
                     CC_EIO);
    cc_hitmap_destroy(hitmap);
    cc_spectrum_destroy(spectrum);
    cc_clusters_destroy(clusters);
}
END_TEST

Suite *suite_files(void)
{
    Suite *suite = suite_create("files");
    TCase *files = tcase_create("files");
    tcase_add_checked_fixture(files, setup, teardown);
    tcase_set_timeout(files, 60);
    tcase_add_test(files, raw_round_trip);
    tcase_add_test(files, raw_version_8);
    tcase_add_test(files, raw_damage_reported);
    tcase_add_test(files, raw_bad_masters);
    tcase_add_test(files, raw_missing_files_counted);
    tcase_add_test(files, raw_real_receiver_run);
    tcase_add_test(files, raw_two_interfaces);
    tcase_add_test(files, raw_master_json_is_strict);
    tcase_add_test(files, clust_fixture_round_trip);
    tcase_add_test(files, clust_round_trip_9x9);
    tcase_add_test(files, clusters_appended_from_views);
    tcase_add_test(files, analog_image_file);
    tcase_add_test(files, spectrum_and_hitmap_files);
    suite_add_tcase(suite, files);
    return suite;
}
