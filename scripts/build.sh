#!/usr/bin/env bash
# Configures and builds Refinery into build/ (Release with debug info).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREFINERY_ONLY="" >/dev/null
ninja -C build -j"$(nproc)" "$@"
