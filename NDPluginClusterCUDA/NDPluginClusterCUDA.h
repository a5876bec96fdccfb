/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDPluginClusterCUDA.h: an areaDetector plugin over libclustercore. It
 * translates PVs and NDArrays into core calls and back; the finder's
 * logic lives in the core.
 *
 * Address 0 publishes each frame's clusters as an NDInt32 array
 * [2 + Nx*Ny, MaxClusters] (x, y, values; zero padded) with the input's
 * uniqueId and timestamps; address 1 publishes the hit map as an NDUInt32
 * image at the spectrum's rate.
 *
 * The plugin's processing thread only gathers arrays: while more wait in
 * its queue it holds each array it is given, up to MaxBatch, and hands
 * them over as one batch; a lone array is handed over at once. A finder
 * thread makes one core call per batch, in order: the pedestal is one
 * ordered sequence, frame k after frame k-1. Output threads (maxThreads
 * of them) take the batches in turn: each adds its batch to its own part
 * of the spectrum and hit map, fills the cluster arrays, then publishes
 * them when the batch before is out, so arrays leave in order. Each of
 * these stages runs on its own CPU at full rate.
 */
#ifndef NDPLUGINCLUSTERCUDA_H
#define NDPLUGINCLUSTERCUDA_H

#include <string>
#include <vector>

#include <epicsEvent.h>
#include <epicsMutex.h>
#include <epicsTime.h>

#include "NDPluginDriver.h"
#include "clustercore.h"

/* Settings (r/w unless marked) */
#define ClusterNSigmaString "CLUSTER_NSIGMA"                 /* asynFloat64 */
#define ClusterNumStreamsString "CLUSTER_NUM_STREAMS"        /* asynInt32: CUDA streams 1..8 */
#define ClusterMaxClustersString "CLUSTER_MAX_CLUSTERS"      /* asynInt32: cap, rows of the output */
#define ClusterMaxBatchString "CLUSTER_MAX_BATCH"            /* asynInt32: most queued arrays per core call */
#define ClusterLastBatchString "CLUSTER_LAST_BATCH"          /* asynInt32 r/o: arrays in the last core call */
#define ClusterSizeXString "CLUSTER_SIZE_X"                  /* asynInt32: odd, 3..9 */
#define ClusterSizeYString "CLUSTER_SIZE_Y"                  /* asynInt32: odd, 3..9 */
#define ClusterPedestalFramesString "CLUSTER_PEDESTAL_FRAMES" /* asynInt32: dark frames to train */
#define ClusterResetPedestalString "CLUSTER_RESET_PEDESTAL"  /* asynInt32: write 1 to train again */
#define ClusterPedestalStateString "CLUSTER_PEDESTAL_STATE"  /* asynInt32 r/o: 0 Training, 1 Ready */
#define ClusterPedestalCountString "CLUSTER_PEDESTAL_COUNT"  /* asynInt32 r/o: dark frames trained */
#define ClusterSavePedestalString "CLUSTER_SAVE_PEDESTAL"    /* asynInt32: write 1 to save */
#define ClusterLoadPedestalString "CLUSTER_LOAD_PEDESTAL"    /* asynInt32: write 1 to load */
#define ClusterPedestalFileString "CLUSTER_PEDESTAL_FILE"    /* asynOctet: path */
#define ClusterBackendString "CLUSTER_BACKEND"               /* asynInt32: 0 Auto, 1 CUDA, 2 CPU */
#define ClusterBackendInUseString "CLUSTER_BACKEND_IN_USE"   /* asynOctet r/o: what runs, and why */
#define ClusterPrecisionString "CLUSTER_PRECISION"           /* asynInt32: 0 float, 1 double */
#define ClusterAdcMaskString "CLUSTER_ADC_MASK"              /* asynInt32 */
#define ClusterNumClustersString "CLUSTER_NUM_CLUSTERS"      /* asynInt32 r/o: found in the last frame */
#define ClusterTotalClustersString "CLUSTER_TOTAL_CLUSTERS"  /* asynFloat64 r/o: since reset */
#define ClusterDroppedClustersString "CLUSTER_DROPPED_CLUSTERS" /* asynFloat64 r/o: beyond the cap */
#define ClusterNoiseMeanString "CLUSTER_NOISE_MEAN"          /* asynFloat64 r/o: mean pedestal rms, ADU */
/* The bad-pixel mask (docs/spec.md §7.1). */
#define ClusterMaskFileString "CLUSTER_MASK_FILE"            /* asynOctet: .npy, uint8 or bool */
#define ClusterLoadMaskString "CLUSTER_LOAD_MASK"            /* asynInt32: write 1 (empty MaskFile: clear) */
#define ClusterAutoMaskFactorString "CLUSTER_AUTO_MASK_FACTOR" /* asynFloat64: the rms rule's k, 0 = off */
#define ClusterMaskedPixelsString "CLUSTER_MASKED_PIXELS"    /* asynInt32 r/o */
#define ClusterFinderTimeString "CLUSTER_FINDER_TIME"        /* asynFloat64 r/o: ms in the core per array, last batch */
#define ClusterBadArraysString "CLUSTER_BAD_ARRAYS"          /* asynInt32 r/o: arrays refused */
#define ClusterStatusMessageString "CLUSTER_STATUS_MESSAGE"  /* asynOctet r/o */
#define ClusterSpectrumEnergyString "CLUSTER_SPECTRUM_ENERGY" /* asynInt32: 0 Sum, 1 Sum2x2 */
#define ClusterSpectrumBinsString "CLUSTER_SPECTRUM_BINS"    /* asynInt32 */
#define ClusterSpectrumMinString "CLUSTER_SPECTRUM_MIN"      /* asynFloat64, ADU */
#define ClusterSpectrumMaxString "CLUSTER_SPECTRUM_MAX"      /* asynFloat64, ADU */
#define ClusterSpectrumPeriodString "CLUSTER_SPECTRUM_PERIOD" /* asynFloat64: s between publications */
#define ClusterSpectrumString "CLUSTER_SPECTRUM"             /* asynFloat64Array r/o: counts */
#define ClusterSpectrumXString "CLUSTER_SPECTRUM_X"          /* asynFloat64Array r/o: bin centres */
#define ClusterSpectrumResetString "CLUSTER_SPECTRUM_RESET"  /* asynInt32: write 1 to clear */
/* The energy window (docs/spec.md §7.2) on SpectrumEnergy: the hit map
 * (address 1) counts only the photons inside it: the counting image. */
#define ClusterWindowEnableString "CLUSTER_WINDOW_ENABLE" /* asynInt32: 0 off, 1 on */
#define ClusterWindowLowString "CLUSTER_WINDOW_LOW"       /* asynFloat64, ADU: [Low, High) */
#define ClusterWindowHighString "CLUSTER_WINDOW_HIGH"     /* asynFloat64, ADU */
#define ClusterOutsideWindowString "CLUSTER_OUTSIDE_WINDOW" /* asynFloat64 r/o: clusters left out of the hit map */
/* The spectrum's line (docs/spec.md §4.7), fitted at each publication. */
#define ClusterPeakLowString "CLUSTER_PEAK_LOW"   /* asynFloat64, ADU: the fit's range; */
#define ClusterPeakHighString "CLUSTER_PEAK_HIGH" /*   Low >= High: around the highest bin */
#define ClusterPeakFittedString "CLUSTER_PEAK_FITTED" /* asynInt32 r/o: 1 when the last fit found a line */
#define ClusterHitMapResetString "CLUSTER_HITMAP_RESET"      /* asynInt32: write 1 to clear */

class NDPluginClusterCUDA : public NDPluginDriver {
public:
    NDPluginClusterCUDA(const char *portName, int queueSize,
                        int blockingCallbacks, const char *NDArrayPort,
                        int NDArrayAddr, int maxBuffers, size_t maxMemory,
                        int priority, int stackSize, int outputThreads);
    ~NDPluginClusterCUDA();
    enum { MAX_OUTPUT_THREADS = 8 }; /* outputThreads is 1 to this */
    /* The NDArray addresses the plugin publishes on. */
    enum {
        ADDRESS_CLUSTERS = 0, /* each frame's clusters, NDInt32 */
        ADDRESS_HITMAP = 1,   /* the hit map, NDUInt32, every SpectrumPeriod */
        /* The pedestal's maps, every SpectrumPeriod once it is ready: */
        ADDRESS_PEDESTAL = 2, /* its mean per pixel, NDFloat32, ADU */
        ADDRESS_NOISE = 3,    /* its rms per pixel, NDFloat32, ADU */
        ADDRESS_MASK = 4,     /* the bad-pixel mask, NDUInt8, 1 = masked */
        NUM_ADDRESSES = 5
    };

    void processCallbacks(NDArray *pArray);
    /* The publisher thread's loop: spectrum, hit map and noise every
     * SpectrumPeriod while anything changed, also after frames stop. */
    void publisherTask();
    /* The finder thread's loop: every batch handed over, in order. */
    void finderTask();
    /* Output thread `index`'s loop: batches index, index +
     * outputThreads_, ... once the finder is done with them. */
    void outputTask(unsigned index);
    asynStatus writeInt32(asynUser *pasynUser, epicsInt32 value);
    asynStatus writeFloat64(asynUser *pasynUser, epicsFloat64 value);

protected:
    int ClusterNSigma;
#define FIRST_CLUSTER_PARAM ClusterNSigma
    int ClusterNumStreams;
    int ClusterMaxClusters;
    int ClusterMaxBatch;
    int ClusterLastBatch;
    int ClusterSizeX;
    int ClusterSizeY;
    int ClusterPedestalFrames;
    int ClusterResetPedestal;
    int ClusterPedestalState;
    int ClusterPedestalCount;
    int ClusterSavePedestal;
    int ClusterLoadPedestal;
    int ClusterPedestalFile;
    int ClusterBackend;
    int ClusterBackendInUse;
    int ClusterPrecision;
    int ClusterAdcMask;
    int ClusterNumClusters;
    int ClusterTotalClusters;
    int ClusterDroppedClusters;
    int ClusterNoiseMean;
    int ClusterMaskFile;
    int ClusterLoadMask;
    int ClusterAutoMaskFactor;
    int ClusterMaskedPixels;
    int ClusterFinderTime;
    int ClusterBadArrays;
    int ClusterStatusMessage;
    int ClusterSpectrumEnergy;
    int ClusterSpectrumBins;
    int ClusterSpectrumMin;
    int ClusterSpectrumMax;
    int ClusterSpectrumPeriod;
    int ClusterSpectrum;
    int ClusterSpectrumX;
    int ClusterSpectrumReset;
    int ClusterWindowEnable;
    int ClusterWindowLow;
    int ClusterWindowHigh;
    int ClusterOutsideWindow;
    int ClusterPeakLow;
    int ClusterPeakHigh;
    int ClusterPeakFitted;
    /* The fit's figures, asynFloat64 r/o, in the order of peakResults. */
    enum { PEAK_RESULTS = 6 };
    int ClusterPeakResult[PEAK_RESULTS];
    int ClusterHitMapReset;

private:
    cc_config wantedConfig(int rows, int cols);
    int applyConfig(const cc_config &config, bool newFrameSize, char *message);
    int prepareAccumulators(int rows, int cols, int energy, int bins,
                            double min, double max, char *message);
    /* What the processing thread asks of the finder for one batch, from
     * the PVs when the batch was made. */
    struct Job {
        cc_config config;
        bool settingsChanged;  /* a finder setting changed */
        bool spectrumChanged;  /* spectrum bins or range changed */
        bool windowChanged;    /* the energy window changed */
        bool windowed;
        double windowLow, windowHigh;
        int energy, bins;
        double min, max;
        int maxClusters;       /* rows of the cluster arrays */
        bool load;             /* load the pedestal from loadPath first */
        char loadPath[512];
        bool loadMask;         /* then the mask from maskPath ("": none) */
        char maskPath[512];
    };
    /* One core call's arrays and clusters, from the processing thread
     * through the finder thread and an output thread. */
    struct Batch {
        std::vector<NDArray *> arrays;  /* the inputs (reserved), in order */
        Job job;
        /* What the finder thread made of it: */
        int rc;
        char message[CC_MESSAGE_SIZE];  /* for StatusMessage, or empty */
        bool newFrameSize;
        std::string backend;            /* what runs, when reconfigured */
        cc_finder_stats stats;
        size_t trained;                 /* the first arrays trained the pedestal */
        size_t found;                   /* the next ones have clusters */
        size_t noiseless;               /* pixels of rms 0, when trained */
        double finderTime;              /* ms in the core per array; < 0: none */
        cc_clusters *clusters;          /* of arrays[trained .. trained + found) */
        std::vector<NDArray *> outputs; /* their cluster arrays */
    };
    /* One output thread's part of the spectrum and hit map: their sum is
     * what is published, so output threads never wait for each other. */
    struct Accumulator {
        epicsMutex lock;  /* taken after the port and the finder lock */
        cc_spectrum *spectrum;
        cc_hitmap *hitmap;
    };
    void startThreads(const char *portName);
    static void releaseArrays(std::vector<NDArray *> &arrays);
    void refuse(NDArray *pArray, const char *why);
    asynStatus refuseWrite(asynUser *pasynUser, const char *format, ...);
    asynStatus checkSpectrum(asynUser *pasynUser, int function, double value);
    asynStatus checkWindow(asynUser *pasynUser, int function, double value);
    void applyWindow(const Job &job);
    void processHeld();
    template <typename Ready>
    void awaitBatches(epicsEvent &event, Ready ready);
    Batch &emptyBatch(bool all);
    void handOver();
    void runFinder(Batch &batch);
    void prepareBatch(Batch &batch, Accumulator &accumulator);
    void reportBatch(const Batch &batch);
    void publishBatch(Batch &batch);
    void publishSlow(bool force);
    void makeMaps(NDArray *maps[3]);
    NDArray *clusterArray(NDArray *pInput, const cc_frame_clusters &frame,
                          int maxClusters);
    void pedestalCommand(int function);
    int loadMask(const char *path, char *message);
    void setStatus(const char *format, ...);

    /* Serialises the finder between the finder thread and pedestal
     * commands from clients; also guards the frame size, the spectrum's
     * waveform copies and the noise scratch. */
    epicsMutex finderLock_;
    cc_finder *finder_;
    /* One part of the spectrum and hit map per output thread. */
    Accumulator accumulators_[MAX_OUTPUT_THREADS];
    /* Batch number k lives in batches_[k % batchSlots_] from the moment
     * the processing thread fills it until it is published: two for each
     * output thread and two for the finder thread. */
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
    bool threadsMissing_;      /* some did not start: batches go inline */
    int rows_, cols_;          /* frame size the finder has now (finder lock) */
    bool settingsChanged_;     /* a setting changed since the last batch */
    bool spectrumChanged_;     /* spectrum bins or range changed */
    bool windowChanged_;       /* the energy window changed */
    double *spectrumCounts_, *spectrumCentres_; /* finder lock */
    double *rms_;              /* scratch for the pedestal's noise map */
    double *mean_;             /* scratch for its mean map */
    /* Arrays taken from the queue and not yet handed over (reserved):
     * the processing thread's own. */
    std::vector<NDArray *> held_;
    /* A batch's pixels and numbers for the core: the finder thread's. */
    std::vector<const uint16_t *> finderFrames_;
    std::vector<uint64_t> finderNumbers_;
    epicsTimeStamp lastPublished_;
    bool unpublished_;         /* results changed since the last publication */
    bool pendingLoad_;         /* LoadPedestal asked before the first frame */
    bool pendingMask_;         /* LoadMask asked before the first frame */
    char trainingNote_[CC_MESSAGE_SIZE]; /* why the pedestal trains again */
};

#endif
