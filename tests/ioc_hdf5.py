# SPDX-License-Identifier: BSD-3-Clause
"""ioc_hdf5.py: checks that an HDF5 file written by NDFileHDF5 from the
plugin's address 0 holds, frame by frame, the clusters of a .clust file.

usage: ioc_hdf5.py FILE.h5 OURS.clust

Each HDF5 frame is an int32 array [MaxClusters, 2 + 9] (x, y, values) whose
first NumClusters rows are the clusters; the rest must be zero.
"""
import sys

import h5py
import numpy as np


def read_clust(path):
    """A .clust file of 3x3 clusters as a list of (n, 11) int32 arrays."""
    record = np.dtype([('x', '<u2'), ('y', '<u2'), ('data', '<i4', 9)])
    raw = open(path, 'rb').read()
    frames, at = [], 0
    while at < len(raw):
        _, count = np.frombuffer(raw, '<i4', 2, at)
        at += 8
        clusters = np.frombuffer(raw, record, int(count), at)
        at += int(count) * record.itemsize
        rows = np.zeros((int(count), 11), np.int32)
        rows[:, 0], rows[:, 1], rows[:, 2:] = clusters['x'], clusters['y'], clusters['data']
        frames.append(rows)
    return frames


def main():
    h5_path, clust_path = sys.argv[1:3]
    ours = read_clust(clust_path)
    with h5py.File(h5_path, 'r') as h5:
        data = h5['/entry/data/data'][()]
        counts = h5['/entry/instrument/NDAttributes/NumClusters'][()]
    if len(data) != len(ours):
        print("FAIL: %d frames in the HDF5 file, %d in the .clust" % (len(data), len(ours)))
        return 1
    for k, (frame, want) in enumerate(zip(data, ours)):
        n = len(want)
        if int(counts[k]) != n:
            print("FAIL: frame %d: NumClusters %d, .clust %d" % (k, counts[k], n))
            return 1
        if not np.array_equal(frame[:n], want) or frame[n:].any():
            print("FAIL: frame %d: the clusters differ" % k)
            return 1
    print("%s: %d frames, %d clusters, as in %s"
          % (h5_path, len(data), sum(len(f) for f in ours), clust_path))
    return 0


if __name__ == '__main__':
    sys.exit(main())
