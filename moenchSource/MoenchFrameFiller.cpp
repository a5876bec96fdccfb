/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MoenchFrameFiller.cpp: see MoenchFrameFiller.h.
 *
 * submitted_ and taken_ change only on the owner's thread, so the owner
 * reads them without the lock; workers read them under it.
 */
#include <string.h>

#include <epicsStdio.h>

#include "MoenchFrameFiller.h"
#include "clustercore.h"

/* Frames in flight per worker: two, so that a worker finds its next frame
 * waiting while the owner takes the one it just filled. */
static const size_t framesPerWorker = 2;

static void workerTaskC(void *filler)
{
    static_cast<MoenchFrameFiller *>(filler)->workerTask();
}

MoenchFrameFiller::MoenchFrameFiller()
    : pool_(NULL), submitted_(0), claimed_(0), taken_(0), idleWorkers_(0),
      ownerWaiting_(false), quit_(false)
{
    dims_[0] = dims_[1] = 0;
    lock_ = epicsMutexMustCreate();
    workEvent_ = epicsEventMustCreate(epicsEventEmpty);
    filledEvent_ = epicsEventMustCreate(epicsEventEmpty);
}

MoenchFrameFiller::~MoenchFrameFiller()
{
    stop();
    epicsEventDestroy(filledEvent_);
    epicsEventDestroy(workEvent_);
    epicsMutexDestroy(lock_);
}

bool MoenchFrameFiller::start(NDArrayPool *pool, int threads, size_t cols,
                              size_t rows)
{
    pool_ = pool;
    dims_[0] = cols;
    dims_[1] = rows;
    ring_.assign(framesPerWorker * (size_t)threads, Slot());
    submitted_ = claimed_ = taken_ = 0;
    quit_ = false;

    /* The priority and the stack of the acquisition thread, which did this
     * work before: at full rate the workers keep their CPUs busy, which
     * must not starve the CA server or the plugins that consume the
     * frames (so they are time-shared too: workerTask), and a pool that
     * grows allocates through the frame memory functions (cudaHostAlloc
     * with NDClusterCUDAPinnedArrays). */
    epicsThreadOpts options = EPICS_THREAD_OPTS_INIT;
    options.priority = epicsThreadPriorityLow;
    options.stackSize = epicsThreadGetStackSize(epicsThreadStackMedium);
    options.joinable = 1;
    for (int i = 0; i < threads; i++) {
        char name[32];
        epicsSnprintf(name, sizeof(name), "ADMoenchSimFill%d", i);
        epicsThreadId worker = epicsThreadCreateOpt(name, workerTaskC, this,
                                                    &options);
        if (!worker) {
            stop();
            return false;
        }
        workers_.push_back(worker);
    }
    return true;
}

void MoenchFrameFiller::stop()
{
    epicsMutexMustLock(lock_);
    quit_ = true;
    epicsMutexUnlock(lock_);
    /* One signal wakes one waiting worker, which passes it on as it quits. */
    epicsEventSignal(workEvent_);
    for (size_t i = 0; i < workers_.size(); i++)
        epicsThreadMustJoin(workers_[i]);
    workers_.clear();
    /* Every frame a worker claimed is filled; the others were never started. */
    for (; taken_ < submitted_; taken_++) {
        Slot &slot = ring_[taken_ % ring_.size()];
        if (slot.filled && slot.array)
            slot.array->release();
    }
}

void MoenchFrameFiller::submit(const uint16_t *pixels, uint64_t tag)
{
    epicsMutexMustLock(lock_);
    Slot &slot = ring_[submitted_ % ring_.size()];
    slot.pixels = pixels;
    slot.tag = tag;
    slot.array = NULL;
    slot.filled = false;
    submitted_++;
    bool wake = idleWorkers_ > 0;
    epicsMutexUnlock(lock_);
    if (wake)
        epicsEventSignal(workEvent_);
}

/** Waits until slot is filled; called with lock_ held. */
void MoenchFrameFiller::waitForSlotFilled(const Slot &slot)
{
    while (!slot.filled) {
        ownerWaiting_ = true;
        epicsMutexUnlock(lock_);
        epicsEventMustWait(filledEvent_);
        epicsMutexMustLock(lock_);
        ownerWaiting_ = false;
    }
}

size_t MoenchFrameFiller::takeFilled(Frame *frames, size_t most)
{
    size_t n = 0;
    epicsMutexMustLock(lock_);
    waitForSlotFilled(ring_[taken_ % ring_.size()]);
    while (n < most && taken_ < submitted_ &&
           ring_[taken_ % ring_.size()].filled) {
        const Slot &slot = ring_[taken_ % ring_.size()];
        frames[n].array = slot.array;
        frames[n].tag = slot.tag;
        n++;
        taken_++;
    }
    epicsMutexUnlock(lock_);
    return n;
}

void MoenchFrameFiller::waitFilled()
{
    epicsMutexMustLock(lock_);
    for (uint64_t n = taken_; n < submitted_; n++)
        waitForSlotFilled(ring_[n % ring_.size()]);
    epicsMutexUnlock(lock_);
}

void MoenchFrameFiller::workerTask()
{
    cc_thread_share_cpus();
    epicsMutexMustLock(lock_);
    for (;;) {
        while (!quit_ && claimed_ == submitted_) {
            idleWorkers_++;
            epicsMutexUnlock(lock_);
            epicsEventMustWait(workEvent_);
            epicsMutexMustLock(lock_);
            idleWorkers_--;
        }
        if (quit_)
            break;
        Slot &slot = ring_[claimed_ % ring_.size()];
        claimed_++;
        /* The event wakes one worker: pass it on while frames remain. */
        if (claimed_ < submitted_ && idleWorkers_ > 0)
            epicsEventSignal(workEvent_);
        const uint16_t *pixels = slot.pixels;
        epicsMutexUnlock(lock_);

        NDArray *array = pool_->alloc(2, dims_, NDUInt16, 0, NULL);
        if (array)
            memcpy(array->pData, pixels,
                   dims_[0] * dims_[1] * sizeof(uint16_t));

        epicsMutexMustLock(lock_);
        slot.array = array;
        slot.filled = true;
        if (ownerWaiting_)
            epicsEventSignal(filledEvent_);
    }
    epicsMutexUnlock(lock_);
    epicsEventSignal(workEvent_);
}
