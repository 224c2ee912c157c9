#!/usr/bin/env bash
# Builds the convolution microbenchmark into benchmarks/conv_study/build/:
#   conv_bench               im2col+GEMM, direct, Winograd (OpenBLAS from scipy-openblas32)
#   conv_bench_dnnl          + oneDNN from the `onednn`/`onednn-devel` wheels   (if DNNL_ROOT is set)
#   conv_bench_dnnl_gomp     + oneDNN from the `onednn-cpu-gomp` wheel          (if DNNL_GOMP_ROOT is set)
# DNNL_ROOT / DNNL_GOMP_ROOT: the prefix (venv) the wheels were installed into (lib/, include/).
# The gomp wheel ships no headers: the onednn-devel ones are used with dnnl_config.h switched
# to the OpenMP CPU runtime (the C API those headers wrap is the same across oneDNN 3.x).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/build"
mkdir -p "$out"
PY="${PYTHON:-python}"
blas_lib="$("$PY" -c 'import scipy_openblas32 as s; print(s.get_lib_dir())')"
CXX="${CXX:-g++}"
flags=(-O3 -march=native -std=c++17 -fopenmp -Wall -Wno-unknown-pragmas)
blas=(-L"$blas_lib" -Wl,-rpath,"$blas_lib" -lscipy_openblas)

"$CXX" "${flags[@]}" "$here/conv_bench.cpp" -o "$out/conv_bench" "${blas[@]}"
echo "built $out/conv_bench"

if [[ -n "${DNNL_ROOT:-}" ]]; then
  # RPATH (not RUNPATH) so that libdnnl's own dependencies (libtbb, libsycl, ...) resolve too
  "$CXX" "${flags[@]}" -DHAVE_DNNL -I"$DNNL_ROOT/include" "$here/conv_bench.cpp" -o "$out/conv_bench_dnnl" \
    "${blas[@]}" -L"$DNNL_ROOT/lib" -Wl,--disable-new-dtags,-rpath,"$DNNL_ROOT/lib" -ldnnl
  echo "built $out/conv_bench_dnnl"
fi

if [[ -n "${DNNL_GOMP_ROOT:-}" ]]; then
  : "${DNNL_ROOT:?DNNL_GOMP_ROOT needs DNNL_ROOT for the onednn-devel headers}"
  inc="$out/gomp_include"
  rm -rf "$inc" && mkdir -p "$inc/oneapi"
  cp -r "$DNNL_ROOT/include/oneapi/dnnl" "$inc/oneapi/"
  sed -i -e 's/^#define DNNL_CPU_THREADING_RUNTIME .*/#define DNNL_CPU_THREADING_RUNTIME DNNL_RUNTIME_OMP/' \
         -e 's/^#define DNNL_CPU_RUNTIME .*/#define DNNL_CPU_RUNTIME DNNL_RUNTIME_OMP/' \
         -e 's/^#define DNNL_GPU_RUNTIME .*/#define DNNL_GPU_RUNTIME DNNL_RUNTIME_NONE/' "$inc/oneapi/dnnl/dnnl_config.h"
  "$CXX" "${flags[@]}" -DHAVE_DNNL -I"$inc" "$here/conv_bench.cpp" -o "$out/conv_bench_dnnl_gomp" \
    "${blas[@]}" -L"$DNNL_GOMP_ROOT/lib" -Wl,--disable-new-dtags,-rpath,"$DNNL_GOMP_ROOT/lib" -ldnnl
  echo "built $out/conv_bench_dnnl_gomp"
fi
