/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * output_file.c: every file the library writes goes to path.XXXXXX first
 * and is renamed to path only when complete and synced, so a crash or a
 * failed run never leaves a file that looks complete.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

int cc__output_open(struct cc__output *output, const char *path, char *message)
{
    *output = (struct cc__output){0};
    size_t length = strlen(path);
    output->path = malloc(length + 1);
    output->temporary = malloc(length + sizeof ".XXXXXX");
    if (output->path == NULL || output->temporary == NULL) {
        cc__output_abort(output);
        return cc__message(message, CC_ENOMEM, "no memory to write %s", path);
    }
    memcpy(output->path, path, length + 1);
    memcpy(output->temporary, path, length);
    memcpy(output->temporary + length, ".XXXXXX", sizeof ".XXXXXX");
    int fd = mkstemp(output->temporary);
    if (fd < 0) {
        int rc = cc__message(message, CC_EIO, "cannot create %s: %s", path,
                             strerror(errno));
        free(output->temporary);
        output->temporary = NULL; /* nothing to remove */
        cc__output_abort(output);
        return rc;
    }
    /* mkstemp makes the file private; results are for the beamline. */
    fchmod(fd, 0644);
    output->file = fdopen(fd, "wb");
    if (output->file == NULL) {
        int rc = cc__message(message, CC_EIO, "cannot write %s: %s", path,
                             strerror(errno));
        close(fd);
        cc__output_abort(output);
        return rc;
    }
    return CC_OK;
}

int cc__output_write(struct cc__output *output, const void *data, size_t size,
                     char *message)
{
    if (size == 0 || fwrite(data, 1, size, output->file) == size)
        return CC_OK;
    return cc__message(message, CC_EIO, "cannot write %s: %s", output->path,
                       strerror(errno));
}

int cc__output_commit(struct cc__output *output, char *message)
{
    bool written = fflush(output->file) == 0 &&
                   fsync(fileno(output->file)) == 0;
    int saved_errno = errno;
    written = fclose(output->file) == 0 && written;
    output->file = NULL;
    if (written && rename(output->temporary, output->path) != 0) {
        saved_errno = errno;
        written = false;
    }
    int rc = written ? CC_OK
                     : cc__message(message, CC_EIO, "cannot write %s: %s",
                                   output->path, strerror(saved_errno));
    if (written) {
        free(output->temporary);
        output->temporary = NULL; /* renamed: nothing left to remove */
    }
    cc__output_abort(output);
    return rc;
}

void cc__output_abort(struct cc__output *output)
{
    if (output->file != NULL)
        fclose(output->file);
    if (output->temporary != NULL)
        unlink(output->temporary);
    free(output->temporary);
    free(output->path);
    *output = (struct cc__output){0};
}
