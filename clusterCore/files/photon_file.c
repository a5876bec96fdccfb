/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * photon_file.c: photon lists as a NumPy structured array, streamed: the
 * header leaves room for any count, which is written into it at the end
 * (numpy reads the shape as a Python literal, so spaces inside the tuple
 * are allowed).
 */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

static_assert(sizeof(cc_photon_record) == 32,
              "a photon record is the .npy record: 32 packed bytes");

struct cc_photon_writer {
    struct cc__output output;
    uint64_t photons;
    bool open;
};

enum { HEADER = 192 }; /* magic to data: a multiple of 64 */

/* The header for a count of photons, HEADER bytes. */
static void header_for(uint64_t photons, char out[HEADER])
{
    memset(out, ' ', HEADER);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    uint16_t length = HEADER - 10;
    memcpy(out + 8, &length, 2);
    char dict[HEADER];
    int n = snprintf(dict, sizeof dict,
                     "{'descr': [('frame', '<u8'), ('x', '<f8'), "
                     "('y', '<f8'), ('energy', '<f8')], "
                     "'fortran_order': False, 'shape': (%20" PRIu64 ",), }",
                     photons);
    assert(n > 0 && 10 + n < HEADER);
    memcpy(out + 10, dict, (size_t)n);
    out[HEADER - 1] = '\n';
}

int cc_photon_writer_new(cc_photon_writer **writer, const char *path,
                         char *message)
{
    if (writer == NULL || path == NULL)
        return cc__message(message, CC_EINVAL, "writer and path are needed");
    *writer = NULL;
    cc_photon_writer *made = calloc(1, sizeof *made);
    if (made == NULL)
        return cc__message(message, CC_ENOMEM, "no memory for a writer");
    int rc = cc__output_open(&made->output, path, message);
    if (rc != CC_OK) {
        free(made);
        return rc;
    }
    made->open = true;
    char header[HEADER];
    header_for(0, header);
    rc = cc__output_write(&made->output, header, HEADER, message);
    if (rc != CC_OK) {
        cc_photon_writer_destroy(made);
        return rc;
    }
    *writer = made;
    return CC_OK;
}

int cc_photon_writer_write(cc_photon_writer *writer,
                           const cc_photon_record *records, size_t n,
                           char *message)
{
    if (writer == NULL || !writer->open || (records == NULL && n > 0))
        return cc__message(message, CC_EINVAL,
                           "an open writer and the records are needed");
    int rc = cc__output_write(&writer->output, records, n * sizeof *records,
                              message);
    if (rc == CC_OK)
        writer->photons += n;
    return rc;
}

int cc_photon_writer_finish(cc_photon_writer *writer, char *message)
{
    if (writer == NULL || !writer->open)
        return cc__message(message, CC_EINVAL, "the writer is not open");
    char header[HEADER];
    header_for(writer->photons, header);
    writer->open = false;
    int rc = fseek(writer->output.file, 0, SEEK_SET) == 0
                 ? cc__output_write(&writer->output, header, HEADER, message)
                 : cc__message(message, CC_EIO, "cannot rewind %s",
                               writer->output.path);
    if (rc != CC_OK) {
        cc__output_abort(&writer->output);
        return rc;
    }
    return cc__output_commit(&writer->output, message);
}

void cc_photon_writer_destroy(cc_photon_writer *writer)
{
    if (writer == NULL)
        return;
    if (writer->open)
        cc__output_abort(&writer->output);
    free(writer);
}
