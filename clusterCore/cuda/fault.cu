/* SPDX-License-Identifier: BSD-3-Clause */
/* fault.cu: GPU failures planted on purpose (fault.h says which). */
#include <stdlib.h>
#include <string.h>

#include "device.h"

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
                 {"lost:", CC__FAULT_LOST},
                 {"sync:", CC__FAULT_SYNC}};
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
                       "CC_CUDA_FAULT is \"%s\": give copy:N, launch:N, "
                       "lost:N (batch N) or sync:N (replacement N), N from "
                       "1, or unset it",
                       text);
}

static __global__ void no_work(void)
{
}

cudaError_t cc__fault_inject(enum cc__fault_kind kind, void *device_buffer,
                             cudaStream_t stream)
{
    if (kind == CC__FAULT_COPY)
        return cudaMemcpyAsync(device_buffer, NULL, 2, cudaMemcpyHostToDevice,
                               stream);
    no_work<<<0, 1, 0, stream>>>();
    return cudaGetLastError();
}

/* The planted fault (fault.h): a real CUDA call made to fail. */
int cc__fault_plant(struct cc__cuda *cuda, struct slot *slot, char *message)
{
    cuda->lost = cuda->fault.kind == CC__FAULT_LOST;
    CUDA_TRY(cc__fault_inject(cuda->fault.kind, slot->frames, slot->copy),
             cuda->fault.kind == CC__FAULT_COPY
                 ? "copying frames to the GPU (planted by CC_CUDA_FAULT)"
                 : "launching the decide kernel (planted by CC_CUDA_FAULT)");
    return cc__message(message, CC_EDEVICE,
                       "CUDA: the planted fault (CC_CUDA_FAULT) did not fail");
}

cudaError_t cc__cuda_finish_work(struct cc__cuda *cuda)
{
    if (cuda->fault.kind == CC__FAULT_SYNC &&
        ++cuda->replacements == cuda->fault.batch)
        return cc__fault_inject(CC__FAULT_COPY, cuda->slots[0].frames, 0);
    return cudaDeviceSynchronize();
}
