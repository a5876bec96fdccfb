/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_layout.c: the orders in which MÖNCH runs hold a frame's pixels, and
 * the pixel maps that put the ADC orders in rows (docs/spec.md §5.2).
 *
 * A MÖNCH frame read out by the chip test board, or by the receivers of
 * its time, is 5000 analog samples of 32 ADCs: value p = 32 s + a is
 * sample s of ADC a. Each ADC reads a supercolumn of 25 columns x 200
 * rows, half of the chip, from the middle rows outwards: sample s is
 * column s mod 25 of the supercolumn, s div 25 rows from the middle.
 * The chips differ only in which supercolumn each ADC reads.
 */
#include <stdlib.h>

#include "files.h"
#include "raw.h"

static const char *const layout_names[] = {
    [CC_RAW_LAYOUT_ROWS] = "rows",
    [CC_RAW_LAYOUT_MOENCH03_OLD] = "moench03-old",
    [CC_RAW_LAYOUT_CTB_MOENCH03] = "ctb-moench03",
    [CC_RAW_LAYOUT_CTB_MOENCH04] = "ctb-moench04",
};
enum { LAYOUTS = sizeof layout_names / sizeof *layout_names };

const char *cc_raw_layout_name(cc_raw_layout layout)
{
    return (unsigned)layout < LAYOUTS ? layout_names[layout] : NULL;
}

bool cc__raw_layout_is_adc(cc_raw_layout layout)
{
    return layout == CC_RAW_LAYOUT_MOENCH03_OLD ||
           layout == CC_RAW_LAYOUT_CTB_MOENCH03 ||
           layout == CC_RAW_LAYOUT_CTB_MOENCH04;
}

enum { SUPERCOLUMN = 25, HALF = CC_RAW_ADC_SIDE / 2 };

/* The first column of the supercolumn that ADC a reads, and whether it
 * reads the top half (rows 199 down to 0) or the bottom (200 up to 399). */
static void moench03_adc(uint32_t a, uint32_t *column, bool *top)
{
    /* Eight ADCs a quarter of the chip, right to left; in each, ADCs
     * 0-3 read the top half and 4-7 the bottom, left to right. */
    *column = (3 - a / 8) * 100 + (a % 4) * SUPERCOLUMN;
    *top = (a / 4) % 2 == 0;
}

static void moench04_adc(uint32_t a, uint32_t *column, bool *top)
{
    /* The board's wiring: the supercolumn of each ADC, its number mod
     * 16; ADCs 0-15 read the top half, 16-31 the bottom. */
    static const uint8_t supercolumn[CC_RAW_ADCS] = {9,  8,  11, 10, 13, 12, 15,
                                                     14, 1,  0,  3,  2,  5,  4,
                                                     7,  6,  7,  6,  5,  4,  3,
                                                     2,  1,  0,  15, 14, 13, 12,
                                                     11, 10, 9,  8};
    *column = supercolumn[a] * SUPERCOLUMN;
    *top = a < 16;
}

int cc__raw_layout_map(cc_raw_layout layout, uint32_t *map)
{
    void (*adc)(uint32_t, uint32_t *,
                bool *) = layout == CC_RAW_LAYOUT_CTB_MOENCH04 ? moench04_adc
                          : cc__raw_layout_is_adc(layout)      ? moench03_adc
                                                               : NULL;
    if (adc == NULL)
        return CC_EINVAL;
    for (uint32_t a = 0; a < CC_RAW_ADCS; a++) {
        uint32_t first;
        bool top;
        adc(a, &first, &top);
        for (uint32_t s = 0; s < CC_RAW_ADC_SAMPLES; s++) {
            uint32_t away = s / SUPERCOLUMN; /* rows from the middle */
            uint32_t row = top ? HALF - 1 - away : HALF + away;
            uint32_t col = first + s % SUPERCOLUMN;
            map[row * CC_RAW_ADC_SIDE + col] = s * CC_RAW_ADCS + a;
        }
    }
    return CC_OK;
}

int cc__raw_layout_buffers(cc_raw_layout layout, uint32_t **map,
                           uint16_t **scratch, char *message)
{
    *map = NULL;
    *scratch = NULL;
    if (!cc__raw_layout_is_adc(layout))
        return CC_OK;
    *map = malloc(CC_RAW_ADC_PIXELS * sizeof **map);
    *scratch = malloc(CC_RAW_ADC_PIXELS * sizeof **scratch);
    if (*map == NULL || *scratch == NULL)
        return cc__message(message, CC_ENOMEM, "out of memory");
    return cc__raw_layout_map(layout, *map);
}
