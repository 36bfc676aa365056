#!/usr/bin/env bash
# srun --cutrace against a real single-node Slurm from Debian's packages
# (slurmctld, slurmd, munge), started here on loopback with a generated
# slurm.conf (random free ports, everything under a temporary directory,
# cgroup plugins off: proctrack/linuxproc, task/none) and stopped at the
# end.  One step of 4 tasks runs the probe on the rig with /dev/nvidia-uvm
# denied to rank 2 only (CUTRACE_INJECT ...:rank=2); srun prints the job
# summary once, and it names rank 2.  The traces are in one job directory
# with a subdirectory per node, and their context has the job id, step id,
# rank, local rank and node name.
#
# usage: slurm_real.sh CUTRACE SHIM SPANK_PLUGIN PROBE FAKENV FAKECUDA_DIR [OUTDIR]
# Exit 77 (skipped, one line) without the packages, without root, or when
# the daemons cannot be started here.
set -u
cutrace=$1 shim=$2 plugin=$3 probe=$4 fakenv=$5 fakecuda=$6 outdir=${7:-}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${w:-}" ] && tail -n 20 "$w"/*.log 2>/dev/null; exit 1; }

for t in slurmctld slurmd munged srun sinfo; do
	command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || skip "$t not installed (apt-get install slurmctld slurmd slurm-client munge)"
done
[ -f "$plugin" ] || skip "the SPANK plugin was not built (slurm/spank.h: apt-get install libslurm-dev)"
[ "$(id -u)" -eq 0 ] || skip "slurmd needs root"
PATH=$PATH:/usr/sbin

w=$(mktemp -d /tmp/ct_slurm_XXXXXX)
chmod 755 "$w"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.5
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# munge: a key of our own, its own socket
dd if=/dev/urandom of="$w/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$w/munge.key"
mkdir -m 700 "$w/munge"
munged -f -S "$w/munge/sock" --key-file="$w/munge.key" --pid-file="$w/munge/pid" \
	--log-file="$w/munged.log" --seed-file="$w/munge/seed" || skip "munged does not start here: $(tail -n 2 "$w/munged.log" 2>/dev/null)"
pids+=("$(cat "$w/munge/pid")")

host=$(hostname -s)
mkdir -p "$w/state" "$w/spool"
cat >"$w/plugstack.conf" <<EOC
required $plugin shim=$shim cutrace=$cutrace
EOC
cat >"$w/slurm.conf" <<EOC
ClusterName=cutrace
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$w/munge/sock
CredType=cred/munge
StateSaveLocation=$w/state
SlurmdSpoolDir=$w/spool
SlurmctldPidFile=$w/slurmctld.pid
SlurmdPidFile=$w/slurmd.pid
SlurmctldLogFile=$w/slurmctld.log
SlurmdLogFile=$w/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
PlugStackConfig=$w/plugstack.conf
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOC
export SLURM_CONF=$w/slurm.conf
slurmctld -D -i -f "$w/slurm.conf" >"$w/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$w/slurm.conf" -N "$host" >"$w/slurmd.out" 2>&1 &
pids+=($!)
up=""
for _ in $(seq 1 60); do
	state=$(sinfo -h -o %T 2>/dev/null)
	case $state in idle*|mixed*|allocated*) up=1; break ;; esac
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || skip "a Slurm daemon exited: $(tail -n 3 "$w"/slurm*.out "$w"/slurm*.log 2>/dev/null | tr '\n' ' ')"; done
	sleep 0.5
done
[ -n "$up" ] || skip "the node did not come up within 30 s (state '${state:-?}'): $(tail -n 3 "$w/slurmctld.log" 2>/dev/null | tr '\n' ' ')"

# one step, 4 tasks, the rig's fake driver; /dev/nvidia-uvm denied to rank 2
mkdir "$w/run"
cd "$w/run" || exit 1
LD_LIBRARY_PATH=$fakecuda LD_PRELOAD=$fakenv CUTRACE_INJECT='open:path=/dev/nvidia-uvm:error=EPERM:rank=2' \
	timeout 120 srun -n 4 --cutrace=job "$probe" >"$w/srun.out" 2>"$w/srun.err"
rc=$?
[ -n "$outdir" ] && mkdir -p "$outdir" && cp "$w/srun.err" "$outdir/srun-summary.txt"
echo "srun exited $rc; its standard error:"
sed 's/^/  /' "$w/srun.err"
grep -q "^4 processes traced: 3 healthy, 1 failed" "$w/srun.err" || fail "no job summary of 4 processes"
[ "$(grep -c "processes traced" "$w/srun.err")" -eq 1 ] || fail "the summary is printed more than once"
grep -qE "^    1 process: host $host rank 2 pid [0-9]+" "$w/srun.err" || fail "the summary does not name rank 2"
grep -q "FAILED \[device-node\] (injected) open(/dev/nvidia-uvm) failed with EPERM" "$w/srun.err" || fail "not the uvm verdict"
n=$(find "$w/run/job/$host" -name '*.cutrace' | wc -l)
[ "$n" -eq 4 ] || fail "$n traces in job/$host, want 4"
# the context of rank 2's trace: job, step, rank, local rank, node
"$cutrace" show --json "$w/run/job" >"$w/job.json" 2>/dev/null
python3 - "$w/job.json" "$host" <<'PY' || fail "trace context"
import json, sys
doc, host = json.load(open(sys.argv[1])), sys.argv[2]
ranks = {}
for p in doc["processes"]:
    env = p["env"]
    ranks[int(env["SLURM_PROCID"])] = p
    for k in ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_LOCALID", "SLURMD_NODENAME"):
        assert k in env, (k, env)
    assert env["SLURMD_NODENAME"] == host, env
assert sorted(ranks) == [0, 1, 2, 3], sorted(ranks)
assert not ranks[2]["verdict"]["ok"] and all(ranks[r]["verdict"]["ok"] for r in (0, 1, 3))
PY
echo "ok: srun --cutrace on a real Slurm $(srun --version 2>/dev/null): one summary, rank 2 named"
