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
TB_CLUSTERS=(alpha beta gamma delta)
TB_HOME_CLUSTER=alpha
TB_USERS=(skyuser1 skyuser2)
TB_LMOD_INIT=/usr/share/lmod/lmod/init/bash

# Ports. Each cluster owns a block of 100: slurmctld at +17, its login sshd at
# +10, slurmd of node i at +20+i. Shared services sit at 79xx.
declare -A TB_PORT_BASE=([alpha]=7000 [beta]=7100 [gamma]=7200 [delta]=7400)
TB_MARIADB_PORT=7906
TB_SLURMDBD_PORT=7907

tb_ctld_port() { echo $((TB_PORT_BASE[$1] + 17)); }
tb_login_port() { echo $((TB_PORT_BASE[$1] + 10)); }
tb_slurmd_port() { echo $((TB_PORT_BASE[$1] + 20 + $2)); }  # cluster, node index

# Nodes per cluster, in order; node i (1-based) is <cluster>-n<i>.
declare -A TB_NODE_COUNT=([alpha]=3 [beta]=2 [gamma]=3 [delta]=4)
tb_nodes() {
  local c=$1 i
  for ((i = 1; i <= TB_NODE_COUNT[$c]; i++)); do echo "$c-n$i"; done
}

tb_conf() { echo "$TB/clusters/$1/etc/slurm.conf"; }

# delta is the testbed's cloud: an elastic cluster whose nodes are
# State=CLOUD, powered up by Slurm's ResumeProgram (the testbed's provider,
# scripts/testbed/cloud-provider) when a job needs them, after a boot of
# SKYSLURM_TESTBED_CLOUD_BOOT seconds (default 20), and powered down after
# SuspendTime (SKYSLURM_TESTBED_CLOUD_SUSPEND, default 60). No slurmd of it
# runs until then. The provider's ledger is $TB/cloud/ledger.csv.
TB_CLOUD_CLUSTER=delta
tb_is_elastic() { [ "$1" = "$TB_CLOUD_CLUSTER" ]; }
# The partition of a node of delta: cloud (on-demand) or spot.
tb_cloud_partition() {
  case "$1" in delta-n1 | delta-n2) echo cloud ;; *) echo spot ;; esac
}
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

# All nodes of the cluster registered and usable (idle, mixed or allocated);
# on the elastic cluster also powered down (idle~), powering up (#, or %
# while powering down) and failing a reclaimed node's job (down*).
tb_nodes_up() {
  local c=$1 bad ok='^(idle|mix|alloc|comp)$'
  [ -f "$(tb_conf "$c")" ] && tb_running "slurmctld-$c" || return 1
  if tb_is_elastic "$c"; then ok='^(idle|mix|alloc|comp|down)[~#%!*]?$'; fi
  bad=$(SLURM_CONF=$(tb_conf "$c") timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null |
    awk -v ok="$ok" '$2 !~ ok {print}') || return 1
  [ -z "$bad" ] || return 1
  [ "$(SLURM_CONF=$(tb_conf "$c") timeout 5 sinfo -h -N -o '%N' | sort -u | wc -l)" -eq "${TB_NODE_COUNT[$c]}" ]
}

# tb_port_open PORT [HOST]: something accepts connections there (127.0.0.1 by default).
tb_port_open() { (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null; }

# ------------------------------------------------ the peers' own networks
# The peers' login nodes (beta's, gamma's) each sit in a network namespace
# of their own, joined to this machine by a veth pair, so that a cut cable
# can be staged (scripts/testbed/cut, heal) while every daemon keeps running.
# alpha, the home, stays on loopback. Each link is a /30 that exists only on
# this machine: 10.77.<i>.1 on this machine's side, 10.77.<i>.2 the login
# node's. The clusters' own daemons stay on loopback (slurmctld and slurmd
# listen on every address), so Slurm's own -M keeps working; the login node
# reaches them across the link through a copy of the cluster's slurm.conf
# that names this machine's side of it (tb_login_conf).
declare -A TB_NETNS_INDEX=([beta]=1 [gamma]=2)
tb_has_netns() { [ -n "${TB_NETNS_INDEX[$1]:-}" ]; }
tb_netns() { echo "skytb-$1"; }
tb_veth_host() { echo "skytb-$1-h"; }
tb_veth_ns() { echo "skytb-$1-n"; }
tb_link_host_addr() { echo "10.77.${TB_NETNS_INDEX[$1]}.1"; }
tb_login_addr() {
  if tb_has_netns "$1"; then echo "10.77.${TB_NETNS_INDEX[$1]}.2"; else echo 127.0.0.1; fi
}
# The slurm.conf the login node's sessions use.
tb_login_conf() {
  if tb_has_netns "$1"; then echo "$TB/clusters/$1/etc/login/slurm.conf"; else tb_conf "$1"; fi
}
# Bounded: across a cut link a connection would hang for minutes. A peer's
# address is tried only while its link exists.
tb_login_up() {
  if tb_has_netns "$1"; then tb_link_exists "$1" || return 1; fi
  timeout 3 bash -c "exec 3<>/dev/tcp/$(tb_login_addr "$1")/$(tb_login_port "$1")" 2>/dev/null
}
tb_link_exists() { [ -e "/run/netns/$(tb_netns "$1")" ] && ip link show "$(tb_veth_host "$1")" >/dev/null 2>&1; }

# The links' addresses never leave this machine: without its link, an
# address of 10.77.0.0/16 is unreachable here (never routed out through the
# default route).
tb_fence_links() {
  local routes
  routes=$(ip route show type unreachable 2>/dev/null || true)
  grep -q '^unreachable 10\.77\.0\.0/16' <<<"$routes" || ip route add unreachable 10.77.0.0/16 metric 4000
}
tb_unfence_links() { ip route del unreachable 10.77.0.0/16 metric 4000 2>/dev/null || true; }

# Creates the namespace and its link (again: idempotent).
tb_netns_up() {
  local c=$1 ns h n
  tb_has_netns "$c" || return 0
  tb_fence_links
  ns=$(tb_netns "$c") h=$(tb_veth_host "$c") n=$(tb_veth_ns "$c")
  [ -e "/run/netns/$ns" ] || ip netns add "$ns"
  if ! ip link show "$h" >/dev/null 2>&1; then
    ip link add "$h" type veth peer name "$n"
    ip link set "$n" netns "$ns"
  fi
  ip addr replace "$(tb_link_host_addr "$c")/30" dev "$h"
  ip link set "$h" up
  ip netns exec "$ns" ip addr replace "$(tb_login_addr "$c")/30" dev "$n"
  ip netns exec "$ns" ip link set "$n" up
  ip netns exec "$ns" ip link set lo up
}

# Removes the link and the namespace (nothing may run in it any more).
tb_netns_down() {
  tb_has_netns "$1" || return 0
  ip link del "$(tb_veth_host "$1")" 2>/dev/null || true
  if [ -e "/run/netns/$(tb_netns "$1")" ]; then ip netns del "$(tb_netns "$1")" || true; fi
  return 0
}

# The link drops every packet, silently, both ways: each side's neighbour
# entry for the other names a MAC address that nobody has, so frames go
# nowhere and connections time out, as over a cut cable (never "refused").
tb_netns_cut() {
  local c=$1 ns
  ns=$(tb_netns "$c")
  ip neigh replace "$(tb_login_addr "$c")" lladdr 02:00:5e:77:00:01 nud permanent \
    dev "$(tb_veth_host "$c")"
  ip netns exec "$ns" ip neigh replace "$(tb_link_host_addr "$c")" lladdr 02:00:5e:77:00:02 \
    nud permanent dev "$(tb_veth_ns "$c")"
}
tb_netns_heal() {
  local c=$1 ns
  ns=$(tb_netns "$c")
  ip neigh del "$(tb_login_addr "$c")" dev "$(tb_veth_host "$c")" 2>/dev/null || true
  ip netns exec "$ns" ip neigh del "$(tb_link_host_addr "$c")" dev "$(tb_veth_ns "$c")" \
    2>/dev/null || true
}
tb_netns_is_cut() {
  local entry
  entry=$(ip neigh show "$(tb_login_addr "$1")" dev "$(tb_veth_host "$1")" 2>/dev/null || true)
  grep -q PERMANENT <<<"$entry"
}

# ------------------------------------------------------------- filesystems
# beta and gamma have filesystems of their own, as peer clusters do
# (docs/testbed.md): their login sshd and slurmds run in one mount namespace
# per cluster, kept at $TB_MNTNS_DIR/<cluster>, in which /home is
# $TB/fs/<cluster>/home, the cluster's scratch root is $TB/fs/<cluster>/scratch,
# and what is alpha's alone is hidden (the ready user's $TB/home, $TB/fs, the
# other clusters' scratch trees). Every other path (the testbed's
# configuration, the plugin, /usr, /tmp) stays where it is. alpha keeps this
# machine's own view; $TB/fs/<cluster> shows a peer's files from here.
declare -A TB_SCRATCH_ROOT=([alpha]=/scratch [beta]=/lustre/scratch [gamma]=/gpfs/scratch
  [delta]=/cloudfs/scratch)
declare -A TB_SCRATCH_TOP=([alpha]=/scratch [beta]=/lustre [gamma]=/gpfs [delta]=/cloudfs)
TB_MNTNS_DIR=/run/skytb-mnt
tb_has_own_fs() { [ "$1" != "$TB_HOME_CLUSTER" ]; }
tb_mntns() { echo "$TB_MNTNS_DIR/$1"; }
# Where this machine sees the folder that CLUSTER calls PATH (/home/... or
# under its scratch root; anything else is the same path everywhere).
tb_host_path() {
  local c=$1 p=$2 root=${TB_SCRATCH_ROOT[$1]}
  if ! tb_has_own_fs "$c"; then
    echo "$p"
  elif [ "$p" = /home ] || [[ $p == /home/* ]]; then
    echo "$TB/fs/$c$p"
  elif [ "$p" = "$root" ] || [[ $p == "$root"/* ]]; then
    echo "$TB/fs/$c/scratch${p#"$root"}"
  else
    echo "$p"
  fi
}
tb_mntns_live() { [ "$(findmnt -rn -o FSTYPE --mountpoint "$(tb_mntns "$1")" 2>/dev/null)" = nsfs ]; }
# Whether the live namespace of CLUSTER is this testbed's: its /home is
# $TB/fs/<c>/home (one made for another $TB, or for a removed one, is not).
tb_mntns_ours() {
  local c=$1 there here
  there=$(nsenter --mount="$(tb_mntns "$c")" stat -c %d:%i /home 2>/dev/null) || return 1
  here=$(stat -c %d:%i "$TB/fs/$c/home" 2>/dev/null) || return 1
  [ "$there" = "$here" ]
}
# "mnt:[inode]" of the cluster's namespace, as /proc/PID/ns/mnt reads.
tb_mntns_id() { echo "mnt:[$(stat -L -c %i "$(tb_mntns "$1")")]"; }
# Whether the recorded daemon NAME runs in CLUSTER's filesystem view.
tb_in_own_fs() {
  local name=$1 c=$2 pid
  tb_has_own_fs "$c" || return 0
  tb_mntns_live "$c" || return 1
  read -r pid _ <"$(tb_pidfile "$name")"
  [ "$(readlink "/proc/$pid/ns/mnt")" = "$(tb_mntns_id "$c")" ]
}

# Makes a folder (and its missing parents), remembering those it made in
# $TB/fs/created, so that `down --purge` removes exactly what the testbed
# created outside $TB.
tb_mkdir_outside() {
  local d=$1 missing=() p
  p=$d
  while [ ! -e "$p" ]; do
    missing=("$p" "${missing[@]}")
    p=$(dirname "$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  mkdir -p "$d"
  mkdir -p "$TB/fs"
  printf '%s\n' "${missing[@]}" >>"$TB/fs/created"
}

# The scratch roots on this machine (mount points for the peers' views), and
# the namespace of CLUSTER (again: idempotent; a live one is kept).
tb_fs_up() {
  local c=$1 f other script
  tb_mkdir_outside "${TB_SCRATCH_ROOT[$c]}"
  tb_has_own_fs "$c" || return 0
  install -d -m 755 "$TB/fs" "$TB/fs/$c" "$TB/fs/$c/home" "$TB/fs/$c/scratch"
  if tb_mntns_live "$c"; then
    tb_mntns_ours "$c" && return 0
    # Another testbed's: made again (its daemons, in the old one, are
    # restarted by up: tb_in_own_fs).
    tb_fs_down "$c"
  fi
  mkdir -p "$TB_MNTNS_DIR"
  # A namespace is kept by binding its file, which needs a private mount.
  mountpoint -q "$TB_MNTNS_DIR" || mount --bind "$TB_MNTNS_DIR" "$TB_MNTNS_DIR"
  mount --make-private "$TB_MNTNS_DIR"
  f=$(tb_mntns "$c")
  : >"$f"
  script="mount --bind '$TB/fs/$c/home' /home && mount --bind '$TB/fs/$c/scratch' '${TB_SCRATCH_ROOT[$c]}'"
  for other in "${TB_CLUSTERS[@]}"; do
    [ "$other" != "$c" ] || continue
    tb_mkdir_outside "${TB_SCRATCH_ROOT[$other]}"
    script+=" && mount -t tmpfs -o ro,mode=000,size=4k tmpfs '${TB_SCRATCH_TOP[$other]}'"
  done
  # Hidden last: $TB/fs/<c>/* are bound above, before their parent goes.
  mkdir -p "$TB/home"
  script+=" && mount -t tmpfs -o ro,mode=000,size=4k tmpfs '$TB/home'"
  script+=" && mount -t tmpfs -o ro,mode=000,size=4k tmpfs '$TB/fs'"
  if ! unshare --mount="$f" --propagation private sh -ec "$script"; then
    # Half made: never kept (a later up would take it for a whole one).
    tb_fs_down "$c"
    tb_die "could not make the filesystem view of $c (mount namespace $f)"
  fi
}

# Lets the namespace go (nothing of the cluster may run in it any more).
tb_fs_down() {
  tb_has_own_fs "$1" || return 0
  local f
  f=$(tb_mntns "$1")
  if tb_mntns_live "$1"; then umount "$f" || true; fi
  rm -f "$f"
  return 0
}

# Removes what tb_mkdir_outside made, deepest first (what is under a folder
# it made was put there by the testbed's users and jobs; never across a
# mount point).
tb_fs_purge() {
  local list="$TB/fs/created" d
  [ -f "$list" ] || return 0
  tac "$list" | while read -r d; do
    case "$d" in
      /scratch | /scratch/* | /lustre | /lustre/* | /gpfs | /gpfs/* | /cloudfs | /cloudfs/*)
        rm -rf --one-file-system -- "$d" || tb_log "warning: could not remove all of $d"
        ;;
    esac
  done
}

# The command that starts a daemon of CLUSTER in its filesystem view (and,
# with "net", in its network namespace too): an array in TB_ENTER.
tb_enter() {
  local c=$1 net=${2:-}
  TB_ENTER=()
  if tb_has_own_fs "$c"; then
    TB_ENTER=(nsenter "--mount=$(tb_mntns "$c")" "--wd=$TB")
    if [ "$net" = net ] && tb_has_netns "$c"; then TB_ENTER+=("--net=/run/netns/$(tb_netns "$c")"); fi
    TB_ENTER+=(--)
  elif [ "$net" = net ] && tb_has_netns "$c"; then
    TB_ENTER=(ip netns exec "$(tb_netns "$c")")
  fi
}

# Starts the login node's sshd (in its namespace for a peer).
tb_start_login() {
  local c=$1 cfg="$TB/ssh/$1/sshd_config"
  tb_netns_up "$c"
  tb_fs_up "$c"
  tb_enter "$c" net
  tb_start "sshd-$c" -- "${TB_ENTER[@]}" /usr/sbin/sshd -D -e -f "$cfg"
}

# Starts slurmd of NODE of CLUSTER (in its filesystem view for a peer).
tb_start_slurmd() {
  local c=$1 n=$2 conf
  conf=$(tb_conf "$c")
  tb_fs_up "$c"
  tb_enter "$c"
  tb_start "slurmd-$n" SLURM_CONF="$conf" -- "${TB_ENTER[@]}" /usr/sbin/slurmd -D -N "$n" -f "$conf"
}

# The cloud's boot and SuspendTime in seconds: given to up in the
# environment, else as an earlier up recorded them (until down --purge),
# else 20 and 60.
tb_cloud_setting() { # VARIABLE FILE DEFAULT
  local v=${!1:-}
  [ -n "$v" ] || v=$(cat "$TB/cloud/$2" 2>/dev/null || true)
  echo "${v:-$3}"
}
tb_cloud_boot() { tb_cloud_setting SKYSLURM_TESTBED_CLOUD_BOOT boot 20; }
tb_cloud_suspend() { tb_cloud_setting SKYSLURM_TESTBED_CLOUD_SUSPEND suspend 60; }
tb_cloud_ledger() { echo "$TB/cloud/ledger.csv"; }

tb_dbd_enabled() { [ -f "$TB/dbd/enabled" ]; }

# epsilon, Slurm 24.11 in a Debian 13 root filesystem behind the bastion
# epsilon-gw (scripts/testbed/epsilon). Its ports are on the loopback of its
# own network namespace, the login node's and the bastion's on their links.
TB_EPSILON_CTLD_PORT=7517 # slurmd 7518, nodes 7521-7522
TB_EPSILON_DBD_PORT=7507
TB_EPSILON_DB_PORT=7506
TB_EPSILON_LOGIN_PORT=7510
TB_EPSILON_GW_PORT=7520
tb_epsilon_dir() { echo "$TB/clusters/epsilon"; }
tb_epsilon_login_addr() { echo 10.77.6.2; }
tb_epsilon_gw_addr() { echo 10.77.5.2; }
tb_epsilon_enabled() { [ "${SKYSLURM_TESTBED_EPSILON:-1}" != 0 ]; }

# PostgreSQL (scripts/testbed/postgres): site daemons' state and the store
# tests' second engine, on this machine's loopback.
TB_POSTGRES_PORT=7508
tb_postgres_enabled() { [ "${SKYSLURM_TESTBED_POSTGRES:-1}" != 0 ]; }

# epsilon's Debian 13 root filesystem (scripts/testbed/trixie-rootfs), kept
# beside the testbed's state so that `down --purge` keeps it.
TB_CACHE=${SKYSLURM_TESTBED_CACHE:-/var/cache/skyslurm-testbed}
tb_rootfs() { echo "$TB_CACHE/trixie-rootfs"; }
# The Debian mirror this machine's apt uses (deb822 or one-line sources).
tb_debian_mirror() {
  local m
  m=$(grep -hs -m1 -E '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | head -n 1)
  [ -n "$m" ] || m=$(grep -hs -E '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
    grep -v security | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit }}' | head -n 1)
  echo "${m:-http://deb.debian.org/debian}"
}
