#!/usr/bin/env bash
# The main job, on a new Debian 12 machine (as root): installs the
# dependencies, builds skyslurm, brings up the three-cluster testbed and
# shows it: each cluster runs a GPU job under its own GRES spelling, and the
# same request written for the home cluster is refused by a peer, which is
# the gap skyslurm closes.
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
trap 'rm -rf "$work"' EXIT

say "one GPU job per cluster, each in that cluster's own spelling"
declare -A type=([alpha]=h100 [beta]=nvidia_h100_80gb_hbm3 [gamma]=A100)
declare -A job
for c in alpha beta gamma; do
  conf_var="SLURM_CONF_${c^^}"
  job[$c]=$(SLURM_CONF=${!conf_var} sbatch --parsable --chdir "$work" -o "$work/$c.out" \
    --gres="gpu:${type[$c]}:2" --wrap 'echo "$SLURM_CLUSTER_NAME/$SLURMD_NODENAME: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"')
  echo "$ SLURM_CONF=\$$conf_var sbatch --gres=gpu:${type[$c]}:2 ...   -> job ${job[$c]} on $c"
done
for c in alpha beta gamma; do
  for _ in $(seq 100); do [ -s "$work/$c.out" ] && break; sleep 0.1; done
  cat "$work/$c.out"
done

say "the same job written for alpha (gpu:h100), submitted to gamma"
echo "$ SLURM_CONF=\$SLURM_CONF_GAMMA sbatch --gres=gpu:h100:2 --wrap true"
SLURM_CONF=$SLURM_CONF_GAMMA sbatch --gres=gpu:h100:2 --wrap true || true
echo "(peers name the same GPUs differently: translating that is skyslurm's job)"

say "the login nodes, over ssh with strict host-key checking"
for c in beta gamma; do
  echo "$ ssh -F \$SKYSLURM_TESTBED_DIR/slurm-config $c sinfo"
  ssh -F "$SKYSLURM_TESTBED_DIR/slurm-config" -o BatchMode=yes "$c" sinfo
done
say "done: source $SKYSLURM_TESTBED_DIR/env to use the clusters by hand (docs/testbed.md)"
