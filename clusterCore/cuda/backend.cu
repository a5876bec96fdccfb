/*
 * backend.cu: the CUDA backend's device: opened, its streams, slots and
 * pedestal buffers allocated, the pedestal and gain map copied in and
 * out. How a batch runs (batches.cu), in short: it is cut into chunks of
 * frames; each chunk takes one of `streams` slots (its own device buffers
 * and copy stream), so that copying chunk j+1 in overlaps deciding chunk j
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

/* ---- life cycle ---- */

static void free_slot(struct slot *slot)
{
    if (slot->copy != NULL)
        cudaStreamDestroy(slot->copy);
    if (slot->ready != NULL)
        cudaEventDestroy(slot->ready);
    if (slot->decided != NULL)
        cudaEventDestroy(slot->decided);
    if (slot->extracted != NULL)
        cudaEventDestroy(slot->extracted);
    if (slot->downloaded != NULL)
        cudaEventDestroy(slot->downloaded);
    cudaFree(slot->frames);
    cudaFreeHost(slot->staging);
    cudaFree(slot->v_planes);
    cudaFree(slot->bitmaps);
    cudaFree(slot->counts);
    cudaFree(slot->cluster_x);
    cudaFree(slot->cluster_y);
    cudaFree(slot->cluster_values);
    cudaFree(slot->common_mode);
    cudaFree(slot->common_mode_work.centre);
    cudaFree(slot->common_mode_work.histogram);
    cudaFree(slot->common_mode_work.sums);
    cudaFree(slot->common_mode_work.arrivals);
    cudaFree((void *)slot->common_mode_work.centre_parts);
    cudaFree((void *)slot->common_mode_work.mean_parts);
    memset(slot, 0, sizeof *slot);
}

static void free_chunk_buffers(struct cc__cuda *cuda)
{
    for (unsigned i = 0; i < cuda->n_slots; i++)
        free_slot(&cuda->slots[i]);
}

void cc__cuda_destroy(struct cc__cuda *cuda)
{
    if (cuda == NULL)
        return;
    cudaSetDevice(cuda->device);
    if (cuda->compute != NULL)
        cudaStreamSynchronize(cuda->compute);
    if (cuda->output != NULL)
        cudaStreamSynchronize(cuda->output);
    if (cuda->download != NULL)
        cudaStreamSynchronize(cuda->download);
    free_chunk_buffers(cuda);
    if (cuda->compute != NULL)
        cudaStreamDestroy(cuda->compute);
    if (cuda->output != NULL)
        cudaStreamDestroy(cuda->output);
    if (cuda->download != NULL)
        cudaStreamDestroy(cuda->download);
    fixed_planes *planes[2] = {&cuda->fixed, &cuda->fixed_spare};
    for (int k = 0; k < 2; k++) {
        cudaFree(planes[k]->baseline);
        cudaFree(planes[k]->mask);
        cudaFree(planes[k]->reference_offset);
        cudaFree(planes[k]->reference_rms);
    }
    cudaFree(cuda->gain);
    for (int b = 0; b < 3; b++)
        for (int f = 0; f < 2; f++)
            cudaFree(cuda->state[b][f]);
    cudaFreeHost(cuda->chunk_totals);
    cc__cuda_free_accumulators(cuda);
    free(cuda->chunk_entered);
    cudaFree(cuda->device_totals);
    cudaFreeHost(cuda->stored);
    cudaFreeHost(cuda->dropped);
    cudaFreeHost(cuda->batch_common_mode);
    cudaFreeHost(cuda->batch_estimated);
    free(cuda);
}

/* The most frames, up to shape.steps, that one decide block of the shape
 * can hold in shared memory; 0 when not even one frame fits. */
static uint32_t fit_steps(const struct cc__cuda *cuda,
                          const cc__launch_shape &shape)
{
    uint32_t steps = shape.steps;
    while (steps > 0 &&
           cc__decide_shared_bytes(cuda->shape_geometry, shape, steps,
                                   cuda->real_size) > cuda->shared_limit)
        steps--;
    return steps;
}

/* About one tile a multiprocessor (a 400 x 400 frame on the H200's 132
 * is 8 x 16 tiles of 25 x 50 pixels), so that one launch fills the GPU
 * once; 768 threads a block, which leaves registers for the extract
 * kernel to run beside it (faster than 1024 on the H200 at 9 x 9, the
 * same at 3 x 3); 8 frames a launch at 3 x 3 and fewer for larger
 * windows, whose border costs more to decide again. */
static void default_shape(struct cc__cuda *cuda, const cc_config *config,
                          unsigned multiprocessors)
{
    uint32_t across = 8, down = multiprocessors / across;
    down = down < 1 ? 1 : down;
    uint32_t half = config->cluster_size_x > config->cluster_size_y
                        ? config->cluster_size_x / 2
                        : config->cluster_size_y / 2;
    cuda->shape.tile_cols = (config->cols + across - 1) / across;
    cuda->shape.tile_rows = (config->rows + down - 1) / down;
    uint32_t most = cc__decide_max_threads(cuda->shape_geometry,
                                           cuda->real_size);
    cuda->shape.threads = most >= 768 ? 768 : most / 32 * 32;
    cuda->shape.steps = half <= 1 ? 8 : half == 2 ? 4 : 2;
}

/* A first guess at the clusters a chunk finds, grown when one finds more. */
static size_t first_slot_clusters(const struct cc__cuda *cuda)
{
    return cuda->chunk_frames * (cuda->pixels < 4096 ? cuda->pixels : 4096);
}

/* Gives a slot (re)allocated arrays for cuda->slot_clusters clusters. */
int cc__cuda_allocate_slot_clusters(struct cc__cuda *cuda, struct slot *slot,
                                    char *message)
{
    cudaFree(slot->cluster_x);
    cudaFree(slot->cluster_y);
    cudaFree(slot->cluster_values);
    slot->cluster_x = slot->cluster_y = NULL;
    slot->cluster_values = NULL;
    slot->cluster_capacity = 0;
    size_t clusters = cuda->slot_clusters;
    CUDA_TRY(cudaMalloc(&slot->cluster_x, clusters * 2),
             "allocating cluster arrays");
    CUDA_TRY(cudaMalloc(&slot->cluster_y, clusters * 2),
             "allocating cluster arrays");
    CUDA_TRY(cudaMalloc(&slot->cluster_values, clusters * cuda->cells * 4),
             "allocating cluster arrays");
    slot->cluster_capacity = clusters;
    return CC_OK;
}

/* Zeroes what the common-mode kernels keep zero between chunks. */
int cc__cuda_clear_common_mode_work(const cc__common_mode_work *work,
                                    char *message)
{
    if (work->arrivals == NULL)
        return CC_OK;
    CUDA_TRY(cudaMemset(work->arrivals, 0, 2 * (size_t)work->cells * 4),
             "clearing the common mode");
    if (work->histogram != NULL)
        CUDA_TRY(cudaMemset(work->histogram, 0,
                            (size_t)work->cells * CC__CENTRE_BINS * 4),
                 "clearing the common mode");
    if (work->sums != NULL)
        CUDA_TRY(cudaMemset(work->sums, 0, 2 * (size_t)work->cells * 8),
                 "clearing the common mode");
    return CC_OK;
}

/* A kernel's table of parts (cc__common_mode_parts), on the device. */
static int upload_parts(const cc__regions &regions, const cc__part_shape &shape,
                        const cc__part_rect **device_parts, char *message)
{
    const size_t n = (size_t)shape.parts * regions.count;
    cc__part_rect *parts = (cc__part_rect *)malloc(n * sizeof *parts);
    if (parts == NULL)
        return cc__message(message, CC_ENOMEM,
                           "no memory for the common mode's parts");
    cc__common_mode_parts(regions, shape, parts);
    cc__part_rect *made = NULL;
    cudaError_t error = cudaMalloc(&made, n * sizeof *parts);
    if (error == cudaSuccess)
        error = cudaMemcpy(made, parts, n * sizeof *parts,
                           cudaMemcpyHostToDevice);
    free(parts);
    *device_parts = made; /* freed with the slot, even after a failure */
    if (error != cudaSuccess)
        return cuda_failure(message, "copying the common mode's parts", error);
    return CC_OK;
}

static int allocate_common_mode_work(struct cc__cuda *cuda, struct slot *slot,
                                     char *message)
{
    cc__common_mode_work *work = &slot->common_mode_work;
    size_t frames = cuda->chunk_frames;
    cc__common_mode_layout(cuda->regions, work);
    work->cells = (uint32_t)(frames * cuda->regions.count);
    const char *what = "allocating the common mode";
    CUDA_TRY(cudaMalloc(&slot->common_mode, work->cells * cuda->real_size),
             what);
    CUDA_TRY(cudaMalloc(&work->centre, work->cells * 4), what);
    CUDA_TRY(cudaMalloc(&work->arrivals, 2 * (size_t)work->cells * 4), what);
    if (work->centre_shape.parts > 1)
        CUDA_TRY(cudaMalloc(&work->histogram,
                            (size_t)work->cells * CC__CENTRE_BINS * 4),
                 what);
    if (work->mean_shape.parts > 1)
        CUDA_TRY(cudaMalloc(&work->sums, 2 * (size_t)work->cells * 8), what);
    int rc = upload_parts(cuda->regions, work->centre_shape,
                          &work->centre_parts, message);
    if (rc == CC_OK)
        rc = upload_parts(cuda->regions, work->mean_shape, &work->mean_parts,
                          message);
    return rc != CC_OK ? rc : cc__cuda_clear_common_mode_work(work, message);
}

static int allocate_slot(struct cc__cuda *cuda, struct slot *slot,
                         char *message)
{
    size_t frames = cuda->chunk_frames;
    CUDA_TRY(cudaStreamCreateWithFlags(&slot->copy, cudaStreamNonBlocking),
             "creating a copy stream");
    CUDA_TRY(cudaEventCreateWithFlags(&slot->ready, cudaEventDisableTiming),
             "creating an event");
    CUDA_TRY(cudaEventCreateWithFlags(&slot->decided, cudaEventDisableTiming),
             "creating an event");
    CUDA_TRY(cudaEventCreateWithFlags(&slot->extracted, cudaEventDisableTiming),
             "creating an event");
    CUDA_TRY(cudaEventCreateWithFlags(&slot->downloaded,
                                      cudaEventDisableTiming),
             "creating an event");
    CUDA_TRY(cudaMalloc(&slot->frames, frames * cuda->pixels * 2),
             "allocating frame buffers");
    CUDA_TRY(cudaHostAlloc(&slot->staging, frames * cuda->pixels * 2,
                           cudaHostAllocPortable),
             "allocating page-locked staging buffers");
    CUDA_TRY(cudaMalloc(&slot->v_planes,
                        frames * cuda->pixels * cuda->real_size),
             "allocating v planes");
    CUDA_TRY(cudaMalloc(&slot->bitmaps, frames * cuda->bitmap_words * 4),
             "allocating centre bitmaps");
    CUDA_TRY(cudaMemset(slot->bitmaps, 0, frames * cuda->bitmap_words * 4),
             "clearing centre bitmaps");
    CUDA_TRY(cudaMalloc(&slot->counts, frames * 4), "allocating counts");
    CUDA_TRY(cudaMemset(slot->counts, 0, frames * 4), "clearing counts");
    if (cuda->regions.count > 0) {
        int rc = allocate_common_mode_work(cuda, slot, message);
        if (rc != CC_OK)
            return rc;
    }
    return cc__cuda_allocate_slot_clusters(cuda, slot, message);
}

static int allocate_chunk_buffers(struct cc__cuda *cuda, char *message)
{
    for (unsigned i = 0; i < cuda->n_slots; i++) {
        int rc = allocate_slot(cuda, &cuda->slots[i], message);
        if (rc != CC_OK) {
            free_chunk_buffers(cuda);
            return rc;
        }
    }
    return CC_OK;
}

/* Why cudaGetDeviceCount found no device, said as what a user can act on.
 * The runtime calls a missing driver and an old one alike "insufficient";
 * the driver's version (0: none installed) tells them apart. */
static void explain_no_gpu(cudaError_t error, char *why, size_t size)
{
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (driver == 0)
        snprintf(why, size,
                 "no NVIDIA driver is installed (libcuda.so.1 "
                 "not found)");
    else if (error == cudaErrorInsufficientDriver || driver < runtime)
        snprintf(why, size,
                 "the NVIDIA driver supports CUDA %d.%d, older than this "
                 "build's CUDA %d.%d runtime: update the driver",
                 driver / 1000, driver % 1000 / 10, runtime / 1000,
                 runtime % 1000 / 10);
    else if (error == cudaSuccess || error == cudaErrorNoDevice)
        snprintf(why, size, "the NVIDIA driver (CUDA %d.%d) sees no GPU",
                 driver / 1000, driver % 1000 / 10);
    else
        snprintf(why, size, "%s", cudaGetErrorString(error));
}

static int open_device(struct cc__cuda *cuda, const cc_config *config,
                       char *description, char *message)
{
    int devices = 0;
    cudaError_t error = cudaGetDeviceCount(&devices);
    if (error != cudaSuccess || devices == 0) {
        char why[CC_MESSAGE_SIZE / 2];
        explain_no_gpu(error, why, sizeof why);
        cc__message(description, CC_EDEVICE, "no usable GPU: %s", why);
        return cc__message(message, CC_EDEVICE,
                           "CUDA backend: no usable GPU: %s", why);
    }
    CUDA_TRY(cudaGetDevice(&cuda->device), "choosing the device");
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    cudaDeviceProp properties;
    CUDA_TRY(cudaGetDeviceProperties(&properties, cuda->device),
             "reading the device's properties");
    cc__message(description, CC_OK, "CUDA on %s (device %d), %u stream%s",
                properties.name, cuda->device, config->streams,
                config->streams == 1 ? "" : "s");
    CUDA_TRY(cc__prepare_decide(cuda->device, &cuda->shared_limit),
             "preparing the decide kernels");
    default_shape(cuda, config, (unsigned)properties.multiProcessorCount);
    return CC_OK;
}

static int allocate_state(struct cc__cuda *cuda, char *message)
{
    CUDA_TRY(cudaStreamCreateWithFlags(&cuda->compute, cudaStreamNonBlocking),
             "creating the compute stream");
    CUDA_TRY(cudaStreamCreateWithFlags(&cuda->output, cudaStreamNonBlocking),
             "creating the output stream");
    CUDA_TRY(cudaStreamCreateWithFlags(&cuda->download, cudaStreamNonBlocking),
             "creating the download stream");
    fixed_planes *planes[2] = {&cuda->fixed, &cuda->fixed_spare};
    for (int k = 0; k < 2; k++) {
        CUDA_TRY(cudaMalloc(&planes[k]->baseline, cuda->pixels * 2),
                 "allocating the pedestal");
        CUDA_TRY(cudaMalloc(&planes[k]->mask, cuda->pixels),
                 "allocating the pedestal");
        if (cuda->regions.count == 0)
            continue;
        CUDA_TRY(cudaMalloc(&planes[k]->reference_offset,
                            cuda->pixels * cuda->real_size),
                 "allocating the common mode's reference");
        CUDA_TRY(cudaMalloc(&planes[k]->reference_rms,
                            cuda->pixels * cuda->real_size),
                 "allocating the common mode's reference");
    }
    for (int b = 0; b < 3; b++)
        for (int f = 0; f < 2; f++)
            CUDA_TRY(cudaMalloc(&cuda->state[b][f],
                                cuda->pixels * cuda->real_size),
                     "allocating the pedestal");
    return allocate_chunk_buffers(cuda, message);
}

int cc__cuda_new(struct cc__cuda **result, const cc_config *config,
                 char *description, char *message)
{
    *result = NULL;
    struct cc__cuda *cuda = (struct cc__cuda *)calloc(1, sizeof *cuda);
    if (cuda == NULL)
        return cc__message(message, CC_ENOMEM,
                           "no memory for the CUDA backend");
    cuda->precision = config->precision;
    cuda->pixels = (size_t)config->rows * config->cols;
    cuda->real_size = cc__precision_size(config->precision);
    cuda->bitmap_words = (cuda->pixels + 31) / 32;
    cuda->regions = cc__regions_of((int)config->common_mode, config->rows,
                                   config->cols);
    cuda->n_slots = config->streams;
    /* Small enough that a batch's first copy and last extraction, which
     * nothing overlaps, stay short; large enough to keep host calls few. */
    cuda->chunk_frames = 16;
    cuda->copies = CC__COPIES_BATCHED;
    cuda->cells = (size_t)config->cluster_size_x * config->cluster_size_y;
    cuda->slot_clusters = first_slot_clusters(cuda);
    cuda->shape_geometry.half_x = config->cluster_size_x / 2;
    cuda->shape_geometry.half_y = config->cluster_size_y / 2;
    int rc = cc__fault_from_environment(&cuda->fault, message);
    if (rc == CC_OK)
        rc = open_device(cuda, config, description, message);
    if (rc == CC_OK) {
        cuda->shape.steps = fit_steps(cuda, cuda->shape);
        if (cuda->shape.steps == 0)
            rc = cc__message(message, CC_EDEVICE,
                             "CUDA: a %u x %u tile does not fit the GPU's "
                             "shared memory",
                             cuda->shape.tile_rows, cuda->shape.tile_cols);
    }
    if (rc == CC_OK)
        rc = allocate_state(cuda, message);
    if (rc != CC_OK) {
        if (description != NULL &&
            strncmp(description, "no usable GPU", 13) != 0)
            cc__message(description, rc, "%s", message);
        cc__cuda_destroy(cuda);
        return rc;
    }
    *result = cuda;
    return CC_OK;
}

int cc__cuda_tune(struct cc__cuda *cuda, const struct cc__cuda_tuning *tuning)
{
    char message[CC_MESSAGE_SIZE];
    cc__launch_shape shape = cuda->shape;
    if (tuning->tile_rows != 0)
        shape.tile_rows = tuning->tile_rows;
    if (tuning->tile_cols != 0)
        shape.tile_cols = tuning->tile_cols;
    if (tuning->threads != 0)
        shape.threads = tuning->threads;
    if (tuning->steps != 0)
        shape.steps = tuning->steps;
    if (tuning->copies > CC__COPIES_BATCHED)
        return CC_EINVAL;
    /* Asking for more frames a launch than fit means as many as fit. */
    shape.steps = fit_steps(cuda, shape);
    if (shape.steps == 0 || shape.threads % 32 != 0 ||
        shape.threads >
            cc__decide_max_threads(cuda->shape_geometry, cuda->real_size))
        return CC_EINVAL;
    cuda->shape = shape;
    if (tuning->copies != 0)
        cuda->copies = (int)tuning->copies;
    if (tuning->chunk_frames != 0 &&
        tuning->chunk_frames != cuda->chunk_frames) {
        cudaSetDevice(cuda->device);
        cudaDeviceSynchronize();
        free_chunk_buffers(cuda);
        cuda->chunk_frames = tuning->chunk_frames;
        cuda->slot_clusters = first_slot_clusters(cuda);
        return allocate_chunk_buffers(cuda, message);
    }
    return CC_OK;
}

/* ---- the gain map ---- */

int cc__cuda_set_gain(struct cc__cuda *cuda, const void *factors, char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    /* No batch reads the factors while they change. */
    CUDA_TRY(cudaStreamSynchronize(cuda->compute), "finishing the GPU's work");
    void *next = NULL;
    if (factors != NULL) {
        /* Into a new buffer, switched in once complete: a failure leaves
         * the map in force. */
        size_t bytes = cuda->pixels * cuda->real_size;
        CUDA_TRY(cudaMalloc(&next, bytes), "allocating the gain map");
        cudaError_t copied = cudaMemcpy(next, factors, bytes,
                                        cudaMemcpyHostToDevice);
        if (copied != cudaSuccess) {
            cudaFree(next);
            return cuda_failure(message, "copying the gain map to the GPU",
                                copied);
        }
    }
    cudaFree(cuda->gain);
    cuda->gain = next;
    return CC_OK;
}

/* ---- the pedestal ---- */

int cc__cuda_upload(struct cc__cuda *cuda, const struct cc__pedestal *pedestal,
                    char *message)
{
    /* Into buffers no batch reads, then switched in: a failed upload
     * leaves the GPU's pedestal as it was. */
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    CUDA_TRY(cudaStreamSynchronize(cuda->compute), "finishing the GPU's work");
    int target = (cuda->committed + 1) % 3;
    size_t bytes = cuda->pixels * cuda->real_size;
    CUDA_TRY(cudaMemcpy(cuda->fixed_spare.baseline, pedestal->baseline,
                        cuda->pixels * 2, cudaMemcpyHostToDevice),
             "copying the pedestal to the GPU");
    CUDA_TRY(cudaMemcpy(cuda->fixed_spare.mask, pedestal->mask, cuda->pixels,
                        cudaMemcpyHostToDevice),
             "copying the mask to the GPU");
    CUDA_TRY(cudaMemcpy(cuda->state[target][0], pedestal->s, bytes,
                        cudaMemcpyHostToDevice),
             "copying the pedestal to the GPU");
    CUDA_TRY(cudaMemcpy(cuda->state[target][1], pedestal->s2, bytes,
                        cudaMemcpyHostToDevice),
             "copying the pedestal to the GPU");
    if (cuda->regions.count > 0) {
        CUDA_TRY(cudaMemcpy(cuda->fixed_spare.reference_offset,
                            pedestal->reference_offset, bytes,
                            cudaMemcpyHostToDevice),
                 "copying the common mode's reference to the GPU");
        CUDA_TRY(cudaMemcpy(cuda->fixed_spare.reference_rms,
                            pedestal->reference_rms, bytes,
                            cudaMemcpyHostToDevice),
                 "copying the common mode's reference to the GPU");
    }
    fixed_planes held = cuda->fixed;
    cuda->fixed = cuda->fixed_spare;
    cuda->fixed_spare = held;
    cuda->committed = target;
    cuda->window = pedestal->window;
    return CC_OK;
}

int cc__cuda_download(struct cc__cuda *cuda, struct cc__pedestal *pedestal,
                      char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    CUDA_TRY(cudaStreamSynchronize(cuda->compute), "finishing the GPU's work");
    size_t bytes = cuda->pixels * cuda->real_size;
    CUDA_TRY(cudaMemcpy(pedestal->s, cuda->state[cuda->committed][0], bytes,
                        cudaMemcpyDeviceToHost),
             "copying the pedestal from the GPU");
    CUDA_TRY(cudaMemcpy(pedestal->s2, cuda->state[cuda->committed][1], bytes,
                        cudaMemcpyDeviceToHost),
             "copying the pedestal from the GPU");
    return CC_OK;
}
