/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * copy_ceiling.h: the rate at which copies alone move page-locked frames
 * to the GPU, a finder's output back, or both at once, which bounds any
 * GPU finder fed from host memory: the benchmark's ceilings. Built only
 * with the CUDA backend.
 */
#ifndef COPY_CEILING_H
#define COPY_CEILING_H

#include <stddef.h>
#include <stdint.h>

/* Frames per second of copies that move, for each frame, in_bytes from
 * the page-locked frames (n_frames of them, each in_bytes long) to the
 * GPU and out_bytes from the GPU to page-locked host memory, batch frames
 * per copy, the two directions at once on two streams; either size may
 * be 0. Runs for about seconds; returns a negative number if CUDA failed
 * (message says why). */
double copy_ceiling(const uint16_t *frames, size_t in_bytes, size_t out_bytes,
                    size_t n_frames, size_t batch, double seconds,
                    char *message, size_t message_size);

#endif
