/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay_main.c: `replay TARGET FILE|DIRECTORY...` runs a fuzz target on
 * each file (a directory's files in name order), as libFuzzer would, and
 * says how many it ran. A crash or a broken invariant aborts it; the
 * corpus test runs it in every build, sanitizers included.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "targets.h"

static int run_file(const struct fuzz_target *target, const char *path)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        perror(path);
        return 1;
    }
    size_t capacity = 1 << 16, size = 0;
    uint8_t *data = malloc(capacity);
    for (size_t got;
         data != NULL &&
         (got = fread(data + size, 1, capacity - size, file)) > 0;) {
        size += got;
        if (size == capacity) {
            uint8_t *grown = realloc(data, capacity *= 2);
            if (grown == NULL)
                free(data);
            data = grown;
        }
    }
    fclose(file);
    if (data == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 1;
    }
    target->run(data, size);
    free(data);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    const struct fuzz_target *target = argc < 2 ? NULL
                                                : fuzz_target_named(argv[1]);
    if (target == NULL) {
        fprintf(stderr, "usage: replay TARGET FILE|DIRECTORY...; targets:\n");
        for (const struct fuzz_target *t = fuzz_targets; t->name; t++)
            fprintf(stderr, "  %-15s %s\n", t->name, t->reads);
        return 2;
    }
    int failed = 0;
    size_t inputs = 0;
    for (int i = 2; i < argc; i++) {
        struct stat status;
        if (stat(argv[i], &status) != 0) {
            perror(argv[i]);
            failed = 1;
        } else if (!S_ISDIR(status.st_mode)) {
            failed |= run_file(target, argv[i]);
            inputs++;
        } else {
            struct dirent **entries;
            int n = scandir(argv[i], &entries, NULL, by_name);
            for (int k = 0; k < n; k++) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i],
                         entries[k]->d_name);
                if (entries[k]->d_name[0] != '.' && stat(path, &status) == 0 &&
                    S_ISREG(status.st_mode)) {
                    failed |= run_file(target, path);
                    inputs++;
                }
                free(entries[k]);
            }
            free(entries);
            if (n < 0) {
                perror(argv[i]);
                failed = 1;
            }
        }
    }
    printf("%s: %zu inputs replayed\n", target->name, inputs);
    return failed;
}
