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
exec flock /tmp/ember-build.lock python -m pip install --no-build-isolation --no-deps -q \
  -Cbuild-dir="$root/build/tensor-core-dev" "$root/packages/tensor-core" "$@"
