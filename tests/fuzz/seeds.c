/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seeds.c: `seeds DIRECTORY` writes a seed corpus for every fuzz target
 * into DIRECTORY/TARGET/, from the library's own writers on a small
 * simulated detector (8 x 16 pixels): a raw run, pedestal files of both
 * precisions, η calibrations, masks, gain maps and a .clust file, each also cut in
 * half and short of its last byte. The committed corpus (tests/fuzz/corpus)
 * began as this; the corpus test replays a fresh one, so the readers are
 * fuzz-checked against what the current writers write.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clustercore.h"
#include "files/files.h"
#include "targets.h"

#ifdef CC_HAVE_TIFF /* config.h, through the core's headers, says */
#include <tiffio.h>
#endif

enum { dark_frames = 20, light_frames = 6, per_file = 4 };
enum { pixels = FUZZ_ROWS * FUZZ_COLS };

static const char *top;

static void die(const char *what, int rc, const char *message)
{
    fprintf(stderr, "seeds: %s: %s%s%s\n", what, cc_strerror(rc),
            message && message[0] ? ": " : "", message ? message : "");
    exit(1);
}

static void check(const char *what, int rc, const char *message)
{
    if (rc != CC_OK)
        die(what, rc, message);
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        die(path, CC_EIO, "cannot open");
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    rewind(file);
    unsigned char *data = malloc(length > 0 ? (size_t)length : 1);
    if (data == NULL || fread(data, 1, (size_t)length, file) != (size_t)length)
        die(path, CC_EIO, "cannot read");
    fclose(file);
    *size = (size_t)length;
    return data;
}

static void write_one(const char *target, const char *name,
                      const unsigned char *data, size_t size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", top, target);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/%s/%s", top, target, name);
    FILE *file = fopen(path, "wb");
    if (file == NULL || fwrite(data, 1, size, file) != size || fclose(file))
        die(path, CC_EIO, "cannot write");
}

/* The seed, half of it, and all but its last byte. */
static void seed(const char *target, const char *name,
                 const unsigned char *data, size_t size)
{
    char cut[256];
    write_one(target, name, data, size);
    snprintf(cut, sizeof cut, "%s.half", name);
    write_one(target, cut, data, size / 2);
    snprintf(cut, sizeof cut, "%s.short", name);
    write_one(target, cut, data, size - (size > 0));
}

/* A seed of a file that a writer made at path, with prefix bytes first. */
static void seed_file(const char *target, const char *name, const char *path,
                      const unsigned char *prefix, size_t prefix_size)
{
    size_t size;
    unsigned char *file = slurp(path, &size);
    unsigned char *data = malloc(prefix_size + size + 1);
    if (data == NULL)
        die(name, CC_ENOMEM, "");
    if (prefix_size > 0) /* memcpy from NULL is undefined, even of 0 bytes */
        memcpy(data, prefix, prefix_size);
    memcpy(data + prefix_size, file, size);
    seed(target, name, data, prefix_size + size);
    free(data);
    free(file);
}

#ifdef CC_HAVE_TIFF
/* A gain map as slsDetectorCalibration writes one: a 32-bit float TIFF,
 * width the columns, two rows a strip. */
static void write_gain_tiff(const char *path, const float *gain)
{
    TIFF *tiff = TIFFOpen(path, "w");
    if (tiff == NULL)
        die("gain tiff", CC_EIO, path);
    TIFFSetField(tiff, TIFFTAG_IMAGEWIDTH, (uint32_t)FUZZ_COLS);
    TIFFSetField(tiff, TIFFTAG_IMAGELENGTH, (uint32_t)FUZZ_ROWS);
    TIFFSetField(tiff, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(tiff, TIFFTAG_BITSPERSAMPLE, 32);
    TIFFSetField(tiff, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
    TIFFSetField(tiff, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tiff, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tiff, TIFFTAG_ROWSPERSTRIP, 2);
    for (uint32_t row = 0; row < FUZZ_ROWS; row++)
        if (TIFFWriteScanline(tiff, (void *)(gain + row * FUZZ_COLS), row, 0) !=
            1)
            die("gain tiff", CC_EIO, path);
    TIFFClose(tiff);
}
#endif

/* A run of two 400 x 400 frames in each ADC-order layout: its master for
 * raw_master; for raw_run, the master with one frame and a half in d0 (a
 * truncated file). The chip test board's master is padded with a space to
 * an even length, for which raw_run names MÖNCH03, and to an odd one, for
 * MÖNCH04. */
static void seed_raw_layouts(const char *work)
{
    static const cc_raw_layout layouts[] = {CC_RAW_LAYOUT_MOENCH03_OLD,
                                            CC_RAW_LAYOUT_CTB_MOENCH03};
    enum { side = 400, frame_values = side * side };
    uint16_t *frames = calloc(2 * (size_t)frame_values, sizeof *frames);
    if (frames == NULL)
        die("raw layouts", CC_ENOMEM, "");
    for (size_t k = 0; k < 2 * (size_t)frame_values; k++)
        frames[k] = (uint16_t)(k * 2654435761u >> 18);
    for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
        char master[1100], data_file[1100], message[CC_MESSAGE_SIZE];
        snprintf(master, sizeof master, "%s/layout_master_0.json", work);
        cc_raw_writer *writer;
        check("raw writer",
              cc_raw_writer_new_layout(&writer, master, side, side, per_file,
                                       layouts[l], message),
              message);
        check("raw writer",
              cc_raw_writer_write(writer, frames, NULL, 2, message), message);
        check("raw writer", cc_raw_writer_finish(writer, message), message);
        cc_raw_writer_destroy(writer);
        const char *name = cc_raw_layout_name(layouts[l]);
        seed_file("raw_master", name, master, NULL, 0);
        size_t master_size, data_size;
        unsigned char *text = slurp(master, &master_size);
        snprintf(data_file, sizeof data_file, "%s/layout_d0_f0_0.raw", work);
        unsigned char *frames_file = slurp(data_file, &data_size);
        size_t cut = CC_RAW_HEADER_SIZE + frame_values * 2;
        cut += cut / 2;
        for (size_t odd = 0; odd < 2; odd++) {
            size_t length = master_size + (master_size % 2 != odd);
            unsigned char *run = calloc(2 + length + 2 * cut, 1);
            if (run == NULL)
                die("raw_run", CC_ENOMEM, "");
            run[0] = (unsigned char)length;
            run[1] = (unsigned char)(length >> 8);
            memcpy(run + 2, text, master_size);
            memset(run + 2 + master_size, ' ', length - master_size);
            /* d0 is the data's first half: the frame and a half; d1, of
             * zeros, is not read with one interface. */
            memcpy(run + 2 + length, frames_file, cut);
            char seed_name[64];
            snprintf(seed_name, sizeof seed_name, "%s%s", name,
                     odd ? "-odd" : "");
            seed("raw_run", seed_name, run, 2 + length + 2 * cut);
            free(run);
            if (layouts[l] == CC_RAW_LAYOUT_MOENCH03_OLD)
                break; /* the chip is named for chip test board runs only */
        }
        free(frames_file);
        free(text);
    }
    free(frames);
}

static void seed_raw(const char *work, const uint16_t *frames,
                     const uint64_t *numbers)
{
    char master[1100], data_file[1100], message[CC_MESSAGE_SIZE];
    snprintf(master, sizeof master, "%s/run_master_0.json", work);
    cc_raw_writer *writer;
    check("raw writer",
          cc_raw_writer_new(&writer, master, FUZZ_ROWS, FUZZ_COLS, per_file,
                            message),
          message);
    check("raw writer",
          cc_raw_writer_write(writer, frames, numbers, light_frames, message),
          message);
    check("raw writer", cc_raw_writer_finish(writer, message), message);
    cc_raw_writer_destroy(writer);
    seed_file("raw_master", "simulated", master, NULL, 0);
    /* raw_run: the length, the master, then d0_f0 as both halves. */
    size_t master_size, data_size;
    unsigned char *text = slurp(master, &master_size);
    snprintf(data_file, sizeof data_file, "%s/run_d0_f0_0.raw", work);
    unsigned char *frames_file = slurp(data_file, &data_size);
    size_t size = 2 + master_size + 2 * data_size;
    unsigned char *run = malloc(size);
    if (run == NULL)
        die("raw_run", CC_ENOMEM, "");
    run[0] = (unsigned char)master_size;
    run[1] = (unsigned char)(master_size >> 8);
    memcpy(run + 2, text, master_size);
    memcpy(run + 2 + master_size, frames_file, data_size);
    memcpy(run + 2 + master_size + data_size, frames_file, data_size);
    seed("raw_run", "simulated", run, size);
    free(run);
    free(frames_file);
    free(text);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: seeds DIRECTORY\n");
        return 2;
    }
    top = argv[1];
    mkdir(top, 0777);
    char work[1024], path[1100], message[CC_MESSAGE_SIZE];
    snprintf(work, sizeof work, "%s/.work", top);
    mkdir(work, 0777);

    cc_simulator_config model;
    cc_simulator_config_init(&model);
    model.rows = FUZZ_ROWS;
    model.cols = FUZZ_COLS;
    model.seed = 3;
    model.flux = 4;
    cc_simulator *simulator;
    check("simulator", cc_simulator_new(&simulator, &model, message), message);
    static uint16_t dark[dark_frames * pixels], light[light_frames * pixels];
    uint64_t numbers[light_frames];
    for (int i = 0; i < light_frames; i++)
        numbers[i] = 100 + (uint64_t)i;
    check("dark frames",
          cc_simulator_dark_frames(simulator, 0, dark_frames, dark), NULL);
    check("frames",
          cc_simulator_frames(simulator, 0, light_frames, light, NULL), NULL);
    cc_simulator_destroy(simulator);
    seed_raw(work, light, numbers);
    seed_raw_layouts(work);

    cc_clusters *clusters;
    check("clusters", cc_clusters_new(&clusters), NULL);
    for (int precision = 0; precision < 2; precision++) {
        cc_config config;
        cc_config_init(&config);
        config.rows = FUZZ_ROWS;
        config.cols = FUZZ_COLS;
        config.backend = CC_BACKEND_CPU;
        config.precision = (cc_precision)precision;
        config.pedestal_frames = dark_frames;
        cc_finder *finder;
        check("finder", cc_finder_new(&finder, &config, message), message);
        check("train", cc_finder_train(finder, dark, dark_frames),
              cc_finder_last_error(finder));
        snprintf(path, sizeof path, "%s/pedestal", work);
        check("save pedestal", cc_finder_save_pedestal(finder, path),
              cc_finder_last_error(finder));
        seed_file("pedestal_file", precision ? "double" : "float", path, NULL,
                  0);
        check("process",
              cc_finder_process(finder, light, numbers, light_frames, clusters),
              cc_finder_last_error(finder));
        cc_finder_destroy(finder);
    }
    if (cc_clusters_total(clusters) == 0)
        die("process", CC_EINVAL, "the simulated frames hold no clusters");

    static const struct {
        cc_eta_function function;
        const char *name;
    } functions[] = {{CC_ETA2, "eta2"}, {CC_ETA3, "eta3"}};
    for (size_t i = 0; i < 2; i++) {
        cc_eta_calibration *calibration;
        check("calibration",
              cc_eta_calibration_new(&calibration, functions[i].function, 10,
                                     NULL, message),
              message);
        check("calibration", cc_eta_calibration_add(calibration, clusters),
              NULL);
        snprintf(path, sizeof path, "%s/calibration.eta", work);
        check("save calibration",
              cc_eta_calibration_save(calibration, path, message), message);
        seed_file("eta_file", functions[i].name, path, NULL, 0);
        cc_eta_calibration_destroy(calibration);
    }

    uint8_t mask[pixels] = {0};
    mask[3] = mask[40] = mask[127] = 1;
    const uint64_t shape[2] = {FUZZ_ROWS, FUZZ_COLS};
    snprintf(path, sizeof path, "%s/mask.npy", work);
    check("mask", cc__npy_write(path, "'|u1'", 2, shape, mask, pixels, message),
          message);
    seed_file("mask_npy", "uint8", path, NULL, 0);
    check("mask", cc__npy_write(path, "'|b1'", 2, shape, mask, pixels, message),
          message);
    seed_file("mask_npy", "bool", path, NULL, 0);

    double gain[pixels];
    float gain32[pixels];
    for (int i = 0; i < pixels; i++)
        gain32[i] = (float)(gain[i] = 0.9 + 0.002 * i);
    snprintf(path, sizeof path, "%s/gain.npy", work);
    check("gain",
          cc_gain_map_write_npy(path, FUZZ_ROWS, FUZZ_COLS, gain, message),
          message);
    seed_file("gain_map", "float64", path, NULL, 0);
    check("gain",
          cc__npy_write(path, "'<f4'", 2, shape, gain32, sizeof gain32,
                        message),
          message);
    seed_file("gain_map", "float32", path, NULL, 0);
#ifdef CC_HAVE_TIFF
    snprintf(path, sizeof path, "%s/gain.tiff", work);
    write_gain_tiff(path, gain32);
    seed_file("gain_map", "tiff", path, NULL, 0);
#endif

    snprintf(path, sizeof path, "%s/clusters.clust", work);
    cc_clust_writer *writer;
    check("clust writer", cc_clust_writer_new(&writer, path, message), message);
    check("clust writer", cc_clust_writer_write(writer, clusters, message),
          message);
    check("clust writer", cc_clust_writer_finish(writer, message), message);
    cc_clust_writer_destroy(writer);
    const unsigned char size_3x3 = 0;
    seed_file("clust_file", "simulated", path, &size_3x3, 1);
    cc_clusters_destroy(clusters);

    static const unsigned char array[] = {5, 7, 0, 1, 2, 3, 250, 255};
    seed("npy_round_trip", "5x7", array, sizeof array);

    snprintf(path, sizeof path, "rm -rf '%s'", work);
    return system(path) == 0 ? 0 : 1;
}
