// The CPU reduction engine and its reducers, shared by the CPU kernels of the reduce family:
// reduce_cpu.cpp (sum, mean), prod_cpu.cpp, all_any_cpu.cpp, statistics_cpu.cpp (var / std,
// logsumexp), vector_norm_cpu.cpp, extremes_cpu.cpp (max / min, amax / amin),
// arg_extremes_cpu.cpp (max / min along a dim, argmax / argmin), softmax_cpu.cpp and
// scan_cpu.cpp (cumsum / cumprod). One header, several translation units: they compile in parallel, and a
// change to one kernel file rebuilds that file alone.
//
// One engine serves every reduction. The reduced dims are permuted last, so the input reads
// as M rows of K contiguous elements (out[r] = reduce(row r)); when instead the reduced block
// sits in the middle of a contiguous layout [O, K, I] (a column reduction such as sum(0) of a
// matrix), the engine accumulates I columns at a time without copying; any other layout is
// made contiguous first. Each op is a small "reducer" struct:
//
//   acc_t identity()                      the value of an empty reduction
//   acc_t step(acc_t a, in_t x, idx)      fold one element (idx: its position along K)
//   acc_t combine(acc_t a, acc_t b)       merge two partial results, a covering earlier elements
//   acc_t run(const in_t* p, n, base)     reduce a contiguous run (vectorised, several lanes)
//   void write(int64_t r, acc_t a)        store the result of output element r
//
// Rows are reduced pairwise: runs of kLeaf elements, merged along a fixed binary tree whose
// shape depends only on K. Long rows are split into fixed chunks reduced in parallel and
// merged along the same tree, so the result does not depend on the number of threads.
// (logsumexp down columns is the one exception: two passes, the max and then the shifted sum
// of exps, instead of its (max, sum) reducer, which would need two exps an element there.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "ember/backends/cpu/half_blocks.h"
#include "ember/ops/ops_util.h"
#include "ember/ops/reduce/complex_parts.h"
#include "ember/runtime/parallel.h"
#include "ember/ops/reduce/reduce_meta.h"
#include "ember/ops/reduce/reduce_functions.h"
#include "ember/runtime/simd.h"
#include "ember/ops/elementwise/vec_math.h"

namespace ember {
namespace {

constexpr int64_t kLeaf = 2048;           // elements per multi-lane run
constexpr int64_t kChunk = kLeaf * 32;    // unit of parallel work inside one long row
constexpr int64_t kTile = 64;             // columns accumulated together in column mode
constexpr int64_t kColBlock = 128;        // rows folded into a block sum before the total
constexpr int64_t kColGroup = 8192;       // rows per parallel group in column mode

template <typename T> constexpr bool is_fp_v = std::is_floating_point_v<T>;

// An element in its opmath type.
template <typename A, typename T> inline A load(T x) { return static_cast<A>(static_cast<opmath_t<T>>(x)); }

using reducer::nan_extreme;

// max (Max) or min of a run in opmath, vectorised; a NaN anywhere gives NaN. `f` maps each
// element first (abs for norms).
template <bool Max, typename T, typename F>
opmath_t<T> extreme_run(const T* p, int64_t n, F f) {
  using A = opmath_t<T>;
  constexpr int L = 32;
  const A init = Max ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
  // plain selections (max/min instructions) plus a separate NaN flag per lane: the compiler
  // vectorises this form best
  A m[L];
  uint32_t bad[L];
  for (int j = 0; j < L; ++j) {
    m[j] = init;
    bad[j] = 0;
  }
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    for (int j = 0; j < L; ++j) {
      const A x = f(load<A>(p[i + j]));
      m[j] = (Max ? x > m[j] : x < m[j]) ? x : m[j];
      bad[j] |= x != x;
    }
  }
  for (int j = 0; i + j < n; ++j) {
    const A x = f(load<A>(p[i + j]));
    m[j] = (Max ? x > m[j] : x < m[j]) ? x : m[j];
    bad[j] |= x != x;
  }
  // the lanes folded in halves (vector steps; a serial pass over the 32 lanes cost as much as
  // the run itself on softmax's rows of 64)
  uint32_t any = 0;
  for (int j = 0; j < L; ++j) any |= bad[j];
  for (int w = L / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) m[j] = (Max ? m[j + w] > m[j] : m[j + w] < m[j]) ? m[j + w] : m[j];
  return any ? std::numeric_limits<A>::quiet_NaN() : m[0];
}

// sum of exp(x - m) over a row with independent lanes; Store also writes each term to y.
template <bool Store, typename T, typename A>
A exp_sum(const T* x, int64_t n, A m, A* y) {
  constexpr int L = 16;
  if (n < L) {
    A r = 0;
    for (int64_t i = 0; i < n; ++i) {
      const A e = exp_(load<A>(x[i]) - m);
      if constexpr (Store) y[i] = e;
      r += e;
    }
    return r;
  }
  A acc[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    for (int j = 0; j < L; ++j) {
      const A e = exp_(load<A>(x[i + j]) - m);
      if constexpr (Store) y[i + j] = e;
      acc[j] += e;
    }
  }
  for (int j = 0; i + j < n; ++j) {
    const A e = exp_(load<A>(x[i + j]) - m);
    if constexpr (Store) y[i + j] = e;
    acc[j] += e;
  }
  for (int w = L / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0];
}

// For columns [0, w) of a contiguous [K, I] block: the max m[j] of each column and the sum
// s[j] of exp(x - m[j]) down it (in blocks of kColBlock rows, for accuracy).
template <typename T, typename A>
void column_max_expsum(const T* x, int64_t K, int64_t I, int64_t w, A* m, A* s) {
  for (int64_t j = 0; j < w; ++j) {
    m[j] = -std::numeric_limits<A>::infinity();
    s[j] = 0;
  }
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < w; ++j) m[j] = nan_extreme<true>(m[j], load<A>(x[k * I + j]));
  A part[kTile];
  for (int64_t kb = 0; kb < K; kb += kColBlock) {
    const int64_t kb1 = std::min(K, kb + kColBlock);
    for (int64_t j = 0; j < w; ++j) part[j] = 0;
    for (int64_t k = kb; k < kb1; ++k)
      for (int64_t j = 0; j < w; ++j) part[j] += exp_(load<A>(x[k * I + j]) - m[j]);
    for (int64_t j = 0; j < w; ++j) s[j] += part[j];
  }
}

// ---------------------------------------------------------------------------------------------
// layout planning

struct Plan {
  Tensor src;          // data, laid out as [M, K] (rows) or [O, K, I] (columns), contiguous
  int64_t M = 1, K = 1, O = 1, I = 1;
  bool columns = false;
  Shape out_shape;
};

inline Plan make_plan(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Plan P;
  P.out_shape = reduced_shape(x->sizes(), dims, keepdim);
  const int64_t nd = x->dim();
  std::vector<char> red(static_cast<size_t>(nd), 0);
  for (int64_t d : dims) red[d] = 1;
  Shape ks, kst, rs, rst;
  for (int64_t d = 0; d < nd; ++d) {
    if (red[d]) {
      rs.push_back(x->sizes()[d]);
      rst.push_back(x->strides()[d]);
      P.K *= x->sizes()[d];
    } else {
      ks.push_back(x->sizes()[d]);
      kst.push_back(x->strides()[d]);
      P.M *= x->sizes()[d];
    }
  }
  P.O = P.M;
  if (P.M == 0 || P.K == 0) {
    P.src = x;
    return P;
  }
  auto view = [&](size_t split) {  // kept[0, split) + reduced + kept[split, ...)
    Shape sz(ks.begin(), ks.begin() + split), st(kst.begin(), kst.begin() + split);
    sz.insert(sz.end(), rs.begin(), rs.end());
    st.insert(st.end(), rst.begin(), rst.end());
    sz.insert(sz.end(), ks.begin() + split, ks.end());
    st.insert(st.end(), kst.begin() + split, kst.end());
    return make_view(x, sz, st, x->offset());
  };
  Tensor rows = view(ks.size());
  if (rows->is_contiguous() || P.K == 1) {
    P.src = P.K == 1 ? as_contiguous(rows) : rows;
    return P;
  }
  // a column reduction: contiguous as [outer kept, reduced, inner kept]
  int64_t inner = 1;
  for (size_t split = ks.size(); split-- > 0;) {
    inner *= ks[split];
    Tensor v = view(split);
    if (v->is_contiguous()) {
      P.src = v;
      P.columns = true;
      P.I = inner;
      P.O = P.M / inner;
      return P;
    }
  }
  P.src = as_contiguous(rows);
  return P;
}

// ---------------------------------------------------------------------------------------------
// the engine

// Merges lanes [0, 2W) into lane 0 as a tree; W is a constant, so each level's loop becomes
// a few whole-vector operations (a loop over a varying width would be folded lane by lane).
template <int W, typename Op> inline void fold_lanes(const Op& op, typename Op::acc_t* a) {
  if constexpr (W >= 1) {
    for (int j = 0; j < W; ++j) a[j] = op.combine(a[j], a[j + W]);
    fold_lanes<W / 2>(op, a);
  }
}

// Reduce a contiguous run with L independent accumulators (vectorisable), merged as a tree.
template <int L, typename Op>
typename Op::acc_t lanes_run(const Op& op, const typename Op::in_t* p, int64_t n, int64_t base) {
  using acc_t = typename Op::acc_t;
  // short runs: fewer lanes, as setting up and merging lanes would cost more than the work
  if constexpr (L > 1) {
    if (n < 4 * L) return lanes_run<L / 4>(op, p, n, base);
  }
  // Blocks of kLeaf elements are folded into fresh lanes and merged lane by lane, so no lane
  // adds up more than kLeaf / L elements in a row however long the run (a long run only
  // saves the cost of folding the lanes into one value per kLeaf elements).
  acc_t a[L], b[L];
  if (n <= 0) return op.identity();
  for (int64_t s = 0; s < n; s += kLeaf) {
    acc_t* t = s == 0 ? a : b;
    for (int j = 0; j < L; ++j) t[j] = op.identity();
    const int64_t e = std::min(n, s + kLeaf);
    int64_t i = s;
    for (; i + L <= e; i += L) {
      for (int j = 0; j < L; ++j) t[j] = op.step(t[j], p[i + j], base + i + j);
    }
    for (int j = 0; i + j < e; ++j) t[j] = op.step(t[j], p[i + j], base + i + j);
    if (s != 0) {
      for (int j = 0; j < L; ++j) a[j] = op.combine(a[j], b[j]);
    }
  }
  fold_lanes<L / 2>(op, a);
  return a[0];
}

// Reduce a contiguous run in order (for reducers whose merge order matters, like argmax).
template <typename Op>
typename Op::acc_t serial_run(const Op& op, const typename Op::in_t* p, int64_t n, int64_t base) {
  typename Op::acc_t a = op.identity();
  for (int64_t i = 0; i < n; ++i) a = op.step(a, p[i], base + i);
  return a;
}

// The largest power of two below n (n >= 2).
inline int64_t left_size(int64_t n) {
  int64_t h = 1;
  while (h * 2 < n) h *= 2;
  return h;
}

// The leaf size of a reducer: Op::kLeafSize when it declares one (a multiple of kLeaf that
// divides kChunk), else kLeaf.
template <typename Op, typename = void> struct LeafSize { static constexpr int64_t value = kLeaf; };
template <typename Op> struct LeafSize<Op, std::void_t<decltype(Op::kLeafSize)>> {
  static constexpr int64_t value = Op::kLeafSize;
  static_assert(value % kLeaf == 0 && kChunk % value == 0, "leaf size must tile kChunk");
};

// Pairwise reduction of a run: leaves merged along a fixed tree. S is the stored element type:
// the reducer's in_t, or a 16-bit float read by a float reducer, whose leaves are widened into
// a float buffer and reduced by the float instantiation (the same values: the conversion is
// exact, and the reducer computed in float before).
template <typename Op, typename S>
typename Op::acc_t tree_run(const Op& op, const S* p, int64_t n, int64_t base) {
  constexpr int64_t leaf = LeafSize<Op>::value;
  if (n <= leaf) {
    if constexpr (std::is_same_v<S, typename Op::in_t>) {
      typename Op::acc_t r;
      simd_dispatch([&] { r = op.run(p, n, base); });
      return r;
    } else {
      float buf[leaf];
      widen_block(p, buf, n);
      return tree_run(op, static_cast<const float*>(buf), n, base);
    }
  }
  const int64_t h = left_size((n + leaf - 1) / leaf) * leaf;
  auto a = tree_run(op, p, h, base);
  return op.combine(a, tree_run(op, p + h, n - h, base + h));
}

// Merges partial results along the same tree that tree_run uses.
template <typename Op>
typename Op::acc_t tree_merge(const Op& op, const typename Op::acc_t* parts, int64_t n) {
  if (n == 1) return parts[0];
  const int64_t h = left_size(n);
  auto a = tree_merge(op, parts, h);
  return op.combine(a, tree_merge(op, parts + h, n - h));
}

template <typename Op, typename S> void reduce_rows(const Op& op, const Plan& P) {
  using acc_t = typename Op::acc_t;
  const S* base = P.src->template data<S>();
  const int64_t M = P.M, K = P.K;
  if (K >= 2 * kChunk && M < 2 * static_cast<int64_t>(get_num_threads())) {
    // few long rows: split each row into fixed chunks reduced in parallel
    const int64_t nchunks = (K + kChunk - 1) / kChunk;
    std::unique_ptr<acc_t[]> parts(new acc_t[static_cast<size_t>(nchunks)]);  // not vector<bool>
    for (int64_t r = 0; r < M; ++r) {
      const S* row = base + r * K;
      parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          const int64_t s = c * kChunk;
          parts[c] = tree_run(op, row + s, std::min(kChunk, K - s), s);
        }
      });
      op.write(r, tree_merge(op, parts.get(), nchunks));
    }
    return;
  }
  parallel_for(0, M, std::max<int64_t>(1, kParallelGrain / K), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) op.write(r, tree_run(op, base + r * K, K, 0));
  });
}

template <typename Op> void reduce_columns(const Op& op, const Plan& P) {
  using in_t = typename Op::in_t;
  using acc_t = typename Op::acc_t;
  const in_t* base = P.src->template data<in_t>();
  const int64_t O = P.O, K = P.K, I = P.I;
  const int64_t tiles = (I + kTile - 1) / kTile;
  const int64_t groups = (K + kColGroup - 1) / kColGroup;
  const int64_t items = O * tiles * groups;
  std::unique_ptr<acc_t[]> partial(groups > 1 ? new acc_t[static_cast<size_t>(groups * O * I)] : nullptr);
  auto item = [&](int64_t it) { simd_dispatch([&] {
    const int64_t g = it % groups, t = (it / groups) % tiles, o = it / groups / tiles;
    const int64_t i0 = t * kTile, w = std::min(kTile, I - i0);
    const int64_t k0 = g * kColGroup, k1 = std::min(K, k0 + kColGroup);
    acc_t total[kTile], part[kTile];
    for (int64_t j = 0; j < w; ++j) total[j] = op.identity();
    for (int64_t kb = k0; kb < k1; kb += kColBlock) {
      const int64_t kb1 = std::min(k1, kb + kColBlock);
      for (int64_t j = 0; j < w; ++j) part[j] = op.identity();
      for (int64_t k = kb; k < kb1; ++k) {
        const in_t* row = base + (o * K + k) * I + i0;
        for (int64_t j = 0; j < w; ++j) part[j] = op.step(part[j], row[j], k);
      }
      for (int64_t j = 0; j < w; ++j) total[j] = op.combine(total[j], part[j]);
    }
    const int64_t r0 = o * I + i0;
    if (groups == 1) {
      for (int64_t j = 0; j < w; ++j) op.write(r0 + j, total[j]);
    } else {
      for (int64_t j = 0; j < w; ++j) partial[static_cast<size_t>(g * O * I + r0 + j)] = total[j];
    }
  }); };
  const int64_t per_item = std::min(I, kTile) * std::min(K, kColGroup);
  parallel_for(0, items, std::max<int64_t>(1, kParallelGrain / per_item), [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) item(it);
  });
  if (groups > 1) {
    const int64_t M = O * I;
    parallel_for(0, M, std::max<int64_t>(1, kParallelGrain / groups), [&](int64_t b, int64_t e) {
      std::unique_ptr<acc_t[]> parts(new acc_t[static_cast<size_t>(groups)]);
      for (int64_t r = b; r < e; ++r) {
        for (int64_t g = 0; g < groups; ++g) parts[g] = partial[static_cast<size_t>(g * M + r)];
        op.write(r, tree_merge(op, parts.get(), groups));
      }
    });
  }
}

// Runs a reducer over a plan. A float reducer also reads float16 and bfloat16 plans (the
// kernels compile their reducers for float only and pass 16-bit floats to them, see
// compute_t): rows are widened a leaf at a time, columns through a float32 copy (converting
// in the column loop would compile that loop again for each 16-bit type).
template <typename Op> void run_reduction(const Op& op, const Plan& P) {
  using in_t = typename Op::in_t;
  if (P.M == 0) return;
  if (P.K == 0) {
    for (int64_t r = 0; r < P.M; ++r) op.write(r, op.identity());
    return;
  }
  if constexpr (std::is_same_v<in_t, float>) {
    const ScalarType stored = P.src->dtype();
    if (stored == ScalarType::Float16 || stored == ScalarType::BFloat16) {
      if (P.columns) {
        Plan wide = P;
        wide.src = to_dtype(P.src, ScalarType::Float32);
        reduce_columns(op, wide);
      } else if (stored == ScalarType::Float16) {
        reduce_rows<Op, Half>(op, P);
      } else {
        reduce_rows<Op, BFloat16>(op, P);
      }
      return;
    }
  }
  if (P.columns) reduce_columns(op, P);
  else reduce_rows<Op, in_t>(op, P);
}

// The type a reduction kernel computes a dtype's reduction in: 16-bit floats reduce in float
// (their opmath type), through the float32 reducers, so that the heavy reducer loops are
// compiled once per opmath type and not again for float16 and bfloat16. Sums (sum, mean,
// prod) keep their 16-bit reducers: their leaves are 4x longer, and widening 8,192 elements
// at a time spills the buffer out of L1 (bfloat16 sum of 1M: 40 -> 100 us; float16 90 -> 124),
// for 3.5 s of compile time saved.
template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Calls f(C* out) with C = compute_t<T>: res's own data, or a float32 temporary that is
// rounded into res afterwards (once, to nearest, as the reducer's own store would).
template <typename T, typename F> void with_result(const Tensor& res, F&& f) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<C, T>) {
    f(res->template data<T>());
  } else {
    Tensor tmp = empty(res->sizes(), ScalarType::Float32);
    f(tmp->template data<float>());
    copy_into(res, tmp);
  }
}

// ---------------------------------------------------------------------------------------------
// reducers

// The reducers: the math of reduce_functions.h (shared with CUDA), with the CPU's element loads,
// vectorised runs and stores.

template <typename T> using sum_acc_t = reducer::sum_acc_t<opmath_t<T>>;

template <typename T, typename Out, bool Prod> struct SumOp : reducer::Sum<sum_acc_t<T>, Prod> {
  using M = reducer::Sum<sum_acc_t<T>, Prod>;
  using in_t = T;
  using acc_t = sum_acc_t<T>;
  Out* out;
  double divisor = 0;  // mean: the result is divided by it
  acc_t step(acc_t a, T x, int64_t) const { return M::step(a, load<acc_t>(x)); }
  // longer leaves for sums: folding 64 lanes into one value per 2048 elements costs ~15% of
  // a memory-bound sum; lanes_run still restarts its lanes every kLeaf elements
  static constexpr int64_t kLeafSize = 4 * kLeaf;
  acc_t run(const T* p, int64_t n, int64_t base) const { return lanes_run<64>(*this, p, n, base); }
  void write(int64_t r, acc_t a) const {
    if constexpr (is_fp_v<acc_t>) {
      if (divisor != 0) {
        out[r] = convert<Out>(M::mean(a, divisor));
        return;
      }
    }
    out[r] = convert<Out>(a);
  }
};

// max/min of values; NaN propagates.
template <typename T, bool Max> struct ExtremeOp : reducer::Extreme<opmath_t<T>, Max> {
  using M = reducer::Extreme<opmath_t<T>, Max>;
  using in_t = T;
  using acc_t = opmath_t<T>;
  T* out;
  acc_t step(acc_t a, T x, int64_t) const { return M::step(a, load<acc_t>(x)); }
  acc_t run(const T* p, int64_t n, int64_t base) const {
    if constexpr (is_fp_v<acc_t>) return extreme_run<Max>(p, n, [](acc_t v) { return v; });
    else return lanes_run<16>(*this, p, n, base);
  }
  void write(int64_t r, acc_t a) const { out[r] = static_cast<T>(a); }
};

// argmax/argmin (and max/min with dim): the first index of the extreme value; a NaN wins.
template <typename T, bool Max> struct ArgOp : reducer::Arg<opmath_t<T>, Max> {
  using M = reducer::Arg<opmath_t<T>, Max>;
  using in_t = T;
  using acc_t = typename M::acc_t;
  T* values = nullptr;  // optional
  int64_t* indices;
  // runs are scanned in order (serial_run), so each element follows those already folded
  acc_t step(acc_t a, T x, int64_t idx) const { return M::step_in_order(a, static_cast<opmath_t<T>>(x), idx); }
  acc_t run(const T* p, int64_t n, int64_t base) const { return serial_run(*this, p, n, base); }
  void write(int64_t r, acc_t a) const {
    if (values) values[r] = static_cast<T>(a.v);
    indices[r] = a.i;
  }
};

// var/std: a run is reduced in two passes (its mean, then the squared deviations), runs and
// columns merged by reducer::Var.
template <typename T> struct VarOp : reducer::Var {
  using in_t = T;
  T* out;
  double dof;
  bool take_sqrt;
  static double value(T x) { return static_cast<double>(static_cast<opmath_t<T>>(x)); }
  acc_t step(acc_t a, T x, int64_t) const { return Var::step(a, value(x)); }
  acc_t run(const T* p, int64_t n, int64_t) const {
    constexpr int L = 8;
    double s[L] = {};
    int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int j = 0; j < L; ++j) s[j] += value(p[i + j]);
    for (int j = 0; i + j < n; ++j) s[j] += value(p[i + j]);
    double sum = 0;
    for (int j = 0; j < L; ++j) sum += s[j];
    acc_t a = identity();
    a.n = static_cast<double>(n);
    a.mean = sum / a.n;
    double q[L] = {};
    for (i = 0; i + L <= n; i += L) {
      for (int j = 0; j < L; ++j) {
        const double d = value(p[i + j]) - a.mean;
        q[j] += d * d;
      }
    }
    for (int j = 0; i + j < n; ++j) {
      const double d = value(p[i + j]) - a.mean;
      q[j] += d * d;
    }
    for (int j = 0; j < L; ++j) a.m2 += q[j];
    return a;
  }
  void write(int64_t r, acc_t a) const { out[r] = convert<T>(result(a, dof, take_sqrt)); }
};

template <typename T, NormKind Kind> struct NormOp : reducer::Norm<opmath_t<T>, Kind> {
  using M = reducer::Norm<opmath_t<T>, Kind>;
  using in_t = T;
  using acc_t = opmath_t<T>;
  T* out;
  acc_t p = 2;
  acc_t step(acc_t a, T x, int64_t) const { return M::step(a, load<acc_t>(x), p); }
  acc_t run(const T* ptr, int64_t n, int64_t base) const {
    auto abs_ = [](acc_t v) { return std::abs(v); };
    if constexpr (Kind == NormKind::Inf) return extreme_run<true>(ptr, n, abs_);
    else if constexpr (Kind == NormKind::NegInf) return extreme_run<false>(ptr, n, abs_);
    else return lanes_run<16>(*this, ptr, n, base);
  }
  void write(int64_t r, acc_t a) const { out[r] = static_cast<T>(M::result(a, p)); }
};

// logsumexp: a run is reduced as its max and then the sum of exp(x - max).
template <typename T> struct LogSumExpOp : reducer::LogSumExp<opmath_t<T>> {
  using M = reducer::LogSumExp<opmath_t<T>>;
  using in_t = T;
  using A = opmath_t<T>;
  using acc_t = typename M::acc_t;
  T* out;
  acc_t step(acc_t a, T x, int64_t) const { return M::step(a, static_cast<A>(x)); }
  acc_t run(const T* p, int64_t n, int64_t) const {
    const A m = extreme_run<true>(p, n, [](A v) { return v; });
    if (!std::isfinite(m)) return acc_t{m, 0};
    return acc_t{m, exp_sum<false>(p, n, m, static_cast<A*>(nullptr))};
  }
  void write(int64_t r, acc_t a) const { out[r] = static_cast<T>(M::result(a)); }
};

template <typename T, typename Out, bool All> struct AllAnyOp : reducer::AllAny<All> {
  using M = reducer::AllAny<All>;
  using in_t = T;
  using acc_t = bool;
  Out* out;
  acc_t step(acc_t a, T x, int64_t) const { return M::step(a, static_cast<opmath_t<T>>(x) != opmath_t<T>(0)); }
  acc_t run(const T* p, int64_t n, int64_t base) const { return lanes_run<16>(*this, p, n, base); }
  void write(int64_t r, acc_t a) const { out[r] = static_cast<Out>(a); }
};

// ---------------------------------------------------------------------------------------------
// shared argument handling

// The result tensor for a reduction: out itself when usable and not overlapping the input.
inline Tensor result_for(const char* op, const Tensor& self, const Tensor& out, const Shape& shape,
                  ScalarType dtype) {
  if (out && out->storage() == self->storage()) return empty(shape, dtype);
  return prepare_out(op, out, shape, dtype);
}

// sum (or prod) of self as its meta M (sum_meta / prod_meta) describes it, into out when given.
// Floats sum into their own dtype (dtype= converts the input first); bool and the integers
// accumulate in int64 and are written into an int64 result, or into an int64 temporary cast
// to the narrower result that dtype= asked for (the same values: the cast wraps as a store
// would). One instantiation per input dtype keeps this engine's compile time in check.
template <bool Prod>
Tensor sum_or_prod(const char* op, const Tensor& self, const AccumulateMeta& M, bool keepdim, const Tensor& out) {
  const Tensor x = to_dtype(self, M.input_dtype);
  const Plan P = make_plan(x, M.dims, keepdim);
  const Tensor res = result_for(op, self, out, M.shape, M.dtype);
  dispatch_all(x->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Out = std::conditional_t<is_float_v<T>, T, int64_t>;
    if (res->dtype() == scalar_type_of<Out>()) {
      run_reduction(SumOp<T, Out, Prod>{{}, res->data<Out>()}, P);
      return;
    }
    Tensor wide = empty(res->sizes(), scalar_type_of<Out>());
    run_reduction(SumOp<T, Out, Prod>{{}, wide->data<Out>()}, P);
    copy_into(res, wide);
  });
  return finish_out(op, out, res);
}

// x made contiguous and seen as [O, K, I] around dim d (softmax, the scans).
struct DimLayout {
  Tensor src;  // contiguous
  int64_t O = 1, K = 1, I = 1;
};

inline DimLayout dim_layout(const Tensor& x, int64_t d) {
  const DimSplit S = split_around_dim(x->sizes(), d);
  return {as_contiguous(x), S.O, S.K, S.I};
}

}  // namespace

}  // namespace ember
