# SPDX-License-Identifier: BSD-3-Clause
"""Counting photons with a MÖNCH and NDPluginClusterCUDA from Bluesky.

    python moench_count.py PREFIX FRAMES POINTS

PREFIX is the IOC's (CC: for the example IOC), with the driver at cam1:
and the plugin at Cluster1:. The plan retrains the pedestal, then takes
POINTS events of FRAMES frames each. The pedestal trains on the first
PedestalFrames arrays after the reset: they must be dark (the shutter
closed; the example IOC's simulated source sends MoenchDarkFrames dark
frames first). Each event holds the clusters found so far, the fitted
line and the spectrum, read by ophyd (moench_cluster_*) and by
ophyd-async (clusters-plugin-*).
"""
import sys

import bluesky.plan_stubs as bps
from bluesky import RunEngine
from bluesky.callbacks import LiveTable
from bluesky.plans import count
from ophyd_async.plan_stubs import ensure_connected

from clustercore.ophyd_async_plugin import ClusterCUDAReadout
from clustercore.ophyd_plugin import ClusterDetector


def dark_then_data(detector, readout, frames, points):
    """Retrains the pedestal, then counts points triggers of frames each."""
    detector.cam.stage_sigs["num_images"] = frames
    yield from ensure_connected(readout)
    yield from bps.mv(detector.cluster.reset_pedestal, 1)
    return (yield from count([detector, readout], num=points))


def main(prefix, frames, points):
    detector = ClusterDetector(prefix, name="moench", trigger_timeout=120)
    detector.wait_for_connection(timeout=10)
    readout = ClusterCUDAReadout(prefix + "Cluster1:", name="clusters")
    engine = RunEngine({})
    # A line an event: the clusters so far and the fitted line.
    engine.subscribe(LiveTable(["moench_cluster_total_clusters",
                                "moench_cluster_peak_position",
                                "moench_cluster_peak_sigma"]))
    engine(dark_then_data(detector, readout, frames, points))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
