# SPDX-License-Identifier: BSD-3-Clause
"""ioc_bluesky.py bluesky|bec PREFIX WORK FRAMES: the example IOC driven as
a beamline's clients drive it (run by tests/ioc_bluesky.sh, with the
pinned clients of tests/pyclients-control.txt).

bluesky: a RunEngine runs python/examples/moench_count.py's plan, which
resets the pedestal and counts twice with clustercore.ophyd_plugin's
ClusterDetector (each trigger one acquisition of FRAMES arrays) and
clustercore.ophyd_async_plugin's ClusterCUDAReadout; each event's clusters, dropped clusters, line and spectrum must
be the core's (WORK/expected1.txt, expected2.txt: source_totals on the
arrays of one and of two acquisitions), read alike by ophyd and
ophyd-async; unstage must leave every setting as it was; the ophyd-async
publish must post the same numbers again.

bec: clustercore.bec_device.MoenchClusterCUDA made from
python/examples/bec_moench.yaml as BEC's device server makes it, then
staged, triggered, read, completed and unstaged as BEC calls it, for a
scan of one point of FRAMES frames: the reading must be the core's on
the arrays of three acquisitions (WORK/expected3.txt).

Prints what failed and exits 1, or 0.
"""
import importlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "python", "examples")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def expected(work, acquisitions):
    """source_totals' figures: {clusters, dropped, peak, sigma, spectrum}."""
    figures = {}
    for line in open(os.path.join(work, "expected%d.txt" % acquisitions)):
        words = line.split()
        if words[0] in ("clusters", "dropped"):
            figures[words[0]] = int(words[1])
        elif words[0] == "peak":
            figures["peak"], figures["sigma"] = float(words[1]), float(words[2])
    figures["spectrum"] = np.loadtxt(os.path.join(work, "spectrum%d.txt" % acquisitions))
    return figures


def compare(what, reading, want):
    """reading: {clusters, dropped, peak, sigma, spectrum} as a client read them."""
    check(reading["clusters"] == want["clusters"],
          "%s: %s clusters, the core %d" % (what, reading["clusters"], want["clusters"]))
    check(reading["dropped"] == want["dropped"],
          "%s: %s dropped, the core %d" % (what, reading["dropped"], want["dropped"]))
    for key in ("peak", "sigma"):  # source_totals prints 4 decimals
        check(abs(reading[key] - want[key]) <= 5e-5,
              "%s: line %s %r, the core %r" % (what, key, reading[key], want[key]))
    spectrum = np.asarray(reading["spectrum"])[:want["spectrum"].size]
    check(np.array_equal(spectrum, want["spectrum"]),
          "%s: the spectrum differs from the core's in %d bins" %
          (what, int(np.sum(spectrum != want["spectrum"]))))


def settings_of(plugin):
    """Every setting of the plugin, and what ophyd's staging touches."""
    from clustercore.plugin_records import SETTINGS
    names = [record.attribute for record in SETTINGS] + ["enable", "blocking_callbacks"]
    return {name: getattr(plugin, name).get() for name in names}


def run_bluesky(prefix, work, frames):
    from bluesky import RunEngine
    from bluesky.run_engine import call_in_bluesky_event_loop
    from ophyd.areadetector.plugins import get_areadetector_plugin_class

    sys.path.insert(0, EXAMPLES)
    from moench_count import dark_then_data

    from clustercore.ophyd_async_plugin import ClusterCUDAReadout
    from clustercore.ophyd_plugin import ClusterCUDAPlugin, ClusterDetector

    check(get_areadetector_plugin_class(prefix + "Cluster1:") is ClusterCUDAPlugin,
          "ophyd does not find ClusterCUDAPlugin from the plugin's PluginType_RBV")
    detector = ClusterDetector(prefix, name="moench", trigger_timeout=120)
    detector.wait_for_connection(timeout=30)
    readout = ClusterCUDAReadout(prefix + "Cluster1:", name="clusters")
    engine = RunEngine({})
    found_before = settings_of(detector.cluster)
    check(found_before["enable"] == "Disable", "the test meant the plugin disabled before")

    events = []
    engine.subscribe(lambda name, document: events.append(document) if name == "event" else None)
    engine(dark_then_data(detector, readout, frames, 2))
    check(len(events) == 2, "%d events, not 2" % len(events))
    for number, event in enumerate(events, start=1):
        data = event["data"]
        want = expected(work, number)
        compare("event %d, ophyd" % number, {
            "clusters": data["moench_cluster_total_clusters"],
            "dropped": data["moench_cluster_dropped_clusters"],
            "peak": data["moench_cluster_peak_position"],
            "sigma": data["moench_cluster_peak_sigma"],
            "spectrum": data["moench_cluster_spectrum"]}, want)
        compare("event %d, ophyd-async" % number, {
            "clusters": data["clusters-plugin-total_clusters"],
            "dropped": data["clusters-plugin-dropped_clusters"],
            "peak": data["clusters-plugin-peak_position"],
            "sigma": data["clusters-plugin-peak_sigma"],
            "spectrum": data["clusters-plugin-spectrum"]}, want)
        check(data["moench_cluster_publications"] == data["clusters-plugin-publications"],
              "event %d: ophyd and ophyd-async read different publications" % number)
    check(settings_of(detector.cluster) == found_before,
          "unstage left the plugin changed: %s" % sorted(
              name for name, value in settings_of(detector.cluster).items()
              if found_before[name] != value))

    async def publish_and_read():
        before = await readout.plugin.publications.get_value()
        await readout.publish()
        return before, await readout.read()

    before, reading = call_in_bluesky_event_loop(publish_and_read())
    check(reading["clusters-plugin-publications"]["value"] > before,
          "ophyd-async's publish did not publish")
    compare("ophyd-async publish", {
        key: reading["clusters-plugin-" + name]["value"] for key, name in (
            ("clusters", "total_clusters"), ("dropped", "dropped_clusters"),
            ("peak", "peak_position"), ("sigma", "peak_sigma"), ("spectrum", "spectrum"))},
        expected(work, 2))


def run_bec(prefix, work, frames):
    import yaml

    configs = yaml.safe_load(open(os.path.join(EXAMPLES, "bec_moench.yaml")))
    check(list(configs) == ["moench"], "the example config is not one device, moench")
    config = configs["moench"]
    check(config["readoutPriority"] == "monitored" and config["softwareTrigger"] is True,
          "the example config is not read at every point after a software trigger")
    # As BEC's device server: the class from its dotted name, the config
    # as keywords (the prefix this test's IOC has).
    module, _, name = config["deviceClass"].rpartition(".")
    device_class = getattr(importlib.import_module(module), name)
    device = device_class(name="moench", **dict(config["deviceConfig"], prefix=prefix))
    device.wait_for_connection(timeout=30)
    device.scan_info.msg.scan_parameters["frames_per_trigger"] = frames
    images_before = device.cam.num_images.get()
    found_before = settings_of(device.cluster)

    device.stage()
    check(device.cam.num_images.get() == frames, "on_stage did not take frames_per_trigger")
    device.trigger().wait(180)
    reading = device.read()
    device.complete().wait(60)
    device.unstage()
    compare("BEC", {
        "clusters": reading["moench_cluster_total_clusters"]["value"],
        "dropped": reading["moench_cluster_dropped_clusters"]["value"],
        "peak": reading["moench_cluster_peak_position"]["value"],
        "sigma": reading["moench_cluster_peak_sigma"]["value"],
        "spectrum": reading["moench_cluster_spectrum"]["value"]}, expected(work, 3))
    check(device.cam.num_images.get() == images_before,
          "on_unstage left NumImages at %s" % device.cam.num_images.get())
    check(settings_of(device.cluster) == found_before, "unstage left the plugin changed")


def main():
    mode, prefix, work, frames = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    {"bluesky": run_bluesky, "bec": run_bec}[mode](prefix, work, frames)
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        print("ok: %s" % mode)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
