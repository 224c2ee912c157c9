#!/usr/bin/env bash
# Incremental developer build of ember-tensor-core into the current Python, serialised
# by a lock so that parallel sessions never run two builds in one build dir.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# A symlink inside the installed package (a source directory linked in for live edits)
# would let pip's uninstall delete the files it points to: drop such links first.
site=$(python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
if [ -d "$site/ember_tensor" ]; then
  find "$site/ember_tensor" -maxdepth 2 -type l -exec rm -f {} +
fi
# A CUDA build (nvcc there, EMBER_CUDA not OFF) compiles against the cuBLAS and cuDNN headers
# of their pip wheels (noxfile.py: CUDA_HEADER_WHEELS): install them once.
case "${EMBER_CUDA:-}" in [Oo][Ff][Ff]|0|[Ff][Aa][Ll][Ss][Ee]|[Nn][Oo]) cuda=0 ;; *) cuda=1 ;; esac
if [ "$cuda" = 1 ] && command -v "${CUDACXX:-nvcc}" >/dev/null 2>&1 &&
   ! python -c "from importlib.metadata import version as v; v('nvidia-cublas'); v('nvidia-cudnn-cu13')" \
     2>/dev/null; then
  flock /tmp/ember-build.lock python -m pip install -q nvidia-cublas nvidia-cudnn-cu13
fi
exec flock /tmp/ember-build.lock python -m pip install --no-build-isolation --no-deps -q \
  -Cbuild-dir="$root/build/tensor-core-dev" "$root/packages/tensor-core" "$@"
