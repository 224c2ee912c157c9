// The strided iteration engine shared by elementwise ops, copies and fills.
//
// N operands share one shape; each has its own byte strides (0 for broadcast dims). The
// engine coalesces dims that are contiguous for every operand, then calls
// loop(ptrs, inner_strides, n) on runs of the innermost dim, in parallel above a grain.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ember/runtime/parallel.h"
#include "ember/core/tensor.h"

namespace ember {

// "a CPU kernel was given a tensor on cuda:0" (ops_util.cpp).
[[noreturn]] void throw_not_on_cpu(const Device& d);

template <int N> struct StridedLoop {
  Shape shape;                                // coalesced, innermost last
  std::vector<std::array<int64_t, N>> strides;  // per dim, bytes
  std::array<char*, N> base;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
};

// Operands must already have `shape` (expand them first); strides are taken from them.
template <int N>
StridedLoop<N> make_loop(const Shape& shape, const std::array<const TensorImpl*, N>& ops) {
  StridedLoop<N> L;
  for (int k = 0; k < N; ++k) {
    // a safety net: dispatch sends CUDA tensors to CUDA kernels, never into a CPU loop
    if (ops[k]->device().type != DeviceType::CPU) throw_not_on_cpu(ops[k]->device());
    L.base[k] = ops[k]->data_ptr();
  }
  const int64_t nd = static_cast<int64_t>(shape.size());
  // drop size-1 dims, then merge neighbours that are contiguous for every operand
  for (int64_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    std::array<int64_t, N> st;
    for (int k = 0; k < N; ++k) {
      st[k] = ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->itemsize());
    }
    if (!L.shape.empty()) {
      bool merge = true;
      for (int k = 0; k < N; ++k) merge &= (L.strides.back()[k] == st[k] * shape[d]);
      if (merge) {
        L.shape.back() *= shape[d];
        L.strides.back() = st;
        continue;
      }
    }
    L.shape.push_back(shape[d]);
    L.strides.push_back(st);
  }
  if (L.shape.empty()) {
    L.shape.push_back(1);
    L.strides.push_back(std::array<int64_t, N>{});
  }
  return L;
}

// Runs loop(char** ptrs, const int64_t* strides, int64_t n) over [begin, end) of the
// flattened index space. The operand pointers are located once, then advanced run by run
// (an odometer over the outer dims): short inner runs (a transposed view's rows of 32)
// cost a few additions each, not a fresh walk over every dim.
template <int N, typename Loop>
void run_range(const StridedLoop<N>& L, int64_t begin, int64_t end, Loop& loop) {
  const int64_t nd = static_cast<int64_t>(L.shape.size());
  const int64_t inner = L.shape[nd - 1];
  std::array<int64_t, N> inner_strides = L.strides[nd - 1];
  std::vector<int64_t> idx(nd, 0);
  int64_t rem = begin;
  for (int64_t d = nd - 1; d >= 0; --d) {
    idx[d] = rem % L.shape[d];
    rem /= L.shape[d];
  }
  std::array<char*, N> ptrs;
  for (int k = 0; k < N; ++k) {
    char* p = L.base[k];
    for (int64_t d = 0; d < nd; ++d) p += idx[d] * L.strides[d][k];
    ptrs[k] = p;
  }
  int64_t pos = begin;
  while (pos < end) {
    const int64_t n = std::min(inner - idx[nd - 1], end - pos);
    loop(ptrs.data(), inner_strides.data(), n);
    pos += n;
    if (pos >= end) break;
    // the next run starts a new inner row: back to the row's start, one step in dim nd - 2,
    // carrying into the dims above when a dim wraps
    for (int k = 0; k < N; ++k) ptrs[k] -= idx[nd - 1] * inner_strides[k];
    idx[nd - 1] = 0;
    for (int64_t d = nd - 2; d >= 0; --d) {
      for (int k = 0; k < N; ++k) ptrs[k] += L.strides[d][k];
      if (++idx[d] < L.shape[d]) break;
      for (int k = 0; k < N; ++k) ptrs[k] -= L.shape[d] * L.strides[d][k];
      idx[d] = 0;
    }
  }
}

template <int N, typename Loop>
void for_each_strided(const StridedLoop<N>& L, Loop loop, int64_t grain = kParallelGrain) {
  const int64_t total = L.numel();
  if (total == 0) return;
  if (total < grain) {
    run_range<N>(L, 0, total, loop);
    return;
  }
  parallel_for(0, total, grain, [&](int64_t b, int64_t e) {
    Loop local = loop;
    run_range<N>(L, b, e, local);
  });
}

}  // namespace ember
