/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDARegister.cpp: NDClusterCUDAConfigure, the IOC shell command
 * that makes the plugin, and its registration.
 */
#include <stdio.h>

#include <epicsExport.h>
#include <iocsh.h>

#include "NDPluginClusterCUDA.h"

static const char *driverName = "NDPluginClusterCUDA";

extern "C" int NDClusterCUDAConfigure(const char *portName, int queueSize,
                                      int blockingCallbacks,
                                      const char *NDArrayPort, int NDArrayAddr,
                                      int maxBuffers, size_t maxMemory,
                                      int priority, int stackSize,
                                      int maxThreads)
{
    int outputThreads = maxThreads < 1 ? 1 : maxThreads;
    if (outputThreads > NDPluginClusterCUDA::MAX_OUTPUT_THREADS)
        outputThreads = NDPluginClusterCUDA::MAX_OUTPUT_THREADS;
    printf("%s: %s: one thread gathers the arrays, one finds their "
           "clusters, in order (the pedestal is one ordered sequence); %d "
           "output thread%s publish%s them (maxThreads %d)\n",
           driverName, portName, outputThreads, outputThreads > 1 ? "s" : "",
           outputThreads > 1 ? "" : "es", maxThreads);
    NDPluginClusterCUDA *pPlugin = new NDPluginClusterCUDA(
        portName, queueSize, blockingCallbacks, NDArrayPort, NDArrayAddr,
        maxBuffers, maxMemory, priority, stackSize, outputThreads);
    return pPlugin->start();
}

static const iocshArg initArg0 = {"portName", iocshArgString};
static const iocshArg initArg1 = {"frame queue size", iocshArgInt};
static const iocshArg initArg2 = {"blocking callbacks", iocshArgInt};
static const iocshArg initArg3 = {"NDArrayPort", iocshArgString};
static const iocshArg initArg4 = {"NDArrayAddr", iocshArgInt};
static const iocshArg initArg5 = {"maxBuffers", iocshArgInt};
static const iocshArg initArg6 = {"maxMemory", iocshArgInt};
static const iocshArg initArg7 = {"priority", iocshArgInt};
static const iocshArg initArg8 = {"stackSize", iocshArgInt};
static const iocshArg initArg9 = {"maxThreads", iocshArgInt};
static const iocshArg *const initArgs[] = {&initArg0, &initArg1, &initArg2,
                                           &initArg3, &initArg4, &initArg5,
                                           &initArg6, &initArg7, &initArg8,
                                           &initArg9};
static const iocshFuncDef initFuncDef = {
    "NDClusterCUDAConfigure", 10, initArgs,
#ifdef IOCSHFUNCDEF_HAS_USAGE
    "Creates an NDPluginClusterCUDA plugin: photon clusters from MÖNCH "
    "frames on address 0, the hit map on address 1. One thread gathers the "
    "arrays, one finds their clusters in order; maxThreads (1 to 8) output "
    "threads publish them.\n"
#endif
};
static void initCallFunc(const iocshArgBuf *args)
{
    NDClusterCUDAConfigure(args[0].sval, args[1].ival, args[2].ival,
                           args[3].sval, args[4].ival, args[5].ival,
                           (size_t)args[6].ival, args[7].ival, args[8].ival,
                           args[9].ival);
}

extern "C" void NDClusterCUDARegister(void)
{
    iocshRegister(&initFuncDef, initCallFunc);
}

extern "C" {
epicsExportRegistrar(NDClusterCUDARegister);
}
