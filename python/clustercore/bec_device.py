# SPDX-License-Identifier: BSD-3-Clause
"""A BEC device for a MÖNCH read through NDPluginClusterCUDA (pip install
'./python[bec]'; docs/bluesky.md; an example device config in
python/examples/bec_moench.yaml).

MoenchClusterCUDA is built on PSI's ophyd_devices PSIDeviceBase, whose
hooks BEC calls: on_stage takes the scan's frames_per_trigger (and
exp_time, when the scan gives one) into the driver, on_trigger is one
acquisition followed by the plugin catching up and publishing (as
clustercore.ophyd_plugin.ClusterDetector's trigger), on_complete waits
for the driver to be idle, on_stop stops it; on_unstage puts back what
on_stage changed.
"""
from ophyd import Component as Cpt
from ophyd.areadetector.cam import AreaDetectorCam
from ophyd.status import SubscriptionStatus
from ophyd_devices.interfaces.base_classes.psi_device_base import PSIDeviceBase

from .ophyd_plugin import ClusterCUDAPlugin, acquire_and_publish


class MoenchClusterCUDA(PSIDeviceBase):
    """The driver at cam1: and NDPluginClusterCUDA at Cluster1: of prefix."""

    cam = Cpt(AreaDetectorCam, "cam1:")
    cluster = Cpt(ClusterCUDAPlugin, "Cluster1:")

    def __init__(self, prefix="", *, name, trigger_timeout=60.0, **kwargs):
        self.trigger_timeout = trigger_timeout
        self._restore = []
        super().__init__(prefix, name=name, **kwargs)

    def on_init(self):
        self.stage_sigs.update([("cam.acquire", 0), ("cam.image_mode", "Multiple")])
        # The driver's settings a scan depends on; its other records may
        # be absent from a driver's database.
        self.cam.configuration_attrs = ["acquire_time", "acquire_period", "num_images",
                                        "image_mode"]
        self.cam.read_attrs = []

    def on_stage(self):
        parameters = self.scan_info.msg.scan_parameters
        wanted = [(self.cam.num_images, int(parameters.get("frames_per_trigger") or 1))]
        if parameters.get("exp_time"):
            wanted.append((self.cam.acquire_time, float(parameters["exp_time"])))
        self._restore = [(signal, signal.get()) for signal, _ in wanted]
        for signal, value in wanted:
            signal.set(value).wait(self.trigger_timeout)

    def on_unstage(self):
        for signal, value in reversed(self._restore):
            signal.set(value).wait(self.trigger_timeout)
        self._restore = []

    def on_trigger(self):
        status = acquire_and_publish(self, self.cam, self.cluster, self.trigger_timeout)
        self.cancel_on_stop(status)
        return status

    def on_complete(self):
        return SubscriptionStatus(self.cam.acquire, lambda value, **_: value == 0,
                                  timeout=self.trigger_timeout)

    def on_stop(self):
        self.cam.acquire.put(0)
