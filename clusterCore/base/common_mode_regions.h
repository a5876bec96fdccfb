/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common_mode_regions.h: which common-mode region a pixel belongs to
 * (docs/spec.md §8.1) and the estimate's integer rules (§8.2), shared by
 * the host code and the backends. The includer defines CC__HD (empty in
 * C) and has <stdint.h> and <stdbool.h>.
 */
#ifndef CLUSTERCORE_COMMON_MODE_REGIONS_H
#define CLUSTERCORE_COMMON_MODE_REGIONS_H

/* A supercolumn is the 25 columns one MÖNCH03 ADC reads. */
enum { CC__SUPERCOLUMN_WIDTH = 25 };

/* The frame's geometry of regions for a mode (a cc_common_mode value). */
struct cc__regions {
    int mode;
    uint32_t rows, cols;
    uint32_t count;        /* regions; 0 for none */
    uint32_t supercolumns; /* a half's supercolumns */
};

static inline CC__HD struct cc__regions cc__regions_of(int mode, uint32_t rows,
                                                       uint32_t cols)
{
    struct cc__regions r = {mode, rows, cols, 0,
                            (cols + CC__SUPERCOLUMN_WIDTH - 1) /
                                CC__SUPERCOLUMN_WIDTH};
    r.count = mode == 1   ? 2 * r.supercolumns
              : mode == 2 ? rows
              : mode == 3 ? 2
                          : 0;
    return r;
}

/* The region of a pixel; the top half is rows [0, rows / 2). */
static inline CC__HD uint32_t cc__region_of(const struct cc__regions *r,
                                            uint32_t row, uint32_t col)
{
    uint32_t bottom = row >= r->rows / 2;
    if (r->mode == 1)
        return bottom * r->supercolumns + col / CC__SUPERCOLUMN_WIDTH;
    return r->mode == 2 ? row : bottom;
}

/* The first column past col's run of columns in the same region. */
static inline CC__HD uint32_t cc__region_run_end(const struct cc__regions *r,
                                                 uint32_t col)
{
    if (r->mode != 1)
        return r->cols;
    uint32_t end = (col / CC__SUPERCOLUMN_WIDTH + 1) * CC__SUPERCOLUMN_WIDTH;
    return end < r->cols ? end : r->cols;
}

/* Region `region` as the rectangle [row0, row1) x [col0, col1). */
static inline CC__HD void cc__region_rectangle(const struct cc__regions *r,
                                               uint32_t region, uint32_t *row0,
                                               uint32_t *row1, uint32_t *col0,
                                               uint32_t *col1)
{
    uint32_t half = r->rows / 2;
    if (r->mode == 2) {
        *row0 = region, *row1 = region + 1, *col0 = 0, *col1 = r->cols;
        return;
    }
    uint32_t bottom = r->mode == 1 ? region / r->supercolumns : region;
    *row0 = bottom ? half : 0;
    *row1 = bottom ? r->rows : half;
    *col0 = 0, *col1 = r->cols;
    if (r->mode == 1) {
        *col0 = region % r->supercolumns * CC__SUPERCOLUMN_WIDTH;
        *col1 = *col0 + CC__SUPERCOLUMN_WIDTH < r->cols
                    ? *col0 + CC__SUPERCOLUMN_WIDTH
                    : r->cols;
    }
}

/* docs/spec.md §8.2: the centre the quiet pixels are looked around is a
 * median over whole ADU in [-CC__CENTRE_RANGE, CC__CENTRE_RANGE]. */
enum { CC__CENTRE_RANGE = 1024, CC__CENTRE_BINS = 2 * CC__CENTRE_RANGE + 1 };
static inline CC__HD uint32_t cc__centre_bin(int32_t value)
{
    return value < -CC__CENTRE_RANGE  ? 0
           : value > CC__CENTRE_RANGE ? CC__CENTRE_BINS - 1
                                      : (uint32_t)(value + CC__CENTRE_RANGE);
}

/* docs/spec.md §8.2: a region is estimated when at least a quarter of its
 * unmasked pixels, and at least one, are quiet. */
static inline CC__HD bool cc__common_mode_enough(uint64_t quiet,
                                                 uint64_t unmasked)
{
    return quiet > 0 && 4 * quiet >= unmasked;
}

#endif
