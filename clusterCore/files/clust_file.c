/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clust_file.c: cluster files as aare's ClusterFile and
 * slsDetectorCalibration write them. Per frame: int32 frame number,
 * uint32 cluster count, then per cluster uint16 x, uint16 y and
 * int32 values[Nx * Ny], little-endian and packed (40 bytes at 3x3).
 * The file does not record Nx * Ny, so the reader is told it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

enum { record_buffer = 4096 }; /* clusters staged per fwrite */

struct cc_clust_writer {
    struct cc__output output;
    uint32_t size_x, size_y; /* 0 until the first frame */
    uint8_t *staging;        /* packed records */
    size_t staging_capacity;
    bool failed;
};

struct cc_clust_reader {
    FILE *file;
    char *path;
    uint32_t size_x, size_y;
    uint64_t frames_read;
    uint8_t *record;
    size_t record_capacity;
};

int cc_clust_writer_new(cc_clust_writer **writer, const char *path,
                        char *message)
{
    if (writer == NULL || path == NULL)
        return cc__message(message, CC_EINVAL, "writer and path are needed");
    *writer = NULL;
    cc_clust_writer *made = calloc(1, sizeof *made);
    if (made == NULL)
        return cc__message(message, CC_ENOMEM, "out of memory");
    int rc = cc__output_open(&made->output, path, message);
    if (rc != CC_OK) {
        free(made);
        return rc;
    }
    *writer = made;
    return CC_OK;
}

void cc_clust_writer_destroy(cc_clust_writer *writer)
{
    if (writer == NULL)
        return;
    cc__output_abort(&writer->output);
    free(writer->staging);
    free(writer);
}

/* Packs and writes one frame: header, then records in batches. */
static int write_frame(cc_clust_writer *writer, const cc_frame_clusters *frame,
                       char *message)
{
    int32_t header[2] = {(int32_t)frame->frame_number, (int32_t)frame->count};
    int rc = cc__output_write(&writer->output, header, sizeof header, message);
    size_t cells = (size_t)frame->size_x * frame->size_y;
    size_t record = 4 + cells * sizeof(int32_t);
    for (uint32_t first = 0; first < frame->count && rc == CC_OK;
         first += record_buffer) {
        uint32_t n = frame->count - first < record_buffer ? frame->count - first
                                                          : record_buffer;
        uint8_t *out = writer->staging;
        for (uint32_t i = first; i < first + n; i++) {
            memcpy(out, &frame->x[i], 2);
            memcpy(out + 2, &frame->y[i], 2);
            memcpy(out + 4, frame->values + i * cells, cells * sizeof(int32_t));
            out += record;
        }
        rc = cc__output_write(&writer->output, writer->staging, n * record,
                              message);
    }
    return rc;
}

int cc_clust_writer_write(cc_clust_writer *writer, const cc_clusters *clusters,
                          char *message)
{
    if (writer == NULL || clusters == NULL)
        return cc__message(message, CC_EINVAL,
                           "writer and clusters are needed");
    if (writer->failed)
        return cc__message(message, CC_EIO, "an earlier write failed");
    size_t frames = cc_clusters_frame_count(clusters);
    if (frames == 0)
        return CC_OK;
    cc_frame_clusters frame;
    cc_clusters_frame(clusters, 0, &frame);
    if (writer->size_x != 0 &&
        (frame.size_x != writer->size_x || frame.size_y != writer->size_y))
        return cc__message(message, CC_EINVAL,
                           "clusters of %ux%u cannot join a file of %ux%u",
                           (unsigned)frame.size_x, (unsigned)frame.size_y,
                           (unsigned)writer->size_x, (unsigned)writer->size_y);
    for (size_t i = 0; i < frames; i++) {
        cc_clusters_frame(clusters, i, &frame);
        if (frame.frame_number > INT32_MAX)
            return cc__message(message, CC_EINVAL,
                               "frame number %" PRIu64 " does not fit the "
                               "file's int32",
                               frame.frame_number);
    }
    size_t record = 4 + (size_t)frame.size_x * frame.size_y * sizeof(int32_t);
    uint8_t *staging = cc__grow(writer->staging, &writer->staging_capacity,
                                record_buffer * record, 1);
    if (staging == NULL)
        return cc__message(message, CC_ENOMEM, "out of memory");
    writer->staging = staging;
    writer->size_x = frame.size_x;
    writer->size_y = frame.size_y;
    for (size_t i = 0; i < frames; i++) {
        cc_clusters_frame(clusters, i, &frame);
        int rc = write_frame(writer, &frame, message);
        if (rc != CC_OK) {
            writer->failed = true;
            return rc;
        }
    }
    return CC_OK;
}

int cc_clust_writer_finish(cc_clust_writer *writer, char *message)
{
    if (writer == NULL)
        return cc__message(message, CC_EINVAL, "writer is NULL");
    if (writer->failed)
        return cc__message(message, CC_EIO, "an earlier write failed");
    return cc__output_commit(&writer->output, message);
}

int cc_clust_reader_open(cc_clust_reader **reader, const char *path,
                         uint32_t size_x, uint32_t size_y, char *message)
{
    if (reader == NULL || path == NULL)
        return cc__message(message, CC_EINVAL, "reader and path are needed");
    *reader = NULL;
    int rc = cc__cluster_size_check(size_x, size_y, message);
    if (rc != CC_OK)
        return rc;
    cc_clust_reader *made = calloc(1, sizeof *made);
    if (made == NULL || (made->path = strdup(path)) == NULL) {
        free(made);
        return cc__message(message, CC_ENOMEM, "out of memory");
    }
    made->file = fopen(path, "rb");
    if (made->file == NULL) {
        rc = cc__message(message, CC_EIO, "cannot open %s: %s", path,
                         strerror(errno));
        cc_clust_reader_close(made);
        return rc;
    }
    made->size_x = size_x;
    made->size_y = size_y;
    *reader = made;
    return CC_OK;
}

void cc_clust_reader_close(cc_clust_reader *reader)
{
    if (reader == NULL)
        return;
    if (reader->file != NULL)
        fclose(reader->file);
    free(reader->path);
    free(reader->record);
    free(reader);
}

/* Reads one frame into clusters; *end when the file ended before it. */
static int read_frame(cc_clust_reader *reader, cc_clusters *clusters, bool *end,
                      char *message)
{
    int32_t header[2];
    size_t got = fread(header, 1, sizeof header, reader->file);
    *end = got == 0 && feof(reader->file);
    if (*end)
        return CC_OK;
    if (got != sizeof header || header[0] < 0)
        return cc__message(message, CC_EFORMAT,
                           "%s: frame %" PRIu64 " of the file has a %s header",
                           reader->path, reader->frames_read + 1,
                           got != sizeof header ? "truncated" : "negative");
    uint32_t count = (uint32_t)header[1];
    size_t cells = (size_t)reader->size_x * reader->size_y;
    size_t record = 4 + cells * sizeof(int32_t);
    uint8_t *buffer = cc__grow(reader->record, &reader->record_capacity, record,
                               1);
    if (buffer == NULL)
        return cc__message(message, CC_ENOMEM, "out of memory");
    reader->record = buffer;
    int rc = cc__clusters_begin_frame(clusters, (uint64_t)header[0]);
    for (uint32_t i = 0; i < count && rc == CC_OK; i++) {
        if (fread(buffer, 1, record, reader->file) != record)
            return cc__message(message, CC_EFORMAT,
                               "%s is truncated inside frame %" PRId32
                               " (cluster %u of %u); is the cluster size "
                               "%ux%u right?",
                               reader->path, header[0], (unsigned)i + 1,
                               (unsigned)count, (unsigned)reader->size_x,
                               (unsigned)reader->size_y);
        uint16_t x, y;
        int32_t *values;
        memcpy(&x, buffer, 2);
        memcpy(&y, buffer + 2, 2);
        rc = cc__clusters_push(clusters, 0, x, y, &values);
        if (rc == CC_OK)
            memcpy(values, buffer + 4, cells * sizeof(int32_t));
    }
    if (rc != CC_OK)
        return cc__message(message, rc, "out of memory reading %s",
                           reader->path);
    reader->frames_read++;
    return CC_OK;
}

int cc_clust_reader_read(cc_clust_reader *reader, size_t max_frames,
                         cc_clusters *clusters, char *message)
{
    if (reader == NULL || clusters == NULL)
        return cc__message(message, CC_EINVAL,
                           "reader and clusters are needed");
    cc__clusters_clear(clusters, reader->size_x, reader->size_y);
    for (size_t i = 0; i < max_frames; i++) {
        bool end;
        int rc = read_frame(reader, clusters, &end, message);
        if (rc != CC_OK) {
            cc__clusters_clear(clusters, reader->size_x, reader->size_y);
            return rc;
        }
        if (end)
            break;
    }
    return CC_OK;
}
