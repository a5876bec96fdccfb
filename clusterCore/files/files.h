/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * files.h: what the core reads and writes (clusterCore/files/): outputs
 * written under a temporary name, NumPy .npy files, pedestal files. The
 * raw runs' reader and writer share raw.h.
 */
#ifndef CLUSTERCORE_FILES_H
#define CLUSTERCORE_FILES_H

#include "../analysis/analysis.h"
#include "../pedestal/pedestal.h"

/* ---- outputs written under a temporary name (output_file.c) ---- */

struct cc__output {
    FILE *file;
    char *temporary; /* path.XXXXXX while open */
    char *path;
};

/* Creates path.XXXXXX for writing (mode 0644). */
int cc__output_open(struct cc__output *output, const char *path, char *message);
/* Flushes, syncs and closes the file and renames it to its path; on
 * failure removes it. Either way the output is closed. */
int cc__output_commit(struct cc__output *output, char *message);
/* Closes and removes an output not committed; harmless when closed. */
void cc__output_abort(struct cc__output *output);
/* Writes size bytes or reports why not. */
int cc__output_write(struct cc__output *output, const void *data, size_t size,
                     char *message);

/* ---- NumPy .npy files (npy.c) ---- */

/* Writes size bytes of data as an .npy array of dtype descr (a Python
 * literal: "'<u4'" or a list of fields) and the given shape. */
int cc__npy_write(const char *path, const char *descr, int ndim,
                  const uint64_t *shape, const void *data, size_t size,
                  char *message);
/* Reads a C-ordered uint8 or bool array of shape (rows, cols). */
int cc__npy_read_bytes(const char *path, uint32_t rows, uint32_t cols,
                       uint8_t *data, char *message);
/* Reads a C-ordered little-endian float32 or float64 array of shape
 * (rows, cols) into doubles. */
int cc__npy_read_reals(const char *path, uint32_t rows, uint32_t cols,
                       double *data, char *message);

/* ---- pedestal files (pedestal_file.c) ---- */

/* CRC-32 (IEEE 802.3, as zlib computes it) of data, continued from crc
 * (0 to start). */
uint32_t cc__crc32(uint32_t crc, const void *data, size_t size);

int cc__pedestal_save(const struct cc__pedestal *pedestal, uint32_t rows,
                      uint32_t cols, uint16_t adc_mask, const char *path,
                      char *message);
/* Loads into *loaded, which must be initialised for the same size and
 * precision; on failure *loaded is not to be used. *with_mask says whether
 * the file held a mask (version 2 on): without, loaded->mask is all 0. */
int cc__pedestal_load(struct cc__pedestal *loaded, uint32_t rows, uint32_t cols,
                      uint16_t adc_mask, uint32_t max_window, const char *path,
                      bool *with_mask, char *message);

#endif /* CLUSTERCORE_FILES_H */
