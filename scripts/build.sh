#!/usr/bin/env bash
# Configures and builds skyslurm into build/ (and, with --asan, also the
# ASan+UBSan tree build-asan/). Used by test.sh and demo.sh.
#
#   scripts/build.sh [--asan]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

configure() { # dir, extra cmake args...
  local dir=$1
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${generator[@]}" "$@"
  fi
  cmake --build "$dir" --parallel "$(nproc)"
}

configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ "${1:-}" = "--asan" ]; then
  configure build-asan -DCMAKE_BUILD_TYPE=Debug -DSKYSLURM_SANITIZE=ON
fi
