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
 * mode on, 6 each pixel's region's common-mode rms (NDFloat32), with a
 * gain map applied 7 that map (NDFloat32), and while DetectorMode is
 * Analog, 8 the analog image (NDFloat64). Each image carries a Map
 * attribute saying what it is.
 *
 * The class NDPluginDriver sees only wires the plugin's concerns, each an
 * object with its own parameters, state and handlers of their writes
 * (NDClusterCUDAPart.h): the finder and its settings
 * (NDClusterCUDAFinder), the batches through the finder and output
 * threads (NDClusterCUDAPipeline), the spectrum, hit map and maps
 * published (NDClusterCUDAOutputs), η calibration and the interpolated
 * image (NDClusterCUDAImaging), common mode and the gain map
 * (NDClusterCUDACorrections), PSI's frame and detector modes
 * (NDClusterCUDAModes). A write goes to its parameter's handler through
 * one table.
 */
#ifndef NDPLUGINCLUSTERCUDA_H
#define NDPLUGINCLUSTERCUDA_H

#include <map>

#include "NDPluginDriver.h"

#include "NDClusterCUDACorrections.h"
#include "NDClusterCUDAFinder.h"
#include "NDClusterCUDAImaging.h"
#include "NDClusterCUDAModes.h"
#include "NDClusterCUDAOutputs.h"
#include "NDClusterCUDAPipeline.h"

#define ClusterStatusMessageString "CLUSTER_STATUS_MESSAGE" /* asynOctet r/o */

class NDPluginClusterCUDA : public NDPluginDriver {
    /* Made before the parts, which create their parameters into them. */
    int firstParameter_ = -1; /* the first the plugin created */
    std::map<int, Int32Write> int32Writes_;
    std::map<int, Float64Write> float64Writes_;
    int statusParameter();
    int StatusMessage = statusParameter();

  public:
    NDPluginClusterCUDA(const char *portName, int queueSize,
                        int blockingCallbacks, const char *NDArrayPort,
                        int NDArrayAddr, int maxBuffers, size_t maxMemory,
                        int priority, int stackSize, int outputThreads);
    enum { MAX_OUTPUT_THREADS = NDClusterCUDAPipeline::MAX_OUTPUT_THREADS };
    /* The NDArray addresses the plugin publishes on. */
    enum {
        ADDRESS_CLUSTERS = 0,    /* each frame's clusters, NDInt32 */
        ADDRESS_HITMAP = 1,      /* the hit map, NDUInt32 */
        ADDRESS_PEDESTAL = 2,    /* the pedestal's mean per pixel, NDFloat32 */
        ADDRESS_NOISE = 3,       /* its rms per pixel, NDFloat32 */
        ADDRESS_MASK = 4,        /* the bad-pixel mask, NDUInt8, 1 = masked */
        ADDRESS_IMAGE = 5,       /* the interpolated image, NDUInt32 */
        ADDRESS_COMMON_MODE = 6, /* each pixel's region's common-mode rms */
        ADDRESS_GAIN = 7,        /* the gain map in force, NDFloat32 */
        ADDRESS_ANALOG = 8,      /* the analog image, NDFloat64 */
        NUM_ADDRESSES = 9
    };

    void processCallbacks(NDArray *pArray);
    asynStatus writeInt32(asynUser *pasynUser, epicsInt32 value);
    asynStatus writeFloat64(asynUser *pasynUser, epicsFloat64 value);

    /* The parts, for each other (each holds this plugin). */
    NDClusterCUDAFinder finder;
    NDClusterCUDAPipeline pipeline;
    NDClusterCUDAOutputs outputs;
    NDClusterCUDAImaging imaging;
    NDClusterCUDACorrections corrections;
    NDClusterCUDAModes modes;

    /* A parameter of a part's, with the handler of its writes. */
    void createParameter(const char *name, asynParamType type, int *index);
    void onWrite(int index, Int32Write write);
    void onWrite(int index, Float64Write write);
    /* StatusMessage_RBV, and a write refused with message (port locked). */
    void setStatus(const char *format, ...) EPICS_PRINTF_STYLE(2, 3);
    asynStatus refuseWrite(asynUser *pasynUser, const char *message);
    /* An array made for address (NULL: none), stamped with the port's
     * time, goes out and is let go (port locked). */
    void publishArray(NDArray *array, int address);

  private:
    friend class NDClusterCUDAPipeline; /* NDPluginDriver's steps */
};

#endif
