# SPDX-License-Identifier: BSD-3-Clause
"""aare_cpu_bench.py: PSI aare's multi-threaded CPU cluster finder
(ClusterFinderMT, aare 2026.9.30) beside our CPU backend on as many
threads, on the same frames of clusterbench's simulator (seed 2026, 1,000
dark frames): frames/s of each, and one pass of both from the trained
state compared cluster by cluster (clustercore.agreement).

usage: python3 aare_cpu_bench.py [--threads N] [--sizes 3,9] [--frames N]
                                 [--photons N] [--seconds S] [--repeats N]

Needs aare (its wheel, or tools/deps/build.sh's venv) and this project's
Python package with its library (CLUSTERCORE_LIBRARY). aare's threads each
keep a pedestal of their own, updated by their own frames (round robin):
the first frame of each thread sees the trained pedestal, ours only frame
0, so the table shows frame 0 (both as trained), the next frames up to the
thread count (aare's as trained), and the rest, as aare_cuda_bench does
for its streams; and aare against ours on aare's schedule (a finder of
ours a thread, each given that thread's frames), which leaves only what
the two finders do differently with the same pedestal history.
"""
import argparse
import statistics
import time

import numpy as np
import aare

import clustercore

DARK = 1000  # aare's min_pedestal_samples default, our pedestal_frames'
NSIGMA = 5


def simulate(frames, photons):
    simulator = clustercore.Simulator(rows=400, cols=400, seed=2026, flux=photons,
                                      threads=0)
    return simulator.dark_frames(DARK), simulator.frames(frames, first=DARK)


class Aare:
    """aare's ClusterFinderMT, trained on the dark frames."""

    def __init__(self, dark, size, threads, capacity):
        self.finder = aare.ClusterFinderMT(dark.shape[1:], cluster_size=(size, size),
                                           n_sigma=NSIGMA, capacity=capacity,
                                           n_threads=threads, min_pedestal_samples=DARK)
        for frame in dark:
            self.finder.push_pedestal_frame(frame)
        self.finder.sync()
        self.finder.stop()  # its pedestal reads only while stopped
        self.trained_rms = np.asarray(self.finder.noise())
        self.finder.start()

    def run(self, frames):
        """Every frame through the finder; its clusters, one ClusterVector a
        frame in the order the threads finished them (a collector reads
        them meanwhile and gives them up once stopped)."""
        collector = aare.ClusterCollector(self.finder)
        try:
            for number, frame in enumerate(frames):
                self.finder.find_clusters(frame, number)
            self.finder.sync()
        finally:
            collector.stop()
        return collector.steal_clusters()

    def close(self):
        self.finder.stop()


def as_records(vectors, size, first, count):
    """aare's ClusterVectors of frames [first, first + count) as our
    records (frame, x, y, data), frame by frame."""
    by_frame = {v.frame_number: np.array(v) for v in vectors}
    dtype = clustercore.cluster_dtype(size, size)
    parts = []
    for number in range(first, first + count):
        found = by_frame.get(number, np.zeros(0, dtype))
        part = np.zeros(len(found), dtype)
        part["frame"], part["x"], part["y"] = number, found["x"], found["y"]
        part["data"] = np.asarray(found["data"]).reshape(len(found), size, size)
        parts.append(part)
    records = np.concatenate(parts)
    frames = np.zeros(count, clustercore.finder.FRAME_DTYPE)
    frames["frame"] = np.arange(first, first + count)
    frames["count"] = [len(p) for p in parts]
    return clustercore.Clusters.from_array(records, frames)


def median_rate(pass_, frames, seconds, repeats):
    pass_()  # untimed: first touches
    rates = []
    for _ in range(repeats):
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            pass_()
            done += frames
        rates.append(done / (time.perf_counter() - start))
    return statistics.median(rates)


def frame_groups(count, firsts):
    """The rows of the agreement table: (first frame, frames, name)."""
    groups = [(0, 1, "0: both pedestals as trained")]
    if firsts > 1:
        groups.append((1, firsts - 1, "1 to %d: aare's as trained" % (firsts - 1)))
    return groups + [(firsts, count - firsts, "%d on" % firsts)]


def our_finder(size, threads, dark):
    finder = clustercore.Finder(400, 400, cluster_size=size, backend="cpu",
                                threads=threads, pedestal_frames=DARK)
    finder.train(dark)
    return finder


def on_schedule(size, threads, dark, data):
    """Our clusters of data on aare's schedule: a one-thread finder for
    each of its threads, given frames k, k + threads, ..., gathered back
    in frame order."""
    tables = []
    for k in range(threads):
        numbers = range(k, len(data), threads)
        tables.append(our_finder(size, 1, dark).process(data[k::threads], numbers).array())
    records = np.concatenate(tables)
    # Frame order, each frame's clusters as its finder gave them.
    records = records[np.argsort(records["frame"], kind="stable")]
    frames = np.zeros(len(data), clustercore.finder.FRAME_DTYPE)
    frames["frame"] = np.arange(len(data))
    frames["count"] = np.bincount(records["frame"].astype(np.int64), minlength=len(data))
    return clustercore.Clusters.from_array(records, frames)


def row(size, name, a):
    """One row of the agreement table (list a ours, b aare's)."""
    unexplained = [a["only"][s] - a["not_max"][s] - a["at_threshold"][s] for s in (0, 1)]
    return ("| %dx%d | %s | %d | %.1f | %.1f | %.4f | %.4f | %d | %d (%d not max, "
            "%d at threshold, %d other) | %d (%d at threshold, %d other) |"
            % (size, size, name, a["frames"], a["clusters"][0] / a["frames"],
               a["clusters"][1] / a["frames"], a["same_place"] / max(a["clusters"][0], 1),
               a["same_values"] / max(a["clusters"][0], 1), a["largest_difference"],
               a["only"][1], a["not_max"][1], a["at_threshold"][1], unexplained[1],
               a["only"][0], a["at_threshold"][0], unexplained[0]))


def agreement_rows(size, threads, dark, data):
    """One pass of both from the trained state, compared in the groups of
    frame_groups, then against ours on aare's schedule."""
    ours = our_finder(size, threads, dark)
    ours_rms = ours.pedestal_maps()[1]
    groups = frame_groups(len(data), threads)
    found = [ours.process(data[first:first + count], range(first, first + count))
             for first, count, _ in groups]
    most = max(int(f.frames()["count"].max()) for f in found)
    peer = Aare(dark, size, threads, capacity=most * 2)
    vectors = peer.run(data)
    peer.close()
    thresholds = (NSIGMA * ours_rms, NSIGMA * peer.trained_rms)
    rows = [row(size, name, clustercore.agreement(mine, as_records(vectors, size, first, count),
                                                  thresholds=thresholds))
            for (first, count, name), mine in zip(groups, found)]
    scheduled = on_schedule(size, threads, dark, data)
    rows.append(row(size, "all, ours on aare's schedule",
                    clustercore.agreement(scheduled, as_records(vectors, size, 0, len(data)),
                                          thresholds=thresholds)))
    return rows, most


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--sizes", default="3,9")
    parser.add_argument("--frames", type=int, default=256)
    parser.add_argument("--photons", type=float, default=2330)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    if options.threads < 1 or options.frames <= options.threads:
        parser.error("--threads at least 1, --frames more than --threads")
    dark, data = simulate(options.frames, options.photons)
    print("aare_cpu_bench: aare %s ClusterFinderMT and our CPU backend (library %s), "
          "%d threads each, %d dark and %d data frames of 400 x 400, %s UTC"
          % (aare.__version__, clustercore.library_version(), options.threads, DARK,
             len(data), time.strftime("%Y-%m-%d %H:%M", time.gmtime())))
    for size in (int(s) for s in options.sizes.split(",")):
        rows, most = agreement_rows(size, options.threads, dark, data)
        print("\n#### %dx%d: agreement, one pass from the trained state\n" % (size, size))
        print("| size | frames | count | ours a frame | aare's a frame | same centre (of ours) "
              "| same centre and values | largest value difference | aare only | ours only |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
        ours = our_finder(size, options.threads, dark)
        batches = [data[k:k + 16] for k in range(0, len(data), 16)]
        ours_rate = median_rate(lambda: [ours.process(b) for b in batches], len(data),
                                options.seconds, options.repeats)
        peer = Aare(dark, size, options.threads, capacity=most * 2)
        aare_rate = median_rate(lambda: peer.run(data), len(data), options.seconds,
                                options.repeats)
        peer.close()
        print("\n#### %dx%d: frames/s, %d threads each\n" % (size, size, options.threads))
        print("| finder | frames/s | ours / aare |\n|---|---|---|")
        print("| aare ClusterFinderMT | %.0f | |" % aare_rate)
        print("| ours, CPU backend, batches of 16 | %.0f | %.2f |" % (ours_rate,
                                                                   ours_rate / aare_rate))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
