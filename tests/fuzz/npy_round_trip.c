/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * npy_round_trip.c: the .npy writer and reader together. The first two
 * bytes give a shape (1..32 rows, 1..32 columns), the rest the array's
 * bytes (repeated to fill it); what is written reads back the same, and
 * not as an array of another shape.
 */
#include <string.h>

#include "files/files.h"
#include "targets.h"

void fuzz_npy_round_trip(const uint8_t *data, size_t size)
{
    if (size < 3)
        return;
    uint32_t rows = 1 + data[0] % 32u, cols = 1 + data[1] % 32u;
    static uint8_t array[32 * 32], back[32 * 32];
    size_t n = (size_t)rows * cols;
    for (size_t i = 0; i < n; i++)
        array[i] = data[2 + i % (size - 2)];
    const char *path = fuzz_scratch_file("array.npy", "", 0);
    const uint64_t shape[2] = {rows, cols};
    char message[CC_MESSAGE_SIZE];
    FUZZ_REQUIRE(cc__npy_write(path, "'|u1'", 2, shape, array, n, message) ==
                 CC_OK);
    FUZZ_REQUIRE(cc__npy_read_bytes(path, rows, cols, back, message) == CC_OK);
    FUZZ_REQUIRE(memcmp(array, back, n) == 0);
    FUZZ_REQUIRE(cc__npy_read_bytes(path, cols, rows + 1, back, message) ==
                 CC_EMISMATCH);
}
