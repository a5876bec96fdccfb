/* SPDX-License-Identifier: BSD-3-Clause */
/* clusters.c: growable per-batch cluster lists that keep their memory. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

static void *heap_resize(void *memory, size_t old_size, size_t new_size)
{
    (void)old_size;
    return realloc(memory, new_size);
}

const struct cc__allocator cc__heap_allocator = {heap_resize, free};

int cc_clusters_new(cc_clusters **clusters)
{
    if (clusters == NULL)
        return CC_EINVAL;
    *clusters = calloc(1, sizeof **clusters);
    if (*clusters == NULL)
        return CC_ENOMEM;
    (*clusters)->allocator = &cc__heap_allocator;
    return CC_OK;
}

static void release_arrays(cc_clusters *clusters)
{
    clusters->allocator->release(clusters->x);
    clusters->allocator->release(clusters->y);
    clusters->allocator->release(clusters->values);
    clusters->x = clusters->y = NULL;
    clusters->values = NULL;
    clusters->x_capacity = clusters->y_capacity = 0;
    clusters->values_capacity = 0;
}

void cc_clusters_destroy(cc_clusters *clusters)
{
    if (clusters == NULL)
        return;
    release_arrays(clusters);
    free(clusters->frames);
    free(clusters);
}

void cc__clusters_set_allocator(cc_clusters *clusters,
                                const struct cc__allocator *allocator)
{
    if (clusters->allocator == allocator)
        return;
    release_arrays(clusters);
    clusters->allocator = allocator;
    clusters->n_clusters = 0;
}

size_t cc_clusters_frame_count(const cc_clusters *clusters)
{
    return clusters == NULL ? 0 : clusters->n_frames;
}

size_t cc_clusters_total(const cc_clusters *clusters)
{
    return clusters == NULL ? 0 : clusters->n_clusters;
}

int cc_clusters_frame(const cc_clusters *clusters, size_t index,
                      cc_frame_clusters *frame)
{
    if (clusters == NULL || frame == NULL || index >= clusters->n_frames)
        return CC_EINVAL;
    const struct cc__frame_entry *entry = &clusters->frames[index];
    size_t cells = (size_t)clusters->size_x * clusters->size_y;
    /* A list of empty frames may have no cluster arrays yet, and C leaves
     * even NULL + 0 undefined (found by fuzzing the .clust reader). */
    bool arrays = clusters->x != NULL;
    *frame = (cc_frame_clusters){
        .frame_number = entry->number,
        .count = entry->count,
        .dropped = entry->dropped,
        .size_x = clusters->size_x,
        .size_y = clusters->size_y,
        .x = arrays ? clusters->x + entry->first : NULL,
        .y = arrays ? clusters->y + entry->first : NULL,
        .values = arrays ? clusters->values + entry->first * cells : NULL,
    };
    return CC_OK;
}

int cc__cluster_size_check(uint32_t size_x, uint32_t size_y, char *message)
{
    bool valid = size_x % 2 == 1 && size_y % 2 == 1 &&
                 size_x >= CC_CLUSTER_SIZE_MIN &&
                 size_y >= CC_CLUSTER_SIZE_MIN &&
                 size_x <= CC_CLUSTER_SIZE_MAX && size_y <= CC_CLUSTER_SIZE_MAX;
    return valid ? CC_OK
                 : cc__message(message, CC_EINVAL,
                               "cluster size %" PRIu32 " x %" PRIu32
                               " must be odd and %d..%d a side",
                               size_x, size_y, CC_CLUSTER_SIZE_MIN,
                               CC_CLUSTER_SIZE_MAX);
}

int cc_clusters_append_frame(cc_clusters *clusters,
                             const cc_frame_clusters *frame, char *message)
{
    if (clusters == NULL || frame == NULL)
        return cc__message(message, CC_EINVAL, "a list and a frame are needed");
    int rc = cc__cluster_size_check(frame->size_x, frame->size_y, message);
    if (rc != CC_OK)
        return rc;
    if (clusters->n_frames > 0 && (frame->size_x != clusters->size_x ||
                                   frame->size_y != clusters->size_y))
        return cc__message(message, CC_EINVAL,
                           "the frame's clusters are %" PRIu32 " x %" PRIu32
                           ", the list's %" PRIu32 " x %" PRIu32,
                           frame->size_x, frame->size_y, clusters->size_x,
                           clusters->size_y);
    if (frame->count > 0 &&
        (frame->x == NULL || frame->y == NULL || frame->values == NULL))
        return cc__message(message, CC_EINVAL,
                           "%" PRIu32 " clusters to copy, and no arrays",
                           frame->count);
    if (clusters->n_frames == 0)
        cc__clusters_clear(clusters, frame->size_x, frame->size_y);
    /* Room first: a failure leaves the list as it was. */
    if (cc__clusters_reserve(clusters, clusters->n_clusters + frame->count) !=
            CC_OK ||
        cc__clusters_begin_frame(clusters, frame->frame_number) != CC_OK)
        return cc__message(message, CC_ENOMEM,
                           "out of memory for %" PRIu32 " clusters",
                           frame->count);
    struct cc__frame_entry *entry = &clusters->frames[clusters->n_frames - 1];
    if (frame->count > 0) {
        size_t at = clusters->n_clusters;
        size_t cells = (size_t)frame->size_x * frame->size_y;
        memcpy(clusters->x + at, frame->x, frame->count * sizeof *frame->x);
        memcpy(clusters->y + at, frame->y, frame->count * sizeof *frame->y);
        memcpy(clusters->values + at * cells, frame->values,
               frame->count * cells * sizeof *frame->values);
    }
    clusters->n_clusters += frame->count;
    entry->count = frame->count;
    entry->dropped = frame->dropped;
    return CC_OK;
}

void cc__clusters_clear(cc_clusters *clusters, uint32_t size_x, uint32_t size_y)
{
    clusters->size_x = size_x;
    clusters->size_y = size_y;
    clusters->n_frames = 0;
    clusters->n_clusters = 0;
}

/* Returns array grown to hold at least needed elements (array itself if
 * it already does), or NULL with array untouched. Capacities double, so a
 * run reallocates only a logarithmic number of times. */
static void *grow(const struct cc__allocator *allocator, void *array,
                  size_t *capacity, size_t needed, size_t element_size)
{
    if (needed <= *capacity)
        return array;
    size_t next = *capacity < 64 ? 64 : *capacity;
    while (next < needed)
        next = next > SIZE_MAX / 2 ? needed : next * 2;
    if (next > SIZE_MAX / element_size)
        return NULL;
    void *grown = allocator->resize(array, *capacity * element_size,
                                    next * element_size);
    if (grown != NULL)
        *capacity = next;
    return grown;
}

void *cc__grow(void *array, size_t *capacity, size_t needed,
               size_t element_size)
{
    return grow(&cc__heap_allocator, array, capacity, needed, element_size);
}

/* Makes room for needed clusters. Each array keeps its own capacity, so
 * a failure part-way or a change of cluster size never leaves a capacity
 * that overstates its array. */
int cc__clusters_reserve(cc_clusters *clusters, size_t needed)
{
    size_t cells = (size_t)clusters->size_x * clusters->size_y;
    if (needed == 0)
        return CC_OK; /* cc__grow() would return the arrays, which may be NULL */
    if (needed > SIZE_MAX / cells)
        return CC_ENOMEM;
    const struct cc__allocator *allocator = clusters->allocator;
    uint16_t *x = grow(allocator, clusters->x, &clusters->x_capacity, needed,
                       sizeof *x);
    if (x == NULL)
        return CC_ENOMEM;
    clusters->x = x;
    uint16_t *y = grow(allocator, clusters->y, &clusters->y_capacity, needed,
                       sizeof *y);
    if (y == NULL)
        return CC_ENOMEM;
    clusters->y = y;
    int32_t *values = grow(allocator, clusters->values,
                           &clusters->values_capacity, needed * cells,
                           sizeof *values);
    if (values == NULL)
        return CC_ENOMEM;
    clusters->values = values;
    return CC_OK;
}

size_t cc__clusters_capacity(const cc_clusters *clusters)
{
    size_t cells = (size_t)clusters->size_x * clusters->size_y;
    size_t capacity = clusters->values_capacity / cells;
    if (clusters->x_capacity < capacity)
        capacity = clusters->x_capacity;
    if (clusters->y_capacity < capacity)
        capacity = clusters->y_capacity;
    return capacity;
}

int cc__clusters_begin_frame(cc_clusters *clusters, uint64_t number)
{
    struct cc__frame_entry *frames = grow(&cc__heap_allocator, clusters->frames,
                                          &clusters->frames_capacity,
                                          clusters->n_frames + 1,
                                          sizeof *frames);
    if (frames == NULL)
        return CC_ENOMEM;
    clusters->frames = frames;
    frames[clusters->n_frames++] = (struct cc__frame_entry){
        .number = number, .first = clusters->n_clusters};
    return CC_OK;
}

int cc__clusters_push(cc_clusters *clusters, uint32_t max_clusters, uint16_t x,
                      uint16_t y, int32_t **values)
{
    struct cc__frame_entry *frame = &clusters->frames[clusters->n_frames - 1];
    *values = NULL;
    if (max_clusters != 0 && frame->count >= max_clusters) {
        frame->dropped++;
        return CC_OK;
    }
    int rc = cc__clusters_reserve(clusters, clusters->n_clusters + 1);
    if (rc != CC_OK)
        return rc;
    size_t i = clusters->n_clusters++;
    clusters->x[i] = x;
    clusters->y[i] = y;
    *values = clusters->values + i * clusters->size_x * clusters->size_y;
    frame->count++;
    return CC_OK;
}

int cc__clusters_place(cc_clusters *dst, const cc_clusters *src,
                       size_t src_frame, uint32_t max_clusters,
                       struct cc__placement *placement)
{
    struct cc__frame_entry *frame = &dst->frames[dst->n_frames - 1];
    const struct cc__frame_entry *from = &src->frames[src_frame];
    uint32_t room = from->count;
    if (max_clusters != 0)
        room = frame->count >= max_clusters ? 0 : max_clusters - frame->count;
    uint32_t take = from->count < room ? from->count : room;
    int rc = cc__clusters_reserve(dst, dst->n_clusters + take);
    if (rc != CC_OK)
        return rc;
    *placement = (struct cc__placement){.at = dst->n_clusters, .count = take};
    dst->n_clusters += take;
    frame->count += take;
    frame->dropped += from->dropped + (from->count - take);
    return CC_OK;
}

void cc__clusters_copy_placed(cc_clusters *dst, const cc_clusters *src,
                              size_t src_frame,
                              const struct cc__placement *placement)
{
    if (placement->count == 0)
        return; /* the arrays may still be NULL */
    size_t first = src->frames[src_frame].first;
    size_t cells = (size_t)dst->size_x * dst->size_y;
    memcpy(dst->x + placement->at, src->x + first,
           placement->count * sizeof *dst->x);
    memcpy(dst->y + placement->at, src->y + first,
           placement->count * sizeof *dst->y);
    memcpy(dst->values + placement->at * cells, src->values + first * cells,
           placement->count * cells * sizeof *dst->values);
}

int cc__clusters_append(cc_clusters *dst, const cc_clusters *src,
                        size_t src_frame, uint32_t max_clusters)
{
    struct cc__placement placement;
    int rc = cc__clusters_place(dst, src, src_frame, max_clusters, &placement);
    if (rc == CC_OK)
        cc__clusters_copy_placed(dst, src, src_frame, &placement);
    return rc;
}
