/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gain_file.c: gain maps from files (docs/spec.md §9.1): NumPy .npy, or
 * the 32-bit float TIFF slsDetectorCalibration writes, told apart by
 * their first bytes; gain maps and the masks of their flagged pixels to
 * .npy files.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

#ifdef CC_HAVE_TIFF
#include <tiffio.h>

/* libtiff's complaints, kept for the message instead of printed: the
 * library never prints. The first one is the one that explains. */
struct tiff_complaint {
    char text[CC_MESSAGE_SIZE];
};

static int keep_complaint(TIFF *tiff, void *user_data, const char *module,
                          const char *format, va_list arguments)
{
    (void)tiff;
    (void)module;
    struct tiff_complaint *complaint = user_data;
    if (complaint->text[0] == '\0')
        vsnprintf(complaint->text, sizeof complaint->text, format, arguments);
    return 1;
}

static int ignore_warning(TIFF *tiff, void *user_data, const char *module,
                          const char *format, va_list arguments)
{
    (void)tiff;
    (void)user_data;
    (void)module;
    (void)format;
    (void)arguments;
    return 1;
}

/* Checks the one image's layout: cols x rows samples of 32- or 64-bit
 * IEEE floats, one a pixel, in strips. Returns the bytes of a sample. */
static int tiff_layout(TIFF *tiff, const char *path, uint32_t rows,
                       uint32_t cols, size_t *sample_bytes, char *message)
{
    uint32_t width = 0, height = 0;
    uint16_t samples = 1, bits = 0, format = SAMPLEFORMAT_UINT;
    uint16_t planar = PLANARCONFIG_CONTIG;
    TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, &width);
    TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, &height);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLESPERPIXEL, &samples);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_PLANARCONFIG, &planar);
    if (width != cols || height != rows)
        return cc__message(message, CC_EMISMATCH,
                           "%s is %" PRIu32 " x %" PRIu32
                           " pixels (width x height); %" PRIu32 " x %" PRIu32
                           " is needed",
                           path, width, height, cols, rows);
    if (samples != 1 || format != SAMPLEFORMAT_IEEEFP ||
        (bits != 32 && bits != 64))
        return cc__message(message, CC_EFORMAT,
                           "%s holds %u sample(s) of %u bits, format %u, a "
                           "pixel; one 32- or 64-bit IEEE float is needed",
                           path, (unsigned)samples, (unsigned)bits,
                           (unsigned)format);
    if (TIFFIsTiled(tiff) || planar != PLANARCONFIG_CONTIG)
        return cc__message(message, CC_EFORMAT,
                           "%s is tiled or planar; a gain map is read in "
                           "strips",
                           path);
    if (TIFFReadDirectory(tiff))
        return cc__message(message, CC_EFORMAT,
                           "%s holds several images; a gain map is one", path);
    TIFFSetDirectory(tiff, 0);
    *sample_bytes = bits / 8u;
    return CC_OK;
}

static int read_tiff(const char *path, uint32_t rows, uint32_t cols,
                     double *gain, char *message)
{
    struct tiff_complaint complaint = {{0}};
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (options == NULL)
        return cc__message(message, CC_ENOMEM, "no memory to read %s", path);
    TIFFOpenOptionsSetErrorHandlerExtR(options, keep_complaint, &complaint);
    TIFFOpenOptionsSetWarningHandlerExtR(options, ignore_warning, NULL);
    TIFF *tiff = TIFFOpenExt(path, "r", options);
    TIFFOpenOptionsFree(options);
    if (tiff == NULL)
        return cc__message(message, CC_EFORMAT, "%s is not a readable TIFF: %s",
                           path, complaint.text);
    size_t sample_bytes = 0;
    int rc = tiff_layout(tiff, path, rows, cols, &sample_bytes, message);
    void *line = NULL;
    if (rc == CC_OK && (tsize_t)(cols * sample_bytes) != TIFFScanlineSize(tiff))
        rc = cc__message(message, CC_EFORMAT,
                         "%s has rows of %" PRId64 " bytes; %zu are needed",
                         path, (int64_t)TIFFScanlineSize(tiff),
                         cols * sample_bytes);
    if (rc == CC_OK && (line = malloc(cols * sample_bytes)) == NULL)
        rc = cc__message(message, CC_ENOMEM, "no memory to read %s", path);
    for (uint32_t row = 0; rc == CC_OK && row < rows; row++) {
        if (TIFFReadScanline(tiff, line, row, 0) < 0) {
            rc = cc__message(message, CC_EFORMAT,
                             "%s: row %" PRIu32 " cannot be read: %s", path,
                             row, complaint.text);
            break;
        }
        double *out = gain + (size_t)row * cols;
        for (uint32_t col = 0; col < cols; col++)
            out[col] = sample_bytes == 4 ? ((const float *)line)[col]
                                         : ((const double *)line)[col];
    }
    free(line);
    TIFFClose(tiff);
    return rc;
}
#endif

int cc_gain_map_read(const char *path, uint32_t rows, uint32_t cols,
                     double *gain, char *message)
{
    if (path == NULL || gain == NULL)
        return cc__message(message, CC_EINVAL, "path or gain is NULL");
    if (rows == 0 || cols == 0)
        return cc__message(message, CC_EINVAL,
                           "a gain map of %" PRIu32 " x %" PRIu32 " pixels",
                           rows, cols);
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return cc__message(message, CC_EIO, "cannot open %s: %s", path,
                           strerror(errno));
    unsigned char magic[4] = {0};
    size_t got = fread(magic, 1, sizeof magic, file);
    fclose(file);
    if (got >= 1 && magic[0] == 0x93)
        return cc__npy_read_reals(path, rows, cols, gain, message);
    bool tiff = got == 4 && ((memcmp(magic, "II", 2) == 0 && magic[2] == 42 &&
                              magic[3] == 0) ||
                             (memcmp(magic, "MM", 2) == 0 && magic[2] == 0 &&
                              magic[3] == 42));
    if (!tiff)
        return cc__message(message, CC_EFORMAT,
                           "%s is neither a NumPy .npy file nor a TIFF", path);
#ifdef CC_HAVE_TIFF
    return read_tiff(path, rows, cols, gain, message);
#else
    return cc__message(message, CC_ENOTSUP,
                       "%s is a TIFF, and this libclustercore was built "
                       "without libtiff: save the map as .npy, or build "
                       "with libtiff (Debian: libtiff-dev)",
                       path);
#endif
}

int cc_gain_map_write_npy(const char *path, uint32_t rows, uint32_t cols,
                          const double *gain, char *message)
{
    if (path == NULL || gain == NULL)
        return cc__message(message, CC_EINVAL, "path or gain is NULL");
    const uint64_t shape[2] = {rows, cols};
    return cc__npy_write(path, "'<f8'", 2, shape, gain,
                         (size_t)rows * cols * sizeof *gain, message);
}

int cc_mask_write_npy(const char *path, uint32_t rows, uint32_t cols,
                      const uint8_t *mask, char *message)
{
    if (path == NULL || mask == NULL)
        return cc__message(message, CC_EINVAL, "path or mask is NULL");
    size_t pixels = (size_t)rows * cols;
    for (size_t p = 0; p < pixels; p++)
        if (mask[p] > 1)
            return cc__message(message, CC_EINVAL,
                               "mask pixel %zu is %u; a mask holds 0 and 1", p,
                               (unsigned)mask[p]);
    const uint64_t shape[2] = {rows, cols};
    return cc__npy_write(path, "'|u1'", 2, shape, mask, pixels, message);
}
