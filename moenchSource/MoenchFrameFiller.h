/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MoenchFrameFiller.h: worker threads that copy frames into NDArrays from a
 * pool, in parallel, for a thread that takes them back in the order it
 * handed them out.
 *
 * ADMoenchSim's acquisition thread publishes frames strictly in order
 * (uniqueId, time stamps, callbacks), as a detector receiver does; what
 * limits its rate is the allocation and the 320 KB copy of each frame,
 * which this class spreads over several threads.
 */
#ifndef MOENCHFRAMEFILLER_H
#define MOENCHFRAMEFILLER_H

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include <epicsEvent.h>
#include <epicsMutex.h>
#include <epicsThread.h>

#include "NDArray.h"

/** A ring of frames being filled: submit() hands out frames in sequence,
  * the workers allocate and fill them in any order, takeFilled() returns
  * them in sequence. One thread (the owner) calls every method. */
class MoenchFrameFiller {
  public:
    /** A frame taken back: its array (NULL when the pool had none to
      * give) and the tag it was submitted with. */
    struct Frame {
        NDArray *array;
        uint64_t tag;
    };

    MoenchFrameFiller();
    ~MoenchFrameFiller();

    /** Starts threads workers that fill arrays of cols x rows NDUInt16
      * from pool; at most 2 x threads frames are in flight. Returns false,
      * with nothing started, when a thread cannot be made. */
    bool start(NDArrayPool *pool, int threads, size_t cols, size_t rows);
    /** Stops and joins the workers and releases the arrays not taken. */
    void stop();

    /** Frames submitted and not yet taken. */
    size_t inFlight() const
    {
        return (size_t)(submitted_ - taken_);
    }
    bool full() const
    {
        return inFlight() == ring_.size();
    }
    /** Frames that can be in flight at once. */
    size_t capacity() const
    {
        return ring_.size();
    }

    /** Queues the copy of the frame at pixels, tagged with tag; the pixels
      * must stay until waitFilled() returns. Not to be called when full(). */
    void submit(const uint16_t *pixels, uint64_t tag);
    /** Waits for the oldest frame in flight and returns it in frames[0],
      * with the ones after it that are filled already, up to most; returns
      * how many. The caller releases their arrays. Not to be called when
      * nothing is in flight. */
    size_t takeFilled(Frame *frames, size_t most);
    /** Waits until every frame submitted is copied, after which the pixels
      * they were copied from may change. */
    void waitFilled();

    /** The body of a worker thread; public only because a C function runs it. */
    void workerTask();

  private:
    struct Slot {
        const uint16_t *pixels;
        uint64_t tag;
        NDArray *array;
        bool filled;
    };

    void waitForSlotFilled(const Slot &slot);

    NDArrayPool *pool_;
    size_t dims_[2];
    std::vector<epicsThreadId> workers_;

    /* Protected by lock_. Frame n lies in ring_[n % ring_.size()]. */
    epicsMutexId lock_;
    std::vector<Slot> ring_;
    uint64_t submitted_; /* frames handed out */
    uint64_t claimed_;   /* frames a worker has started on */
    uint64_t taken_;     /* frames given back to the owner */
    int idleWorkers_;    /* workers waiting on workEvent_ */
    bool ownerWaiting_;  /* the owner waits on filledEvent_ */
    bool quit_;
    epicsEventId workEvent_;   /* frames to fill, or quit_ */
    epicsEventId filledEvent_; /* a frame was filled */
};

#endif /* MOENCHFRAMEFILLER_H */
