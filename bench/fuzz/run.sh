#!/usr/bin/env bash
# Runs one fuzz target for a while (bench/fuzz/README.md):
#
#   bench/fuzz/run.sh BUILD TARGET SECONDS [libFuzzer flags...]
#
# BUILD is the fuzz build folder (build-fuzz). The corpus grows in
# BUILD/fuzz/corpus/TARGET (seeded from BUILD/fuzz/seeds/TARGET, which
# seed.sh writes); crashes, timeouts and out-of-memory inputs go to
# BUILD/fuzz/artifacts/TARGET/; the log is BUILD/fuzz/logs/TARGET-<time>.log.
# Fork mode with one worker: a finding is saved and the run goes on.
set -euo pipefail
build=${1:?usage: run.sh BUILD TARGET SECONDS [flags...]}
target=${2:?}
seconds=${3:?}
shift 3
fuzz=$build/fuzz
mkdir -p "$fuzz/corpus/$target" "$fuzz/artifacts/$target" "$fuzz/logs"
log=$fuzz/logs/$target-$(date -u +%Y%m%dT%H%M%S).log
echo "log: $log"
cmd=(nice -n 19 "$build/bench/fuzz/fuzz_$target" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
  -max_total_time="$seconds" -rss_limit_mb=4096 -malloc_limit_mb=4096 -timeout=10
  -dict="$fuzz/$target.dict" -artifact_prefix="$fuzz/artifacts/$target/" "$@"
  "$fuzz/corpus/$target" "$fuzz/seeds/$target")
echo "${cmd[*]}" >"$log"
exec "${cmd[@]}" >>"$log" 2>&1
