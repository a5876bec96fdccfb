/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAImaging.h: η calibration and the interpolated image
 * (docs/spec.md §7.4-§7.7). EtaMode Calibrate adds every frame's clusters
 * to the output threads' parts of a calibration; Interpolate hands an
 * interpolator to the finder, which places the photons while it finds
 * them (on the GPU when CUDA runs), and the image is taken from it at each
 * publication (address 5). Settings take effect between batches, under
 * the finder lock, so an image never mixes two.
 */
#ifndef NDCLUSTERCUDAIMAGING_H
#define NDCLUSTERCUDAIMAGING_H

#include <epicsTime.h>

#include "NDArray.h"

#include "NDClusterCUDAPart.h"

/* Of the photons in the energy window (or of all clusters, window off). */
#define ClusterEtaModeString                                                   \
    "CLUSTER_ETA_MODE" /* asynInt32: 0 Off, 1 Calibrate, 2 Interpolate */
#define ClusterEtaFunctionString                                               \
    "CLUSTER_ETA_FUNCTION" /* asynInt32: 0 eta2, 1 eta2full, 2 eta3 */
#define ClusterEtaBinsString "CLUSTER_ETA_BINS" /* asynInt32: 1..1000 a side */
#define ClusterEtaFileString "CLUSTER_ETA_FILE" /* asynOctet: .eta path */
#define ClusterSaveEtaString "CLUSTER_SAVE_ETA" /* asynInt32: write 1 to save */
#define ClusterLoadEtaString "CLUSTER_LOAD_ETA" /* asynInt32: write 1 to load */
#define ClusterEtaCalibrationString                                            \
    "CLUSTER_ETA_CALIBRATION" /* asynOctet r/o: the one in force */
#define ClusterCalibrationPhotonsString                                        \
    "CLUSTER_CALIBRATION_PHOTONS"                  /* asynFloat64 r/o */
#define ClusterSubpixelsString "CLUSTER_SUBPIXELS" /* asynInt32: S, 1..25 */
#define ClusterImageResetString                                                \
    "CLUSTER_IMAGE_RESET" /* asynInt32: write 1 to clear */
#define ClusterImagedPhotonsString                                             \
    "CLUSTER_IMAGED_PHOTONS" /* asynFloat64 r/o: in the image */
#define ClusterImageUninterpolableString                                       \
    "CLUSTER_IMAGE_UNINTERPOLABLE"                        /* asynFloat64 r/o */
#define ClusterImageClippedString "CLUSTER_IMAGE_CLIPPED" /* asynFloat64 r/o */
#define ClusterImageOutsideString                                              \
    "CLUSTER_IMAGE_OUTSIDE" /* asynFloat64 r/o: not photons */
#define ClusterImageFlatnessString                                             \
    "CLUSTER_IMAGE_FLATNESS" /* asynFloat64 r/o: chi^2/dof */

class NDClusterCUDAImaging : public NDClusterCUDAPart {
  public:
    explicit NDClusterCUDAImaging(NDPluginClusterCUDA &plugin);
    ~NDClusterCUDAImaging();

    int EtaMode, EtaFunction, EtaBins, EtaFile, SaveEta, LoadEta,
        EtaCalibration, CalibrationPhotons, Subpixels, ImageReset,
        ImagedPhotons, ImageUninterpolable, ImageClipped, ImageOutside,
        ImageFlatness;
    enum { ETA_OFF = 0, ETA_CALIBRATE = 1, ETA_INTERPOLATE = 2 };

    /* What calibration or imaging runs: what the PVs ask in a batch's
     * job, what is in force under the finder lock. */
    struct Wanted {
        int mode;           /* ETA_OFF, ETA_CALIBRATE, ETA_INTERPOLATE */
        int function, bins; /* of a new calibration */
        int subpixels;
        bool windowed; /* the energy window, the hit map's too */
        cc_energy_window window;
        int rows, cols;
        unsigned calibration; /* calibrationNumber_ of the one imaged with */
    };
    /* For frames of rows x cols (port locked). */
    Wanted wanted(int rows, int cols);
    /* Brings calibration and imaging to what a batch's job asks, before
     * its frames (finder lock held; takes the output threads' parts). */
    void apply(const Wanted &wanted, char *message);
    /* Before a new frame size: the finder images nothing, the image goes
     * (finder lock held). */
    void stop();
    /* Refuses an EtaMode the plugin cannot run (port locked). */
    asynStatus checkEtaMode(asynUser *pasynUser, int mode);
    /* The interpolated image on address 5 and its counters, at most once
     * per period unless forced, while frames were imaged since the last
     * (publisher thread; takes the finder lock, then the port's). */
    void publishImage(bool force, double period);
    /* The calibration's PVs (port and finder lock held). */
    void publishCalibration();
    /* A batch was imaged (port locked): the next publication is due. */
    void imaged()
    {
        unpublished_ = true;
    }

  private:
    cc_eta_calibration *mergedCalibration(char *message);
    void replaceCalibration(cc_eta_calibration *calibration, const char *how);
    int loadCalibration(char *message);
    void command(int function);
    NDArray *takeImage(cc_image_stats *stats, double *flatness, char *message);

    /* Under the finder lock: */
    Wanted inForce_;                          /* what runs */
    cc_eta_calibration *calibration_;         /* the one in force, or NULL */
    unsigned calibrationNumber_;              /* counts its replacements */
    char calibrationNote_[NDCC_MESSAGE_SIZE]; /* what it is, for the PV */
    cc_interpolator *image_;   /* taken from the finder while interpolating */
    bool unpublished_;         /* frames imaged since the image's (port) */
    epicsTimeStamp lastImage_; /* the publisher thread's */
};

#endif
