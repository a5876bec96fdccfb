# ioc_common.sh: what the IOC tests share, sourced after common.sh: the
# example IOC started and stopped on a Channel Access port of the test's
# own, on loopback, and caget/caput helpers. SKIP (77) without EPICS, and
# under ThreadSanitizer, which EPICS's own libraries are not built for.
ioc=$builddir/ioc/run-iocClusterCUDA
[ -x "$ioc" ] || { echo "SKIP: the build has no EPICS (configure did not find base, asyn and ADCore)"; exit 77; }
case "${sanitizers:-no}" in
*thread*)
    echo "SKIP: EPICS's own libraries are not built for ThreadSanitizer; the IOC runs in the plain and ASan builds"
    exit 77 ;;
esac
. "$builddir/ioc/epicsTools"

EPICS_CA_SERVER_PORT=$((20000 + $$ % 20000))
EPICS_CA_AUTO_ADDR_LIST=NO
EPICS_CA_ADDR_LIST=127.0.0.1
EPICS_CAS_INTF_ADDR_LIST=127.0.0.1
export EPICS_CA_SERVER_PORT EPICS_CA_AUTO_ADDR_LIST EPICS_CA_ADDR_LIST \
    EPICS_CAS_INTF_ADDR_LIST
export PREFIX="T$$:"
export IOCSH_HISTFILE="$work/iocsh_history"
P=$PREFIX
C=${P}Cluster1:

pid=""
# start_ioc N: the IOC, its shell reading a FIFO that this script holds
# open (closing it ends the IOC), its output in $work/iocN.log.
start_ioc() {
    rm -f "$work/stdin" && mkfifo "$work/stdin"
    "$ioc" <"$work/stdin" >"$work/ioc$1.log" 2>&1 &
    pid=$!
    exec 9>"$work/stdin"
    for _ in $(seq 50); do
        "$caget" -w 0.2 "${C}PluginType_RBV" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    cat "$work/ioc$1.log"
    fail "the IOC did not start"
}
# ioc_shell COMMAND: a command for the running IOC's shell.
ioc_shell() { echo "$1" >&9; }
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
trap 'stop_ioc; rm -rf "$work"' EXIT

get() { "$caget" -t -n -w 2 "$1"; }
put() { "$caput" -c -w 10 "$1" "$2" >/dev/null || fail "caput $1 $2"; }
putstr() { "$caput" -S -w 10 "$1" "$2" >/dev/null || fail "caput $1 $2"; }
getstr() { "$caget" -t -S -w 2 "$1"; }
# wait_for PV VALUE: until caget PV says VALUE (60 s at most).
wait_for() {
    for _ in $(seq 300); do
        [ "$(get "$1")" = "$2" ] && return 0
        sleep 0.2
    done
    fail "$1 is $(get "$1"), not $2"
}
