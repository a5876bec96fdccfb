/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device.h: the CUDA backend's state on the host, shared by its host
 * files: backend.cu (the device opened, its buffers, the pedestal and
 * gain map copied in and out), batches.cu (a batch's chunks through the
 * GPU), accumulators.cu (what the GPU keeps across batches) and fault.cu
 * (failures planted for tests).
 */
#ifndef CLUSTERCORE_CUDA_DEVICE_H
#define CLUSTERCORE_CUDA_DEVICE_H

#include <cuda_runtime.h>

#include "backend.h"
#include "fault.h"
#include "kernels.h"

struct slot {
    cudaStream_t copy;
    cudaEvent_t ready, decided, extracted, downloaded;
    uint16_t *frames;  /* device: chunk_frames frames */
    uint16_t *staging; /* page-locked: for callers' pageable frames */
    void *v_planes;    /* device: a v plane per frame */
    uint32_t *bitmaps; /* device: a centre bitmap per frame, kept zero */
    uint32_t *counts;  /* device: centres per frame, kept zero */
    uint16_t *cluster_x, *cluster_y; /* device: the chunk's clusters */
    int32_t *cluster_values;
    size_t cluster_capacity;
    /* With common mode on (device): each frame's values per region, and
     * the estimate's scratch (docs/spec.md §8.2). */
    void *common_mode;
    cc__common_mode_work common_mode_work;
};

/* The per-pixel planes a batch reads but does not change. */
struct fixed_planes {
    uint16_t *baseline; /* X0 */
    uint8_t *mask;      /* docs/spec.md §7.1, 0 = good */
    /* The common mode's reference r_ref and rms_ref (docs/spec.md §8.2),
     * with common mode on. */
    void *reference_offset, *reference_rms;
};

/* Counts the GPU adds to across batches until the host takes them. */
struct device_tally {
    unsigned long long *counts;
    size_t n;
    unsigned long long *totals; /* what became of the photons */
    size_t n_totals;
};

/* The interpolated image the GPU keeps (docs/spec.md §7.7). */
struct device_imaging {
    cc__image_map map; /* its tables point at the arrays below */
    double *fx, *fy;
    uint8_t *row_empty, *column_empty;
    struct device_tally image; /* one count a bin of the image; photons,
                                      uninterpolable, clipped, outside */
};

/* A flat field's per-pixel spectra the GPU keeps (docs/spec.md §9.3). */
struct device_spectra {
    cc__gain_binning binning;
    uint32_t cols;
    struct device_tally spectra; /* binning.bins counts a pixel; photons,
                                    outside */
};

/* The spectrum and hit map the GPU keeps (docs/spec.md §4.5-§4.6). */
struct device_counting {
    cc__tally_binning binning;
    struct device_tally counts; /* the spectrum's bins, then one a pixel
                                   of the hit map; underflow, overflow,
                                   outside the window */
};

struct cc__cuda {
    int device;
    cc_precision precision;
    size_t pixels, real_size, bitmap_words;
    cc__regions regions; /* of the common mode; count 0 when off */
    cudaStream_t compute, output, download;
    unsigned n_slots;
    struct slot slots[CC_STREAMS_MAX];
    uint32_t chunk_frames;
    cc__launch_shape shape;
    int copies; /* CC__COPIES_*: how copies of several buffers go */
    cc__frame_geometry shape_geometry; /* the cluster size shapes fit */
    size_t shared_limit;      /* shared memory a decide block may use */
    fixed_planes fixed;       /* device: what batches read */
    fixed_planes fixed_spare; /* device: where an upload goes first */
    void *gain;               /* device: the factors k of docs/spec.md §9, a
                            real a pixel; NULL without a gain map */
    void *state[3][2];        /* device: [buffer][s or s2] */
    int committed;            /* index of the committed buffer */
    uint32_t window;          /* the pedestal's N, from the last upload */
    size_t cells;             /* values a cluster */
    size_t slot_clusters;     /* clusters each slot's arrays hold */
    uint64_t *chunk_totals;   /* page-locked: clusters per chunk of a batch */
    uint64_t *device_totals;  /* the same on the device, for the image
                                kernel (a host read a block cost more
                                than the kernel's work) */
    size_t totals_capacity;
    uint32_t *stored, *dropped; /* page-locked: per frame of a batch */
    /* page-locked, with common mode on: per region of each frame of a
     * batch, its value and whether it was estimated */
    void *batch_common_mode;
    uint8_t *batch_estimated;
    size_t frames_capacity;
    bool dirty; /* a failed batch may have left bitmaps or counts set */
    struct device_imaging *imaging;   /* NULL: no imaging */
    struct device_spectra *spectra;   /* NULL: no flat field's spectra */
    struct device_counting *counting; /* NULL: no spectrum or hit map */
    /* device, docs/spec.md §4.8: the analog image's sums, and a batch's
     * (added in when it succeeds); NULL: off */
    double *analog, *analog_batch;
    uint8_t *chunk_entered; /* per chunk of a batch: its clusters are in
                              the image, spectra and counts (a batch run
                              again skips them) */
    struct cc__fault fault; /* planted (CC_CUDA_FAULT), for tests */
    uint64_t batches;       /* batches begun, to find the faulty one */
    uint64_t replacements;  /* accumulators replaced, for a "sync" fault */
    bool lost;              /* a planted "lost" fault: every call fails */
};

/* Whether batches add their clusters to what the GPU keeps across them. */
static inline bool accumulating(const struct cc__cuda *cuda)
{
    return cuda->imaging != NULL || cuda->spectra != NULL ||
           cuda->counting != NULL;
}

/* Records a CUDA failure in message and returns CC_EDEVICE. */
static inline int cuda_failure(char *message, const char *what,
                               cudaError_t error)
{
    return cc__message(message, CC_EDEVICE, "CUDA: %s: %s", what,
                       cudaGetErrorString(error));
}

/* What every call does on a GPU that a planted "lost" fault took away. */
#define REFUSE_IF_LOST(cuda)                                                   \
    do {                                                                       \
        if ((cuda)->lost)                                                      \
            return cc__message(message, CC_EDEVICE,                            \
                               "CUDA: the GPU is lost (planted by "            \
                               "CC_CUDA_FAULT)");                              \
    } while (0)

#define CUDA_TRY(call, what)                                                   \
    do {                                                                       \
        cudaError_t cuda_try_error = (call);                                   \
        if (cuda_try_error != cudaSuccess)                                     \
            return cuda_failure(message, (what), cuda_try_error);              \
    } while (0)

/* backend.cu: a slot's cluster arrays made to hold cuda->slot_clusters
 * clusters; the common-mode estimate's scratch zeroed. */
int cc__cuda_allocate_slot_clusters(struct cc__cuda *cuda, struct slot *slot,
                                    char *message);
int cc__cuda_clear_common_mode_work(const cc__common_mode_work *work,
                                    char *message);

/* accumulators.cu: a chunk's photons imaged, entered into the flat
 * field's spectra and counted (launches on the output stream, after its
 * extraction), unless an earlier run of the batch did; after a failed
 * batch, what the GPU accumulated emptied (message says so); all of it
 * freed. */
int cc__cuda_enqueue_accumulators(struct cc__cuda *cuda, struct slot *slot,
                                  size_t chunk, uint32_t size_x,
                                  uint32_t size_y, char *message);
int cc__cuda_drop_accumulated(struct cc__cuda *cuda, int rc, char *message);
void cc__cuda_free_accumulators(struct cc__cuda *cuda);

/* fault.cu: the planted fault (fault.h), in a chunk's slot: a real CUDA
 * call made to fail; a "lost" fault loses the GPU from then on. And the
 * wait for the GPU's work before an accumulator is replaced
 * (cudaDeviceSynchronize), or the planted "sync" fault's failing call. */
int cc__fault_plant(struct cc__cuda *cuda, struct slot *slot, char *message);
cudaError_t cc__cuda_finish_work(struct cc__cuda *cuda);

#endif /* CLUSTERCORE_CUDA_DEVICE_H */
