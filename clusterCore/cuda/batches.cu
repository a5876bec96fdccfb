/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * batches.cu: a batch through the GPU. It is cut into chunks of frames;
 * each chunk takes one of `streams` slots (its own device buffers and
 * copy stream), so that copying chunk j+1 in overlaps deciding chunk j
 * and extracting chunk j-1. Deciding runs on one stream, a launch of up
 * to `steps` frames after another, because frame k must see the pedestal
 * left by frame k-1; the extraction of clusters runs on a second stream,
 * chunk after chunk, because each chunk appends after the last.
 *
 * The state rotates through three device buffers: the committed one, read
 * by the batch's first launch, and two that the launches write in turn.
 * The committed index moves only when the whole batch succeeded, so a
 * failed batch leaves the pedestal as it was.
 *
 * A chunk's clusters are extracted into its slot's device arrays; once the
 * host has read how many there are, the copy engine moves them into the
 * caller's cluster list (kept in page-locked memory) on a download
 * stream, while later chunks are decided. The host reads each chunk's
 * count `streams` chunks behind the one it enqueues, so the GPU never
 * waits for it. A slot whose arrays are too small makes the batch run
 * again after they grow.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

/* Replaces *memory by `bytes` of mapped page-locked memory (NULL on
 * failure). */
static int remap_host(void **memory, size_t bytes, char *message)
{
    cudaFreeHost(*memory);
    *memory = NULL;
    CUDA_TRY(cudaHostAlloc(memory, bytes,
                           cudaHostAllocMapped | cudaHostAllocPortable),
             "allocating per-batch counts");
    return CC_OK;
}

/* Makes the per-batch arrays hold n_frames frames and n_chunks chunks. */
static int reserve_batch(struct cc__cuda *cuda, size_t n_frames,
                         size_t n_chunks, char *message)
{
    if (n_frames > cuda->frames_capacity) {
        size_t capacity = n_frames < 1024 ? 1024 : n_frames;
        cuda->frames_capacity = 0;
        size_t cells = capacity * cuda->regions.count;
        int rc = remap_host((void **)&cuda->stored, capacity * 4, message);
        if (rc == CC_OK)
            rc = remap_host((void **)&cuda->dropped, capacity * 4, message);
        if (rc == CC_OK && cells > 0)
            rc = remap_host(&cuda->batch_common_mode, cells * cuda->real_size,
                            message);
        if (rc == CC_OK && cells > 0)
            rc = remap_host((void **)&cuda->batch_estimated, cells, message);
        if (rc != CC_OK)
            return rc;
        cuda->frames_capacity = capacity;
    }
    if (n_chunks > cuda->totals_capacity) {
        size_t capacity = n_chunks < 64 ? 64 : n_chunks;
        cuda->totals_capacity = 0;
        int rc = remap_host((void **)&cuda->chunk_totals, capacity * 8,
                            message);
        if (rc != CC_OK)
            return rc;
        cudaFree(cuda->device_totals);
        cuda->device_totals = NULL;
        CUDA_TRY(cudaMalloc(&cuda->device_totals, capacity * 8),
                 "allocating per-batch counts");
        uint8_t *entered = (uint8_t *)realloc(cuda->chunk_entered, capacity);
        if (entered == NULL)
            return cc__message(message, CC_ENOMEM, "no memory for %zu chunks",
                               capacity);
        cuda->chunk_entered = entered;
        cuda->totals_capacity = capacity;
    }
    return CC_OK;
}

/* Everything one batch needs to enqueue its chunks. */
struct batch {
    struct cc__frames frames;
    size_t n_frames;
    cc__frame_geometry geometry;
    uint32_t max_clusters;
    cc_clusters *out;
    size_t launches;         /* decide launches enqueued so far */
    size_t placed;           /* clusters copied (or on their way) into out */
    size_t slot_clusters;    /* a slot's arrays need this many (0: they did) */
    size_t entries_enqueued; /* chunks whose image and spectra launches are
                              enqueued */
    size_t fault_chunk;      /* the chunk a planted fault fails, or SIZE_MAX */
    uint32_t size_x, size_y;
};

/* The state buffer decide launch `launch` of a batch writes: the two
 * buffers other than the committed one, in turn. */
static int state_written(const struct cc__cuda *cuda, size_t launch)
{
    return (cuda->committed + 1 + (int)(launch % 2)) % 3;
}

/* Copies of several buffers, issued together. One copy costs the copy
 * engine a few microseconds besides its bytes, a third of a 400 x 400
 * frame's time on the bus; one cudaMemcpyBatchAsync of many buffers
 * costs about what one copy of them back to back does (docs/benchmarks.md,
 * "Frame lists"). */
enum { COPIES_MOST = 64 };
struct copies {
    size_t n;
    void *to[COPIES_MOST];
    const void *from[COPIES_MOST];
    size_t bytes[COPIES_MOST];
};

/* cudaMemcpyBatchAsync as CUDA 13 declares it; before 13 the call took
 * other arguments, and the copies are issued one by one. */
static cudaError_t copy_together(struct copies *copies, size_t n,
                                 cudaStream_t stream)
{
#if CUDART_VERSION >= 13000
    cudaMemcpyAttributes attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t first = 0;
    return cudaMemcpyBatchAsync(copies->to, copies->from, copies->bytes, n,
                                &attributes, &first, 1, stream);
#else
    (void)copies;
    (void)n;
    (void)stream;
    return cudaErrorNotSupported;
#endif
}

/* Enqueues the copies on stream and empties the list. */
static int flush_copies(struct cc__cuda *cuda, struct copies *copies,
                        cudaStream_t stream, const char *what, char *message)
{
    size_t n = copies->n;
    copies->n = 0;
    if (n == 0)
        return CC_OK;
    if (cuda->copies == CC__COPIES_BATCHED) {
        cudaError_t error = copy_together(copies, n, stream);
        bool unsupported = error == cudaErrorNotSupported ||
                           error == cudaErrorCallRequiresNewerDriver;
        if (!unsupported) {
            CUDA_TRY(error, what);
            return CC_OK;
        }
        /* A toolkit or driver without batched copies: one by one, from
         * now on. */
        cudaGetLastError();
        cuda->copies = CC__COPIES_EACH;
    }
    for (size_t i = 0; i < n; i++)
        CUDA_TRY(cudaMemcpyAsync(copies->to[i], copies->from[i],
                                 copies->bytes[i], cudaMemcpyDefault, stream),
                 what);
    return CC_OK;
}

/* Adds a copy; enqueues the list first when it is full. */
static int add_copy(struct cc__cuda *cuda, struct copies *copies, void *to,
                    const void *from, size_t bytes, cudaStream_t stream,
                    const char *what, char *message)
{
    if (copies->n == COPIES_MOST) {
        int rc = flush_copies(cuda, copies, stream, what, message);
        if (rc != CC_OK)
            return rc;
    }
    copies->to[copies->n] = to;
    copies->from[copies->n] = from;
    copies->bytes[copies->n] = bytes;
    copies->n++;
    return CC_OK;
}

/* Enqueues the copy of one chunk's frames into its slot, straight from
 * page-locked (or registered) memory, else through the slot's staging
 * buffer: one copy for back-to-back frames; for a list (its frames may
 * lie side by side in separate allocations, which one copy must not
 * span), its page-locked frames together (struct copies) and the others
 * one copy a frame. */
static int enqueue_copy(struct cc__cuda *cuda, struct slot *slot,
                        const struct batch *batch, size_t first, size_t count,
                        char *message)
{
    /* The frame buffer is free once the chunk before has been decided. */
    CUDA_TRY(cudaStreamWaitEvent(slot->copy, slot->decided, 0),
             "ordering a copy");
    bool staging_free = false;
    struct copies copies;
    copies.n = 0;
    const char *what = "copying frames to the GPU";
    for (size_t k = 0; k < count;) {
        const uint16_t *run = cc__frame_at(&batch->frames, first + k);
        size_t n = batch->frames.each == NULL ? count - k : 1;
        size_t bytes = n * cuda->pixels * 2;
        uint16_t *to = slot->frames + k * cuda->pixels;
        bool locked = cc_host_is_locked(run);
        if (batch->frames.each != NULL && locked) {
            int rc = add_copy(cuda, &copies, to, run, bytes, slot->copy, what,
                              message);
            if (rc != CC_OK)
                return rc;
            k++;
            continue;
        }
        const uint16_t *source = run;
        if (!locked) {
            /* The staging buffer is free once its last copy has completed. */
            if (!staging_free)
                CUDA_TRY(cudaEventSynchronize(slot->ready),
                         "waiting for a copy");
            staging_free = true;
            uint16_t *staged = slot->staging + k * cuda->pixels;
            memcpy(staged, run, bytes);
            source = staged;
        }
        CUDA_TRY(cudaMemcpyAsync(to, source, bytes, cudaMemcpyHostToDevice,
                                 slot->copy),
                 "copying frames to the GPU");
        k += n;
    }
    return flush_copies(cuda, &copies, slot->copy, what, message);
}

/* With common mode on, the chunk's estimates (docs/spec.md §8.2), into
 * the slot for its decisions and into the batch's figures for the host:
 * on the slot's copy stream, after its frames, so that they run beside
 * the decisions of the chunk before (they read only the frames and the
 * reference). Then the slot is ready to be decided. */
template <typename T>
static int enqueue_common_mode(struct cc__cuda *cuda, struct slot *slot,
                               const struct batch *batch, size_t first,
                               size_t count, char *message)
{
    size_t at = first * cuda->regions.count;
    if (cuda->regions.count > 0)
        CUDA_TRY(cc__launch_common_mode<T>(
                     batch->geometry, slot->common_mode_work, (uint32_t)count,
                     slot->frames, cuda->fixed.baseline, cuda->fixed.mask,
                     (const T *)cuda->fixed.reference_offset,
                     (const T *)cuda->fixed.reference_rms,
                     (T *)slot->common_mode, (T *)cuda->batch_common_mode + at,
                     cuda->batch_estimated + at, slot->copy),
                 "launching the common-mode kernels");
    CUDA_TRY(cudaEventRecord(slot->ready, slot->copy),
             "recording a chunk ready");
    return CC_OK;
}

template <typename T>
static int enqueue_decide(struct cc__cuda *cuda, struct slot *slot,
                          struct batch *batch, size_t count, char *message)
{
    CUDA_TRY(cudaStreamWaitEvent(cuda->compute, slot->ready, 0),
             "ordering the decisions");
    /* v planes, bitmaps and counts are free once extracted. */
    CUDA_TRY(cudaStreamWaitEvent(cuda->compute, slot->extracted, 0),
             "ordering the decisions");
    for (size_t i = 0; i < count; i += cuda->shape.steps) {
        size_t n = count - i < cuda->shape.steps ? count - i
                                                 : cuda->shape.steps;
        size_t launch = batch->launches++;
        int in = launch == 0 ? cuda->committed
                             : state_written(cuda, launch - 1);
        int out = state_written(cuda, launch);
        CUDA_TRY(cc__launch_decide<T>(
                     batch->geometry, cuda->shape, cuda->shared_limit,
                     (uint32_t)n, slot->frames + i * cuda->pixels,
                     cuda->fixed.baseline, cuda->fixed.mask,
                     (const T *)cuda->state[in][0],
                     (const T *)cuda->state[in][1], (T *)cuda->state[out][0],
                     (T *)cuda->state[out][1],
                     cuda->regions.count > 0 ? (const T *)slot->common_mode +
                                                   i * cuda->regions.count
                                             : NULL,
                     (const T *)cuda->gain,
                     (T *)slot->v_planes + i * cuda->pixels,
                     slot->bitmaps + i * cuda->bitmap_words, slot->counts + i,
                     cuda->compute),
                 "launching the decide kernel");
    }
    CUDA_TRY(cudaEventRecord(slot->decided, cuda->compute),
             "recording the decisions");
    return CC_OK;
}

template <typename T>
static int enqueue_extract(struct cc__cuda *cuda, struct slot *slot,
                           const struct batch *batch, size_t chunk,
                           size_t first, size_t count, char *message)
{
    CUDA_TRY(cudaStreamWaitEvent(cuda->output, slot->decided, 0),
             "ordering the extraction");
    /* The slot's cluster arrays are free once copied out. */
    CUDA_TRY(cudaStreamWaitEvent(cuda->output, slot->downloaded, 0),
             "ordering the extraction");
    cc__cluster_output output;
    output.x = slot->cluster_x;
    output.y = slot->cluster_y;
    output.values = slot->cluster_values;
    output.capacity = slot->cluster_capacity;
    output.stored = cuda->stored;
    output.dropped = cuda->dropped;
    output.total = cuda->chunk_totals + chunk;
    output.device_total = cuda->device_totals + chunk;
    CUDA_TRY(cc__launch_extract<T>(batch->geometry, (uint32_t)count,
                                   slot->bitmaps, (const T *)slot->v_planes,
                                   slot->counts, batch->max_clusters, output,
                                   (uint32_t)first, cuda->output),
             "launching the extract kernel");
    CUDA_TRY(cudaMemsetAsync(slot->counts, 0, count * 4, cuda->output),
             "clearing counts");
    /* Before the v planes are free for the slot's next frames. */
    if (cuda->analog != NULL && !batch->geometry.pedestal_only)
        CUDA_TRY(cc__launch_analog<T>((const T *)slot->v_planes,
                                      (uint32_t)count, cuda->pixels,
                                      cuda->analog_batch, cuda->output),
                 "launching the analog kernel");
    CUDA_TRY(cudaEventRecord(slot->extracted, cuda->output),
             "recording the extraction");
    return CC_OK;
}

/* Points out's arrays at page-locked memory for needed clusters. */
static int prepare_output(cc_clusters *out, size_t needed, char *message)
{
    cc__clusters_set_allocator(out, &cc__pinned_allocator);
    if (cc__clusters_reserve(out, needed) != CC_OK)
        return cc__message(message, CC_ENOMEM,
                           "no page-locked memory for %zu clusters", needed);
    return CC_OK;
}

/* Waits for a chunk's extraction and enqueues the copy of its clusters to
 * the end of the caller's list, growing the list first if it must. */
static int download_chunk(struct cc__cuda *cuda, struct batch *batch,
                          size_t chunk, char *message)
{
    struct slot *slot = &cuda->slots[chunk % cuda->n_slots];
    CUDA_TRY(cudaEventSynchronize(slot->extracted), "extracting clusters");
    size_t total = (size_t)((volatile uint64_t *)cuda->chunk_totals)[chunk];
    if (total <= slot->cluster_capacity)
        cuda->chunk_entered[chunk] = 1; /* (when accumulating) */
    if (total > slot->cluster_capacity && total > batch->slot_clusters)
        batch->slot_clusters = total;
    if (batch->slot_clusters != 0)
        return CC_OK; /* the batch runs again: copying is wasted */
    cc_clusters *out = batch->out;
    if (batch->placed + total > cc__clusters_capacity(out)) {
        /* Copies in flight write the arrays that growing moves. */
        CUDA_TRY(cudaStreamSynchronize(cuda->download), "copying clusters");
        size_t needed = batch->placed + total;
        int rc = prepare_output(out, needed + needed / 2, message);
        if (rc != CC_OK)
            return rc;
    }
    if (total != 0) {
        size_t at = batch->placed;
        struct copies copies = {
            3,
            {out->x + at, out->y + at, out->values + at * cuda->cells},
            {slot->cluster_x, slot->cluster_y, slot->cluster_values},
            {total * 2, total * 2, total * cuda->cells * 4}};
        int rc = flush_copies(cuda, &copies, cuda->download,
                              "copying clusters from the GPU", message);
        if (rc != CC_OK)
            return rc;
    }
    CUDA_TRY(cudaEventRecord(slot->downloaded, cuda->download),
             "recording a copy");
    batch->placed += total;
    return CC_OK;
}

/* Enqueues every chunk of the batch, downloading each chunk's clusters
 * `streams` chunks later, and waits for the last. */
template <typename T>
static int run_batch(struct cc__cuda *cuda, struct batch *batch, char *message)
{
    batch->launches = 0;
    batch->placed = 0;
    batch->slot_clusters = 0;
    batch->entries_enqueued = 0;
    /* A run again sums the batch again, from zero. */
    if (cuda->analog != NULL)
        CUDA_TRY(cudaMemsetAsync(cuda->analog_batch, 0,
                                 cuda->pixels * sizeof(double), cuda->output),
                 "clearing the batch's analog sums");
    size_t n_chunks = (batch->n_frames + cuda->chunk_frames - 1) /
                      cuda->chunk_frames;
    for (size_t chunk = 0; chunk < n_chunks; chunk++) {
        int rc = CC_OK;
        if (chunk >= cuda->n_slots)
            rc = download_chunk(cuda, batch, chunk - cuda->n_slots, message);
        size_t first = chunk * cuda->chunk_frames;
        size_t count = batch->n_frames - first < cuda->chunk_frames
                           ? batch->n_frames - first
                           : cuda->chunk_frames;
        struct slot *slot = &cuda->slots[chunk % cuda->n_slots];
        if (rc == CC_OK && chunk == batch->fault_chunk) {
            batch->fault_chunk = SIZE_MAX; /* once */
            rc = cc__fault_plant(cuda, slot, message);
        }
        if (rc == CC_OK)
            rc = enqueue_copy(cuda, slot, batch, first, count, message);
        if (rc == CC_OK)
            rc = enqueue_common_mode<T>(cuda, slot, batch, first, count,
                                        message);
        if (rc == CC_OK)
            rc = enqueue_decide<T>(cuda, slot, batch, count, message);
        if (rc == CC_OK)
            rc = enqueue_extract<T>(cuda, slot, batch, chunk, first, count,
                                    message);
        if (rc == CC_OK)
            rc = cc__cuda_enqueue_accumulators(cuda, slot, chunk, batch->size_x,
                                               batch->size_y, message);
        if (rc != CC_OK)
            return rc;
        batch->entries_enqueued = chunk + 1;
    }
    size_t behind = n_chunks > cuda->n_slots ? n_chunks - cuda->n_slots : 0;
    for (size_t chunk = behind; chunk < n_chunks; chunk++) {
        int rc = download_chunk(cuda, batch, chunk, message);
        if (rc != CC_OK)
            return rc;
    }
    CUDA_TRY(cudaStreamSynchronize(cuda->download), "copying clusters");
    CUDA_TRY(cudaStreamSynchronize(cuda->compute), "running the batch");
    return CC_OK;
}

/* Gives every slot cluster arrays of `clusters` clusters. */
static int grow_slot_clusters(struct cc__cuda *cuda, size_t clusters,
                              char *message)
{
    CUDA_TRY(cudaDeviceSynchronize(), "finishing the GPU's work");
    cuda->slot_clusters = clusters;
    for (unsigned i = 0; i < cuda->n_slots; i++) {
        int rc = cc__cuda_allocate_slot_clusters(cuda, &cuda->slots[i],
                                                 message);
        if (rc != CC_OK)
            return rc;
    }
    return CC_OK;
}

/* Clears what a failed batch may have left in the slots. */
static int clear_slots(struct cc__cuda *cuda, char *message)
{
    cudaDeviceSynchronize();
    /* A call that failed without harming the GPU leaves its error to be
     * read: it must not be taken for the next launch's. */
    cudaGetLastError();
    for (unsigned i = 0; i < cuda->n_slots; i++) {
        CUDA_TRY(cudaMemset(cuda->slots[i].bitmaps, 0,
                            cuda->chunk_frames * cuda->bitmap_words * 4),
                 "clearing centre bitmaps");
        CUDA_TRY(cudaMemset(cuda->slots[i].counts, 0, cuda->chunk_frames * 4),
                 "clearing counts");
        int rc = cc__cuda_clear_common_mode_work(
            &cuda->slots[i].common_mode_work, message);
        if (rc != CC_OK)
            return rc;
    }
    cuda->dirty = false;
    return CC_OK;
}

static int first_failure(int rc, struct cc__cuda *cuda)
{
    if (rc != CC_OK)
        cuda->dirty = true;
    return rc;
}

/* After a failed batch under CC_BACKEND_AUTO, which the CPU does again:
 * the image, spectra and counts keep the chunks the GPU entered, which
 * chunk_entered marks, for the CPU to skip (cc__cuda_frames_entered).
 * Unless the GPU cannot finish its work: then they cannot be taken
 * either. */
static int mark_entered(struct cc__cuda *cuda, const struct batch *batch,
                        int rc)
{
    if (!accumulating(cuda) || cudaDeviceSynchronize() != cudaSuccess)
        return rc;
    for (size_t chunk = 0; chunk < batch->entries_enqueued; chunk++)
        cuda->chunk_entered[chunk] |=
            cuda->chunk_totals[chunk] <=
            cuda->slots[chunk % cuda->n_slots].cluster_capacity;
    return rc;
}

void cc__cuda_frames_entered(const struct cc__cuda *cuda, size_t n_frames,
                             uint8_t *entered)
{
    for (size_t k = 0; k < n_frames; k++)
        entered[k] = accumulating(cuda) &&
                     cuda->chunk_entered[k / cuda->chunk_frames];
}

int cc__cuda_process(struct cc__cuda *cuda,
                     const struct cc__batch_request *request, char *message)
{
    const cc_config *config = request->config;
    const size_t n_frames = request->n_frames;
    cc_clusters *out = request->out;
    uint32_t nx = config->cluster_size_x, ny = config->cluster_size_y;
    cc__clusters_clear(out, nx, ny);
    if (n_frames == 0)
        return CC_OK;
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    if (cuda->dirty) {
        int rc = clear_slots(cuda, message);
        if (rc != CC_OK)
            return rc;
    }
    size_t n_chunks = (n_frames + cuda->chunk_frames - 1) / cuda->chunk_frames;
    int rc = reserve_batch(cuda, n_frames, n_chunks, message);
    /* A first guess at the clusters; the list grows as chunks find more. */
    size_t capacity = cc__clusters_capacity(out);
    if (capacity < n_frames * 256)
        capacity = n_frames * 256;
    if (rc == CC_OK)
        rc = prepare_output(out, capacity, message);
    struct batch batch;
    batch.frames = *request->frames;
    batch.n_frames = n_frames;
    batch.geometry.rows = config->rows;
    batch.geometry.cols = config->cols;
    batch.geometry.half_x = nx / 2;
    batch.geometry.half_y = ny / 2;
    batch.geometry.adc_mask = config->adc_mask;
    batch.geometry.pedestal_only = request->frames->pedestal_only;
    batch.geometry.window = cuda->window;
    batch.geometry.nsigma = config->nsigma;
    batch.geometry.c3nsigma = cc__c3nsigma(config);
    batch.geometry.regions = cuda->regions;
    batch.max_clusters = config->max_clusters;
    batch.out = out;
    batch.size_x = nx;
    batch.size_y = ny;
    cuda->batches++;
    batch.fault_chunk = cuda->fault.kind != CC__FAULT_NONE &&
                                cuda->batches == cuda->fault.batch
                            ? n_chunks / 2
                            : SIZE_MAX;
    if (rc == CC_OK)
        memset(cuda->chunk_entered, 0, n_chunks);
    for (int attempt = 0; attempt < 2 && rc == CC_OK; attempt++) {
        rc = first_failure(cuda->precision == CC_PRECISION_DOUBLE
                               ? run_batch<double>(cuda, &batch, message)
                               : run_batch<float>(cuda, &batch, message),
                           cuda);
        if (rc != CC_OK || batch.slot_clusters == 0)
            break;
        /* Headroom, so that the next batches rarely run twice. */
        rc = first_failure(grow_slot_clusters(cuda,
                                              batch.slot_clusters +
                                                  batch.slot_clusters / 2,
                                              message),
                           cuda);
    }
    /* The same frames find the same clusters, so a second run fits. */
    if (rc == CC_OK && batch.slot_clusters != 0)
        rc = cc__message(message, CC_EDEVICE,
                         "CUDA: a chunk's clusters outgrew their arrays twice");
    if (rc != CC_OK) {
        cc__clusters_clear(out, nx, ny);
        return config->backend == CC_BACKEND_AUTO
                   ? mark_entered(cuda, &batch, rc)
                   : cc__cuda_drop_accumulated(cuda, rc, message);
    }
    for (size_t k = 0; k < n_frames; k++) {
        rc = cc__clusters_begin_frame(out, request->numbers != NULL
                                               ? request->numbers[k]
                                               : request->first_number + k);
        if (rc != CC_OK) {
            cc__clusters_clear(out, nx, ny);
            return cc__message(message, rc, "no memory for frame entries");
        }
        struct cc__frame_entry *entry = &out->frames[out->n_frames - 1];
        entry->count = cuda->stored[k];
        entry->dropped = cuda->dropped[k];
        out->n_clusters += entry->count;
    }
    size_t cells = n_frames * cuda->regions.count;
    if (cells > 0) {
        memcpy(request->common_mode, cuda->batch_common_mode,
               cells * cuda->real_size);
        memcpy(request->estimated, cuda->batch_estimated, cells);
    }
    /* The batch succeeded whole: its analog sums join the image's, and
     * its last state becomes the pedestal. */
    if (cuda->analog != NULL && !batch.geometry.pedestal_only) {
        CUDA_TRY(cc__launch_analog_fold(cuda->analog_batch, cuda->pixels,
                                        cuda->analog, cuda->output),
                 "adding the batch's analog sums");
        CUDA_TRY(cudaStreamSynchronize(cuda->output),
                 "adding the batch's analog sums");
    }
    cuda->committed = state_written(cuda, batch.launches - 1);
    return CC_OK;
}
