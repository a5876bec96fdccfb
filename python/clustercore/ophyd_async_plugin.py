# SPDX-License-Identifier: BSD-3-Clause
"""ophyd-async devices for NDPluginClusterCUDA (pip install
'./python[bluesky]'; docs/bluesky.md).

ClusterCUDAIO is the plugin on ophyd-async's NDPluginBaseIO: every record
of db/NDClusterCUDA.template a signal, enums as StrictEnums of the
record's states, commands as booleans (True acts).

ClusterCUDAReadout is the plugin as a Bluesky readable: the records that
clustercore.plugin_records marks hinted or normal are read (uncached) at
every event, the config ones once a run. Its publish() has the plugin
publish now and is done once the publication's results are posted, so
that a plan reads the spectrum and line of every frame taken.
"""
import re
from typing import Annotated as A

import numpy as np
from ophyd_async.core import (Array1D, AsyncStatus, SignalR, SignalRW, SignalW,
                              StandardReadable, StandardReadableFormat, StrictEnum,
                              wait_for_value)
from ophyd_async.epics.adcore import NDPluginBaseIO
from ophyd_async.epics.core import PvSuffix

from .plugin_records import ARRAY, COMMANDS, READINGS, SETTINGS, WRITTEN


def _datatype(record):
    if isinstance(record.value, tuple):
        members = {re.sub(r"\W+", "_", state).upper(): state for state in record.value}
        return StrictEnum(record.suffix, members, module=__name__)
    return Array1D[np.float64] if record.value == ARRAY else record.value


def _annotations():
    hints = {}
    for record in SETTINGS:
        hints[record.attribute] = A[SignalRW[_datatype(record)], PvSuffix.rbv(record.suffix)]
    for record in WRITTEN:
        hints[record.attribute] = A[SignalW[_datatype(record)], PvSuffix(record.suffix)]
    for record in COMMANDS:
        hints[record.attribute] = A[SignalW[bool], PvSuffix(record.suffix)]
    for record in READINGS:
        hints[record.attribute] = A[SignalR[_datatype(record)], PvSuffix(record.suffix)]
    return hints


ClusterCUDAIO = type("ClusterCUDAIO", (NDPluginBaseIO,), {
    "__doc__": "NDPluginClusterCUDA: every record of db/NDClusterCUDA.template.",
    "__module__": __name__,
    "__annotations__": _annotations(),
})

_FORMATS = {"hinted": StandardReadableFormat.HINTED_UNCACHED_SIGNAL,
            "normal": StandardReadableFormat.UNCACHED_SIGNAL,
            "config": StandardReadableFormat.CONFIG_SIGNAL}


class ClusterCUDAReadout(StandardReadable):
    """The plugin at prefix (e.g. "13MOENCH1:Cluster1:") as a readable."""

    def __init__(self, prefix, name=""):
        self.plugin = ClusterCUDAIO(prefix)
        for record in SETTINGS + READINGS:  # WRITTEN's Backend reads as Backend_RBV
            if record.kind in _FORMATS:
                self.add_readables([getattr(self.plugin, record.attribute)],
                                   _FORMATS[record.kind])
        super().__init__(name=name)

    @AsyncStatus.wrap
    async def publish(self, timeout=10.0):
        """Publishes now; done once Publications_RBV has moved on."""
        before = await self.plugin.publications.get_value()
        await self.plugin.publish.set(True)
        await wait_for_value(self.plugin.publications, lambda value: value > before,
                             timeout)

