# shellcheck shell=bash
# Shared by scripts/testbed/*: the cluster table, paths, and the process
# bookkeeping that lets `down` stop exactly what `up` started.
#
# Every daemon is started through tb_start, which records its PID and start
# time under $TB/run/pids and marks its environment with
# SKYSLURM_TESTBED_DAEMON=$TB. tb_stop only signals a recorded PID whose
# start time still matches (PIDs get reused), and tb_reap finds what the
# daemons themselves forked (slurmstepd, mariadb helpers) by that marker, never
# by process name.

set -euo pipefail

TB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TB=${SKYSLURM_TESTBED_DIR:-/tmp/skyslurm-testbed}
TB_CLUSTERS=(alpha beta gamma)
TB_HOME_CLUSTER=alpha
TB_USERS=(skyuser1 skyuser2)
TB_LMOD_INIT=/usr/share/lmod/lmod/init/bash

# Ports. Each cluster owns a block of 100: slurmctld at +17, its login sshd at
# +10, slurmd of node i at +20+i. Shared services sit at 79xx.
declare -A TB_PORT_BASE=([alpha]=7000 [beta]=7100 [gamma]=7200)
TB_MARIADB_PORT=7906
TB_SLURMDBD_PORT=7907

tb_ctld_port() { echo $((TB_PORT_BASE[$1] + 17)); }
tb_login_port() { echo $((TB_PORT_BASE[$1] + 10)); }
tb_slurmd_port() { echo $((TB_PORT_BASE[$1] + 20 + $2)); }  # cluster, node index

# Nodes per cluster, in order; node i (1-based) is <cluster>-n<i>.
declare -A TB_NODE_COUNT=([alpha]=3 [beta]=2 [gamma]=3)
tb_nodes() {
  local c=$1 i
  for ((i = 1; i <= TB_NODE_COUNT[$c]; i++)); do echo "$c-n$i"; done
}

tb_conf() { echo "$TB/clusters/$1/etc/slurm.conf"; }
tb_is_cluster() {
  local c
  for c in "${TB_CLUSTERS[@]}"; do [ "$c" = "$1" ] && return 0; done
  return 1
}

tb_log() { printf 'testbed: %s\n' "$*" >&2; }
tb_die() {
  printf 'testbed: error: %s\n' "$*" >&2
  exit 1
}

tb_require_root() {
  [ "$(id -u)" -eq 0 ] || tb_die "run as root (it starts Slurm daemons and sshd, and creates test users)"
}

# ---------------------------------------------------------------- processes

tb_pidfile() { echo "$TB/run/pids/$1.pid"; }

# A process's start time (clock ticks after boot): with the PID, it names one
# process for good, whatever it does to its command line (sshd rewrites its).
tb_starttime() { { awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat"; } 2>/dev/null; }

# Whether the daemon recorded under NAME is alive and still the process we
# started. The pid file holds "PID STARTTIME".
tb_running() {
  local pidf pid start state
  pidf=$(tb_pidfile "$1")
  [ -f "$pidf" ] || return 1
  read -r pid start <"$pidf" || return 1
  [ -n "$pid" ] && [ -n "$start" ] || return 1
  [ "$(tb_starttime "$pid")" = "$start" ] || return 1
  # A zombie still has its stat for a moment; it is not running.
  state=$({ awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$pid/stat"; } 2>/dev/null)
  [ "$state" != Z ]
}

# tb_start NAME [ENV=VALUE ...] -- COMMAND ARGS...
# Starts COMMAND in a new session (so that killing the caller's process group,
# as a CI timeout does, leaves it alone), logs to $TB/run/NAME.out.
tb_start() {
  local name=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do
    envs+=("$1")
    shift
  done
  shift
  mkdir -p "$TB/run/pids"
  # env and setsid exec in place (this background child is no process group
  # leader, so setsid does not fork): $! is the daemon itself.
  # -C: a daemon never keeps the caller's folder (which may go away; its
  # slurmstepd children would inherit it).
  env -C "$TB" SKYSLURM_TESTBED_DAEMON="$TB" "${envs[@]}" setsid "$@" \
    >>"$TB/run/$name.out" 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  local pid=$! start
  start=$(tb_starttime "$pid")
  [ -n "$start" ] || tb_die "$name exited at once; see $TB/run/$name.out"
  echo "$pid $start" >"$(tb_pidfile "$name")"
}

# Stops the daemon recorded under NAME: SIGTERM, then SIGKILL after a grace
# period. Returns 0 when it is gone (or was not running).
tb_stop() {
  local name=$1 grace=${2:-10} pid i
  if tb_running "$name"; then
    read -r pid _ <"$(tb_pidfile "$name")"
    # What it started goes with it (an sshd's open sessions, for one).
    local children
    children=$(tb_descendants "$pid")
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 20; i++)); do
      tb_running "$name" || break
      sleep 0.05
    done
    if tb_running "$name"; then
      tb_log "$name (pid $pid) ignored SIGTERM for ${grace}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.1
    fi
    # shellcheck disable=SC2086
    [ -z "$children" ] || kill -KILL $children 2>/dev/null || true
  fi
  rm -f "$(tb_pidfile "$name")"
}

# PIDs of all descendants of the given PIDs (not the PIDs themselves).
tb_descendants() {
  ps -e -o pid=,ppid= | awk -v seed="$*" '
    BEGIN { n = split(seed, s, " "); for (i = 1; i <= n; i++) keep[s[i]] = 1 }
    { parent[$1] = $2 }
    END {
      do {
        grew = 0
        for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; grew = 1 }
      } while (grew)
      for (i = 1; i <= n; i++) delete keep[s[i]]
      for (p in keep) print p
    }'
}

# PIDs of processes that carry this testbed's daemon marker, and of all their
# descendants (job processes under a slurmstepd). sshd overwrites its
# environment with its process title, so it is tracked by its pid file only.
tb_marked_pids() {
  local p marked=()
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = "$$" ] && continue
    if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qxF "SKYSLURM_TESTBED_DAEMON=$TB"; then
      marked+=("$p")
    fi
  done
  [ "${#marked[@]}" -gt 0 ] || return 0
  printf '%s\n' "${marked[@]}"
  tb_descendants "${marked[@]}"
}

# Kills whatever the daemons left behind (slurmstepd of jobs still running
# when slurmd stopped, and their job processes).
tb_reap() {
  local pids
  pids=$(tb_marked_pids | tr '\n' ' ')
  [ -n "${pids// /}" ] || return 0
  tb_log "stopping leftover processes of this testbed: $pids"
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  sleep 1
  pids=$(tb_marked_pids | tr '\n' ' ')
  # shellcheck disable=SC2086
  [ -z "${pids// /}" ] || kill -KILL $pids 2>/dev/null || true
}

# tb_wait SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.1 s.
tb_wait() {
  local secs=$1 what=$2 i
  shift 2
  for ((i = 0; i < secs * 10; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# ----------------------------------------------------------- cluster checks

# Asked of the state folder first: with no slurm.conf (or no slurmctld of
# ours running), Slurm's tools look for a configless controller through DNS
# and take about a minute to give up.
tb_ctld_up() {
  [ -f "$(tb_conf "$1")" ] && tb_running "slurmctld-$1" || return 1
  SLURM_CONF=$(tb_conf "$1") timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'
}

# All nodes of the cluster registered and usable (idle, mixed or allocated).
tb_nodes_up() {
  local c=$1 bad
  [ -f "$(tb_conf "$c")" ] && tb_running "slurmctld-$c" || return 1
  bad=$(SLURM_CONF=$(tb_conf "$c") timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null |
    awk '$2 !~ /^(idle|mix|alloc|comp)$/ {print}') || return 1
  [ -z "$bad" ] || return 1
  [ "$(SLURM_CONF=$(tb_conf "$c") timeout 5 sinfo -h -N -o '%N' | sort -u | wc -l)" -eq "${TB_NODE_COUNT[$c]}" ]
}

tb_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

tb_dbd_enabled() { [ -f "$TB/dbd/enabled" ]; }
