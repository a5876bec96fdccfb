#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gpu_check.sh STEP...: on a machine with an NVIDIA GPU that has nvcc but
# no libtool or Check (the lent H200), builds a `make dist` tarball and runs
# the GPU tests, compute-sanitizer and the benchmarks. STEPs, in order:
# build, check, gpu, memcheck, racecheck, profile, detail, quickbench,
# sweep, bench, lists, threads, offline, streams, peers, mutations (those of
# tools/mutate.sh for a GPU). peers runs aare's GPU finder beside ours
# (tools/peers/aare_cuda_bench) on clusterbench's frames and on a raw
# run, from the pinned tarballs in the kit's peers/ folder. lists times both ways of issuing copies
# (clusterbench --copies) for back-to-back frames and for a list of
# separate frames, beside the copy ceilings in both directions; threads
# the CPU backend on 1 to 16 threads, and as many one-thread finders side
# by side (the host's own ceiling). offline is
# docs/benchmarks.md's run from disk. detail
# keeps Nsight Compute's stall and source reports of the decide kernel in
# $OUT. sweep times the decide kernel's launch shapes ($SWEEP_SHAPES:
# STEPS,ROWS,COLS,THREADS ...) at the cluster sizes in $SWEEP_SIZES.
#
# It reads a kit folder ($GPU_KIT, default .device, git-ignored) holding
# ndpluginclustercuda-*.tar.gz, check/include, check/lib (Debian's
# check.h, check_stdint.h, libcheck.a, libsubunit.a) and jansson/include,
# jansson/lib (jansson.h, jansson_config.h, libjansson.so.4 and a copy of
# it named libjansson.so: the static library is not built for a shared
# one), and for peers, peers/ (../shared/deps' MANIFEST.tsv and its
# aare-cuda, fmt and json tarballs, and aare 2026.9.30's wheel for the
# GPU machine's Python).
# Results go to $OUT. $TARBALL names another tarball to build (default:
# the kit's), $WORK the folder it is built in (default /tmp/ccbuild).
set -u
here=$(cd "${GPU_KIT:-.device}" && pwd)
tarball=$(realpath ${TARBALL:-$here/ndpluginclustercuda-*.tar.gz})
tools=$(cd "$(dirname "$0")" && pwd)
# The test cases of tests/gpu, each racechecked in a process of its own.
gpu_cases="full odd cap masked images moves rounding common gain faults"
OUT=${OUT:-/tmp}
work=${WORK:-/tmp/ccbuild}
log() { echo "=== $*"; }
# build_tarball TARBALL DIR: TARBALL unpacked into DIR (emptied first),
# configured against the kit and built with tests/unit and tests/gpu.
build_tarball() {
    rm -rf "$2" && mkdir -p "$2" && cd "$2"
    tar xzf "$1"
    cd ndpluginclustercuda-*/
    export PATH=/usr/local/cuda/bin:$PATH
    ./configure -q CHECK_CFLAGS="-I$here/check/include" \
        CHECK_LIBS="$here/check/lib/libcheck.a $here/check/lib/libsubunit.a -lrt -lm -lpthread" \
        JANSSON_CFLAGS="-I$here/jansson/include" \
        JANSSON_LIBS="-L$here/jansson/lib -Wl,-rpath,$here/jansson/lib -ljansson" \
        2>&1 | tail -12
    make -j16 -s 2>&1 | grep -E "error|warning" | head -20
    make -j16 -s tests/unit tests/gpu 2>&1 | grep -E "error|warning" | head
}
build() { build_tarball $tarball $work; }
# mutations: the kit's mutations/*.tar.gz (tools/mutate.sh): the baseline
# must pass tests/gpu, each mutation must fail it. Results, one line a
# mutation (NAME|caught|the failed checks, or NAME|survived|), in
# $OUT/mutations_gpu.txt.
mutations() {
    results=$OUT/mutations_gpu.txt
    echo "# Planted on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $(date -u +%Y-%m-%d), by tools/gpu_check.sh mutations." >$results
    names="baseline $(cd $here/mutations && ls *.tar.gz | sed 's/\.tar\.gz$//' | grep -vx baseline)"
    # Built side by side (each build is mostly one nvcc at a time), then
    # tested one after the other on the one GPU.
    for name in $names; do
        (build_tarball $here/mutations/$name.tar.gz /tmp/ccmut/$name >/tmp/ccmut_$name.build 2>&1) &
    done
    wait
    for name in $names; do
        program=$(echo /tmp/ccmut/$name/ndpluginclustercuda-*/tests/gpu)
        if [ ! -x $program ]; then
            echo "$name|unbuilt|" | tee -a $results; cat /tmp/ccmut_$name.build
            [ $name = baseline ] && return 1
            continue
        fi
        (cd $(dirname $program)/.. && ./tests/gpu) >$OUT/mutation_$name.log 2>&1
        rc=$?
        checks=$($tools/check_failures.sh $OUT/mutation_$name.log)
        if [ $name = baseline ]; then
            [ $rc = 0 ] || { echo "the unmutated baseline fails tests/gpu: $checks"; return 1; }
            echo "baseline: tests/gpu passes"
        elif [ $rc != 0 ]; then
            echo "$name|caught|tests/gpu (${checks:-exit status $rc})" | tee -a $results
        else
            echo "$name|survived|" | tee -a $results
        fi
        rm -rf /tmp/ccmut/$name
    done
    ! grep -q '|survived|\||unbuilt|' $results
}
for step in "$@"; do
    case $step in
    build) log build; time build ;;
    mutations) log mutations; time mutations ;;
    check)
        log check; cd $work/ndpluginclustercuda-*
        time make -j4 check 2>&1 | grep -E "^(PASS|FAIL|SKIP|ERROR)|^# " ;
        cat tests/gpu.log | tail -30; grep -E "Checks" tests/unit.log ;;
    gpu)
        log gpu tests; cd $work/ndpluginclustercuda-*
        time ./tests/gpu 2>&1 | tail -22 ;;
    memcheck)
        log memcheck; cd $work/ndpluginclustercuda-*
        CK_EXCLUDE_TAGS=planted_faults CC_GPU_TEST_FRAMES=${MEMCHECK_FRAMES:-40} compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 ./tests/gpu > $OUT/memcheck.log 2>&1; echo "memcheck exit $?"
        grep -v "^  [0-9]" $OUT/memcheck.log | head -40; tail -5 $OUT/memcheck.log
        # The planted faults are failing CUDA calls on purpose: memory
        # is checked, the calls' errors not reported.
        CK_RUN_CASE=faults CC_GPU_TEST_FRAMES=${MEMCHECK_FRAMES:-40} compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 9 ./tests/gpu > $OUT/memcheck_faults.log 2>&1; echo "memcheck of the planted faults exit $?"
        tail -5 $OUT/memcheck_faults.log ;;
    racecheck)
        # Racecheck tracks every shared-memory access of the decide
        # kernel (seconds a launch): the suite runs with
        # $RACECHECK_FRAMES frames a check (default 2), one process per
        # test case at once, each logging to $OUT/racecheck_CASE.log.
        log racecheck; cd $work/ndpluginclustercuda-*
        for case in $gpu_cases; do
            CK_RUN_CASE=$case CC_GPU_TEST_FRAMES=${RACECHECK_FRAMES:-2} \
                compute-sanitizer --tool racecheck --error-exitcode 9 \
                ./tests/gpu > $OUT/racecheck_$case.log 2>&1 &
        done
        time wait
        for case in $gpu_cases; do
            echo "--- racecheck case $case"; grep -E "Checks|RACECHECK|SUMMARY|Error" $OUT/racecheck_$case.log | tail -4
        done ;;
    quickbench)
        log quickbench; cd $work/ndpluginclustercuda-*
        ./tools/clusterbench --backends cuda --sizes 3,9 --inputs pinned --streams 2,4 --batches 256,1024 --frames 1024 --repeats 3 --seconds 0.5 | tee $OUT/bench_cuda_pinned.md ;;
    profile)
        log profile; cd $work/ndpluginclustercuda-*
        for size in 3 9; do
          for kernel in decide extract; do
            ncu --clock-control none -k regex:$kernel --launch-skip 300 --launch-count 3 --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active ./tools/clusterbench --backends cuda --sizes $size --inputs pinned --streams 2 --batches 256 --frames 512 --repeats 1 --seconds 0.2 2>&1 | grep -E "decide|extract|duration|throughput|warps_active" | head -12
          done
        done ;;
    detail)
        log detail; cd $work/ndpluginclustercuda-*
        for size in 3 9; do
            run="./tools/clusterbench --backends cuda --sizes $size --inputs pinned --streams 2 --batches 256 --frames 512 --repeats 1 --seconds 0.2"
            ncu --clock-control none -k regex:decide --launch-skip 300 --launch-count 1 --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --section LaunchStats --section Occupancy $run > $OUT/detail_$size.txt 2>&1
            ncu --clock-control none -k regex:decide --launch-skip 300 --launch-count 1 --section SourceCounters --page source --print-source sass --csv $run > $OUT/source_$size.csv 2>&1
            grep -E "Stall|Issued|Eligible|Bank|Registers|Occupancy|Duration" $OUT/detail_$size.txt | head -30
        done ;;
    sweep)
        log sweep; cd $work/ndpluginclustercuda-*
        for size in ${SWEEP_SIZES:-3 9}; do
            for shape in ${SWEEP_SHAPES:-8,25,50,512}; do
                echo "size $size shape $shape"
                ./tools/clusterbench --backends cuda --sizes $size --inputs pinned --streams 2 --batches 256 --frames 512 --repeats 3 --seconds 0.3 --cuda-shape $shape | grep "^| cuda"
            done
        done ;;
    bench)
        # The commands of docs/benchmarks.md's CUDA tables, with nvidia-smi
        # reading clocks, power and temperature every 2 s meanwhile.
        log bench; cd $work/ndpluginclustercuda-*
        query="nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu,pstate --format=csv,noheader"
        $query
        nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 2000 > $OUT/smi_during.csv &
        smi=$!
        ./tools/clusterbench --backends cuda --sizes 3,9 --inputs pinned --streams 1,2,4 --batches 256,1024 --frames 1024 --repeats 3 --seconds 0.5 | tee $OUT/bench_cuda_pinned.md
        ./tools/clusterbench --backends cuda --sizes 3,9 --inputs pageable,registered --streams 2 --batches 1024 --frames 1024 --repeats 3 --seconds 0.5 | tee $OUT/bench_cuda_pageable.md
        ./tools/clusterbench --backends cuda --sizes 3,9 --inputs pinned --streams 1 --batches 1 --frames 256 --repeats 3 --seconds 0.5 | tee $OUT/bench_cuda_latency.md
        kill $smi
        ./tools/clusterbench --backends cpu --sizes 3,9 --inputs pageable --threads 0,8 --batches 16 --frames 256 | tee $OUT/bench_cpu.md
        $query ;;
    lists)
        log lists; cd $work/ndpluginclustercuda-*
        ./tools/clusterbench --backends cuda --sizes 3,9 --inputs pinned,list --copies each,batched --streams 4 --batches 64,1024 --frames 1024 --repeats 3 --seconds 0.5 | tee $OUT/bench_lists.md ;;
    threads)
        log threads; cd $work/ndpluginclustercuda-*
        nproc; grep -m 1 "model name" /proc/cpuinfo; grep -o -w -m 1 avx512f /proc/cpuinfo
        lscpu | grep -E "^(Thread|Core|Socket|NUMA node)"
        ./tools/clusterbench --backends cpu --sizes 3,9 --inputs pageable --threads 1,2,4,8,16 --side-by-side 1,2,4,8,16 --batches 16 --frames 256 --repeats 3 --seconds 1 | tee $OUT/bench_threads$(basename $work).md ;;
    offline)
        # A run of $OFFLINE_FRAMES (100,000) simulated frames as raw files
        # on disk ($OFFLINE_DIR), through clusterfind on the GPU and on
        # every CPU, reading included; beside it what may bound it: the
        # disk (O_DIRECT), the page cache, the finder from memory at
        # clusterfind's batch of 32.
        log offline; cd $work/ndpluginclustercuda-*
        run=${OFFLINE_DIR:-/var/tmp/ccoffline}
        rm -rf $run && mkdir -p $run && df -h $run | tail -n 1
        nproc; grep -m 1 "model name" /proc/cpuinfo
        time ./examples/simulate_raw $run 1000 ${OFFLINE_FRAMES:-100000} 1
        du -sh $run && sync
        data=$(ls $run/data_d0_f*_0.raw)
        echo "disk, O_DIRECT:"; time (for f in $data; do dd if=$f of=/dev/null bs=16M iflag=direct status=none; done)
        for pass in 1 2; do echo "page cache, pass $pass:"; time cat $data >/dev/null; done
        for backend in cuda cpu; do
            ./tools/clusterfind --backend $backend --threads 0 --pedestal $run/dark_master_0.json \
                --data $run/data_master_0.json --spectrum $run/$backend.csv 2>/dev/null |
                grep -E "^(clusterfind|frames|clusters)"
        done
        cmp $run/cuda.csv $run/cpu.csv && echo "the same spectrum on both"
        ./tools/clusterbench --backends cuda,cpu --threads 0 --sizes 3 --inputs pinned,pageable \
            --batches 32 --frames 256 --repeats 3 --seconds 1 | tee $OUT/bench_offline.md
        rm -rf $run ;;
    streams)
        # The default number of streams, by measurement: 3x3 at 1 to 8
        # streams, plain and with common mode and a gain map, batches of
        # 1024 page-locked frames; the GPU memory each run holds (the most
        # nvidia-smi saw during it, less what the card held before).
        log streams; cd $work/ndpluginclustercuda-*
        idle=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1)
        echo "memory in use before: $idle MiB" | tee $OUT/streams.md
        for corrections in "" "--common-mode supercolumn --gain-spread 0.05"; do
            for n in 1 2 3 4 5 6 8; do
                nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >$OUT/streams_memory.txt &
                smi=$!
                ./tools/clusterbench --backends cuda --sizes 3 --inputs pinned --streams $n \
                    --batches 1024 --frames 1024 --repeats 3 --seconds 0.5 $corrections |
                    grep -E "^\| cuda|ceiling" | tee -a $OUT/streams.md
                kill $smi
                echo "streams $n ${corrections:-plain}: $(( $(sort -n $OUT/streams_memory.txt | tail -n 1) - idle )) MiB" |
                    tee -a $OUT/streams.md
            done
        done ;;
    peers)
        # aare's GPU finder beside ours: clusterbench's frames at 3x3 and
        # 9x9, ours at the default 2 streams, 4 and aare's 5; then a raw
        # run of $PEERS_FRAMES simulated frames from disk; then aare's CPU
        # finder beside ours.
        log peers; cd $work/ndpluginclustercuda-*
        sh tools/peers/build_aare_cuda.sh $here/peers . /tmp/ccpeers || exit 1
        /tmp/ccpeers/aare_cuda_bench --sizes 3,9 --streams 2,4,5 | tee $OUT/peers_simulated.md
        run=/var/tmp/ccpeers_run
        rm -rf $run && mkdir -p $run
        ./examples/simulate_raw $run 1000 ${PEERS_FRAMES:-2048} 1 >/dev/null
        /tmp/ccpeers/aare_cuda_bench --sizes 3,9 --streams 2,4,5 --frames ${PEERS_FRAMES:-2048} \
            --raw $run/dark_master_0.json $run/data_master_0.json | tee $OUT/peers_raw.md
        rm -rf $run
        # aare's CPU finder (the kit's wheel) beside our CPU backend, a
        # thread a CPU each.
        python3 -m pip install -q --no-index --no-deps --target /tmp/ccsite $here/peers/aare-*.whl &&
            PYTHONPATH=/tmp/ccsite:python CLUSTERCORE_LIBRARY=$PWD/clusterCore/.libs/libclustercore.so \
            python3 tools/peers/aare_cpu_bench.py --threads $(nproc) | grep -v "^ClusterCollector" |
            tee $OUT/peers_cpu.md ;;
    esac
done
