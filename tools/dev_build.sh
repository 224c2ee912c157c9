#!/usr/bin/env bash
# Incremental developer build of ember-tensor-core into the current Python, serialised
# by a lock so that parallel sessions never run two builds in one build dir.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec flock /tmp/ember-build.lock python -m pip install --no-build-isolation --no-deps -q \
  -Cbuild-dir="$root/build/tensor-core-dev" "$root/packages/tensor-core" "$@"
