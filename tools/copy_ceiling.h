/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * copy_ceiling.h: the host-to-device copy rate of page-locked frames,
 * which bounds any GPU finder fed from host memory: the benchmark's
 * ceiling. Built only with the CUDA backend.
 */
#ifndef COPY_CEILING_H
#define COPY_CEILING_H

#include <stddef.h>
#include <stdint.h>

/* Copies n_frames frames of frame_bytes from page-locked frames to the
 * GPU, batch frames per copy, for about seconds; returns frames per
 * second, or a negative number if CUDA failed (message says why). */
double copy_ceiling(const uint16_t *frames, size_t frame_bytes,
                    size_t n_frames, size_t batch, double seconds,
                    char *message, size_t message_size);

#endif
