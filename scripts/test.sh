#!/usr/bin/env bash
# Sets up this machine and runs every test:
#   1. installs the dependencies (scripts/install-deps.sh, Debian packages),
#   2. builds skyslurm, plain (build/, RelWithDebInfo) and with ASan+UBSan
#      (build-asan/, Debug, its unit tests),
#   3. brings the testbed up if it is not (scripts/testbed/up --with-dbd;
#      the cloud delta with a 6 s boot and a 10 s SuspendTime),
#   4. runs the unit tests in both trees, the integration tests against the
#      testbed through ctest, and each fuzzer for a bounded time
#      (SKYSLURM_FUZZ_SECONDS, default 20); meanwhile, at the lowest CPU
#      priority (nice 19), it builds the clang libFuzzer targets
#      (build-fuzz/) and the .deb and .rpm packages (scripts/package.sh,
#      SKYSLURM_WERROR=1: the optimized, hardened build users install, with
#      our warnings as errors): the integration tests mostly wait on the
#      clusters, and those builds take only the CPU they leave (the ASan
#      tree was tried there too: on 2 cores it finished 6 min after the
#      integration tests, and the whole took longer),
#   5. runs the package test: installs the .deb here, uses it on the testbed,
#      removes and purges it; exits non-zero on any failure.
#
#   scripts/test.sh          # as root on Debian 12
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo --preserve-env=SKYSLURM_TESTBED_DIR"

step() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }  # the time: what each step costs

step "dependencies"
$SUDO scripts/install-deps.sh

step "build (RelWithDebInfo, ASan+UBSan Debug)"
scripts/build.sh --asan

step "testbed"
# After the build, so that the testbed lists this build's SPANK plugin. The
# cloud's nodes boot in 6 s and power down after 10 s idle (the demo's 20
# and 60 scaled down): the elastic proofs take seconds, not minutes.
$SUDO env SKYSLURM_TESTBED_CLOUD_BOOT="${SKYSLURM_TESTBED_CLOUD_BOOT:-6}" \
  SKYSLURM_TESTBED_CLOUD_SUSPEND="${SKYSLURM_TESTBED_CLOUD_SUSPEND:-10}" \
  scripts/testbed/up --with-dbd

# The fuzz targets and the packages, beside the tests, at nice 19.
mkdir -p build-pkg
fuzz_log="$repo/build-pkg/fuzz-build.log"
nice -n 19 scripts/build.sh --fuzz >"$fuzz_log" 2>&1 &
fuzz_build=$!
background_log="$repo/build-pkg/background.log"
nice -n 19 env SKYSLURM_WERROR=1 scripts/package.sh >"$background_log" 2>&1 &
background=$!

status=0
step "unit tests"
ctest --test-dir build -L unit -j "$(nproc)" --output-on-failure || status=1
step "unit tests under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L unit -j "$(nproc)" --output-on-failure || status=1
step "integration tests (the testbed's real clusters)"
# From idle clusters: a job left in a cluster's saved state (an interrupted
# test's, one typed by hand) outlives down and up, and a held one would keep
# a cluster busy through every test that needs it idle.
$SUDO scripts/testbed/clear || status=1
$SUDO ctest --test-dir build -L integration --output-on-failure || status=1
step "fuzzing (bounded)"
if wait "$fuzz_build"; then
  scripts/fuzz.sh "${SKYSLURM_FUZZ_SECONDS:-20}" || status=1
else
  tail -n 60 "$fuzz_log"
  echo "test.sh: the fuzz targets failed to build; the whole log: $fuzz_log" >&2
  status=1
fi
step "packages (.deb and .rpm, lintian, rpmlint), built beside the tests"
if wait "$background"; then
  grep -E '^== |\.(deb|rpm)$' "$background_log" || true
  step "package test"
  $SUDO env SKYSLURM_PACKAGE_TEST=1 ctest --test-dir build -L package --output-on-failure || status=1
else
  tail -n 60 "$background_log"
  echo "test.sh: the packages failed; the whole log: $background_log" >&2
  status=1
fi

if [ "$status" -ne 0 ]; then
  echo "test.sh: FAILED (see above)" >&2
else
  echo "test.sh: all tests passed"
fi
exit "$status"
