/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAPinnedArrays.cpp: the iocsh command that makes every
 * NDArrayPool of the IOC allocate its frame buffers page-locked, so that
 * the CUDA backend copies frames to the GPU straight from the driver's
 * arrays instead of through its staging buffer.
 *
 * ADCore (R3-13 and later) lets an IOC replace the functions every pool
 * allocates and frees frame buffers with. The pools keep their buffers and
 * reuse them, so a buffer allocated before the command stays ordinary
 * memory for as long as its pool keeps it: the command belongs before the
 * first array is allocated, at the top of st.cmd. Without a usable GPU
 * cc_host_alloc returns ordinary memory, so the command is harmless there.
 *
 * The other way, locking the driver's buffers with cc_host_register as
 * they reach the plugin, is not safe with NDArrayPool: a pool frees a
 * buffer (too large for the next request, or over its maxMemory) without
 * telling the plugins, the registration outlives the memory, and the next
 * malloc at that address would be copied by DMA from pages that are no
 * longer there. docs/ioc-reference.md, "Page-locked NDArrays", says more.
 */
#include <stdio.h>
#include <stdlib.h>

/* interruptAccept; the typed record support table keeps dbBase.h quiet. */
#define USE_TYPED_RSET
#include <dbAccessDefs.h>
#include <epicsExport.h>
#include <iocsh.h>

#include "NDArray.h"
#include "clustercore.h"

static const char *commandName = "NDClusterCUDAPinnedArrays";

/* Whether the pools allocate with cc_host_alloc now. */
static bool pinnedNow = false;

/* Why cc_host_alloc gave ordinary memory, from what registering says. */
static const char *whyNotLocked(void)
{
    static char probe[4096];
    int rc = cc_host_register(probe, sizeof probe);
    if (rc == CC_OK) {
        cc_host_unregister(probe);
        return "the GPU refused a page-locked allocation";
    }
    return rc == CC_ENOTSUP ? "libclustercore was built without CUDA"
                            : "no usable GPU";
}

extern "C" int NDClusterCUDAPinnedArrays(int enable)
{
    if (!enable) {
        /* cc_host_free frees both kinds, so buffers allocated page-locked
         * before stay safe to free. */
        if (pinnedNow)
            NDArrayPool::setDefaultFrameMemoryFunctions(malloc, cc_host_free);
        pinnedNow = false;
        printf("%s: NDArray frame buffers come from malloc\n", commandName);
        fflush(stdout);
        return 0;
    }
    NDArrayPool::setDefaultFrameMemoryFunctions(cc_host_alloc, cc_host_free);
    pinnedNow = true;
    void *test = cc_host_alloc(1 << 16);
    bool locked = test != NULL && cc_host_is_locked(test) != 0;
    cc_host_free(test);
    if (locked)
        printf("%s: NDArray frame buffers come from cc_host_alloc: "
               "page-locked (a test buffer is)\n",
               commandName);
    else
        printf("%s: NDArray frame buffers come from cc_host_alloc: "
               "ordinary memory, not page-locked (%s)\n",
               commandName, whyNotLocked());
    if (interruptAccept)
        printf("%s: called after iocInit: buffers the pools already hold "
               "stay as they were allocated\n",
               commandName);
    fflush(stdout); /* scripts read the IOC's log for this line */
    return 0;
}

static const iocshArg pinnedArg0 = {"enable", iocshArgInt};
static const iocshArg *const pinnedArgs[] = {&pinnedArg0};
static const iocshFuncDef pinnedFuncDef = {
    "NDClusterCUDAPinnedArrays", 1, pinnedArgs,
#ifdef IOCSHFUNCDEF_HAS_USAGE
    "1: every NDArrayPool allocates frame buffers page-locked (cc_host_alloc;\n"
    "ordinary memory without a GPU); 0: with malloc again. Call it before the\n"
    "first array is allocated: first thing in st.cmd.\n"
#endif
};

static void pinnedCallFunc(const iocshArgBuf *args)
{
    NDClusterCUDAPinnedArrays(args[0].ival);
}

extern "C" void NDClusterCUDAPinnedArraysRegister(void)
{
    iocshRegister(&pinnedFuncDef, pinnedCallFunc);
}

extern "C" {
epicsExportRegistrar(NDClusterCUDAPinnedArraysRegister);
}
