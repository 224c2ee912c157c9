// CUDA kernels of sort, argsort and topk. The checks, dim wrapping and k validation are
// order_meta (sort_meta.h), which sort_cpu.cpp's CPU kernels call too.
//
// As on the CPU, dim is moved last and the input copied contiguous: M rows of K elements.
// Each element becomes an unsigned key whose unsigned order is the requested order (NaN above
// every number and all NaNs equal, -0.0 equal to 0.0, complemented for descending), paired
// with its index in the row. The pairs are sorted by (key, index) with a bitonic network,
// rows padded to a power of two P with pairs that sort after every element:
// - P <= one tile (4096 pairs for keys of <= 32 bits, 2048 for 64-bit keys): one kernel sorts
//   whole rows (several short rows per block) in shared memory and writes the results;
// - longer rows: the keys go to a global buffer of M * P pairs; tiles are sorted in shared
//   memory, then each merge stage runs its long strides as global passes and its short ones
//   in shared memory; a last kernel writes the results.
// Pairs are distinct, so the order is total: sort and argsort equal the CPU's stable sort,
// whatever `stable` says, and the values are the original elements, bit for bit.
//
// topk takes the first k pairs of each sorted row, whatever `sorted` says. Its values equal
// the CPU's (for sorted=True, in the same order); the indices equal the CPU's unless values
// tie: here tied values keep their index order, while the CPU keeps PyTorch's CPU selection
// (partial_sort / nth_element, which order ties as those algorithms happen to leave them).
// With sorted=False the CPU may return the k values in another order.
#include <algorithm>
#include <cstring>
#include <limits>

#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/sort/sort_meta.h"

namespace ember::cuda_engine {
namespace {

constexpr int kSortThreads = 1024;

// Pairs per shared-memory tile: (key, int64 index) pairs filling at most 48 KiB.
template <typename Key> constexpr int sort_tile() { return sizeof(Key) == 4 ? 4096 : 2048; }

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

template <int N> struct UIntOf;
template <> struct UIntOf<1> { using type = uint8_t; };
template <> struct UIntOf<2> { using type = uint16_t; };
template <> struct UIntOf<4> { using type = uint32_t; };
template <> struct UIntOf<8> { using type = uint64_t; };

// The bits of +inf of a floating type (magnitudes above it are NaN).
template <typename T> struct InfBits;
template <> struct InfBits<float> { static constexpr uint32_t value = 0x7F800000u; };
template <> struct InfBits<double> { static constexpr uint64_t value = 0x7FF0000000000000ull; };
template <> struct InfBits<__half> { static constexpr uint16_t value = 0x7C00u; };
template <> struct InfBits<__nv_bfloat16> { static constexpr uint16_t value = 0x7F80u; };

template <typename T> constexpr bool is_device_float = std::is_floating_point_v<T> || is_low_float<T>;

// The key of v: unsigned order of keys = the order of the values (see the file comment).
template <typename T, typename Key> __device__ __forceinline__ Key sort_key(T v, bool desc) {
  using U = typename UIntOf<sizeof(T)>::type;
  U k;
  if constexpr (std::is_same_v<T, bool>) {
    k = v ? U(1) : U(0);
  } else {
    U b;
    memcpy(&b, &v, sizeof(T));
    constexpr U sign = static_cast<U>(U(1) << (8 * sizeof(U) - 1));
    if constexpr (is_device_float<T>) {
      const U mag = static_cast<U>(b & static_cast<U>(~sign));
      if (mag > InfBits<T>::value) {
        k = static_cast<U>(~U(0));  // NaN: above every number
      } else if (mag == 0) {
        k = sign;  // -0.0 and 0.0: one key
      } else {
        k = (b & sign) ? static_cast<U>(~b) : static_cast<U>(b | sign);
      }
    } else if constexpr (std::is_signed_v<T>) {
      k = static_cast<U>(b ^ sign);
    } else {
      k = b;
    }
  }
  if (desc) k = static_cast<U>(~k);
  return static_cast<Key>(k);
}

// Orders the pairs a and b ascending (up) or descending (!up) by (key, index).
template <typename Key, typename I>
__device__ __forceinline__ void compare_swap(Key* sk, int64_t* si, I a, I b, bool up) {
  const Key ka = sk[a], kb = sk[b];
  const int64_t ia = si[a], ib = si[b];
  const bool greater = ka > kb || (ka == kb && ia > ib);
  if (greater == up) {
    sk[a] = kb;
    sk[b] = ka;
    si[a] = ib;
    si[b] = ia;
  }
}

// The bitonic steps j = j_from, j_from / 2, ..., 1 of merge stage k over the L pairs in shared
// memory (the whole block takes part). The pairs are positions pos0 + i of rows of P (pos0:
// the position of pair 0 in its row; several rows of P when pos0 is 0 and L > P). Every
// row's stage P sorts ascending.
template <typename Key>
__device__ void bitonic_steps(Key* sk, int64_t* si, int L, int64_t P, int64_t pos0, int64_t k, int j_from) {
  for (int j = j_from; j > 0; j >>= 1) {
    for (int t = threadIdx.x; t < L / 2; t += blockDim.x) {
      const int i = ((t & ~(j - 1)) << 1) | (t & (j - 1));
      const bool up = (((pos0 + i) & (P - 1)) & k) == 0;
      compare_swap(sk, si, i, i + j, up);
    }
    __syncthreads();
  }
}

// Rows of P <= one tile: block g sorts rows g * segs .. g * segs + segs - 1 (segs rows of P
// pairs in shared memory) and writes each row's first kout indices (and values).
template <typename T, typename Key>
__global__ void sort_rows_kernel(const T* src, int64_t M, int64_t K, int P, int segs, bool desc, int64_t kout,
                                 T* vals, int64_t* oidx) {
  extern __shared__ int64_t sort_smem[];
  const int L = segs * P;
  int64_t* si = sort_smem;
  Key* sk = reinterpret_cast<Key*>(si + L);
  for (int64_t g = blockIdx.x; g * segs < M; g += gridDim.x) {
    const int64_t row0 = g * segs;
    for (int i = threadIdx.x; i < L; i += blockDim.x) {
      const int64_t row = row0 + i / P, pos = i % P;
      if (row < M && pos < K) {
        sk[i] = sort_key<T, Key>(src[row * K + pos], desc);
        si[i] = pos;
      } else {  // padding: after every element
        sk[i] = static_cast<Key>(~Key(0));
        si[i] = std::numeric_limits<int64_t>::max();
      }
    }
    __syncthreads();
    for (int k = 2; k <= P; k <<= 1) bitonic_steps(sk, si, L, P, 0, k, k >> 1);
    for (int i = threadIdx.x; i < L; i += blockDim.x) {
      const int64_t row = row0 + i / P, pos = i % P;
      if (row < M && pos < kout) {
        const int64_t ix = si[i];
        oidx[row * kout + pos] = ix;
        if (vals) vals[row * kout + pos] = src[row * K + ix];
      }
    }
    __syncthreads();
  }
}

// The pairs of M rows of K, padded to rows of P, into gk / gi.
template <typename T, typename Key>
__global__ void make_pairs_kernel(const T* src, int64_t M, int64_t K, int64_t P, bool desc, Key* gk, int64_t* gi) {
  const int64_t total = M * P;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = e / P, pos = e % P;
    if (pos < K) {
      gk[e] = sort_key<T, Key>(src[row * K + pos], desc);
      gi[e] = pos;
    } else {
      gk[e] = static_cast<Key>(~Key(0));
      gi[e] = std::numeric_limits<int64_t>::max();
    }
  }
}

// Each tile of the global pairs through shared memory: with k == 0, sorted (stages 2 .. tile,
// alternating direction with the tile's position); else the steps j < tile of stage k.
template <typename Key>
__global__ void sort_tiles_kernel(Key* gk, int64_t* gi, int64_t total, int64_t P, int64_t k) {
  extern __shared__ int64_t sort_smem[];
  constexpr int L = sort_tile<Key>();
  int64_t* si = sort_smem;
  Key* sk = reinterpret_cast<Key*>(si + L);
  for (int64_t t0 = blockIdx.x * static_cast<int64_t>(L); t0 < total; t0 += static_cast<int64_t>(gridDim.x) * L) {
    for (int i = threadIdx.x; i < L; i += blockDim.x) {
      sk[i] = gk[t0 + i];
      si[i] = gi[t0 + i];
    }
    __syncthreads();
    const int64_t pos0 = t0 % P;
    if (k == 0) {
      for (int kk = 2; kk <= L; kk <<= 1) bitonic_steps(sk, si, L, P, pos0, kk, kk >> 1);
    } else {
      bitonic_steps(sk, si, L, P, pos0, k, L >> 1);
    }
    for (int i = threadIdx.x; i < L; i += blockDim.x) {
      gk[t0 + i] = sk[i];
      gi[t0 + i] = si[i];
    }
    __syncthreads();
  }
}

// One bitonic step (stage k, stride j >= one tile) over the global pairs.
template <typename Key>
__global__ void bitonic_global_kernel(Key* gk, int64_t* gi, int64_t total, int64_t P, int64_t k, int64_t j) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total / 2;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = ((t & ~(j - 1)) << 1) | (t & (j - 1));
    compare_swap(gk, gi, i, i + j, ((i & (P - 1)) & k) == 0);
  }
}

// Each row's first kout indices (and values) from the sorted global pairs.
template <typename T>
__global__ void write_rows_kernel(const T* src, const int64_t* gi, int64_t M, int64_t K, int64_t P, int64_t kout,
                                  T* vals, int64_t* oidx) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < M * kout;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = e / kout, pos = e % kout;
    const int64_t ix = gi[row * P + pos];
    oidx[e] = ix;
    if (vals) vals[e] = src[row * K + ix];
  }
}

// Sorts the M rows of K of src (contiguous) and writes the first kout of each row's indices
// (and values when vals is not null), rows of kout, contiguous. On the current device.
template <typename T, typename Key>
void sort_rows(const char* op, const Device& dev, const T* src, int64_t M, int64_t K, bool desc, int64_t kout,
               T* vals, int64_t* oidx) {
  constexpr int tile = sort_tile<Key>();
  constexpr size_t pair_bytes = sizeof(Key) + sizeof(int64_t);
  const int64_t P = next_pow2(K);
  cudaStream_t stream = stream_of(dev);
  if (P <= tile) {
    const int64_t segs = std::min<int64_t>(tile / P, M);
    const int64_t L = segs * P;
    const int threads = static_cast<int>(std::clamp<int64_t>((L / 2 + 31) / 32 * 32, 32, kSortThreads));
    const int grid = static_cast<int>(std::min<int64_t>((M + segs - 1) / segs, 65535));
    sort_rows_kernel<T, Key><<<grid, threads, static_cast<size_t>(L) * pair_bytes, stream>>>(
        src, M, K, static_cast<int>(P), static_cast<int>(segs), desc, kout, vals, oidx);
    check_launch(op);
    return;
  }
  const int64_t total = M * P;
  Tensor keys = ember::empty({total}, sizeof(Key) == 4 ? ScalarType::Int32 : ScalarType::Int64, dev);
  Tensor idx = ember::empty({total}, ScalarType::Int64, dev);
  Key* gk = reinterpret_cast<Key*>(keys->data_ptr());
  int64_t* gi = reinterpret_cast<int64_t*>(idx->data_ptr());
  make_pairs_kernel<T, Key><<<blocks_for(total), kThreads, 0, stream>>>(src, M, K, P, desc, gk, gi);
  check_launch(op);
  const int tiles = static_cast<int>(std::min<int64_t>(total / tile, 65535));
  const size_t smem = tile * pair_bytes;
  sort_tiles_kernel<Key><<<tiles, kSortThreads, smem, stream>>>(gk, gi, total, P, 0);
  check_launch(op);
  for (int64_t k = 2 * static_cast<int64_t>(tile); k <= P; k <<= 1) {
    for (int64_t j = k / 2; j >= tile; j >>= 1) {
      bitonic_global_kernel<Key><<<blocks_for(total / 2), kThreads, 0, stream>>>(gk, gi, total, P, k, j);
      check_launch(op);
    }
    sort_tiles_kernel<Key><<<tiles, kSortThreads, smem, stream>>>(gk, gi, total, P, k);
    check_launch(op);
  }
  if (M * kout > 0) {
    write_rows_kernel<T><<<blocks_for(M * kout), kThreads, 0, stream>>>(src, gi, M, K, P, kout, vals, oidx);
    check_launch(op);
  }
}

// A contiguous tensor of the moved layout (d last) returned in the original dim order.
Tensor move_back(const Tensor& t, int64_t d) {
  const int64_t nd = t->dim();
  if (nd == 0 || d == nd - 1) return t;
  Shape sz(static_cast<size_t>(nd)), st(static_cast<size_t>(nd));
  for (int64_t i = 0, j = 0; i < nd; ++i) {
    const size_t ui = static_cast<size_t>(i);
    if (i == d) {
      sz[ui] = t->sizes()[static_cast<size_t>(nd - 1)];
      st[ui] = t->strides()[static_cast<size_t>(nd - 1)];
    } else {
      sz[ui] = t->sizes()[static_cast<size_t>(j)];
      st[ui] = t->strides()[static_cast<size_t>(j)];
      ++j;
    }
  }
  return contiguous_in(make_view(t, sz, st, t->offset()), t->dtype());
}

// The first k of the sorted entries of every row along dim: values (when want_values) and
// int64 indices (sort, argsort: k = K; topk).
std::tuple<Tensor, Tensor> order(const char* op, const Tensor& self, int64_t dim, int64_t k, bool desc,
                                 bool want_values, bool k_given) {
  const OrderMeta m = order_meta(op, self, dim, k, k_given);
  const Device dev = self->device();
  if (self->dim() == 0) {  // a single element, whatever k
    Tensor v = want_values ? ops::clone(self) : Tensor();
    Tensor i = ember::empty({}, ScalarType::Int64, dev);
    ops::zero(i, i);
    return {v, i};
  }
  const int64_t d = m.dim, K = m.K;
  k = m.k;
  Shape sz, st;
  int64_t M = 1;
  for (int64_t i = 0; i < self->dim(); ++i) {
    if (i == d) continue;
    sz.push_back(self->sizes()[static_cast<size_t>(i)]);
    st.push_back(self->strides()[static_cast<size_t>(i)]);
    M *= self->sizes()[static_cast<size_t>(i)];
  }
  sz.push_back(K);
  st.push_back(self->strides()[static_cast<size_t>(d)]);
  Shape out_moved = sz;
  out_moved.back() = k;
  Tensor values = want_values ? ember::empty(out_moved, self->dtype(), dev) : Tensor();
  Tensor indices = ember::empty(out_moved, ScalarType::Int64, dev);
  if (indices->numel() > 0) {
    Tensor x = contiguous_in(make_view(self, sz, st, self->offset()), self->dtype());
    CurrentDevice guard(dev.index);
    dispatch_device_type(self->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      using Key = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
      sort_rows<T, Key>(op, dev, reinterpret_cast<const T*>(x->data_ptr()), M, K, desc, k,
                        want_values ? reinterpret_cast<T*>(values->data_ptr()) : nullptr,
                        reinterpret_cast<int64_t*>(indices->data_ptr()));
    });
  }
  return {want_values ? move_back(values, d) : Tensor(), move_back(indices, d)};
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool /*stable*/) {
  return order("sort", self, dim, 0, descending, true, false);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool /*stable*/) {
  return std::get<1>(order("argsort", self, dim, 0, descending, false, false));
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  return order("topk", self, dim, k, largest, true, true);
}

}  // namespace ember::cuda

namespace ember::cuda_engine {
namespace {

// searchsorted's binary search (sort_cpu.cpp's bound): one thread per value.
template <typename T>
__global__ void bounds_kernel(const T* seq, const T* val, int64_t* out, int64_t total, int64_t n, int64_t per_row,
                              bool one_row, bool right) {
  using A = opmath_t<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* row = one_row ? seq : seq + (i / per_row) * n;
    const A x = static_cast<A>(val[i]);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + ((hi - lo) >> 1);
      const A m = static_cast<A>(row[mid]);
      if (right ? !(m > x) : !(m >= x)) lo = mid + 1;
      else hi = mid;
    }
    out[i] = lo;
  }
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

Tensor _searchsorted_bounds(const Tensor& sorted_sequence, const Tensor& values, bool right) {
  using namespace ember::cuda_engine;
  const SearchMeta m = search_meta(sorted_sequence, values);
  Tensor seq = ops::contiguous(sorted_sequence), val = ops::contiguous(values);
  Tensor out = ember::empty(values->sizes(), ScalarType::Int64, values->device());
  const int64_t total = out->numel();
  if (total == 0) return out;
  CurrentDevice guard(values->device().index);
  dispatch_device_any(seq->dtype(), "searchsorted", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_complex_v<T>) {
      throw std::runtime_error("searchsorted: complex values have no order");
    } else {
      bounds_kernel<T><<<blocks_for(total), kThreads, 0, stream_of(values->device())>>>(
          seq->data<T>(), val->data<T>(), out->data<int64_t>(), total, m.n, m.per_row, m.one_row, right);
    }
  });
  check_launch("searchsorted");
  return out;
}

}  // namespace ember::cuda

namespace ember::cuda {

// The CPU selects (nth_element); here the stable sort's indices at the positions.
Tensor _order_select_indices(const Tensor& self, int64_t dim, const Tensor& position) {
  return ops::gather(ops::argsort(self, dim, false, true), dim, position, Tensor());
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(_searchsorted_bounds);
EMBER_REGISTER_CUDA_KERNEL(_order_select_indices);
EMBER_REGISTER_CUDA_KERNEL(sort);
EMBER_REGISTER_CUDA_KERNEL(argsort);
EMBER_REGISTER_CUDA_KERNEL(topk);
