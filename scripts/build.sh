#!/usr/bin/env bash
# Configures and builds skyslurm into build/ (RelWithDebInfo, -O2 with line
# tables only, -g1: a crash's backtrace and the sanitizers keep file:line, at
# about a sixth less compile time and a third of the objects' size; configure
# a tree of your own with -g to step through variables); with --asan
# also the ASan+UBSan tree build-asan/ (Debug; its unit tests only, the
# target skyslurm_unit_tests: that tree runs nothing else), with --release the Release
# tree build-release/ (-O3, what users build; no tests), with --fuzz the clang
# libFuzzer tree build-fuzz/ (the fuzz targets only). Every tree of ours has
# warnings as errors (SKYSLURM_WERROR); a user's or a distribution's build
# does not. Our trees link with lld where it is installed (install-deps.sh
# installs it): about a quarter of GNU ld's time for each of the ~130 test
# and tool executables a CI run links; a user's or a distribution's build
# keeps the toolchain's default linker. Used by test.sh and demo.sh.
#
#   scripts/build.sh [--asan] [--release] [--fuzz]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

linker=()
if command -v ld.lld >/dev/null; then
  linker=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld)
fi

configure() { # dir, extra cmake args...
  local dir=$1
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${generator[@]}" -DSKYSLURM_WERROR=ON "${linker[@]}" "$@"
  fi
}

configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build build --parallel "$(nproc)"
for arg in "$@"; do
  case "$arg" in
    --asan)
      # -g1: line tables (the sanitizers' reports keep file:line) at two
      # thirds of the compile time of full debug information.
      configure build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
        -DSKYSLURM_SANITIZE=ON -DSKYSLURM_BUILD_BENCHMARKS=OFF
      cmake --build build-asan --parallel "$(nproc)" --target skyslurm_unit_tests
      ;;
    --release)
      configure build-release -DCMAKE_BUILD_TYPE=Release -DSKYSLURM_BUILD_TESTS=OFF
      cmake --build build-release --parallel "$(nproc)"
      ;;
    --fuzz)
      # -g1: line tables (a crash report keeps file:line) at less compile
      # time than -g; nothing here is installed or debugged.
      CC=clang CXX=clang++ configure build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSKYSLURM_FUZZ=ON \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
        -DSKYSLURM_SANITIZE=ON -DSKYSLURM_BUILD_TESTS=OFF -DSKYSLURM_BUILD_BENCHMARKS=OFF
      cmake --build build-fuzz --parallel "$(nproc)" --target directives_fuzzer config_fuzzer wire_fuzzer answers_fuzzer
      ;;
    *)
      echo "build.sh: unknown argument $arg" >&2
      exit 2
      ;;
  esac
done
