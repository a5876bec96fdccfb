#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_pva.sh: the example IOC serves the finder's arrays over PV Access
# (iocBoot/clusterPva.iocsh, NDPluginPva) and its records (QSRV); read with
# p4p, each equals what Channel Access and NDFileHDF5 give for the same
# array: every frame's cluster array against NDFileHDF5's (values,
# uniqueId, both time stamps, NumClusters and DroppedClusters), and the
# counting image, the pedestal's maps, the mask, the interpolated image
# and the corrections' maps against their NDStdArrays waveforms (values,
# uniqueId, time stamp) with the Map attribute saying what each is. SKIP
# (77) without EPICS, or an IOC built without PV Access.
. "$(dirname "$0")/common.sh"
need_python "numpy h5py" "python3-numpy python3-h5py"
. "$(dirname "$0")/ioc_common.sh"
grep -q '"PVA"' "$builddir/ioc/envPaths" || {
    echo "SKIP: the IOC is built without PV Access (configure found no ADCore built with PVA)"
    exit 77
}
need_pyclients

raw_run 12
"$clusterfind" --pedestal "$dark" --data "$data" --pedestal-frames 100 \
    --backend cpu --energy-window 600:1100 --eta-bins 20 \
    --eta-calibrate "$work/offline.eta" >"$work/find.txt" 2>&1 ||
    fail "clusterfind: $(cat "$work/find.txt")"
# A relative gain map near 1, to have address 7 published.
$python -c "
import numpy
numpy.save('$work/gain.npy', 1 + 0.01 * (numpy.arange(160000) % 7).reshape(400, 400))"

start_ioc 1
put "${C}EnableCallbacks" 1
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:AcquirePeriod" 0
put "${C}PedestalFrames" 100
put "${C}SpectrumPeriod" 1000 # published on Publish alone
put "${C}WindowHigh" 1100
put "${C}WindowLow" 600
put "${C}WindowEnable" 1
put "${C}CommonMode" Supercolumn
putstr "${C}GainMapFile" "$work/gain.npy"
put "${C}LoadGainMap" 1
put "${C}GainMode" Apply
putstr "${C}EtaFile" "$work/offline.eta"
put "${C}Subpixels" 3
put "${C}EtaMode" Interpolate
for records in image1 interp1 pedestal1 noise1 mask1 commonMode1 gain1; do
    put "${P}$records:EnableCallbacks" 1
done
put "${P}Pva:Clusters:EnableCallbacks" 1
replay "$dark" 100
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] ||
    fail "the pedestal is not Ready: $(getstr "${C}StatusMessage_RBV")"

# Every data frame's cluster array, over PVA and into HDF5.
hdf5_stream pva 40
"$pyclients" "$(dirname "$0")/ioc_pva.py" collect "${P}Pva:Clusters" 40 \
    "$work/pva_clusters.npz" "$work/subscribed" >"$work/collect.txt" 2>&1 &
collector=$!
poll eval '[ -e "$work/subscribed" ] || ! kill -0 $collector 2>/dev/null'
[ -e "$work/subscribed" ] || fail "no PVA subscription: $(cat "$work/collect.txt")"
put "${P}cam1:AcquirePeriod" 0.05 # 20 arrays a second: no queue overflows
replay "$data" 40
wait_for "${P}HDF1:Capture_RBV" 0
wait $collector || fail "$(cat "$work/collect.txt")"
[ "$(get "${P}Pva:Clusters:DroppedArrays_RBV")" = 0 ] ||
    fail "NDPluginPva dropped cluster arrays"

# One publication of every map (none periodic: SpectrumPeriod 1000),
# read over CA as the PVA side reads it once each map's plugins, the
# NDStdArrays and the NDPluginPva, have taken it.
map_plugins="image1: interp1: pedestal1: noise1: mask1: commonMode1: gain1:
    Pva:HitMap: Pva:Image: Pva:PedestalMean: Pva:PedestalNoise: Pva:Mask:
    Pva:CommonMode: Pva:Gain:"
for plugin in $map_plugins; do
    echo "$plugin $(get "${P}${plugin}ArrayCounter_RBV")"
done >"$work/map_counters.txt"
put "${C}Publish" 1
while read -r plugin counter; do
    poll eval '[ "$(get "${P}${plugin}ArrayCounter_RBV")" -gt "$counter" ]' ||
        fail "${P}${plugin} took no array of the publication"
done <"$work/map_counters.txt"
for map in HitMap:image1:-n PedestalMean:pedestal1:-e8 PedestalNoise:noise1:-e8 \
    Mask:mask1:-n Image:interp1:-n CommonMode:commonMode1:-e8 Gain:gain1:-e8; do
    name=${map%%:*} rest=${map#*:}
    records=${rest%%:*} format=${rest#*:}
    "$caget" -w $ca_wait -t "$format" "${P}$records:ArrayData" >"$work/$name.txt" ||
        fail "caget ${P}$records:ArrayData"
    for rbv in UniqueId_RBV EpicsTSSec_RBV EpicsTSNsec_RBV; do
        echo "$rbv $(get "${P}$records:$rbv")"
    done >"$work/$name.rbv"
done
for record in Cluster1:TotalClusters_RBV Cluster1:ArrayCounter_RBV; do
    getcount "${P}$record" >"$work/$(echo "$record" | tr : _).ca"
done
"$pyclients" "$(dirname "$0")/ioc_pva.py" compare "$P" "$work" ||
    fail "PV Access and Channel Access or NDFileHDF5 differ"
echo "the IOC's arrays over PV Access pass"
