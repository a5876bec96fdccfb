# SPDX-License-Identifier: BSD-3-Clause
# ioc_process.sh: the example IOC as a process, shared by the IOC tests
# (tests/ioc_common.sh) and the IOC scripts (tools/ioc_lib.sh), which
# source it (POSIX sh): Channel Access on loopback on a port of the
# caller's own, the IOC started with its shell reading a FIFO that the
# caller holds open (closing it ends the IOC), and stopped by PID.
# The caller sets ioc (the command), caget and work (a scratch folder),
# and may set ioc_nice (a nice increment for the IOC, default 0) and
# ioc_realtime=no (the IOC without CAP_SYS_NICE: see launch_ioc).

# claim_ports: sets port_base, the first of 16 ports of this process's own
# (0-7 the IOC's, 8-15 PSI's chain's: tools/sls_chain.sh). A slot's lock
# (flock on descriptor 8) is held by this shell and what it starts, the
# IOC among them, for as long as any of them runs, and the kernel lets it
# go however they end. The slots lie in [20000, 32000): below Linux's
# ephemeral ports (32768-60999), which the kernel gives any process's
# client sockets, so no other socket holds one while the IOC starts.
claim_ports() {
    [ "${port_claimer-}" = $$ ] && return 0
    ports_dir=${TMPDIR:-/tmp}/ndpluginclustercuda-ports
    mkdir -p "$ports_dir" || return 1
    slot=$(($$ % 750))
    for _ in $(seq 750); do
        exec 8>"$ports_dir/$slot"
        if flock -n 8; then
            port_base=$((20000 + slot * 16))
            port_claimer=$$
            return 0
        fi
        slot=$(((slot + 1) % 750))
    done
    echo "no free ports: all 750 slots of $ports_dir are held" >&2
    return 1
}

# ioc_loopback_ca PREFIX: the environment of the IOC to come and of its
# clients: private Channel Access and PV Access ports, loopback only, PVs
# named PREFIX...; sets P (the prefix) and C (the cluster finder's).
ioc_loopback_ca() {
    claim_ports || return 1
    EPICS_CA_SERVER_PORT=$port_base
    EPICS_CA_AUTO_ADDR_LIST=NO
    EPICS_CA_ADDR_LIST=127.0.0.1
    EPICS_CAS_INTF_ADDR_LIST=127.0.0.1
    EPICS_CA_MAX_ARRAY_BYTES=20000000
    EPICS_PVA_SERVER_PORT=$((port_base + 2))
    EPICS_PVA_BROADCAST_PORT=$((EPICS_PVA_SERVER_PORT + 1))
    EPICS_PVA_AUTO_ADDR_LIST=NO
    EPICS_PVA_ADDR_LIST=127.0.0.1
    EPICS_PVAS_INTF_ADDR_LIST=127.0.0.1
    PREFIX=$1
    IOCSH_HISTFILE=$work/iocsh_history
    export EPICS_CA_SERVER_PORT EPICS_CA_AUTO_ADDR_LIST EPICS_CA_ADDR_LIST \
        EPICS_CAS_INTF_ADDR_LIST EPICS_CA_MAX_ARRAY_BYTES \
        EPICS_PVA_SERVER_PORT EPICS_PVA_BROADCAST_PORT \
        EPICS_PVA_AUTO_ADDR_LIST EPICS_PVA_ADDR_LIST \
        EPICS_PVAS_INTF_ADDR_LIST PREFIX IOCSH_HISTFILE
    P=$PREFIX
    C=${P}Cluster1:
}

pid=""
# launch_ioc LOG: the IOC, its output in LOG; returns once the plugin
# answers, or 1 (with LOG on stderr) if it ended or did not answer in 20 s.
# EPICS gives its threads SCHED_FIFO wherever it may (as root), and such
# a thread kept busy takes a CPU from every ordinary process on the
# machine; ioc_realtime=no drops CAP_SYS_NICE from the IOC, so that all
# its threads share the CPUs as a non-root beamline IOC's do.
launch_ioc() {
    rm -f "$work/stdin" && mkfifo "$work/stdin"
    without_realtime=""
    [ "${ioc_realtime:-yes}" = no ] && [ "$(id -u)" = 0 ] &&
        without_realtime="setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice"
    $without_realtime nice -n "${ioc_nice:-0}" "$ioc" <"$work/stdin" >"$1" 2>&1 &
    pid=$!
    exec 9>"$work/stdin"
    for _ in $(seq 100); do
        "$caget" -w 0.2 "${C}PluginType_RBV" >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    cat "$1" >&2
    return 1
}

# ioc_shell COMMAND: a command for the running IOC's shell.
ioc_shell() { echo "$1" >&9; }

# stop_ioc: closes the IOC's shell, and kills it if it has not ended 5 s on.
stop_ioc() {
    [ -n "$pid" ] || return 0
    exec 9>&-
    for _ in $(seq 25); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
}
