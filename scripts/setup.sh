#!/usr/bin/env bash
# Installs everything Refinery needs on Debian 12, idempotently: a second run
# checks and returns in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBS=(
  build-essential cmake ninja-build pkg-config
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libz3-dev libcli11-dev libtorch-dev coinor-libcbc-dev coinor-cbc libxgboost-dev
  libhdf5-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-torch python3-torchvision python3-onnx python3-h5py python3-numpy
  # ATen's convolutions and matmuls call the system BLAS (libblas.so.3);
  # without this Debian's reference BLAS serves it and the interpreter (so
  # validation) runs about 10x slower (resnext50: 2.5 s a run instead of 0.25 s).
  # Serial: the interpreter is single-threaded by design.
  libopenblas0-serial
  # The report pages' test (tests/report/pages_test.sh) opens them in headless
  # Chromium and validates real reports against report/schema/ with jsonschema.
  chromium python3-jsonschema
)

missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node and npm may come from elsewhere than Debian (a newer Node with its own
# npm): only install Debian's when the commands are missing.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# onnxruntime-node (pinned in tools/ort/package.json) for measuring and for
# checking our exported models in a real runtime.
if [ ! -d tools/ort/node_modules/onnxruntime-node ] || [ tools/ort/package-lock.json -nt tools/ort/node_modules/.package-lock.json ]; then
  echo "setup: npm install in tools/ort"
  (cd tools/ort && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
echo "setup: ok"
