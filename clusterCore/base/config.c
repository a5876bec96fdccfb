/* SPDX-License-Identifier: BSD-3-Clause */
/* config.c: default settings, their validation, and the names of their
 * values (common mode, gain unit). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "base.h"

void cc_config_init(cc_config *config)
{
    if (config == NULL)
        return;
    *config = (cc_config){
        .rows = 0,
        .cols = 0,
        .cluster_size_x = 3,
        .cluster_size_y = 3,
        .nsigma = 5.0,
        .pedestal_frames = 1000,
        .adc_mask = 0x3FFF,
        .precision = CC_PRECISION_FLOAT,
        .backend = CC_BACKEND_AUTO,
        .threads = 1,
        .max_clusters = 0,
        .streams = 2,
        .mask_rms_factor = 0,
        .common_mode = CC_COMMON_MODE_NONE,
    };
}

static const char *const common_mode_names[] = {"none", "supercolumn", "row",
                                                "half"};
enum { COMMON_MODES = sizeof common_mode_names / sizeof *common_mode_names };

const char *cc_common_mode_name(cc_common_mode mode)
{
    return (unsigned)mode < COMMON_MODES ? common_mode_names[mode] : NULL;
}

int cc_common_mode_parse(const char *name, cc_common_mode *mode, char *message)
{
    for (unsigned m = 0; name != NULL && m < COMMON_MODES; m++)
        if (strcmp(name, common_mode_names[m]) == 0) {
            *mode = (cc_common_mode)m;
            return CC_OK;
        }
    return cc__message(message, CC_EINVAL,
                       "unknown common mode '%s': none, supercolumn, row or "
                       "half",
                       name != NULL ? name : "(null)");
}

static const char *const gain_unit_names[] = {"relative", "adu-per-kev"};
enum { GAIN_UNITS = sizeof gain_unit_names / sizeof gain_unit_names[0] };

const char *cc_gain_unit_name(cc_gain_unit unit)
{
    return (unsigned)unit < GAIN_UNITS ? gain_unit_names[unit] : NULL;
}

int cc_gain_unit_parse(const char *name, cc_gain_unit *unit, char *message)
{
    for (unsigned u = 0; name != NULL && u < GAIN_UNITS; u++)
        if (strcmp(name, gain_unit_names[u]) == 0) {
            *unit = (cc_gain_unit)u;
            return CC_OK;
        }
    return cc__message(message, CC_EINVAL,
                       "unknown gain unit '%s': relative or adu-per-kev",
                       name != NULL ? name : "(null)");
}

uint32_t cc_common_mode_regions(const cc_config *config)
{
    return config == NULL || cc_common_mode_name(config->common_mode) == NULL
               ? 0
               : cc__regions_of((int)config->common_mode, config->rows,
                                config->cols)
                     .count;
}

int cc_common_mode_region_map(const cc_config *config, uint32_t *region)
{
    if (region == NULL || cc_config_check(config, NULL) != CC_OK ||
        config->common_mode == CC_COMMON_MODE_NONE)
        return CC_EINVAL;
    struct cc__regions regions = cc__regions_of((int)config->common_mode,
                                                config->rows, config->cols);
    for (uint32_t row = 0; row < config->rows; row++)
        for (uint32_t col = 0; col < config->cols; col++)
            *region++ = cc__region_of(&regions, row, col);
    return CC_OK;
}

int cc_config_check(const cc_config *config, char *message)
{
    if (config == NULL)
        return cc__message(message, CC_EINVAL, "config is NULL");
    if (config->rows == 0 || config->rows > CC_FRAME_SIDE_MAX ||
        config->cols == 0 || config->cols > CC_FRAME_SIDE_MAX)
        return cc__message(message, CC_EINVAL,
                           "frame size %" PRIu32 " x %" PRIu32
                           " is outside 1..%u pixels a side",
                           config->rows, config->cols, CC_FRAME_SIDE_MAX);
    int rc = cc__cluster_size_check(config->cluster_size_x,
                                    config->cluster_size_y, message);
    if (rc != CC_OK)
        return rc;
    if (!(config->nsigma > 0.0) || !isfinite(config->nsigma))
        return cc__message(message, CC_EINVAL,
                           "nsigma %g must be a finite number above 0",
                           config->nsigma);
    if (config->pedestal_frames < 2 ||
        config->pedestal_frames > CC_PEDESTAL_FRAMES_MAX)
        return cc__message(message, CC_EINVAL,
                           "pedestal_frames %" PRIu32 " is outside 2..%u",
                           config->pedestal_frames, CC_PEDESTAL_FRAMES_MAX);
    if (config->adc_mask == 0)
        return cc__message(message, CC_EINVAL,
                           "adc_mask 0 would discard every bit of data");
    if (config->precision != CC_PRECISION_FLOAT &&
        config->precision != CC_PRECISION_DOUBLE)
        return cc__message(message, CC_EINVAL, "unknown precision %d",
                           (int)config->precision);
    if (config->backend != CC_BACKEND_AUTO &&
        config->backend != CC_BACKEND_CPU && config->backend != CC_BACKEND_CUDA)
        return cc__message(message, CC_EINVAL, "unknown backend %d",
                           (int)config->backend);
    if (config->threads > CC_THREADS_MAX)
        return cc__message(message, CC_EINVAL,
                           "threads %" PRIu32 " is above %u", config->threads,
                           CC_THREADS_MAX);
    if (config->streams == 0 || config->streams > CC_STREAMS_MAX)
        return cc__message(message, CC_EINVAL,
                           "streams %" PRIu32 " is outside 1..%u",
                           config->streams, CC_STREAMS_MAX);
    if (!isfinite(config->mask_rms_factor) ||
        (config->mask_rms_factor != 0 && !(config->mask_rms_factor >= 1)))
        return cc__message(message, CC_EINVAL,
                           "mask_rms_factor %g must be 0 (off) or at least 1: "
                           "below 1 it would mask most pixels",
                           config->mask_rms_factor);
    if (cc_common_mode_name(config->common_mode) == NULL)
        return cc__message(message, CC_EINVAL,
                           "unknown common mode %d: none (0), supercolumn "
                           "(1), row (2) or half (3)",
                           (int)config->common_mode);
    return CC_OK;
}

double cc__c3nsigma(const cc_config *config)
{
    return sqrt((double)(config->cluster_size_x * config->cluster_size_y)) *
           config->nsigma;
}
