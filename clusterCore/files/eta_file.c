/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eta_file.c: saves and loads the flat-field calibration of η, so that one
 * flat-field run serves every later run (docs/spec.md §5.7).
 *
 * Layout, little-endian: the 88-byte header below, then u64 H[bins *
 * bins] with H[ix][iy] at ix * bins + iy. A CRC-32 of H guards against
 * corruption, and the header's photon count must be the sum of H.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

static const char file_magic[8] = {'C', 'C', 'E', 'T', 'A', 'C', 'A', 'L'};
enum { file_version = 1 };

struct file_header {
    char magic[8];
    uint32_t version;
    uint32_t function; /* cc_eta_function */
    uint32_t bins;
    uint32_t windowed;
    uint32_t window_energy; /* cc_energy */
    uint32_t counts_crc;
    double low, high;
    double window_low, window_high;
    uint64_t photons, outside, uninterpolable;
};
static_assert(sizeof(struct file_header) == 88, "the header is 88 bytes");

int cc_eta_calibration_save(const cc_eta_calibration *calibration,
                            const char *path, char *message)
{
    if (calibration == NULL || path == NULL)
        return cc__message(message, CC_EINVAL,
                           "calibration and path are needed");
    const cc_eta_calibration_info *info = &calibration->info;
    size_t size = (size_t)info->bins * info->bins * sizeof(uint64_t);
    struct file_header header = {
        .version = file_version,
        .function = (uint32_t)info->function,
        .bins = info->bins,
        .windowed = (uint32_t)info->windowed,
        .window_energy = (uint32_t)info->window.energy,
        .counts_crc = cc__crc32(0, calibration->counts, size),
        .low = info->low,
        .high = info->high,
        .window_low = info->window.low,
        .window_high = info->window.high,
        .photons = info->photons,
        .outside = info->outside,
        .uninterpolable = info->uninterpolable,
    };
    memcpy(header.magic, file_magic, sizeof file_magic);
    struct cc__output output;
    int rc = cc__output_open(&output, path, message);
    if (rc == CC_OK)
        rc = cc__output_write(&output, &header, sizeof header, message);
    if (rc == CC_OK)
        rc = cc__output_write(&output, calibration->counts, size, message);
    if (rc != CC_OK) {
        cc__output_abort(&output);
        return rc;
    }
    return cc__output_commit(&output, message);
}

/* The calibration a header describes, checked. */
static int info_of(const struct file_header *header, const char *path,
                   cc_eta_calibration_info *info, char *message)
{
    if (memcmp(header->magic, file_magic, sizeof file_magic) != 0)
        return cc__message(message, CC_EFORMAT,
                           "%s is not a clustercore eta calibration", path);
    if (header->version != file_version)
        return cc__message(message, CC_EFORMAT,
                           "%s has format version %" PRIu32
                           "; this library reads version %d",
                           path, header->version, file_version);
    *info = (cc_eta_calibration_info){
        .function = (cc_eta_function)header->function,
        .bins = header->bins,
        .low = header->low,
        .high = header->high,
        .windowed = (int)header->windowed,
        .window = {(cc_energy)header->window_energy, header->window_low,
                   header->window_high},
        .photons = header->photons,
        .outside = header->outside,
        .uninterpolable = header->uninterpolable,
    };
    if (header->function > CC_ETA3 || header->windowed > 1 ||
        header->window_energy > CC_ENERGY_SUM2X2)
        return cc__message(message, CC_EFORMAT,
                           "%s is corrupt: function %" PRIu32
                           ", windowed %" PRIu32 ", window energy %" PRIu32,
                           path, header->function, header->windowed,
                           header->window_energy);
    char why[CC_MESSAGE_SIZE];
    if (cc__eta_calibration_check(info, why) != CC_OK)
        return cc__message(message, CC_EFORMAT, "%s is corrupt: %s", path, why);
    return CC_OK;
}

int cc_eta_calibration_read(cc_eta_calibration **calibration, const char *path,
                            char *message)
{
    if (calibration == NULL || path == NULL)
        return cc__message(message, CC_EINVAL,
                           "calibration pointer and path are needed");
    *calibration = NULL;
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return cc__message(message, CC_EIO, "cannot open %s: %s", path,
                           strerror(errno));
    struct file_header header;
    cc_eta_calibration_info info;
    int rc = fread(&header, 1, sizeof header, file) == sizeof header
                 ? info_of(&header, path, &info, message)
                 : cc__message(message, CC_EFORMAT,
                               "%s is truncated: no complete header", path);
    cc_eta_calibration *made = NULL;
    if (rc == CC_OK && (made = cc__eta_calibration_alloc(&info)) == NULL)
        rc = cc__message(message, CC_ENOMEM, "no memory to read %s", path);
    size_t size = rc == CC_OK ? (size_t)info.bins * info.bins * 8 : 0;
    if (rc == CC_OK && fread(made->counts, 1, size, file) != size)
        rc = cc__message(message, CC_EFORMAT, "%s is truncated", path);
    if (rc == CC_OK && fgetc(file) != EOF)
        rc = cc__message(message, CC_EFORMAT,
                         "%s is longer than its header says", path);
    if (rc == CC_OK && cc__crc32(0, made->counts, size) != header.counts_crc)
        rc = cc__message(message, CC_EFORMAT,
                         "%s is corrupt: its checksum does not match", path);
    uint64_t sum = 0;
    for (size_t i = 0; rc == CC_OK && i < size / 8; i++)
        sum += made->counts[i];
    if (rc == CC_OK && sum != info.photons)
        rc = cc__message(message, CC_EFORMAT,
                         "%s is inconsistent: %" PRIu64
                         " photons in the header, %" PRIu64 " in the bins",
                         path, info.photons, sum);
    fclose(file);
    if (rc != CC_OK) {
        free(made);
        return rc;
    }
    *calibration = made;
    return CC_OK;
}
