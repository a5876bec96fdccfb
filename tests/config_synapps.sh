#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# config_synapps.sh: configure finds busy, calc, sscan and autosave in the
# layouts beamlines have: synApps' versioned folders beside asyn (the
# newest version chosen), plain names, a support/configure/RELEASE naming
# them elsewhere, and --with-* or the environment, which win. The EPICS
# trees are files configure looks for, made empty here: configure only
# checks that they exist.
. "$(dirname "$0")/common.sh"
srcdir=$(cd "$(dirname "$0")/.." && pwd)
export EPICS_HOST_ARCH=linux-x86_64
# What the caller's environment names (the stack's env.sh) is not looked at.
unset BUSY CALC SSCAN AUTOSAVE

# module DIR FILE...: the files of a module, empty.
module() {
    dir=$1
    shift
    for file in "$@"; do
        mkdir -p "$(dirname "$dir/$file")" && : >"$dir/$file"
    done
}

# stack SUPPORT BUSY CALC SSCAN AUTOSAVE: base, asyn and ADCore in SUPPORT's
# tree, and the four modules at the folders given.
stack() {
    module "$1/../base" include/epicsVersion.h lib/$EPICS_HOST_ARCH/libCom.so
    module "$1/asyn-R4-45" include/asynPortDriver.h
    module "$1/areaDetector-R3-14/ADCore" include/NDPluginDriver.h lib/$EPICS_HOST_ARCH/libNDPlugin.so
    module "$2" dbd/busySupport.dbd
    module "$3" dbd/calcSupport.dbd
    module "$4" dbd/sscanSupport.dbd
    module "$5" dbd/asSupport.dbd lib/$EPICS_HOST_ARCH/libautosave.so
}

# configured NAME [VARIABLE=VALUE...]: configure in $work/NAME/build against
# $work/NAME's tree, with $extra's arguments and the environment given;
# prints the folders of busy, calc, sscan and autosave that the Makefile
# uses.
configured() {
    name=$1
    shift
    mkdir -p "$work/$name/build"
    # shellcheck disable=SC2086
    (cd "$work/$name/build" && env "$@" \
        "$srcdir/configure" -q --without-cuda --without-slsdetector --disable-unit-tests \
        --with-epics-base="$work/$name/base" --with-asyn="$work/$name/support/asyn-R4-45" \
        --with-adcore="$work/$name/support/areaDetector-R3-14/ADCore" ${extra:-} >configure.out 2>&1) ||
        fail "configure failed for $name: $(tail -n 20 "$work/$name/build/configure.out")"
    makefile=$work/$name/build/Makefile
    dbd_path=$(sed -n 's/^EPICS_DBD_PATH = //p' "$makefile")
    [ -n "$dbd_path" ] ||
        fail "$name: configure found no EPICS: $(grep 'EPICS plugin' "$work/$name/build/config.log")"
    for dbd in busySupport calcSupport sscanSupport; do
        for dir in $dbd_path; do
            [ ! -f "$dir/$dbd.dbd" ] || printf '%s ' "${dir%/dbd}"
        done
    done
    sed -n 's/^AUTOSAVE_DIR = //p' "$makefile"
}

# expect NAME WANT [VARIABLE=VALUE...]
expect() {
    name=$1 want=$2
    shift 2
    got=$(configured "$name" "$@") || { echo "$got"; exit 1; }
    [ "$got" = "$want" ] || fail "$name: configure chose
  $got
instead of
  $want"
    echo "$name: $got"
}

# synApps' versioned folders; an older busy beside the newer one.
s=$work/versioned/support
stack "$s" "$s/busy-R1-7-4" "$s/calc-R3-7-5" "$s/sscan-R2-11-6" "$s/autosave-R6-0"
module "$s/busy-R1-7-2" dbd/busySupport.dbd
expect versioned "$s/busy-R1-7-4 $s/calc-R3-7-5 $s/sscan-R2-11-6 $s/autosave-R6-0"

# Plain names.
s=$work/plain/support
stack "$s" "$s/busy" "$s/calc" "$s/sscan" "$s/autosave"
expect plain "$s/busy $s/calc $s/sscan $s/autosave"

# Elsewhere, named by synApps' support/configure/RELEASE through $(SUPPORT).
s=$work/release/support
o=$work/release/other
stack "$s" "$o/busy-1" "$o/calc-2" "$o/sscan-3" "$o/autosave-4"
mkdir -p "$s/configure"
cat >"$s/configure/RELEASE" <<EOF
SUPPORT=$o
BUSY=\$(SUPPORT)/busy-1
CALC=\$(SUPPORT)/calc-2
SSCAN = \${SUPPORT}/sscan-3
AUTOSAVE=\$(SUPPORT)/autosave-4
EOF
expect release "$o/busy-1 $o/calc-2 $o/sscan-3 $o/autosave-4"

# Given: --with-busy and the environment's CALC win over the siblings.
s=$work/given/support
stack "$s" "$s/busy" "$s/calc" "$s/sscan" "$s/autosave"
module "$work/given/mine/busy" dbd/busySupport.dbd
module "$work/given/mine/calc" dbd/calcSupport.dbd
extra=--with-busy=$work/given/mine/busy expect given \
    "$work/given/mine/busy $work/given/mine/calc $s/sscan $s/autosave" CALC="$work/given/mine/calc"

# A missing module is named in the reason.
s=$work/missing/support
stack "$s" "$s/busy-R1-7-4" "$s/calc-R3-7-5" "$s/sscan-R2-11-6" "$s/autosave-R6-0"
rm -r "$s/calc-R3-7-5"
mkdir -p "$work/missing/build"
(cd "$work/missing/build" && "$srcdir/configure" --without-cuda --without-slsdetector \
    --disable-unit-tests --with-epics-base="$work/missing/base" \
    --with-asyn="$s/asyn-R4-45" --with-adcore="$s/areaDetector-R3-14/ADCore" >configure.out 2>&1) ||
    fail "configure failed without calc: $(tail -n 20 "$work/missing/build/configure.out")"
grep -q "EPICS plugin: *no (missing: $s/calc/dbd/calcSupport.dbd)" "$work/missing/build/configure.out" ||
    fail "without calc, configure says: $(grep 'EPICS plugin' "$work/missing/build/configure.out")"
echo "missing: $(grep -o 'EPICS plugin: .*' "$work/missing/build/configure.out")"
