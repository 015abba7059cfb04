#!/usr/bin/env bash
# Starts and stops a real single-node Slurm cluster (slurm-wlm 22.05 + MUNGE)
# on this machine, without systemd, for the tests and CI of the Slurm sweep
# backend. Everything the cluster owns lives under one folder DIR: its own
# slurm.conf, MUNGE key and munged (own socket, so any system munged is left
# alone), slurmctld and slurmd state, spool, pid and log files, and two TCP
# ports picked free at start, so several clusters (concurrent test runs) can
# run side by side. Must run as root (slurmd and the root-owned job steps).
#
#   scripts/slurm-cluster.sh start DIR   create DIR if needed, start munged,
#       slurmctld and slurmd, wait (60 s at most) until the node is idle, write
#       DIR/env and print its line on stdout: export SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-cluster.sh stop DIR    cancel the cluster's jobs, stop the
#       daemons whose pids are in DIR's pid files (SIGTERM, SIGKILL after
#       10 s); never by name; exit 0 also when nothing runs
#   scripts/slurm-cluster.sh status DIR  exit 0 when munged, slurmctld and
#       slurmd are alive and sinfo answers
#
# A test uses it so:
#   eval "$(scripts/slurm-cluster.sh start /tmp/x)"
#   sbatch --wait --array=0-7 --wrap 'echo $SLURM_ARRAY_TASK_ID > /tmp/x/out.$SLURM_ARRAY_TASK_ID'
#   scripts/slurm-cluster.sh stop /tmp/x
# (or `. /tmp/x/env` in another shell). Logs: DIR/log/{munged,slurmctld,slurmd}.log.
#
# Exit status of start: 0 cluster up; 1 it failed to come up (the message on
# stderr names the daemon and shows the end of its log; whatever had been
# started is stopped again) or DIR's cluster already runs; 2 it cannot run
# here (not root, a binary missing, an unusable DIR). Tests treat 2 as a
# failure, not as a skip. stop exits 0 unless a process survives SIGKILL;
# status exits 1 when something is down.
#
# Environment: PEVP_SLURM_MIN_JOB_AGE, MinJobAge in seconds (default 300, see
# below).
set -euo pipefail

readonly PROG="slurm-cluster.sh"
readonly START_TIMEOUT=60   # seconds until the node must be idle
readonly STOP_TIMEOUT=10    # seconds between SIGTERM and SIGKILL
readonly LOCK_FILE=/tmp/pevp-slurm-cluster.lock   # shared by all clusters
readonly DAEMONS=(slurmd slurmctld munged)   # stop order; start is reversed
# MinJobAge: seconds a finished job's record stays in slurmctld (at least 2;
# Slurm turns 0 and 1 into 2). Slurm's default 300 keeps records for the test's
# lifetime, but then `sbatch --wait` polls after 2 s, 8 s more, then every
# 32 s (it grows its sleep while below MinJobAge/2), so a short job returns
# after ~10 s. PEVP_SLURM_MIN_JOB_AGE=4 makes it poll every 2 s; a finished
# job's record is then gone some 4 to 60 s after it ends.
MIN_JOB_AGE=${PEVP_SLURM_MIN_JOB_AGE:-300}

usage() {
  echo "usage: $PROG start|stop|status DIR" >&2
  exit 2
}

err() { echo "$PROG: $*" >&2; }

# The last lines of a log file, indented, on stderr.
show_log() {
  local log=$1
  if [ -s "$log" ]; then
    echo "--- last lines of $log:" >&2
    tail -n 25 "$log" | sed 's/^/    /' >&2
  else
    echo "--- $log is empty or missing" >&2
  fi
}

# Paths of everything under DIR. Sets globals; DIR must be absolute.
set_paths() {
  DIR=$1
  CONF="$DIR/slurm.conf"
  ENV_FILE="$DIR/env"
  MUNGE_DIR="$DIR/munge"
  MUNGE_SOCKET="$MUNGE_DIR/munge.socket"
  MUNGE_KEY="$MUNGE_DIR/munge.key"
  STATE_DIR="$DIR/ctld-state"
  SPOOL_DIR="$DIR/slurmd-spool"
  LOG_DIR="$DIR/log"
}

pid_file() {
  case $1 in
    munged) echo "$MUNGE_DIR/munged.pid" ;;
    *) echo "$DIR/$1.pid" ;;
  esac
}

log_file() { echo "$LOG_DIR/$1.log"; }

# The pid of daemon $1 of this cluster, when it is alive: the pid from its pid
# file, and only if that process is still the daemon started for DIR (its
# command line names the binary and a path under DIR), so a reused pid or
# another cluster's daemon is never touched.
live_pid() {
  local pf pid cmd mark
  pf=$(pid_file "$1")
  [ -r "$pf" ] || return 1
  pid=$(tr -dc '0-9' <"$pf")
  [ -n "$pid" ] || return 1
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  case $1 in
    munged) mark=" --socket=$MUNGE_SOCKET " ;;
    *) mark=" -f $CONF " ;;
  esac
  case "$cmd " in
    *"$1"*"$mark"*) echo "$pid" ;;
    *) return 1 ;;
  esac
}

# Slurm client command for this cluster, bounded in time.
sl() { SLURM_CONF="$CONF" timeout 15 "$@"; }

# ---------------------------------------------------------------- stop

# Processes started by this cluster's slurmd that would outlive it (the
# slurmstepd of a job that could not be cancelled, e.g. slurmctld was already
# dead) and the job processes below them. A slurmstepd is recognised by
# SLURM_CONF=DIR/slurm.conf in its environment, which slurmd passes on.
stepd_pids() {
  local p env
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
    env=$(tr '\0' '\n' 2>/dev/null <"$p/environ") || continue
    if grep -qxF "SLURM_CONF=$CONF" <<<"$env"; then echo "${p#/proc/}"; fi
  done
}

# The pids given and all their descendants.
with_descendants() {
  [ $# -gt 0 ] || return 0
  ps -e -o pid=,ppid= | awk -v roots="$*" '
    { parent[$1] = $2 }
    END {
      n = split(roots, r, " ")
      for (i = 1; i <= n; i++) keep[r[i]] = 1
      do {
        grew = 0
        for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; grew = 1 }
      } while (grew)
      for (p in keep) print p
    }'
}

# SIGTERM the pids given, SIGKILL after STOP_TIMEOUT, wait until gone.
terminate() {
  local pid deadline alive
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  deadline=$((SECONDS + STOP_TIMEOUT))
  while :; do
    alive=()
    for pid in "$@"; do
      if kill -0 "$pid" 2>/dev/null; then alive+=("$pid"); fi
    done
    [ ${#alive[@]} -gt 0 ] || return 0
    if [ $SECONDS -ge $deadline ]; then
      err "pids ${alive[*]} ignored SIGTERM for ${STOP_TIMEOUT}s; sending SIGKILL"
      kill -KILL "${alive[@]}" 2>/dev/null || true
      deadline=$((SECONDS + 5))
      while :; do
        alive=()
        for pid in "$@"; do
          if kill -0 "$pid" 2>/dev/null; then alive+=("$pid"); fi
        done
        [ ${#alive[@]} -gt 0 ] || return 0
        if [ $SECONDS -ge $deadline ]; then
          err "pids ${alive[*]} survive SIGKILL"
          return 1
        fi
        sleep 0.2
      done
    fi
    sleep 0.2
  done
}

stop_cluster() {
  local d pid ids deadline pids rc=0
  # Cancel the cluster's jobs first, so no job step outlives slurmd.
  if live_pid slurmctld >/dev/null && live_pid slurmd >/dev/null; then
    ids=$(sl squeue -h -o %A 2>/dev/null | tr '\n' ' ') || ids=""
    if [ -n "${ids// /}" ]; then
      # shellcheck disable=SC2086  # a list of job ids
      sl scancel $ids 2>/dev/null || true
      deadline=$((SECONDS + STOP_TIMEOUT))
      while [ $SECONDS -lt $deadline ] &&
        [ -n "$(sl squeue -h -o %A 2>/dev/null | tr -d '[:space:]')" ]; do
        sleep 0.5
      done
    fi
  fi
  # All three at once: each takes 1-2 s to shut down.
  pids=()
  for d in "${DAEMONS[@]}"; do
    if pid=$(live_pid "$d"); then pids+=("$pid"); fi
  done
  terminate "${pids[@]}" || rc=1
  for d in "${DAEMONS[@]}"; do rm -f "$(pid_file "$d")"; done
  # slurmstepd ignores SIGTERM: a leftover one is killed, with its job.
  # shellcheck disable=SC2046  # a list of pids
  mapfile -t pids < <(with_descendants $(stepd_pids))
  if [ ${#pids[@]} -gt 0 ]; then
    err "stop: killing leftover job steps of $DIR: ${pids[*]}"
    kill -KILL "${pids[@]}" 2>/dev/null || true
    terminate "${pids[@]}" || rc=1
  fi
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  return $rc
}

cmd_stop() {
  if [ ! -d "$1" ]; then
    err "stop: $1 does not exist; nothing to stop"
    return 0
  fi
  set_paths "$(cd "$1" && pwd -P)"
  stop_cluster
}

# ---------------------------------------------------------------- status

cmd_status() {
  local d bad=0
  if [ ! -d "$1" ]; then
    err "status: $1 does not exist"
    return 1
  fi
  set_paths "$(cd "$1" && pwd -P)"
  for d in munged slurmctld slurmd; do
    if ! live_pid "$d" >/dev/null; then
      err "status: $d of $DIR is not running"
      bad=1
    fi
  done
  [ $bad -eq 0 ] || return 1
  if ! sl sinfo -h >/dev/null; then
    err "status: sinfo does not answer (SLURM_CONF=$CONF)"
    return 1
  fi
}

# ---------------------------------------------------------------- start

# Called on any failure during start: message, log tail, exit 1 (the EXIT
# trap then stops what was started).
fail() {
  local daemon=$1
  shift
  err "start: $*"
  if [ -n "$daemon" ]; then show_log "$(log_file "$daemon")"; fi
  exit 1
}

# DIR goes into slurm.conf and munged's command line: keep it plain.
check_dir_name() {
  case $1 in
    *[[:space:]\"\'\\\$\`,=#]* | "")
      err "start: DIR '$1' must not be empty nor contain blanks, quotes, \\, \$, \`, ',', '=' or '#' (it goes into slurm.conf)"
      exit 2
      ;;
  esac
}

check_prerequisites() {
  local b missing=()
  if [ "$(id -u)" -ne 0 ]; then
    err "start: must run as root (slurmd and its job steps run as root here); uid is $(id -u)"
    exit 2
  fi
  for b in munged munge unmunge slurmctld slurmd sinfo squeue scancel scontrol sbatch python3 timeout flock; do
    if ! command -v "$b" >/dev/null 2>&1; then missing+=("$b"); fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    err "start: missing binaries: ${missing[*]} (scripts/setup.sh installs slurm-wlm, munge and python3)"
    exit 2
  fi
}

# Two free TCP ports below the kernel's ephemeral range (so no outgoing
# connection takes them meanwhile), picked at random and checked by binding.
pick_ports() {
  python3 - <<'EOF'
import random, socket
try:
    lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except Exception:
    lo = 32768
candidates = list(range(10000, lo)) if lo > 11000 else list(range(lo - 1000, lo))
random.shuffle(candidates)
found = []
for port in candidates:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("", port))
        found.append(port)
    except OSError:
        pass
    finally:
        s.close()
    if len(found) == 2:
        break
print(*found)
EOF
}

write_conf() {
  local ctld_port=$1 slurmd_port=$2 node cpus mem_kb mem_mb cluster
  node=$(hostname -s)
  cpus=$(nproc)
  mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
  mem_mb=$((mem_kb * 95 / 100 / 1024))   # a bit below the total: slurmd reports less
  cluster="pevp$(printf '%s' "$DIR" | md5sum | cut -c1-10)"
  cat >"$CONF" <<EOF
# Written by scripts/slurm-cluster.sh for a single-node test cluster; do not edit.
ClusterName=$cluster
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$STATE_DIR
SlurmdSpoolDir=$SPOOL_DIR
SlurmctldPidFile=$(pid_file slurmctld)
SlurmdPidFile=$(pid_file slurmd)
SlurmctldLogFile=$(log_file slurmctld)
SlurmdLogFile=$(log_file slurmd)
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
# How long slurmctld keeps a finished job's record (no accounting database
# here: squeue and scontrol are the only record). sbatch --wait also reads it.
MinJobAge=$MIN_JOB_AGE
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

# Starts daemon $1 (a command line follows) detached from our stdout, stderr
# and lock fd, then waits until its pid file names a live process of it.
launch() {
  local d=$1
  shift
  if ! SLURM_CONF="$CONF" "$@" </dev/null >>"$LOG_DIR/$d.stdout" 2>&1 9>&-; then
    [ -s "$LOG_DIR/$d.stdout" ] && show_log "$LOG_DIR/$d.stdout"
    fail "$d" "$d failed to start: $*"
  fi
  for _ in $(seq 100); do
    live_pid "$d" >/dev/null && return 0
    sleep 0.1
  done
  [ -s "$LOG_DIR/$d.stdout" ] && show_log "$LOG_DIR/$d.stdout"
  fail "$d" "$d exited or wrote no pid file $(pid_file "$d") within 10 s: $*"
}

cmd_start() {
  local d p ports ctld_port slurmd_port node state deadline reason line force
  check_prerequisites
  if ! [[ $MIN_JOB_AGE =~ ^[0-9]+$ ]] || [ "$MIN_JOB_AGE" -lt 2 ]; then
    err "start: PEVP_SLURM_MIN_JOB_AGE='$MIN_JOB_AGE' must be a whole number of seconds, at least 2"
    exit 2
  fi
  check_dir_name "$1"
  mkdir -p "$1" || { err "start: cannot create $1"; exit 2; }
  set_paths "$(cd "$1" && pwd -P)"
  check_dir_name "$DIR"
  # A Unix socket path has at most 107 bytes.
  if [ ${#MUNGE_SOCKET} -gt 100 ]; then
    err "start: DIR $DIR is too long for the MUNGE socket path $MUNGE_SOCKET (at most 100 bytes)"
    exit 2
  fi
  for d in "${DAEMONS[@]}"; do
    if live_pid "$d" >/dev/null; then
      err "start: $d of $DIR already runs (pid $(live_pid "$d")); run: $0 stop $DIR"
      exit 1
    fi
  done
  # From here on, whatever goes wrong stops what was started.
  trap 'rc=$?; [ $rc -eq 0 ] || stop_cluster >/dev/null 2>&1 || true; exit $rc' EXIT

  # From an earlier run that was not stopped cleanly.
  rm -f "$ENV_FILE" "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  for d in "${DAEMONS[@]}"; do rm -f "$(pid_file "$d")"; done

  mkdir -p "$MUNGE_DIR" "$STATE_DIR" "$SPOOL_DIR" "$LOG_DIR"
  chmod 0755 "$MUNGE_DIR"   # munged: nobody else may write it, all must reach the socket
  if [ ! -s "$MUNGE_KEY" ]; then
    (umask 077 && dd if=/dev/urandom of="$MUNGE_KEY" bs=1024 count=1 status=none)
  fi
  chmod 0400 "$MUNGE_KEY"

  # munged wants every folder above its socket searchable by all (a+x).
  # mktemp -d makes DIR 0700: open it for search (not for reading). Should a
  # folder above DIR be closed too, --force turns that check into a warning.
  chmod a+x "$DIR"
  force=()
  p=$DIR
  while [ "$p" != / ]; do
    p=$(dirname "$p")
    if [ "$(( 0$(stat -c %a "$p") & 0111 ))" -ne $((0111)) ]; then force=(--force); fi
  done
  launch munged munged "${force[@]}" --socket="$MUNGE_SOCKET" --key-file="$MUNGE_KEY" \
    --pid-file="$(pid_file munged)" --log-file="$(log_file munged)" \
    --seed-file="$MUNGE_DIR/munged.seed"
  if ! line=$(munge -n -S "$MUNGE_SOCKET" 2>&1 | unmunge -S "$MUNGE_SOCKET" 2>&1); then
    err "start: munged runs but a credential does not round-trip: $line"
    fail munged "munge -n | unmunge on $MUNGE_SOCKET failed"
  fi

  # Ports are picked under a machine-wide lock held until the node is idle
  # (both daemons listen), so two concurrent starts cannot pick the same port.
  exec 9>>"$LOCK_FILE"
  flock -w 120 9 || fail "" "waited 120 s for $LOCK_FILE (another start holds it)"
  ports=$(pick_ports) || fail "" "could not pick free TCP ports (python3 failed)"
  read -r ctld_port slurmd_port <<<"$ports"
  [ -n "${slurmd_port:-}" ] || fail "" "no two free TCP ports found in 10000..32767"
  write_conf "$ctld_port" "$slurmd_port"

  # -c: a cold start, no job state from an earlier run in the same DIR.
  launch slurmctld slurmctld -c -f "$CONF"
  node=$(hostname -s)
  launch slurmd slurmd -f "$CONF" -N "$node"

  deadline=$((SECONDS + START_TIMEOUT))
  while :; do
    for d in munged slurmctld slurmd; do
      live_pid "$d" >/dev/null || fail "$d" "$d died while waiting for node $node to become idle"
    done
    state=$(sl sinfo -h -N -n "$node" -o %T 2>/dev/null | head -n 1) || state=""
    [ "$state" = idle ] && break
    if [ $SECONDS -ge $deadline ]; then
      reason=$(sl scontrol show node "$node" 2>&1 | grep -E 'State=|Reason=' | tr -s ' ' | tr '\n' ' ') || true
      show_log "$(log_file slurmctld)"
      fail slurmd "node $node not idle after ${START_TIMEOUT}s (sinfo state: '${state:-no answer}'; $reason)"
    fi
    sleep 0.5
  done
  exec 9>&-
  trap - EXIT

  line="export SLURM_CONF=$(printf '%q' "$CONF")"
  echo "$line" >"$ENV_FILE"
  echo "$line"
}

[ $# -eq 2 ] || usage
case $1 in
  start) cmd_start "$2" ;;
  stop) cmd_stop "$2" ;;
  status) cmd_status "$2" ;;
  *) usage ;;
esac
