/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend.cu: the CUDA backend's host side. A batch is cut into chunks of
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
    cc__image_map map;             /* its tables point at the arrays below */
    double *fx, *fy;
    uint8_t *row_empty, *column_empty;
    struct device_tally image;     /* one count a bin of the image; photons,
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
    int copies;          /* CC__COPIES_*: how copies of several buffers go */
    cc__frame_geometry shape_geometry; /* the cluster size shapes fit */
    size_t shared_limit; /* shared memory a decide block may use */
    fixed_planes fixed;  /* device: what batches read */
    fixed_planes fixed_spare; /* device: where an upload goes first */
    void *gain;          /* device: the factors k of docs/spec.md §9, a
                            real a pixel; NULL without a gain map */
    void *state[3][2];   /* device: [buffer][s or s2] */
    int committed;       /* index of the committed buffer */
    uint32_t window;     /* the pedestal's N, from the last upload */
    size_t cells;        /* values a cluster */
    size_t slot_clusters; /* clusters each slot's arrays hold */
    uint64_t *chunk_totals; /* page-locked: clusters per chunk of a batch */
    uint64_t *device_totals; /* the same on the device, for the image
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
    struct device_imaging *imaging; /* NULL: no imaging */
    struct device_spectra *spectra; /* NULL: no flat field's spectra */
    struct device_counting *counting; /* NULL: no spectrum or hit map */
    /* device, docs/spec.md §4.8: the analog image's sums, and a batch's
     * (added in when it succeeds); NULL: off */
    double *analog, *analog_batch;
    uint8_t *chunk_entered; /* per chunk of a batch: its clusters are in
                              the image, spectra and counts (a batch run
                              again skips them) */
    struct cc__fault fault; /* planted (CC_CUDA_FAULT), for tests */
    uint64_t batches;       /* batches begun, to find the faulty one */
    bool lost;              /* a planted "lost" fault: every call fails */
};

static void free_imaging(struct device_imaging *imaging);
static void free_spectra(struct device_spectra *spectra);
static void free_counting(struct device_counting *counting);

/* Whether batches add their clusters to what the GPU keeps across them. */
static bool accumulating(const struct cc__cuda *cuda)
{
    return cuda->imaging != NULL || cuda->spectra != NULL ||
           cuda->counting != NULL;
}

/* Records a CUDA failure in message and returns CC_EDEVICE. */
static int cuda_failure(char *message, const char *what, cudaError_t error)
{
    return cc__message(message, CC_EDEVICE, "CUDA: %s: %s", what,
                       cudaGetErrorString(error));
}

/* What every call does on a GPU that a planted "lost" fault took away. */
#define REFUSE_IF_LOST(cuda)                                                  \
    do {                                                                      \
        if ((cuda)->lost)                                                     \
            return cc__message(message, CC_EDEVICE,                           \
                               "CUDA: the GPU is lost (planted by "           \
                               "CC_CUDA_FAULT)");                             \
    } while (0)

#define CUDA_TRY(call, what)                                                  \
    do {                                                                      \
        cudaError_t cuda_try_error = (call);                                  \
        if (cuda_try_error != cudaSuccess)                                    \
            return cuda_failure(message, (what), cuda_try_error);             \
    } while (0)

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
    free_imaging(cuda->imaging);
    free_spectra(cuda->spectra);
    free_counting(cuda->counting);
    cudaFree(cuda->analog);
    cudaFree(cuda->analog_batch);
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
static int allocate_slot_clusters(struct cc__cuda *cuda, struct slot *slot,
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
static int clear_common_mode_work(const cc__common_mode_work *work,
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
static int upload_parts(const cc__regions &regions,
                        const cc__part_shape &shape,
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
        return cuda_failure(message, "copying the common mode's parts",
                            error);
    return CC_OK;
}

static int allocate_common_mode_work(struct cc__cuda *cuda,
                                     struct slot *slot, char *message)
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
    return rc != CC_OK ? rc : clear_common_mode_work(work, message);
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
    CUDA_TRY(cudaEventCreateWithFlags(&slot->extracted,
                                      cudaEventDisableTiming),
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
    return allocate_slot_clusters(cuda, slot, message);
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
        snprintf(why, size, "no NVIDIA driver is installed (libcuda.so.1 "
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
        return cc__message(message, CC_EDEVICE, "CUDA backend: no usable GPU: %s",
                           why);
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
    CUDA_TRY(cudaStreamCreateWithFlags(&cuda->download,
                                       cudaStreamNonBlocking),
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
        return cc__message(message, CC_ENOMEM, "no memory for the CUDA backend");
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
        shape.threads > cc__decide_max_threads(cuda->shape_geometry,
                                               cuda->real_size))
        return CC_EINVAL;
    cuda->shape = shape;
    if (tuning->copies != 0)
        cuda->copies = (int)tuning->copies;
    if (tuning->chunk_frames != 0 && tuning->chunk_frames != cuda->chunk_frames) {
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

int cc__cuda_set_gain(struct cc__cuda *cuda, const void *factors,
                      char *message)
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
        cudaError_t copied =
            cudaMemcpy(next, factors, bytes, cudaMemcpyHostToDevice);
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

/* ---- batches ---- */

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
            rc = remap_host(&cuda->batch_common_mode,
                            cells * cuda->real_size, message);
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
            return cc__message(message, CC_ENOMEM,
                               "no memory for %zu chunks", capacity);
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
    size_t launches;      /* decide launches enqueued so far */
    size_t placed;        /* clusters copied (or on their way) into out */
    size_t slot_clusters; /* a slot's arrays need this many (0: they did) */
    size_t entries_enqueued; /* chunks whose image and spectra launches are
                              enqueued */
    size_t fault_chunk;   /* the chunk a planted fault fails, or SIZE_MAX */
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
                        cudaStream_t stream, const char *what,
                        char *message)
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
            int rc = add_copy(cuda, &copies, to, run, bytes, slot->copy,
                              what, message);
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
                     cuda->regions.count > 0
                         ? (const T *)slot->common_mode +
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

/* Images a chunk's photons, enters them into the flat field's spectra
 * and counts them into the spectrum and hit map after its extraction,
 * unless an earlier run of the batch did. */
static int enqueue_accumulators(struct cc__cuda *cuda, struct slot *slot,
                                const struct batch *batch, size_t chunk,
                                char *message)
{
    if (cuda->chunk_entered[chunk])
        return CC_OK;
    const cc__chunk_clusters clusters = {
        batch->size_x,         batch->size_y,
        slot->cluster_x,       slot->cluster_y,
        slot->cluster_values,  cuda->device_totals + chunk,
        slot->cluster_capacity};
    if (cuda->imaging != NULL)
        CUDA_TRY(cc__launch_image(cuda->imaging->map, clusters,
                                  cuda->imaging->image.counts,
                                  cuda->imaging->image.totals, cuda->output),
                 "launching the image kernel");
    if (cuda->spectra != NULL)
        CUDA_TRY(cc__launch_spectra(cuda->spectra->binning,
                                    cuda->spectra->cols, clusters,
                                    cuda->spectra->spectra.counts,
                                    cuda->spectra->spectra.totals,
                                    cuda->output),
                 "launching the spectra kernel");
    if (cuda->counting != NULL) {
        struct device_tally *counts = &cuda->counting->counts;
        CUDA_TRY(cc__launch_count(cuda->counting->binning, clusters,
                                  counts->counts,
                                  counts->counts + cuda->counting->binning.bins,
                                  counts->totals, cuda->output),
                 "launching the count kernel");
    }
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

/* The planted fault (fault.h), once: a real CUDA call made to fail. */
static int plant_fault(struct cc__cuda *cuda, struct batch *batch,
                       struct slot *slot, char *message)
{
    batch->fault_chunk = SIZE_MAX;
    cuda->lost = cuda->fault.kind == CC__FAULT_LOST;
    CUDA_TRY(cc__fault_inject(cuda->fault.kind, slot->frames, slot->copy),
             cuda->fault.kind == CC__FAULT_COPY
                 ? "copying frames to the GPU (planted by CC_CUDA_FAULT)"
                 : "launching the decide kernel (planted by CC_CUDA_FAULT)");
    return cc__message(message, CC_EDEVICE,
                       "CUDA: the planted fault (CC_CUDA_FAULT) did not fail");
}

/* Enqueues every chunk of the batch, downloading each chunk's clusters
 * `streams` chunks later, and waits for the last. */
template <typename T>
static int run_batch(struct cc__cuda *cuda, struct batch *batch,
                     char *message)
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
    size_t n_chunks =
        (batch->n_frames + cuda->chunk_frames - 1) / cuda->chunk_frames;
    for (size_t chunk = 0; chunk < n_chunks; chunk++) {
        int rc = CC_OK;
        if (chunk >= cuda->n_slots)
            rc = download_chunk(cuda, batch, chunk - cuda->n_slots, message);
        size_t first = chunk * cuda->chunk_frames;
        size_t count = batch->n_frames - first < cuda->chunk_frames
                           ? batch->n_frames - first
                           : cuda->chunk_frames;
        struct slot *slot = &cuda->slots[chunk % cuda->n_slots];
        if (rc == CC_OK && chunk == batch->fault_chunk)
            rc = plant_fault(cuda, batch, slot, message);
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
            rc = enqueue_accumulators(cuda, slot, batch, chunk, message);
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
        int rc = allocate_slot_clusters(cuda, &cuda->slots[i], message);
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
        int rc = clear_common_mode_work(&cuda->slots[i].common_mode_work,
                                        message);
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

/* Allocates a tally of n counts and n_totals totals, all zero. */
static int make_tally(struct device_tally *tally, size_t n, size_t n_totals,
                      const char *what, char *message)
{
    tally->n = n;
    tally->n_totals = n_totals;
    CUDA_TRY(cudaMalloc(&tally->counts, n * sizeof(unsigned long long)), what);
    CUDA_TRY(cudaMalloc(&tally->totals,
                        n_totals * sizeof(unsigned long long)),
             what);
    CUDA_TRY(cudaMemset(tally->counts, 0, n * sizeof(unsigned long long)),
             what);
    CUDA_TRY(cudaMemset(tally->totals, 0,
                        n_totals * sizeof(unsigned long long)),
             what);
    return CC_OK;
}

static void free_tally(struct device_tally *tally)
{
    cudaFree(tally->counts);
    cudaFree(tally->totals);
}

/* Empties a tally, as far as the device still can. */
static void clear_tally(struct device_tally *tally)
{
    cudaMemset(tally->counts, 0, tally->n * sizeof(unsigned long long));
    cudaMemset(tally->totals, 0, tally->n_totals * sizeof(unsigned long long));
}

/* Copies a tally's counts and totals to the host and empties it. */
static int take_tally(struct device_tally *tally, uint64_t *counts,
                      unsigned long long *totals, const char *what,
                      char *message)
{
    CUDA_TRY(cudaMemcpy(counts, tally->counts,
                        tally->n * sizeof(unsigned long long),
                        cudaMemcpyDeviceToHost),
             what);
    CUDA_TRY(cudaMemcpy(totals, tally->totals,
                        tally->n_totals * sizeof(unsigned long long),
                        cudaMemcpyDeviceToHost),
             what);
    CUDA_TRY(cudaMemset(tally->counts, 0,
                        tally->n * sizeof(unsigned long long)),
             what);
    CUDA_TRY(cudaMemset(tally->totals, 0,
                        tally->n_totals * sizeof(unsigned long long)),
             what);
    /* A memset of device memory may return before it is done, on the
     * legacy stream, which the batches' non-blocking streams do not wait
     * for: the next batch's kernels must find the tally empty. */
    CUDA_TRY(cudaDeviceSynchronize(), what);
    return CC_OK;
}

/* After a failed batch, part of which may be in the image, spectra and
 * counts: they are emptied rather than left holding part of a batch, and
 * message says so. */
static int drop_accumulated(struct cc__cuda *cuda, int rc, char *message)
{
    if (!accumulating(cuda))
        return rc;
    cudaDeviceSynchronize();
    if (cuda->imaging != NULL)
        clear_tally(&cuda->imaging->image);
    if (cuda->spectra != NULL)
        clear_tally(&cuda->spectra->spectra);
    if (cuda->counting != NULL)
        clear_tally(&cuda->counting->counts);
    cudaDeviceSynchronize(); /* as far as the device still can */
    char failure[CC_MESSAGE_SIZE];
    cc__message(failure, CC_OK, "%s", message);
    return cc__message(message, rc,
                       "%s; what the GPU added since the last take to%s%s%s "
                       "is dropped",
                       failure, cuda->imaging != NULL ? " the image" : "",
                       cuda->spectra != NULL ? " the flat field's spectra" : "",
                       cuda->counting != NULL ? " the spectrum and hit map"
                                              : "");
}

static void free_imaging(struct device_imaging *imaging)
{
    if (imaging == NULL)
        return;
    cudaFree(imaging->fx);
    cudaFree(imaging->fy);
    cudaFree(imaging->row_empty);
    cudaFree(imaging->column_empty);
    free_tally(&imaging->image);
    free(imaging);
}

/* A device copy of map's tables and an empty image, or NULL. */
static int make_imaging(const cc__image_map *map,
                        struct device_imaging **made, char *message)
{
    struct device_imaging *imaging =
        (struct device_imaging *)calloc(1, sizeof *imaging);
    if (imaging == NULL)
        return cc__message(message, CC_ENOMEM, "no memory for imaging");
    *made = imaging;
    size_t cells = (size_t)map->bins * map->bins;
    CUDA_TRY(cudaMalloc(&imaging->fx, cells * sizeof(double)),
             "allocating the transport map");
    CUDA_TRY(cudaMalloc(&imaging->fy, cells * sizeof(double)),
             "allocating the transport map");
    CUDA_TRY(cudaMalloc(&imaging->row_empty, map->bins),
             "allocating the transport map");
    CUDA_TRY(cudaMalloc(&imaging->column_empty, map->bins),
             "allocating the transport map");
    CUDA_TRY(cudaMemcpy(imaging->fx, map->fx, cells * sizeof(double),
                        cudaMemcpyHostToDevice),
             "copying the transport map");
    CUDA_TRY(cudaMemcpy(imaging->fy, map->fy, cells * sizeof(double),
                        cudaMemcpyHostToDevice),
             "copying the transport map");
    CUDA_TRY(cudaMemcpy(imaging->row_empty, map->row_empty, map->bins,
                        cudaMemcpyHostToDevice),
             "copying the transport map");
    CUDA_TRY(cudaMemcpy(imaging->column_empty, map->column_empty, map->bins,
                        cudaMemcpyHostToDevice),
             "copying the transport map");
    int rc = make_tally(&imaging->image,
                        (size_t)map->rows * map->subpixels * map->cols *
                            map->subpixels,
                        4, "allocating the image", message);
    if (rc != CC_OK)
        return rc;
    imaging->map = *map;
    imaging->map.fx = imaging->fx;
    imaging->map.fy = imaging->fy;
    imaging->map.row_empty = imaging->row_empty;
    imaging->map.column_empty = imaging->column_empty;
    return CC_OK;
}

int cc__cuda_set_image(struct cc__cuda *cuda, const struct cc__image_map *map,
                       char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    struct device_imaging *made = NULL;
    if (map != NULL) {
        int rc = make_imaging(map, &made, message);
        if (rc != CC_OK) { /* the imaging in force stays */
            free_imaging(made);
            return rc;
        }
    }
    CUDA_TRY(cudaDeviceSynchronize(), "finishing the GPU's work");
    free_imaging(cuda->imaging);
    cuda->imaging = made;
    return CC_OK;
}

int cc__cuda_take_image(struct cc__cuda *cuda, uint64_t *counts,
                        cc_image_stats *stats, char *message)
{
    unsigned long long totals[4];
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    int rc = take_tally(&cuda->imaging->image, counts, totals,
                        "taking the image from the GPU", message);
    if (rc != CC_OK)
        return rc;
    *stats = (cc_image_stats){totals[0], totals[1], totals[2], totals[3]};
    return CC_OK;
}

static void free_spectra(struct device_spectra *spectra)
{
    if (spectra == NULL)
        return;
    free_tally(&spectra->spectra);
    free(spectra);
}

int cc__cuda_set_spectra(struct cc__cuda *cuda,
                         const struct cc__gain_binning *binning,
                         uint32_t rows, uint32_t cols, char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    struct device_spectra *made = NULL;
    if (binning != NULL) {
        made = (struct device_spectra *)calloc(1, sizeof *made);
        if (made == NULL)
            return cc__message(message, CC_ENOMEM, "no memory for spectra");
        made->binning = *binning;
        made->cols = cols;
        int rc = make_tally(&made->spectra,
                            (size_t)rows * cols * binning->bins, 2,
                            "allocating the spectra", message);
        if (rc != CC_OK) { /* the spectra in force stay */
            free_spectra(made);
            return rc;
        }
    }
    CUDA_TRY(cudaDeviceSynchronize(), "finishing the GPU's work");
    free_spectra(cuda->spectra);
    cuda->spectra = made;
    return CC_OK;
}

int cc__cuda_take_spectra(struct cc__cuda *cuda, uint64_t *counts,
                          uint64_t *photons, uint64_t *outside,
                          char *message)
{
    unsigned long long totals[2];
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    int rc = take_tally(&cuda->spectra->spectra, counts, totals,
                        "taking the spectra from the GPU", message);
    if (rc != CC_OK)
        return rc;
    *photons = totals[0];
    *outside = totals[1];
    return CC_OK;
}

int cc__cuda_process(struct cc__cuda *cuda, const cc_config *config,
                     const struct cc__frames *frames, const uint64_t *numbers,
                     uint64_t first_number, size_t n_frames, cc_clusters *out,
                     void *common_mode, uint8_t *estimated, char *message)
{
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
    batch.frames = *frames;
    batch.n_frames = n_frames;
    batch.geometry.rows = config->rows;
    batch.geometry.cols = config->cols;
    batch.geometry.half_x = nx / 2;
    batch.geometry.half_y = ny / 2;
    batch.geometry.adc_mask = config->adc_mask;
    batch.geometry.pedestal_only = frames->pedestal_only;
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
                   : drop_accumulated(cuda, rc, message);
    }
    for (size_t k = 0; k < n_frames; k++) {
        rc = cc__clusters_begin_frame(out, numbers != NULL ? numbers[k]
                                                           : first_number + k);
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
        memcpy(common_mode, cuda->batch_common_mode, cells * cuda->real_size);
        memcpy(estimated, cuda->batch_estimated, cells);
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

static void free_counting(struct device_counting *counting)
{
    if (counting == NULL)
        return;
    free_tally(&counting->counts);
    free(counting);
}

/* Bins of the spectrum and pixels of the hit map the GPU keeps. */
static size_t counting_size(const cc__tally_binning *binning)
{
    return (binning->counts_spectrum ? binning->bins : 0) +
           (binning->counts_hitmap ? (size_t)binning->rows * binning->cols
                                   : 0);
}

int cc__cuda_set_counting(struct cc__cuda *cuda,
                          const struct cc__tally_binning *binning,
                          char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    struct device_counting *made = NULL;
    if (binning != NULL) {
        made = (struct device_counting *)calloc(1, sizeof *made);
        if (made == NULL)
            return cc__message(message, CC_ENOMEM,
                               "no memory for the spectrum and hit map");
        made->binning = *binning;
        if (!binning->counts_spectrum)
            made->binning.bins = 0; /* the hit map's counts come first */
        int rc = make_tally(&made->counts, counting_size(&made->binning), 3,
                            "allocating the spectrum and hit map", message);
        if (rc != CC_OK) { /* the counting in force stays */
            free_counting(made);
            return rc;
        }
    }
    CUDA_TRY(cudaDeviceSynchronize(), "finishing the GPU's work");
    free_counting(cuda->counting);
    cuda->counting = made;
    return CC_OK;
}

int cc__cuda_take_counting(struct cc__cuda *cuda, uint64_t *counts,
                           uint64_t totals[3], char *message)
{
    unsigned long long taken[3];
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    int rc = take_tally(&cuda->counting->counts, counts, taken,
                        "taking the spectrum and hit map from the GPU",
                        message);
    for (int k = 0; rc == CC_OK && k < 3; k++)
        totals[k] = taken[k];
    return rc;
}

int cc__cuda_set_analog(struct cc__cuda *cuda, bool on, char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    cudaStreamSynchronize(cuda->output); /* no batch adds into what goes */
    cudaFree(cuda->analog);
    cudaFree(cuda->analog_batch);
    cuda->analog = cuda->analog_batch = NULL;
    if (!on)
        return CC_OK;
    size_t bytes = cuda->pixels * sizeof(double);
    double *sums = NULL, *batch = NULL;
    cudaError_t error = cudaMalloc(&sums, bytes);
    if (error == cudaSuccess)
        error = cudaMalloc(&batch, bytes);
    if (error == cudaSuccess)
        error = cudaMemset(sums, 0, bytes);
    /* The memset runs on the legacy stream, which the batches' streams
     * do not wait for. */
    if (error == cudaSuccess)
        error = cudaDeviceSynchronize();
    if (error != cudaSuccess) {
        cudaFree(sums);
        cudaFree(batch);
        return cuda_failure(message, "making the analog image", error);
    }
    cuda->analog = sums;
    cuda->analog_batch = batch;
    return CC_OK;
}

int cc__cuda_take_analog(struct cc__cuda *cuda, double *sums, char *message)
{
    REFUSE_IF_LOST(cuda);
    if (cuda->analog == NULL)
        return CC_OK;
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    size_t bytes = cuda->pixels * sizeof(double);
    double *taken = (double *)malloc(bytes);
    if (taken == NULL)
        return cc__message(message, CC_ENOMEM,
                           "no memory to take the GPU's analog image");
    cudaError_t error = cudaMemcpy(taken, cuda->analog, bytes,
                                   cudaMemcpyDeviceToHost);
    if (error == cudaSuccess)
        error = cudaMemset(cuda->analog, 0, bytes);
    if (error == cudaSuccess)
        error = cudaDeviceSynchronize();
    if (error == cudaSuccess)
        for (size_t p = 0; p < cuda->pixels; p++)
            sums[p] += taken[p];
    free(taken);
    return error == cudaSuccess
               ? CC_OK
               : cuda_failure(message, "taking the analog image", error);
}
