/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw.h: what raw_master.c, raw_reader.c and raw_writer.c share: the
 * names of a run's files and the frame header, as the slsDetector
 * receiver writes them.
 */
#ifndef CLUSTERCORE_RAW_H
#define CLUSTERCORE_RAW_H

#include <assert.h>
#include <stdint.h>

#include "internal.h"

/* NAME_master_I.json: prefix "DIR/NAME", index "I". */
struct cc__run_name {
    char *prefix;
    char *index;
};

int cc__run_name_parse(const char *master_path, struct cc__run_name *name,
                       char *message);
void cc__run_name_free(struct cc__run_name *name);
/* PREFIX_dINTERFACE_fFILE_INDEX.raw, allocated; NULL when out of memory. */
char *cc__run_data_path(const struct cc__run_name *name, uint32_t interface,
                        uint32_t file);
/* The most data files an interface's part of a run may have. */
#define CC_RAW_FILES_MAX 1000000u

int cc__raw_master_read(const char *path, cc_raw_info *info, char *message);
/* The same, from the text of a master file read from path (which the
 * messages name). */
int cc__raw_master_parse(const char *text, size_t length, const char *path,
                         cc_raw_info *info, char *message);

/* slsDetector's sls_detector_header, little-endian and packed. */
struct cc__raw_header {
    uint64_t frame_number;
    uint32_t exposure_length;
    uint32_t packet_number; /* packets received: short means padded */
    uint64_t bunch_id;
    uint64_t timestamp;
    uint16_t module_id;
    uint16_t row;
    uint16_t column;
    uint16_t reserved;
    uint32_t debug;
    uint16_t round_robin_number;
    uint8_t detector_type;
    uint8_t version;
    uint8_t packet_mask[64];
};
static_assert(sizeof(struct cc__raw_header) == CC_RAW_HEADER_SIZE,
              "the frame header is 112 packed bytes");

#endif
