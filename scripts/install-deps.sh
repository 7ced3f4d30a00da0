#!/usr/bin/env bash
# Installs, from Debian's own archive, everything skyslurm's build, tests and
# testbed need. Idempotent: on a ready machine it only checks and returns.
#
#   scripts/install-deps.sh            # as root (or through sudo)
#
# Services that Debian would start on install (munge, slurmctld, mariadb ...)
# are held back with a temporary policy-rc.d: the testbed runs its own copies
# on private sockets and ports, and a stray system munged or slurmd would only
# get in the way.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git clang clang-format
  libclang-rt-14-dev
  # our own trees link with lld (scripts/build.sh): a test's link takes a
  # quarter of GNU ld's time, and CI links about 130 of them
  lld
  # libraries (Debian's only; see docs/architecture.md)
  libssh-dev libcurl4-openssl-dev libyaml-cpp-dev libjsoncpp-dev
  libspdlog-dev libfmt-dev libcli11-dev libcpp-httplib-dev libsqlite3-dev libssl-dev
  libpq-dev libmunge-dev
  sqlite3 libgtest-dev libgmock-dev libslurm-dev
  # the testbed: real Slurm 22.05, munge, login nodes, environment modules
  slurmctld slurmd slurm-client munge openssh-server openssh-client lmod
  slurmdbd mariadb-server
  # a site daemon's state: PostgreSQL 15 on a loopback port (scripts/testbed/postgres)
  postgresql-15
  # a site daemon's /metrics: checked by promtool, scraped by a Prometheus of
  # the test's own (the system's service is held back like the others)
  prometheus
  # gamma's entry reaches it through slurmrestd (access: rest)
  slurmrestd
  # epsilon: Slurm 24.11 in a Debian 13 root filesystem (debootstrap), behind
  # a bastion whose one-time codes the tests make (oathtool)
  debootstrap oathtool
  # tools the tests and scripts use
  procps psmisc iproute2 tmux python3 util-linux
  # scripts/structure-report measures functions' lengths with it
  universal-ctags
  # a job's folder travels with rsync (both ends: here and the login nodes)
  rsync
  # kappa, the Kubernetes cluster (scripts/testbed/kube): its certificates,
  # and the second client its conformance check runs (kubectl is the
  # machine's own, the cloud SDK's 1.32)
  openssl curl python3-kubernetes
  # the packaged man pages are rendered by a test; completion is tested
  # inside bash-completion
  man-db groff-base bash-completion
  # a workflow engine the tests drive through the shims (issue 17):
  # Debian's Snakemake 7.21, its --slurm executor and its --cluster mode
  snakemake
  # the trace replay's plots (bench/trace, issue 18): PNG without X
  gnuplot-nox
  # the dashboard's tests drive a real browser (issue 20): headless
  # Chromium through chromedriver and Selenium
  chromium chromium-driver python3-selenium
  # building and checking the packages (scripts/package.sh)
  debhelper fakeroot lintian rpm rpmlint cpio binutils
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  own_policy=1
fi
cleanup() { if [ "$own_policy" = 1 ]; then $SUDO rm -f "$policy"; fi; }
trap cleanup EXIT

$SUDO apt-get update -o DPkg::Lock::Timeout=600 -qq
$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}"
echo "install-deps: done"
