/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDACorrections.h: the real detector's corrections. Common mode
 * (docs/spec.md §8) is a finder setting (CommonMode); its figures are
 * reported and drawn as a map (address 6). The gain map (§9) is held here,
 * loaded from GainMapFile or calibrated from a flat field, and given to
 * the finder while GainMode is Calibrate or Apply; the map in force is
 * published on address 7. While calibrating, the finder enters each
 * batch's clusters into the per-pixel spectra; SaveGainMap fits them
 * (NDClusterCUDAGainMap.cpp).
 */
#ifndef NDCLUSTERCUDACORRECTIONS_H
#define NDCLUSTERCUDACORRECTIONS_H

#include <string>
#include <vector>

#include <epicsMutex.h>

#include "NDArray.h"

#include "NDClusterCUDAPart.h"

/* Common mode: a finder setting, and its figures since the pedestal's
 * reset, at each publication. */
#define ClusterCommonModeString                                                \
    "CLUSTER_COMMON_MODE" /* asynInt32: cc_common_mode */
#define ClusterCommonModeRegionsString                                         \
    "CLUSTER_COMMON_MODE_REGIONS" /* asynInt32 r/o */
#define ClusterCommonModeNowString                                             \
    "CLUSTER_COMMON_MODE_NOW" /* asynFloat64 r/o: rms over
                                                                 regions, last frame, ADU */
#define ClusterCommonModeRmsString                                             \
    "CLUSTER_COMMON_MODE_RMS" /* asynFloat64 r/o: over the run */
#define ClusterCommonModeUnestimatedString                                     \
    "CLUSTER_COMMON_MODE_UNESTIMATED" /* asynFloat64
                                            r/o: region-frames with too few quiet pixels */
#define ClusterCommonModeLastString                                            \
    "CLUSTER_COMMON_MODE_LAST" /* asynFloat64Array r/o:
                                                                  each region, last frame */
/* Per-pixel gain: a map loaded or calibrated from a flat field, applied
 * while GainMode is Calibrate or Apply. */
#define ClusterGainModeString                                                  \
    "CLUSTER_GAIN_MODE" /* asynInt32: 0 Off, 1 Calibrate, 2 Apply */
#define ClusterGainMapFileString                                               \
    "CLUSTER_GAIN_MAP_FILE" /* asynOctet: .npy or TIFF */
#define ClusterGainUnitString                                                  \
    "CLUSTER_GAIN_UNIT" /* asynInt32: cc_gain_unit of a loaded map */
#define ClusterLoadGainMapString                                               \
    "CLUSTER_LOAD_GAIN_MAP" /* asynInt32: write 1 (empty file: none) */
#define ClusterSaveGainMapString                                               \
    "CLUSTER_SAVE_GAIN_MAP" /* asynInt32: write 1: solve, save, hold */
#define ClusterGainMapInUseString "CLUSTER_GAIN_MAP_IN_USE" /* asynOctet r/o */
#define ClusterGainCalLowString                                                \
    "CLUSTER_GAIN_CAL_LOW" /* asynFloat64: a pixel's spectrum, */
#define ClusterGainCalHighString "CLUSTER_GAIN_CAL_HIGH" /*   clusters' unit */
#define ClusterGainCalBinsString                                               \
    "CLUSTER_GAIN_CAL_BINS" /* asynInt32: 6..1000 */
#define ClusterGainCalEventsString                                             \
    "CLUSTER_GAIN_CAL_EVENTS" /* asynInt32: cc_gain_events */
#define ClusterGainCalMinPhotonsString                                         \
    "CLUSTER_GAIN_CAL_MIN_PHOTONS" /* asynInt32 */
#define ClusterGainLineEnergyString                                            \
    "CLUSTER_GAIN_LINE_ENERGY" /* asynFloat64 keV: 0 relative */
#define ClusterGainMaskFlaggedString                                           \
    "CLUSTER_GAIN_MASK_FLAGGED" /* asynInt32: 0 No, 1 Yes */
#define ClusterGainCalPhotonsString                                            \
    "CLUSTER_GAIN_CAL_PHOTONS" /* asynFloat64 r/o */
#define ClusterGainCalOutsideString                                            \
    "CLUSTER_GAIN_CAL_OUTSIDE" /* asynFloat64 r/o */
#define ClusterGainCalGoodString                                               \
    "CLUSTER_GAIN_CAL_GOOD" /* asynInt32 r/o: pixels, */
#define ClusterGainCalFewString "CLUSTER_GAIN_CAL_FEW"       /*   of the last */
#define ClusterGainCalFailedString "CLUSTER_GAIN_CAL_FAILED" /*   save */
#define ClusterGainCalSpreadString                                             \
    "CLUSTER_GAIN_CAL_SPREAD" /* asynFloat64 r/o: % rms */

class NDClusterCUDACorrections : public NDClusterCUDAPart {
  public:
    explicit NDClusterCUDACorrections(NDPluginClusterCUDA &plugin);
    ~NDClusterCUDACorrections();

    int CommonMode, CommonModeRegions, CommonModeNow, CommonModeRms,
        CommonModeUnestimated, CommonModeLast;
    int GainMode, GainMapFile, GainUnit, LoadGainMap, SaveGainMap, GainMapInUse,
        GainCalLow, GainCalHigh, GainCalBins, GainCalEvents, GainCalMinPhotons,
        GainLineEnergy, GainMaskFlagged, GainCalPhotons, GainCalOutside,
        GainCalGood, GainCalFew, GainCalFailed, GainCalSpread;
    enum { GAIN_OFF = 0, GAIN_CALIBRATE = 1, GAIN_APPLY = 2 };

    /* What GainMode and the calibration's settings ask of a batch. */
    struct Wanted {
        int mode;     /* GAIN_OFF, GAIN_CALIBRATE, GAIN_APPLY */
        bool restart; /* Calibrate entered: new spectra */
        cc_gain_calibration_config calibration; /* rows, cols: the frame's */
        bool load; /* load path (in unit) first: a LoadGainMap asked
                         before the frame size was known */
        cc_gain_unit unit;
        char path[512];
    };
    /* For frames of rows x cols (taken, port locked). */
    Wanted wanted(int rows, int cols);
    /* Gives the finder the map GainMode wants, and starts the flat
     * field's spectra when calibration starts, its settings change or a
     * map is loaded (finder thread, finder lock held, finder made). */
    void apply(const Wanted &wanted, bool newFrameSize, char *message);
    /* Adds the spectra the finder entered since the last take to the
     * flat field's; stop: the finder keeps none from now on (finder lock
     * held; takes the calibration's). */
    void takeGainSpectra(bool stop, char *message);
    /* The corrections' figures and maps at a publication (port locked,
     * finder lock held): the common mode's map and the gain map in force,
     * NULL where there is none or the pool has no array. */
    void publish(NDArray **commonMode, NDArray **gain);

  private:
    cc_gain_calibration_config wantedCalibration(int rows, int cols);
    asynStatus checkGainWrite(asynUser *pasynUser, int function, double value);
    NDArray *commonModeMap();
    NDArray *gainMapInForce();
    /* NDClusterCUDAGainMap.cpp */
    int loadGainMap(char *message);
    int holdGainMap(const char *path, cc_gain_unit unit, int rows, int cols,
                    char *message);
    int saveGainMap(char *message);
    void gainCommand(int function);

    /* The gain map held (loaded or calibrated), applied to the finder
     * while GainMode is Calibrate or Apply; each new one is numbered. */
    std::vector<double> gainMap_;
    cc_gain_unit gainUnit_;
    int gainRows_, gainCols_;
    unsigned gainNumber_;           /* of the map held; 0: none yet */
    unsigned gainGiven_;            /* of the map last given to the finder,
                                  taken or refused (the finder says which);
                                  0: none; -1: none yet at this size */
    bool gainSpectraStarted_;       /* the finder enters the flat field's
                                  spectra, under the map given when they
                                  started */
    std::vector<double> gainShown_; /* the finder's map, for address 7 */
    bool calibrationRestart_;       /* Calibrate written (port lock) */
    bool pendingGainLoad_; /* LoadGainMap asked before the first frame */
    std::string gainNote_; /* where the map held came from */
    /* The common-mode figures' scratch, for the waveform and the map: */
    std::vector<uint32_t> commonModeRegion_; /* each pixel's region */
    std::vector<cc_common_mode_region> commonModeFigures_;
    std::vector<double> commonModeLast_;
    cc_config commonModeConfig_; /* the region map's */
    /* The flat field's spectra while GainMode is Calibrate: the finder
     * enters each batch's clusters into its own (on the GPU when CUDA
     * runs), which are added to these at each publication and save; the
     * finder thread replaces them. */
    epicsMutex calibrationLock_;
    cc_gain_calibration *calibration_;
    cc_gain_calibration_config calibrationConfig_;
};

#endif
