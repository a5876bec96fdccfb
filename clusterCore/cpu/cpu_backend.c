/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpu_backend.c: runs batches of frames on the CPU. A frame's rows are
 * cut into blocks, two for each thread. Each block subtracts the pedestal
 * from its own rows of frame k into the frame's subtracted values, shared
 * by all blocks, from the state it left after frame k - 1; its windows
 * then read those values in its rows and in half_y rows on each side,
 * which the blocks there (its neighbours, itself among them) subtracted.
 * One step of block j decides frame k - 1 and subtracts frame k: so it
 * may run once its neighbours have taken the step before, whatever the
 * rest of the frame is doing, and no row is subtracted twice. A batch of
 * n frames is n + 1 steps a block, the first one subtracting only and the
 * last one deciding only. Each thread takes ready steps, first of
 * its own blocks, furthest behind first (their state is still in its
 * cache), and when none of those is ready the furthest-behind ready block
 * of any thread. A thread slowed by its CPU or by the scheduler thus
 * leaves its blocks to the others instead of holding its neighbours back,
 * and blocks far apart may be many frames apart. Each block keeps its
 * clusters, in row order, in its own list; at the end of the batch, in
 * the same task, thread 0 places them and each thread copies its own
 * blocks' lists into place.
 *
 * Frame k reads one copy of the state and writes a second (all pixels,
 * updated or not), and frame k+1 writes a third; the committed state is
 * swapped with the last written copy only when the whole batch succeeded,
 * so a failed batch leaves the pedestal untouched without copying it. A
 * block reads and writes only its own rows of the state. Its subtracted
 * values alternate between two copies by frame parity: the wait for the
 * neighbours also keeps a block from overwriting, with frame k, the
 * values of frame k - 2 they read, since they have decided it.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu.h"

/* One block of rows, alone on its cache lines: its owner writes `done`
 * and `claimed` once a step, every neighbour reads them. */
struct block {
    _Alignas(64) atomic_size_t done; /* steps of the batch taken */
    atomic_bool claimed;             /* a thread is taking its step */
    uint32_t row0, row1;
    /* The blocks whose rows this block's windows read, itself among
     * them (blocks are in row order). */
    unsigned first_neighbour, last_neighbour;
    /* Its clusters, in row order; NULL for a single block, which writes
     * the batch's list itself. */
    cc_clusters *clusters;
};

struct cc__cpu {
    struct cc__pool *pool;
    unsigned threads;
    unsigned n_blocks;
    struct block *blocks;
    struct cc__worker *workers; /* one a thread */
    void *state[2][2];      /* [copy][s or s2] written by alternate frames */
    void *subtracted[2][2]; /* [copy][v or hmax] of alternate frames */
    struct cc__placement *places; /* [frame][block]: the merge's */
    size_t places_capacity;
    void (*subtract_rows)(const struct cc__frame_job *, uint32_t, uint32_t);
    int (*decide_rows)(const struct cc__frame_job *, struct cc__worker *,
                       uint32_t, uint32_t, cc_clusters *);
    void (*common_mode_frame)(const struct cc__common_mode_job *,
                              const uint16_t *,
                              struct cc__common_mode_scratch *, void *,
                              uint8_t *);
    /* With common mode on: a thread's scratch. */
    struct cc__common_mode_scratch *common_mode_scratch;
};

/* Copies of the subtracted values: two by frame parity for several
 * blocks; one block decides a frame before it subtracts the next. */
static unsigned subtracted_copies(const struct cc__cpu *cpu)
{
    return cpu->n_blocks > 1 ? 2 : 1;
}

/* Blocks a thread: two, so that a thread held up leaves one to the
 * others; on the H200's host one lost and four gained nothing
 * (docs/benchmarks.md). Blocks at least MIN_BLOCK_ROWS high, so that a
 * step's rows outweigh its claim and its wait. */
enum { BLOCKS_PER_THREAD = 2, MIN_BLOCK_ROWS = 8 };

static unsigned count_blocks(const cc_config *config, unsigned threads)
{
    if (threads == 1)
        return 1;
    uint32_t most = config->rows / MIN_BLOCK_ROWS;
    uint64_t wanted = (uint64_t)threads * BLOCKS_PER_THREAD;
    return most == 0 ? 1 : wanted < most ? (unsigned)wanted : most;
}

/* Thread t's own blocks are [home_block(t), home_block(t + 1)). */
static unsigned home_block(const struct cc__cpu *cpu, unsigned thread)
{
    return (unsigned)((uint64_t)cpu->n_blocks * thread / cpu->threads);
}

static void free_worker(struct cc__worker *worker)
{
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
    for (unsigned b = 0; cpu->blocks != NULL && b < cpu->n_blocks; b++)
        cc_clusters_destroy(cpu->blocks[b].clusters);
    for (unsigned t = 0; cpu->common_mode_scratch != NULL && t < cpu->threads;
         t++) {
        free(cpu->common_mode_scratch[t].reference);
        free(cpu->common_mode_scratch[t].bins);
        free(cpu->common_mode_scratch[t].calm);
        free(cpu->common_mode_scratch[t].calm_across);
        free(cpu->common_mode_scratch[t].centre);
        free(cpu->common_mode_scratch[t].histogram);
    }
    free(cpu->common_mode_scratch);
    free(cpu->workers);
    free(cpu->blocks);
    free(cpu->places);
    for (int copy = 0; copy < 2; copy++)
        for (int field = 0; field < 2; field++) {
            free(cpu->state[copy][field]);
            free(cpu->subtracted[copy][field]);
        }
    free(cpu);
}

/* Allocates a thread's scratch, one row's worth. */
static int init_worker(struct cc__worker *worker, const cc_config *config)
{
    size_t real = cc__precision_size(config->precision);
    worker->total = calloc(config->cols, real);
    worker->wmax = calloc(config->cols, real);
    worker->emit = calloc(config->cols, 1);
    return worker->total && worker->wmax && worker->emit ? CC_OK : CC_ENOMEM;
}

/* Allocates a copy of a frame's subtracted values, zero where never
 * written: the padding. */
static int new_subtracted(void *subtracted[2], const cc_config *config)
{
    size_t real = cc__precision_size(config->precision);
    size_t padded_rows = config->rows +
                         2 * (size_t)(config->cluster_size_y / 2);
    size_t width = config->cols + 2 * (size_t)(config->cluster_size_x / 2);
    subtracted[0] = calloc(padded_rows * width, real);
    subtracted[1] = calloc(padded_rows * config->cols, real);
    return subtracted[0] && subtracted[1] ? CC_OK : CC_ENOMEM;
}

/* Cuts the rows into blocks as equal as integer division makes them, each
 * with its neighbours: the blocks that meet its rows widened by half_y,
 * the rows its windows read. */
static void cut_blocks(struct block *blocks, unsigned n_blocks, uint32_t rows,
                       uint32_t half_y)
{
    for (unsigned b = 0; b < n_blocks; b++) {
        blocks[b].row0 = (uint32_t)((uint64_t)rows * b / n_blocks);
        blocks[b].row1 = (uint32_t)((uint64_t)rows * (b + 1) / n_blocks);
    }
    for (unsigned b = 0; b < n_blocks; b++) {
        int64_t top = (int64_t)blocks[b].row0 - half_y;
        int64_t bottom = (int64_t)blocks[b].row1 + half_y;
        unsigned first = b, last = b;
        while (first > 0 && (int64_t)blocks[first - 1].row1 > top)
            first--;
        while (last + 1 < n_blocks && (int64_t)blocks[last + 1].row0 < bottom)
            last++;
        blocks[b].first_neighbour = first;
        blocks[b].last_neighbour = last;
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
    cpu->n_blocks = count_blocks(config, threads);
    bool double_precision = config->precision == CC_PRECISION_DOUBLE;
    cpu->subtract_rows = double_precision ? cc__subtract_rows_double
                                          : cc__subtract_rows_float;
    cpu->decide_rows = double_precision ? cc__decide_rows_double
                                        : cc__decide_rows_float;
    cpu->common_mode_frame = double_precision ? cc__common_mode_frame_double
                                              : cc__common_mode_frame_float;
    size_t pixels = (size_t)config->rows * config->cols;
    size_t real = cc__precision_size(config->precision);
    int rc = CC_OK;
    for (int copy = 0; copy < 2 && rc == CC_OK; copy++)
        for (int field = 0; field < 2 && rc == CC_OK; field++)
            if ((cpu->state[copy][field] = malloc(pixels * real)) == NULL)
                rc = CC_ENOMEM;
    for (unsigned copy = 0; copy < subtracted_copies(cpu) && rc == CC_OK;
         copy++)
        rc = new_subtracted(cpu->subtracted[copy], config);
    cpu->workers = calloc(threads, sizeof *cpu->workers);
    cpu->blocks = aligned_alloc(_Alignof(struct block),
                                cpu->n_blocks * sizeof *cpu->blocks);
    if (cpu->workers == NULL || cpu->blocks == NULL)
        rc = CC_ENOMEM;
    /* Filled in whatever failed before: cc__cpu_destroy reads them. */
    if (cpu->blocks != NULL) {
        for (unsigned b = 0; b < cpu->n_blocks; b++) {
            atomic_init(&cpu->blocks[b].done, 0);
            atomic_init(&cpu->blocks[b].claimed, false);
            cpu->blocks[b].clusters = NULL;
        }
        cut_blocks(cpu->blocks, cpu->n_blocks, config->rows,
                   config->cluster_size_y / 2);
    }
    for (unsigned b = 0; cpu->n_blocks > 1 && b < cpu->n_blocks && rc == CC_OK;
         b++)
        rc = cc_clusters_new(&cpu->blocks[b].clusters);
    for (unsigned t = 0; t < threads && rc == CC_OK; t++)
        rc = init_worker(&cpu->workers[t], config);
    if (rc == CC_OK && config->common_mode != CC_COMMON_MODE_NONE) {
        uint32_t regions = cc_common_mode_regions(config);
        cpu->common_mode_scratch = calloc(threads,
                                          sizeof *cpu->common_mode_scratch);
        rc = cpu->common_mode_scratch == NULL ? CC_ENOMEM : CC_OK;
        for (unsigned t = 0; t < threads && rc == CC_OK; t++) {
            struct cc__common_mode_scratch *scratch =
                &cpu->common_mode_scratch[t];
            scratch->reference = malloc(pixels *
                                        cc__precision_size(config->precision));
            scratch->bins = malloc(pixels * sizeof *scratch->bins);
            scratch->calm = malloc(pixels);
            scratch->calm_across = malloc(pixels);
            scratch->centre = malloc(regions * sizeof *scratch->centre);
            scratch->histogram = calloc((size_t)CC__CENTRE_COPIES *
                                            CC__CENTRE_BINS,
                                        sizeof *scratch->histogram);
            if (!scratch->reference || !scratch->bins || !scratch->calm ||
                !scratch->calm_across || !scratch->centre ||
                !scratch->histogram)
                rc = CC_ENOMEM;
        }
    }
    if (rc != CC_OK) {
        cc__cpu_destroy(cpu);
        return cc__message(message, rc,
                           "no memory for the CPU backend's "
                           "buffers of %" PRIu32 " x %" PRIu32 " pixels",
                           config->rows, config->cols);
    }
    rc = cc__pool_new(&cpu->pool, threads);
    if (rc != CC_OK) {
        cc__cpu_destroy(cpu);
        return cc__message(message, rc, "could not start %u worker threads",
                           threads);
    }
    *result = cpu;
    return CC_OK;
}

void (*cc__cpu_before_block)(unsigned block, size_t step);

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
    /* With common mode on: the job of its estimate, and per frame its
     * values (reals) and whether each region was estimated. */
    struct cc__common_mode_job common_mode_job;
    void *common_mode;
    uint8_t *estimated;
    atomic_int error;
    atomic_bool placed; /* thread 0 placed every block's clusters */
};

/* Works out where every block's clusters go in the batch's list, frame by
 * frame in row order under the cap: a few numbers per frame and block. */
static int place_clusters(struct cc__cpu *cpu, const struct batch *batch)
{
    size_t blocks = cpu->n_blocks;
    size_t needed = batch->n_frames * blocks;
    if (needed > cpu->places_capacity) {
        struct cc__placement *places = realloc(cpu->places,
                                               needed * sizeof *places);
        if (places == NULL)
            return CC_ENOMEM;
        cpu->places = places;
        cpu->places_capacity = needed;
    }
    for (size_t k = 0; k < batch->n_frames; k++) {
        int rc = cc__clusters_begin_frame(
            batch->out, cpu->blocks[0].clusters->frames[k].number);
        for (size_t b = 0; b < blocks && rc == CC_OK; b++)
            rc = cc__clusters_place(batch->out, cpu->blocks[b].clusters, k,
                                    batch->job.max_clusters,
                                    &cpu->places[k * blocks + b]);
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

static bool clusters_placed(void *context)
{
    struct batch *batch = context;
    return atomic_load(&batch->placed);
}

/* The end of a batch of several blocks, once every block has decided
 * every frame: thread 0 places the clusters; then each thread copies its
 * own blocks' lists, most likely still in its cache, into place. */
static void join_clusters(struct batch *batch, unsigned thread)
{
    struct cc__cpu *cpu = batch->cpu;
    if (thread == 0) {
        int rc = place_clusters(cpu, batch);
        if (rc != CC_OK) {
            fail(batch, rc);
            return;
        }
        atomic_store(&batch->placed, true);
        cc__pool_notify(cpu->pool);
    } else if (!cc__pool_wait_until(cpu->pool, clusters_placed, batch)) {
        return;
    }
    size_t blocks = cpu->n_blocks;
    for (unsigned b = home_block(cpu, thread); b < home_block(cpu, thread + 1);
         b++)
        for (size_t k = 0; k < batch->n_frames; k++)
            cc__clusters_copy_placed(batch->out, cpu->blocks[b].clusters, k,
                                     &cpu->places[k * blocks + b]);
}

/* The step block b may take now: the next one, when its neighbours have
 * taken the one before. SIZE_MAX when it may not, or has taken all. */
static size_t ready_step(const struct cc__cpu *cpu, const struct block *b,
                         size_t n_steps)
{
    size_t step = atomic_load(&b->done);
    if (step == n_steps)
        return SIZE_MAX;
    for (unsigned m = b->first_neighbour; m <= b->last_neighbour; m++)
        if (atomic_load(&cpu->blocks[m].done) < step)
            return SIZE_MAX;
    return step;
}

/* The unclaimed block of [first, end) (indices modulo n_blocks) furthest
 * behind among those ready; n_blocks when there is none. */
static unsigned furthest_behind(const struct cc__cpu *cpu, unsigned first,
                                unsigned end, size_t n_steps)
{
    unsigned best = cpu->n_blocks;
    size_t best_step = SIZE_MAX;
    for (unsigned i = first; i < end; i++) {
        unsigned b = i % cpu->n_blocks;
        if (atomic_load(&cpu->blocks[b].claimed))
            continue;
        size_t step = ready_step(cpu, &cpu->blocks[b], n_steps);
        if (step < best_step) {
            best = b;
            best_step = step;
        }
    }
    return best;
}

/* Claims a ready block for the thread and says which step it takes: one
 * of its own if it can, else anyone's. n_blocks when none is ready. */
static unsigned claim_block(struct cc__cpu *cpu, unsigned thread,
                            size_t n_steps, size_t *step)
{
    unsigned home = home_block(cpu, thread);
    unsigned home_end = home_block(cpu, thread + 1);
    for (;;) {
        unsigned b = furthest_behind(cpu, home, home_end, n_steps);
        if (b == cpu->n_blocks)
            b = furthest_behind(cpu, home_end, home + cpu->n_blocks, n_steps);
        if (b == cpu->n_blocks)
            return b;
        struct block *block = &cpu->blocks[b];
        bool unclaimed = false;
        if (!atomic_compare_exchange_strong(&block->claimed, &unclaimed, true))
            continue;
        /* Another thread may have taken the step between the look and
         * the claim. */
        *step = ready_step(cpu, block, n_steps);
        if (*step != SIZE_MAX)
            return b;
        atomic_store(&block->claimed, false);
    }
}

/* What a thread with nothing to claim waits for. */
struct claim_query {
    const struct cc__cpu *cpu;
    size_t n_steps;
};

static bool all_taken(const struct cc__cpu *cpu, size_t n_steps)
{
    for (unsigned b = 0; b < cpu->n_blocks; b++)
        if (atomic_load(&cpu->blocks[b].done) < n_steps)
            return false;
    return true;
}

static bool block_ready_or_all_taken(void *context)
{
    const struct claim_query *q = context;
    return furthest_behind(q->cpu, 0, q->cpu->n_blocks, q->n_steps) <
               q->cpu->n_blocks ||
           all_taken(q->cpu, q->n_steps);
}

/* Frame k of the batch, with the state it reads and writes and its copy
 * of the subtracted values. */
static struct cc__frame_job frame_job(const struct batch *batch, size_t k)
{
    const struct cc__cpu *cpu = batch->cpu;
    struct cc__frame_job job = batch->job;
    job.frame = cc__frame_at(&batch->frames, k);
    job.number = batch->numbers != NULL ? batch->numbers[k]
                                        : batch->first_number + k;
    job.s_in = k == 0 ? batch->pedestal->s : cpu->state[(k - 1) % 2][0];
    job.s2_in = k == 0 ? batch->pedestal->s2 : cpu->state[(k - 1) % 2][1];
    job.s_out = cpu->state[k % 2][0];
    job.s2_out = cpu->state[k % 2][1];
    if (batch->common_mode != NULL)
        job.common_mode = (const char *)batch->common_mode +
                          k * job.regions.count *
                              cc__precision_size(batch->pedestal->precision);
    job.v = cpu->subtracted[k % subtracted_copies(cpu)][0];
    job.hmax = cpu->subtracted[k % subtracted_copies(cpu)][1];
    return job;
}

/* Step `step` of block b with this thread's scratch: decides frame
 * step - 1, then subtracts frame step, from the state the decision left. */
static int take_step(const struct batch *batch, struct cc__worker *worker,
                     unsigned b, size_t step)
{
    const struct cc__cpu *cpu = batch->cpu;
    const struct block *block = &cpu->blocks[b];
    if (cc__cpu_before_block != NULL)
        cc__cpu_before_block(b, step);
    if (step > 0) {
        struct cc__frame_job job = frame_job(batch, step - 1);
        int rc = cpu->decide_rows(&job, worker, block->row0, block->row1,
                                  block->clusters != NULL ? block->clusters
                                                          : batch->out);
        if (rc != CC_OK)
            return rc;
    }
    if (step < batch->n_frames) {
        struct cc__frame_job job = frame_job(batch, step);
        cpu->subtract_rows(&job, block->row0, block->row1);
    }
    return CC_OK;
}

/* One thread's part of a batch: ready steps until every block has taken
 * every step, then, with several blocks, the join. */
static void run_batch(void *context, unsigned thread)
{
    struct batch *batch = context;
    struct cc__cpu *cpu = batch->cpu;
    size_t n_steps = batch->n_frames + 1;
    struct claim_query query = {cpu, n_steps};
    while (atomic_load(&batch->error) == CC_OK) {
        size_t step;
        unsigned b = claim_block(cpu, thread, n_steps, &step);
        if (b == cpu->n_blocks) {
            if (all_taken(cpu, n_steps))
                break;
            if (!cc__pool_wait_until(cpu->pool, block_ready_or_all_taken,
                                     &query))
                return; /* another thread failed: the batch is dropped */
            continue;
        }
        int rc = take_step(batch, &cpu->workers[thread], b, step);
        if (rc != CC_OK) {
            fail(batch, rc);
            return;
        }
        atomic_store(&cpu->blocks[b].done, step + 1);
        atomic_store(&cpu->blocks[b].claimed, false);
        cc__pool_notify(cpu->pool);
    }
    if (atomic_load(&batch->error) == CC_OK && cpu->n_blocks > 1)
        join_clusters(batch, thread);
}

/* docs/spec.md §8: thread t estimates the common mode of frames t, t +
 * threads, ...; each frame's estimate reads only the frame and the
 * reference, so frames are independent. */
static void estimate_common_mode(void *context, unsigned thread)
{
    struct batch *batch = context;
    struct cc__cpu *cpu = batch->cpu;
    uint32_t regions = batch->common_mode_job.regions.count;
    size_t real = cc__precision_size(batch->pedestal->precision);
    for (size_t k = thread; k < batch->n_frames; k += cpu->threads)
        cpu->common_mode_frame(&batch->common_mode_job,
                               cc__frame_at(&batch->frames, k),
                               &cpu->common_mode_scratch[thread],
                               (char *)batch->common_mode + k * regions * real,
                               batch->estimated + k * regions);
}

int cc__cpu_process(struct cc__cpu *cpu,
                    const struct cc__batch_request *request,
                    struct cc__pedestal *pedestal, const void *gain,
                    double *analog, char *message)
{
    const cc_config *config = request->config;
    const size_t n_frames = request->n_frames;
    cc_clusters *out = request->out;
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
                .pixel_mask = pedestal->mask,
                .pedestal_only = request->frames->pedestal_only,
                .gain = gain,
                .analog = analog,
                .regions = cc__regions_of((int)config->common_mode,
                                          config->rows, config->cols)},
        .pedestal = pedestal,
        .frames = *request->frames,
        .numbers = request->numbers,
        .first_number = request->first_number,
        .n_frames = n_frames,
        .out = out,
        .common_mode_job = {.pedestal = pedestal,
                            .regions = cc__regions_of((int)config->common_mode,
                                                      config->rows,
                                                      config->cols),
                            .adc_mask = config->adc_mask,
                            .nsigma = config->nsigma},
        .common_mode = config->common_mode != CC_COMMON_MODE_NONE
                           ? request->common_mode
                           : NULL,
        .estimated = request->estimated,
    };
    atomic_init(&batch.error, CC_OK);
    atomic_init(&batch.placed, false);
    /* No thread runs a batch now: the counts start again unraced. */
    for (unsigned b = 0; b < cpu->n_blocks; b++) {
        atomic_store(&cpu->blocks[b].done, 0);
        atomic_store(&cpu->blocks[b].claimed, false);
        if (cpu->blocks[b].clusters != NULL)
            cc__clusters_clear(cpu->blocks[b].clusters, nx, ny);
    }
    if (batch.common_mode != NULL)
        cc__pool_run(cpu->pool, estimate_common_mode, &batch);
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
