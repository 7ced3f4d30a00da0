#!/usr/bin/env bash
# Configures and builds skyslurm into build/; with --asan also the ASan+UBSan
# tree build-asan/, with --fuzz the clang libFuzzer tree build-fuzz/ (the
# fuzz targets only). Used by test.sh and demo.sh.
#
#   scripts/build.sh [--asan] [--fuzz]
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
}

configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build --parallel "$(nproc)"
for arg in "$@"; do
  case "$arg" in
    --asan)
      configure build-asan -DCMAKE_BUILD_TYPE=Debug -DSKYSLURM_SANITIZE=ON -DSKYSLURM_BUILD_BENCHMARKS=OFF
      cmake --build build-asan --parallel "$(nproc)"
      ;;
    --fuzz)
      CC=clang CXX=clang++ configure build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSKYSLURM_FUZZ=ON \
        -DSKYSLURM_SANITIZE=ON -DSKYSLURM_BUILD_TESTS=OFF -DSKYSLURM_BUILD_BENCHMARKS=OFF
      cmake --build build-fuzz --parallel "$(nproc)" --target directives_fuzzer config_fuzzer
      ;;
    *)
      echo "build.sh: unknown argument $arg" >&2
      exit 2
      ;;
  esac
done
