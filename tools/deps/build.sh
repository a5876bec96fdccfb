#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# build.sh: builds the outside stack the tests run against (EPICS base with
# PVA, synApps' asyn, busy, calc, sscan and autosave, ADCore, MEDM,
# slsDetectorPackage, PSI's slsDetector driver, caQtDM, aare) from the
# pinned tarballs of deps.lock, into a cache prefix named after the lock's
# sha256, laid out as synApps lays out a beamline's tree:
#
#   PREFIX/base-R7.0.8.1                      EPICS base, PVA modules inside
#   PREFIX/support/asyn-R4-45 ...             synApps modules, versioned
#   PREFIX/support/areaDetector-R3-14/ADCore  areaDetector's top and ADCore
#   PREFIX/support/areaDetector-R3-14/slsDetector-v9.2.0   PSI's driver
#   PREFIX/extensions/bin/linux-x86_64/medm   MEDM (extensions' top)
#   PREFIX/sls/slsDetectorPackage-9.2.0       slsDetectorPackage, installed
#   PREFIX/caqtdm-V4.5.0                      caQtDM and its run_env.sh
#   PREFIX/aare-2026.9.30/venv                a venv with aare
#   PREFIX/env.sh                             what configure and the tests read
#
# Each component is built once: a stamp in PREFIX/.stamps holds its build
# time, so a second run is a no-op, and a run stopped half-way goes on from
# the first component not stamped. Each tarball's sha256 is checked against
# the lock before it is unpacked; nothing is fetched but Debian packages
# and, for aare, its sdist and Python build requirements from PyPI.
#
# Usage: build.sh [--tarballs DIR] [--cache DIR] [--only-cached] [--env] [COMPONENT...]
#   COMPONENT    build these (and what they need); default all:
#                base asyn sscan calc busy autosave adcore medm sls driver caqtdm aare
#   --tarballs   the folder of tarballs (default ../shared/deps beside the checkout)
#   --cache      the cache root (default $NDCLUSTER_DEPS_CACHE, else for
#                root /var/cache/ndpluginclustercuda/deps, for another user
#                ${XDG_CACHE_HOME:-$HOME/.cache}/ndpluginclustercuda/deps)
#   --only-cached  build nothing: print what is cached and what is not
#   --env        print only the path of PREFIX/env.sh (nothing is built)
# Logs: PREFIX/.logs/COMPONENT.log. Jobs: $DEPS_JOBS, default nproc.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
lock=$here/deps.lock
. "$top/tools/debian_packages.sh"

tarballs=$top/../shared/deps
# root's cache is the system's: EPICS clients run as other users too.
if [ "$(id -u)" -eq 0 ]; then
    cache=/var/cache/ndpluginclustercuda/deps
else
    cache=${XDG_CACHE_HOME:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache}/ndpluginclustercuda/deps
fi
cache=${NDCLUSTER_DEPS_CACHE:-$cache}
umask 022
only_cached=no
print_env=no
wanted=()
while [ $# -gt 0 ]; do
    case $1 in
    --tarballs) tarballs=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --only-cached) only_cached=yes; shift ;;
    --env) print_env=yes; shift ;;
    -h | --help) sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    -*) echo "build.sh: unknown option $1" >&2; exit 2 ;;
    *) wanted+=("$1"); shift ;;
    esac
done

all=(base asyn sscan calc busy autosave adcore medm sls driver caqtdm aare)
declare -A needs=(
    [base]="" [asyn]="base" [sscan]="base" [calc]="base sscan" [busy]="base asyn"
    [autosave]="base" [adcore]="base asyn" [medm]="base" [sls]=""
    [driver]="base asyn adcore sls" [caqtdm]="base" [aare]="")
# The Debian packages each component builds and runs with.
declare -A packages=(
    [base]="build-essential perl libreadline-dev"
    [asyn]="libtirpc-dev"
    [sscan]="" [calc]="" [busy]="" [autosave]=""
    [adcore]="libhdf5-dev libtiff-dev libxml2-dev libjpeg-dev libblosc-dev libaec-dev zlib1g-dev"
    [medm]="libmotif-dev libxmu-dev libxt-dev libx11-dev libxext-dev x11-xserver-utils xfonts-75dpi xfonts-100dpi xfonts-base"
    [sls]="cmake g++"
    [driver]=""
    [caqtdm]="qtbase5-dev qtbase5-dev-tools qttools5-dev libqt5svg5-dev libqwt-qt5-dev libqt5x11extras5-dev libxext-dev python3-dev"
    [aare]="cmake g++ python3-dev python3-venv")

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
key=$(sha256_of "$lock" | cut -c1-16)
prefix=$cache/$key
[ $print_env = no ] || { echo "$prefix/env.sh"; exit 0; }

say() { printf 'deps: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# lock_lines COMPONENT: "name version file sha256" of each of its sources.
lock_lines() { awk -v c="$1" '$1 == c { print $2, $3, $4, $5 }' "$lock"; }

# unpack COMPONENT NAME DEST: the tarball NAME of COMPONENT, checked
# against the lock, unpacked into DEST (its one top folder becomes DEST).
unpack() {
    local line file sum tarball
    line=$(lock_lines "$1" | awk -v n="$2" '$1 == n')
    [ -n "$line" ] || die "deps.lock has no $2 for $1"
    read -r _ _ file sum <<<"$line"
    tarball=$tarballs/$file
    [ -r "$tarball" ] || die "$tarball is missing (the tarball folder is $tarballs)"
    [ "$(sha256_of "$tarball")" = "$sum" ] ||
        die "$tarball: sha256 $(sha256_of "$tarball") is not the lock's $sum"
    rm -rf "$3"
    mkdir -p "$3"
    tar -xzf "$tarball" -C "$3" --strip-components=1
}

arch=linux-x86_64
base=$prefix/base-R7.0.8.1
support=$prefix/support
asyn=$support/asyn-R4-45
sscan=$support/sscan-R2-11-6
calc=$support/calc-R3-7-5
busy=$support/busy-R1-7-4
autosave=$support/autosave-R6-0
area_detector=$support/areaDetector-R3-14
adcore=$area_detector/ADCore
driver=$area_detector/slsDetector-v9.2.0
extensions=$prefix/extensions
sls=$prefix/sls/slsDetectorPackage-9.2.0
caqtdm=$prefix/caqtdm-V4.5.0
aare=$prefix/aare-2026.9.30
jobs=${DEPS_JOBS:-$(nproc)}

# release_file DIR VARIABLE=PATH...: DIR/configure/RELEASE names exactly
# the modules given (a module's own RELEASE names its authors' paths).
release_file() {
    local dir=$1
    shift
    { echo "# written by NDPluginClusterCUDA's tools/deps/build.sh"
      printf '%s\n' "$@"
      echo "EPICS_BASE=$base"; } >"$dir/configure/RELEASE"
}

build_base() {
    unpack base epics-base "$base"
    local module
    for module in pvData pvAccess normativeTypes pvDatabase pva2pva pvaClient; do
        unpack base "$module" "$base/modules/$module"
    done
    make -C "$base" -j"$jobs"
}

build_asyn() {
    unpack asyn asyn "$asyn"
    release_file "$asyn" "SUPPORT=$support"
    echo "TIRPC=YES" >"$asyn/configure/CONFIG_SITE.local"
    make -C "$asyn" -j"$jobs"
}

build_sscan() {
    unpack sscan sscan "$sscan"
    release_file "$sscan" "SUPPORT=$support"
    make -C "$sscan" -j"$jobs"
}

build_calc() {
    unpack calc calc "$calc"
    release_file "$calc" "SUPPORT=$support" "SSCAN=$sscan"
    make -C "$calc" -j"$jobs"
}

build_busy() {
    unpack busy busy "$busy"
    release_file "$busy" "SUPPORT=$support" "ASYN=$asyn"
    make -C "$busy" -j"$jobs"
}

build_autosave() {
    unpack autosave autosave "$autosave"
    release_file "$autosave" "SUPPORT=$support"
    make -C "$autosave" -j"$jobs"
}

# areaDetector's top: its configure/ as areaDetector's own repository lays
# it out (RELEASE_LIBS_INCLUDE, RELEASE_LIBS.local, CONFIG_SITE.local),
# written here; ADCore and PSI's driver include them from $(TOP)/..
area_detector_top() {
    local conf=$area_detector/configure
    mkdir -p "$conf"
    cat >"$conf/RELEASE_LIBS_INCLUDE" <<EOF
# written by NDPluginClusterCUDA's tools/deps/build.sh
AREA_DETECTOR=$area_detector
-include \$(AREA_DETECTOR)/configure/RELEASE_LIBS.local
EOF
    cat >"$conf/RELEASE_LIBS.local" <<EOF
SUPPORT=$support
ASYN=$asyn
ADCORE=\$(AREA_DETECTOR)/ADCore
EPICS_BASE=$base
EOF
    cat >"$conf/CONFIG_SITE" <<'EOF'
-include $(AREA_DETECTOR)/configure/CONFIG_SITE.local
EOF
    # Debian's libraries for every format; no ADSupport.
    cat >"$conf/CONFIG_SITE.local" <<'EOF'
BUILD_IOCS=NO
WITH_PVA=YES
WITH_QSRV=YES
WITH_BOOST=NO
WITH_BITSHUFFLE=NO
WITH_GRAPHICSMAGICK=NO
WITH_NETCDF=NO
WITH_NEXUS=NO
WITH_OPENCV=NO
WITH_HDF5=YES
HDF5_EXTERNAL=YES
HDF5_INCLUDE=/usr/include/hdf5/serial
HDF5_LIB=/usr/lib/x86_64-linux-gnu/hdf5/serial
WITH_BLOSC=YES
BLOSC_EXTERNAL=YES
WITH_SZIP=YES
SZIP_EXTERNAL=YES
WITH_JPEG=YES
JPEG_EXTERNAL=YES
WITH_TIFF=YES
TIFF_EXTERNAL=YES
XML2_EXTERNAL=YES
XML2_INCLUDE=/usr/include/libxml2
WITH_ZLIB=YES
ZLIB_EXTERNAL=YES
EOF
}

build_adcore() {
    area_detector_top
    unpack adcore ADCore "$adcore"
    make -C "$adcore" -j"$jobs"
}

# MEDM with Debian's Motif: no libXp (gone from Debian), X11 and Motif
# from the multiarch folder; fonts.alias maps MEDM's widgetDM_* fonts onto
# Debian's bitmap fonts (a font folder an X server adds with xset +fp).
build_medm() {
    unpack medm extensions "$extensions"
    unpack medm medm "$extensions/src/medm"
    cat >"$extensions/configure/RELEASE" <<EOF
EPICS_BASE=$base
EPICS_EXTENSIONS=\$(TOP)
EOF
    cat >"$extensions/configure/os/CONFIG_SITE.$arch.$arch" <<'EOF'
X11_LIB=/usr/lib/x86_64-linux-gnu
X11_INC=/usr/include
MOTIF_LIB=/usr/lib/x86_64-linux-gnu
MOTIF_INC=/usr/include
EOF
    make -C "$extensions/src/medm" -j"$jobs" USR_LIBS_Linux="Xm Xt Xmu X11 Xext"
    local fonts=$extensions/fonts size
    mkdir -p "$fonts"
    for size in 4 6 8 10 12 14 16 18 20 22 24 30 36 40 48 60; do
        # Debian's 75/100 dpi Helvetica: the nearest pixel size MEDM asks.
        local px=$size
        [ "$px" -ge 8 ] || px=8
        [ "$px" -le 34 ] || px=34
        case $px in 9) px=10 ;; 11 | 13) px=12 ;; 15 | 16) px=14 ;; 19 | 20 | 21) px=18 ;; 22 | 23 | 25 | 26 | 27 | 28 | 29 | 30 | 31 | 32 | 33) px=24 ;; esac
        echo "widgetDM_$size -adobe-helvetica-medium-r-normal--$px-*-*-*-p-*-iso8859-1"
    done >"$fonts/fonts.alias"
    echo 0 >"$fonts/fonts.dir"
}

build_sls() {
    local src=$prefix/src/slsDetectorPackage-9.2.0
    unpack sls slsDetectorPackage "$src"
    cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$sls" -DSLS_USE_SIMULATOR=ON -DSLS_USE_RECEIVER=ON \
        -DSLS_USE_TEXTCLIENT=ON -DSLS_USE_GUI=OFF -DSLS_USE_PYTHON=OFF \
        -DSLS_USE_HDF5=OFF -DSLS_DEVEL_HEADERS=ON
    cmake --build "$src/build" -j"$jobs"
    cmake --install "$src/build"
    rm -rf "$src"
}

# PSI's driver, with the sls libraries built above in place of the
# prebuilt ones its repository ships; its example IOCs are not built.
build_driver() {
    unpack driver slsDetector "$driver"
    rm -rf "$driver/iocs"
    local os=$driver/slsDetectorApp/slsDetectorSupport/os/$arch
    local lib
    for lib in SlsDetector SlsSupport; do
        rm -f "$os/lib$lib.so" "$os/lib$lib.so.9"
        cp "$sls/lib/lib$lib.so.9" "$os/lib$lib.so.9" 2>/dev/null ||
            cp "$(readlink -f "$sls/lib/lib$lib.so")" "$os/lib$lib.so.9"
        ln -s "lib$lib.so.9" "$os/lib$lib.so"
    done
    cat >"$driver/configure/RELEASE.local" <<EOF
SUPPORT=$support
ASYN=$asyn
AUTOSAVE=$autosave
ADCORE=$adcore
EPICS_BASE=$base
EOF
    make -C "$driver" -j1
}

build_caqtdm() {
    unpack caqtdm caQtDM "$caqtdm"
    (
        cd "$caqtdm"
        export QTHOME=/usr QWTHOME=/usr QWTINCLUDE=/usr/include/qwt QWTLIBNAME=qwt-qt5 \
            QWTVERSION=6.1 EPICS_HOST_ARCH=$arch PYTHONVERSION=3.11 EPICS_BASE=$base \
            EPICSINCLUDE=$base/include EPICSLIB=$base/lib/$arch EPICSEXTENSIONS=$caqtdm \
            QTCONTROLS_LIBS=$caqtdm/caQtDM_Binaries CAQTDM_COLLECT=$caqtdm/caQtDM_Binaries \
            QTBASE=$caqtdm/caQtDM_Binaries CAQTDM_CA_ARCHIVELIBS=$caqtdm/caQtDM_Binaries \
            CAQTDM_LOGGING_ARCHIVELIBS=$caqtdm/caQtDM_Binaries \
            QTDM_LIBINSTALL=$caqtdm/lib QTDM_BININSTALL=$caqtdm/bin \
            QTDM_RPATH=$caqtdm/caQtDM_Binaries:$base/lib/$arch \
            PYTHONINCLUDE=/usr/include/python3.11 PYTHONLIB=/usr/lib/x86_64-linux-gnu
        mkdir -p caQtDM_Binaries/designer caQtDM_Binaries/controlsystems
        qmake all.pro
        make -j"$jobs"
    )
    cat >"$caqtdm/run_env.sh" <<EOF
# caQtDM as tools/deps/build.sh built it: source this, then run caQtDM.
export PATH=$caqtdm/caQtDM_Binaries:\$PATH
export LD_LIBRARY_PATH=$caqtdm/caQtDM_Binaries:$base/lib/$arch\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export QT_PLUGIN_PATH=$caqtdm/caQtDM_Binaries
export CAQTDM_DEFAULT_UPDATERATE=10
EOF
}

# aare from its sdist on PyPI, its CMake dependencies from the tarballs
# (nothing fetched by CMake), into a venv of Debian's Python.
build_aare() {
    local src=$prefix/src/aare
    local python=/usr/bin/python3
    [ -x "$python" ] || python=python3
    rm -rf "$aare" "$src"
    mkdir -p "$src"
    local dep
    for dep in Minuit2 fmt json libzmq; do
        unpack aare "$dep" "$src/$dep"
    done
    "$python" -m venv --system-site-packages "$aare/venv"
    local pip=$aare/venv/bin/pip
    # Debian's pip 23.0 in the venv: --config-settings, not -C.
    "$pip" install -q scikit-build-core pybind11 numpy setuptools_scm
    local line spec sum
    line=$(lock_lines aare | awk '$1 == "aare"')
    read -r _ _ spec sum <<<"$line"
    spec=${spec#pypi:}
    "$pip" download -q --no-deps --no-binary :all: --no-build-isolation -d "$src/sdist" "$spec"
    local sdist
    sdist=$(ls "$src"/sdist/*.tar.gz)
    [ "$(sha256_of "$sdist")" = "$sum" ] ||
        die "$sdist: sha256 $(sha256_of "$sdist") is not the lock's $sum"
    mkdir -p "$src/aare"
    tar -xzf "$sdist" -C "$src/aare" --strip-components=1
    patch -d "$src/libzmq" -p1 <"$src/aare/patches/libzmq_cmake_version.patch"
    CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$pip" install -q --no-build-isolation \
        --config-settings=cmake.define.FETCHCONTENT_FULLY_DISCONNECTED=ON \
        --config-settings=cmake.define.AARE_FETCH_PYBIND11=OFF \
        --config-settings=cmake.define.pybind11_DIR="$("$aare/venv/bin/python" -m pybind11 --cmakedir)" \
        --config-settings=cmake.define.FETCHCONTENT_SOURCE_DIR_MINUIT2="$src/Minuit2" \
        --config-settings=cmake.define.FETCHCONTENT_SOURCE_DIR_FMT="$src/fmt" \
        --config-settings=cmake.define.FETCHCONTENT_SOURCE_DIR_JSON="$src/json" \
        --config-settings=cmake.define.FETCHCONTENT_SOURCE_DIR_LIBZMQ="$src/libzmq" \
        "$src/aare"
    "$aare/venv/bin/python" -c 'import aare' || die "aare does not import"
    rm -rf "$src"
}

# env.sh: what configure and the tests read, for the components built.
# Not busy, calc, sscan and autosave: configure finds them beside asyn, as
# in a beamline's synApps tree, so every build against the stack checks
# that it does.
write_env() {
    {
        echo "# The outside stack of tools/deps/build.sh (lock $key); source it."
        echo "export EPICS_HOST_ARCH=$arch"
        stamped base && echo "export EPICS_BASE=$base"
        stamped asyn && echo "export ASYN=$asyn"
        stamped adcore && echo "export ADCORE=$adcore"
        stamped sls && echo "export SLSDETECTOR=$sls"
        stamped driver && echo "export SLSDETECTOR_DRIVER=$driver"
        stamped medm && echo "export PATH=$extensions/bin/$arch:\$PATH MEDM_FONT_PATH=$extensions/fonts"
        stamped caqtdm && echo "export CAQTDM_ENV=$caqtdm/run_env.sh"
        stamped aare && echo "export AARE_PYTHON=$aare/venv/bin/python"
        true
    } >"$prefix/env.sh"
}

stamped() { [ -f "$prefix/.stamps/$1" ]; }

# The components asked for and what they need, in build order.
closure=()
add_with_needs() {
    local c n
    for c in "$@"; do
        [ -n "${needs[$c]+set}" ] || die "no component $c (components: ${all[*]})"
        # shellcheck disable=SC2086
        add_with_needs ${needs[$c]}
        [[ " ${closure[*]} " == *" $c "* ]] || closure+=("$c")
    done
}
[ ${#wanted[@]} -gt 0 ] || wanted=("${all[@]}")
add_with_needs "${wanted[@]}"
ordered=()
for c in "${all[@]}"; do
    [[ " ${closure[*]} " == *" $c "* ]] && ordered+=("$c")
done

if [ $only_cached = yes ]; then
    for c in "${ordered[@]}"; do
        if stamped "$c"; then echo "$c: cached ($(cat "$prefix/.stamps/$c") s to build)"; else echo "$c: not built"; fi
    done
    exit 0
fi

mkdir -p "$prefix/.stamps" "$prefix/.logs"
debs=""
for c in "${ordered[@]}"; do debs="$debs ${packages[$c]}"; done
# shellcheck disable=SC2086
install_debian_packages $debs

say "prefix $prefix (lock $key), tarballs from $tarballs, $jobs jobs"
summary=()
for c in "${ordered[@]}"; do
    if stamped "$c"; then
        summary+=("$(printf '%-9s cached (built in %s s)' "$c" "$(cat "$prefix/.stamps/$c")")")
        continue
    fi
    say "building $c (log: $prefix/.logs/$c.log)"
    start=$(date +%s)
    if ! (set -x; "build_$c") >"$prefix/.logs/$c.log" 2>&1; then
        tail -n 40 "$prefix/.logs/$c.log" >&2
        die "$c failed after $(($(date +%s) - start)) s; its log: $prefix/.logs/$c.log"
    fi
    seconds=$(($(date +%s) - start))
    echo "$seconds" >"$prefix/.stamps/$c"
    summary+=("$(printf '%-9s built in %s s' "$c" "$seconds")")
    write_env
done
write_env
printf 'deps: %s\n' "${summary[@]}" >&2
say "environment: $prefix/env.sh"
