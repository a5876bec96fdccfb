#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_access.sh: EPICS access security in the example IOC
# (iocBoot/operators.acf). A client run as another Unix user (nobody)
# reads every PV, but its writes to the plugin's settings and commands and
# to ADCore's records are refused and change nothing; the operator's (the
# user who started the IOC) go through, also with two operators named;
# with the operator hosts set to another machine the operator is refused
# too. SKIP (77) without EPICS, or when not root (a client as another user
# needs setpriv as root).
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/ioc_common.sh"
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null ||
    { echo "SKIP: a client as another user needs root and setpriv (util-linux)"; exit 77; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
operator=$(id -un)

# denied WHO PV VALUE [READBACK]: WHO's write of VALUE fails, and
# READBACK (default PV_RBV) reads as before.
denied() {
    readback=${4:-$2_RBV}
    held=$(get "$readback")
    if [ "$1" = nobody ]; then
        as_nobody "$caput" -c -w 5 "$2" "$3" >"$work/caput.txt" 2>&1 &&
            fail "nobody's write of $3 to $2 was taken: $(cat "$work/caput.txt")"
    else
        "$caput" -c -w 5 "$2" "$3" >"$work/caput.txt" 2>&1 &&
            fail "the write of $3 to $2 was taken: $(cat "$work/caput.txt")"
    fi
    grep -q -i "access denied\|no write access" "$work/caput.txt" ||
        fail "the refusal of $2 does not say why: $(cat "$work/caput.txt")"
    [ "$(get "$readback")" = "$held" ] || fail "$2 changed to $(get "$readback")"
}

start_ioc 1
[ "$(as_nobody "$caget" -t -w $ca_wait "${C}NSigma_RBV")" = "$(get "${C}NSigma_RBV")" ] ||
    fail "nobody cannot read NSigma_RBV"
denied nobody "${C}NSigma" 7
denied nobody "${C}PedestalFrames" 50
denied nobody "${C}ResetPedestal" 1 "${C}ResetPedestal"
denied nobody "${C}EtaMode" Calibrate
denied nobody "${C}EnableCallbacks" 1
denied nobody "${P}cam1:AcquirePeriod" 0.5
put "${C}NSigma" 7
[ "$(get "${C}NSigma_RBV")" = 7 ] || fail "the operator's write was not taken"
echo "ok: nobody reads but cannot write the plugin's settings, commands or ADCore's records; $operator, the operator, can"
stop_ioc

export CLUSTER_OPERATOR_HOSTS=elsewhere.invalid
start_ioc 2
unset CLUSTER_OPERATOR_HOSTS
denied "$operator" "${C}NSigma" 6
echo "ok: with the operator hosts elsewhere, $operator is refused too"
stop_ioc

export CLUSTER_OPERATORS="operator2,$operator"
start_ioc 3
unset CLUSTER_OPERATORS
put "${C}NSigma" 6
[ "$(get "${C}NSigma_RBV")" = 6 ] || fail "with two operators named, $operator's write was not taken"
denied nobody "${C}NSigma" 4
echo "ok: CLUSTER_OPERATORS names two operators: $operator writes, nobody still cannot"
