/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_writer.c: writes a MÖNCH raw run the way the slsDetector receiver
 * does (version 7.2 master keys, 112-byte headers, complete packet
 * counts), so that simulated runs go through every reader of real ones;
 * or in one of the ADC orders that the chip test board and MÖNCH's older
 * receivers wrote, each frame scattered through its pixel map. The data
 * files stay under temporary names until the master file is written;
 * only then are they all renamed, the master last.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "raw.h"

/* slsDetector's detector types, in the header's detType. */
enum { detector_type_ctb = 4, detector_type_moench = 5, header_version = 2 };

struct cc_raw_writer {
    struct cc__run_name name;
    char *master_path;
    uint32_t rows, cols, max_frames_per_file;
    uint32_t packets_per_frame;
    cc_raw_layout layout;
    /* In ADC order: scratch[map[k]] = frame[k]. */
    uint32_t *map;
    uint16_t *scratch;
    struct cc__output current; /* the data file being written */
    uint64_t frames_in_current;
    struct cc__output *done; /* data files complete but not renamed */
    size_t n_done, done_capacity;
    uint64_t frames;
    bool failed;
};

int cc_raw_writer_new(cc_raw_writer **writer, const char *master_path,
                      uint32_t rows, uint32_t cols,
                      uint32_t max_frames_per_file, char *message)
{
    return cc_raw_writer_new_layout(writer, master_path, rows, cols,
                                    max_frames_per_file, CC_RAW_LAYOUT_ROWS,
                                    message);
}

int cc_raw_writer_new_layout(cc_raw_writer **writer, const char *master_path,
                             uint32_t rows, uint32_t cols,
                             uint32_t max_frames_per_file, cc_raw_layout layout,
                             char *message)
{
    if (writer == NULL || master_path == NULL)
        return cc__message(message, CC_EINVAL, "writer and path are needed");
    *writer = NULL;
    if (rows == 0 || cols == 0 || rows > CC_FRAME_SIDE_MAX ||
        cols > CC_FRAME_SIDE_MAX || max_frames_per_file == 0)
        return cc__message(message, CC_EINVAL,
                           "a raw run needs 1..%u rows and columns and at "
                           "least one frame per file",
                           CC_FRAME_SIDE_MAX);
    if (cc_raw_layout_name(layout) == NULL)
        return cc__message(message, CC_EINVAL, "%d is not a raw layout",
                           (int)layout);
    bool adc = cc__raw_layout_is_adc(layout);
    if (adc && (rows != CC_RAW_ADC_SIDE || cols != CC_RAW_ADC_SIDE))
        return cc__message(message, CC_EINVAL,
                           "the %s layout holds frames of %u x %u, not "
                           "%u x %u",
                           cc_raw_layout_name(layout), CC_RAW_ADC_SIDE,
                           CC_RAW_ADC_SIDE, (unsigned)rows, (unsigned)cols);
    cc_raw_writer *made = calloc(1, sizeof *made);
    if (made == NULL)
        return cc__message(message, CC_ENOMEM, "out of memory");
    int rc = cc__run_name_parse(master_path, &made->name, message);
    if (rc == CC_OK && (made->master_path = strdup(master_path)) == NULL)
        rc = cc__message(message, CC_ENOMEM, "out of memory");
    if (rc == CC_OK)
        rc = cc__raw_layout_buffers(layout, &made->map, &made->scratch,
                                    message);
    if (rc != CC_OK) {
        cc_raw_writer_destroy(made);
        return rc;
    }
    made->rows = rows;
    made->cols = cols;
    made->max_frames_per_file = max_frames_per_file;
    made->layout = layout;
    uint64_t image = (uint64_t)rows * cols * 2;
    /* ADC orders as sent over 10 GbE. */
    uint64_t packet = adc ? CC_RAW_CTB_PACKET_BYTES_10G : CC_RAW_PACKET_BYTES;
    made->packets_per_frame = (uint32_t)((image + packet - 1) / packet);
    *writer = made;
    return CC_OK;
}

void cc_raw_writer_destroy(cc_raw_writer *writer)
{
    if (writer == NULL)
        return;
    cc__output_abort(&writer->current);
    for (size_t i = 0; i < writer->n_done; i++)
        cc__output_abort(&writer->done[i]);
    free(writer->done);
    free(writer->map);
    free(writer->scratch);
    free(writer->master_path);
    cc__run_name_free(&writer->name);
    free(writer);
}

/* Closes the current data file into the list of files to rename. */
static int retire_current(cc_raw_writer *writer, char *message)
{
    struct cc__output *done = cc__grow(writer->done, &writer->done_capacity,
                                       writer->n_done + 1, sizeof *done);
    if (done == NULL)
        return cc__message(message, CC_ENOMEM, "out of memory");
    writer->done = done;
    if (fflush(writer->current.file) != 0)
        return cc__message(message, CC_EIO, "cannot write %s",
                           writer->current.path);
    done[writer->n_done++] = writer->current;
    writer->current = (struct cc__output){0};
    writer->frames_in_current = 0;
    return CC_OK;
}

static int write_frame(cc_raw_writer *writer, const uint16_t *image,
                       uint64_t number, char *message)
{
    if (writer->current.file != NULL &&
        writer->frames_in_current == writer->max_frames_per_file) {
        int rc = retire_current(writer, message);
        if (rc != CC_OK)
            return rc;
    }
    if (writer->current.file == NULL) {
        char *path = cc__run_data_path(&writer->name, 0,
                                       (uint32_t)writer->n_done);
        if (path == NULL)
            return cc__message(message, CC_ENOMEM, "out of memory");
        int rc = cc__output_open(&writer->current, path, message);
        free(path);
        if (rc != CC_OK)
            return rc;
    }
    bool board = writer->layout == CC_RAW_LAYOUT_CTB_MOENCH03 ||
                 writer->layout == CC_RAW_LAYOUT_CTB_MOENCH04;
    struct cc__raw_header header = {
        .frame_number = number,
        .packet_number = writer->packets_per_frame,
        .detector_type = board ? detector_type_ctb : detector_type_moench,
        .version = header_version,
    };
    for (uint32_t p = 0; p < writer->packets_per_frame && p < 512; p++)
        header.packet_mask[p / 8] |= (uint8_t)(1u << (p % 8));
    size_t pixels = (size_t)writer->rows * writer->cols;
    if (writer->map != NULL) { /* a permutation: a scatter out of rows */
        for (size_t k = 0; k < pixels; k++)
            writer->scratch[writer->map[k]] = image[k];
        image = writer->scratch;
    }
    int rc = cc__output_write(&writer->current, &header, sizeof header,
                              message);
    if (rc == CC_OK)
        rc = cc__output_write(&writer->current, image, pixels * sizeof *image,
                              message);
    if (rc == CC_OK) {
        writer->frames_in_current++;
        writer->frames++;
    }
    return rc;
}

int cc_raw_writer_write(cc_raw_writer *writer, const uint16_t *frames,
                        const uint64_t *frame_numbers, size_t n_frames,
                        char *message)
{
    if (writer == NULL || (frames == NULL && n_frames > 0))
        return cc__message(message, CC_EINVAL, "writer and frames are needed");
    if (writer->failed)
        return cc__message(message, CC_EIO, "an earlier write failed");
    size_t pixels = (size_t)writer->rows * writer->cols;
    for (size_t i = 0; i < n_frames; i++) {
        uint64_t number = frame_numbers ? frame_numbers[i] : writer->frames;
        int rc = write_frame(writer, frames + i * pixels, number, message);
        if (rc != CC_OK) {
            writer->failed = true; /* a frame may be half written */
            return rc;
        }
    }
    return CC_OK;
}

/* The readout keys of each layout: none in rows; in ADC order those of
 * MÖNCH's receivers before 8.0 with aare's "Analog Flag", or the chip test
 * board's (version 7.2's, read over 10 GbE). */
static const char *readout_keys(cc_raw_layout layout)
{
    switch (layout) {
    case CC_RAW_LAYOUT_MOENCH03_OLD:
        return "    \"Ten Giga\": 1,\n"
               "    \"ADC Mask\": \"0xffffffff\",\n"
               "    \"Analog Flag\": 1,\n"
               "    \"Analog Samples\": 5000,\n";
    case CC_RAW_LAYOUT_CTB_MOENCH03:
    case CC_RAW_LAYOUT_CTB_MOENCH04:
        return "    \"Ten Giga\": 1,\n"
               "    \"ADC Mask\": \"0xffffffff\",\n"
               "    \"Analog Flag\": 1,\n"
               "    \"Analog Samples\": 5000,\n"
               "    \"Digital Flag\": 0,\n"
               "    \"Digital Samples\": 0,\n"
               "    \"Dbit Offset\": 0,\n"
               "    \"Dbit Bitset\": 0,\n"
               "    \"Transceiver Mask\": \"0x3\",\n"
               "    \"Transceiver Flag\": 0,\n"
               "    \"Transceiver Samples\": 0,\n";
    default: return "";
    }
}

/* The master file, with the keys of a receiver of version 7.2. */
static int write_master(const cc_raw_writer *writer, struct cc__output *master,
                        char *message)
{
    uint64_t image = (uint64_t)writer->rows * writer->cols * 2;
    bool board = writer->layout == CC_RAW_LAYOUT_CTB_MOENCH03 ||
                 writer->layout == CC_RAW_LAYOUT_CTB_MOENCH04;
    /* The chip test board counts its 32 channels as pixels, of one row. */
    uint32_t x = board ? CC_RAW_ADCS : writer->cols;
    uint32_t y = board ? 1 : writer->rows;
    char text[2048];
    int length = snprintf(
        text, sizeof text,
        "{\n"
        "    \"Version\": 7.2,\n"
        "    \"Timestamp\": \"written by libclustercore %s\",\n"
        "    \"Detector Type\": \"%s\",\n"
        "    \"Timing Mode\": \"auto\",\n"
        "    \"Geometry\": {\"x\": 1, \"y\": 1},\n"
        "    \"Image Size in bytes\": %" PRIu64 ",\n"
        "    \"Pixels\": {\"x\": %u, \"y\": %u},\n"
        "    \"Max Frames Per File\": %u,\n"
        "    \"Frame Discard Policy\": \"nodiscard\",\n"
        "    \"Frame Padding\": 1,\n"
        "%s"
        "    \"Number of UDP Interfaces\": 1,\n"
        "    \"Total Frames\": %" PRIu64 ",\n"
        "    \"Frames in File\": %" PRIu64 "\n"
        "}\n",
        cc_version(), board ? "ChipTestBoard" : "Moench", image, (unsigned)x,
        (unsigned)y, (unsigned)writer->max_frames_per_file,
        readout_keys(writer->layout), writer->frames, writer->frames);
    return cc__output_write(master, text, (size_t)length, message);
}

int cc_raw_writer_finish(cc_raw_writer *writer, char *message)
{
    if (writer == NULL)
        return cc__message(message, CC_EINVAL, "writer is NULL");
    if (writer->failed)
        return cc__message(message, CC_EIO, "an earlier write failed");
    int rc = writer->current.file != NULL ? retire_current(writer, message)
                                          : CC_OK;
    struct cc__output master;
    if (rc == CC_OK)
        rc = cc__output_open(&master, writer->master_path, message);
    if (rc != CC_OK)
        return rc;
    rc = write_master(writer, &master, message);
    /* Data files first: a master file on disk means a complete run. */
    for (size_t i = 0; i < writer->n_done && rc == CC_OK; i++) {
        rc = cc__output_commit(&writer->done[i], message);
        if (rc == CC_OK)
            writer->done[i] = (struct cc__output){0};
    }
    if (rc != CC_OK) {
        cc__output_abort(&master);
        writer->failed = true;
        return rc;
    }
    return cc__output_commit(&master, message);
}
