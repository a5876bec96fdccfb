# SPDX-License-Identifier: BSD-3-Clause
# slurm_common.sh: a real one-node Slurm cluster for a test, sourced after
# common.sh: munged, slurmctld and slurmd of the test's own, every file of
# theirs under $work/slurm, on private ports, stopped by PID however the
# test ends; and waits on jobs. SKIP (77) without Slurm.

# munged, slurmctld and slurmd live in /usr/sbin, which a test's PATH may lack.
PATH=$PATH:/usr/sbin:/sbin
export PATH

need_slurm() {
    for program in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel; do
        command -v "$program" >/dev/null 2>&1 && continue
        echo "SKIP: no Slurm here (Debian: apt-get install slurm-wlm munge)"
        exit 77
    done
}

# free_port FROM: the first TCP port from FROM up that no socket here holds
# (/proc/net/tcp*, where a port also shows as a remote one, which only skips
# more). FROM comes from the PID, so tests side by side start apart.
free_port() {
    port=$1
    while grep -q ":$(printf %04X "$port") " /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
        port=$((port + 1))
    done
    echo "$port"
}

# slurm_conf DIR CTLDPORT SLURMDPORT: slurm.conf and gres.conf into DIR.
# The node takes the CPUs the machine has, and a GPU that is /dev/null, so
# that --gres=gpu:1 is tested without one.
slurm_conf() {
    cat >"$1/slurm.conf" <<EOF
ClusterName=test$$
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$2
SlurmdPort=$3
AuthType=auth/munge
AuthInfo=socket=$1/munge.socket
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$1/state
SlurmdSpoolDir=$1/spool
SlurmctldPidFile=$1/slurmctld.pid
SlurmdPidFile=$1/slurmd.pid
SlurmctldLogFile=$1/slurmctld.log
SlurmdLogFile=$1/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
SchedulerParameters=batch_sched_delay=0
EnforcePartLimits=ALL
MpiDefault=none
ReturnToService=2
MinJobAge=3600
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:1 State=UNKNOWN
PartitionName=batch Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    echo "Name=gpu File=/dev/null" >"$1/gres.conf"
}

# slurm_start: the cluster, up once its node is idle (30 s at most); sets
# SLURM_CONF for sbatch, squeue, scontrol and scancel.
slurm_start() {
    slurm=$work/slurm
    mkdir -p "$slurm/state" "$slurm/spool"
    trap 'slurm_stop; rm -rf "$work"' EXIT
    # An interrupted test stops them too; and each in a session of its own,
    # a Ctrl-C's SIGINT does not end them before they cancel the jobs.
    trap 'exit 1' HUP INT TERM
    # munged wants its socket reachable by all: it refuses $work's 0700.
    chmod a+x "$work"
    mungekey -c -k "$slurm/munge.key"
    # In the foreground munged logs to stderr, not to a --log-file.
    setsid munged -F --key-file="$slurm/munge.key" --socket="$slurm/munge.socket" \
        --pid-file="$slurm/munged.pid" --seed-file="$slurm/munged.seed" \
        >"$slurm/munged.log" 2>&1 &
    munged_pid=$!
    ctld_port=$(free_port $((10000 + $$ % 5000 * 2)))
    slurm_conf "$slurm" "$ctld_port" "$(free_port $((ctld_port + 1)))"
    SLURM_CONF=$slurm/slurm.conf
    export SLURM_CONF
    slurm_poll 10 munge_up || slurm_start_failed munged
    # Their .out files hold what they say before their logs open (a bad
    # slurm.conf) as well as the logs.
    setsid slurmctld -D -i -f "$SLURM_CONF" >"$slurm/slurmctld.out" 2>&1 &
    slurmctld_pid=$!
    setsid slurmd -D -N localhost -f "$SLURM_CONF" >"$slurm/slurmd.out" 2>&1 &
    slurmd_pid=$!
    slurm_poll 30 node_idle || slurm_start_failed "the node"
}

munge_up() { daemon_alive munged "$munged_pid" && [ -S "$slurm/munge.socket" ]; }
node_idle() {
    daemon_alive munged "$munged_pid" && daemon_alive slurmctld "$slurmctld_pid" &&
        daemon_alive slurmd "$slurmd_pid" &&
        scontrol -o show node localhost 2>/dev/null | grep -q ' State=IDLE '
}
# daemon_alive NAME PID: fails at once, with the logs, should daemon NAME have ended.
daemon_alive() { kill -0 "$2" 2>/dev/null || slurm_start_failed "$1"; }

# slurm_start_failed WHAT: fails, with the end of every log.
slurm_start_failed() {
    for log in "$slurm"/*.log "$slurm"/*.out; do
        [ -f "$log" ] && echo "--- $log" && tail -n 10 "$log"
    done >&2
    fail "$1 of the test's Slurm did not come up"
}

# slurm_poll SECONDS COMMAND...: until COMMAND succeeds, SECONDS at most.
slurm_poll() {
    deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

# slurm_stop: cancels the jobs left, whose steps slurmd's end would not end,
# then stops the daemons: SIGTERM, SIGKILL 5 s on.
slurm_stop() {
    if [ -n "${slurmctld_pid:-}" ] && kill -0 "$slurmctld_pid" 2>/dev/null; then
        scancel --user="$(id -un)" 2>/dev/null || true
        slurm_poll 10 slurm_queue_empty || true
    fi
    for daemon in ${slurmd_pid:-} ${slurmctld_pid:-} ${munged_pid:-}; do
        kill "$daemon" 2>/dev/null || continue
        slurm_poll 5 slurm_gone "$daemon" || kill -9 "$daemon" 2>/dev/null || true
        wait "$daemon" 2>/dev/null || true
    done
}

slurm_queue_empty() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }
slurm_gone() { ! kill -0 "$1" 2>/dev/null; }

# The states of a job that has ended, for good.
slurm_ended='BOOT_FAIL|CANCELLED|COMPLETED|DEADLINE|FAILED|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|TIMEOUT'

# slurm_wait_jobs JOBID...: until every job named, and every task of an
# array job, has ended: $slurm_timeout seconds at most (default 120), else
# fails with the queue.
slurm_wait_jobs() {
    jobs=$(echo "$*" | tr ' ' ,)
    slurm_poll "${slurm_timeout:-120}" slurm_jobs_ended "$jobs" || {
        squeue -t all -j "$jobs" >&2
        fail "jobs $jobs did not end in ${slurm_timeout:-120} s"
    }
}

slurm_jobs_ended() {
    states=$(squeue -h -t all -j "$1" -o %T) || fail "squeue -j $1 failed"
    ! echo "$states" | grep -qvxE "$slurm_ended"
}

# slurm_job_state JOBID: the state of the job, or of each task of an array
# job, one a line, by task (the tasks yet to start, as one line).
slurm_job_state() {
    scontrol -o show job "$1" |
        sed 's/.* ArrayTaskId=\([^ ]*\) .* JobState=\([^ ]*\) .*/\1 \2/
            s/.* JobState=\([^ ]*\) .*/0 \1/' | sort -n | cut -d' ' -f2
}
