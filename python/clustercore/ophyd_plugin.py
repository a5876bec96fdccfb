# SPDX-License-Identifier: BSD-3-Clause
"""ophyd (Bluesky) devices for NDPluginClusterCUDA (pip install
'./python[bluesky]'; docs/bluesky.md).

ClusterCUDAPlugin is the plugin as ophyd's own area-detector plugins are:
registered for its PluginType_RBV, every record of
db/NDClusterCUDA.template a component (clustercore.plugin_records says
which are config, read at every event, or commands).

ClusterDetector is a detector with a driver at cam1: and the plugin at
Cluster1:. Its trigger acquires, waits until the plugin has taken every
array the driver made, and has the plugin publish: the event then holds
the clusters, the fitted line and the spectrum of exactly those frames.
For PSI's MÖNCH driver, subclass it with that driver's cam.
"""
import threading
import time

from ophyd import Component as Cpt
from ophyd import DeviceStatus, EpicsSignal, EpicsSignalRO
from ophyd.areadetector.base import EpicsSignalWithRBV
from ophyd.areadetector.cam import AreaDetectorCam
from ophyd.areadetector.detectors import DetectorBase
from ophyd.areadetector.plugins import PluginBase_V35, register_plugin
from ophyd.status import SubscriptionStatus, WaitTimeoutError

from .plugin_records import COMMANDS, PLUGIN_TYPE, READINGS, SETTINGS, WRITTEN


def _component(record, signal_class):
    """A record as an ophyd component: enums and strings as strings."""
    string = record.value is str or isinstance(record.value, tuple)
    return Cpt(signal_class, record.suffix, kind=record.kind, string=string)


def _attributes(kinds):
    """The attributes of the records of those kinds."""
    return tuple(record.attribute for record in SETTINGS + WRITTEN + READINGS
                 if record.kind in kinds)


def _components():
    made = {}
    for records, signal_class in ((SETTINGS, EpicsSignalWithRBV), (WRITTEN, EpicsSignal),
                                  (COMMANDS, EpicsSignal), (READINGS, EpicsSignalRO)):
        for record in records:
            made[record.attribute] = _component(record, signal_class)
    return made


class _Publishing:
    """What ClusterCUDAPlugin adds to its records."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The driver must not wait for a plugin that finds at its own pace.
        self.stage_sigs["blocking_callbacks"] = "No"

    def arrays_taken(self):
        """Arrays the plugin has finished or dropped since it started."""
        return self.array_counter.get() + self.dropped_arrays.get()

    def publish_status(self, timeout=None):
        """Publishes now; the status is done once the publication's results
        (spectrum, line, counts) are posted, which Publications_RBV says."""
        before = self.publications.get()
        status = SubscriptionStatus(self.publications, lambda value, **_: value > before,
                                    timeout=timeout, run=False)
        self.publish.put(1)
        return status


ClusterCUDAPlugin = register_plugin(type("ClusterCUDAPlugin", (_Publishing, PluginBase_V35), {
    "__doc__": "NDPluginClusterCUDA: every record of db/NDClusterCUDA.template.",
    "__module__": __name__,
    "_default_suffix": "Cluster1:",
    "_suffix_re": r"Cluster\d:",
    "_html_docs": [],
    "_plugin_type": PLUGIN_TYPE,
    # ADBase reads nothing by default; the table's kinds say what is read.
    "_default_read_attrs": _attributes(("hinted", "normal")),
    "_default_configuration_attrs": ("enable", "blocking_callbacks", "nd_array_port",
                                     "plugin_type") + _attributes(("config",)),
    **_components(),
}))


def _wait_until(condition, signals, timeout):
    """Returns once condition() holds, checked whenever one of signals
    changes; WaitTimeoutError after timeout seconds (None: never)."""
    changed = threading.Event()

    def poke(**_):
        changed.set()

    subscriptions = [(signal, signal.subscribe(poke)) for signal in signals]
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while not condition():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not changed.wait(left):
                raise WaitTimeoutError("the plugin took not every array within %s s" % timeout)
            changed.clear()
    finally:
        for signal, token in subscriptions:
            signal.unsubscribe(token)


def acquire_and_publish(device, cam, cluster, timeout=None):
    """One acquisition of cam, then the plugin caught up and published: a
    status of device that is done when the plugin's results cover every
    array the acquisition made (timeout: seconds, None waits for ever)."""
    status = DeviceStatus(device, timeout=timeout)
    made_before = cam.array_counter.get()
    taken_before = cluster.arrays_taken()

    def follow():
        try:
            # Acquire is a busy record: its put completes with the acquisition.
            acquired = threading.Event()
            cam.acquire.put(1, use_complete=True, callback=lambda *_, **__: acquired.set())
            if not acquired.wait(timeout):
                raise WaitTimeoutError("the acquisition did not end within %s s" % timeout)
            made = cam.array_counter.get() - made_before
            _wait_until(lambda: cluster.arrays_taken() - taken_before >= made,
                        (cluster.array_counter, cluster.dropped_arrays), timeout)
            cluster.publish_status(timeout).wait()
        except Exception as error:  # the trigger's status carries it to the plan
            status.set_exception(error)
        else:
            status.set_finished()

    threading.Thread(target=follow, name=device.name + "-trigger", daemon=True).start()
    return status


class ClusterDetector(DetectorBase):
    """A driver at cam1: feeding NDPluginClusterCUDA at Cluster1:; each
    trigger is one acquisition of cam.num_images frames."""

    cam = Cpt(AreaDetectorCam, "cam1:")
    cluster = Cpt(ClusterCUDAPlugin, "Cluster1:")
    _default_read_attrs = ("cluster",)
    _default_configuration_attrs = ("cam", "cluster")

    def __init__(self, *args, trigger_timeout=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.trigger_timeout = trigger_timeout
        self.stage_sigs.update([("cam.acquire", 0), ("cam.image_mode", "Multiple")])
        # The driver's settings a run depends on; its other records may be
        # absent from a driver's database.
        self.cam.configuration_attrs = ["acquire_time", "acquire_period", "num_images",
                                        "image_mode"]
        self.cam.read_attrs = []

    def trigger(self):
        return acquire_and_publish(self, self.cam, self.cluster, self.trigger_timeout)
