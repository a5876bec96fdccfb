/* hitmap.c: the count of cluster centres per pixel. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct cc_hitmap {
    uint32_t rows, cols;
    uint32_t counts[]; /* rows * cols, row-major */
};

int cc_hitmap_new(cc_hitmap **hitmap, uint32_t rows, uint32_t cols)
{
    if (hitmap == NULL)
        return CC_EINVAL;
    *hitmap = NULL;
    if (rows == 0 || cols == 0 || rows > CC_FRAME_SIDE_MAX ||
        cols > CC_FRAME_SIDE_MAX)
        return CC_EINVAL;
    cc_hitmap *made =
        calloc(1, sizeof *made + (size_t)rows * cols * sizeof(uint32_t));
    if (made == NULL)
        return CC_ENOMEM;
    made->rows = rows;
    made->cols = cols;
    *hitmap = made;
    return CC_OK;
}

void cc_hitmap_destroy(cc_hitmap *hitmap)
{
    free(hitmap);
}

int cc_hitmap_add(cc_hitmap *hitmap, const cc_clusters *clusters)
{
    if (hitmap == NULL || clusters == NULL)
        return CC_EINVAL;
    for (size_t i = 0; i < clusters->n_clusters; i++)
        if (clusters->x[i] >= hitmap->cols || clusters->y[i] >= hitmap->rows)
            return CC_EINVAL;
    for (size_t i = 0; i < clusters->n_clusters; i++) {
        uint32_t *count =
            &hitmap->counts[(size_t)clusters->y[i] * hitmap->cols +
                            clusters->x[i]];
        if (*count < UINT32_MAX)
            (*count)++;
    }
    return CC_OK;
}

void cc_hitmap_reset(cc_hitmap *hitmap)
{
    if (hitmap != NULL)
        memset(hitmap->counts, 0,
               (size_t)hitmap->rows * hitmap->cols * sizeof(uint32_t));
}

const uint32_t *cc_hitmap_counts(const cc_hitmap *hitmap)
{
    return hitmap == NULL ? NULL : hitmap->counts;
}

void cc__hitmap_size(const cc_hitmap *hitmap, uint32_t *rows, uint32_t *cols)
{
    *rows = hitmap->rows;
    *cols = hitmap->cols;
}
