#!/usr/bin/env bash
# The Slurm route of docs/scale.md, for real: a one-node Slurm cluster on
# this machine (munge, slurmctld, slurmd on localhost, configured in a
# temporary folder), a sweep submitted as a job array of `--shard` runs,
# one shard made to fail once and retried by the array (requeued), the
# shards merged and compared byte for byte with the same sweep run locally,
# and `merge` refusing a shard folder with one shard missing.
#
#   bash scripts/slurm-test.sh            # uses target/debug/mmsim (MMSIM=... to choose)
#
# Installs Slurm from Debian packages (slurm-wlm, munge) if missing; needs
# root for that and for slurmd. Exit 0: passed; 1: failed; 77: Slurm
# could not be installed or its daemons could not start here (the reason is
# printed), which .ci/run reports as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MMSIM=${MMSIM:-$ROOT/target/debug/mmsim}
SHARDS=3
SKIP=77

say() { echo "slurm-test: $*"; }
skip() { say "SKIPPED: $*"; exit "$SKIP"; }
fail() { say "FAILED: $*"; exit 1; }

[ -x "$MMSIM" ] || fail "no mmsim binary at $MMSIM (cargo build first, or set MMSIM)"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    [ "$(id -u)" = 0 ] || skip "Slurm is not installed and installing it needs root"
    say "installing slurm-wlm and munge from the Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -q && apt-get install -y -q --no-install-recommends slurm-wlm munge; } \
        >/tmp/slurm-test-apt.log 2>&1 || skip "apt-get install slurm-wlm munge failed (see /tmp/slurm-test-apt.log)"
fi
[ "$(id -u)" = 0 ] || skip "slurmd must run as root"
say "$(slurmctld -V), munge $(munged --version 2>&1 | head -1 | awk '{print $2}')"

T=$(mktemp -d /tmp/mmsim-slurm.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    # The daemons write pid files once they have forked into the background.
    for f in "$T"/slurmctld.pid "$T"/slurmd.pid "$T"/munged.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
    sleep 1
    rm -rf "$T"
}
trap cleanup EXIT

# munge: a private key and socket, so a system munge (if any) is left alone.
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge.key"
mkdir -p "$T/munge"
munged --force --key-file="$T/munge.key" --socket="$T/munge/munge.sock" \
    --pid-file="$T/munged.pid" --seed-file="$T/munge.seed" --log-file="$T/munged.log" \
    || skip "munged would not start: $(tail -2 "$T/munged.log" 2>/dev/null)"
for _ in $(seq 50); do [ -S "$T/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$T/munge/munge.sock" ] || skip "munged started but made no socket"

# Free ports, so a cluster already on this machine is left alone.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CTLD_PORT=$(port); SLURMD_PORT=$(port)
HOST=$(hostname -s)
CPUS=$(nproc)
mkdir -p "$T/state" "$T/spool"
export SLURM_CONF="$T/slurm.conf"
# No cgroups: containers often have none, so process tracking by parent
# pid (proctrack/linuxproc), no task plugin, no accounting.
cat >"$SLURM_CONF" <<CONF
ClusterName=mmsim-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobRequeue=1
SchedulerType=sched/backfill
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=local Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -i -f "$SLURM_CONF" || skip "slurmctld would not start: $(tail -3 "$T/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || skip "slurmd would not start: $(tail -3 "$T/slurmd.log" 2>/dev/null)"
up=""
for _ in $(seq 60); do
    if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then up=1; break; fi
    sleep 1
done
[ -n "$up" ] || skip "the node never came up: $(sinfo 2>&1 | tail -2); slurmd.log: $(tail -3 "$T/slurmd.log" 2>/dev/null)"
say "one-node cluster up: $(sinfo -h -o '%P %D node(s) %c CPUs %t')"

# The sweep: gamedev-1v1's widening rates, shortened (seven settings x two seeds).
SWEEP=(scenarios/gamedev-1v1-sweep.toml --replications 2 --set 'run.duration="6h"' --quiet --jobs 1)
RESULTS="$T/results"
mkdir -p "$RESULTS"
FAIL_TASK=1
cat >"$T/shard.sh" <<JOB
#!/usr/bin/env bash
# One array task: shard \$SLURM_ARRAY_TASK_ID of $SHARDS. Task $FAIL_TASK fails on
# its first attempt (as a node fault would) and asks Slurm to requeue it.
cd "$ROOT"
if [ "\$SLURM_ARRAY_TASK_ID" = "$FAIL_TASK" ] && mkdir "$T/failed-once" 2>/dev/null; then
    echo "task \$SLURM_ARRAY_TASK_ID: failing on purpose (attempt \${SLURM_RESTART_COUNT:-0})"
    status=1
else
    "$MMSIM" sweep ${SWEEP[*]@Q} --out "$RESULTS" --shard "\$SLURM_ARRAY_TASK_ID/$SHARDS"
    status=\$?
fi
if [ "\$status" != 0 ] && [ "\${SLURM_RESTART_COUNT:-0}" -lt 2 ]; then
    scontrol requeue "\${SLURM_ARRAY_JOB_ID}_\${SLURM_ARRAY_TASK_ID}"
fi
exit "\$status"
JOB
chmod +x "$T/shard.sh"

JOB=$(sbatch --parsable --array=0-$((SHARDS - 1)) --cpus-per-task=1 --open-mode=append \
    --output="$T/task-%A_%a.out" --chdir="$ROOT" "$T/shard.sh") || fail "sbatch refused the array"
say "submitted job array $JOB (tasks 0-$((SHARDS - 1)))"
deadline=$((SECONDS + 900))
last_seen=$SECONDS
while :; do
    if squeue -h -j "$JOB" 2>/dev/null | grep -q .; then
        last_seen=$SECONDS
    else
        # A task that failed and asked for a requeue can be missing from
        # squeue for a moment between its exit and its requeue: the array
        # is done only when every shard is written, or when squeue has
        # shown none of it for a minute.
        done_all=1
        for k in $(seq 0 $((SHARDS - 1))); do
            [ -f "$RESULTS/shard-$k-of-$SHARDS.json" ] || done_all=0
        done
        [ $done_all = 1 ] && break
        [ $((SECONDS - last_seen)) -lt 60 ] || break
    fi
    [ $SECONDS -lt $deadline ] || fail "the array did not finish in 15 minutes: $(squeue -j "$JOB")"
    # Slurm holds a requeued task back for a couple of minutes (reason
    # BeginTime); on this test cluster there is no reason to wait.
    squeue -h -j "$JOB" -t PD -o '%i %r' 2>/dev/null | awk '$2 == "BeginTime" {print $1}' |
        while read -r task; do scontrol update JobId="$task" StartTime=now >/dev/null 2>&1 || true; done
    sleep 2
done
for f in "$T"/task-*.out; do sed "s|^|  $(basename "$f"): |" "$f"; done
# Slurm's own record of each task: how often it was requeued.
for k in $(seq 0 $((SHARDS - 1))); do
    restarts=$(scontrol show job "${JOB}_$k" 2>/dev/null | grep -o 'Restarts=[0-9]*' || echo 'Restarts=?')
    [ -f "$RESULTS/shard-$k-of-$SHARDS.json" ] || fail "task $k left no shard-$k-of-$SHARDS.json"
    say "task $k: shard-$k-of-$SHARDS.json written, $restarts"
done
[ -d "$T/failed-once" ] || fail "task $FAIL_TASK never failed, so the retry was not tested"

"$MMSIM" merge "$RESULTS" || fail "merge failed"
LOCAL="$T/local"
"$MMSIM" sweep "${SWEEP[@]}" --out "$LOCAL" >/dev/null || fail "the local sweep failed"
for name in sweep.csv sweep.parquet plots/sweep-pareto.svg plots/sweep-pareto.png report.html; do
    cmp "$LOCAL/$name" "$RESULTS/$name" || fail "$name differs between the cluster's merge and the local sweep"
    say "byte-identical to the local sweep: $name ($(stat -c %s "$LOCAL/$name") bytes)"
done

MISSING="$T/missing"
mkdir "$MISSING"
cp "$RESULTS"/shard-*.json "$MISSING/"
rm "$MISSING/shard-$FAIL_TASK-of-$SHARDS.json"
set +e
out=$("$MMSIM" merge "$MISSING" 2>&1)
code=$?
set -e
[ "$code" = 2 ] || fail "merge with a shard missing exited $code, not 2: $out"
[ ! -e "$MISSING/sweep.csv" ] || fail "merge with a shard missing wrote sweep.csv"
say "merge with shard $FAIL_TASK missing refused (exit 2): $out"
say "PASSED"
