#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ioc_device_bundle.sh [BUILD [BUNDLE]]: packs the example IOC of a build
# (default build/, configured with CUDA) into a folder (default
# .ioc-bundle/, git-ignored) that runs on a machine with no EPICS and no
# package registry, such as the lent H200 (Ubuntu 24.04: glibc, libstdc++
# and the NVIDIA driver are there; everything else travels):
#   bin/      the IOC, caget/caput/camonitor (tools/ holds source_totals and
#             clusterfind, examples/ simulate_raw: the IOC tests' oracles)
#   lib/      libclustercore, the plugin, ADMoenchSim, EPICS base, asyn,
#             busy, calc, sscan, ADCore, libcudart and the Debian libraries
#             they need (HDF5, TIFF, XML2, ...), stripped; not glibc,
#             libstdc++ or libgcc_s, which every target has
#   ioc/ db/ adcore/db/ iocBoot/   iocClusterCUDA.dbd, our templates,
#             ADCore's, st.cmd and its autosave request file; envPaths
#             turns autosave and PV Access on where the build has them
#   hdf5-plugins/  the HDF5 filter plugins beside the build's HDF5 (Debian's
#             hdf5-filter-plugin, hdf5-filter-plugin-blosc-serial: LZ4 and
#             Blosc for NDFileHDF5's compression), when installed
#   tools/    ioc_bench.sh, ioc_source_bench.sh, ioc_soak.sh, ioc_lib.sh,
#             ioc_process.sh
#   tests/    the IOC tests to run on the GPU (ioc_gpu_fault.sh, and
#             ioc_restart.sh: autosave and the files loaded at start) and
#             what they source
#   and, when the build has the real MÖNCH chain (iocMoench): iocMoench,
#   moenchSimReceiver, PSI's virtual MÖNCH server, slsReceiver and
#   sls_detector_put/get in bin/, their libraries in lib/, the driver's
#   template in sls/, iocBoot/iocMoench, ioc_sls_bench.sh and sls_chain.sh
#   run.sh    unpacks what travels gzipped (every file over a MiB), sets
#             LD_LIBRARY_PATH, writes the paths of where it lies, and runs
#             the benchmark with the CUDA backend (run.sh without arguments
#             says how)
# It bundles what is built here; it never fetches or builds anything.
# Then it checks the bundle: every library of every program resolves into
# lib/ or to the system's glibc and C++ runtime.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
bundle=${2:-$top/.ioc-bundle}
say() { echo "ioc_device_bundle: $*" >&2; }
die() { say "$*"; exit 1; }

ioc_bin=$build/ioc/.libs/iocClusterCUDA
[ -x "$ioc_bin" ] || die "no IOC in $build (configure found no EPICS, or it is not built)"
. "$build/ioc/epicsTools"                      # caget=, caput=, ADCORE_OP_ADL=
epics_bin=$(dirname "$caget")
adcore=${ADCORE_OP_ADL%/ADApp/op/adl}
build_libs=$build/clusterCore/.libs:$build/NDPluginClusterCUDA/.libs:$build/moenchSource/.libs

# The C library and C++ runtime every Linux target has: not bundled.
system_lib() {
    case $1 in
    linux-vdso.so.*|ld-linux-x86-64.so.*|libc.so.*|libm.so.*|libpthread.so.*|\
    libdl.so.*|librt.so.*|libresolv.so.*|libutil.so.*|libstdc++.so.*|libgcc_s.so.*)
        return 0 ;;
    esac
    return 1
}

# The real MÖNCH chain, when the build has it.
sls_ioc=$build/ioc/.libs/iocMoench
sls_programs=""
if [ -x "$sls_ioc" ]; then
    sls_bin=$(sed -n 's/^SLS_BIN=//p' "$build/ioc/epicsTools")
    sls_driver=$(sed -n 's/^epicsEnvSet("SLS_DRIVER", "\(.*\)")$/\1/p' "$build/ioc/envPaths")
    sls_programs="$sls_ioc $build/moenchSimReceiver/.libs/moenchSimReceiver"
    for program in moenchDetectorServer_virtual slsReceiver sls_detector_put sls_detector_get; do
        sls_programs="$sls_programs $sls_bin/$program"
    done
fi

rm -rf "$bundle"
mkdir -p "$bundle"/{bin,lib,hdf5-plugins,ioc,db,adcore/db,iocBoot/iocClusterCUDA,tools}
# built_program PATH: the program itself, not libtool's wrapper script.
built_program() {
    real=$build/$(dirname "$1")/.libs/$(basename "$1")
    [ -x "$real" ] && echo "$real" || echo "$build/$1"
}
source_totals=$(built_program tools/source_totals)
clusterfind=$(built_program tools/clusterfind)
simulate_raw=$(built_program examples/simulate_raw)
mkdir -p "$bundle/examples"
programs="$ioc_bin $epics_bin/caget $epics_bin/caput $epics_bin/camonitor $source_totals $clusterfind $simulate_raw $sls_programs"
cp "$ioc_bin" "$epics_bin/caget" "$epics_bin/caput" "$epics_bin/camonitor" $sls_programs "$bundle/bin/"
# Where the tests and ioc_soak.sh --build look for them.
cp "$source_totals" "$clusterfind" "$bundle/tools/"
cp "$simulate_raw" "$bundle/examples/"
# HDF5 loads its filter plugins from the folder beside its library.
hdf5_lib=$(LD_LIBRARY_PATH=$build_libs ldd "$ioc_bin" | awk '/libhdf5/ {print $3; exit}')
hdf5_plugins=$(dirname "${hdf5_lib:-/none}")/hdf5/serial/plugins
[ -d "$hdf5_plugins" ] && cp "$hdf5_plugins"/*.so "$bundle/hdf5-plugins/" 2>/dev/null
programs="$programs $(ls "$bundle"/hdf5-plugins/*.so 2>/dev/null | tr '\n' ' ')"

# Every library the programs need, under the name they ask for.
LD_LIBRARY_PATH=$build_libs ldd $programs 2>/dev/null |
    awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
    while read -r name path; do
        system_lib "$name" && continue
        cp -L "$path" "$bundle/lib/$name"
    done
ls "$bundle/lib" | grep -q libcudart ||
    say "note: this build has no CUDA backend (no libcudart): the bundle runs the CPU backend only"
bundled_tools="$bundle/tools/source_totals $bundle/tools/clusterfind $bundle/examples/simulate_raw"
chmod u+w "$bundle"/bin/* "$bundle"/lib/* $bundled_tools
strip --strip-unneeded "$bundle"/bin/* "$bundle"/lib/* $bundled_tools

# Databases, templates and the start-up script.
cp "$build/ioc/iocClusterCUDA.dbd" "$bundle/ioc/"
cp "$top"/db/*.template "$top"/db/*.req "$bundle/db/"
cp "$adcore"/db/*.template "$adcore"/db/*.req "$bundle/adcore/db/"
cp "$top/iocBoot/iocClusterCUDA/st.cmd" "$top/iocBoot/iocClusterCUDA/iocClusterCUDA.req" \
    "$bundle/iocBoot/iocClusterCUDA/"
# What the build's envPaths turns on (autosave, PV Access): run.sh adds it
# to the envPaths it writes.
grep -E '^epicsEnvSet\("(AUTOSAVE|PVA)"' "$build/ioc/envPaths" >"$bundle/ioc/envFeatures" || true
cp "$top/iocBoot/operators.acf" "$top/iocBoot/clusterPva.iocsh" "$bundle/iocBoot/"
cp "$top"/tools/ioc_bench.sh "$top"/tools/ioc_source_bench.sh "$top"/tools/ioc_soak.sh \
    "$top"/tools/ioc_lib.sh "$top"/tools/ioc_process.sh "$bundle/tools/"
mkdir -p "$bundle/tests"
cp "$top"/tests/common.sh "$top"/tests/ioc_common.sh "$top"/tests/ioc_gpu_fault.sh \
    "$top"/tests/ioc_restart.sh "$bundle/tests/"
if [ -n "$sls_programs" ]; then
    mkdir -p "$bundle"/iocBoot/iocMoench "$bundle"/sls/db "$bundle"/sls/slsDetectorApp/Db
    cp "$build/ioc/iocMoench.dbd" "$bundle/ioc/"
    cp "$top"/iocBoot/iocMoench/* "$bundle/iocBoot/iocMoench/"
    cp "$sls_driver/db/slsDetector.template" "$bundle/sls/db/"
    cp "$sls_driver/slsDetectorApp/Db/slsDetector_settings.req" "$bundle/sls/slsDetectorApp/Db/"
    cp "$top"/tools/ioc_sls_bench.sh "$top"/tools/sls_chain.sh "$bundle/tools/"
fi

cat >"$bundle/run.sh" <<'EOF'
#!/bin/bash
# run.sh [bench|source|soak|sls|ioc|check|all] [OPTIONS]: the example IOC from this
# bundle, wherever it lies, with nothing but its own libraries besides
# glibc, libstdc++ and the NVIDIA driver.
#   bench [OPTIONS]  tools/ioc_bench.sh --backend cuda OPTIONS (later
#                    options win: --backend cpu, --pinned 0, --rates ...)
#   source [OPTIONS] tools/ioc_source_bench.sh OPTIONS: the frame source
#                    alone, every plugin off
#   soak [OPTIONS]   tools/ioc_soak.sh --backend cuda OPTIONS
#   sls [OPTIONS]    tools/ioc_sls_bench.sh --backend cuda OPTIONS: the real
#                    MÖNCH chain (virtual server, receiver, iocMoench)
#   ioc              the IOC alone, its shell on this terminal
#   test NAME        the IOC test tests/NAME.sh (ioc_gpu_fault,
#                    ioc_restart) against this bundle
#   check            what the programs and libraries take from outside
#                    lib/ (only glibc, libstdc++, libgcc_s: else say so)
#   all              the benchmark set for the GPU machine: CUDA with
#                    page-locked arrays (HDF5 off and on), CUDA with
#                    pageable arrays, the CPU backend, 5 s a run (about
#                    6 minutes); markdown and IOC logs into $OUT (default .)
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here/lib HDF5_PLUGIN_PATH=$here/hdf5-plugins
# Programs and libraries that travel compressed are unpacked once.
for packed in "$here"/lib/*.gz "$here"/bin/*.gz; do
    [ -e "$packed" ] && [ ! -e "${packed%.gz}" ] || continue
    gzip -dc "$packed" >"${packed%.gz}.part" && chmod +x "${packed%.gz}.part" &&
        mv "${packed%.gz}.part" "${packed%.gz}"
done
cat >"$here/ioc/envPaths" <<PATHS
epicsEnvSet("CLUSTER_BUILD", "$here")
epicsEnvSet("CLUSTER_TOP", "$here")
epicsEnvSet("ADCORE", "$here/adcore")
epicsEnvSet("EPICS_BASE", "$here")
epicsEnvSet("SLS_DRIVER", "$here/sls")
PATHS
cat "$here/ioc/envFeatures" >>"$here/ioc/envPaths"
printf 'caget=%s\ncaput=%s\ncamonitor=%s\nSLS_BIN=%s\n' "$here/bin/caget" "$here/bin/caput" \
    "$here/bin/camonitor" "$here/bin" >"$here/ioc/epicsTools"
for ioc in iocClusterCUDA iocMoench; do
    # The user and host starting the IOC are its operators (operators.acf).
    printf '#!/bin/sh\nexport CLUSTER_OPERATORS="${CLUSTER_OPERATORS:-$(id -un)}"\nexport CLUSTER_OPERATOR_HOSTS="${CLUSTER_OPERATOR_HOSTS:-$(hostname)}"\ncd "%s/ioc" && exec ../bin/%s ../iocBoot/%s/st.cmd\n' \
        "$here" $ioc $ioc >"$here/ioc/run-$ioc"
    chmod +x "$here/ioc/run-$ioc"
done
what=${1:-help}
[ $# -gt 0 ] && shift
case $what in
bench) exec "$here/tools/ioc_bench.sh" --build "$here" --backend cuda "$@" ;;
source) exec "$here/tools/ioc_source_bench.sh" --build "$here" "$@" ;;
soak) exec "$here/tools/ioc_soak.sh" --build "$here" --backend cuda "$@" ;;
sls) exec "$here/tools/ioc_sls_bench.sh" --build "$here" --backend cuda "$@" ;;
ioc) exec "$here/ioc/run-iocClusterCUDA" ;;
test) builddir=$here exec sh "$here/tests/$1.sh" ;;
check) # what resolves outside lib/: only the system's C and C++ runtime
    ldd "$here"/bin/* "$here"/lib/*.so* "$here"/tools/source_totals "$here"/tools/clusterfind \
        "$here"/examples/simulate_raw 2>/dev/null |
        awk -v lib="$here/lib/" '$2 == "=>" && index($3, lib) != 1 {print $1, $2, $3}' |
        sort | uniq -c ;;
all)
    out=${OUT:-.} bench="$here/tools/ioc_bench.sh --build $here --seconds 5 --warmup 2"
    $bench --backend cuda --hdf5 both --log "$out/ioc_cuda_pinned.log" "$@" >"$out/ioc_bench_cuda_pinned.md"
    $bench --backend cuda --pinned 0 --hdf5 off --log "$out/ioc_cuda_pageable.log" "$@" >"$out/ioc_bench_cuda_pageable.md"
    $bench --backend cpu --hdf5 off --rates 0,1300,6000,20000 --log "$out/ioc_cpu.log" "$@" >"$out/ioc_bench_cpu.md"
    cat "$out"/ioc_bench_cuda_pinned.md "$out"/ioc_bench_cuda_pageable.md "$out"/ioc_bench_cpu.md ;;
*) awk 'NR > 1 && /^#/ {print; next} NR > 1 {exit}' "$0"; exit 2 ;;
esac
EOF
chmod +x "$bundle/run.sh"

# The check: with LD_LIBRARY_PATH on lib/ alone, every dependency of every
# program and library is in lib/ or is the system's C and C++ runtime.
bad=$(LD_LIBRARY_PATH=$bundle/lib ldd "$bundle"/bin/* "$bundle"/lib/* $(ls "$bundle"/hdf5-plugins/*.so 2>/dev/null) $bundled_tools 2>&1 |
    awk -v lib="$bundle/lib/" '
        /:$/ { file = $1; next }
        $2 == "=>" && $3 == "not" { print file, $1, "not found"; next }
        $2 == "=>" && index($3, lib) != 1 { print file, $1, $3 }' |
    while read -r file name path; do system_lib "$name" || echo "$file $name $path"; done)
[ -z "$bad" ] || { echo "$bad" >&2; die "libraries resolve outside the bundle"; }
# What is over a MiB travels gzipped (a third of its size); run.sh
# unpacks it.
for big in $(find "$bundle/lib" "$bundle/bin" -type f -size +1M); do gzip -9 "$big"; done
size=$(du -sm "$bundle" | cut -f1)
say "$bundle: $(ls "$bundle/lib" | wc -l) libraries, $(ls "$bundle/hdf5-plugins" | wc -l) HDF5 filter plugins, $size MiB; every library resolves into lib/ or to glibc/libstdc++"
[ "$size" -lt 60 ] || say "warning: $size MiB, over the 60 MiB budget"
