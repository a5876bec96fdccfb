/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ADMoenchSim.h: an areaDetector driver that streams MÖNCH frames, either
 * simulated by libclustercore's simulator or replayed from a MÖNCH raw run.
 *
 * It is a thin shim over the core's public API (clustercore.h): the
 * simulator and the raw reader make the pixels, this driver paces them
 * and hands them to plugins as NDUInt16 arrays of [cols, rows].
 */
#ifndef ADMOENCHSIM_H
#define ADMOENCHSIM_H

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include <epicsEvent.h>
#include <epicsTime.h>

#include "ADDriver.h"
#include "clustercore.h"
#include "MoenchFrameFiller.h"

#define ADMOENCHSIM_VERSION 1
#define ADMOENCHSIM_REVISION 0
#define ADMOENCHSIM_MODIFICATION 0

/* The MÖNCH 0.3 sensor: 400 x 400 pixels of 25 um. */
#define ADMOENCHSIM_SENSOR_SIZE 400

/* MoenchSourceThreads: threads that copy frames into NDArrays, 1..64;
 * the default is one per CPU up to 4. */
#define ADMOENCHSIM_MAX_SOURCE_THREADS 64
#define ADMOENCHSIM_DEFAULT_SOURCE_THREADS 4

/* Where frames come from (MoenchSource). */
typedef enum {
    ADMoenchSourceSimulated = 0,
    ADMoenchSourceRawFile = 1
} ADMoenchSource_t;

/*                              String                    asyn interface  access  Description */
#define MoenchFluxString                                                       \
    "MOENCH_FLUX" /* (asynFloat64, r/w) Mean photons per simulated frame */
#define MoenchSeedString                                                       \
    "MOENCH_SEED" /* (asynInt32,   r/w) Simulator seed (taken as unsigned 32-bit) */
#define MoenchHotPixelsString                                                  \
    "MOENCH_HOT_PIXELS" /* (asynInt32,   r/w) Hot pixels planted, at pixels drawn from the seed */
#define MoenchDarkFramesString                                                 \
    "MOENCH_DARK_FRAMES" /* (asynInt32,   r/w) Dark frames at the start of each acquisition */
#define MoenchSourceString                                                     \
    "MOENCH_SOURCE" /* (asynInt32,   r/w) ADMoenchSource_t */
#define MoenchRawFileString                                                    \
    "MOENCH_RAW_FILE" /* (asynOctet,   r/w) Master JSON file of the run to replay */
#define MoenchRawChipString                                                    \
    "MOENCH_RAW_CHIP" /* (asynInt32,   r/w) cc_raw_chip: the chip of a chip test board run to replay */
#define MoenchFrameNumberString                                                \
    "MOENCH_FRAME_NUMBER" /* (asynInt32,   r/o) Frame number of the last frame */
#define MoenchCycleFramesString                                                \
    "MOENCH_CYCLE_FRAMES" /* (asynInt32,   r/w) Data frames simulated once and repeated; 0 = all simulated */
#define MoenchSourceThreadsString                                              \
    "MOENCH_SOURCE_THREADS" /* (asynInt32, r/w) Threads that copy frames into NDArrays */
#define MoenchFrameRingString                                                  \
    "MOENCH_FRAME_RING" /* (asynInt32,   r/w) Data frames' NDArrays kept and published again without a copy; 0 = a copy a frame */
#define MoenchRingFramesString                                                 \
    "MOENCH_RING_FRAMES" /* (asynInt32,   r/o) Frames of this acquisition published again from the ring */
/* Real-detector effects the simulator adds (docs/spec.md §8, §9): */
#define MoenchCommonModeString                                                 \
    "MOENCH_COMMON_MODE" /* (asynInt32,   r/w) cc_common_mode: regions sharing a per-frame offset */
#define MoenchCommonModeRmsString                                              \
    "MOENCH_COMMON_MODE_RMS" /* (asynFloat64, r/w) That offset's rms, ADU */
#define MoenchGainSpreadString                                                 \
    "MOENCH_GAIN_SPREAD" /* (asynFloat64, r/w) Pixels' relative gain rms, 0..0.2 */

/* MoenchFrameRing: at most this many NDArrays (20 GB of 400 x 400 frames). */
#define ADMOENCHSIM_MAX_FRAME_RING 65536

/** Streams simulated or replayed MÖNCH frames. Settings are taken at the
  * start of each acquisition; changes during one apply to the next. */
class ADMoenchSim : public ADDriver {
  public:
    ADMoenchSim(const char *portName, int maxSizeX, int maxSizeY,
                int maxBuffers, size_t maxMemory, int priority, int stackSize);

    /* These are the methods that we override from ADDriver */
    virtual asynStatus writeInt32(asynUser *pasynUser, epicsInt32 value);
    virtual void report(FILE *fp, int details);

    /** The acquisition thread's body; public only because a C function starts it. */
    void acquisitionTask();

  protected:
    int MoenchFlux;
#define FIRST_MOENCH_PARAM MoenchFlux
    int MoenchSeed;
    int MoenchHotPixels;
    int MoenchDarkFrames;
    int MoenchSource;
    int MoenchRawFile;
    int MoenchRawChip;
    int MoenchFrameNumber;
    int MoenchCycleFrames;
    int MoenchSourceThreads;
    int MoenchFrameRing;
    int MoenchRingFrames;
    int MoenchCommonMode;
    int MoenchCommonModeRms;
    int MoenchGainSpread;

  private:
    /* What one acquisition runs with, read from the parameters at its start. */
    struct Settings {
        int imageMode;
        int numImages;
        int source;
        uint32_t rows;
        uint32_t cols;
        uint64_t seed;
        double flux;
        uint32_t hotPixels;
        cc_common_mode commonMode;
        double commonModeRms;
        double gainSpread;
        uint64_t darkFrames;
        uint64_t cycleFrames; /* 0: every data frame simulated */
        int sourceThreads;
        size_t frameRing; /* 0: every frame copied into a new NDArray */
        std::string rawPath;
        cc_raw_chip rawChip; /* of a chip test board run */
    };

    void readSettings(Settings *settings);
    void runAcquisition();
    bool stopRequested();
    bool waitForNextFrame(epicsTimeStamp *due);
    void publishFrame(const MoenchFrameFiller::Frame &frame,
                      const Settings &settings);
    static bool isDarkFrame(uint64_t frameNumber, const Settings &settings);
    void finishWithError(const char *message);

    /* Called without the lock: they touch only the thread's own objects. */
    int openSource(const Settings &settings, char *message);
    void closeSource();
    int produceBatch(const Settings &settings, uint64_t framesWanted,
                     bool *endOfRun, char *message);
    int submitFrames(const Settings &settings, uint64_t framesWanted,
                     uint64_t *framesSubmitted, bool *endOfRun, char *message);
    int reopenRawRun(const Settings &settings, char *message);
    int prepareCycle(const Settings &settings, char *message);
    void reportRawNotices();

    epicsEventId startEvent_;
    epicsEventId stopEvent_;

    /* Owned by the acquisition thread between the start and end of an acquisition. */
    cc_simulator *simulator_;
    cc_raw_reader *rawReader_;
    uint32_t rows_;
    uint32_t cols_;
    std::vector<uint16_t> batch_;
    std::vector<uint64_t> batchNumbers_;
    /* the batch's pixels: batch_, or part of cycle_ */
    const uint16_t *batchData_;
    size_t batchCount_; /* frames at batchData_ */
    size_t batchNext_;  /* next frame of the batch to deliver */
    /* The data frames repeated when MoenchCycleFrames > 0, kept across
     * acquisitions while the settings they were made with stay. */
    std::vector<uint16_t> cycle_;
    std::string cycleKey_;
    uint64_t nextSimFrame_; /* simulator frame index of the next batch */
    std::string rawNotice_; /* latest raw-reader notice, for ADStatusMessage */
    MoenchFrameFiller filler_; /* copies the frames into NDArrays */

    /* Protected by the driver lock. */
    unsigned long droppedFrames_; /* NDArray pool allocations that failed */
    /* Acquire=0 written since the acquisition started; stopEvent_ wakes
     * the waits */
    bool stopPending_;
};

#endif /* ADMOENCHSIM_H */
