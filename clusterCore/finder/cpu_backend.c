/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpu_backend.c: runs batches of frames on the CPU. Each worker thread
 * decides a fixed band of rows. Only the rows at the band's edges read
 * the state that the neighbouring bands wrote for the frame before, and
 * only they are read by the neighbours. So a worker decides the rows
 * between the edges of frame k+1 at once, and its edges once its
 * neighbours have finished frame k: a pipeline, not a barrier, in which a
 * band may run most of a frame ahead of its neighbours and a slow band
 * delays only its neighbours. The same wait keeps a worker from
 * overwriting state its neighbours still read (below). Their clusters are
 * joined at the end of the batch, in the same task, each worker copying
 * its own into place.
 *
 * Frame k reads one copy of the state and writes a second (all pixels,
 * updated or not), and frame k+1 writes a third; the committed state is
 * swapped with the last written copy only when the whole batch succeeded,
 * so a failed batch leaves the pedestal untouched without copying it.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"

struct cc__cpu {
    struct cc__pool *pool;
    unsigned threads;
    struct cc__worker *workers;
    /* When several workers share a frame, LISTS_PER_WORKER lists a
     * worker, in row order: its top edge's centres, then the rest's. */
    cc_clusters **scratch;
    void *state[2][2];     /* [copy][s or s2] written by alternate frames */
    struct cc__placement *places; /* [frame][list]: the merge's */
    size_t places_capacity;
    int (*process_rows)(const struct cc__frame_job *, struct cc__worker *,
                        enum cc__band_part);
};

enum { LISTS_PER_WORKER = 2 };

/* The scratch lists of all the workers, when several share a frame. */
static size_t scratch_lists(const struct cc__cpu *cpu)
{
    return LISTS_PER_WORKER * (size_t)cpu->threads;
}

static void free_worker(struct cc__worker *worker)
{
    free(worker->v);
    free(worker->hmax);
    free(worker->total);
    free(worker->wmax);
    free(worker->emit);
}

void cc__cpu_destroy(struct cc__cpu *cpu)
{
    if (cpu == NULL)
        return;
    cc__pool_destroy(cpu->pool);
    for (unsigned t = 0; cpu->workers != NULL && t < cpu->threads; t++)
        free_worker(&cpu->workers[t]);
    for (size_t i = 0; cpu->scratch != NULL && i < scratch_lists(cpu); i++)
        cc_clusters_destroy(cpu->scratch[i]);
    free(cpu->workers);
    free(cpu->scratch);
    free(cpu->places);
    for (int copy = 0; copy < 2; copy++) {
        free(cpu->state[copy][0]);
        free(cpu->state[copy][1]);
    }
    free(cpu);
}

/* Allocates the scratch of a worker that decides rows [row0, row1). */
static int init_worker(struct cc__worker *worker, const cc_config *config,
                       uint32_t row0, uint32_t row1)
{
    size_t real = cc__precision_size(config->precision);
    size_t half_x = config->cluster_size_x / 2;
    uint32_t half_y = config->cluster_size_y / 2;
    size_t padded_rows = row1 - row0 + 2 * (size_t)half_y;
    size_t width = config->cols + 2 * half_x;
    uint32_t band = row1 - row0;
    worker->row0 = row0;
    worker->row1 = row1;
    worker->edge_top = row0 == 0 ? 0 : half_y < band ? half_y : band;
    band -= worker->edge_top;
    worker->edge_bottom = row1 == config->rows ? 0
                          : half_y < band     ? half_y
                                              : band;
    worker->v = calloc(padded_rows * width, real);
    worker->hmax = calloc(padded_rows * config->cols, real);
    worker->total = calloc(config->cols, real);
    worker->wmax = calloc(config->cols, real);
    worker->emit = calloc(config->cols, 1);
    return worker->v && worker->hmax && worker->total && worker->wmax &&
                   worker->emit
               ? CC_OK
               : CC_ENOMEM;
}

/* The workers whose bands meet a worker's rows widened by half_y, the
 * rows its windows read: bands are in row order. */
static void find_neighbours(struct cc__worker *workers, unsigned threads,
                            uint32_t half_y)
{
    for (unsigned t = 0; t < threads; t++) {
        int64_t top = (int64_t)workers[t].row0 - half_y;
        int64_t bottom = (int64_t)workers[t].row1 + half_y;
        unsigned first = t, last = t;
        while (first > 0 && (int64_t)workers[first - 1].row1 > top)
            first--;
        while (last + 1 < threads && (int64_t)workers[last + 1].row0 < bottom)
            last++;
        workers[t].first_neighbour = first;
        workers[t].last_neighbour = last;
    }
}

int cc__cpu_new(struct cc__cpu **result, const cc_config *config,
                unsigned threads, char *message)
{
    *result = NULL;
    if (threads > config->rows)
        threads = config->rows;
    struct cc__cpu *cpu = calloc(1, sizeof *cpu);
    if (cpu == NULL)
        return cc__message(message, CC_ENOMEM, "no memory for the CPU backend");
    cpu->threads = threads;
    cpu->process_rows = config->precision == CC_PRECISION_DOUBLE
                            ? cc__process_rows_double
                            : cc__process_rows_float;
    size_t pixels = (size_t)config->rows * config->cols;
    size_t real = cc__precision_size(config->precision);
    int rc = CC_OK;
    for (int copy = 0; copy < 2 && rc == CC_OK; copy++)
        for (int field = 0; field < 2 && rc == CC_OK; field++)
            if ((cpu->state[copy][field] = malloc(pixels * real)) == NULL)
                rc = CC_ENOMEM;
    cpu->workers = calloc(threads, sizeof *cpu->workers);
    if (cpu->workers == NULL)
        rc = CC_ENOMEM;
    if (rc == CC_OK && threads > 1) {
        cpu->scratch = calloc(scratch_lists(cpu), sizeof *cpu->scratch);
        rc = cpu->scratch == NULL ? CC_ENOMEM : CC_OK;
        for (size_t i = 0; i < scratch_lists(cpu) && rc == CC_OK; i++)
            rc = cc_clusters_new(&cpu->scratch[i]);
    }
    for (unsigned t = 0; t < threads && rc == CC_OK; t++) {
        /* Bands of rows as equal as integer division makes them. */
        uint32_t row0 = (uint32_t)((uint64_t)config->rows * t / threads);
        uint32_t row1 = (uint32_t)((uint64_t)config->rows * (t + 1) / threads);
        rc = init_worker(&cpu->workers[t], config, row0, row1);
        if (cpu->scratch != NULL) {
            cc_clusters **own = &cpu->scratch[LISTS_PER_WORKER * t];
            cpu->workers[t].top_clusters = own[0];
            cpu->workers[t].clusters = own[1];
        }
    }
    if (rc != CC_OK) {
        cc__cpu_destroy(cpu);
        return cc__message(message, rc, "no memory for the CPU backend's "
                                        "buffers of %" PRIu32 " x %" PRIu32
                                        " pixels",
                           config->rows, config->cols);
    }
    find_neighbours(cpu->workers, threads, config->cluster_size_y / 2);
    rc = cc__pool_new(&cpu->pool, threads);
    if (rc != CC_OK) {
        cc__cpu_destroy(cpu);
        return cc__message(message, rc, "could not start %u worker threads",
                           threads);
    }
    *result = cpu;
    return CC_OK;
}

void (*cc__cpu_before_edges)(unsigned thread, size_t frame);

unsigned cc__cpu_threads(const struct cc__cpu *cpu)
{
    return cpu->threads;
}

struct batch {
    struct cc__cpu *cpu;
    struct cc__frame_job job; /* frame-independent fields */
    const struct cc__pedestal *pedestal;
    struct cc__frames frames;
    const uint64_t *numbers;
    uint64_t first_number;
    size_t n_frames;
    cc_clusters *out;
    atomic_int error;
};

/* Works out where every worker's clusters go in the batch's list, frame
 * by frame in row order under the cap: a few numbers per frame and
 * worker. */
static int place_clusters(struct cc__cpu *cpu, const struct batch *batch)
{
    size_t lists = scratch_lists(cpu);
    size_t needed = batch->n_frames * lists;
    if (needed > cpu->places_capacity) {
        struct cc__placement *places =
            realloc(cpu->places, needed * sizeof *places);
        if (places == NULL)
            return CC_ENOMEM;
        cpu->places = places;
        cpu->places_capacity = needed;
    }
    for (size_t k = 0; k < batch->n_frames; k++) {
        int rc = cc__clusters_begin_frame(batch->out,
                                          cpu->scratch[0]->frames[k].number);
        for (size_t i = 0; i < lists && rc == CC_OK; i++)
            rc = cc__clusters_place(batch->out, cpu->scratch[i], k,
                                    batch->job.max_clusters,
                                    &cpu->places[k * lists + i]);
        if (rc != CC_OK)
            return rc;
    }
    return CC_OK;
}

static void fail(struct batch *batch, int rc)
{
    atomic_store(&batch->error, rc);
    cc__pool_abandon(batch->cpu->pool);
}

/* The end of a batch shared by several workers: worker 0 waits for every
 * worker's last frame and places the clusters (step n_frames + 1); then
 * each worker copies its own, still in its cache, into place. */
static void join_clusters(struct batch *batch, unsigned thread)
{
    struct cc__cpu *cpu = batch->cpu;
    size_t n = batch->n_frames;
    if (thread == 0) {
        if (!cc__pool_wait(cpu->pool, 0, cpu->threads - 1, n))
            return;
        int rc = place_clusters(cpu, batch);
        if (rc != CC_OK) {
            fail(batch, rc);
            return;
        }
        cc__pool_post(cpu->pool, 0, n + 1);
    } else if (!cc__pool_wait(cpu->pool, 0, 0, n + 1)) {
        return;
    }
    size_t lists = scratch_lists(cpu);
    size_t first = LISTS_PER_WORKER * (size_t)thread;
    for (size_t k = 0; k < n; k++)
        for (size_t i = first; i < first + LISTS_PER_WORKER; i++)
            cc__clusters_copy_placed(batch->out, cpu->scratch[i], k,
                                     &cpu->places[k * lists + i]);
}

/* One worker's rows of every frame of the batch. The rows between its
 * edges read and write its own band's state only. Before frame k's edges
 * it waits for its neighbours to finish frame k - 1: then the state the
 * edges' windows read is written, and the copy the edges write (written
 * by frame k - 2) has been read by every neighbour for frame k - 1. With
 * several workers, their clusters are then joined. */
static void run_batch(void *context, unsigned thread)
{
    struct batch *batch = context;
    struct cc__cpu *cpu = batch->cpu;
    struct cc__worker *worker = &cpu->workers[thread];
    for (size_t k = 0; k < batch->n_frames; k++) {
        struct cc__frame_job job = batch->job;
        job.frame = cc__frame_at(&batch->frames, k);
        job.number = batch->numbers != NULL ? batch->numbers[k]
                                            : batch->first_number + k;
        job.s_in = k == 0 ? batch->pedestal->s : cpu->state[(k - 1) % 2][0];
        job.s2_in = k == 0 ? batch->pedestal->s2 : cpu->state[(k - 1) % 2][1];
        job.s_out = cpu->state[k % 2][0];
        job.s2_out = cpu->state[k % 2][1];
        int rc = cpu->process_rows(&job, worker, CC__BAND_INSIDE);
        if (cc__cpu_before_edges != NULL)
            cc__cpu_before_edges(thread, k);
        if (rc == CC_OK && k > 0 &&
            !cc__pool_wait(cpu->pool, worker->first_neighbour,
                           worker->last_neighbour, k))
            return; /* another worker failed: the batch is dropped */
        if (rc == CC_OK)
            rc = cpu->process_rows(&job, worker, CC__BAND_EDGES);
        if (rc != CC_OK) {
            fail(batch, rc);
            return;
        }
        cc__pool_post(cpu->pool, thread, k + 1);
    }
    if (cpu->threads > 1)
        join_clusters(batch, thread);
}

int cc__cpu_process(struct cc__cpu *cpu, const cc_config *config,
                    struct cc__pedestal *pedestal,
                    const struct cc__frames *frames,
                    const uint64_t *numbers, uint64_t first_number,
                    size_t n_frames, cc_clusters *out, char *message)
{
    uint32_t nx = config->cluster_size_x, ny = config->cluster_size_y;
    cc__clusters_clear(out, nx, ny);
    if (n_frames == 0)
        return CC_OK;
    struct batch batch = {
        .cpu = cpu,
        .job = {.rows = config->rows,
                .cols = config->cols,
                .half_x = nx / 2,
                .half_y = ny / 2,
                .adc_mask = config->adc_mask,
                .max_clusters = config->max_clusters,
                .window = pedestal->window,
                .nsigma = config->nsigma,
                .c3nsigma = cc__c3nsigma(config),
                .baseline = pedestal->baseline,
                .pixel_mask = pedestal->mask},
        .pedestal = pedestal,
        .frames = *frames,
        .numbers = numbers,
        .first_number = first_number,
        .n_frames = n_frames,
        .out = out,
    };
    atomic_init(&batch.error, CC_OK);
    if (cpu->threads == 1)
        cpu->workers[0].clusters = out;
    else
        for (size_t i = 0; i < scratch_lists(cpu); i++)
            cc__clusters_clear(cpu->scratch[i], nx, ny);
    cc__pool_run(cpu->pool, run_batch, &batch);
    int rc = atomic_load(&batch.error);
    if (rc != CC_OK) {
        cc__clusters_clear(out, nx, ny);
        return cc__message(message, rc,
                           "no memory for the clusters of a batch of %zu "
                           "frames; the pedestal is unchanged",
                           n_frames);
    }
    size_t last = (n_frames - 1) % 2;
    void *committed_s = pedestal->s, *committed_s2 = pedestal->s2;
    pedestal->s = cpu->state[last][0];
    pedestal->s2 = cpu->state[last][1];
    cpu->state[last][0] = committed_s;
    cpu->state[last][1] = committed_s2;
    return CC_OK;
}
