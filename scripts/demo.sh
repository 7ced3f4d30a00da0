#!/usr/bin/env bash
# The main job, on a new Debian 12 machine (as root): installs the
# dependencies, builds and installs skyslurm, brings up the three-cluster
# testbed, fills the home cluster alpha, and submits a 2-node GPU job
# written for alpha with `sbatch --sky-any-cluster`: it lands on a peer,
# translated, and its output shows SKYPILOT_* beside SLURM_* on every node.
#
#   scripts/demo.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "installing dependencies (Debian packages)"
$SUDO scripts/install-deps.sh
say "building"
scripts/build.sh >/dev/null
build/shim/skyslurm --version
say "bringing up the testbed: three real Slurm 22.05 clusters on this machine"
$SUDO scripts/testbed/up
# shellcheck disable=SC1091
source "${SKYSLURM_TESTBED_DIR:-/tmp/skyslurm-testbed}/env"
scripts/testbed/status || true

work=$(mktemp -d /tmp/skyslurm-demo-XXXXXX)
chmod 1777 "$work"
fill=()
cleanup() {
  [ ${#fill[@]} -eq 0 ] || SLURM_CONF=$SLURM_CONF_ALPHA scancel "${fill[@]}" || true
  # The routed sbatch started the ready user's skyslurmd from $work: stop it.
  pid=$(cat "$SKYSLURM_TESTBED_DIR/home/.local/state/skyslurm/skyslurmd.lock" 2>/dev/null || true)
  if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$work/opt/sbin/skyslurmd" ]; then
    kill "$pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

say "installing skyslurm into $work/opt (cmake --install)"
cmake --install build --prefix "$work/opt" >/dev/null
ls "$work/opt/libexec/skyslurm/bin"

# The project folder the job is submitted from: it travels with the job.
mkdir -p "$work/proj"
cat >"$work/proj/train.sh" <<'JOB'
#!/bin/bash
#SBATCH --job-name=train
#SBATCH -p gpu
#SBATCH -N 2
#SBATCH --gres=gpu:h100:2
#SBATCH -t 10
module load cuda/12.1
echo "batch step: cluster $SLURM_CLUSTER_NAME, partition $SLURM_JOB_PARTITION, CUDA $CUDA_VERSION"
srun -l bash -c 'echo "SLURM_NODEID=$SLURM_NODEID SLURM_GPUS_ON_NODE=$SLURM_GPUS_ON_NODE  SKYPILOT_NODE_RANK=$SKYPILOT_NODE_RANK SKYPILOT_NUM_NODES=$SKYPILOT_NUM_NODES SKYPILOT_NUM_GPUS_PER_NODE=$SKYPILOT_NUM_GPUS_PER_NODE"' | sort
echo "SKYPILOT_NODE_IPS=$(echo $SKYPILOT_NODE_IPS)"
echo "SKYPILOT_TASK_ID=$SKYPILOT_TASK_ID"
echo "SKYPILOT_CLUSTER_INFO=$SKYPILOT_CLUSTER_INFO"
JOB
say "a training job written for the home cluster alpha"
cat "$work/proj/train.sh"

say "alpha is full: two jobs hold all 16 of its H100s"
for _ in 1 2; do
  fill+=("$(SLURM_CONF=$SLURM_CONF_ALPHA sbatch --parsable -N1 --gres=gpu:h100:8 -t 20 -o /dev/null --wrap 'sleep 600')")
done
for _ in $(seq 100); do
  [ "$(SLURM_CONF=$SLURM_CONF_ALPHA squeue -h -t R -j "$(IFS=,; echo "${fill[*]}")" | wc -l)" -eq 2 ] && break
  sleep 0.1
done
SLURM_CONF=$SLURM_CONF_ALPHA squeue

# The ready user (scripts/testbed/up): ~/.slurm/config names the clusters,
# ~/.config/skyslurm/skyslurm.yaml says alpha is home. The installed shim
# goes first on PATH, as /etc/profile.d would put it.
as_user() {
  (cd "$work/proj" && HOME="$SKYSLURM_TESTBED_DIR/home" PATH="$work/opt/libexec/skyslurm/bin:$PATH" "$@")
}
say "where would it start first? (sbatch --sky-explain submits nothing)"
echo "$ sbatch --sky-explain train.sh"
as_user sbatch --sky-explain train.sh | sed -n '/^Placement/,$p'

say "the main job: sbatch --sky-any-cluster"
echo "$ sbatch --sky-any-cluster train.sh"
out=$(as_user sbatch --sky-any-cluster train.sh)
echo "$out"
# One id, as a single cluster's sbatch prints it: the cluster's index above
# bit 26 (as Slurm's federation does), the id there below.
gid=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' <<<"$out")
cluster=$(as_user "$work/opt/bin/skyslurm" status "$gid" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["cluster"])')
id=$((gid & (1 << 26) - 1))
conf_var="SLURM_CONF_${cluster^^}"
echo "$ squeue -j $gid   (the shim's squeue: the job as $cluster's squeue shows it, under the id sbatch printed)"
as_user squeue -j "$gid"
echo "$ skyslurm queue   (every cluster in one table, from skyslurmd, which tracks the job)"
as_user "$work/opt/bin/skyslurm" queue
echo "$ scontrol show job $id   (on $cluster: the job as translated for it)"
SLURM_CONF=${!conf_var} scontrol show job "$id" | grep -E "JobName|Partition=|TresPerNode|Comment|NumNodes" | sed 's/^ */  /'
for _ in $(seq 300); do
  state=$(SLURM_CONF=${!conf_var} squeue -h -t all -j "$id" -o %T 2>/dev/null || true)
  case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
  sleep 0.2
done
say "its output, from $cluster (it ran in the copy of its folder there): SKYPILOT_* beside SLURM_*"
echo "$ skyslurm logs $cluster:$id"
for _ in $(seq 50); do
  text=$(as_user "$work/opt/bin/skyslurm" logs "$cluster:$id" 2>/dev/null || true)
  [ -n "$text" ] && break
  sleep 0.2
done
echo "$text"

say "without skyslurm: the same job sent to $cluster as written is refused"
echo "$ SLURM_CONF=\$$conf_var sbatch train.sh"
(cd "$work/proj" && SLURM_CONF=${!conf_var} sbatch train.sh) || true
say "done: source $SKYSLURM_TESTBED_DIR/env to use the clusters by hand (docs/testbed.md)"
