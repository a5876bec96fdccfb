/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * targets.h: the fuzz targets, one for each reader of outside input. A
 * target takes any bytes; it must not crash, leak, read or write out of
 * bounds or hang, and it aborts when an invariant it checks fails. The
 * same targets run under libFuzzer (libfuzzer_main.c, ./quickstart fuzz)
 * and over the committed corpus in every test run (replay_main.c).
 */
#ifndef FUZZ_TARGETS_H
#define FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "clustercore.h"

struct fuzz_target {
    const char *name;  /* the corpus folder's name */
    const char *reads; /* what the input is, in words */
    void (*run)(const uint8_t *data, size_t size);
};

/* The targets, ended by one with a NULL name. */
extern const struct fuzz_target fuzz_targets[];
/* The target called name, or NULL. */
const struct fuzz_target *fuzz_target_named(const char *name);

/* Writes size bytes to a file called name in this process's scratch
 * folder (made on first use, removed at exit); returns its path, valid
 * until the next call. */
const char *fuzz_scratch_file(const char *name, const void *data, size_t size);
/* Aborts, saying what failed, unless condition holds: a broken invariant
 * is a finding like a crash. */
#define FUZZ_REQUIRE(condition)                                                \
    ((condition) ? (void)0 : fuzz_fail(#condition, __FILE__, __LINE__))
_Noreturn void fuzz_fail(const char *what, const char *file, int line);

/* The targets themselves, one file each. */
void fuzz_raw_master(const uint8_t *data, size_t size);
void fuzz_raw_run(const uint8_t *data, size_t size);
void fuzz_pedestal_file(const uint8_t *data, size_t size);
void fuzz_eta_file(const uint8_t *data, size_t size);
void fuzz_mask_npy(const uint8_t *data, size_t size);
void fuzz_gain_map(const uint8_t *data, size_t size);
void fuzz_clust_file(const uint8_t *data, size_t size);
void fuzz_npy_round_trip(const uint8_t *data, size_t size);

/* The frame size of the targets that need a finder (pedestal, mask,
 * gain). */
enum { FUZZ_ROWS = 8, FUZZ_COLS = 16 };
/* The process's CPU finder of that size and precision, made on first use. */
cc_finder *fuzz_finder(cc_precision precision);

#endif
