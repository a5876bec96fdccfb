/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * finder.h: the front end (clusterCore/finder/), above every other
 * folder: the finder's state and what its files share.
 */
#ifndef CLUSTERCORE_FINDER_H
#define CLUSTERCORE_FINDER_H

#include "../analysis/analysis.h"
#include "../cpu/cpu.h"
#include "../cuda/backend.h"
#include "../files/files.h"

/* Adds sums and frames taken with cc_finder_take_analog back into the
 * finder's analog image, which must be on (finder.c): a write that failed
 * loses nothing. */
void cc__finder_return_analog(cc_finder *finder, const double *sums,
                              uint64_t frames);

/* The same for a finder: CC_ESTATE unless it runs on CUDA. */
int cc__finder_tune_cuda(cc_finder *finder,
                         const struct cc__cuda_tuning *tuning);

#endif /* CLUSTERCORE_FINDER_H */
