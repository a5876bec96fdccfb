/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clust_file.c: a .clust file read to its end. The first byte gives the
 * cluster size the caller says (Nx = 3 + 2 (b & 3), Ny = 3 + 2 (b >> 2 & 3));
 * the rest is the file. What is read must fit in the file's bytes.
 */
#include "clustercore.h"
#include "targets.h"

enum { frames_a_read = 2 };

void fuzz_clust_file(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    uint32_t size_x = 3 + 2 * (data[0] & 3u),
             size_y = 3 + 2 * (data[0] >> 2 & 3u);
    const char *path = fuzz_scratch_file("clusters.clust", data + 1, size - 1);
    char message[CC_MESSAGE_SIZE];
    cc_clust_reader *reader;
    if (cc_clust_reader_open(&reader, path, size_x, size_y, message) != CC_OK)
        return;
    cc_clusters *clusters;
    FUZZ_REQUIRE(cc_clusters_new(&clusters) == CC_OK);
    size_t frames = 0, total = 0;
    while (cc_clust_reader_read(reader, frames_a_read, clusters, message) ==
               CC_OK &&
           cc_clusters_frame_count(clusters) > 0) {
        FUZZ_REQUIRE(cc_clusters_frame_count(clusters) <= frames_a_read);
        for (size_t i = 0; i < cc_clusters_frame_count(clusters); i++) {
            cc_frame_clusters frame;
            FUZZ_REQUIRE(cc_clusters_frame(clusters, i, &frame) == CC_OK);
            FUZZ_REQUIRE(frame.size_x == size_x && frame.size_y == size_y);
        }
        frames += cc_clusters_frame_count(clusters);
        total += cc_clusters_total(clusters);
    }
    FUZZ_REQUIRE(frames * 8 + total * (4 + 4 * size_x * size_y) <= size - 1);
    cc_clust_reader_close(reader);
    cc_clusters_destroy(clusters);
}
