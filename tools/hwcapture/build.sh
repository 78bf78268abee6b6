#!/usr/bin/env bash
# Build the capture harness and the timing probe (timing.cu) for Hopper (sm_90a). Needs only the CUDA compiler, nvcc, and the
# toolkit's headers (cuda.h, cuda_runtime.h); no driver, no GPU. The nvcc used: $NVCC if set,
# else the one PyPI's nvidia-cuda-nvcc wheel (the dev extra) installed for $PYTHON (default:
# the project's .venv), else the one on PATH.
set -euo pipefail
source="${BASH_SOURCE[0]}"
[[ $source == */* ]] || source="./$source"
here="$(cd "${source%/*}" && pwd)"
out="${1:-$here/capture}"             # the timing probe goes beside it, or to $2
python="${PYTHON:-$here/../../.venv/bin/python}"
nvcc="${NVCC:-}"
if [[ -z $nvcc && -x $python ]]; then
    # the wheels install the toolkit as nvidia/cu13/{bin,include,lib,nvvm} in site-packages
    nvcc="$("$python" -c 'import nvidia, os
print(next((p for p in (os.path.join(d, "cu13", "bin", "nvcc") for d in nvidia.__path__) if os.access(p, os.X_OK)), ""))' \
        2>/dev/null || true)"
fi
if [[ -z $nvcc ]]; then
    nvcc="$(command -v nvcc || true)"
fi
if [[ -z $nvcc ]]; then
    echo "build.sh: no nvcc (the CUDA compiler): pip install -e '.[dev]' installs it (nvidia-cuda-nvcc)," \
         "or put the CUDA toolkit's bin on PATH, or set NVCC" >&2
    exit 1
fi
timing="${2:-$(dirname "$out")/timing}"
"$nvcc" -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a "$here/capture.cu" -o "$out"
"$nvcc" -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a "$here/timing.cu" -o "$timing"
echo "built $out and $timing with $nvcc"
