/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread_pool.c: a fixed set of worker threads that run one task together,
 * and waits within the task for conditions the task's own threads make
 * true, such as a neighbour's progress. Thread 0 is the caller, so a pool
 * of one thread starts no thread at all.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

/* How long a waiting thread spins before it sleeps. What it waits for
 * (a neighbour's frame, the next task) usually comes within microseconds,
 * while a sleeper wakes tens of microseconds late, more on a virtual CPU
 * that halted; and the pipeline passes each late start on to the
 * neighbours. */
enum { SPIN_NS = 100000 };

struct cc__pool {
    unsigned threads;
    pthread_t *workers; /* threads - 1 of them */
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* a task was posted, or the pool stops */
    pthread_cond_t finished; /* the last worker finished the task */
    atomic_bool abandoned;
    atomic_uint sleepers; /* threads asleep in cc__pool_wait_until */
    pthread_mutex_t progress_lock;
    pthread_cond_t progressed; /* cc__pool_notify was called */
    atomic_ulong generation;   /* counts posted tasks; written under lock */
    atomic_uint busy;          /* workers still running the task; likewise */
    atomic_bool stopping;      /* written under lock */
    void (*task)(void *, unsigned);
    void *context;
};

struct worker_start {
    struct cc__pool *pool;
    unsigned index;
};

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Spins until done(pool, argument) holds, for SPIN_NS at most; the clock
 * is read once every 64 pauses. Returns whether it held. */
static bool spin_until(struct cc__pool *pool,
                       bool (*done)(struct cc__pool *, void *), void *argument)
{
    uint64_t deadline = 0;
    for (unsigned spin = 1;; spin++) {
        if (done(pool, argument))
            return true;
        relax();
        if (spin % 64 == 0) {
            uint64_t now = monotonic_ns();
            if (deadline == 0)
                deadline = now + SPIN_NS;
            else if (now >= deadline)
                return false;
        }
    }
}

static bool task_posted(struct cc__pool *pool, void *seen)
{
    return atomic_load(&pool->generation) != *(unsigned long *)seen ||
           atomic_load(&pool->stopping);
}

static void *worker_main(void *argument)
{
    struct worker_start start = *(struct worker_start *)argument;
    free(argument);
    struct cc__pool *pool = start.pool;
    unsigned long seen = 0;
    for (;;) {
        spin_until(pool, task_posted, &seen);
        pthread_mutex_lock(&pool->lock);
        while (!atomic_load(&pool->stopping) &&
               atomic_load(&pool->generation) == seen)
            pthread_cond_wait(&pool->wake, &pool->lock);
        bool stopping = atomic_load(&pool->stopping);
        seen = atomic_load(&pool->generation);
        pthread_mutex_unlock(&pool->lock);
        if (stopping)
            break;
        pool->task(pool->context, start.index);
        pthread_mutex_lock(&pool->lock);
        if (atomic_fetch_sub(&pool->busy, 1) == 1)
            pthread_cond_signal(&pool->finished);
        pthread_mutex_unlock(&pool->lock);
    }
    return NULL;
}

/* Stops and joins the first started workers; used by destroy and by a
 * creation that failed part-way. */
static void stop_workers(struct cc__pool *pool, unsigned started)
{
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->stopping, true);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(pool->workers[i], NULL);
}

static void free_pool(struct cc__pool *pool)
{
    pthread_cond_destroy(&pool->progressed);
    pthread_mutex_destroy(&pool->progress_lock);
    pthread_cond_destroy(&pool->finished);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
}

int cc__pool_new(struct cc__pool **result, unsigned threads)
{
    *result = NULL;
    struct cc__pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return CC_ENOMEM;
    pool->threads = threads;
    pool->workers = calloc(threads, sizeof *pool->workers);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->finished, NULL);
    pthread_mutex_init(&pool->progress_lock, NULL);
    pthread_cond_init(&pool->progressed, NULL);
    if (pool->workers == NULL) {
        free_pool(pool);
        return CC_ENOMEM;
    }
    atomic_init(&pool->abandoned, false);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->busy, 0);
    atomic_init(&pool->stopping, false);
    /* Workers are time-shared, whatever the thread that starts them: an
     * EPICS IOC run as root gives its threads real-time priorities, and
     * real-time workers that keep every CPU busy behind frames they cannot
     * keep up with would keep Channel Access and every process beside
     * them from the CPUs (lowering a policy needs no privilege). */
    pthread_attr_t time_shared;
    struct sched_param ordinary = {0};
    if (pthread_attr_init(&time_shared) != 0) {
        free_pool(pool);
        return CC_ENOMEM;
    }
    pthread_attr_setinheritsched(&time_shared, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&time_shared, SCHED_OTHER);
    pthread_attr_setschedparam(&time_shared, &ordinary);
    for (unsigned i = 1; i < threads; i++) {
        struct worker_start *start = malloc(sizeof *start);
        int failed = start == NULL;
        if (!failed) {
            *start = (struct worker_start){.pool = pool, .index = i};
            failed = pthread_create(&pool->workers[i - 1], &time_shared,
                                    worker_main, start) != 0;
            if (failed)
                free(start);
        }
        if (failed) {
            pthread_attr_destroy(&time_shared);
            stop_workers(pool, i - 1);
            free_pool(pool);
            return start == NULL ? CC_ENOMEM : CC_ETHREAD;
        }
    }
    pthread_attr_destroy(&time_shared);
    *result = pool;
    return CC_OK;
}

void cc__pool_destroy(struct cc__pool *pool)
{
    if (pool == NULL)
        return;
    stop_workers(pool, pool->threads - 1);
    free_pool(pool);
}

unsigned cc__pool_threads(const struct cc__pool *pool)
{
    return pool->threads;
}

static bool workers_finished(struct cc__pool *pool, void *unused)
{
    (void)unused;
    return atomic_load(&pool->busy) == 0;
}

void cc__pool_run(struct cc__pool *pool, void (*task)(void *, unsigned),
                  void *context)
{
    /* No thread runs a task now: the flag starts again unraced. */
    atomic_store(&pool->abandoned, false);
    if (pool->threads > 1) {
        pthread_mutex_lock(&pool->lock);
        pool->task = task;
        pool->context = context;
        atomic_store(&pool->busy, pool->threads - 1);
        atomic_fetch_add(&pool->generation, 1);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->lock);
    }
    task(context, 0);
    if (pool->threads > 1) {
        spin_until(pool, workers_finished, NULL);
        pthread_mutex_lock(&pool->lock);
        while (atomic_load(&pool->busy) > 0)
            pthread_cond_wait(&pool->finished, &pool->lock);
        pthread_mutex_unlock(&pool->lock);
    }
}

static void wake_sleepers(struct cc__pool *pool)
{
    pthread_mutex_lock(&pool->progress_lock);
    pthread_cond_broadcast(&pool->progressed);
    pthread_mutex_unlock(&pool->progress_lock);
}

void cc__pool_notify(struct cc__pool *pool)
{
    /* Sequentially consistent, as is the sleepers' count and the store
     * the caller made before: either this thread sees a sleeper to wake,
     * or the sleeper, counted first, sees that store before it sleeps. */
    if (atomic_load(&pool->sleepers) > 0)
        wake_sleepers(pool);
}

/* What cc__pool_wait_until waits for. */
struct wanted {
    bool (*done)(void *);
    void *argument;
};

static bool done_or_abandoned(struct cc__pool *pool, void *argument)
{
    const struct wanted *w = argument;
    return w->done(w->argument) || atomic_load(&pool->abandoned);
}

bool cc__pool_wait_until(struct cc__pool *pool, bool (*done)(void *),
                         void *argument)
{
    struct wanted wanted = {done, argument};
    if (spin_until(pool, done_or_abandoned, &wanted))
        return !atomic_load(&pool->abandoned);
    pthread_mutex_lock(&pool->progress_lock);
    atomic_fetch_add(&pool->sleepers, 1);
    bool abandoned;
    while (!(abandoned = atomic_load(&pool->abandoned)) && !done(argument))
        pthread_cond_wait(&pool->progressed, &pool->progress_lock);
    atomic_fetch_sub(&pool->sleepers, 1);
    pthread_mutex_unlock(&pool->progress_lock);
    return !abandoned;
}

void cc__pool_abandon(struct cc__pool *pool)
{
    atomic_store(&pool->abandoned, true);
    wake_sleepers(pool);
}

/* The thread count that 0 (one per online CPU) or n stands for. */
unsigned cc__resolve_threads(uint32_t threads)
{
    if (threads != 0)
        return threads;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1)
        return 1;
    return online > (long)CC_THREADS_MAX ? CC_THREADS_MAX : (unsigned)online;
}

int cc_thread_share_cpus(void)
{
    struct sched_param ordinary = {0};
    return pthread_setschedparam(pthread_self(), SCHED_OTHER, &ordinary) == 0
               ? CC_OK
               : CC_ENOTSUP;
}
