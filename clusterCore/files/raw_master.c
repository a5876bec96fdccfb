/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_master.c: the master file of a MÖNCH raw run (slsDetector receiver
 * versions 7.x and 8.x, or the chip test board's) and the names of its
 * data files. Only the keys that decide how to read the frames are used;
 * each is checked, and they decide the run's layout (rows, or one of the
 * ADC orders of raw_layout.c). A run this reader would misread (another
 * detector, several modules or UDP interfaces, digital samples, an image
 * size that does not match the pixels) is refused.
 *
 * The JSON is parsed by jansson, strictly (RFC 8259, UTF-8 checked, one
 * value and nothing after it) and with duplicate keys refused: a master
 * file that parses "mostly", or says "Frames in File" twice, is the kind
 * of input that silently gives wrong frame sizes.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "raw.h"

int cc__run_name_parse(const char *master_path, struct cc__run_name *name,
                       char *message)
{
    const char *marker = NULL;
    for (const char *at = strstr(master_path, "_master_"); at != NULL;
         at = strstr(at + 1, "_master_"))
        marker = at;
    const char *index = marker == NULL ? NULL : marker + strlen("_master_");
    const char *dot = strrchr(master_path, '.');
    bool digits = index != NULL && dot != NULL && dot > index &&
                  strspn(index, "0123456789") == (size_t)(dot - index);
    if (!digits || strcmp(dot, ".json") != 0)
        return cc__message(message, CC_EINVAL,
                           "%s is not named like a master file "
                           "(NAME_master_I.json)",
                           master_path);
    name->prefix = strndup(master_path, (size_t)(marker - master_path));
    name->index = strndup(index, (size_t)(dot - index));
    if (name->prefix == NULL || name->index == NULL) {
        cc__run_name_free(name);
        return cc__message(message, CC_ENOMEM, "out of memory");
    }
    return CC_OK;
}

void cc__run_name_free(struct cc__run_name *name)
{
    free(name->prefix);
    free(name->index);
    name->prefix = name->index = NULL;
}

char *cc__run_data_path(const struct cc__run_name *name, uint32_t interface,
                        uint32_t file)
{
    size_t size = strlen(name->prefix) + strlen(name->index) + 48;
    char *path = malloc(size);
    if (path != NULL)
        snprintf(path, size, "%s_d%u_f%u_%s.raw", name->prefix,
                 (unsigned)interface, (unsigned)file, name->index);
    return path;
}

/* Reads member key of root as an integer in [low, high]. A missing key
 * leaves *value as it was when optional, and is an error otherwise. */
static int get_integer(const json_t *root, const char *path, const char *key,
                       bool optional, double low, double high, uint64_t *value,
                       char *message)
{
    const json_t *member = json_object_get(root, key);
    if (member == NULL && optional)
        return CC_OK;
    if (member == NULL)
        return cc__message(message, CC_EFORMAT, "%s has no \"%s\"", path, key);
    double number = json_number_value(member);
    if (!json_is_number(member) || number != floor(number) || number < low ||
        number > high)
        return cc__message(message, CC_EFORMAT,
                           "%s: \"%s\" must be a whole number in %.0f..%.0f",
                           path, key, low, high);
    *value = (uint64_t)number;
    return CC_OK;
}

/* Reads {"x": X, "y": Y} under key. */
static int get_pair(const json_t *root, const char *path, const char *key,
                    uint64_t *x, uint64_t *y, char *message)
{
    const json_t *pair = json_object_get(root, key);
    if (!json_is_object(pair))
        return cc__message(message, CC_EFORMAT,
                           "%s has no \"%s\": {\"x\": ..., \"y\": ...}", path,
                           key);
    int rc = get_integer(pair, path, "x", false, 0, CC_FRAME_SIDE_MAX, x,
                         message);
    return rc != CC_OK ? rc
                       : get_integer(pair, path, "y", false, 0,
                                     CC_FRAME_SIDE_MAX, y, message);
}

/* Reads "ADC Mask": a number (8.x) or a string of hex digits (7.x). */
static int get_adc_mask(const json_t *root, const char *path, uint64_t *mask,
                        char *message)
{
    const json_t *member = json_object_get(root, "ADC Mask");
    if (member == NULL)
        return CC_OK;
    const char *text = json_string_value(member);
    if (text != NULL) {
        char *end;
        errno = 0;
        unsigned long long value = strtoull(text, &end, 16);
        if (errno == 0 && end != text && *end == '\0' && text[0] != '-' &&
            value <= 0xffffffffull) {
            *mask = value;
            return CC_OK;
        }
        return cc__message(message, CC_EFORMAT,
                           "%s: \"ADC Mask\" must be 32 bits, as a number or "
                           "in hexadecimal",
                           path);
    }
    return get_integer(root, path, "ADC Mask", false, 0, 4294967295.0, mask,
                       message);
}

/* Which samples the frames hold, from the readout keys of the chip test
 * board and of MÖNCH's receivers of its time: *adc is set when they are
 * the analog samples of the 32 ADCs (an ADC-order layout), and cleared
 * for a "Moench" run in rows, which has none of these keys. What else
 * they describe (digital or transceiver samples, another number of
 * samples or of ADCs) is refused. *packet_bytes is the data bytes of a
 * UDP packet, by the link ("Ten Giga") in ADC order. */
static int read_readout(const json_t *root, const char *path, bool board,
                        bool *adc, uint64_t *packet_bytes, char *message)
{
    uint64_t analog = 2, samples = 0, digital = 0, transceiver = 0,
             mask = 0xffffffffull, ten_giga = 2;
    int rc = get_integer(root, path, "Analog Flag", true, 0, 1, &analog,
                         message);
    if (rc == CC_OK)
        rc = get_integer(root, path, "Analog Samples", true, 0, 1e9, &samples,
                         message);
    if (rc == CC_OK)
        rc = get_integer(root, path, "Digital Flag", true, 0, 1, &digital,
                         message);
    if (rc == CC_OK)
        rc = get_integer(root, path, "Transceiver Flag", true, 0, 1,
                         &transceiver, message);
    if (rc == CC_OK)
        rc = get_adc_mask(root, path, &mask, message);
    if (rc == CC_OK)
        rc = get_integer(root, path, "Ten Giga", true, 0, 1, &ten_giga,
                         message);
    if (rc != CC_OK)
        return rc;
    if (digital == 1 || transceiver == 1)
        return cc__message(message, CC_ENOTSUP,
                           "%s: the frames hold %s samples (\"%s Flag\" is "
                           "1); this reader reads MÖNCH's analog samples "
                           "only",
                           path, digital ? "digital" : "transceiver",
                           digital ? "Digital" : "Transceiver");
    bool has_samples = json_object_get(root, "Analog Samples") != NULL;
    /* MÖNCH's receivers of the chip test board's time wrote "Analog
     * Samples" without a flag: the frames were analog samples (as aare
     * 2026.9.30 reads them). */
    if (analog == 2)
        analog = board ? 2 : has_samples ? 1 : 0;
    if (analog == 2)
        return cc__message(message, CC_ENOTSUP,
                           "%s: the chip test board run does not say that it "
                           "holds analog samples (no \"Analog Flag\")",
                           path);
    if (analog == 0 && (board || has_samples))
        return cc__message(message, CC_ENOTSUP,
                           "%s: the frames hold no analog samples (\"Analog "
                           "Flag\" is 0 or missing beside \"Analog "
                           "Samples\"); this reader reads MÖNCH's analog "
                           "samples only",
                           path);
    *adc = analog == 1;
    *packet_bytes = CC_RAW_PACKET_BYTES;
    if (!*adc)
        return CC_OK;
    if (!has_samples || samples != CC_RAW_ADC_SAMPLES)
        return cc__message(message, CC_ENOTSUP,
                           "%s: %s analog samples a frame; a MÖNCH frame is "
                           "%u samples of %u ADCs",
                           path,
                           has_samples ? "\"Analog Samples\" says another "
                                         "number of"
                                       : "it does not say how many",
                           CC_RAW_ADC_SAMPLES, CC_RAW_ADCS);
    if (mask != 0xffffffffull)
        return cc__message(message, CC_ENOTSUP,
                           "%s: \"ADC Mask\" is 0x%llx; a MÖNCH frame needs "
                           "all %u ADCs (0xffffffff)",
                           path, (unsigned long long)mask, CC_RAW_ADCS);
    if (ten_giga == 2)
        return cc__message(message, CC_EFORMAT,
                           "%s has no \"Ten Giga\": the link sets the "
                           "packets of a complete frame",
                           path);
    *packet_bytes = ten_giga ? CC_RAW_CTB_PACKET_BYTES_10G
                             : CC_RAW_CTB_PACKET_BYTES_1G;
    return CC_OK;
}

/* Fills info from the parsed master file. */
static int read_keys(const json_t *root, const char *path, cc_raw_chip chip,
                     cc_raw_info *info, char *message)
{
    const json_t *version = json_object_get(root, "Version");
    if (!json_is_number(version))
        return cc__message(message, CC_EFORMAT, "%s has no numeric \"Version\"",
                           path);
    double number = json_number_value(version);
    if (!(number >= 7 && number < 9))
        return cc__message(message, CC_ENOTSUP,
                           "%s is version %g; this reader knows 7.x and 8.x",
                           path, number);
    info->version = number;
    const char *type = json_string_value(
        json_object_get(root, "Detector Type"));
    bool moench = type != NULL && strcmp(type, "Moench") == 0;
    bool board = type != NULL && strcmp(type, "ChipTestBoard") == 0;
    if (!moench && !board)
        return cc__message(
            message, CC_ENOTSUP,
            "%s is not a MÖNCH run (\"Detector Type\" is %s%s%s; "
            "this reader knows \"Moench\" and \"ChipTestBoard\")",
            path, type ? "\"" : "", type ? type : "missing", type ? "\"" : "");
    if (moench && chip == CC_RAW_CHIP_MOENCH04)
        return cc__message(message, CC_EINVAL,
                           "%s is a \"Moench\" run, of MÖNCH03: MÖNCH04 is "
                           "named for chip test board runs only",
                           path);
    bool adc = false;
    uint64_t packet = CC_RAW_PACKET_BYTES;
    int rc = read_readout(root, path, board, &adc, &packet, message);
    if (rc != CC_OK)
        return rc;
    if (board && chip == CC_RAW_CHIP_UNSAID)
        return cc__message(message, CC_ENOTSUP,
                           "%s is a chip test board run, whose master file "
                           "does not say which chip was on the board: name "
                           "it, MÖNCH03 or MÖNCH04",
                           path);
    info->layout = board ? (chip == CC_RAW_CHIP_MOENCH04
                                ? CC_RAW_LAYOUT_CTB_MOENCH04
                                : CC_RAW_LAYOUT_CTB_MOENCH03)
                   : adc ? CC_RAW_LAYOUT_MOENCH03_OLD
                         : CC_RAW_LAYOUT_ROWS;
    uint64_t x, y, image = 0, max_per_file = 0, frames = 0, padding = 1,
                   interfaces = 1;
    rc = get_integer(root, path, "Number of UDP Interfaces", true, 1,
                     CC_RAW_INTERFACES_MAX, &interfaces, message);
    if (rc == CC_OK && adc && interfaces != 1)
        return cc__message(message, CC_ENOTSUP,
                           "%s: %llu UDP interfaces in the ADC order of %s; "
                           "this reader knows one",
                           path, (unsigned long long)interfaces,
                           cc_raw_layout_name(info->layout));
    /* The receiver counts each interface's half of a module as a row of
     * the geometry. */
    if (rc == CC_OK)
        rc = get_pair(root, path, "Geometry", &x, &y, message);
    if (rc == CC_OK && (x != 1 || y != interfaces))
        return cc__message(message, CC_ENOTSUP,
                           "%s has a geometry of %llu x %llu parts with %llu "
                           "UDP interface%s; this reader reads one module",
                           path, (unsigned long long)x, (unsigned long long)y,
                           (unsigned long long)interfaces,
                           interfaces == 1 ? "" : "s");
    /* In ADC order the frame is the chip's, whatever "Pixels" says (the
     * chip test board counts channels and samples there). */
    x = y = CC_RAW_ADC_SIDE;
    if (rc == CC_OK && !adc)
        rc = get_pair(root, path, "Pixels", &x, &y, message);
    if (rc == CC_OK && (x == 0 || y == 0))
        return cc__message(message, CC_EFORMAT, "%s has no pixels", path);
    const char *image_key = info->version < 8 ? "Image Size in bytes"
                                              : "Image Size";
    if (rc == CC_OK)
        rc = get_integer(root, path, image_key, false, 1, 1e12, &image,
                         message);
    if (rc == CC_OK && image != x * y * 2)
        return cc__message(message, CC_EFORMAT,
                           "%s: \"%s\" is %llu bytes, but %llu x %llu pixels "
                           "of 16 bits take %llu",
                           path, image_key, (unsigned long long)image,
                           (unsigned long long)y, (unsigned long long)x,
                           (unsigned long long)(x * y * 2));
    if (rc == CC_OK)
        rc = get_integer(root, path, "Max Frames Per File", false, 0,
                         4294967295.0, &max_per_file, message);
    if (rc == CC_OK)
        rc = get_integer(root, path, "Frames in File", false, 0, 1e15, &frames,
                         message);
    info->total_frames = frames;
    if (rc == CC_OK)
        rc = get_integer(root, path, "Total Frames", true, 0, 1e15,
                         &info->total_frames, message);
    if (rc == CC_OK)
        rc = get_integer(root, path, "Frame Padding", true, 0, 1, &padding,
                         message);
    if (rc != CC_OK)
        return rc;
    if (y * interfaces > CC_FRAME_SIDE_MAX)
        return cc__message(message, CC_EFORMAT, "%s has too many rows", path);
    info->rows = (uint32_t)(y * interfaces);
    info->cols = (uint32_t)x;
    info->interfaces = (uint32_t)interfaces;
    info->image_bytes = image;
    info->frames = frames;
    info->max_frames_per_file = (uint32_t)max_per_file;
    info->frame_padding = (uint32_t)padding;
    /* 0 frames per file means the receiver never split the run. */
    uint64_t per_file = max_per_file == 0 ? frames : max_per_file;
    uint64_t files = per_file == 0 ? 0 : (frames + per_file - 1) / per_file;
    /* Each announced file is looked for when read: a bound keeps a
     * hostile count from making the reader try billions of names. */
    if (files > CC_RAW_FILES_MAX)
        return cc__message(message, CC_EFORMAT,
                           "%s spreads its %llu frames over %llu files, more "
                           "than this reader's %u",
                           path, (unsigned long long)frames,
                           (unsigned long long)files, CC_RAW_FILES_MAX);
    info->files = (uint32_t)files;
    info->packets_per_frame = (uint32_t)((image + packet - 1) / packet);
    return CC_OK;
}

int cc__raw_master_parse(const char *text, size_t length, const char *path,
                         cc_raw_chip chip, cc_raw_info *info, char *message)
{
    json_error_t error;
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &error);
    if (root == NULL)
        return cc__message(message, CC_EFORMAT,
                           "%s is not valid JSON: %s on line %d, column %d",
                           path, error.text, error.line, error.column);
    int rc = json_is_object(root)
                 ? read_keys(root, path, chip, info, message)
                 : cc__message(message, CC_EFORMAT, "%s is not a JSON object",
                               path);
    json_decref(root);
    return rc;
}

int cc__raw_master_read(const char *path, cc_raw_chip chip, cc_raw_info *info,
                        char *message)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return cc__message(message, CC_EIO, "cannot open %s: %s", path,
                           strerror(errno));
    enum { master_max = 1 << 20 }; /* real ones are a few kilobytes */
    char *text = malloc(master_max);
    size_t length = text == NULL ? 0 : fread(text, 1, master_max, file);
    bool too_long = text != NULL && length == master_max;
    fclose(file);
    int rc = text == NULL ? cc__message(message, CC_ENOMEM, "out of memory")
             : too_long
                 ? cc__message(message, CC_EFORMAT,
                               "%s is over 1 MiB: not a master file", path)
                 : cc__raw_master_parse(text, length, path, chip, info,
                                        message);
    free(text);
    return rc;
}
