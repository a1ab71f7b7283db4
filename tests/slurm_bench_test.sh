#!/usr/bin/env bash
# examples/bench-slurm.sh on a real Slurm: munged, slurmctld and slurmd started on localhost
# from a generated configuration in a private temp folder, the bench submitted as a 2-task
# array (scripted models, the CPU engine) and its merge as a job that depends on the array,
# exactly as the script's header tells a user to. The merged reports must be byte for byte
# those of the same bench run whole (docs/bench.md: what merge guarantees), and the stores
# must hold the same cells and the same rounds. The daemons are stopped on every exit.
# Usage: slurm_bench_test.sh PTXFORGE REPO_ROOT. Exit 77 when Slurm or munge is not installed,
# or when slurmd cannot be started by a user who is not root.
set -u
ptxforge=$(realpath "$1"); root=$(realpath "$2")
for p in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  if ! command -v "$p" >/dev/null && [[ ! -x /usr/sbin/$p ]]; then
    echo "$p is not installed (scripts/setup installs slurm-wlm and munge): skipping"; exit 77
  fi
done
PATH=$PATH:/usr/sbin
command -v python3 >/dev/null || { echo "python3 is needed to compare the stores: skipping"; exit 77; }

# Run inside a Slurm job (a CI runner on a cluster), the outer job's variables would reach our
# commands: only our configuration counts here.
for v in $(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SQUEUE|SINFO|SCONTROL)_'); do unset "$v"; done
tmp=$(mktemp -d /tmp/ptxforge-slurm.XXXXXX)
chmod 700 "$tmp"   # munged refuses a key or socket folder others can write to
mkdir -p "$tmp"/{munge,state,spool,log,work,out}
export SLURM_CONF=$tmp/slurm.conf PTXFORGE_CACHE_DIR=$tmp/cache-slurm
started=$(date +%s)
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
logs() { for f in "$tmp"/log/*.log "$tmp"/work/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; }; done; }

# Our processes are the daemons (their ids below) and whatever they started: slurmstepd and
# the jobs' shells and benches inherit SLURM_CONF, which names our folder and no other.
ours() {
  local p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == "$$" || ${p#/proc/} == "$BASHPID" ]] && continue
    tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$tmp/slurm.conf" && echo "${p#/proc/}"
  done
}
daemons=()   # slurmd, slurmctld, munged: stopped in that order (munged last: the others use it)
skip=0
stop_pid() {  # TERM, up to 10 s to go, then KILL
  kill "$1" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null
}
stop_all() {
  trap - EXIT INT TERM
  if [[ -n ${watchdog:-} ]]; then
    local sleeper; sleeper=$(ps -o pid= --ppid "$watchdog" 2>/dev/null)
    kill -9 "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
    [[ -n $sleeper ]] && kill $sleeper 2>/dev/null
  fi
  # Jobs first (a running bench would outlive slurmd), then the daemons.
  if ((${#daemons[@]} > 1)); then
    local jobs; jobs=$(squeue -h -o %A 2>/dev/null)
    [[ -n $jobs ]] && scancel $jobs 2>/dev/null
    for _ in $(seq 100); do [[ -z $(squeue -h -o %A 2>/dev/null) ]] && break; sleep 0.1; done
  fi
  [[ -n ${whole:-} ]] && stop_pid "$whole"
  for pid in "${daemons[@]}"; do stop_pid "$pid"; done
  ours >"$tmp/left"   # no pipe: a pipe's processes would carry SLURM_CONF too
  local left; left=$(<"$tmp/left")
  if [[ -n $left ]]; then
    echo "FAIL processes left after the daemons stopped:" $left; fail=1
    for pid in $left; do ps -o pid=,args= -p "$pid"; kill -9 "$pid" 2>/dev/null; done
  fi
  ((fail && !skip)) && logs
  [[ -n ${KEEP_TMP:-} ]] && echo "keeping $tmp" || rm -rf "$tmp"
  echo "slurm bench test: $(($(date +%s) - started)) s"
  ((skip)) && exit 77
  exit $fail
}
trap stop_all EXIT
trap 'fail=1; stop_all' INT TERM
# Should anything hang, stop well inside ctest's limit and say so, instead of a bare timeout.
# (The one long command runs in the background, watched with short sleeps, so the TERM trap
# runs within a moment; not under `wait`: a trap that interrupts `wait` cannot wait itself.)
( sleep "${SLURM_WATCHDOG_S:-780}"; echo "FAIL still running after ${SLURM_WATCHDOG_S:-780} s"; kill -TERM $$ ) \
  </dev/null 2>/dev/null &
watchdog=$!

# --- The cluster: one node, this machine, with its CPUs; no accounting, no cgroups.
free_ports=$(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
read -r ctld_port slurmd_port <<<"$free_ports"
host=$(hostname -s)
user=$(id -un)
cat >"$tmp/slurm.conf" <<CONF
ClusterName=ptxforge-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$tmp/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
: >"$tmp/plugstack.conf"
cat >"$tmp/cgroup.conf" <<CONF
# Nothing here uses cgroups (proctrack/linuxproc, task/none); the file keeps slurmd from
# reading another one.
CgroupAutomount=no
ConstrainCores=no
ConstrainRAMSpace=no
CONF

mungekey --create --keyfile="$tmp/munge/munge.key" >/dev/null 2>&1 ||
  { dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null; chmod 400 "$tmp/munge/munge.key"; }
munged --foreground --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/seed" \
  >"$tmp/log/munged.out" 2>&1 &
daemons=($!)
for _ in $(seq 100); do [[ -S $tmp/munge/munge.socket ]] && break; sleep 0.1; done
check "munged is up" "[[ -S '$tmp/munge/munge.socket' ]]" || exit

slurmctld -D -f "$tmp/slurm.conf" >"$tmp/log/slurmctld.out" 2>&1 &
daemons=("$!" "${daemons[@]}")
slurmd -D -f "$tmp/slurm.conf" >"$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!
daemons=("$slurmd_pid" "${daemons[@]}")
state=
for _ in $(seq 600); do
  state=$(sinfo -h -N -n "$host" -o %T 2>/dev/null)
  [[ $state == idle ]] && break
  if ! kill -0 "$slurmd_pid" 2>/dev/null && ((EUID != 0)); then
    echo "slurmd could not start as $user (it needs root):"; tail -5 "$tmp/log/slurmd.out" "$tmp/log/slurmd.log" 2>/dev/null
    skip=1; exit
  fi
  sleep 0.1
done
check "the node is idle (state: ${state:-none})" "[[ '$state' == idle ]]" || exit

# --- The bench: 2 scripted models x 4 level-1 tasks x 2 samples x 2 rounds, 8 cells, verified
# on the CPU engine; verdicts only (no timing: its numbers would differ between runs).
"$root/tests/bench/write_bench.sh" "$tmp" slurm <<'RUN'
time = false
sanitize = false
device = "cpu"
RUN

# The array as the script's header says, and the merge chained on it. The command line
# overrides the script's #SBATCH lines that ask for a GPU node: this node has 0 GPUs and
# $(nproc) CPUs.
fit=(--cpus-per-task=1 --gpus-per-node=0 --chdir="$tmp/work")
array=$(PTXFORGE=$ptxforge sbatch --parsable "${fit[@]}" --array=0-1 \
  "$root/examples/bench-slurm.sh" "$tmp/bench.toml" "$tmp/out" 2>"$tmp/log/sbatch.err")
check "the array is submitted (id: ${array:-none})" "[[ '$array' =~ ^[0-9]+$ ]]" || { cat "$tmp/log/sbatch.err"; exit; }
merge=$(MERGE=1 PTXFORGE=$ptxforge sbatch --parsable "${fit[@]}" --array=0 --dependency="afterok:$array" \
  "$root/examples/bench-slurm.sh" "$tmp/bench.toml" "$tmp/out" 2>"$tmp/log/sbatch-merge.err")
check "the merge is submitted (id: ${merge:-none})" "[[ '$merge' =~ ^[0-9]+$ ]]" || { cat "$tmp/log/sbatch-merge.err"; exit; }

# Meanwhile the same bench whole, outside Slurm: the reference.
PTXFORGE_CACHE_DIR=$tmp/cache-whole "$ptxforge" bench "$tmp/bench.toml" --out "$tmp/whole" >"$tmp/log/whole.log" 2>&1 &
whole=$!
while kill -0 "$whole" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$whole/stat" 2>/dev/null) != Z ]]; do sleep 0.2; done
wait "$whole"
check "the whole run exits 0" "(($? == 0))"

# Wait until the queue holds none of our jobs; a merge whose dependency can never be met
# (a shard failed) stays pending forever, so that ends the wait too.
for _ in $(seq 6000); do
  queue=$(squeue -h -o '%i %T %r' 2>/dev/null)
  [[ -z $queue ]] && break
  grep -q DependencyNeverSatisfied <<<"$queue" && break
  sleep 0.2
done
check "the queue drained (left: ${queue:-nothing})" "[[ -z '$queue' ]]"

# Without accounting there is no sacct: the controller keeps finished jobs for MinJobAge.
job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | grep "^$2=" | cut -d= -f2-; }
for t in 0 1; do
  check "array task $t completed with exit 0:0 ($(job_field "${array}_$t" JobState), $(job_field "${array}_$t" ExitCode))" \
    "[[ '$(job_field "${array}_$t" JobState)' == COMPLETED && '$(job_field "${array}_$t" ExitCode)' == 0:0 ]]"
  check "shard $t has its own store" "[[ -f '$tmp/out/shard-$t/bench.db' ]]"
done
check "the merge job completed ($(job_field "$merge" JobState), $(job_field "$merge" ExitCode))" \
  "[[ '$(job_field "$merge" JobState)' == COMPLETED && '$(job_field "$merge" ExitCode)' == 0:0 ]]"
# --shard i/2 takes the cells whose index is i modulo 2.
for t in 0 1; do
  idx=$("$ptxforge" bench export "$tmp/out/shard-$t" --table cells --format csv | tail -n +2 | cut -d, -f2 | sort -n | tr '\n' ' ')
  want=$( ((t == 0)) && echo '0 2 4 6 ' || echo '1 3 5 7 ')
  check "array task $t ran shard $t/2 (cells $idx)" "[[ '$idx' == '$want' ]]"
done

# --- The merged bench against the whole one.
for f in md json; do "$ptxforge" bench report "$tmp/whole" --format "$f" -o "$tmp/whole.$f"; done
check "the whole bench: 8 of 8 cells finished" "grep -q '^8 of 8 cells in the store, 8 finished' '$tmp/whole.md'"
check "the whole bench verified on the CPU engine" "grep -q 'on the CPU engine' '$tmp/whole.md'"
check "the merge job wrote the reports" "[[ -s '$tmp/out/report.md' && -s '$tmp/out/report.json' && -s '$tmp/out/report.html' ]]"
check "merged and whole: the same Markdown report" "cmp '$tmp/out/report.md' '$tmp/whole.md'"
check "merged and whole: the same JSON report" "cmp '$tmp/out/report.json' '$tmp/whole.json'"
# The stores row by row, every column: durations, cache notes and the bench's own folder (named
# in some verdicts) written alike, and each round's record by its verdict.
for table in cells rounds stages; do
  "$ptxforge" bench export "$tmp/out/merged" --table "$table" --format jsonl >"$tmp/merged.$table.jsonl"
  "$ptxforge" bench export "$tmp/whole" --table "$table" --format jsonl >"$tmp/whole.$table.jsonl"
done
python3 - "$tmp" <<'PY' >"$tmp/compare.txt" 2>&1
import json, re, sys
tmp = sys.argv[1]
# What may differ: the bench's folder (a shard's or the whole bench's, quoted in some verdicts'
# messages), a duration, whether a cache answered; the round's whole record holds all of them,
# so its verdict is compared alone.
def same_form(v):
    if not isinstance(v, str): return v
    v = re.sub(re.escape(tmp) + r"/(whole|out/shard-[0-9]+|out/merged)/", "BENCH/", v)
    v = re.sub(r"[0-9]+(\.[0-9]+)? ?(s|ms)\b", "T", v)
    return v.replace(" (cached)", "")
def rows(which, table):
    out = []
    for line in open(f"{tmp}/{which}.{table}.jsonl"):
        r = json.loads(line)
        if "record" in r: r["record_verdict"] = json.loads(r.pop("record")).get("verdict")
        out.append({k: same_form(v) for k, v in r.items() if k != "seconds"})
    return out
bad = 0
for table in ("cells", "rounds", "stages"):
    m, w = rows("merged", table), rows("whole", table)
    if not w or m != w:
        bad = 1
        print(f"{table}: {len(m)} merged rows, {len(w)} whole rows; the first that differ:")
        for x, y in zip(m, w):
            if x != y: print(" merged:", x, "\n whole: ", y); break
    else:
        print(f"{table}: {len(m)} rows alike")
sys.exit(bad)
PY
rc=$?
cat "$tmp/compare.txt"
check "merged and whole: the same cells, rounds and stages" "((rc == 0))"
check "the stores hold 8 cells and 32 rounds" "(( \$(wc -l <'$tmp/whole.cells.jsonl') == 8 && \$(wc -l <'$tmp/whole.rounds.jsonl') == 32 ))"
exit $fail
