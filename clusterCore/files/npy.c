/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * npy.c: NumPy .npy files, the form in which beamline scientists hand
 * arrays to and from numpy.load/numpy.save: images and photon lists out,
 * bad-pixel masks in. The reader takes only what it needs (a C-ordered
 * 2-D array of bytes) and refuses anything else with a reason.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

int cc__npy_write(const char *path, const char *descr, int ndim,
                  const uint64_t *shape, const void *data, size_t size,
                  char *message)
{
    /* NPY 1.0: magic, version, a little-endian u16 header length, then a
     * Python dict literal padded with spaces and a newline so that the
     * data starts on a 64-byte boundary. */
    char header[1024];
    char dims[128] = "";
    size_t used = 0;
    for (int i = 0; i < ndim; i++)
        used += (size_t)snprintf(dims + used, sizeof dims - used,
                                 "%" PRIu64 ",%s", shape[i],
                                 i + 1 < ndim ? " " : "");
    if (ndim > 1) /* (n,) is a 1-tuple in Python, (n, m) needs no comma */
        dims[used - 1] = '\0';
    int length = snprintf(header + 10, sizeof header - 10,
                          "{'descr': %s, 'fortran_order': False, "
                          "'shape': (%s), }",
                          descr, dims);
    size_t total = 10 + (size_t)length + 1;
    size_t padded = (total + 63) / 64 * 64;
    if (length < 0 || padded > sizeof header)
        return cc__message(message, CC_EINVAL, "npy header too long");
    memcpy(header, npy_magic, 6);
    header[6] = 1;
    header[7] = 0;
    uint16_t dict_length = (uint16_t)(padded - 10);
    memcpy(header + 8, &dict_length, 2);
    memset(header + 10 + length, ' ', padded - total);
    header[padded - 1] = '\n';
    struct cc__output output;
    int rc = cc__output_open(&output, path, message);
    if (rc == CC_OK)
        rc = cc__output_write(&output, header, padded, message);
    if (rc == CC_OK && size > 0)
        rc = cc__output_write(&output, data, size, message);
    if (rc != CC_OK) {
        cc__output_abort(&output);
        return rc;
    }
    return cc__output_commit(&output, message);
}

/* ---- reading: a cursor over the header's dict literal ---- */

struct cursor {
    const char *at, *end;
};

static void skip_spaces(struct cursor *c)
{
    while (c->at < c->end && isspace((unsigned char)*c->at))
        c->at++;
}

static bool take(struct cursor *c, char expected)
{
    skip_spaces(c);
    if (c->at < c->end && *c->at == expected) {
        c->at++;
        return true;
    }
    return false;
}

/* A quoted string without escapes into out (size bytes). */
static bool take_string(struct cursor *c, char *out, size_t size)
{
    skip_spaces(c);
    if (c->at >= c->end || (*c->at != '\'' && *c->at != '"'))
        return false;
    char quote = *c->at++;
    size_t n = 0;
    while (c->at < c->end && *c->at != quote && *c->at != '\\') {
        if (n + 1 >= size)
            return false;
        out[n++] = *c->at++;
    }
    out[n] = '\0';
    return take(c, quote);
}

static bool take_word(struct cursor *c, const char *word)
{
    skip_spaces(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->at) < n || memcmp(c->at, word, n) != 0)
        return false;
    c->at += n;
    return true;
}

/* A tuple of at most max_dims whole numbers. */
static bool take_shape(struct cursor *c, uint64_t *dims, int max_dims,
                       int *ndim)
{
    if (!take(c, '('))
        return false;
    *ndim = 0;
    for (;;) {
        if (take(c, ')'))
            return true;
        skip_spaces(c);
        if (c->at >= c->end || !isdigit((unsigned char)*c->at) ||
            *ndim == max_dims)
            return false;
        uint64_t value = 0;
        while (c->at < c->end && isdigit((unsigned char)*c->at)) {
            uint64_t digit = (uint64_t)(*c->at++ - '0');
            if (value > (UINT64_MAX - digit) / 10)
                return false;
            value = value * 10 + digit;
        }
        dims[(*ndim)++] = value;
        if (!take(c, ',')) {
            return take(c, ')');
        }
    }
}

/* What a header declares. */
struct npy_header {
    char descr[16];
    bool fortran_order;
    uint64_t shape[4];
    int ndim;
};

static bool parse_dict(struct cursor *c, struct npy_header *h)
{
    bool seen_descr = false, seen_order = false, seen_shape = false;
    if (!take(c, '{'))
        return false;
    while (!take(c, '}')) {
        char key[16];
        if (!take_string(c, key, sizeof key) || !take(c, ':'))
            return false;
        if (strcmp(key, "descr") == 0 && !seen_descr) {
            seen_descr = take_string(c, h->descr, sizeof h->descr);
            if (!seen_descr)
                return false;
        } else if (strcmp(key, "fortran_order") == 0 && !seen_order) {
            if (take_word(c, "True"))
                h->fortran_order = true;
            else if (take_word(c, "False"))
                h->fortran_order = false;
            else
                return false;
            seen_order = true;
        } else if (strcmp(key, "shape") == 0 && !seen_shape) {
            if (!take_shape(c, h->shape, 4, &h->ndim))
                return false;
            seen_shape = true;
        } else {
            return false; /* unknown or repeated key */
        }
        if (!take(c, ',')) {
            if (!take(c, '}'))
                return false;
            break;
        }
    }
    skip_spaces(c);
    return c->at == c->end && seen_descr && seen_order && seen_shape;
}

static int read_header(FILE *file, const char *path, struct npy_header *h,
                       char *message)
{
    unsigned char start[12];
    if (fread(start, 1, 8, file) != 8 || memcmp(start, npy_magic, 6) != 0)
        return cc__message(message, CC_EFORMAT, "%s is not a NumPy .npy file",
                           path);
    uint32_t length;
    if (start[6] == 1) {
        if (fread(start + 8, 1, 2, file) != 2)
            return cc__message(message, CC_EFORMAT, "%s is truncated", path);
        length = (uint32_t)start[8] | (uint32_t)start[9] << 8;
    } else if (start[6] == 2 || start[6] == 3) {
        if (fread(start + 8, 1, 4, file) != 4)
            return cc__message(message, CC_EFORMAT, "%s is truncated", path);
        memcpy(&length, start + 8, 4);
    } else {
        return cc__message(message, CC_EFORMAT,
                           "%s has .npy version %u; versions 1 to 3 are read",
                           path, (unsigned)start[6]);
    }
    if (length > 65536) /* numpy writes a few hundred bytes */
        return cc__message(message, CC_EFORMAT,
                           "%s declares a %" PRIu32 "-byte header", path,
                           length);
    char *text = malloc(length + 1u);
    if (text == NULL)
        return cc__message(message, CC_ENOMEM, "no memory to read %s", path);
    int rc = CC_OK;
    if (fread(text, 1, length, file) != length)
        rc = cc__message(message, CC_EFORMAT, "%s is truncated", path);
    struct cursor cursor = {text, text + length};
    *h = (struct npy_header){0};
    if (rc == CC_OK && !parse_dict(&cursor, h))
        rc = cc__message(message, CC_EFORMAT,
                         "%s has a header this reader does not understand",
                         path);
    free(text);
    return rc;
}

/* Opens an .npy file of shape (rows, cols) in C order whose descr is one
 * of types (n of them, needs naming them for the message), positioned at
 * its data; *type is the index of the one found. */
static int open_matrix(const char *path, uint32_t rows, uint32_t cols,
                       const char *const *types, size_t n, const char *needs,
                       FILE **result, size_t *type, char *message)
{
    *result = NULL;
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return cc__message(message, CC_EIO, "cannot open %s: %s", path,
                           strerror(errno));
    struct npy_header h;
    int rc = read_header(file, path, &h, message);
    *type = n;
    for (size_t i = 0; rc == CC_OK && i < n; i++)
        if (strcmp(h.descr, types[i]) == 0)
            *type = i;
    if (rc == CC_OK && *type == n)
        rc = cc__message(message, CC_EFORMAT, "%s holds '%s'; %s is needed",
                         path, h.descr, needs);
    if (rc == CC_OK && h.fortran_order)
        rc = cc__message(message, CC_EFORMAT,
                         "%s is in Fortran order; save it with "
                         "numpy.ascontiguousarray",
                         path);
    if (rc == CC_OK &&
        (h.ndim != 2 || h.shape[0] != rows || h.shape[1] != cols))
        rc = cc__message(message, CC_EMISMATCH,
                         "%s has shape %s; (%" PRIu32 ", %" PRIu32
                         ") is needed",
                         path, h.ndim == 2 ? "of another size" : "not 2-D",
                         rows, cols);
    if (rc != CC_OK) {
        fclose(file);
        return rc;
    }
    *result = file;
    return CC_OK;
}

/* Reads size bytes of data that must end the file, and closes it. */
static int read_data(FILE *file, const char *path, void *data, size_t size,
                     char *message)
{
    int rc = CC_OK;
    if (fread(data, 1, size, file) != size)
        rc = cc__message(message, CC_EFORMAT, "%s is truncated", path);
    if (rc == CC_OK && fgetc(file) != EOF)
        rc = cc__message(message, CC_EFORMAT,
                         "%s is longer than its header says", path);
    fclose(file);
    return rc;
}

int cc__npy_read_bytes(const char *path, uint32_t rows, uint32_t cols,
                       uint8_t *data, char *message)
{
    static const char *const byte_types[] = {"|u1", "<u1", ">u1",
                                             "u1",  "|b1", "b1"};
    FILE *file;
    size_t type;
    int rc = open_matrix(path, rows, cols, byte_types, 6,
                         "uint8 or bool (numpy: mask.astype(numpy.uint8))",
                         &file, &type, message);
    return rc != CC_OK
               ? rc
               : read_data(file, path, data, (size_t)rows * cols, message);
}

int cc__npy_read_reals(const char *path, uint32_t rows, uint32_t cols,
                       double *data, char *message)
{
    static const char *const real_types[] = {"<f4", "<f8"};
    FILE *file;
    size_t type;
    int rc = open_matrix(path, rows, cols, real_types, 2,
                         "little-endian float32 or float64", &file, &type,
                         message);
    if (rc != CC_OK)
        return rc;
    size_t pixels = (size_t)rows * cols;
    if (type == 1)
        return read_data(file, path, data, pixels * sizeof(double), message);
    float *single = malloc(pixels * sizeof *single);
    if (single == NULL) {
        fclose(file);
        return cc__message(message, CC_ENOMEM, "no memory to read %s", path);
    }
    rc = read_data(file, path, single, pixels * sizeof *single, message);
    for (size_t p = 0; rc == CC_OK && p < pixels; p++)
        data[p] = single[p];
    free(single);
    return rc;
}
