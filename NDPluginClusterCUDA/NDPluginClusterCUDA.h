/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDPluginClusterCUDA.h: an areaDetector plugin over libclustercore. It
 * translates PVs and NDArrays into core calls and back; the finder's
 * logic lives in the core.
 *
 * Address 0 publishes each frame's clusters as an NDInt32 array
 * [2 + Nx*Ny, MaxClusters] (x, y, values; zero padded) with the input's
 * uniqueId and timestamps. At the spectrum's rate (SpectrumPeriod), and
 * at once on Publish: address 1 the hit map (NDUInt32; the counting image
 * with the energy window on), 2 and 3 the pedestal's mean and rms
 * (NDFloat32), 4 the mask (NDUInt8) and, while EtaMode is Interpolate, 5
 * the interpolated image (NDUInt32, S times the frame a side); with common
 * mode on, 6 each pixel's region's common-mode rms (NDFloat32) and, with
 * a gain map applied, 7 that map (NDFloat32). Each image carries a Map
 * attribute saying what it is.
 *
 * The plugin's processing thread only gathers arrays: while more wait in
 * its queue it holds each array it is given, up to MaxBatch, and hands
 * them over as one batch; a lone array is handed over at once. A finder
 * thread makes one core call per batch, in order: the pedestal is one
 * ordered sequence, frame k after frame k-1; the finder counts the
 * spectrum and hit map as it goes. Output threads (maxThreads of them)
 * take the batches in turn: each fills the batch's cluster arrays (and
 * its own part of an η calibration being taken), then publishes them
 * when the batch before is out, so arrays leave in order. Each of
 * these stages runs on its own CPU at full rate.
 */
#ifndef NDPLUGINCLUSTERCUDA_H
#define NDPLUGINCLUSTERCUDA_H

#include <atomic>
#include <string>
#include <vector>

#include <epicsEvent.h>
#include <epicsMutex.h>
#include <epicsTime.h>

#include "NDPluginDriver.h"
#include "clustercore.h"

/* What the plugin tells the user (StatusMessage_RBV, NELM 1024): room
 * for the backend's fall-back and the three files loaded at start, each
 * path up to 256 characters. */
#define NDCC_MESSAGE_SIZE 1024

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
#define ClusterFrameModeString "CLUSTER_FRAME_MODE"  /* asynInt32: PSI's frameMode: 0 Frame, 1 Pedestal, 2 NewPedestal */
#define ClusterDetectorModeString "CLUSTER_DETECTOR_MODE"  /* asynInt32: PSI's detectorMode: 0 Count, 1 Analog, 2 Interpolate */
#define ClusterAnalogFramesString "CLUSTER_ANALOG_FRAMES"  /* asynFloat64 r/o: frames in the analog image */
#define ClusterPedestalStateString "CLUSTER_PEDESTAL_STATE"  /* asynInt32 r/o: 0 Training, 1 Ready */
#define ClusterPedestalCountString "CLUSTER_PEDESTAL_COUNT"  /* asynInt32 r/o: dark frames trained */
#define ClusterSavePedestalString "CLUSTER_SAVE_PEDESTAL"    /* asynInt32: write 1 to save */
#define ClusterLoadPedestalString "CLUSTER_LOAD_PEDESTAL"    /* asynInt32: write 1 to load */
#define ClusterPedestalFileString "CLUSTER_PEDESTAL_FILE"    /* asynOctet: path */
/* After an IOC restart, the saved pedestal and mask: 1 loads PedestalFile
 * and MaskFile (those not empty) at the first frame the IOC receives. */
#define ClusterLoadFilesAtStartString "CLUSTER_LOAD_FILES_AT_START" /* asynInt32: 0 No, 1 Yes */
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
#define ClusterPublishString "CLUSTER_PUBLISH" /* asynInt32: write 1: spectrum, maps, images now */
#define ClusterPublicationsString "CLUSTER_PUBLICATIONS" /* asynInt32 r/o: posted after each publication's results */
/* Energies in keV: a gain of 0 says none is known. */
#define ClusterAduPerKeVString "CLUSTER_ADU_PER_KEV"       /* asynFloat64: the gain */
#define ClusterWindowLowKeVString "CLUSTER_WINDOW_LOW_KEV" /* asynFloat64: the window */
#define ClusterWindowHighKeVString "CLUSTER_WINDOW_HIGH_KEV" /*   in keV, with a gain */
#define ClusterSpectrumAxisString "CLUSTER_SPECTRUM_AXIS"  /* asynFloat64Array r/o: bin
                                                              centres, keV with a gain, else ADU */
#define ClusterSpectrumAxisUnitString "CLUSTER_SPECTRUM_AXIS_UNIT" /* asynOctet r/o */
#define ClusterPeakPositionKeVString "CLUSTER_PEAK_POSITION_KEV" /* asynFloat64 r/o */
#define ClusterPeakFWHMKeVString "CLUSTER_PEAK_FWHM_KEV"         /* asynFloat64 r/o */
/* η calibration and the interpolated image (docs/spec.md §7.4-§7.7) of
 * the photons in the energy window (or of all clusters, window off). */
#define ClusterEtaModeString "CLUSTER_ETA_MODE"         /* asynInt32: 0 Off, 1 Calibrate, 2 Interpolate */
#define ClusterEtaFunctionString "CLUSTER_ETA_FUNCTION" /* asynInt32: 0 eta2, 1 eta2full, 2 eta3 */
#define ClusterEtaBinsString "CLUSTER_ETA_BINS"         /* asynInt32: 1..1000 a side */
#define ClusterEtaFileString "CLUSTER_ETA_FILE"         /* asynOctet: .eta path */
#define ClusterSaveEtaString "CLUSTER_SAVE_ETA"         /* asynInt32: write 1 to save */
#define ClusterLoadEtaString "CLUSTER_LOAD_ETA"         /* asynInt32: write 1 to load */
#define ClusterEtaCalibrationString "CLUSTER_ETA_CALIBRATION" /* asynOctet r/o: the one in force */
#define ClusterCalibrationPhotonsString "CLUSTER_CALIBRATION_PHOTONS" /* asynFloat64 r/o */
#define ClusterSubpixelsString "CLUSTER_SUBPIXELS"      /* asynInt32: S, 1..25 */
#define ClusterImageResetString "CLUSTER_IMAGE_RESET"   /* asynInt32: write 1 to clear */
#define ClusterImagedPhotonsString "CLUSTER_IMAGED_PHOTONS" /* asynFloat64 r/o: in the image */
#define ClusterImageUninterpolableString "CLUSTER_IMAGE_UNINTERPOLABLE" /* asynFloat64 r/o */
#define ClusterImageClippedString "CLUSTER_IMAGE_CLIPPED"   /* asynFloat64 r/o */
#define ClusterImageOutsideString "CLUSTER_IMAGE_OUTSIDE"   /* asynFloat64 r/o: not photons */
#define ClusterImageFlatnessString "CLUSTER_IMAGE_FLATNESS" /* asynFloat64 r/o: chi^2/dof */
/* Common mode (docs/spec.md §8): a finder setting, and its figures since
 * the pedestal's reset, at each publication. */
#define ClusterCommonModeString "CLUSTER_COMMON_MODE" /* asynInt32: cc_common_mode */
#define ClusterCommonModeRegionsString "CLUSTER_COMMON_MODE_REGIONS" /* asynInt32 r/o */
#define ClusterCommonModeNowString "CLUSTER_COMMON_MODE_NOW" /* asynFloat64 r/o: rms over
                                                                 regions, last frame, ADU */
#define ClusterCommonModeRmsString "CLUSTER_COMMON_MODE_RMS" /* asynFloat64 r/o: over the run */
#define ClusterCommonModeUnestimatedString "CLUSTER_COMMON_MODE_UNESTIMATED" /* asynFloat64
                                            r/o: region-frames with too few quiet pixels */
#define ClusterCommonModeLastString "CLUSTER_COMMON_MODE_LAST" /* asynFloat64Array r/o:
                                                                  each region, last frame */
/* Per-pixel gain (docs/spec.md §9): a map loaded or calibrated from a
 * flat field, applied while GainMode is Calibrate or Apply. */
#define ClusterGainModeString "CLUSTER_GAIN_MODE"        /* asynInt32: 0 Off, 1 Calibrate, 2 Apply */
#define ClusterGainMapFileString "CLUSTER_GAIN_MAP_FILE" /* asynOctet: .npy or TIFF */
#define ClusterGainUnitString "CLUSTER_GAIN_UNIT"        /* asynInt32: cc_gain_unit of a loaded map */
#define ClusterLoadGainMapString "CLUSTER_LOAD_GAIN_MAP" /* asynInt32: write 1 (empty file: none) */
#define ClusterSaveGainMapString "CLUSTER_SAVE_GAIN_MAP" /* asynInt32: write 1: solve, save, hold */
#define ClusterGainMapInUseString "CLUSTER_GAIN_MAP_IN_USE" /* asynOctet r/o */
#define ClusterGainCalLowString "CLUSTER_GAIN_CAL_LOW"   /* asynFloat64: a pixel's spectrum, */
#define ClusterGainCalHighString "CLUSTER_GAIN_CAL_HIGH" /*   clusters' unit */
#define ClusterGainCalBinsString "CLUSTER_GAIN_CAL_BINS" /* asynInt32: 6..1000 */
#define ClusterGainCalEventsString "CLUSTER_GAIN_CAL_EVENTS" /* asynInt32: cc_gain_events */
#define ClusterGainCalMinPhotonsString "CLUSTER_GAIN_CAL_MIN_PHOTONS" /* asynInt32 */
#define ClusterGainLineEnergyString "CLUSTER_GAIN_LINE_ENERGY" /* asynFloat64 keV: 0 relative */
#define ClusterGainMaskFlaggedString "CLUSTER_GAIN_MASK_FLAGGED" /* asynInt32: 0 No, 1 Yes */
#define ClusterGainCalPhotonsString "CLUSTER_GAIN_CAL_PHOTONS" /* asynFloat64 r/o */
#define ClusterGainCalOutsideString "CLUSTER_GAIN_CAL_OUTSIDE" /* asynFloat64 r/o */
#define ClusterGainCalGoodString "CLUSTER_GAIN_CAL_GOOD"       /* asynInt32 r/o: pixels, */
#define ClusterGainCalFewString "CLUSTER_GAIN_CAL_FEW"         /*   of the last */
#define ClusterGainCalFailedString "CLUSTER_GAIN_CAL_FAILED"   /*   save */
#define ClusterGainCalSpreadString "CLUSTER_GAIN_CAL_SPREAD"   /* asynFloat64 r/o: % rms */

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
        /* The interpolated image, NDUInt32 (cols * S, rows * S), every
         * SpectrumPeriod while EtaMode is Interpolate: */
        ADDRESS_IMAGE = 5,
        /* With common mode on, each pixel's region's rms since the
         * reset, NDFloat32, ADU: */
        ADDRESS_COMMON_MODE = 6,
        /* The gain map in force, NDFloat32, in its unit: */
        ADDRESS_GAIN = 7,
        /* The analog image while DetectorMode is Analog, NDFloat64, the
         * summed values a pixel (docs/spec.md §4.8): */
        ADDRESS_ANALOG = 8,
        NUM_ADDRESSES = 9
    };

    void processCallbacks(NDArray *pArray);
    /* The publisher thread's loop: spectrum, hit map, maps and image
     * every SpectrumPeriod while anything changed, also after frames
     * stop, and at once when Publish is written. */
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
    int ClusterFrameMode;
    int ClusterDetectorMode;
    int ClusterAnalogFrames;
    int ClusterPedestalState;
    int ClusterPedestalCount;
    int ClusterSavePedestal;
    int ClusterLoadPedestal;
    int ClusterPedestalFile;
    int ClusterLoadFilesAtStart;
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
    int ClusterPublish;
    int ClusterPublications;
    int ClusterAduPerKeV;
    int ClusterWindowLowKeV;
    int ClusterWindowHighKeV;
    int ClusterSpectrumAxis;
    int ClusterSpectrumAxisUnit;
    int ClusterPeakPositionKeV;
    int ClusterPeakFWHMKeV;
    int ClusterEtaMode;
    int ClusterEtaFunction;
    int ClusterEtaBins;
    int ClusterEtaFile;
    int ClusterSaveEta;
    int ClusterLoadEta;
    int ClusterEtaCalibration;
    int ClusterCalibrationPhotons;
    int ClusterSubpixels;
    int ClusterImageReset;
    int ClusterImagedPhotons;
    int ClusterImageUninterpolable;
    int ClusterImageClipped;
    int ClusterImageOutside;
    int ClusterImageFlatness;
    int ClusterCommonMode;
    int ClusterCommonModeRegions;
    int ClusterCommonModeNow;
    int ClusterCommonModeRms;
    int ClusterCommonModeUnestimated;
    int ClusterCommonModeLast;
    int ClusterGainMode;
    int ClusterGainMapFile;
    int ClusterGainUnit;
    int ClusterLoadGainMap;
    int ClusterSaveGainMap;
    int ClusterGainMapInUse;
    int ClusterGainCalLow;
    int ClusterGainCalHigh;
    int ClusterGainCalBins;
    int ClusterGainCalEvents;
    int ClusterGainCalMinPhotons;
    int ClusterGainLineEnergy;
    int ClusterGainMaskFlagged;
    int ClusterGainCalPhotons;
    int ClusterGainCalOutside;
    int ClusterGainCalGood;
    int ClusterGainCalFew;
    int ClusterGainCalFailed;
    int ClusterGainCalSpread;
    enum { ETA_OFF = 0, ETA_CALIBRATE = 1, ETA_INTERPOLATE = 2 };
    enum { FRAME_MODE_FRAME = 0, FRAME_MODE_PEDESTAL = 1, FRAME_MODE_NEW_PEDESTAL = 2 };
    enum { DETECTOR_MODE_COUNT = 0, DETECTOR_MODE_ANALOG = 1, DETECTOR_MODE_INTERPOLATE = 2 };
    enum { GAIN_OFF = 0, GAIN_CALIBRATE = 1, GAIN_APPLY = 2 };

private:
    cc_config wantedConfig(int rows, int cols);
    int applyConfig(const cc_config &config, bool newFrameSize, char *message);
    int prepareAccumulators(int rows, int cols, int energy, int bins,
                            double min, double max, char *message);
    /* What calibration or imaging runs: what the PVs ask in a batch's
     * job, what is in force under the finder lock. */
    struct Imaging {
        int mode;              /* ETA_OFF, ETA_CALIBRATE, ETA_INTERPOLATE */
        int function, bins;    /* of a new calibration */
        int subpixels;
        bool windowed;         /* the energy window, the hit map's too */
        cc_energy_window window;
        int rows, cols;
        unsigned calibration;  /* calibrationNumber_ of the one imaged with */
    };
    /* What GainMode and the calibration's settings ask (a batch's job). */
    struct Gain {
        int mode;                /* GAIN_OFF, GAIN_CALIBRATE, GAIN_APPLY */
        bool restart;            /* Calibrate entered: new spectra */
        cc_gain_calibration_config calibration; /* rows, cols: the frame's */
        bool load;               /* load path (in unit) first: a LoadGainMap
                                    asked before the frame size was known */
        cc_gain_unit unit;
        char path[512];
    };
    /* What the processing thread asks of the finder for one batch, from
     * the PVs when the batch was made. */
    struct Job {
        cc_config config;
        bool settingsChanged;  /* a finder setting changed */
        bool spectrumChanged;  /* spectrum bins or range changed */
        bool windowChanged;    /* the energy window changed */
        int energy, bins;
        double min, max;
        int maxClusters;       /* rows of the cluster arrays */
        bool load;             /* load the pedestal from loadPath first */
        char loadPath[512];
        bool loadMask;         /* then the mask from maskPath ("": none) */
        char maskPath[512];
        Imaging imaging;       /* what EtaMode and its settings ask, and
                                  the energy window */
        int frameMode;         /* FRAME_MODE_*: found, or pedestal frames */
        bool analog;           /* DetectorMode Analog: the analog image */
        bool newPedestal;      /* reset the pedestal before these arrays */
        Gain gain;
    };
    /* One core call's arrays and clusters, from the processing thread
     * through the finder thread and an output thread. */
    struct Batch {
        std::vector<NDArray *> arrays;  /* the inputs (reserved), in order */
        Job job;
        /* What the finder thread made of it: */
        int rc;
        char message[NDCC_MESSAGE_SIZE];  /* for StatusMessage, or empty */
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
    /* One output thread's part of the spectrum, hit map and, while
     * EtaMode is Calibrate, the calibration: their sum is what is
     * published, so output threads never wait for each other. */
    struct Accumulator {
        epicsMutex lock;  /* taken after the port and the finder lock */
        cc_eta_calibration *calibration; /* NULL unless calibrating */
        /* The pool of this output thread's cluster arrays: their
         * reserves and releases take its lock, not one shared by all
         * the output threads. */
        NDArrayPool *clusterPool;
    };
    void startThreads(const char *portName);
    static void formatMessage(char *message, size_t size, const char *format,
                              ...) EPICS_PRINTF_STYLE(3, 4);
    static void appendMessage(char *message, const char *more);
    static void releaseArrays(std::vector<NDArray *> &arrays);
    void refuse(NDArray *pArray, const char *why);
    asynStatus refuseWrite(asynUser *pasynUser, const char *format, ...);
    asynStatus checkSpectrum(asynUser *pasynUser, int function, double value);
    asynStatus checkWindow(asynUser *pasynUser, int function, double value);
    asynStatus checkFinderSetting(asynUser *pasynUser, int function, int value);
    int applyWindow(const Job &job, char *message);
    NDArray *mapArray(size_t cols, size_t rows, NDDataType_t type,
                      const char *map);
    void stopCounting();
    int takeCounts(char *message);
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
    /* η calibration and the interpolated image (NDClusterCUDAImaging.cpp). */
    Imaging wantedImaging(const cc_config &config);
    void applyImaging(const Imaging &wanted, char *message);
    cc_eta_calibration *mergedCalibration(char *message);
    void replaceCalibration(cc_eta_calibration *calibration, const char *how);
    asynStatus checkEtaMode(asynUser *pasynUser, int mode);
    asynStatus checkModeState(asynUser *pasynUser, const char *pv, int mode,
                              const char *const states[3]);
    asynStatus checkFrameMode(asynUser *pasynUser, int mode);
    asynStatus checkDetectorMode(asynUser *pasynUser, int mode);
    int runPedestalFrames(Batch &batch);
    void applyAnalog(bool wanted, char *message);
    void stopAnalog();
    int takeAnalog(char *message);
    NDArray *analogArray();
    int loadCalibration(char *message);
    void etaCommand(int function);
    void stopImaging();
    NDArray *takeImage(cc_image_stats *stats, double *flatness, char *message);
    void publishImage(bool force, double period);
    void publishCalibration();
    void setKeV();
    /* Common mode and gain (NDClusterCUDACorrections.cpp). */
    cc_gain_calibration_config wantedGainCalibration(int rows, int cols);
    Gain wantedGain(int rows, int cols);
    asynStatus checkGainWrite(asynUser *pasynUser, int function, double value);
    void applyGain(const Gain &wanted, bool newFrameSize, char *message);
    void takeGainSpectra(bool stop, char *message);
    void gainCommand(int function);
    int holdGainMap(const char *path, cc_gain_unit unit, int rows, int cols,
                    char *message);
    int saveGainMap(char *message);
    void publishCorrections(NDArray **commonMode, NDArray **gain);
    NDArray *clusterArray(NDArrayPool *pool, NDArray *pInput,
                          const cc_frame_clusters &frame, int maxClusters);
    void pedestalCommand(int function);
    int loadMask(const char *path, char *message);
    void setStatus(const char *format, ...);

    /* Serialises the finder between the finder thread and pedestal
     * commands from clients; also guards the frame size, the spectrum's
     * waveform copies and the noise scratch. */
    epicsMutex finderLock_;
    cc_finder *finder_;
    /* The pool of the other arrays the plugin makes (hit map, maps,
     * image; the cluster arrays come from the output threads' pools),
     * maxMemory at most. Not the source's, which NDPluginDriver
     * points pNDArrayPool at: every array reserved or released takes its
     * pool's lock, and the source's is taken for every frame already. It
     * lives as long as the IOC: arrays handed on may outlive the plugin. */
    NDArrayPool *outputPool_;
    /* One part of the η calibration and one pool per output thread. */
    Accumulator accumulators_[MAX_OUTPUT_THREADS];
    /* The spectrum and hit map (finder lock): the finder counts every
     * frame into its own (on the GPU where it runs), added to these at
     * each publication; counting_ says whether it does. */
    cc_spectrum *spectrum_;
    cc_hitmap *hitmap_;
    bool hitmapWindowed_; /* the counting image of the window */
    std::atomic<int> mapArrays_; /* maps made (mapArray), their uniqueId */
    bool counting_;
    /* The analog image (finder lock): the finder sums it while analogOn_,
     * added to analogSums_ at each publication. */
    bool analogOn_;
    std::vector<double> analogSums_;
    uint64_t analogFrames_;
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
    double output0Delay_;      /* s, a test's hook (startThreads) */
    int rows_, cols_;          /* frame size the finder has now (finder lock) */
    int frameRows_, frameCols_; /* of the latest frames handed over (port
                                   lock): what settings are checked for */
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
    bool imageUnpublished_;    /* frames imaged since the image's */
    bool publishWanted_;       /* Publish was written (port lock) */
    epicsEvent publishNow_;    /* wakes the publisher thread */
    epicsTimeStamp lastImage_; /* the publisher thread's */
    bool pendingLoad_;         /* LoadPedestal asked before the first frame */
    bool newPedestalPending_;  /* FrameMode NewPedestal written: reset at the next batch */
    bool pendingMask_;         /* LoadMask asked before the first frame */
    bool framesSeen_;          /* a batch was made: the IOC's start is over */
    char trainingNote_[NDCC_MESSAGE_SIZE]; /* why the pedestal trains again */
    double *spectrumAxis_;     /* bin centres, keV or ADU (finder lock) */
    /* Under the finder lock: */
    Imaging imaging_;          /* what runs */
    cc_eta_calibration *calibration_; /* the one in force, or NULL */
    unsigned calibrationNumber_;      /* counts its replacements */
    char calibrationNote_[NDCC_MESSAGE_SIZE]; /* what it is, for the PV */
    cc_interpolator *image_;   /* the image taken from the finder, while
                                  interpolating; else NULL */
    /* The gain map held (loaded or calibrated), applied to the finder
     * while GainMode is Calibrate or Apply; each new one is numbered. */
    std::vector<double> gainMap_;
    cc_gain_unit gainUnit_;
    int gainRows_, gainCols_;
    unsigned gainNumber_;      /* of the map held; 0: none yet */
    unsigned gainGiven_;       /* of the map last given to the finder,
                                  taken or refused (the finder says which);
                                  0: none; -1: none yet at this size */
    bool gainSpectraStarted_;  /* the finder enters the flat field's
                                  spectra, under the map given when they
                                  started */
    std::vector<double> gainShown_; /* the finder's map, for address 7 */
    bool gainCalibrationRestart_; /* Calibrate written (port lock) */
    std::vector<uint32_t> commonModeRegion_; /* each pixel's region */
    bool pendingGainLoad_;     /* LoadGainMap asked before the first frame */
    std::string gainNote_;     /* where the map held came from */
    /* The common-mode figures' scratch, for the waveform and the map: */
    std::vector<cc_common_mode_region> commonModeFigures_;
    std::vector<double> commonModeLast_;
    cc_config commonModeConfig_; /* the region map's */
    /* The flat field's spectra while GainMode is Calibrate: the finder
     * enters each batch's clusters into its own (on the GPU when CUDA
     * runs), which are added to these at each publication and save; the
     * finder thread replaces them. */
    epicsMutex gainCalibrationLock_;
    cc_gain_calibration *gainCalibration_;
    cc_gain_calibration_config gainCalibrationConfig_;
};

#endif
