/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * host_memory.cu: page-locked host memory, for frames the GPU reads and
 * cluster lists it writes without a copy in between.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "base.h"

static void *pinned_resize(void *memory, size_t old_size, size_t new_size)
{
    void *grown = NULL;
    if (cudaHostAlloc(&grown, new_size,
                      cudaHostAllocMapped | cudaHostAllocPortable) !=
        cudaSuccess)
        return NULL;
    if (memory != NULL) {
        memcpy(grown, memory, old_size < new_size ? old_size : new_size);
        cudaFreeHost(memory);
    }
    return grown;
}

static void pinned_release(void *memory)
{
    if (memory != NULL)
        cudaFreeHost(memory);
}

extern "C" const struct cc__allocator cc__pinned_allocator = {pinned_resize,
                                                              pinned_release};

/* Whether memory came from cudaHostAlloc (else from malloc). */
static bool allocated_pinned(const void *memory)
{
    cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, memory) != cudaSuccess) {
        cudaGetLastError(); /* no GPU: it came from malloc */
        return false;
    }
    return attributes.type == cudaMemoryTypeHost;
}

void *cc_host_alloc(size_t size)
{
    void *memory = NULL;
    if (cudaHostAlloc(&memory, size, cudaHostAllocPortable) == cudaSuccess)
        return memory;
    cudaGetLastError();
    return malloc(size);
}

void cc_host_free(void *memory)
{
    if (memory == NULL)
        return;
    if (allocated_pinned(memory))
        cudaFreeHost(memory);
    else
        free(memory);
}

int cc_host_register(void *memory, size_t size)
{
    if (memory == NULL || size == 0)
        return CC_EINVAL;
    if (cudaHostRegister(memory, size, cudaHostRegisterPortable) !=
        cudaSuccess) {
        cudaGetLastError();
        return CC_EDEVICE;
    }
    return CC_OK;
}

int cc_host_unregister(void *memory)
{
    if (memory == NULL)
        return CC_EINVAL;
    if (cudaHostUnregister(memory) != cudaSuccess) {
        cudaGetLastError();
        return CC_EINVAL;
    }
    return CC_OK;
}

int cc_host_is_locked(const void *memory)
{
    return memory != NULL && allocated_pinned(memory);
}
