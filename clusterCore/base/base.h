/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * base.h: what every folder of the core uses (clusterCore/base/): error
 * messages, growing arrays, a batch's frames, cluster lists, the thread
 * pool, the settings' derived figures. Internal symbols start with cc__
 * and are hidden from the shared library's interface. The layers above
 * include this through their own headers; nothing here knows them.
 */
#ifndef CLUSTERCORE_BASE_H
#define CLUSTERCORE_BASE_H

#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clustercore.h"

#ifndef CC__HD
#define CC__HD
#endif
#include "common_mode_regions.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "libclustercore reads and writes little-endian files in host order"
#endif

#ifdef __cplusplus /* the CUDA backend's host code is CUDA C++ */
extern "C" {
#endif

/* Formats a message into a CC_MESSAGE_SIZE buffer (NULL is allowed) and
 * returns code, so that a failure is reported in one statement. */
int cc__message(char *message, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Returns array grown to hold at least needed elements (array itself if
 * it already does), or NULL with array untouched. Capacities double, so a
 * run reallocates only a logarithmic number of times. */
void *cc__grow(void *array, size_t *capacity, size_t needed,
               size_t element_size);

/* The thread count that 0 (one per online CPU) or n stands for. */
unsigned cc__resolve_threads(uint32_t threads);

/* c3nsigma = sqrt(Nx * Ny) * nsigma, computed once in double as docs/spec.md says;
 * every backend rounds it to its precision (config.c). */
double cc__c3nsigma(const cc_config *config);

/* Where a batch's frames lie: back to back from `first`, or, when `each`
 * is not NULL, frame k at each[k] (an areaDetector plugin's queued
 * arrays, for instance). */
struct cc__frames {
    const uint16_t *first;
    const uint16_t *const *each;
    size_t pixels; /* of one frame */
    /* Pedestal frames (docs/spec.md §2.7): every unmasked pixel is
     * quiet and none is a centre. */
    bool pedestal_only;
};

static inline const uint16_t *cc__frame_at(const struct cc__frames *frames,
                                           size_t k)
{
    return frames->each != NULL ? frames->each[k]
                                : frames->first + k * frames->pixels;
}

/* What a batch asks of a backend (cpu/, cuda/): its frames, their
 * numbers (NULL: first_number, first_number + 1, ...), the list their
 * clusters go into and, with common mode on, room for each frame's
 * figures: common_mode (n_frames * regions reals of the working
 * precision) and estimated (as many bytes). */
struct cc__batch_request {
    const cc_config *config;
    const struct cc__frames *frames;
    const uint64_t *numbers;
    uint64_t first_number;
    size_t n_frames;
    cc_clusters *out;
    void *common_mode;
    uint8_t *estimated;
};

/* ---- cluster lists (clusters.c) ---- */

struct cc__frame_entry {
    uint64_t number;
    size_t first;     /* index of the frame's first cluster */
    uint32_t count;   /* clusters stored */
    uint32_t dropped; /* clusters counted beyond the cap */
};

/* How a cluster list allocates its arrays. Page-locked memory lets the
 * CUDA backend write clusters into them straight from the GPU. */
struct cc__allocator {
    /* Like realloc, with the old size given; NULL leaves memory as it was. */
    void *(*resize)(void *memory, size_t old_size, size_t new_size);
    void (*release)(void *memory);
};
extern const struct cc__allocator cc__heap_allocator;
/* Page-locked and mapped into the GPU's address space (CUDA builds). */
extern const struct cc__allocator cc__pinned_allocator;

struct cc_clusters {
    const struct cc__allocator *allocator; /* for x, y and values */
    uint32_t size_x, size_y;
    struct cc__frame_entry *frames;
    size_t n_frames, frames_capacity;
    uint16_t *x, *y;
    int32_t *values; /* size_x * size_y per cluster */
    size_t n_clusters;
    size_t x_capacity, y_capacity, values_capacity; /* in elements */
};

/* CC_OK if size_x x size_y is a cluster size (odd, CC_CLUSTER_SIZE_MIN..MAX
 * a side), else CC_EINVAL with message saying so. */
int cc__cluster_size_check(uint32_t size_x, uint32_t size_y, char *message);
/* Empties the list (keeping its memory) for clusters of size_x * size_y. */
void cc__clusters_clear(cc_clusters *clusters, uint32_t size_x,
                        uint32_t size_y);
/* Frees the cluster arrays and allocates them with allocator from now on
 * (the list keeps its frames' entries only if it holds no clusters). */
void cc__clusters_set_allocator(cc_clusters *clusters,
                                const struct cc__allocator *allocator);
/* Makes room for needed clusters of the list's size. */
int cc__clusters_reserve(cc_clusters *clusters, size_t needed);
/* How many clusters of the list's size all three arrays hold now. */
size_t cc__clusters_capacity(const cc_clusters *clusters);
/* Opens a new frame; later pushes go into it. */
int cc__clusters_begin_frame(cc_clusters *clusters, uint64_t number);
/* Adds a cluster to the last frame and points *values at its size_x *
 * size_y values to fill; when the frame already holds max_clusters (0 = no
 * cap) the cluster is only counted as dropped and *values is NULL. */
int cc__clusters_push(cc_clusters *clusters, uint32_t max_clusters, uint16_t x,
                      uint16_t y, int32_t **values);
/* Appends frame src_frame of src to the last frame of dst, under the cap. */
int cc__clusters_append(cc_clusters *dst, const cc_clusters *src,
                        size_t src_frame, uint32_t max_clusters);
/* Where one list's clusters of a frame go in another. */
struct cc__placement {
    size_t at;      /* dst's index of the first */
    uint32_t count; /* those kept under the cap */
};
/* The first half of cc__clusters_append: makes room and counts, copies
 * nothing. cc__clusters_copy_placed does the copy, on any thread, once
 * every placement into dst is made (until then dst's arrays may move). */
int cc__clusters_place(cc_clusters *dst, const cc_clusters *src,
                       size_t src_frame, uint32_t max_clusters,
                       struct cc__placement *placement);
void cc__clusters_copy_placed(cc_clusters *dst, const cc_clusters *src,
                              size_t src_frame,
                              const struct cc__placement *placement);

/* ---- thread pool (thread_pool.c) ---- */

struct cc__pool;
int cc__pool_new(struct cc__pool **pool, unsigned threads);
void cc__pool_destroy(struct cc__pool *pool);
unsigned cc__pool_threads(const struct cc__pool *pool);
/* Runs task(context, t) on every thread t (0 is the caller) and returns
 * when all have returned. */
void cc__pool_run(struct cc__pool *pool, void (*task)(void *, unsigned),
                  void *context);
/* Waits within the running task until done(argument) holds, a condition
 * other threads of the task make true with sequentially consistent
 * stores followed by cc__pool_notify; false when the task was abandoned
 * instead. Spins first, then sleeps. */
bool cc__pool_wait_until(struct cc__pool *pool, bool (*done)(void *),
                         void *argument);
void cc__pool_notify(struct cc__pool *pool);
/* Ends every wait of the running task (a thread failed). */
void cc__pool_abandon(struct cc__pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* CLUSTERCORE_BASE_H */
