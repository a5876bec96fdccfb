#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mutate.sh [--gpu-results FILE] [NAME...]: plants each failure of
# tests/mutations/NAME.patch (all of them when no NAME is given) in a
# scratch copy of the tree, builds it and runs the tests the patch names;
# a mutation is caught when one of them fails. Exits 1 when a mutation
# survives (every test it names passed), goes untested (they skipped), no
# longer applies or does not build, or when the unmutated tree fails.
#
# Each patch starts with its description, then a unified diff against the
# top of the tree:
#   Mutation: what is planted
#   Promise:  what the project promises, which the mutation breaks
#   Tests:    Automake test names (tests/unit, tests/ioc_plugin.sh, ...)
#   Where:    here, or gpu for those only a GPU can catch
# Mutations "here" run on this machine. Those for a GPU are planted in a
# `make dist` tarball each, in build-mutations/gpu/, with the unmutated
# one as baseline.tar.gz: `tools/gpu_check.sh mutations` builds and tests
# them on a GPU machine (their kit's mutations/ folder), and its results
# file, given back here with --gpu-results, fills their rows.
#
# The copy and its build live in build-mutations/ (kept between runs: a
# mutation rebuilds only what it touches). A full run writes the report
# into docs/mutations.md; one of named mutations, build-mutations/report.md.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
scratch=$top/build-mutations
src=$scratch/src
build=$scratch/build
jobs=$(nproc 2>/dev/null || echo 2)
gpu_results=""
if [ "${1:-}" = "--gpu-results" ]; then
    gpu_results=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
    shift 2
fi

say() { printf 'mutate: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
# field FILE NAME: the value of the description line "NAME: value".
field() { sed -n "s/^$2: *//p;/^--- /q" "$1" | head -n 1; }

if [ $# -eq 0 ]; then
    set -- $(cd "$top/tests/mutations" && ls -- *.patch | sed 's/\.patch$//')
    full=yes
else
    full=no
fi
for name; do
    patch=$top/tests/mutations/$name.patch
    [ -f "$patch" ] || die "no mutation $name ($patch)"
    for key in Mutation Promise Tests Where; do
        [ -n "$(field "$patch" $key)" ] || die "$name.patch has no '$key:' line"
    done
done

# The scratch copy: what git tracks or would track. Only files whose
# content differs are copied, and they get the time of the copy: so the
# build redoes what changed since the last run, and what a mutation left
# (its objects are newer than the restored source a plain copy would
# give back its old time).
mkdir -p "$src" "$scratch/gpu"
(cd "$top" && git ls-files -co --exclude-standard) | while IFS= read -r file; do
    [ -e "$top/$file" ] && ! cmp -s "$top/$file" "$src/$file" || continue
    mkdir -p "$(dirname "$src/$file")"
    rm -f "$src/$file"
    cp "$top/$file" "$src/$file"
done
if [ ! -x "$src/configure" ] || [ "$src/configure.ac" -nt "$src/configure" ]; then
    say "bootstrapping the copy (autoreconf)"
    (cd "$src" && autoreconf -fi >/dev/null 2>&1)
fi
mkdir -p "$build"
if [ ! -f "$build/Makefile" ]; then
    say "configuring build-mutations/build"
    (cd "$build" && "$src/configure" -q)
fi
make_quietly() { make -s -C "$build" -j"$jobs" "$@" >"$scratch/make.log" 2>&1; }

# run_tests TESTS...: make check of those tests; prints each that failed,
# with the unit checks that failed ("tests/unit (suite:check, ...)").
run_tests() {
    timeout 3600 make -C "$build" -j"$jobs" check TESTS="$*" >/dev/null 2>&1 || true
    for test; do
        result=$(sed -n 's/^:test-result: //p' "$build/$test.trs" 2>/dev/null | head -n 1)
        case $result in
        PASS | SKIP) ;;
        *)
            # Check's failures (file:line:F:case:test:...), else the
            # script's first "FAIL: why", else how it ended.
            why=$("$top/tools/check_failures.sh" "$build/$test.log")
            [ -n "$why" ] || why=$(sed -n 's/.*FAIL: //p' "$build/$test.log" 2>/dev/null |
                head -n 1 | sed 's|/[^ ]*/||g' | cut -c1-140 | tr '|' '/')
            [ -n "$why" ] || why=$(tail -n 1 "$build/$test.log" 2>/dev/null | tr '|' '/')
            echo "$test ($why)" ;;
        esac
    done
}
# skipped TESTS...: those of TESTS that skipped in the last run.
skipped() {
    for test; do
        grep -q '^:test-result: SKIP' "$build/$test.trs" 2>/dev/null && echo "$test"
    done
    return 0
}

say "building the unmutated copy"
make_quietly || die "the unmutated copy does not build: $scratch/make.log"
here_tests=""
for name; do
    [ "$(field "$top/tests/mutations/$name.patch" Where)" = here ] &&
        here_tests="$here_tests $(field "$top/tests/mutations/$name.patch" Tests)"
done
here_tests=$(echo $here_tests | tr ' ' '\n' | sort -u | tr '\n' ' ')
if [ -n "$here_tests" ]; then
    say "the unmutated copy first: $here_tests"
    failed=$(run_tests $here_tests)
    [ -z "$failed" ] || die "the unmutated copy fails: $failed (logs in build-mutations/build)"
fi

results=$scratch/results
: >"$results"
status=0
for name; do
    patch=$top/tests/mutations/$name.patch
    where=$(field "$patch" Where)
    tests=$(field "$patch" Tests)
    patch -p1 -s -d "$src" --dry-run <"$patch" >/dev/null 2>&1 ||
        { say "$name: the patch no longer applies: refresh it"; echo "$name|stale|" >>"$results"; status=1; continue; }
    patch -p1 -s -d "$src" <"$patch"
    if [ "$where" = gpu ]; then
        # Built here too (with nvcc when configure found it): a mutation
        # that does not compile is not sent to the GPU.
        say "$name: building the mutated copy and packing it for a GPU"
        if make_quietly && make_quietly dist; then
            mv "$build"/ndpluginclustercuda-*.tar.gz "$scratch/gpu/$name.tar.gz"
            echo "$name|gpu|" >>"$results"
        else
            echo "$name|unbuilt|" >>"$results"; status=1
        fi
    elif ! make_quietly; then
        say "$name: the mutated copy does not build ($scratch/make.log)"
        echo "$name|unbuilt|" >>"$results"; status=1
    else
        say "$name: planted; running $tests"
        caught=$(run_tests $tests | tr '\n' ';' | sed 's/;$//;s/;/; /g')
        if [ -n "$caught" ]; then
            say "$name: caught by $caught"
            echo "$name|caught|$caught" >>"$results"
        elif untested=$(skipped $tests | tr '\n' ' ') && [ -n "$untested" ]; then
            say "$name: NOT TESTED: ${untested}skipped"
            echo "$name|untested|$untested" >>"$results"; status=1
        else
            say "$name: SURVIVED: $tests all passed"
            echo "$name|survived|" >>"$results"; status=1
        fi
    fi
    patch -p1 -s -R -d "$src" <"$patch"
done
if grep -q '|gpu|' "$results"; then
    make_quietly dist && mv "$build"/ndpluginclustercuda-*.tar.gz "$scratch/gpu/baseline.tar.gz"
    say "for a GPU: copy build-mutations/gpu/*.tar.gz into the kit's mutations/ folder, run tools/gpu_check.sh mutations there"
fi

# The report: one row a mutation.
report=$scratch/report.md
{
    echo "Planted by \`tools/mutate.sh\` on $(date -u +%Y-%m-%d), $(uname -n), $(nproc) cores, at $(cd "$top" && git describe --always --dirty)."
    echo
    echo "| mutation | promise | tests run | result |"
    echo "|---|---|---|---|"
    for name; do
        patch=$top/tests/mutations/$name.patch
        line=$(grep "^$name|" "$results" | head -n 1)
        outcome=$(echo "$line" | cut -d'|' -f2)
        detail=$(echo "$line" | cut -d'|' -f3-)
        case $outcome in
        caught) result="caught by $detail" ;;
        gpu)
            gpu_line=$([ -n "$gpu_results" ] && grep "^$name|" "$gpu_results" | head -n 1 || true)
            if [ -n "$gpu_line" ]; then
                result="$(echo "$gpu_line" | cut -d'|' -f2) on the GPU by $(echo "$gpu_line" | cut -d'|' -f3-)"
            else
                result="for a GPU: not run here"
            fi ;;
        *) result="**$outcome** $detail" ;;
        esac
        echo "| \`$name\`: $(field "$patch" Mutation) | $(field "$patch" Promise) | $(field "$patch" Tests) | $result |"
    done
    [ -z "$gpu_results" ] || { echo; sed -n 's/^# //p' "$gpu_results"; }
} >"$report"
cat "$report"
if [ "$full" = yes ]; then
    doc=$top/docs/mutations.md
    begin='<!-- the report: tools/mutate.sh writes what follows -->'
    end='<!-- end of the report -->'
    grep -qF "$begin" "$doc" || die "$doc has no report markers"
    awk -v begin="$begin" -v end="$end" -v report="$report" '
        $0 == begin { print; while ((getline line < report) > 0) print line; skip = 1; next }
        $0 == end { skip = 0 }
        !skip' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
    say "report written into docs/mutations.md"
fi
exit $status
