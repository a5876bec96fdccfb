/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_master.c: the master file of a MÖNCH raw run (slsDetector receiver
 * versions 7.x and 8.x) and the names of its data files. Only the keys
 * that decide how to read the frames are used; each is checked, and a run
 * this reader would misread (another detector, several modules or UDP
 * interfaces, an image size that does not match the pixels) is refused.
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

#include "internal.h"
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
                           "(NAME_master_I.json)", master_path);
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
static int get_integer(const json_t *root, const char *path,
                       const char *key, bool optional, double low,
                       double high, uint64_t *value, char *message)
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

/* Fills info from the parsed master file. */
static int read_keys(const json_t *root, const char *path, cc_raw_info *info,
                     char *message)
{
    const json_t *version = json_object_get(root, "Version");
    if (!json_is_number(version))
        return cc__message(message, CC_EFORMAT,
                           "%s has no numeric \"Version\"", path);
    double number = json_number_value(version);
    if (!(number >= 7 && number < 9))
        return cc__message(message, CC_ENOTSUP,
                           "%s is version %g; this reader knows 7.x and 8.x",
                           path, number);
    info->version = number;
    const char *type = json_string_value(json_object_get(root, "Detector Type"));
    if (type == NULL || strcmp(type, "Moench") != 0)
        return cc__message(message, CC_ENOTSUP,
                           "%s is not a MÖNCH run (\"Detector Type\" is %s%s%s)",
                           path, type ? "\"" : "", type ? type : "missing",
                           type ? "\"" : "");
    uint64_t x, y, image = 0, max_per_file = 0, frames = 0, padding = 1,
                   interfaces = 1;
    int rc = get_integer(root, path, "Number of UDP Interfaces", true, 1,
                         CC_RAW_INTERFACES_MAX, &interfaces, message);
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
    if (rc == CC_OK)
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
                           "of 16 bits take %llu", path, image_key,
                           (unsigned long long)image, (unsigned long long)y,
                           (unsigned long long)x,
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
                           "than this reader's %u", path,
                           (unsigned long long)frames,
                           (unsigned long long)files, CC_RAW_FILES_MAX);
    info->files = (uint32_t)files;
    info->packets_per_frame =
        (uint32_t)((image + CC_RAW_PACKET_BYTES - 1) / CC_RAW_PACKET_BYTES);
    return CC_OK;
}

int cc__raw_master_parse(const char *text, size_t length, const char *path,
                         cc_raw_info *info, char *message)
{
    json_error_t error;
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &error);
    if (root == NULL)
        return cc__message(message, CC_EFORMAT,
                           "%s is not valid JSON: %s on line %d, column %d",
                           path, error.text, error.line, error.column);
    int rc = json_is_object(root)
                 ? read_keys(root, path, info, message)
                 : cc__message(message, CC_EFORMAT, "%s is not a JSON object",
                               path);
    json_decref(root);
    return rc;
}

int cc__raw_master_read(const char *path, cc_raw_info *info, char *message)
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
             : too_long   ? cc__message(message, CC_EFORMAT,
                                        "%s is over 1 MiB: not a master file",
                                        path)
                          : cc__raw_master_parse(text, length, path, info,
                                                 message);
    free(text);
    return rc;
}
