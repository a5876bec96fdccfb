#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# fuzz_corpus.sh: every fuzz target (tests/fuzz/targets.h) replayed over
# its committed corpus (tests/fuzz/corpus/TARGET: seeds, truncations and
# what fuzzing found) and over seeds the current writers make: no crash,
# no sanitizer report, no broken invariant. No randomness: a test, which
# ./quickstart fuzz extends by fuzzing.
. "$(dirname "$0")/common.sh"
replay=$builddir/tests/fuzz/replay
corpus=$(dirname "$0")/fuzz/corpus
"$builddir/tests/fuzz/seeds" "$work/seeds" || fail "the seed writer failed"
targets=$("$replay" 2>&1 | sed -n 's/^  \([a-z_0-9]*\) .*/\1/p')
[ -n "$targets" ] || fail "replay lists no targets"
for target in $targets; do
    [ -d "$corpus/$target" ] || fail "no committed corpus for $target"
    [ -d "$work/seeds/$target" ] || fail "the seed writer made no seeds for $target"
    "$replay" "$target" "$corpus/$target" "$work/seeds/$target" ||
        fail "$target failed on its corpus"
done
echo "PASS: every target replayed its corpus"
