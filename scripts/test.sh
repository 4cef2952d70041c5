#!/usr/bin/env bash
# Sets up, builds everything (including the small zoo models the tests use)
# and runs the whole test suite, then the fast unit tests again under
# AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitize.sh).
# Arguments go to the first ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh all zoo_small
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 1200 "$@")
scripts/sanitize.sh
