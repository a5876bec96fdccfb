/* SPDX-License-Identifier: BSD-3-Clause */
/* fault.cu: GPU failures planted on purpose (fault.h says which). */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "fault.h"

int cc__fault_from_environment(struct cc__fault *fault, char *message)
{
    fault->kind = CC__FAULT_NONE;
    fault->batch = 0;
    const char *text = getenv("CC_CUDA_FAULT");
    if (text == NULL || text[0] == '\0')
        return CC_OK;
    static const struct {
        const char *name;
        enum cc__fault_kind kind;
    } kinds[] = {{"copy:", CC__FAULT_COPY},
                 {"launch:", CC__FAULT_LAUNCH},
                 {"lost:", CC__FAULT_LOST}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t length = strlen(kinds[i].name);
        if (strncmp(text, kinds[i].name, length) != 0)
            continue;
        char *end;
        unsigned long long batch = strtoull(text + length, &end, 10);
        if (batch == 0 || *end != '\0' || text[length] == '-')
            break;
        fault->kind = kinds[i].kind;
        fault->batch = batch;
        return CC_OK;
    }
    return cc__message(message, CC_EINVAL,
                       "CC_CUDA_FAULT is \"%s\": give copy:BATCH, "
                       "launch:BATCH or lost:BATCH (BATCH from 1), or unset it",
                       text);
}

static __global__ void no_work(void) {}

cudaError_t cc__fault_inject(enum cc__fault_kind kind, void *device_buffer,
                             cudaStream_t stream)
{
    if (kind == CC__FAULT_COPY)
        return cudaMemcpyAsync(device_buffer, NULL, 2, cudaMemcpyHostToDevice,
                               stream);
    no_work<<<0, 1, 0, stream>>>();
    return cudaGetLastError();
}
