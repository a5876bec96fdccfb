/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pedestal_file.c: saves and loads the pedestal so that an IOC restart
 * needs no new dark run. The file holds the exact state (integer sums
 * while training; X0 and the centred sums in working precision once
 * ready), so later output is identical to the saving finder's.
 *
 * Layout, little-endian: the 48-byte header below, then either
 * u64 sum[pixels], u64 sum_sq[pixels] (training) or
 * u16 baseline[pixels], P s[pixels], P s2[pixels] (ready), where P is
 * float or double, then (version 2) u8 mask[pixels]: 0 good, else the
 * reasons 1 (the user's mask) and 2 (the rms rule) or'ed. A CRC-32 of the
 * payload guards against corruption. Version 1 files, without the mask,
 * still load.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

static const char file_magic[8] = {'C', 'C', 'P', 'E', 'D', 'S', 'T', '\n'};
enum { file_version = 2, first_version_with_mask = 2 };

struct file_header {
    char magic[8];
    uint32_t version;
    uint32_t rows, cols;
    uint32_t precision; /* cc_precision */
    uint32_t adc_mask;
    uint32_t state; /* cc_pedestal_state */
    uint32_t window;
    uint32_t payload_crc;
    uint64_t frames_trained;
};
static_assert(sizeof(struct file_header) == 48, "the header is 48 bytes");

uint32_t cc__crc32(uint32_t crc, const void *data, size_t size)
{
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int bit = 0; bit < 8; bit++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    const unsigned char *byte = data;
    crc = ~crc;
    for (size_t i = 0; i < size; i++)
        crc = table[(crc ^ byte[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

/* The payload as (pointer, size) parts, in file order. */
struct payload {
    int parts;
    void *part[4];
    size_t size[4];
};

static struct payload payload_of(const struct cc__pedestal *pedestal,
                                 cc_pedestal_state state, uint32_t version)
{
    size_t n = pedestal->pixels;
    size_t real = cc__precision_size(pedestal->precision);
    struct payload payload =
        state == CC_PEDESTAL_TRAINING
            ? (struct payload){2,
                               {pedestal->sum, pedestal->sum_sq},
                               {n * 8, n * 8}}
            : (struct payload){3,
                               {pedestal->baseline, pedestal->s, pedestal->s2},
                               {n * 2, n * real, n * real}};
    if (version >= first_version_with_mask) {
        payload.part[payload.parts] = pedestal->mask;
        payload.size[payload.parts++] = n;
    }
    return payload;
}

static uint32_t payload_crc(const struct payload *payload)
{
    uint32_t crc = 0;
    for (int i = 0; i < payload->parts; i++)
        crc = cc__crc32(crc, payload->part[i], payload->size[i]);
    return crc;
}

int cc__pedestal_save(const struct cc__pedestal *pedestal, uint32_t rows,
                      uint32_t cols, uint16_t adc_mask, const char *path,
                      char *message)
{
    struct payload payload = payload_of(pedestal, pedestal->state,
                                        file_version);
    struct file_header header = {
        .version = file_version,
        .rows = rows,
        .cols = cols,
        .precision = (uint32_t)pedestal->precision,
        .adc_mask = adc_mask,
        .state = (uint32_t)pedestal->state,
        .window = pedestal->window,
        .payload_crc = payload_crc(&payload),
        .frames_trained = pedestal->frames_trained,
    };
    memcpy(header.magic, file_magic, sizeof file_magic);

    struct cc__output output;
    int rc = cc__output_open(&output, path, message);
    if (rc != CC_OK)
        return rc;
    rc = cc__output_write(&output, &header, sizeof header, message);
    for (int i = 0; i < payload.parts && rc == CC_OK; i++)
        rc = cc__output_write(&output, payload.part[i], payload.size[i],
                              message);
    if (rc != CC_OK) {
        cc__output_abort(&output);
        return rc;
    }
    return cc__output_commit(&output, message);
}

/* Checks a header against the finder that loads it. */
static int check_header(const struct file_header *header, uint32_t rows,
                        uint32_t cols, cc_precision precision,
                        uint16_t adc_mask, uint32_t max_window,
                        const char *path, char *message)
{
    if (memcmp(header->magic, file_magic, sizeof file_magic) != 0)
        return cc__message(message, CC_EFORMAT,
                           "%s is not a clustercore pedestal file", path);
    if (header->version < 1 || header->version > file_version)
        return cc__message(message, CC_EFORMAT,
                           "%s has format version %" PRIu32
                           "; this library reads versions 1 to %d",
                           path, header->version, file_version);
    if (header->rows != rows || header->cols != cols)
        return cc__message(message, CC_EMISMATCH,
                           "%s holds %" PRIu32 " x %" PRIu32
                           " pixels; the finder has %" PRIu32 " x %" PRIu32,
                           path, header->rows, header->cols, rows, cols);
    if (header->precision != (uint32_t)precision)
        return cc__message(message, CC_EMISMATCH,
                           "%s was saved in %s precision", path,
                           header->precision == CC_PRECISION_DOUBLE
                               ? "double"
                               : "another");
    if (header->adc_mask != adc_mask)
        return cc__message(message, CC_EMISMATCH,
                           "%s was trained with adc_mask 0x%" PRIX32
                           "; the finder uses 0x%X",
                           path, header->adc_mask, (unsigned)adc_mask);
    bool ready = header->state == CC_PEDESTAL_READY;
    bool consistent = ready ? header->window >= 2 &&
                                  header->window <= CC_PEDESTAL_FRAMES_MAX &&
                                  header->frames_trained == header->window
                            : header->state == CC_PEDESTAL_TRAINING &&
                                  header->frames_trained < max_window;
    if (!consistent)
        return cc__message(message, CC_EFORMAT,
                           "%s has an inconsistent state (state %" PRIu32
                           ", window %" PRIu32 ", %" PRIu64 " frames trained)",
                           path, header->state, header->window,
                           header->frames_trained);
    return CC_OK;
}

static int read_exactly(FILE *file, void *data, size_t size)
{
    return fread(data, 1, size, file) == size;
}

int cc__pedestal_load(struct cc__pedestal *loaded, uint32_t rows, uint32_t cols,
                      uint16_t adc_mask, uint32_t max_window, const char *path,
                      bool *with_mask, char *message)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return cc__message(message, CC_EIO, "cannot open %s: %s", path,
                           strerror(errno));
    struct file_header header = {0};
    int rc = read_exactly(file, &header, sizeof header)
                 ? check_header(&header, rows, cols, loaded->precision,
                                adc_mask, max_window, path, message)
                 : cc__message(message, CC_EFORMAT,
                               "%s is truncated: no complete header", path);
    struct payload payload = payload_of(loaded, (cc_pedestal_state)header.state,
                                        header.version);
    for (int i = 0; i < payload.parts && rc == CC_OK; i++)
        if (!read_exactly(file, payload.part[i], payload.size[i]))
            rc = cc__message(message, CC_EFORMAT, "%s is truncated", path);
    if (rc == CC_OK && fgetc(file) != EOF)
        rc = cc__message(message, CC_EFORMAT,
                         "%s is longer than its header says", path);
    if (rc == CC_OK && payload_crc(&payload) != header.payload_crc)
        rc = cc__message(message, CC_EFORMAT,
                         "%s is corrupt: its checksum does not match", path);
    *with_mask = header.version >= first_version_with_mask;
    for (size_t p = 0; rc == CC_OK && *with_mask && p < loaded->pixels; p++)
        if (loaded->mask[p] & ~(CC__MASKED_BY_USER | CC__MASKED_BY_RMS))
            rc = cc__message(message, CC_EFORMAT,
                             "%s is corrupt: mask byte %u at pixel %zu", path,
                             (unsigned)loaded->mask[p], p);
    fclose(file);
    if (rc != CC_OK)
        return rc;
    loaded->state = (cc_pedestal_state)header.state;
    loaded->frames_trained = header.frames_trained;
    loaded->window = header.state == CC_PEDESTAL_READY ? header.window
                                                       : max_window;
    return CC_OK;
}
