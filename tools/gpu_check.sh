#!/usr/bin/env bash
# Issue 29: on a lent GPU machine, in one call: build the core with CUDA, run every CUDA test
# of every package (junit reports), then the CUDA benchmarks and a profiled ResNet-50 step.
#
#   bash tools/gpu_check.sh [stages]      stages: build tests bench (default: all three)
#
# GPU_CHECK_DTYPES (default "float32 bfloat16"; empty: none) are the bench_table1 runs,
# GPU_CHECK_PROFILE=0 skips the profiled ResNet-50 step.
#
# Writes under $OUT (at most 8 files come back from the device tool): summary.txt (one line
# per stage, with times), build.log, run.log (pytest and benchmark output), junit.tar.gz,
# bench.tar.gz (JSON results and the Chrome trace), and the built wheel in 15 MiB parts
# (wheel.part-*) so that a later call can install it instead of building again
# (GPU_CHECK_WHEEL=a folder holding the parts and wheel.name, the wheel's file name).
# Needs the scipy-openblas32 wheel under .whl/ (the machine has no package index), fetched here:
#   echo /.whl/ >> .git/info/exclude
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 -d .whl scipy-openblas32==<the version installed here>
# and carried with the call (carry=[".whl"]). Each stage has a time limit, cut to what is left
# of GPU_CHECK_DEADLINE seconds, so a hang costs that stage only and the files come back.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
stages=${*:-build tests bench}
py=${PYTHON:-python3}
t0=$(date +%s)
say() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$OUT/summary.txt"; }
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
# GPU_CHECK_DEADLINE: seconds for the whole script; each stage's limit is cut to what is left,
# so that the script ends (and its files come back) before the device time does.
deadline=${GPU_CHECK_DEADLINE:-1800}
limit() {  # limit CAP: the smaller of CAP and the seconds left (1 when under 20 are left)
  local left=$((deadline - ($(date +%s) - t0)))
  if [ "$left" -lt 20 ]; then echo 1; elif [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi
}
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH

say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)"
say "cpu: $(nproc) cores; $($py --version 2>&1); nvcc: $(nvcc --version 2>&1 | tail -1)"
say "torch: $($py -c 'import torch; print(torch.__version__, torch.cuda.is_available())' 2>&1 | tail -1)"

if has build; then
  $py -m pip install -q --no-index --no-deps --no-compile .whl/*.whl >>"$OUT/build.log" 2>&1 ||
    say "installing .whl/ failed (see build.log)"
  mkdir -p /tmp/wheel
  if [ -n "${GPU_CHECK_WHEEL:-}" ]; then
    cat "$GPU_CHECK_WHEEL"/wheel.part-* >/tmp/wheel/"$(cat "$GPU_CHECK_WHEEL"/wheel.name)"
    say "core wheel taken from $GPU_CHECK_WHEEL"
  else
    export EMBER_CUDA=ON EMBER_CUDA_ARCHS=${EMBER_CUDA_ARCHS:-90} CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
    if ! timeout "$(limit 420)" $py -m pip wheel -v --no-build-isolation --no-deps -w /tmp/wheel \
      -Cbuild-dir=build/gpu ./packages/tensor-core >>"$OUT/build.log" 2>&1; then
      say "BUILD FAILED"
      grep -E "error|Error" "$OUT/build.log" | head -40 | tee -a "$OUT/summary.txt"
      exit 1
    fi
    say "core wheel built: $(ls /tmp/wheel)"
  fi
  $py -m pip install -q --no-deps --no-compile --force-reinstall /tmp/wheel/*.whl >>"$OUT/build.log" 2>&1
  $py -m pip install -q --no-build-isolation --no-deps --no-compile \
    ./packages/autograd ./packages/nn ./packages/optim ./packages/mp ./packages/data \
    ./packages/ember >>"$OUT/build.log" 2>&1 || say "installing the Python packages failed"
  say "installed; doctor: $($py -m ember doctor 2>&1 | tr '\n' ';' | cut -c1-600)"
  if [ -z "${GPU_CHECK_WHEEL:-}" ]; then
    (cd /tmp/wheel && split -b 15M ./*.whl "$OUT/wheel.part-")
  fi
fi

if has tests; then
  # every package's CUDA tests at once (16 cores; one GPU is plenty for all of them)
  mkdir -p /tmp/junit /tmp/logs
  sel="cuda or devices or ipc or streams or pin_memory or allocator"
  common=(-q -rfE -p no:cacheprovider --timeout=60 --continue-on-collection-errors -o addopts=)
  # CUDA IPC works in some VMs and not in others: its first error, in one line
  say "cuda ipc: $(timeout 60 $py -c 'import ember_tensor as et
print(et._cuda_ipc_export(et.ones(4, device="cuda"))[:5])' 2>&1 | tail -1 | cut -c1-300)"
  say "tests (-k '$sel')"
  timeout "$(limit 180)" $py -m pytest packages/tensor-core/tests -k "$sel" -n 8 "${common[@]}" \
    --junitxml=/tmp/junit/core.xml >/tmp/logs/core.log 2>&1 &
  for pkg in autograd nn optim data ember mp; do
    timeout "$(limit 180)" $py -m pytest "packages/$pkg/tests" -k "$sel" "${common[@]}" \
      --junitxml="/tmp/junit/$pkg.xml" >"/tmp/logs/$pkg.log" 2>&1 &
  done
  wait
  # test_cuda_api.py once more in one process, in file order: a crash under xdist may depend
  # on what the same worker ran before
  timeout "$(limit 60)" $py -X faulthandler -m pytest packages/tensor-core/tests/test_cuda_api.py \
    "${common[@]}" -p no:xdist --junitxml=/tmp/junit/core_cuda_api_serial.xml \
    >/tmp/logs/core_cuda_api_serial.log 2>&1
  for log in /tmp/logs/*.log; do
    say "$(basename "$log" .log) tests: $(tail -1 "$log")"
    { echo "===== $log"; cat "$log"; } >>"$OUT/run.log"
  done
  tar -czf "$OUT/junit.tar.gz" -C /tmp junit
fi

if has bench; then
  mkdir -p /tmp/bench
  cd benchmarks
  timeout "$(limit 120)" $py bench_cuda.py --json /tmp/bench/bench_cuda.json >>"$OUT/run.log" 2>&1
  say "bench_cuda: exit $?"
  if [ "${GPU_CHECK_PROFILE:-1}" != 0 ]; then  # GPU_CHECK_PROFILE=0 skips the profiled step
    timeout "$(limit 60)" $py profile_step_cuda.py --trace /tmp/bench/resnet50_step_trace.json.gz \
      >>"$OUT/run.log" 2>&1
    say "profile_step_cuda: exit $?"
  fi
  for dtype in ${GPU_CHECK_DTYPES-float32 bfloat16}; do
    timeout "$(limit 120)" $py bench_table1.py --device cuda --dtype "$dtype" --warmup 2 \
      --repeats 2 --steps 3 --min-time 0.2 --json "/tmp/bench/table1_$dtype.json" \
      >>"$OUT/run.log" 2>&1
    say "bench_table1 $dtype: exit $?"
  done
  cd ..
  tar -czf "$OUT/bench.tar.gz" -C /tmp bench
fi
say "done"
