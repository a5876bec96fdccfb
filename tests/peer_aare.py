# SPDX-License-Identifier: BSD-3-Clause
"""peer_aare.py: runs aare's own CPU cluster finder on a raw run and
compares its cluster centres, frame by frame, with a .clust file of ours.

usage: peer_aare.py DARK_MASTER DATA_MASTER OURS.clust SIZE MAX_DISAGREEMENT

aare updates the pedestal during its raster scan, where the spec's frozen
model updates after the frame, so a few clusters may differ; the script
prints the figure and fails when the share of clusters found by only one
finder exceeds MAX_DISAGREEMENT.
"""
import sys

import numpy as np
import aare


def read_clust(path, size):
    """Our .clust file as {frame number: set of (x, y)}."""
    record = np.dtype([('x', '<u2'), ('y', '<u2'), ('data', '<i4', size * size)])
    raw = open(path, 'rb').read()
    frames, at = {}, 0
    while at < len(raw):
        number, count = np.frombuffer(raw, '<i4', 2, at)
        at += 8
        clusters = np.frombuffer(raw, record, int(count), at)
        at += int(count) * record.itemsize
        frames[int(number)] = {(int(c['x']), int(c['y'])) for c in clusters}
    return frames


def main():
    dark, data, ours_path, size, limit = sys.argv[1:6]
    size, limit = int(size), float(limit)
    dark_file = aare.RawFile(dark)
    finder = aare.ClusterFinder((400, 400), cluster_size=(size, size),
                                n_sigma=5, min_pedestal_samples=len(dark_file))
    for _ in range(len(dark_file)):
        _, frame = dark_file.read_frame()
        finder.push_pedestal_frame(frame & 0x3FFF)
    ours = read_clust(ours_path, size)
    both = only_aare = only_ours = 0
    data_file = aare.RawFile(data)
    for _ in range(len(data_file)):
        header, frame = data_file.read_frame()
        number = int(header['frameNumber'][0])
        finder.find_clusters(frame & 0x3FFF, number)
        theirs = {(int(c['x']), int(c['y']))
                  for c in np.array(finder.steal_clusters())}
        mine = ours.pop(number, set())
        both += len(theirs & mine)
        only_aare += len(theirs - mine)
        only_ours += len(mine - theirs)
    if ours:
        print("FAIL: our file has frames aare did not read: %s" % sorted(ours)[:5])
        return 1
    total = both + only_aare + only_ours
    share = (only_aare + only_ours) / max(total, 1)
    print("aare %s vs clusterfind, %dx%d: %d clusters in both, %d only aare's, "
          "%d only ours: %.2g of clusters differ"
          % (aare.__version__, size, size, both, only_aare, only_ours, share))
    if total == 0 or share > limit:
        print("FAIL: more than %g of clusters differ" % limit)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
