#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# build_aare_cuda.sh DEPS BUILD OUT: builds OUT/aare_cuda_bench, PSI aare's
# GPU cluster finder beside ours (tools/peers/aare_cuda_bench.cu), on a
# machine with nvcc. DEPS holds the pinned tarballs it needs and their
# MANIFEST.tsv (../shared/deps, or a GPU kit's peers/ folder with copies):
# aare's branch feature/cuda_clusterfinder at 5922c73 (header-only for the
# finder), fmt and nlohmann json (aare's headers include them); each is
# checked against its sha256 before it is unpacked. BUILD is a built tree
# of this project (its clusterCore/.libs/libclustercore.so). Nothing is
# fetched: the GPU machine reaches no network.
set -eu
[ $# -eq 3 ] || { sed -n '3,12s/^# \{0,1\}//p' "$0" >&2; exit 2; }
deps=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "build_aare_cuda: $*" >&2; exit 1; }

# unpack NAME: the tarball of component NAME (MANIFEST.tsv: name,
# version, upstream, commit, sha256) into $out/src/NAME, once its sha256
# is checked.
unpack() {
    line=$(awk -v name="$1" '$1 == name' "$deps/MANIFEST.tsv" | head -n 1)
    [ -n "$line" ] || die "$deps/MANIFEST.tsv has no $1"
    tarball=$deps/$1-$(echo "$line" | cut -f2).tar.gz
    [ -f "$tarball" ] || die "no $tarball"
    echo "$(echo "$line" | cut -f5)  $tarball" | sha256sum -c --quiet - ||
        die "$tarball does not match MANIFEST.tsv's sha256"
    rm -rf "$out/src/$1" && mkdir -p "$out/src/$1"
    tar -xzf "$tarball" -C "$out/src/$1" --strip-components=1
}
for name in aare fmt json; do unpack $name; done
library=$build/clusterCore/.libs
[ -f "$library/libclustercore.so" ] || die "no $library/libclustercore.so: build the project first"

src=$out/src
includes="-I$top/clusterCore -I$top/tools"
# The copy ceiling as the project compiles C; the harness with aare's own
# flags (its Makefile's, for sm_90), its headers' warnings suppressed.
gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror \
    $includes -I/usr/local/cuda/include \
    -c "$top/tools/copy_ceiling.c" -o "$out/copy_ceiling.o"
nvcc -std=c++17 -O3 -arch=${CUDA_ARCH:-sm_90} --extended-lambda \
    --expt-relaxed-constexpr -DFMT_HEADER_ONLY -DAARE_LOG_LEVEL=logERROR \
    -diag-suppress 128,177,2417 \
    -I"$src/aare/include" -I"$src/fmt/include" -I"$src/json/single_include" \
    $includes -Xcompiler -Wall,-Wextra \
    "$top/tools/peers/aare_cuda_bench.cu" "$out/copy_ceiling.o" \
    -L"$library" -lclustercore \
    -Xlinker -rpath="$library" -o "$out/aare_cuda_bench"
echo "build_aare_cuda: $out/aare_cuda_bench"
