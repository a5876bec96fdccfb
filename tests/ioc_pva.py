# SPDX-License-Identifier: BSD-3-Clause
"""ioc_pva.py: the example IOC's arrays over PV Access (p4p) against what
Channel Access and NDFileHDF5 give for the same arrays (tests/ioc_pva.sh).

usage: ioc_pva.py collect PV N OUT.npz READY
       ioc_pva.py compare PREFIX WORK

collect subscribes to the NTNDArray PV, touches READY once subscribed, and
keeps the first N updates (values, dimensions, uniqueId, both time stamps
and the attributes) in OUT.npz. compare reads that, the HDF5 file
WORK/pva.h5 and the Channel Access files ioc_pva.sh wrote in WORK, and gets
each map's NTNDArray once.
"""
import json
import sys
import threading

import h5py
import numpy as np
from p4p.client.thread import Context

# EPICS time stamps count from 1990; PV Access's from 1970 (NDPluginPva
# moves both the NDArray's epicsTS and its timeStamp there).
POSIX_AT_EPICS_EPOCH = 631152000

# The maps: the PV's name after PREFIX "Pva:", the NDStdArrays plugin's
# records that serve the same address over Channel Access, and the Map
# attribute the array carries.
MAPS = [
    ("HitMap", "image1:", "counting image (photons of the energy window a pixel)"),
    ("PedestalMean", "pedestal1:", "pedestal mean (ADU)"),
    ("PedestalNoise", "noise1:", "pedestal noise rms (ADU)"),
    ("Mask", "mask1:", "bad-pixel mask (1 = masked)"),
    ("Image", "interp1:", "interpolated image (photons per sub-pixel)"),
    ("CommonMode", "commonMode1:", "common-mode rms of the pixel's region (ADU)"),
    ("Gain", "gain1:", "gain map (relative)"),
]


def unpack(value):
    """An NTNDArray as a dict of what the comparisons read."""
    dims = [int(d["size"]) for d in value["dimension"]]
    attributes = {a["name"]: a["value"] for a in value["attribute"]}
    return {
        "value": np.asarray(value["value"]).reshape(dims[::-1]),
        "uniqueId": int(value["uniqueId"]),
        "epics_ts": (int(value["timeStamp.secondsPastEpoch"]) - POSIX_AT_EPICS_EPOCH,
                     int(value["timeStamp.nanoseconds"])),
        "data_ts": int(value["dataTimeStamp.secondsPastEpoch"]) - POSIX_AT_EPICS_EPOCH
        + 1e-9 * int(value["dataTimeStamp.nanoseconds"]),
        "attributes": attributes,
    }


def collect(pv, wanted, out, ready):
    context = Context("pva", nt=False)
    got, done = [], threading.Event()

    def update(value):
        if isinstance(value, Exception) or len(got) >= wanted:
            return
        if value["value"] is None:  # the update before the first array
            return
        got.append(unpack(value))
        if len(got) >= wanted:
            done.set()

    subscription = context.monitor(pv, update, request="record[queueSize=64]")
    context.get(pv, timeout=5)  # connected
    open(ready, "w").close()
    done.wait(60)
    subscription.close()
    context.close()
    np.savez(out, values=np.array([a["value"] for a in got]),
             ids=np.array([a["uniqueId"] for a in got]),
             epics_ts=np.array([a["epics_ts"] for a in got]),
             data_ts=np.array([a["data_ts"] for a in got]),
             attributes=json.dumps([{k: float(v) for k, v in a["attributes"].items()}
                                    for a in got]))
    return 0 if len(got) == wanted else fail("%d of %d arrays of %s came" % (len(got), wanted, pv))


def fail(message):
    print("FAIL: %s" % message)
    return 1


def compare_clusters(work):
    """Each cluster array PV Access gave is NDFileHDF5's of its uniqueId."""
    pva = np.load(work + "/pva_clusters.npz")
    attributes = json.loads(str(pva["attributes"]))
    with h5py.File(work + "/pva.h5", "r") as h5:
        data = h5["/entry/data/data"][()]
        named = h5["/entry/instrument/NDAttributes"]
        h5_attr = {name: named[name][()] for name in
                   ("NDArrayUniqueId", "NDArrayTimeStamp", "NDArrayEpicsTSSec",
                    "NDArrayEpicsTSnSec", "NumClusters", "DroppedClusters")}
    row_of = {int(u): k for k, u in enumerate(h5_attr["NDArrayUniqueId"])}
    for i, unique in enumerate(pva["ids"]):
        k = row_of.get(int(unique))
        if k is None:
            return fail("cluster array %d over PVA is not in the HDF5 file" % unique)
        if not np.array_equal(pva["values"][i], data[k]):
            return fail("cluster array %d: PVA's values differ from HDF5's" % unique)
        if tuple(pva["epics_ts"][i]) != (int(h5_attr["NDArrayEpicsTSSec"][k]),
                                         int(h5_attr["NDArrayEpicsTSnSec"][k])):
            return fail("cluster array %d: time stamp %s over PVA, %s, %s in HDF5"
                        % (unique, tuple(pva["epics_ts"][i]),
                           h5_attr["NDArrayEpicsTSSec"][k], h5_attr["NDArrayEpicsTSnSec"][k]))
        if abs(pva["data_ts"][i] - float(h5_attr["NDArrayTimeStamp"][k])) > 1e-6:
            return fail("cluster array %d: data time stamp %.9f over PVA, %.9f in HDF5"
                        % (unique, pva["data_ts"][i], h5_attr["NDArrayTimeStamp"][k]))
        for name in ("NumClusters", "DroppedClusters"):
            if attributes[i].get(name) != float(h5_attr[name][k]):
                return fail("cluster array %d: %s %s over PVA, %s in HDF5"
                            % (unique, name, attributes[i].get(name), h5_attr[name][k]))
    print("ok: %d cluster arrays over PVA are NDFileHDF5's, values, uniqueId, "
          "time stamps, NumClusters and DroppedClusters" % len(pva["ids"]))
    return 0


def compare_maps(prefix, work):
    """Each map over PV Access is the NDStdArrays plugin's over CA."""
    context = Context("pva", nt=False)
    for name, records, meaning in MAPS:
        array = unpack(context.get(prefix + "Pva:" + name, timeout=5))
        with open("%s/%s.txt" % (work, name)) as f:
            ca = f.read().split()
        numbers = dict(line.split() for line in open("%s/%s.rbv" % (work, name)))
        values = array["value"].ravel()
        # Floats came with 9 significant digits, which give back the
        # float32 exactly.
        got = np.array(ca[1:1 + values.size], dtype=np.float64).astype(values.dtype)
        if values.size == 0 or got.size != values.size or not np.array_equal(got, values):
            return fail("%s: PVA's %d values differ from %sArrayData over CA"
                        % (name, values.size, records))
        if array["uniqueId"] <= 0 or array["uniqueId"] != int(numbers["UniqueId_RBV"]):
            return fail("%s: uniqueId %d over PVA, %s over CA"
                        % (name, array["uniqueId"], numbers["UniqueId_RBV"]))
        if array["epics_ts"] != (int(numbers["EpicsTSSec_RBV"]),
                                 int(numbers["EpicsTSNsec_RBV"])):
            return fail("%s: time stamp %s over PVA, %s, %s over CA"
                        % (name, array["epics_ts"], numbers["EpicsTSSec_RBV"],
                           numbers["EpicsTSNsec_RBV"]))
        if array["attributes"].get("Map") != meaning:
            return fail("%s: its Map attribute is %r, not %r"
                        % (name, array["attributes"].get("Map"), meaning))
        print("ok: %s over PVA (%s) is %sArrayData over CA, uniqueId %d, "
              "time stamp and Map %r" % (name, "x".join(map(str, array["value"].shape)),
                                         records, array["uniqueId"], meaning))
    # Every record is served over PVA too (QSRV).
    for record in ("Cluster1:TotalClusters_RBV", "Cluster1:ArrayCounter_RBV"):
        value = context.get(prefix + record, timeout=5)["value"]
        with open("%s/%s.ca" % (work, record.replace(":", "_"))) as f:
            ca = f.read().split()[0]
        if float(value) != float(ca):
            return fail("%s is %s over PVA, %s over CA" % (record, value, ca))
    print("ok: records read over PVA (QSRV) as over CA")
    context.close()
    return 0


def main():
    if sys.argv[1] == "collect":
        return collect(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    prefix, work = sys.argv[2:4]
    return compare_clusters(work) or compare_maps(prefix, work)


if __name__ == "__main__":
    sys.exit(main())
