#!/usr/bin/env bash
# Build the capture harness for Hopper (sm_90a). Needs only the CUDA toolkit (nvcc).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/capture}"
nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a "$here/capture.cu" -o "$out"
echo "built $out"
