#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# deps_builder.sh: tools/deps/build.sh refuses a tarball whose sha256 is
# not the lock's, and one that is missing, before it builds anything; it
# names the components when asked for one it does not know; and, where the
# stack has been built, a second run builds nothing: every part it is asked
# for is found cached.
. "$(dirname "$0")/common.sh"
builder=$(cd "$(dirname "$0")/../tools/deps" && pwd)/build.sh

# A tampered tarball: refused, nothing unpacked.
mkdir "$work/tarballs"
echo "not EPICS base" >"$work/tarballs/epics-base-R7.0.8.1.tar.gz"
bash "$builder" --cache "$work/cache" --tarballs "$work/tarballs" base >"$work/out" 2>&1 &&
    fail "a tampered tarball was built: $(cat "$work/out")"
grep -q "epics-base-R7.0.8.1.tar.gz: sha256 [0-9a-f]* is not the lock's a612535cd81ec207" "$work/out" ||
    fail "the tampered tarball is not named: $(cat "$work/out")"
[ -z "$(ls "$work"/cache/*/base-R7.0.8.1 2>/dev/null)" ] || fail "the tampered tarball was unpacked"
[ -z "$(ls "$work"/cache/*/.stamps 2>/dev/null)" ] || fail "a stamp was written: $(ls "$work"/cache/*/.stamps)"
echo "ok: a tarball whose sha256 is not the lock's is refused, nothing unpacked"

# A missing one: named, with the folder looked in.
rm "$work/tarballs/epics-base-R7.0.8.1.tar.gz"
bash "$builder" --cache "$work/cache" --tarballs "$work/tarballs" base >"$work/out" 2>&1 &&
    fail "a missing tarball was not noticed"
grep -q "$work/tarballs/epics-base-R7.0.8.1.tar.gz is missing" "$work/out" ||
    fail "the missing tarball is not named: $(cat "$work/out")"
echo "ok: a missing tarball is named"

bash "$builder" --cache "$work/cache" --tarballs "$work/tarballs" epics >"$work/out" 2>&1 &&
    fail "an unknown component was accepted"
grep -q "no component epics (components: base asyn" "$work/out" ||
    fail "the components are not listed: $(cat "$work/out")"
echo "ok: an unknown component is refused, the components listed"

# The stack this build was configured against, if any: asked again for the
# parts it has, the builder finds them all cached and builds none.
env_file=$(bash "$builder" --env)
tarballs=${DEPS_TARBALLS:-$(cd "$(dirname "$0")/.." && pwd)/../shared/deps}
if [ -r "$env_file" ] && [ -d "$tarballs" ]; then
    parts=$(bash "$builder" --only-cached | sed -n 's/^\([a-z]*\): cached.*/\1/p' | tr '\n' ' ')
    [ -n "$parts" ] || fail "$env_file exists, but no part is cached"
    # shellcheck disable=SC2086
    bash "$builder" --tarballs "$tarballs" $parts >"$work/out" 2>&1 || fail "$(cat "$work/out")"
    ! grep -q "^deps: building" "$work/out" || fail "a cached part was built again: $(cat "$work/out")"
    for part in $parts; do
        grep -q "^deps: $part *cached" "$work/out" || fail "$part not reported cached: $(cat "$work/out")"
    done
    echo "ok: run again, the builder finds every built part cached: $parts"
else
    echo "not checked: a second run (no stack built at $env_file, or no tarballs at $tarballs)"
fi
