/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAPipeline.h: the batches behind processCallbacks. The
 * plugin's processing thread only gathers arrays: while more wait in its
 * queue it holds each array it is given, up to MaxBatch, and hands them
 * over as one batch with what the PVs ask then (its job); a lone array is
 * handed over at once. A finder thread makes one core call per batch, in
 * order: the pedestal is one ordered sequence, frame k after frame k-1;
 * the finder counts the spectrum and hit map as it goes. Output threads
 * take the batches in turn: each fills the batch's cluster arrays (and
 * its own part of an η calibration being taken), then publishes them when
 * the batch before is out, so arrays leave in order. Each stage runs on
 * its own CPU at full rate. Batch k lives in slot k % slots from the
 * moment it is filled until it is published.
 */
#ifndef NDCLUSTERCUDAPIPELINE_H
#define NDCLUSTERCUDAPIPELINE_H

#include <string>
#include <vector>

#include <epicsEvent.h>
#include <epicsMutex.h>

#include "NDArray.h"

#include "NDClusterCUDACorrections.h"
#include "NDClusterCUDAFinder.h"
#include "NDClusterCUDAImaging.h"
#include "NDClusterCUDAModes.h"
#include "NDClusterCUDAOutputs.h"
#include "NDClusterCUDAPart.h"

#define ClusterMaxBatchString                                                  \
    "CLUSTER_MAX_BATCH" /* asynInt32: most queued arrays per core call */
#define ClusterLastBatchString                                                 \
    "CLUSTER_LAST_BATCH" /* asynInt32 r/o: arrays in the last core call */
#define ClusterFinderTimeString                                                \
    "CLUSTER_FINDER_TIME" /* asynFloat64 r/o: ms in the core per array, last batch */
#define ClusterBadArraysString                                                 \
    "CLUSTER_BAD_ARRAYS" /* asynInt32 r/o: arrays refused */

class NDClusterCUDAPipeline : public NDClusterCUDAPart {
  public:
    /* outputThreads: 1 to MAX_OUTPUT_THREADS; maxMemory is shared evenly
     * by their pools (0: no limit). */
    NDClusterCUDAPipeline(NDPluginClusterCUDA &plugin, size_t maxMemory,
                          unsigned outputThreads);
    ~NDClusterCUDAPipeline();
    enum { MAX_OUTPUT_THREADS = 8 };

    int MaxBatch, LastBatch, FinderTime, BadArrays;

    /* Starts the finder and output threads; without them (one could not
     * start) batches are worked inline. */
    void startThreads(const char *portName);
    /* An array from processCallbacks (port locked), held for its batch
     * or handed over with the ones held. */
    void take(NDArray *pArray);
    /* An array the finder cannot take: counted, and the status says why
     * (port locked). */
    void refuseArray(NDArray *pArray, const char *why);

    /* One output thread's part of the η calibration being taken (its sum
     * is what is saved or imaged with, so output threads never wait for
     * each other) and the pool of its cluster arrays: their reserves and
     * releases take its lock, not one shared by all the output threads. */
    struct Accumulator {
        epicsMutex lock; /* taken after the port and the finder lock */
        cc_eta_calibration *calibration; /* NULL unless calibrating */
        NDArrayPool *clusterPool;
    };
    unsigned outputThreads() const
    {
        return outputThreads_;
    }
    Accumulator &accumulator(unsigned i)
    {
        return accumulators_[i];
    }

    /* The threads' loops: the finder's, every batch handed over, in
     * order; output thread index's, batches index, index + outputThreads,
     * ... once the finder is done with them. */
    void finderTask();
    void outputTask(unsigned index);

  private:
    /* What the processing thread asks of the finder for one batch, from
     * the PVs when the batch was made. */
    struct Job {
        NDClusterCUDAFinder::Wanted finder;
        NDClusterCUDAOutputs::Wanted outputs;
        NDClusterCUDAImaging::Wanted imaging; /* and the energy window */
        NDClusterCUDACorrections::Wanted gain;
        NDClusterCUDAModes::Wanted modes;
        int maxClusters; /* rows of the cluster arrays */
    };
    /* One core call's arrays and clusters, from the processing thread
     * through the finder thread and an output thread. */
    struct Batch {
        std::vector<NDArray *> arrays; /* the inputs (reserved), in order */
        Job job;
        /* What the finder thread made of it: */
        int rc;
        char message[NDCC_MESSAGE_SIZE]; /* for StatusMessage, or empty */
        bool newFrameSize;
        std::string backend; /* what runs, when reconfigured */
        cc_finder_stats stats;
        size_t trained;        /* the first arrays trained the pedestal */
        size_t found;          /* the next ones have clusters */
        size_t noiseless;      /* pixels of rms 0, when trained */
        double finderTime;     /* ms in the core per array; < 0: none */
        cc_clusters *clusters; /* of arrays[trained .. trained + found) */
        std::vector<NDArray *> outputs; /* their cluster arrays */
    };

    void processHeld();
    int prepareFinder(Batch &batch);
    void runFinder(Batch &batch);
    void findClusters(Batch &batch);
    void reportBatch(const Batch &batch);
    template <typename Ready> void awaitBatches(epicsEvent &event, Ready ready);
    Batch &emptyBatch(bool all);
    void handOver();
    void prepareBatch(Batch &batch, Accumulator &accumulator);
    NDArray *clusterArray(NDArrayPool *pool, NDArray *pInput,
                          const cc_frame_clusters &frame, int maxClusters);
    void publishBatch(Batch &batch);
    static void releaseArrays(std::vector<NDArray *> &arrays);

    Accumulator accumulators_[MAX_OUTPUT_THREADS];
    /* Two batch slots for each output thread and two for the finder. */
    unsigned outputThreads_, batchSlots_;
    Batch batches_[2 * MAX_OUTPUT_THREADS + 2];
    epicsMutex batchLock_;       /* handedOver_, found_ and published_ */
    uint64_t handedOver_;        /* batches handed to the finder so far */
    uint64_t found_;             /* of those, through the finder */
    uint64_t published_;         /* of those, published */
    epicsEvent batchEmptied_;    /* wakes the processing thread */
    epicsEvent batchHandedOver_; /* wakes the finder thread */
    epicsEvent batchFound_[MAX_OUTPUT_THREADS];  /* wakes output thread i */
    epicsEvent publishTurn_[MAX_OUTPUT_THREADS]; /* its turn to publish */
    bool threadsMissing_; /* some did not start: batches go inline */
    double output0Delay_; /* s, a test's hook (startThreads) */
    /* Arrays taken from the queue and not yet handed over (reserved):
     * the processing thread's own. */
    std::vector<NDArray *> held_;
    /* A batch's pixels and numbers for the core: the finder thread's. */
    std::vector<const uint16_t *> finderFrames_;
    std::vector<uint64_t> finderNumbers_;
};

#endif
