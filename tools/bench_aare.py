# SPDX-License-Identifier: BSD-3-Clause
"""bench_aare.py: frames per second of PSI aare's serial CPU cluster finder
(the project's reference), on a raw run this project simulated, for the
comparison in docs/benchmarks.md.

usage: python3 bench_aare.py DARK_MASTER DATA_MASTER SIZE [SECONDS [REPEATS]]

The frames are read into memory first; each timed run calls aare's
find_clusters and steal_clusters once a frame, cycling through the data
frames, and the median of the runs is printed as a clusterbench-style row.
"""
import statistics
import sys
import time

import aare


def read_frames(path):
    raw = aare.RawFile(path)
    return [raw.read_frame()[1] & 0x3FFF for _ in range(len(raw))]


def main():
    dark_path, data_path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    dark, data = read_frames(dark_path), read_frames(data_path)
    finder = aare.ClusterFinder(data[0].shape, cluster_size=(size, size),
                                n_sigma=5, capacity=4096,
                                min_pedestal_samples=len(dark))
    for frame in dark:
        finder.push_pedestal_frame(frame)
    for number, frame in enumerate(data):  # untimed pass, as clusterbench does
        finder.find_clusters(frame, number)
        finder.steal_clusters(True)
    rates, clusters, frames = [], 0, 0
    cpu = time.process_time()
    for _ in range(repeats):
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for number, frame in enumerate(data):
                finder.find_clusters(frame, number)
                clusters += finder.steal_clusters(True).size
            done += len(data)
        rates.append(done / (time.perf_counter() - start))
        frames += done
    cpu = time.process_time() - cpu
    median = statistics.median(rates)
    print("| aare %s ClusterFinder | in memory | %dx%d | float | 1 thread | 1 "
          "| %.0f | %.0f | %.0f | %.2f | %.2f | %.1f | - |"
          % (aare.__version__, size, size, median, min(rates), max(rates),
             1e6 / median, 1e6 * cpu / frames, clusters / frames))
    return 0


if __name__ == '__main__':
    sys.exit(main())
