#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time (default 20 s each) from the
# seed corpus in tests/fuzz/corpus, working on a copy so the tree stays clean.
# A crash leaves its input in $FUZZ_ARTIFACTS (default /tmp/skyslurm-fuzz)
# and fails the run: turn it into a regression test, then fix it.
#
#   scripts/fuzz.sh [seconds]        (after scripts/build.sh --fuzz)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-20}
artifacts=${FUZZ_ARTIFACTS:-/tmp/skyslurm-fuzz}
status=0
for fuzzer in directives config wire answers; do
  bin="$repo/build-fuzz/tests/fuzz/${fuzzer}_fuzzer"
  [ -x "$bin" ] || { echo "fuzz.sh: $bin is not built (scripts/build.sh --fuzz)" >&2; exit 2; }
  work=$(mktemp -d)
  cp -r "$repo/tests/fuzz/corpus/$fuzzer/." "$work/"
  mkdir -p "$artifacts"
  echo "fuzz.sh: ${fuzzer}_fuzzer for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/${fuzzer}-" -print_final_stats=1 "$work" >"$artifacts/$fuzzer.log" 2>&1; then
    echo "fuzz.sh: ${fuzzer}_fuzzer FOUND A PROBLEM; see $artifacts/$fuzzer.log" >&2
    tail -n 30 "$artifacts/$fuzzer.log" >&2
    status=1
  else
    grep -E '^(stat::number_of_executed_units|Done)' "$artifacts/$fuzzer.log" | tail -n 2 || true
  fi
  rm -rf "$work"
done
exit $status
