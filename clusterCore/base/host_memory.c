/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * host_memory.c: page-locked host memory in builds without the CUDA
 * backend, where nothing needs it: ordinary memory, and no locking.
 */
#include <stdlib.h>

#include "base.h"

void *cc_host_alloc(size_t size)
{
    return malloc(size);
}

void cc_host_free(void *memory)
{
    free(memory);
}

int cc_host_register(void *memory, size_t size)
{
    return memory == NULL || size == 0 ? CC_EINVAL : CC_ENOTSUP;
}

int cc_host_unregister(void *memory)
{
    return memory == NULL ? CC_EINVAL : CC_ENOTSUP;
}

int cc_host_is_locked(const void *memory)
{
    (void)memory;
    return 0;
}
