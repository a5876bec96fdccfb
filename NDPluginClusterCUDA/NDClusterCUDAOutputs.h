/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAOutputs.h: what the plugin publishes besides each frame's
 * clusters: the spectrum with its line and its keV axis, the hit map (the
 * counting image of the energy window, when on; address 1), the
 * pedestal's maps (2 to 4), with the corrections' (6, 7), the image (5)
 * and the analog image (8) of their parts. The finder counts the spectrum
 * and hit map itself (on the GPU where it runs); a publisher thread takes
 * them and publishes every SpectrumPeriod while anything changed, and at
 * once on Publish.
 */
#ifndef NDCLUSTERCUDAOUTPUTS_H
#define NDCLUSTERCUDAOUTPUTS_H

#include <atomic>

#include <epicsEvent.h>
#include <epicsTime.h>

#include "NDArray.h"

#include "NDClusterCUDAImaging.h"
#include "NDClusterCUDAPart.h"

#define ClusterSpectrumEnergyString                                            \
    "CLUSTER_SPECTRUM_ENERGY" /* asynInt32: 0 Sum, 1 Sum2x2 */
#define ClusterSpectrumBinsString "CLUSTER_SPECTRUM_BINS" /* asynInt32 */
#define ClusterSpectrumMinString "CLUSTER_SPECTRUM_MIN"   /* asynFloat64, ADU */
#define ClusterSpectrumMaxString "CLUSTER_SPECTRUM_MAX"   /* asynFloat64, ADU */
#define ClusterSpectrumPeriodString                                            \
    "CLUSTER_SPECTRUM_PERIOD" /* asynFloat64: s between publications */
#define ClusterSpectrumString                                                  \
    "CLUSTER_SPECTRUM" /* asynFloat64Array r/o: counts */
#define ClusterSpectrumXString                                                 \
    "CLUSTER_SPECTRUM_X" /* asynFloat64Array r/o: bin centres */
#define ClusterSpectrumResetString                                             \
    "CLUSTER_SPECTRUM_RESET" /* asynInt32: write 1 to clear */
/* The spectrum's line (docs/spec.md §4.7), fitted at each publication. */
#define ClusterPeakLowString                                                   \
    "CLUSTER_PEAK_LOW" /* asynFloat64, ADU: the fit's range; */
#define ClusterPeakHighString                                                  \
    "CLUSTER_PEAK_HIGH" /*   Low >= High: around the highest bin */
#define ClusterPeakFittedString                                                \
    "CLUSTER_PEAK_FITTED" /* asynInt32 r/o: 1 when the last fit found a line */
#define ClusterHitMapResetString                                               \
    "CLUSTER_HITMAP_RESET" /* asynInt32: write 1 to clear */
/* The energy window (docs/spec.md §7.2) on SpectrumEnergy: the hit map
 * counts only the photons inside it: the counting image. */
#define ClusterWindowEnableString                                              \
    "CLUSTER_WINDOW_ENABLE" /* asynInt32: 0 off, 1 on */
#define ClusterWindowLowString                                                 \
    "CLUSTER_WINDOW_LOW" /* asynFloat64, ADU: [Low, High) */
#define ClusterWindowHighString "CLUSTER_WINDOW_HIGH" /* asynFloat64, ADU */
#define ClusterOutsideWindowString                                             \
    "CLUSTER_OUTSIDE_WINDOW" /* asynFloat64 r/o: clusters left out of the hit map */
#define ClusterPublishString                                                   \
    "CLUSTER_PUBLISH" /* asynInt32: write 1: spectrum, maps, images now */
#define ClusterPublicationsString                                              \
    "CLUSTER_PUBLICATIONS" /* asynInt32 r/o: posted after each publication's results */
/* Energies in keV: a gain of 0 says none is known. */
#define ClusterAduPerKeVString "CLUSTER_ADU_PER_KEV" /* asynFloat64: the gain */
#define ClusterWindowLowKeVString                                              \
    "CLUSTER_WINDOW_LOW_KEV" /* asynFloat64: the window */
#define ClusterWindowHighKeVString                                             \
    "CLUSTER_WINDOW_HIGH_KEV" /*   in keV, with a gain */
#define ClusterSpectrumAxisString                                              \
    "CLUSTER_SPECTRUM_AXIS" /* asynFloat64Array r/o: bin
                                                              centres, keV with a gain, else ADU */
#define ClusterSpectrumAxisUnitString                                          \
    "CLUSTER_SPECTRUM_AXIS_UNIT" /* asynOctet r/o */
#define ClusterPeakPositionKeVString                                           \
    "CLUSTER_PEAK_POSITION_KEV"                          /* asynFloat64 r/o */
#define ClusterPeakFWHMKeVString "CLUSTER_PEAK_FWHM_KEV" /* asynFloat64 r/o */
#define ClusterNoiseMeanString                                                 \
    "CLUSTER_NOISE_MEAN" /* asynFloat64 r/o: mean pedestal rms, ADU */

class NDArrayPool;

class NDClusterCUDAOutputs : public NDClusterCUDAPart {
  public:
    NDClusterCUDAOutputs(NDPluginClusterCUDA &plugin, size_t maxMemory);
    ~NDClusterCUDAOutputs();

    int SpectrumEnergy, SpectrumBins, SpectrumMin, SpectrumMax, SpectrumPeriod,
        Spectrum, SpectrumX, SpectrumReset, PeakLow, PeakHigh, PeakFitted,
        HitMapReset, WindowEnable, WindowLow, WindowHigh, OutsideWindow,
        Publish, Publications, AduPerKeV, WindowLowKeV, WindowHighKeV,
        SpectrumAxis, SpectrumAxisUnit, PeakPositionKeV, PeakFWHMKeV, NoiseMean;
    /* The fit's figures, asynFloat64 r/o: position, sigma, FWHM (ADU),
     * FWHM / position, counts in the line, chi^2 per degree of freedom. */
    enum { PEAK_RESULTS = 6 };
    int PeakResult[PEAK_RESULTS];

    /* The spectrum's settings a batch's job asks for, and what changed
     * (taken, port locked). */
    struct Wanted {
        int energy, bins;
        double min, max;
        bool spectrumChanged, windowChanged;
    };
    Wanted wanted();
    /* A spectrum as asked and, for a new frame size (rows x cols against
     * the finder's), a hit map (finder lock held, port not). */
    int prepare(int rows, int cols, const Wanted &wanted, char *message);
    /* The hit map counts from now on the photons of the window imaging
     * asks for, or every cluster, from empty; the finder counts into the
     * spectrum and hit map (finder lock held; message: why not). */
    int applyWindow(const NDClusterCUDAImaging::Wanted &imaging, char *message);
    /* The finder counts no more (finder lock held). */
    void stopCounting();
    /* The finder's pixels of noise 0, once trained (finder lock held). */
    size_t noiselessPixels();
    /* An array of the plugin's pool for one of its maps, of cols x rows,
     * its attributes a Map saying what it holds, numbered as the maps
     * are; NULL when the pool is exhausted (the pool has its own lock). */
    NDArray *mapArray(size_t cols, size_t rows, NDDataType_t type,
                      const char *map);
    /* A batch was published (port locked): what it counted is due. */
    void batchPublished();
    /* The publisher thread's loop: every SpectrumPeriod while anything
     * changed, also after frames stop, and at once on Publish. */
    void startPublisher(const char *portName);
    void publisherTask();

  private:
    asynStatus checkSpectrum(asynUser *pasynUser, int function, double value);
    asynStatus checkWindow(asynUser *pasynUser, int function, double value);
    int takeCounts(char *message);
    void setKeV();
    void publish(bool force);
    void fitLine(uint32_t bins);
    void makeMaps(NDArray *maps[3]);

    /* The pool of the arrays made here (the cluster arrays come from the
     * output threads' pools): not the source's, whose lock every frame
     * takes already. It lives as long as the IOC: arrays handed on may
     * outlive the plugin. */
    NDArrayPool *pool_;
    std::atomic<int> mapArrays_; /* maps made, their uniqueId */
    /* The spectrum and hit map (finder lock): the finder counts every
     * frame into its own, added to these at each publication; counting_
     * says whether it does. */
    cc_spectrum *spectrum_;
    cc_hitmap *hitmap_;
    bool hitmapWindowed_; /* the counting image of the window */
    bool counting_;
    double *counts_, *centres_, *axis_;    /* the waveforms (finder lock) */
    double *rms_, *mean_;                  /* scratch for the pedestal's maps */
    bool spectrumChanged_, windowChanged_; /* since the last batch (port) */
    bool unpublished_;      /* results changed since the last publication */
    bool publishWanted_;    /* Publish was written (port) */
    epicsEvent publishNow_; /* wakes the publisher thread */
    epicsTimeStamp lastPublished_;
};

#endif
