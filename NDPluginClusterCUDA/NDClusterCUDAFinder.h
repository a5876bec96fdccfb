/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAFinder.h: the finder and its settings. Holds the core's
 * finder (made at the first frame, when its size is known) and the lock
 * every part takes to use it; checks each finder setting with the others
 * as the core checks a configuration; runs the pedestal and mask
 * commands, and the loads asked before the first frame.
 */
#ifndef NDCLUSTERCUDAFINDER_H
#define NDCLUSTERCUDAFINDER_H

#include <epicsMutex.h>

#include "NDClusterCUDAPart.h"

/* Settings (r/w), asynInt32 unless marked */
#define ClusterNSigmaString "CLUSTER_NSIGMA"          /* asynFloat64 */
#define ClusterNumStreamsString "CLUSTER_NUM_STREAMS" /* CUDA streams 1..8 */
#define ClusterMaxClustersString                                               \
    "CLUSTER_MAX_CLUSTERS"                  /* cap, rows of the output */
#define ClusterSizeXString "CLUSTER_SIZE_X" /* odd, 3..9 */
#define ClusterSizeYString "CLUSTER_SIZE_Y" /* odd, 3..9 */
#define ClusterPedestalFramesString                                            \
    "CLUSTER_PEDESTAL_FRAMES" /* dark frames to train */
#define ClusterBackendString                                                   \
    "CLUSTER_BACKEND" /* cc_backend: 0 Auto, 1 CPU, 2 CUDA */
#define ClusterPrecisionString "CLUSTER_PRECISION" /* 0 float, 1 double */
#define ClusterAdcMaskString "CLUSTER_ADC_MASK"
#define ClusterAutoMaskFactorString                                            \
    "CLUSTER_AUTO_MASK_FACTOR" /* asynFloat64: the rms rule's k, 0 = off */
/* The pedestal and the bad-pixel mask (docs/spec.md §2, §7.1) */
#define ClusterResetPedestalString                                             \
    "CLUSTER_RESET_PEDESTAL" /* write 1 to train again */
#define ClusterSavePedestalString "CLUSTER_SAVE_PEDESTAL" /* write 1 to save */
#define ClusterLoadPedestalString "CLUSTER_LOAD_PEDESTAL" /* write 1 to load */
#define ClusterPedestalFileString "CLUSTER_PEDESTAL_FILE" /* asynOctet: path */
/* After an IOC restart, the saved pedestal and mask: 1 loads PedestalFile
 * and MaskFile (those not empty) at the first frame the IOC receives. */
#define ClusterLoadFilesAtStartString                                          \
    "CLUSTER_LOAD_FILES_AT_START" /* 0 No, 1 Yes */
#define ClusterMaskFileString                                                  \
    "CLUSTER_MASK_FILE" /* asynOctet: .npy, uint8 or bool */
#define ClusterLoadMaskString                                                  \
    "CLUSTER_LOAD_MASK" /* write 1 (empty MaskFile: clear) */
/* What the finder says (r/o) */
#define ClusterPedestalStateString                                             \
    "CLUSTER_PEDESTAL_STATE" /* 0 Training, 1 Ready */
#define ClusterPedestalCountString                                             \
    "CLUSTER_PEDESTAL_COUNT" /* dark frames trained */
#define ClusterMaskedPixelsString "CLUSTER_MASKED_PIXELS"
#define ClusterBackendInUseString                                              \
    "CLUSTER_BACKEND_IN_USE" /* asynOctet: what runs, and why */
#define ClusterNumClustersString                                               \
    "CLUSTER_NUM_CLUSTERS" /* found in the last frame */
#define ClusterTotalClustersString                                             \
    "CLUSTER_TOTAL_CLUSTERS" /* asynFloat64: since reset */
#define ClusterDroppedClustersString                                           \
    "CLUSTER_DROPPED_CLUSTERS" /* asynFloat64: beyond the cap */

class NDClusterCUDAFinder : public NDClusterCUDAPart {
  public:
    explicit NDClusterCUDAFinder(NDPluginClusterCUDA &plugin);
    ~NDClusterCUDAFinder();

    int NSigma, NumStreams, MaxClusters, SizeX, SizeY, PedestalFrames, Backend,
        Precision, AdcMask, AutoMaskFactor;
    int ResetPedestal, SavePedestal, LoadPedestal, PedestalFile,
        LoadFilesAtStart, MaskFile, LoadMask;
    int PedestalState, PedestalCount, MaskedPixels, BackendInUse, NumClusters,
        TotalClusters, DroppedClusters;

    /* What the PVs ask of a batch's finder: its configuration, whether it
     * changed since the last batch, and the files to load first. */
    struct Wanted {
        cc_config config;
        bool settingsChanged;
        bool load; /* the pedestal from loadPath */
        char loadPath[512];
        bool loadMask; /* then the mask from maskPath ("": none) */
        char maskPath[512];
    };
    /* For frames of rows x cols handed over now (port locked). */
    Wanted wanted(int rows, int cols);
    /* Makes the finder, or configures it again (finder lock held, port
     * not): CC_OK, or why not in message (NDCC_MESSAGE_SIZE bytes). */
    int configure(const cc_config &config, bool newFrameSize, char *message);
    /* The loads wanted asks for, each saying what it did in message. */
    void load(const Wanted &wanted, char *message);
    /* A finder setting (function, to value), checked with the others as
     * the core checks a configuration (port locked). */
    asynStatus checkSetting(asynUser *pasynUser, int function, int value);
    /* The finder's counts into their PVs (port locked). */
    void report(const cc_finder_stats &stats);
    /* What a batch of frameMode did to the pedestal, in the status: its
     * trained arrays ended the training (noiseless of pixels without
     * noise), or it goes on, or pedestal frames updated it (port
     * locked). */
    void reportTraining(const cc_finder_stats &stats, int frameMode,
                        size_t trained, size_t found, size_t noiseless,
                        size_t pixels);
    /* The mask from a .npy file, or none for an empty path (finder lock
     * held, finder made). */
    int loadMask(const char *path, char *message);

    /* The finder and its lock: the finder thread, the commands of clients
     * and the publisher take it; taken after the port lock. */
    epicsMutex lock;
    cc_finder *finder;
    int rows, cols; /* the frame size the finder has (finder lock) */
    /* Why the pedestal trains again, for the status (finder lock). */
    char trainingNote[NDCC_MESSAGE_SIZE];

  private:
    cc_config config(int frameRows, int frameCols);
    void command(int function);

    int frameRows_, frameCols_;      /* of the frames last handed over (port) */
    bool settingsChanged_;           /* since the last batch (port) */
    bool pendingLoad_, pendingMask_; /* asked before the first frame */
    bool framesSeen_;                /* a batch was made: the start is over */
};

#endif
