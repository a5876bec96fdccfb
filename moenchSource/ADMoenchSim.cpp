/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ADMoenchSim.cpp: streams simulated or replayed MÖNCH frames as NDArrays.
 *
 * One acquisition thread owns the core's simulator or raw reader. It makes
 * frames in batches with the driver lock released, so that Acquire=0 and
 * other writes are served while pixels are made, and takes the lock only
 * to update parameters and call the plugins, as ADCore drivers do.
 * MoenchSourceThreads threads (MoenchFrameFiller) copy the frames into
 * NDArrays meanwhile; the acquisition thread publishes them in order.
 *
 * Longer than the project's 800 lines: one driver class, whose source
 * (simulator or raw replay), pacing and publication share the acquisition
 * thread's state and the driver's lock; the frames' copying is apart
 * (MoenchFrameFiller).
 */
#include <stdio.h>
#include <string.h>

#include <new>

#include <epicsEvent.h>
#include <epicsString.h>
#include <epicsThread.h>
#include <epicsTime.h>
#include <iocsh.h>

#include "ADMoenchSim.h"

#include <epicsExport.h>

static const char *driverName = "ADMoenchSim";

/* Frames made per call into the core: large enough for the simulator's
 * threads to share out, small enough that a slow rate does not make many
 * frames that a stop would throw away. */
static const size_t batchFrames = 16;

/* Notices of one raw read that are printed; the rest are only counted by
 * the reader's statistics. */
static const int rawNoticesPrinted = 8;

/* How late the source may fall behind its schedule (or one period, when
 * longer) and still catch up by sending frames back to back. A thread
 * woken from a timed wait is often tens of microseconds late, which at
 * 50 kHz (20 us periods) would otherwise restart the schedule at every
 * frame and lose the rate; further behind, the schedule restarts. */
static const double catchUpSeconds = 2e-3;

/* Waits shorter than this do not show ADStatus Waiting: at kHz rates two
 * state changes a frame would cost more than the wait. */
static const double waitingShownSeconds = 1e-3;

/* Waits shorter than this are not made: the frame goes out up to this
 * early and the next ones wait longer, so the rate holds on average. A
 * timed wait, with the lock given up and taken back, costs about 20 us on
 * the H200's host, a whole period at 50 kHz, where sleeping every frame
 * held the source near 41,000 frames/s. */
static const double shortestWaitSeconds = 100e-6;

/* While frames flow, parameter callbacks (ArrayCounter_RBV and the other
 * counters) are made at most this often, and at the end of an acquisition.
 * Each callback wakes the record-processing thread once per changed
 * counter, which at tens of kHz cost the publishing thread more time than
 * the rest of a frame; clients see the counters 200 times a second. */
static const double paramCallbackSeconds = 5e-3;

static void acquisitionTaskC(void *drvPvt)
{
    ADMoenchSim *pDriver = static_cast<ADMoenchSim *>(drvPvt);
    pDriver->acquisitionTask();
}

static int clampInt(int value, int low, int high)
{
    return value < low ? low : (value > high ? high : value);
}

/** Constructor for ADMoenchSim; most parameters are passed to ADDriver::ADDriver.
  * \param[in] portName The name of the asyn port driver to be created.
  * \param[in] maxSizeX Columns of the sensor, 1..400 (0 or less gives 400).
  * \param[in] maxSizeY Rows of the sensor, 1..400 (0 or less gives 400).
  * \param[in] maxBuffers Passed to ADDriver (no longer used by ADCore).
  * \param[in] maxMemory The most memory the NDArrayPool may allocate; 0 = unlimited.
  * \param[in] priority The thread priority for the asyn port driver thread.
  * \param[in] stackSize The stack size for the asyn port driver thread. */
ADMoenchSim::ADMoenchSim(const char *portName, int maxSizeX, int maxSizeY,
                         int maxBuffers, size_t maxMemory, int priority,
                         int stackSize)
    : ADDriver(portName, 1, 0, maxBuffers, maxMemory,
               asynInt32Mask | asynFloat64Mask | asynOctetMask |
                   asynInt32ArrayMask | asynGenericPointerMask |
                   asynDrvUserMask,
               asynInt32Mask | asynFloat64Mask | asynOctetMask |
                   asynInt32ArrayMask | asynGenericPointerMask,
               ASYN_CANBLOCK,
               1, /* ASYN_CANBLOCK=1, ASYN_MULTIDEVICE=0, autoConnect=1 */
               priority, stackSize),
      startEvent_(NULL), stopEvent_(NULL), simulator_(NULL), rawReader_(NULL),
      rows_(0), cols_(0), batchData_(NULL), batchCount_(0), batchNext_(0),
      nextSimFrame_(0), droppedFrames_(0), stopPending_(false)
{
    const char *functionName = "ADMoenchSim";
    char versionString[32];

    startEvent_ = epicsEventCreate(epicsEventEmpty);
    stopEvent_ = epicsEventCreate(epicsEventEmpty);
    if (!startEvent_ || !stopEvent_) {
        printf("%s:%s: epicsEventCreate failure\n", driverName, functionName);
        return;
    }

    createParam(MoenchFluxString, asynParamFloat64, &MoenchFlux);
    createParam(MoenchSeedString, asynParamInt32, &MoenchSeed);
    createParam(MoenchHotPixelsString, asynParamInt32, &MoenchHotPixels);
    createParam(MoenchDarkFramesString, asynParamInt32, &MoenchDarkFrames);
    createParam(MoenchSourceString, asynParamInt32, &MoenchSource);
    createParam(MoenchRawFileString, asynParamOctet, &MoenchRawFile);
    createParam(MoenchRawChipString, asynParamInt32, &MoenchRawChip);
    createParam(MoenchFrameNumberString, asynParamInt32, &MoenchFrameNumber);
    createParam(MoenchCycleFramesString, asynParamInt32, &MoenchCycleFrames);
    createParam(MoenchSourceThreadsString, asynParamInt32,
                &MoenchSourceThreads);
    createParam(MoenchFrameRingString, asynParamInt32, &MoenchFrameRing);
    createParam(MoenchRingFramesString, asynParamInt32, &MoenchRingFrames);
    createParam(MoenchCommonModeString, asynParamInt32, &MoenchCommonMode);
    createParam(MoenchCommonModeRmsString, asynParamFloat64,
                &MoenchCommonModeRms);
    createParam(MoenchGainSpreadString, asynParamFloat64, &MoenchGainSpread);

    if (maxSizeX <= 0)
        maxSizeX = ADMOENCHSIM_SENSOR_SIZE;
    if (maxSizeY <= 0)
        maxSizeY = ADMOENCHSIM_SENSOR_SIZE;
    if (maxSizeX > ADMOENCHSIM_SENSOR_SIZE ||
        maxSizeY > ADMOENCHSIM_SENSOR_SIZE) {
        printf("%s:%s: the sensor is %d x %d pixels; maxSize limited to it\n",
               driverName, functionName, ADMOENCHSIM_SENSOR_SIZE,
               ADMOENCHSIM_SENSOR_SIZE);
        maxSizeX = clampInt(maxSizeX, 1, ADMOENCHSIM_SENSOR_SIZE);
        maxSizeY = clampInt(maxSizeY, 1, ADMOENCHSIM_SENSOR_SIZE);
    }

    epicsSnprintf(versionString, sizeof(versionString), "%d.%d.%d",
                  ADMOENCHSIM_VERSION, ADMOENCHSIM_REVISION,
                  ADMOENCHSIM_MODIFICATION);
    setStringParam(NDDriverVersion, versionString);
    setStringParam(ADManufacturer, "PSI (simulated)");
    setStringParam(ADModel, "MOENCH simulator");
    setStringParam(ADSDKVersion, cc_version());
    setStringParam(ADSerialNumber, "No serial number");
    setStringParam(ADFirmwareVersion, "No firmware");

    setIntegerParam(ADMaxSizeX, maxSizeX);
    setIntegerParam(ADMaxSizeY, maxSizeY);
    setIntegerParam(ADMinX, 0);
    setIntegerParam(ADMinY, 0);
    setIntegerParam(ADBinX, 1);
    setIntegerParam(ADBinY, 1);
    setIntegerParam(ADSizeX, maxSizeX);
    setIntegerParam(ADSizeY, maxSizeY);
    setIntegerParam(NDArraySizeX, maxSizeX);
    setIntegerParam(NDArraySizeY, maxSizeY);
    setIntegerParam(NDArraySize, 0);
    setIntegerParam(NDDataType, NDUInt16);
    setIntegerParam(NDColorMode, NDColorModeMono);
    setIntegerParam(ADImageMode, ADImageContinuous);
    setIntegerParam(ADNumImages, 100);
    setDoubleParam(ADAcquireTime, 0.0);
    setDoubleParam(ADAcquirePeriod, 0.0);
    setIntegerParam(ADStatus, ADStatusIdle);
    setStringParam(ADStatusMessage, "Idle");

    /* Defaults of the core's simulator (cc_simulator_config_init). */
    setDoubleParam(MoenchFlux, 2330.0);
    setIntegerParam(MoenchSeed, 1);
    setIntegerParam(MoenchHotPixels, 0);
    setIntegerParam(MoenchDarkFrames, 0);
    setIntegerParam(MoenchSource, ADMoenchSourceSimulated);
    setStringParam(MoenchRawFile, "");
    setIntegerParam(MoenchRawChip, CC_RAW_CHIP_UNSAID);
    setIntegerParam(MoenchFrameNumber, 0);
    setIntegerParam(MoenchCycleFrames, 0);
    setIntegerParam(MoenchSourceThreads,
                    clampInt(epicsThreadGetCPUs(), 1,
                             ADMOENCHSIM_DEFAULT_SOURCE_THREADS));
    setIntegerParam(MoenchFrameRing, 0);
    setIntegerParam(MoenchRingFrames, 0);
    setIntegerParam(MoenchCommonMode, CC_COMMON_MODE_NONE);
    setDoubleParam(MoenchCommonModeRms, 0.0);
    setDoubleParam(MoenchGainSpread, 0.0);

    /* Low priority, and time-shared once it runs (acquisitionTask): the
     * simulator's threads inherit it and keep every CPU busy when
     * AcquirePeriod is 0, which as real-time threads (SCHED_FIFO when the
     * IOC may use it) would starve the CA server, the plugins that consume
     * the frames and the processes beside the IOC. */
    if (epicsThreadCreate("ADMoenchSimTask", epicsThreadPriorityLow,
                          epicsThreadGetStackSize(epicsThreadStackMedium),
                          acquisitionTaskC, this) == NULL) {
        printf("%s:%s: epicsThreadCreate failure for the acquisition thread\n",
               driverName, functionName);
        setIntegerParam(ADStatus, ADStatusError);
        setStringParam(ADStatusMessage,
                       "Could not start the acquisition thread");
    }
}

/** Waits for Acquire=1 and runs one acquisition each time; never returns. */
void ADMoenchSim::acquisitionTask()
{
    cc_thread_share_cpus();
    lock();
    for (;;) {
        unlock();
        epicsEventMustWait(startEvent_);
        lock();
        /* A stop can beat the thread to the start: then there is nothing to do. */
        int acquire;
        getIntegerParam(ADAcquire, &acquire);
        if (!acquire)
            continue;
        /* A stop signalled before this start belongs to an earlier acquisition. */
        stopPending_ = false;
        epicsEventTryWait(stopEvent_);
        runAcquisition();
    }
}

/** Reads the acquisition's settings, clamping the frame size; called with the lock held. */
void ADMoenchSim::readSettings(Settings *settings)
{
    int sizeX, sizeY, maxSizeX, maxSizeY, seed, darkFrames, cycleFrames,
        frameRing;
    char rawPath[4096];

    getIntegerParam(ADImageMode, &settings->imageMode);
    getIntegerParam(ADNumImages, &settings->numImages);
    if (settings->numImages < 1)
        settings->numImages = 1;
    getIntegerParam(MoenchSource, &settings->source);
    getIntegerParam(ADSizeX, &sizeX);
    getIntegerParam(ADSizeY, &sizeY);
    getIntegerParam(ADMaxSizeX, &maxSizeX);
    getIntegerParam(ADMaxSizeY, &maxSizeY);
    sizeX = clampInt(sizeX, 1, maxSizeX);
    sizeY = clampInt(sizeY, 1, maxSizeY);
    setIntegerParam(ADSizeX, sizeX);
    setIntegerParam(ADSizeY, sizeY);
    settings->cols = (uint32_t)sizeX;
    settings->rows = (uint32_t)sizeY;
    getIntegerParam(MoenchSeed, &seed);
    settings->seed = (uint32_t)seed;
    getDoubleParam(MoenchFlux, &settings->flux);
    int hotPixels;
    getIntegerParam(MoenchHotPixels, &hotPixels);
    settings->hotPixels = hotPixels > 0 ? (uint32_t)hotPixels : 0;
    int commonMode;
    getIntegerParam(MoenchCommonMode, &commonMode);
    settings->commonMode = (cc_common_mode)commonMode;
    getDoubleParam(MoenchCommonModeRms, &settings->commonModeRms);
    getDoubleParam(MoenchGainSpread, &settings->gainSpread);
    getIntegerParam(MoenchDarkFrames, &darkFrames);
    settings->darkFrames = darkFrames > 0 ? (uint64_t)darkFrames : 0;
    getIntegerParam(MoenchCycleFrames, &cycleFrames);
    settings->cycleFrames = cycleFrames > 0 ? (uint64_t)cycleFrames : 0;
    getIntegerParam(MoenchSourceThreads, &settings->sourceThreads);
    getIntegerParam(MoenchFrameRing, &frameRing);
    settings->frameRing = frameRing > 0 ? (size_t)frameRing : 0;
    getStringParam(MoenchRawFile, (int)sizeof(rawPath), rawPath);
    settings->rawPath = rawPath;
    int rawChip;
    getIntegerParam(MoenchRawChip, &rawChip);
    settings->rawChip = (cc_raw_chip)rawChip;
}

/** True when Acquire=0 was written during this acquisition; called with
  * the lock held. It reads a flag rather than trying stopEvent_: on Linux
  * epicsEventTryWait is a timed wait that sleeps out the timer slack, 80 us
  * on a 2-core VM, which capped the source near 10,000 frames/s. */
bool ADMoenchSim::stopRequested()
{
    if (stopPending_)
        return true;
    int acquire;
    getIntegerParam(ADAcquire, &acquire);
    return acquire == 0;
}

/** Waits until the next frame is due, AcquirePeriod after the previous one;
  * returns false if acquisition was stopped meanwhile. Frames are due on a
  * fixed schedule, so the time spent making a batch does not lower the
  * rate; a source too slow for the period restarts the schedule rather
  * than sending a burst. Called with the lock held. */
bool ADMoenchSim::waitForNextFrame(epicsTimeStamp *due)
{
    double period;
    getDoubleParam(ADAcquirePeriod, &period);
    epicsTimeStamp now;
    epicsTimeGetCurrent(&now);
    if (period <= 0.0) {
        *due = now;
        return true;
    }
    epicsTimeAddSeconds(due, period);
    double delay = epicsTimeDiffInSeconds(due, &now);
    if (delay < -(period > catchUpSeconds ? period : catchUpSeconds)) {
        *due = now;
        return true;
    }
    if (delay < shortestWaitSeconds)
        return true;

    bool showWaiting = delay >= waitingShownSeconds;
    if (showWaiting) {
        setIntegerParam(ADStatus, ADStatusWaiting);
        callParamCallbacks();
    }
    unlock();
    epicsEventStatus status = epicsEventWaitWithTimeout(stopEvent_, delay);
    lock();
    if (status == epicsEventOK)
        return false;
    if (showWaiting)
        setIntegerParam(ADStatus, ADStatusAcquire);
    return true;
}

/** Ends the acquisition with an error; called with the lock held. */
void ADMoenchSim::finishWithError(const char *message)
{
    asynPrint(pasynUserSelf, ASYN_TRACE_ERROR, "%s:%s: %s\n", driverName,
              "finishWithError", message);
    setIntegerParam(ADStatus, ADStatusError);
    setStringParam(ADStatusMessage, message);
    setIntegerParam(ADAcquire, 0);
    callParamCallbacks();
}

/** Creates the simulator or opens the raw run, sizes the batch buffer and
  * starts the threads that copy frames into NDArrays. Called without the lock. */
int ADMoenchSim::openSource(const Settings &settings, char *message)
{
    int rc;
    if (settings.source == ADMoenchSourceRawFile) {
        if (settings.rawPath.empty()) {
            epicsSnprintf(
                message, CC_MESSAGE_SIZE,
                "no raw file to replay: set MoenchRawFile to a master JSON file");
            return CC_EINVAL;
        }
        rc = cc_raw_reader_open_chip(&rawReader_, settings.rawPath.c_str(),
                                     settings.rawChip, message);
        if (rc != CC_OK) {
            /* The library names what it does not understand; the PV that
             * names the chip is the driver's. */
            if (rc == CC_ENOTSUP && settings.rawChip == CC_RAW_CHIP_UNSAID &&
                strstr(message, "which chip") != NULL)
                epicsSnprintf(message + strlen(message),
                              CC_MESSAGE_SIZE - strlen(message),
                              " (MoenchRawChip)");
            return rc;
        }
        cc_raw_info info;
        rc = cc_raw_reader_info(rawReader_, &info);
        if (rc != CC_OK) {
            epicsSnprintf(message, CC_MESSAGE_SIZE, "%s: %s",
                          settings.rawPath.c_str(), cc_strerror(rc));
            return rc;
        }
        rows_ = info.rows;
        cols_ = info.cols;
    } else {
        cc_simulator_config config;
        cc_simulator_config_init(&config);
        config.rows = settings.rows;
        config.cols = settings.cols;
        config.seed = settings.seed;
        config.flux = settings.flux;
        config.hot_pixels = settings.hotPixels;   /* too many: refused here */
        config.common_mode = settings.commonMode; /* bad values too */
        config.common_mode_rms = settings.commonModeRms;
        config.gain_spread = settings.gainSpread;
        config.threads = 0; /* frames are independent: one thread per CPU */
        rc = cc_simulator_new(&simulator_, &config, message);
        if (rc != CC_OK)
            return rc;
        rows_ = settings.rows;
        cols_ = settings.cols;
        nextSimFrame_ = 0;
        rc = prepareCycle(settings, message);
        if (rc != CC_OK)
            return rc;
    }
    try {
        batch_.resize(batchFrames * rows_ * cols_);
        batchNumbers_.resize(batchFrames);
    } catch (const std::bad_alloc &) {
        epicsSnprintf(message, CC_MESSAGE_SIZE,
                      "no memory for a batch of %u frames of %u x %u pixels",
                      (unsigned)batchFrames, (unsigned)cols_, (unsigned)rows_);
        return CC_ENOMEM;
    }
    batchCount_ = 0;
    batchNext_ = 0;
    if (!filler_.start(this->pNDArrayPool, settings.sourceThreads, cols_,
                       rows_)) {
        epicsSnprintf(message, CC_MESSAGE_SIZE,
                      "could not start %d threads to copy frames",
                      settings.sourceThreads);
        return CC_ETHREAD;
    }
    return CC_OK;
}

/** Simulates the data frames that MoenchCycleFrames repeats, unless those
  * of the last acquisition fit (same seed, flux, hot pixels, common mode,
  * gain spread, size and first frame).
  * Called without the lock, after the simulator is made. */
int ADMoenchSim::prepareCycle(const Settings &settings, char *message)
{
    if (settings.cycleFrames == 0) {
        std::vector<uint16_t>().swap(cycle_);
        cycleKey_.clear();
        return CC_OK;
    }
    char key[256];
    epicsSnprintf(key, sizeof(key),
                  "%u %u %llu %.17g %u %d %.17g %.17g %llu %llu",
                  (unsigned)rows_, (unsigned)cols_,
                  (unsigned long long)settings.seed, settings.flux,
                  (unsigned)settings.hotPixels, (int)settings.commonMode,
                  settings.commonModeRms, settings.gainSpread,
                  (unsigned long long)settings.darkFrames,
                  (unsigned long long)settings.cycleFrames);
    if (cycleKey_ == key)
        return CC_OK;
    cycleKey_.clear();
    try {
        cycle_.resize(settings.cycleFrames * rows_ * cols_);
    } catch (const std::bad_alloc &) {
        std::vector<uint16_t>().swap(cycle_);
        epicsSnprintf(
            message, CC_MESSAGE_SIZE,
            "no memory for %llu frames to cycle: lower MoenchCycleFrames",
            (unsigned long long)settings.cycleFrames);
        return CC_ENOMEM;
    }
    /* The frames the simulator would make next after the dark frames. */
    int rc = cc_simulator_frames(simulator_, settings.darkFrames,
                                 (size_t)settings.cycleFrames, &cycle_[0],
                                 NULL);
    if (rc != CC_OK) {
        epicsSnprintf(message, CC_MESSAGE_SIZE,
                      "simulating the frames to cycle: %s", cc_strerror(rc));
        return rc;
    }
    cycleKey_ = key;
    return CC_OK;
}

/** Stops the copying threads, releasing the frames not published, and
  * frees the simulator or raw reader; the batch buffer is kept for the
  * next acquisition. */
void ADMoenchSim::closeSource()
{
    filler_.stop();
    cc_simulator_destroy(simulator_);
    simulator_ = NULL;
    cc_raw_reader_close(rawReader_);
    rawReader_ = NULL;
    batchCount_ = 0;
    batchNext_ = 0;
}

/** Starts the raw run again from its first frame, for Continuous replay. */
int ADMoenchSim::reopenRawRun(const Settings &settings, char *message)
{
    cc_raw_reader_close(rawReader_);
    rawReader_ = NULL;
    int rc = cc_raw_reader_open_chip(&rawReader_, settings.rawPath.c_str(),
                                     settings.rawChip, message);
    if (rc != CC_OK)
        return rc;
    cc_raw_info info;
    rc = cc_raw_reader_info(rawReader_, &info);
    if (rc == CC_OK && (info.rows != rows_ || info.cols != cols_)) {
        epicsSnprintf(message, CC_MESSAGE_SIZE,
                      "%s changed to %u x %u pixels while being replayed",
                      settings.rawPath.c_str(), (unsigned)info.cols,
                      (unsigned)info.rows);
        return CC_EFORMAT;
    }
    return rc;
}

/** Prints the raw reader's notices (skipped frames, missing files) and
  * keeps the latest for ADStatusMessage. Called without the lock. */
void ADMoenchSim::reportRawNotices()
{
    const char *notice;
    int printed = 0;
    while ((notice = cc_raw_reader_notice(rawReader_)) != NULL) {
        if (printed++ < rawNoticesPrinted)
            asynPrint(pasynUserSelf, ASYN_TRACE_WARNING, "%s: %s\n", driverName,
                      notice);
        rawNotice_ = notice;
    }
}

/** Makes the next batch of at most framesWanted frames into batch_.
  * Sets *endOfRun when a replayed run that does not loop has no more
  * frames. Called without the lock. */
int ADMoenchSim::produceBatch(const Settings &settings, uint64_t framesWanted,
                              bool *endOfRun, char *message)
{
    size_t n = framesWanted < batchFrames ? (size_t)framesWanted : batchFrames;
    int rc;
    *endOfRun = false;
    batchData_ = &batch_[0];
    batchCount_ = 0;
    batchNext_ = 0;

    if (settings.source == ADMoenchSourceRawFile) {
        size_t nRead = 0;
        rc = cc_raw_reader_read(rawReader_, &batch_[0], &batchNumbers_[0], n,
                                &nRead, message);
        reportRawNotices();
        if (rc == CC_OK && nRead == 0 &&
            settings.imageMode == ADImageContinuous) {
            rc = reopenRawRun(settings, message);
            if (rc == CC_OK)
                rc = cc_raw_reader_read(rawReader_, &batch_[0],
                                        &batchNumbers_[0], n, &nRead, message);
            reportRawNotices();
            if (rc == CC_OK && nRead == 0) {
                epicsSnprintf(message, CC_MESSAGE_SIZE,
                              "%s holds no complete frames",
                              settings.rawPath.c_str());
                rc = CC_EFORMAT;
            }
        }
        if (rc != CC_OK)
            return rc;
        *endOfRun = nRead == 0;
        batchCount_ = nRead;
        return CC_OK;
    }

    /* A batch is all dark or all with photons: the two are made by different calls. */
    bool dark = nextSimFrame_ < settings.darkFrames;
    if (!dark && settings.cycleFrames > 0) {
        /* The cycle's frames, in place; frame numbers keep counting. */
        uint64_t k = (nextSimFrame_ - settings.darkFrames) %
                     settings.cycleFrames;
        if (settings.cycleFrames - k < n)
            n = (size_t)(settings.cycleFrames - k);
        batchData_ = &cycle_[k * rows_ * cols_];
        for (size_t i = 0; i < n; i++)
            batchNumbers_[i] = nextSimFrame_ + i;
        nextSimFrame_ += n;
        batchCount_ = n;
        return CC_OK;
    }
    if (dark && settings.darkFrames - nextSimFrame_ < n)
        n = (size_t)(settings.darkFrames - nextSimFrame_);
    rc = dark ? cc_simulator_dark_frames(simulator_, nextSimFrame_, n,
                                         &batch_[0])
              : cc_simulator_frames(simulator_, nextSimFrame_, n, &batch_[0],
                                    NULL);
    if (rc != CC_OK) {
        epicsSnprintf(message, CC_MESSAGE_SIZE,
                      "simulator failed at frame %llu: %s",
                      (unsigned long long)nextSimFrame_, cc_strerror(rc));
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        batchNumbers_[i] = nextSimFrame_ + i;
    nextSimFrame_ += n;
    batchCount_ = n;
    return CC_OK;
}

/** Hands frames to the copying threads, making batches as needed, until
  * they have as many in flight as they take or *framesSubmitted reaches
  * framesWanted. Sets *endOfRun when a replayed run that does not loop
  * has no more frames. Called without the lock. */
int ADMoenchSim::submitFrames(const Settings &settings, uint64_t framesWanted,
                              uint64_t *framesSubmitted, bool *endOfRun,
                              char *message)
{
    const size_t framePixels = (size_t)rows_ * cols_;
    while (!filler_.full() && *framesSubmitted < framesWanted) {
        if (batchNext_ == batchCount_) {
            /* The next batch may be made into batch_, which frames in
             * flight may still be copied from; cycled frames stay. */
            if (batchData_ == batch_.data())
                filler_.waitFilled();
            int rc = produceBatch(settings, framesWanted - *framesSubmitted,
                                  endOfRun, message);
            if (rc != CC_OK || *endOfRun)
                return rc;
        }
        filler_.submit(batchData_ + batchNext_ * framePixels,
                       batchNumbers_[batchNext_]);
        batchNext_++;
        (*framesSubmitted)++;
    }
    return CC_OK;
}

/** Whether the frame numbered frameNumber is one of the simulated dark
  * frames that start an acquisition. */
bool ADMoenchSim::isDarkFrame(uint64_t frameNumber, const Settings &settings)
{
    return settings.source != ADMoenchSourceRawFile &&
           frameNumber < settings.darkFrames;
}

/** Publishes one frame as the next NDArray, or counts it dropped when
  * there was no array for it; called with the lock held. The caller keeps
  * its reference to the array. */
void ADMoenchSim::publishFrame(const MoenchFrameFiller::Frame &frame,
                               const Settings &settings)
{
    NDArray *pArray = frame.array;
    uint64_t frameNumber = frame.tag;
    int numImagesCounter, arrayCounter, arrayCallbacks;
    getIntegerParam(ADNumImagesCounter, &numImagesCounter);
    setIntegerParam(ADNumImagesCounter, numImagesCounter + 1);
    setIntegerParam(MoenchFrameNumber,
                    frameNumber > 0x7fffffffu ? 0x7fffffff : (int)frameNumber);
    if (!pArray) {
        /* The pool is full, or the ring's next array is still held,
         * typically because plugins fall behind: the frame is lost but
         * the acquisition goes on. */
        droppedFrames_++;
        char dropMessage[96];
        epicsSnprintf(dropMessage, sizeof(dropMessage),
                      "no free NDArray: %lu frames dropped", droppedFrames_);
        setStringParam(ADStatusMessage, dropMessage);
        if (droppedFrames_ == 1 || droppedFrames_ % 1000 == 0)
            asynPrint(pasynUserSelf, ASYN_TRACE_ERROR, "%s:%s: %s\n",
                      driverName, "publishFrame", dropMessage);
        return;
    }
    getIntegerParam(NDArrayCounter, &arrayCounter);
    arrayCounter++;
    setIntegerParam(NDArrayCounter, arrayCounter);
    pArray->uniqueId = arrayCounter;
    updateTimeStamps(pArray);
    this->getAttributes(pArray->pAttributeList);
    /* Let plugins tell the dark frames and the detector's frame number. */
    epicsUInt64 frameNumberAttr = frameNumber;
    epicsInt32 darkAttr = isDarkFrame(frameNumber, settings) ? 1 : 0;
    pArray->pAttributeList->add("MoenchFrameNumber",
                                "Frame number of the detector or simulator",
                                NDAttrUInt64, &frameNumberAttr);
    pArray->pAttributeList->add("MoenchDarkFrame",
                                "1 for a simulated dark frame (no photons)",
                                NDAttrInt32, &darkAttr);
    getIntegerParam(NDArrayCallbacks, &arrayCallbacks);
    if (arrayCallbacks) {
        asynPrint(pasynUserSelf, ASYN_TRACE_FLOW,
                  "%s:%s: calling NDArray callback\n", driverName,
                  "publishFrame");
        doCallbacksGenericPointer(pArray, NDArrayData, 0);
    }
}

/** Runs one acquisition from start to completion, stop or error; called
  * with the lock held, which it releases while frames are made and while
  * it waits out the period. */
void ADMoenchSim::runAcquisition()
{
    enum { Completed, Stopped, Failed } outcome = Completed;
    Settings settings;
    char message[CC_MESSAGE_SIZE] = "";
    char endMessage[CC_MESSAGE_SIZE + 64];

    readSettings(&settings);
    setIntegerParam(ADNumImagesCounter, 0);
    setIntegerParam(ADStatus, ADStatusAcquire);
    setStringParam(ADStatusMessage, "Acquiring data");
    callParamCallbacks();

    unlock();
    int rc = openSource(settings, message);
    lock();
    if (rc != CC_OK) {
        unlock();
        closeSource();
        lock();
        finishWithError(message);
        return;
    }

    /* The frame shape is fixed for the acquisition: publish it once, also
     * through ARRAY_DIMENSIONS, which ArraySize0/1_RBV are read from. */
    epicsInt32 dimensions[2] = {(epicsInt32)cols_, (epicsInt32)rows_};
    setIntegerParam(NDNDimensions, 2);
    setIntegerParam(NDArraySizeX, dimensions[0]);
    setIntegerParam(NDArraySizeY, dimensions[1]);
    setIntegerParam(NDArraySize,
                    (int)((size_t)rows_ * cols_ * sizeof(uint16_t)));
    doCallbacksInt32Array(dimensions, 2, NDDimensions, 0);
    callParamCallbacks();

    const bool continuous = settings.imageMode == ADImageContinuous;
    const uint64_t framesToTake = settings.imageMode == ADImageSingle
                                      ? 1
                                      : (uint64_t)settings.numImages;
    uint64_t framesTaken = 0; /* published, or dropped for want of an NDArray */
    std::vector<MoenchFrameFiller::Frame> frames(filler_.capacity());
    /* With MoenchFrameRing = N the first N data frames' arrays are kept;
     * once the filler's last frames are out, data frame d goes out again
     * in the array of data frame d % N, without a copy: the same content
     * as MoenchCycleFrames = N, at the cost of a receiver that hands over
     * its buffers. */
    std::vector<NDArray *> ring;
    ring.reserve(settings.frameRing);
    uint64_t dataFrames = 0;      /* data frames published (or dropped) */
    uint64_t nextFrameNumber = 0; /* for frames from the ring */
    int ringFrames = 0;           /* published from the ring */
    setIntegerParam(MoenchRingFrames, 0);
    uint64_t framesSubmitted = 0; /* handed to the copying threads */
    bool sourceEnded = false; /* the source failed or the replayed run ended */
    bool endOfRun = false;
    epicsTimeStamp due;
    epicsTimeGetCurrent(&due);
    epicsTimeStamp lastParamCallbacks = due;
    epicsSnprintf(endMessage, sizeof(endMessage), "Acquisition complete");

    for (;;) {
        if (stopRequested()) {
            outcome = Stopped;
            break;
        }

        /* Make frames and take the next one copied without the lock:
         * this is the slow part. The threads copy frames in parallel;
         * they are published here in the order made, those copied
         * already together under one lock, which the plugins' queue
         * bookkeeping (NumQueuedArrays) competes for at every frame. */
        const bool ringFull = settings.frameRing > 0 &&
                              ring.size() == settings.frameRing;
        unlock();
        if (!sourceEnded && !ringFull) {
            rc = submitFrames(settings, continuous ? UINT64_MAX : framesToTake,
                              &framesSubmitted, &endOfRun, message);
            sourceEnded = rc != CC_OK || endOfRun;
        }
        /* Frames made before the source ended are published first. */
        size_t taken = filler_.inFlight() > 0
                           ? filler_.takeFilled(&frames[0], frames.size())
                           : 0;
        lock();
        const bool fromRing = taken == 0 && ringFull;
        if (fromRing) {
            taken = frames.size();
            if (!continuous && framesToTake - framesTaken < taken)
                taken = (size_t)(framesToTake - framesTaken);
        }

        if (taken == 0 && rc != CC_OK) {
            outcome = Failed;
            break;
        }
        if (taken == 0) {
            epicsSnprintf(endMessage, sizeof(endMessage),
                          "Replay complete: end of the run after %llu frames",
                          (unsigned long long)framesTaken);
            break;
        }
        if (!rawNotice_.empty()) {
            setStringParam(ADStatusMessage, rawNotice_.c_str());
            rawNotice_.clear();
        }
        size_t published = 0;
        while (published < taken && outcome == Completed) {
            MoenchFrameFiller::Frame frame = frames[published++];
            if (fromRing) {
                /* Its array is looked at only now: a plugin may still
                 * hold it, and then the frame is lost, as a receiver
                 * whose buffers are all in use loses one. */
                NDArray *pArray = ring[dataFrames % ring.size()];
                frame.array = pArray->getReferenceCount() > 1 ? NULL : pArray;
                frame.tag = nextFrameNumber;
                if (frame.array)
                    ringFrames++;
            }
            publishFrame(frame, settings);
            nextFrameNumber = frame.tag + 1;
            const bool dark = isDarkFrame(frame.tag, settings);
            if (!dark)
                dataFrames++;
            if (!fromRing && frame.array) {
                if (ring.size() < settings.frameRing && !dark)
                    /* the ring keeps this reference */
                    ring.push_back(frame.array);
                else
                    frame.array->release();
            }
            framesTaken++;
            /* The schedule holds frame by frame, also within a group. */
            if (!(!continuous && framesTaken >= framesToTake) &&
                !waitForNextFrame(&due))
                outcome = Stopped;
        }
        /* Frames taken but not published (a stop) go back to the pool. */
        for (; !fromRing && published < taken; published++)
            if (frames[published].array)
                frames[published].array->release();

        epicsTimeStamp now;
        epicsTimeGetCurrent(&now);
        if (epicsTimeDiffInSeconds(&now, &lastParamCallbacks) >=
            paramCallbackSeconds) {
            setIntegerParam(MoenchRingFrames, ringFrames);
            callParamCallbacks();
            lastParamCallbacks = now;
        }
        if (outcome != Completed)
            break;
        if (!continuous && framesTaken >= framesToTake)
            break;
    }

    setIntegerParam(MoenchRingFrames, ringFrames);
    unlock();
    for (size_t k = 0; k < ring.size(); k++)
        ring[k]->release();
    closeSource();
    lock();

    if (outcome == Failed) {
        finishWithError(message);
    } else if (outcome == Stopped) {
        /* Acquire is already 0, or 1 again for a new acquisition that is
         * signalled: leave it to writeInt32. */
        setIntegerParam(ADStatus, continuous ? ADStatusIdle : ADStatusAborted);
        setStringParam(ADStatusMessage, "Acquisition stopped");
        callParamCallbacks();
    } else {
        setIntegerParam(ADStatus, ADStatusIdle);
        setStringParam(ADStatusMessage, endMessage);
        setIntegerParam(ADAcquire, 0);
        callParamCallbacks();
    }
}

/** Called when asyn clients call pasynInt32->write().
  * Starts and stops acquisition, keeps the data type UInt16 and the colour
  * mode mono, and clamps the frame size and the extra parameters.
  * \param[in] pasynUser pasynUser structure that encodes the reason and address.
  * \param[in] value Value to write. */
asynStatus ADMoenchSim::writeInt32(asynUser *pasynUser, epicsInt32 value)
{
    int function = pasynUser->reason;
    asynStatus status = asynSuccess;
    const char *functionName = "writeInt32";

    if (function == ADAcquire) {
        int acquiring;
        getIntegerParam(ADAcquire, &acquiring);
        status = ADDriver::writeInt32(pasynUser, value);
        if (value && !acquiring) {
            setIntegerParam(ADStatus, ADStatusAcquire);
            setStringParam(ADStatusMessage, "Acquiring data");
            epicsEventSignal(startEvent_);
        } else if (!value && acquiring) {
            stopPending_ = true;
            epicsEventSignal(stopEvent_);
        }
    } else if (function == NDDataType || function == NDColorMode) {
        int fixed = function == NDDataType ? (int)NDUInt16
                                           : (int)NDColorModeMono;
        setIntegerParam(function, fixed);
        if (value != fixed) {
            epicsSnprintf(pasynUser->errorMessage, pasynUser->errorMessageSize,
                          "%s: MOENCH frames are %s only", driverName,
                          function == NDDataType ? "UInt16" : "Mono");
            status = asynError;
        }
    } else if (function == ADSizeX || function == ADSizeY) {
        int maxSize;
        getIntegerParam(function == ADSizeX ? ADMaxSizeX : ADMaxSizeY,
                        &maxSize);
        status = ADDriver::writeInt32(pasynUser, clampInt(value, 1, maxSize));
    } else if (function == MoenchDarkFrames || function == MoenchCycleFrames) {
        setIntegerParam(function, value < 0 ? 0 : value);
    } else if (function == MoenchSourceThreads) {
        setIntegerParam(function,
                        clampInt(value, 1, ADMOENCHSIM_MAX_SOURCE_THREADS));
    } else if (function == MoenchFrameRing) {
        setIntegerParam(function,
                        clampInt(value, 0, ADMOENCHSIM_MAX_FRAME_RING));
    } else if (function == MoenchSource) {
        if (value == ADMoenchSourceSimulated ||
            value == ADMoenchSourceRawFile) {
            setIntegerParam(function, value);
        } else {
            epicsSnprintf(pasynUser->errorMessage, pasynUser->errorMessageSize,
                          "%s: unknown MoenchSource %d", driverName, value);
            status = asynError;
        }
    } else if (function == MoenchRawChip) {
        if (value >= CC_RAW_CHIP_UNSAID && value <= CC_RAW_CHIP_MOENCH04) {
            setIntegerParam(function, value);
        } else {
            epicsSnprintf(pasynUser->errorMessage, pasynUser->errorMessageSize,
                          "%s: unknown MoenchRawChip %d", driverName, value);
            status = asynError;
        }
    } else if (function < FIRST_MOENCH_PARAM) {
        status = ADDriver::writeInt32(pasynUser, value);
    } else {
        setIntegerParam(function, value);
    }

    callParamCallbacks();

    if (status)
        asynPrint(pasynUser, ASYN_TRACE_ERROR,
                  "%s:%s: error, status=%d function=%d, value=%d\n", driverName,
                  functionName, status, function, value);
    else
        asynPrint(pasynUser, ASYN_TRACEIO_DRIVER,
                  "%s:%s: function=%d, value=%d\n", driverName, functionName,
                  function, value);
    return status;
}

/** Report status of the driver.
  * \param[in] fp File pointer passed by caller where the output is written to.
  * \param[in] details If >0 then ADDriver::report() is also called. */
void ADMoenchSim::report(FILE *fp, int details)
{
    int source, sizeX, sizeY, sourceThreads;
    getIntegerParam(MoenchSource, &source);
    getIntegerParam(ADSizeX, &sizeX);
    getIntegerParam(ADSizeY, &sizeY);
    getIntegerParam(MoenchSourceThreads, &sourceThreads);
    fprintf(fp, "MOENCH simulator %s, libclustercore %s\n", this->portName,
            cc_version());
    fprintf(
        fp,
        "  Source: %s, frame size %d x %d, %d copying threads, frames dropped (pool full): %lu\n",
        source == ADMoenchSourceRawFile ? "raw file replay" : "simulated",
        sizeX, sizeY, sourceThreads, droppedFrames_);
    if (details > 0)
        ADDriver::report(fp, details);
}

/** Configuration command, called directly or from iocsh. */
extern "C" int ADMoenchSimConfig(const char *portName, int maxSizeX,
                                 int maxSizeY, int maxBuffers, int maxMemory,
                                 int priority, int stackSize)
{
    new ADMoenchSim(portName, maxSizeX, maxSizeY, maxBuffers,
                    maxMemory > 0 ? (size_t)maxMemory : 0, priority, stackSize);
    return asynSuccess;
}

/* Code for iocsh registration */
static const iocshArg ADMoenchSimConfigArg0 = {"portName", iocshArgString};
static const iocshArg ADMoenchSimConfigArg1 = {"maxSizeX", iocshArgInt};
static const iocshArg ADMoenchSimConfigArg2 = {"maxSizeY", iocshArgInt};
static const iocshArg ADMoenchSimConfigArg3 = {"maxBuffers", iocshArgInt};
static const iocshArg ADMoenchSimConfigArg4 = {"maxMemory", iocshArgInt};
static const iocshArg ADMoenchSimConfigArg5 = {"priority", iocshArgInt};
static const iocshArg ADMoenchSimConfigArg6 = {"stackSize", iocshArgInt};
static const iocshArg *const ADMoenchSimConfigArgs[] = {
    &ADMoenchSimConfigArg0, &ADMoenchSimConfigArg1, &ADMoenchSimConfigArg2,
    &ADMoenchSimConfigArg3, &ADMoenchSimConfigArg4, &ADMoenchSimConfigArg5,
    &ADMoenchSimConfigArg6};
static const iocshFuncDef ADMoenchSimConfigFuncDef = {
    "ADMoenchSimConfig", 7, ADMoenchSimConfigArgs,
    "Creates a simulated MOENCH detector port (maxSizeX/Y 1..400, 0 = 400;\n"
    "maxMemory 0 = unlimited; priority/stackSize 0 = defaults).\n"};

static void ADMoenchSimConfigCallFunc(const iocshArgBuf *args)
{
    ADMoenchSimConfig(args[0].sval, args[1].ival, args[2].ival, args[3].ival,
                      args[4].ival, args[5].ival, args[6].ival);
}

extern "C" void ADMoenchSimRegister(void)
{
    iocshRegister(&ADMoenchSimConfigFuncDef, ADMoenchSimConfigCallFunc);
}

extern "C" {
epicsExportRegistrar(ADMoenchSimRegister);
}
