/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread_pool.c: a fixed set of worker threads that run one task together,
 * with a barrier between the frames of a batch. Thread 0 is the caller, so
 * a pool of one thread starts no thread at all.
 */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

struct cc__pool {
    unsigned threads;
    pthread_t *workers; /* threads - 1 of them */
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* a task was posted, or the pool stops */
    pthread_cond_t finished; /* the last worker finished the task */
    pthread_barrier_t barrier;
    bool barrier_ready;
    unsigned long generation; /* counts posted tasks */
    unsigned busy;            /* workers still running the task */
    bool stopping;
    void (*task)(void *, unsigned);
    void *context;
};

struct worker_start {
    struct cc__pool *pool;
    unsigned index;
};

static void *worker_main(void *argument)
{
    struct worker_start start = *(struct worker_start *)argument;
    free(argument);
    struct cc__pool *pool = start.pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->stopping && pool->generation == seen)
            pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->stopping)
            break;
        seen = pool->generation;
        pthread_mutex_unlock(&pool->lock);
        pool->task(pool->context, start.index);
        pthread_mutex_lock(&pool->lock);
        if (--pool->busy == 0)
            pthread_cond_signal(&pool->finished);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Stops and joins the first started workers; used by destroy and by a
 * creation that failed part-way. */
static void stop_workers(struct cc__pool *pool, unsigned started)
{
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(pool->workers[i], NULL);
}

static void free_pool(struct cc__pool *pool)
{
    if (pool->barrier_ready)
        pthread_barrier_destroy(&pool->barrier);
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
    if (pool->workers == NULL) {
        free(pool);
        return CC_ENOMEM;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->finished, NULL);
    pool->barrier_ready =
        pthread_barrier_init(&pool->barrier, NULL, threads) == 0;
    if (!pool->barrier_ready) {
        free_pool(pool);
        return CC_ETHREAD;
    }
    for (unsigned i = 1; i < threads; i++) {
        struct worker_start *start = malloc(sizeof *start);
        int failed = start == NULL;
        if (!failed) {
            *start = (struct worker_start){.pool = pool, .index = i};
            failed = pthread_create(&pool->workers[i - 1], NULL, worker_main,
                                    start) != 0;
            if (failed)
                free(start);
        }
        if (failed) {
            stop_workers(pool, i - 1);
            free_pool(pool);
            return start == NULL ? CC_ENOMEM : CC_ETHREAD;
        }
    }
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

void cc__pool_run(struct cc__pool *pool, void (*task)(void *, unsigned),
                  void *context)
{
    if (pool->threads > 1) {
        pthread_mutex_lock(&pool->lock);
        pool->task = task;
        pool->context = context;
        pool->busy = pool->threads - 1;
        pool->generation++;
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->lock);
    }
    task(context, 0);
    if (pool->threads > 1) {
        pthread_mutex_lock(&pool->lock);
        while (pool->busy > 0)
            pthread_cond_wait(&pool->finished, &pool->lock);
        pthread_mutex_unlock(&pool->lock);
    }
}

void cc__pool_barrier(struct cc__pool *pool)
{
    if (pool->threads > 1)
        pthread_barrier_wait(&pool->barrier);
}
