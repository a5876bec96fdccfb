/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault.h: GPU failures planted on purpose, for the tests of what the
 * finder does when the GPU fails (docs/cuda.md, "Planted GPU faults").
 * CC_CUDA_FAULT=KIND:N plants it in every CUDA backend made while it is
 * set. For copy, launch and lost, batch N (counted from 1) fails halfway
 * through:
 *   copy    a copy of frames to the GPU fails (the GPU stays usable);
 *   launch  a kernel launch fails (the GPU stays usable);
 *   lost    a kernel launch fails and the GPU then refuses everything, as
 *           one that fell off the bus: the pedestal cannot come back.
 * For sync, the N-th replacement of an accumulator the GPU keeps (the
 * image, the spectra, the spectrum and hit map, the analog image) fails
 * at its wait for the GPU's work, after the new one was made: what was
 * made must be freed, and the one in force kept.
 * The failures are real CUDA errors from real calls, not return codes
 * made up, so the backend's own error paths run.
 */
#ifndef CC_CUDA_FAULT_H
#define CC_CUDA_FAULT_H

#include <stdint.h>

#include <cuda_runtime.h>

enum cc__fault_kind {
    CC__FAULT_NONE = 0,
    CC__FAULT_COPY,
    CC__FAULT_LAUNCH,
    CC__FAULT_LOST,
    CC__FAULT_SYNC
};

struct cc__fault {
    enum cc__fault_kind kind;
    uint64_t batch; /* the batch (or replacement) that fails, from 1 */
};

/* Reads CC_CUDA_FAULT into fault (kind NONE when unset); CC_EINVAL with
 * the reason in message when it is set but not KIND:BATCH. */
int cc__fault_from_environment(struct cc__fault *fault, char *message);
/* Makes a CUDA call on stream fail as kind says and returns its error:
 * a copy to a null address, or a launch of a grid of no blocks. */
cudaError_t cc__fault_inject(enum cc__fault_kind kind, void *device_buffer,
                             cudaStream_t stream);

#endif
