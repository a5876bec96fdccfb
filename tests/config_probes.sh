#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# config_probes.sh: configure records what it looked for (config.probes),
# and tools/config_probes_changed.sh, which quickstart asks before it
# reuses a build, notices a file that has appeared or gone since: a build
# configured before EPICS was installed is configured again once it is.
. "$(dirname "$0")/common.sh"
changed=$(dirname "$0")/../tools/config_probes_changed.sh

[ -s "$builddir/config.probes" ] || fail "configure wrote no config.probes"
grep -q "include/epicsVersion.h$" "$builddir/config.probes" ||
    fail "config.probes does not record EPICS base: $(cat "$builddir/config.probes")"
"$changed" "$builddir" && fail "this build's probes changed without cause"

# A record made before a file existed, then the file made.
mkdir "$work/build"
echo "no $work/epics/include/epicsVersion.h" >"$work/build/config.probes"
"$changed" "$work/build" && fail "a file still absent counts as a change"
mkdir -p "$work/epics/include" && : >"$work/epics/include/epicsVersion.h"
why=$("$changed" "$work/build") || fail "a file that appeared is not noticed"
case $why in *"epicsVersion.h has appeared"*) ;; *) fail "not said why: $why" ;; esac
# And the other way round: a file found then, gone now.
echo "yes $work/gone" >"$work/build/config.probes"
"$changed" "$work/build" >/dev/null || fail "a file that went is not noticed"
rm "$work/build/config.probes"
"$changed" "$work/build" && fail "no record counts as a change"
echo "config.probes: a file appeared or gone is noticed, an unchanged build is not"
