/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backends.c: the backend a finder runs on: CUDA when asked for or, for
 * CC_BACKEND_AUTO, when it can; else the CPU, saying why; and the move to
 * the CPU when the GPU fails in a batch under CC_BACKEND_AUTO.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "finder.h"

/* Builds the CPU backend; note says why it runs (may be empty). */
static int open_cpu(cc_finder *finder, const char *note, char *message)
{
    int rc = cc__cpu_new(&finder->cpu, &finder->config,
                         cc__resolve_threads(finder->config.threads), message);
    if (rc != CC_OK)
        return rc;
    finder->backend = CC_BACKEND_CPU;
    unsigned threads = cc__cpu_threads(finder->cpu);
    cc__message(finder->backend_description, CC_OK, "CPU, %u thread%s%s%s%s",
                threads, threads == 1 ? "" : "s", note[0] ? " (auto: " : "",
                note, note[0] ? ")" : "");
    return CC_OK;
}

/* Chooses the backend for the finder's config and builds it: CUDA when
 * asked for or, for auto, when it can; else the CPU, saying why. */
int cc__finder_open_backend(cc_finder *finder, char *message)
{
    const cc_config *config = &finder->config;
    if (config->backend == CC_BACKEND_CPU)
        return open_cpu(finder, "", message);
#ifdef CC_HAVE_CUDA
    char why[CC_MESSAGE_SIZE] = "";
    int rc = cc__cuda_new(&finder->cuda, config, why, message);
    if (rc == CC_OK) {
        finder->backend = CC_BACKEND_CUDA;
        cc__message(finder->backend_description, CC_OK, "%s", why);
        return CC_OK;
    }
    if (config->backend == CC_BACKEND_CUDA)
        return rc;
    return open_cpu(finder, why, message);
#else
    if (config->backend == CC_BACKEND_CUDA)
        return cc__message(message, CC_ENOTSUP,
                           "the CUDA backend is not built into this "
                           "libclustercore (configure --with-cuda)");
    return open_cpu(finder, "this build has no CUDA backend", message);
#endif
}

#ifdef CC_HAVE_CUDA
/* After the GPU failed in a batch of n_frames under CC_BACKEND_AUTO: the
 * CPU takes over, with the pedestal if the GPU can still hand it back
 * (CC_OK: the caller does the batch again on the CPU, entering into the
 * image and spectra the frames that *entered, when not NULL, does not
 * mark as in them already), else from training (CC_EDEVICE). last_error
 * says which. */
int cc__finder_fall_back_to_cpu(cc_finder *finder, size_t n_frames,
                                uint8_t **entered)
{
    char failure[CC_MESSAGE_SIZE];
    cc__message(failure, CC_OK, "%s", finder->last_error);
    bool kept = cc__finder_sync_host_state(finder) == CC_OK;
    bool all_taken = finder->imaging == NULL && finder->spectra == NULL &&
                     !cc__finder_counting(finder);
    *entered = NULL;
    if (!all_taken && (*entered = malloc(n_frames)) != NULL) {
        cc__cuda_frames_entered(finder->cuda, n_frames, *entered);
        /* What could not be taken from the GPU is lost whole: the CPU
         * enters all of the batch into it. */
        uint8_t taken =
            (cc__finder_pull_gpu_image(finder) == CC_OK ? ENTERED_IN_IMAGE
                                                        : 0) |
            (cc__finder_pull_gpu_spectra(finder) == CC_OK ? ENTERED_IN_SPECTRA
                                                          : 0) |
            (cc__finder_pull_gpu_tally(finder) == CC_OK ? ENTERED_IN_TALLY : 0);
        all_taken = taken ==
                    (ENTERED_IN_IMAGE | ENTERED_IN_SPECTRA | ENTERED_IN_TALLY);
        for (size_t k = 0; k < n_frames; k++)
            (*entered)[k] = (*entered)[k] ? taken : 0;
    }
    /* The GPU's analog sums hold whole batches only, not this one: they
     * come over whole, or the image starts again. */
    bool analog_kept = cc__finder_pull_gpu_analog(finder) == CC_OK;
    if (!analog_kept) {
        memset(finder->analog->sums, 0,
               finder->pedestal.pixels * sizeof *finder->analog->sums);
        finder->analog->frames = 0;
    }
    cc__cuda_destroy(finder->cuda);
    finder->cuda = NULL;
    finder->host_state_stale = false;
    if (!kept)
        cc__pedestal_reset(&finder->pedestal, finder->config.pedestal_frames);
    char note[CC_MESSAGE_SIZE];
    cc__message(note, CC_OK, "the GPU failed: %s", failure);
    int rc = open_cpu(finder, note, finder->last_error);
    if (rc != CC_OK) { /* last_error says why; no backend is left */
        free(*entered);
        *entered = NULL;
        return rc;
    }
    cc__message(finder->last_error, CC_EDEVICE,
                "%s; switched to the CPU backend, %s%s%s", failure,
                kept ? "pedestal kept, the batch done again on the CPU"
                     : "pedestal lost: train it again",
                all_taken ? ""
                          : "; what the GPU imaged, entered into spectra or "
                            "counted since the last take is lost",
                analog_kept ? ""
                            : "; the analog image since the last take "
                              "is lost");
    if (!kept) {
        free(*entered);
        *entered = NULL;
    }
    return kept ? CC_OK : CC_EDEVICE;
}
#endif
