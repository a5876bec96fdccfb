/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw.h: what raw_master.c, raw_reader.c and raw_writer.c share: the
 * names of a run's files and the frame header, as the slsDetector
 * receiver writes them.
 */
#ifndef CLUSTERCORE_RAW_H
#define CLUSTERCORE_RAW_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "files.h"

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

/* chip: the chip of a chip test board run, as its reader was told. */
int cc__raw_master_read(const char *path, cc_raw_chip chip, cc_raw_info *info,
                        char *message);
/* The same, from the text of a master file read from path (which the
 * messages name). */
int cc__raw_master_parse(const char *text, size_t length, const char *path,
                         cc_raw_chip chip, cc_raw_info *info, char *message);

/* The ADC-order layouts: frames of 400 x 400 pixels, read as 5000
 * samples of 32 ADCs. */
#define CC_RAW_ADC_SIDE 400u
#define CC_RAW_ADC_SAMPLES 5000u
#define CC_RAW_ADCS 32u
#define CC_RAW_ADC_PIXELS (CC_RAW_ADC_SIDE * CC_RAW_ADC_SIDE)
static_assert(CC_RAW_ADC_SAMPLES * CC_RAW_ADCS == CC_RAW_ADC_PIXELS,
              "every sample of every ADC is a pixel");
/* Data bytes of a packet of the chip test board (and of MÖNCH's receivers
 * of its time): over 10 GbE, and over 1 GbE (slsDetector's
 * UDP_PACKET_DATA_BYTES). */
#define CC_RAW_CTB_PACKET_BYTES_10G 8144u
#define CC_RAW_CTB_PACKET_BYTES_1G 1344u

bool cc__raw_layout_is_adc(cc_raw_layout layout);
/* Fills map[CC_RAW_ADC_PIXELS] of an ADC-order layout: map[row * 400 + col]
 * is the index, in the data file's order, of that pixel's value.
 * CC_EINVAL for the row layout, which has no map. */
int cc__raw_layout_map(cc_raw_layout layout, uint32_t *map);
/* For an ADC-order layout, its map, built, and a frame of scratch to read
 * or write the file's order in; both NULL in rows. The caller frees them,
 * also after a failure. */
int cc__raw_layout_buffers(cc_raw_layout layout, uint32_t **map,
                           uint16_t **scratch, char *message);

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
