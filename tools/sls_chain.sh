# SPDX-License-Identifier: BSD-3-Clause
# sls_chain.sh: PSI's side of the real MÖNCH chain, shared by
# tests/ioc_slsdetector.sh and tools/ioc_sls_bench.sh, which source it
# (POSIX sh): the virtual MÖNCH server and a receiver on ports of the
# caller's own (loopback), the slsDetectorPackage configuration that the
# driver reads, and their end: every process stopped by PID, the server's
# System V segment and the client's shared memory removed. The caller
# sets SLS_BIN (slsDetectorPackage's programs) and work (a scratch
# folder), and calls sls_chain_ports first.

# sls_chain_ports BASE: the server (its stop server takes BASE + 1), the
# receiver, the UDP and the ZMQ ports, and the client's shared memory
# name (SLSDETNAME), all the caller's own.
sls_chain_ports() {
    server_port=$1 receiver_port=$(($1 + 2)) udp_port=$(($1 + 3)) zmq_port=$(($1 + 4))
    SLSDETNAME="cc$$"
    export SLSDETNAME
    sls_pids="" receiver_pid=""
}

# start_sls_server: the virtual server, once it and its stop server (a
# second process of the same command line) say they are ready; 1 (its
# log on stderr) if they do not. It logs every frame into work/server.log.
start_sls_server() {
    "$SLS_BIN/moenchDetectorServer_virtual" -p "$server_port" >"$work/server.log" 2>&1 &
    sls_pids=$!
    for _ in $(seq 100); do
        grep -q "Stop Server Ready" "$work/server.log" && break
        kill -0 "$sls_pids" 2>/dev/null || break
        sleep 0.2
    done
    grep -q "Stop Server Ready" "$work/server.log" || { cat "$work/server.log" >&2; return 1; }
    sls_pids="$sls_pids $(pgrep -f "moenchDetectorServer_virtual -p $server_port" |
        grep -v "^$sls_pids$" | tr '\n' ' ')"
}

# start_sls_receiver PROGRAM ARGUMENTS...: a receiver (slsReceiver -t
# PORT, or moenchSimReceiver --port PORT) once it listens; 1 if it does not.
start_sls_receiver() {
    "$@" >"$work/receiver.log" 2>&1 &
    receiver_pid=$!
    for _ in $(seq 150); do
        grep -q "starting TCP Server on port $receiver_port" "$work/receiver.log" && return 0
        kill -0 "$receiver_pid" 2>/dev/null || break
        sleep 0.2
    done
    cat "$work/receiver.log" >&2
    return 1
}

# stop_sls_receiver: the receiver alone, so that another can take its port.
stop_sls_receiver() {
    [ -n "$receiver_pid" ] || return 0
    kill "$receiver_pid" 2>/dev/null || true
    wait "$receiver_pid" 2>/dev/null || true
    receiver_pid=""
}

# write_sls_config FILE: the module's configuration, as slsDetectorConfig
# reads it: the server and receiver above, UDP and ZMQ on loopback.
write_sls_config() {
    cat >"$1" <<CONFIG
hostname localhost:$server_port
rx_hostname localhost:$receiver_port
udp_dstip 127.0.0.1
udp_srcip 127.0.0.1
udp_dstport $udp_port
rx_zmqport $zmq_port
zmqport $zmq_port
rx_zmqstream 1
CONFIG
}

# stop_sls: every process by PID; the server's segment (key 5678 + its
# port) and the client's segments of this SLSDETNAME.
stop_sls() {
    stop_sls_receiver
    for p in $sls_pids; do kill "$p" 2>/dev/null || true; done
    for p in $sls_pids; do wait "$p" 2>/dev/null || true; done
    sls_pids=""
    ipcrm -M $((5678 + server_port)) 2>/dev/null || true
    rm -f /dev/shm/slsDetectorPackage_detector_*_"$SLSDETNAME"
}

# sls_get NAME: a number the client reads (the first, for a list).
sls_get() { "$SLS_BIN/sls_detector_get" "$1" 2>/dev/null | sed -n "s/^$1 \[\{0,1\}\([0-9]*\).*/\1/p"; }
