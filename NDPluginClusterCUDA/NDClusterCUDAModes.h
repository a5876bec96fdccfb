/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAModes.h: PSI's MÖNCH modes. FrameMode: Frame, the arrays
 * are found; Pedestal, they are pedestal frames (docs/spec.md §2.7), which
 * train the pedestal or update it, and nothing is found; NewPedestal, the
 * pedestal is reset before the next batch, whose arrays and those after
 * it are pedestal frames. DetectorMode: Count, the counting image (always
 * made); Analog, the finder sums the analog image too (§4.8, published on
 * address 8); Interpolate, the interpolated image (it sets EtaMode
 * Interpolate, refused without an η calibration). A mode written takes
 * effect between batches: each batch carries the modes of its job. In
 * iocMoench both follow the driver's JsonFrameMode_RBV and
 * JsonDetectorMode_RBV (db/NDClusterCUDAFollow.template).
 */
#ifndef NDCLUSTERCUDAMODES_H
#define NDCLUSTERCUDAMODES_H

#include <vector>

#include "NDArray.h"

#include "NDClusterCUDAPart.h"

#define ClusterFrameModeString                                                 \
    "CLUSTER_FRAME_MODE" /* asynInt32: 0 Frame, 1 Pedestal, 2 NewPedestal */
#define ClusterDetectorModeString                                              \
    "CLUSTER_DETECTOR_MODE" /* asynInt32: 0 Count, 1 Analog, 2 Interpolate */
#define ClusterAnalogFramesString                                              \
    "CLUSTER_ANALOG_FRAMES" /* asynFloat64 r/o: frames in the analog image */

class NDClusterCUDAModes : public NDClusterCUDAPart {
  public:
    explicit NDClusterCUDAModes(NDPluginClusterCUDA &plugin);

    int FrameMode, DetectorMode, AnalogFrames;
    enum {
        FRAME_MODE_FRAME = 0,
        FRAME_MODE_PEDESTAL = 1,
        FRAME_MODE_NEW_PEDESTAL = 2
    };
    enum {
        DETECTOR_MODE_COUNT = 0,
        DETECTOR_MODE_ANALOG = 1,
        DETECTOR_MODE_INTERPOLATE = 2
    };

    /* What the modes ask of a batch (taken, port locked). */
    struct Wanted {
        int frameMode;    /* FRAME_MODE_*: found, or pedestal frames */
        bool analog;      /* DetectorMode Analog: the analog image */
        bool newPedestal; /* reset the pedestal before these arrays */
    };
    Wanted wanted();
    /* The reset a batch's modes ask for, then its arrays as pedestal
     * frames unless the mode is Frame (finder lock held): *trained says
     * how many went in, *stats the finder's counts after. */
    int pedestalFrames(const Wanted &wanted,
                       const std::vector<NDArray *> &arrays, size_t *trained,
                       cc_finder_stats *stats);
    /* The analog image (finder lock held): summed while a batch's job asks
     * for it; stopped before a new frame size; what the finder summed since
     * the last take added to the image (message: why not); the image as an
     * NDArray for address 8 (NULL when none); emptied (ImageReset: whether
     * there was one); its frames. */
    void applyAnalog(bool wanted, char *message);
    void stopAnalog();
    int takeAnalog(char *message);
    NDArray *analogArray();
    bool resetAnalog();
    double analogFrames() const
    {
        return (double)analogFrames_;
    }

  private:
    asynStatus checkModeState(asynUser *pasynUser, const char *pv, int mode,
                              const char *const states[3]);

    bool newPedestalPending_; /* NewPedestal written: reset at the next batch */
    bool analogOn_;           /* the finder sums it (finder lock) */
    std::vector<double> analogSums_;
    uint64_t analogFrames_;
    std::vector<const uint16_t *> frames_; /* the finder thread's scratch */
};

#endif
