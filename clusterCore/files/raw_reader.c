/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_reader.c: the frames of a MÖNCH raw run, file after file; with two
 * UDP interfaces, the two files of each index in step, a frame's top half
 * from d0 and its bottom half from d1. What is incomplete is skipped and
 * said, never guessed at: a missing data file (and its twin's frames, which
 * have no other half), a file that ends inside a frame (its complete frames
 * are kept), a frame whose header says packets are missing (the receiver
 * padded it), halves whose frame numbers differ. Each becomes a notice that
 * the caller shows the user. A run in ADC order is read into a scratch
 * frame and gathered into rows through its pixel map, built at open.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "raw.h"

/* Then padded frames, or missing files, are only counted. */
enum { padded_notices_max = 10, missing_notices_max = 10 };

struct cc_raw_reader {
    cc_raw_info info;
    struct cc__run_name name;
    size_t frame_bytes; /* header and image of one interface's part */
    uint32_t next_file; /* index of the next data files to open */
    /* The open data file of each interface (all open, or none). */
    FILE *files[CC_RAW_INTERFACES_MAX];
    char *paths[CC_RAW_INTERFACES_MAX];
    uint64_t frames_left; /* complete frames they all still hold */
    /* In ADC order: frame[k] = scratch[map[k]]. */
    uint32_t *map;
    uint16_t *scratch;
    bool finished; /* the final tally has been made */
    cc_raw_stats stats;
    char (*notices)[CC_MESSAGE_SIZE];
    size_t n_notices, notices_capacity, next_notice;
};

/* Queues a notice; with no memory for it the counts still tell. */
__attribute__((format(printf, 2, 3))) static void
notice(cc_raw_reader *reader, const char *format, ...)
{
    char(*notices)[CC_MESSAGE_SIZE] = cc__grow(reader->notices,
                                               &reader->notices_capacity,
                                               reader->n_notices + 1,
                                               sizeof *notices);
    if (notices == NULL)
        return;
    reader->notices = notices;
    va_list args;
    va_start(args, format);
    vsnprintf(notices[reader->n_notices++], CC_MESSAGE_SIZE, format, args);
    va_end(args);
}

int cc_raw_reader_open(cc_raw_reader **reader, const char *master_path,
                       char *message)
{
    return cc_raw_reader_open_chip(reader, master_path, CC_RAW_CHIP_UNSAID,
                                   message);
}

int cc_raw_reader_open_chip(cc_raw_reader **reader, const char *master_path,
                            cc_raw_chip chip, char *message)
{
    if (reader == NULL || master_path == NULL)
        return cc__message(message, CC_EINVAL, "reader and path are needed");
    *reader = NULL;
    if ((unsigned)chip > CC_RAW_CHIP_MOENCH04)
        return cc__message(message, CC_EINVAL, "%d is not a chip", (int)chip);
    cc_raw_reader *made = calloc(1, sizeof *made);
    if (made == NULL)
        return cc__message(message, CC_ENOMEM, "out of memory");
    int rc = cc__run_name_parse(master_path, &made->name, message);
    if (rc == CC_OK)
        rc = cc__raw_master_read(master_path, chip, &made->info, message);
    if (rc == CC_OK)
        rc = cc__raw_layout_buffers(made->info.layout, &made->map,
                                    &made->scratch, message);
    if (rc != CC_OK) {
        cc_raw_reader_close(made);
        return rc;
    }
    made->frame_bytes = CC_RAW_HEADER_SIZE + made->info.image_bytes;
    *reader = made;
    return CC_OK;
}

static void close_files(cc_raw_reader *reader)
{
    for (uint32_t i = 0; i < CC_RAW_INTERFACES_MAX; i++) {
        if (reader->files[i] != NULL)
            fclose(reader->files[i]);
        free(reader->paths[i]);
        reader->files[i] = NULL;
        reader->paths[i] = NULL;
    }
}

void cc_raw_reader_close(cc_raw_reader *reader)
{
    if (reader == NULL)
        return;
    close_files(reader);
    cc__run_name_free(&reader->name);
    free(reader->map);
    free(reader->scratch);
    free(reader->notices);
    free(reader);
}

int cc_raw_reader_info(const cc_raw_reader *reader, cc_raw_info *info)
{
    if (reader == NULL || info == NULL)
        return CC_EINVAL;
    *info = reader->info;
    return CC_OK;
}

int cc_raw_reader_stats(const cc_raw_reader *reader, cc_raw_stats *stats)
{
    if (reader == NULL || stats == NULL)
        return CC_EINVAL;
    *stats = reader->stats;
    return CC_OK;
}

const char *cc_raw_reader_notice(cc_raw_reader *reader)
{
    if (reader == NULL || reader->next_notice >= reader->n_notices)
        return NULL;
    return reader->notices[reader->next_notice++];
}

/* The frames the master file puts in data file `file`. */
static uint64_t frames_expected_in(const cc_raw_info *info, uint32_t file)
{
    uint64_t per_file = info->max_frames_per_file == 0
                            ? info->frames
                            : info->max_frames_per_file;
    uint64_t first = (uint64_t)file * per_file;
    return info->frames - first < per_file ? info->frames - first : per_file;
}

/* Opens the next data files (one an interface) that all exist, with the
 * frames they all hold; none open when there are none left. */
static int open_next_files(cc_raw_reader *reader, char *message)
{
    const uint32_t parts = reader->info.interfaces;
    while (reader->files[0] == NULL && reader->next_file < reader->info.files) {
        uint32_t index = reader->next_file++;
        uint64_t frames[CC_RAW_INTERFACES_MAX] = {0};
        bool missing = false;
        for (uint32_t i = 0; i < parts; i++) {
            reader->paths[i] = cc__run_data_path(&reader->name, i, index);
            if (reader->paths[i] == NULL) {
                close_files(reader);
                return cc__message(message, CC_ENOMEM, "out of memory");
            }
            reader->files[i] = fopen(reader->paths[i], "rb");
            struct stat status;
            if (reader->files[i] == NULL ||
                fstat(fileno(reader->files[i]), &status) != 0) {
                missing = true;
                if (++reader->stats.files_missing > missing_notices_max)
                    continue;
                notice(reader,
                       "%s is missing (%s): its %" PRIu64 " frames "
                       "are lost%s",
                       reader->paths[i], strerror(errno),
                       frames_expected_in(&reader->info, index),
                       parts > 1 ? ", and so are the other interface's halves "
                                   "of them"
                                 : "");
                continue;
            }
            uint64_t size = (uint64_t)status.st_size;
            frames[i] = size / reader->frame_bytes;
            uint64_t rest = size % reader->frame_bytes;
            if (rest != 0) {
                reader->stats.files_truncated++;
                notice(reader,
                       "%s is truncated: it ends %" PRIu64 " bytes "
                       "into frame %" PRIu64 " of the file; the %" PRIu64
                       " complete frames before it are used",
                       reader->paths[i], rest, frames[i] + 1, frames[i]);
            }
        }
        if (missing) {
            close_files(reader);
            continue;
        }
        reader->frames_left = frames[0];
        for (uint32_t i = 1; i < parts; i++) {
            if (frames[i] != frames[0])
                notice(reader,
                       "%s holds %" PRIu64 " frames and %s %" PRIu64
                       ": the halves beyond the shorter are not used",
                       reader->paths[0], frames[0], reader->paths[i],
                       frames[i]);
            if (frames[i] < reader->frames_left)
                reader->frames_left = frames[i];
        }
    }
    return CC_OK;
}

/* At the end of the run: says if fewer frames came than announced. */
static void finish(cc_raw_reader *reader)
{
    if (reader->finished)
        return;
    reader->finished = true;
    uint64_t seen = reader->stats.frames_read + reader->stats.frames_padded;
    if (seen != reader->info.frames)
        notice(reader,
               "the master file announces %" PRIu64 " frames; the "
               "data files hold %" PRIu64 " complete ones",
               reader->info.frames, seen);
    if (reader->stats.files_missing > missing_notices_max)
        notice(reader, "%" PRIu64 " data files were missing in all",
               reader->stats.files_missing);
    if (reader->stats.frames_padded > padded_notices_max)
        notice(reader, "%" PRIu64 " padded frames were skipped in all",
               reader->stats.frames_padded);
}

int cc_raw_reader_read(cc_raw_reader *reader, uint16_t *frames,
                       uint64_t *frame_numbers, size_t max_frames,
                       size_t *n_read, char *message)
{
    if (reader == NULL || n_read == NULL || (frames == NULL && max_frames > 0))
        return cc__message(message, CC_EINVAL,
                           "reader, frames and n_read "
                           "are needed");
    *n_read = 0;
    const uint32_t parts = reader->info.interfaces;
    const size_t pixels = (size_t)reader->info.rows * reader->info.cols;
    const size_t part_pixels = pixels / parts;
    while (*n_read < max_frames) {
        int rc = open_next_files(reader, message);
        if (rc != CC_OK)
            return rc;
        if (reader->files[0] == NULL) {
            finish(reader);
            break;
        }
        if (reader->frames_left == 0) {
            close_files(reader);
            continue;
        }
        struct cc__raw_header headers[CC_RAW_INTERFACES_MAX];
        uint16_t *image = frames + *n_read * pixels;
        /* An ADC order has one interface and a map. */
        uint16_t *into = reader->map != NULL ? reader->scratch : image;
        for (uint32_t i = 0; i < parts; i++)
            if (fread(&headers[i], sizeof headers[i], 1, reader->files[i]) !=
                    1 ||
                fread(into + i * part_pixels, sizeof *image, part_pixels,
                      reader->files[i]) != part_pixels)
                return cc__message(message, CC_EIO,
                                   "cannot read %s (did it change while "
                                   "being read?)",
                                   reader->paths[i]);
        reader->frames_left--;
        /* The frame counts when every half is complete and of the same
         * frame; else it is skipped, and counted against each interface
         * whose half was short. */
        uint32_t short_part = parts, other_frame = parts;
        for (uint32_t i = 0; i < parts; i++) {
            if (headers[i].packet_number < reader->info.packets_per_frame) {
                reader->stats.padded_by_interface[i]++;
                short_part = short_part < parts ? short_part : i;
            }
            if (headers[i].frame_number != headers[0].frame_number)
                other_frame = i;
        }
        if (short_part < parts || other_frame < parts) {
            if (++reader->stats.frames_padded > padded_notices_max)
                continue;
            if (short_part < parts)
                notice(reader,
                       "frame %" PRIu64 " in %s is padded: %" PRIu32
                       " of %" PRIu32 " packets arrived; skipped",
                       headers[short_part].frame_number,
                       reader->paths[short_part],
                       headers[short_part].packet_number,
                       reader->info.packets_per_frame);
            else
                notice(reader,
                       "frame %" PRIu64 " in %s has frame %" PRIu64
                       " in %s as its other half; skipped",
                       headers[0].frame_number, reader->paths[0],
                       headers[other_frame].frame_number,
                       reader->paths[other_frame]);
            continue;
        }
        if (reader->map != NULL) /* a permutation: a gather into rows */
            for (size_t k = 0; k < pixels; k++)
                image[k] = reader->scratch[reader->map[k]];
        if (frame_numbers != NULL)
            frame_numbers[*n_read] = headers[0].frame_number;
        ++*n_read;
        reader->stats.frames_read++;
    }
    return CC_OK;
}
