/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDPluginClusterCUDA.cpp: the plugin NDPluginDriver sees. It makes the
 * parts (each creates its parameters), takes the arrays in and hands them
 * to the pipeline, and sends each PV write to its parameter's handler.
 * The parts' shared helpers (NDClusterCUDAPart.h) are here too; the IOC
 * shell commands are in NDClusterCUDARegister.cpp and
 * NDClusterCUDAPinnedArrays.cpp.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "NDPluginClusterCUDA.h"

static const char *driverName = "NDPluginClusterCUDA";

NDPluginClusterCUDA::NDPluginClusterCUDA(const char *portName, int queueSize,
                                         int blockingCallbacks,
                                         const char *NDArrayPort,
                                         int NDArrayAddr, int maxBuffers,
                                         size_t maxMemory, int priority,
                                         int stackSize, int outputThreads)
    /* One processing thread: the pedestal is one ordered sequence. */
    : NDPluginDriver(portName, queueSize, blockingCallbacks, NDArrayPort,
                     NDArrayAddr, NUM_ADDRESSES, maxBuffers, maxMemory,
                     asynInt32ArrayMask | asynFloat64ArrayMask |
                         asynGenericPointerMask,
                     asynInt32ArrayMask | asynFloat64ArrayMask |
                         asynGenericPointerMask,
                     ASYN_MULTIDEVICE, 1, priority, stackSize, 1),
      finder(*this), pipeline(*this, maxMemory, (unsigned)outputThreads),
      outputs(*this, maxMemory), imaging(*this), corrections(*this),
      modes(*this)
{
    setStringParam(NDPluginDriverPluginType, "NDPluginClusterCUDA");
    connectToArrayPort();
    outputs.startPublisher(portName);
    pipeline.startThreads(portName);
}

int NDPluginClusterCUDA::statusParameter()
{
    int index;
    createParameter(ClusterStatusMessageString, asynParamOctet, &index);
    setStringParam(index, "waiting for frames");
    return index;
}

void NDPluginClusterCUDA::createParameter(const char *name, asynParamType type,
                                          int *index)
{
    createParam(name, type, index);
    if (firstParameter_ < 0)
        firstParameter_ = *index;
}

void NDPluginClusterCUDA::onWrite(int index, Int32Write write)
{
    int32Writes_[index] = write;
}

void NDPluginClusterCUDA::onWrite(int index, Float64Write write)
{
    float64Writes_[index] = write;
}

void NDPluginClusterCUDA::setStatus(const char *format, ...)
{
    char message[NDCC_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    setStringParam(StatusMessage, message);
}

asynStatus NDPluginClusterCUDA::refuseWrite(asynUser *pasynUser,
                                            const char *message)
{
    setStatus("%s", message);
    callParamCallbacks();
    epicsSnprintf(pasynUser->errorMessage, pasynUser->errorMessageSize,
                  "%s: %s", driverName, message);
    return asynError;
}

void NDPluginClusterCUDA::publishArray(NDArray *array, int address)
{
    if (array == NULL)
        return;
    getTimeStamp(&array->epicsTS);
    doCallbacksGenericPointer(array, NDArrayData, address);
    array->release();
}

void NDPluginClusterCUDA::processCallbacks(NDArray *pArray)
{
    if (pArray->ndims != 2 || pArray->dataType != NDUInt16) {
        beginProcessCallbacks(pArray);
        pipeline.refuseArray(pArray, "the finder takes 2-D NDUInt16 frames");
        return;
    }
    /* ProcessPlugin hands the last array published over again: it must
     * not be fed into the pedestal twice. (pPrevInputArray_ holds it, so
     * no new frame can come in that NDArray.) */
    if (pArray == pPrevInputArray_) {
        beginProcessCallbacks(pArray);
        setStatus("array %d was processed already; not fed to the pedestal "
                  "again",
                  pArray->uniqueId);
        callParamCallbacks();
        return;
    }
    pipeline.take(pArray);
}

/* A part's parameter goes through its handler, if it has one; NDPluginDriver
 * has the ones before the plugin's. */
asynStatus NDPluginClusterCUDA::writeInt32(asynUser *pasynUser,
                                           epicsInt32 value)
{
    int function = pasynUser->reason;
    if (function < firstParameter_)
        return NDPluginDriver::writeInt32(pasynUser, value);
    auto handler = int32Writes_.find(function);
    if (handler != int32Writes_.end() &&
        handler->second(pasynUser, value) != asynSuccess)
        return asynError;
    asynStatus status = setIntegerParam(function, value);
    callParamCallbacks();
    return status;
}

asynStatus NDPluginClusterCUDA::writeFloat64(asynUser *pasynUser,
                                             epicsFloat64 value)
{
    int function = pasynUser->reason;
    if (function < firstParameter_)
        return NDPluginDriver::writeFloat64(pasynUser, value);
    auto handler = float64Writes_.find(function);
    if (handler != float64Writes_.end() &&
        handler->second(pasynUser, value) != asynSuccess)
        return asynError;
    asynStatus status = setDoubleParam(function, value);
    callParamCallbacks();
    return status;
}

void formatMessage(char *message, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(message, size, format, args);
    va_end(args);
}

void appendMessage(char *message, const char *more)
{
    size_t used = strlen(message);
    if (more[0] != '\0')
        formatMessage(message + used, NDCC_MESSAGE_SIZE - used, "%s%s",
                      used > 0 ? "; " : "", more);
}

void NDClusterCUDAPart::int32Param(const char *name, int *index,
                                   epicsInt32 initial, Int32Write write)
{
    plugin_.createParameter(name, asynParamInt32, index);
    plugin_.setIntegerParam(*index, initial);
    if (write)
        plugin_.onWrite(*index, write);
}

void NDClusterCUDAPart::float64Param(const char *name, int *index,
                                     epicsFloat64 initial, Float64Write write)
{
    plugin_.createParameter(name, asynParamFloat64, index);
    plugin_.setDoubleParam(*index, initial);
    if (write)
        plugin_.onWrite(*index, write);
}

void NDClusterCUDAPart::octetParam(const char *name, int *index,
                                   const char *initial)
{
    plugin_.createParameter(name, asynParamOctet, index);
    plugin_.setStringParam(*index, initial);
}

void NDClusterCUDAPart::arrayParam(const char *name, int *index)
{
    plugin_.createParameter(name, asynParamFloat64Array, index);
}

int NDClusterCUDAPart::getInt(int index)
{
    int value = 0;
    plugin_.getIntegerParam(index, &value);
    return value;
}

double NDClusterCUDAPart::getDouble(int index)
{
    double value = 0;
    plugin_.getDoubleParam(index, &value);
    return value;
}

void NDClusterCUDAPart::getString(int index, char *value, size_t size)
{
    value[0] = '\0';
    plugin_.getStringParam(index, (int)size, value);
}

void NDClusterCUDAPart::status(const char *format, ...)
{
    char message[NDCC_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    plugin_.setStatus("%s", message);
}

asynStatus NDClusterCUDAPart::refuse(asynUser *pasynUser, const char *format,
                                     ...)
{
    char message[NDCC_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    return plugin_.refuseWrite(pasynUser, message);
}
