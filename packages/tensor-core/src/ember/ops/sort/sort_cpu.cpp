// sort, argsort, topk along one dim, and searchsorted's binary search.
//
// The dim is moved last and the input made contiguous, so each of the M rows of K elements is
// ordered on its own (in parallel over rows). Keys are compared in opmath (float for the
// 16-bit floats); NaN orders above every number, as in PyTorch, and ties keep their original
// order (every sort is stable). Results are computed in the moved layout and moved back.
// The argument checks are order_meta (sort_meta.h), shared with the CUDA kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/ops/sort/sort_meta.h"

namespace ember {
namespace {

// x with dim d moved last, contiguous: M rows of K.
struct Rows {
  Tensor src;
  Shape moved;  // shape with d last
  int64_t M = 1, K = 1;
};

Rows rows_along(const Tensor& x, int64_t d) {
  Rows R;
  Shape sz, st;
  for (int64_t i = 0; i < x->dim(); ++i) {
    if (i == d) continue;
    sz.push_back(x->sizes()[i]);
    st.push_back(x->strides()[i]);
    R.M *= x->sizes()[i];
  }
  if (x->dim() > 0) {
    sz.push_back(x->sizes()[d]);
    st.push_back(x->strides()[d]);
    R.K = x->sizes()[d];
  }
  R.moved = sz;
  R.src = as_contiguous(make_view(x, sz, st, x->offset()));
  return R;
}

// A contiguous tensor of `moved` layout (d last) returned in the original dim order.
Tensor move_back(const Tensor& t, int64_t d) {
  const int64_t nd = t->dim();
  if (nd == 0 || d == nd - 1) return t;
  Shape sz(static_cast<size_t>(nd)), st(static_cast<size_t>(nd));
  for (int64_t i = 0, j = 0; i < nd; ++i) {
    if (i == d) {
      sz[i] = t->sizes()[nd - 1];
      st[i] = t->strides()[nd - 1];
    } else {
      sz[i] = t->sizes()[j];
      st[i] = t->strides()[j];
      ++j;
    }
  }
  return as_contiguous(make_view(t, sz, st, t->offset()));
}

template <typename A> struct Entry {
  A key;
  int64_t idx;
};

// Strict weak order putting `first` elements before others: largest first when Desc, smallest
// first otherwise; NaN counts as the largest value. With ByIndex, equal keys keep their original
// order (a total order: what sort uses); without, they are equivalent (what topk uses).
template <typename A, bool Desc, bool ByIndex> struct Before {
  bool operator()(const Entry<A>& a, const Entry<A>& b) const {
    if constexpr (std::is_floating_point_v<A>) {
      const bool na = a.key != a.key, nb = b.key != b.key;
      if (na != nb) return Desc ? na : nb;
      if (!na && a.key != b.key) return Desc ? a.key > b.key : a.key < b.key;
    } else {
      if (a.key != b.key) return Desc ? a.key > b.key : a.key < b.key;
    }
    if constexpr (ByIndex) return a.idx < b.idx;
    else return false;
  }
};

// ------------------------------------------------------------------ radix sort of long rows
//
// Rows of kRadixMin elements or more are sorted by an LSD radix sort on unsigned keys whose
// order is the requested one (sort_meta.h: NaN above every number and all NaNs equal, -0.0
// equal to 0.0, complemented for descending), the same keys as the CUDA kernels. LSD radix
// sort is stable, so ties keep their index order, as std::sort with Before<..., true> does;
// passes whose byte is the same for every key are skipped (a small integer range costs one
// or two passes). A single long row is cut into one chunk per thread, the chunks sorted in
// parallel and merged (a merge that takes the earlier chunk first on equal keys: stable).
constexpr int64_t kRadixMin = 1024;

template <int N> struct KeyOf;
template <> struct KeyOf<1> { using type = uint8_t; };
template <> struct KeyOf<2> { using type = uint16_t; };
template <> struct KeyOf<4> { using type = uint32_t; };
template <> struct KeyOf<8> { using type = uint64_t; };

// The key type of element type T (16-bit floats: their float values' keys).
template <typename T> using radix_key_t = typename KeyOf<sizeof(opmath_t<T>)>::type;

template <typename T> radix_key_t<T> radix_key(T raw, bool desc) {
  using A = opmath_t<T>;
  using K = radix_key_t<T>;
  constexpr K top = K(1) << (8 * sizeof(K) - 1);
  const A v = static_cast<A>(raw);
  K key;
  if constexpr (std::is_floating_point_v<A>) {
    if (v != v) {
      key = ~K(0);  // every NaN: above +inf (whose key is below all ones)
    } else {
      K bits;
      const A w = v == A(0) ? A(0) : v;  // -0.0 as 0.0
      std::memcpy(&bits, &w, sizeof(K));
      key = (bits & top) ? ~bits : (bits | top);
    }
  } else if constexpr (std::is_signed_v<A>) {
    key = static_cast<K>(v) ^ top;
  } else {
    key = static_cast<K>(v);
  }
  return desc ? static_cast<K>(~key) : key;
}

template <typename K, typename I> struct RadixBuffers {
  std::vector<K> key, key2;
  std::vector<I> at, at2;
};

// Sorts (key[i], at[i]), i in [0, n), stably by key; the result is left in b.key / b.at.
template <typename K, typename I> void radix_sort_pairs(RadixBuffers<K, I>& b, int64_t n) {
  constexpr int kBytes = sizeof(K);
  std::vector<int64_t> count(static_cast<size_t>(kBytes) * 256, 0);
  for (int64_t i = 0; i < n; ++i) {
    K k = b.key[i];
    for (int d = 0; d < kBytes; ++d, k >>= 8) ++count[d * 256 + (k & 255)];
  }
  b.key2.resize(static_cast<size_t>(n));
  b.at2.resize(static_cast<size_t>(n));
  for (int d = 0; d < kBytes; ++d) {
    int64_t* c = count.data() + d * 256;
    if (c[(b.key[0] >> (8 * d)) & 255] == n) continue;  // one bucket: nothing moves
    int64_t pos = 0;
    for (int v = 0; v < 256; ++v) {
      const int64_t here = c[v];
      c[v] = pos;
      pos += here;
    }
    const int shift = 8 * d;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t to = c[(b.key[i] >> shift) & 255]++;
      b.key2[to] = b.key[i];
      b.at2[to] = b.at[i];
    }
    b.key.swap(b.key2);
    b.at.swap(b.at2);
  }
}

// Sorts one row of K elements into (ordered positions) `order` (size K).
template <typename T, typename I>
void radix_sort_row(const T* row, int64_t K, bool desc, RadixBuffers<radix_key_t<T>, I>& b) {
  b.key.resize(static_cast<size_t>(K));
  b.at.resize(static_cast<size_t>(K));
  for (int64_t i = 0; i < K; ++i) {
    b.key[i] = radix_key(row[i], desc);
    b.at[i] = static_cast<I>(i);
  }
  radix_sort_pairs(b, K);
}

template <typename T, typename I>
void write_row(const T* row, const I* at, int64_t k, T* vo, int64_t* io) {
  for (int64_t i = 0; i < k; ++i) {
    io[i] = static_cast<int64_t>(at[i]);
    if (vo) vo[i] = row[at[i]];
  }
}

// One long row: chunks radix-sorted in parallel, then merged pairwise.
template <typename T, typename I>
void radix_sort_long_row(const T* row, int64_t K, bool desc, T* vo, int64_t* io) {
  using Key = radix_key_t<T>;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), K / kRadixMin));
  std::vector<RadixBuffers<Key, I>> bufs(static_cast<size_t>(parts));
  std::vector<int64_t> lo(static_cast<size_t>(parts) + 1);
  for (int64_t p = 0; p <= parts; ++p) lo[p] = K * p / parts;
  parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      RadixBuffers<Key, I>& buf = bufs[p];
      const int64_t n = lo[p + 1] - lo[p];
      buf.key.resize(static_cast<size_t>(n));
      buf.at.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        buf.key[i] = radix_key(row[lo[p] + i], desc);
        buf.at[i] = static_cast<I>(lo[p] + i);
      }
      radix_sort_pairs(buf, n);
    }
  });
  while (bufs.size() > 1) {  // merge neighbours: chunk order is index order, so ties stay stable
    std::vector<RadixBuffers<Key, I>> next((bufs.size() + 1) / 2);
    parallel_for(0, static_cast<int64_t>(next.size()), 1, [&](int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q) {
        RadixBuffers<Key, I>& a = bufs[2 * q];
        if (2 * q + 1 == static_cast<int64_t>(bufs.size())) {
          next[q] = std::move(a);
          continue;
        }
        RadixBuffers<Key, I>& c = bufs[2 * q + 1];
        RadixBuffers<Key, I>& out = next[q];
        const size_t n = a.key.size() + c.key.size();
        out.key.resize(n);
        out.at.resize(n);
        size_t i = 0, j = 0, o = 0;
        while (i < a.key.size() && j < c.key.size()) {
          const bool right = c.key[j] < a.key[i];
          out.key[o] = right ? c.key[j] : a.key[i];
          out.at[o++] = right ? c.at[j++] : a.at[i++];
        }
        for (; i < a.key.size(); ++i, ++o) out.key[o] = a.key[i], out.at[o] = a.at[i];
        for (; j < c.key.size(); ++j, ++o) out.key[o] = c.key[j], out.at[o] = c.at[j];
      }
    });
    bufs = std::move(next);
  }
  write_row(row, bufs[0].at.data(), K, vo, io);
}

template <typename T, typename I> void radix_sort_rows(const Rows& R, bool desc, T* values, int64_t* indices) {
  const T* base = R.src->data<T>();
  const int64_t K = R.K;
  if (R.M == 1) {
    radix_sort_long_row<T, I>(base, K, desc, values, indices);
    return;
  }
  parallel_for(0, R.M, std::max<int64_t>(1, kParallelGrain / K), [&](int64_t b, int64_t e) {
    RadixBuffers<radix_key_t<T>, I> buf;
    for (int64_t r = b; r < e; ++r) {
      radix_sort_row(base + r * K, K, desc, buf);
      write_row(base + r * K, buf.at.data(), K, values ? values + r * K : nullptr, indices + r * K);
    }
  });
}

// For every row: order the row's entries (only the first `k` of them for topk), then write the
// first k values and indices.
//
// topk selects like PyTorch's CPU kernel, so that the indices of tied values agree with it: a
// partial sort when k is small against the row (k * 64 <= K), else a selection of the k-th
// element followed, when `sorted`, by a sort of the elements before it, all with a comparator
// that looks at values only.
template <typename T, bool Desc>
void order_rows(const Rows& R, int64_t k, bool topk, bool sorted, T* values, int64_t* indices) {
  using A = opmath_t<T>;
  const T* base = R.src->data<T>();
  const int64_t K = R.K;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1));
  parallel_for(0, R.M, grain, [&](int64_t b, int64_t e) {
    std::vector<Entry<A>> buf(static_cast<size_t>(K));
    for (int64_t r = b; r < e; ++r) {
      const T* row = base + r * K;
      for (int64_t i = 0; i < K; ++i) buf[i] = Entry<A>{static_cast<A>(row[i]), i};
      if (!topk) {
        std::sort(buf.begin(), buf.end(), Before<A, Desc, true>{});
      } else if (k * 64 <= K) {
        std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), Before<A, Desc, false>{});
      } else {
        std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end(), Before<A, Desc, false>{});
        if (sorted) std::sort(buf.begin(), buf.begin() + (k - 1), Before<A, Desc, false>{});
      }
      T* vo = values ? values + r * k : nullptr;
      int64_t* io = indices + r * k;
      for (int64_t i = 0; i < k; ++i) {
        io[i] = buf[i].idx;
        if (vo) vo[i] = row[buf[i].idx];  // the original element, bit for bit
      }
    }
  });
}

// Sorted (or top-k) values and indices along dim.
std::tuple<Tensor, Tensor> order(const char* op, const Tensor& self, int64_t dim, int64_t k,
                                 bool desc, bool want_values, bool k_given, bool sorted = true) {
  check_cpu(self, op);
  const OrderMeta m = order_meta(op, self, dim, k, k_given);
  const int64_t d = m.dim;
  k = m.k;
  if (self->dim() == 0) {  // a single element, whatever k
    Tensor v = want_values ? ops::clone(self) : Tensor();
    Tensor i = empty({}, ScalarType::Int64);
    *i->data<int64_t>() = 0;
    return {v, i};
  }
  Rows R = rows_along(self, d);
  Shape out_moved = R.moved;
  out_moved.back() = k;
  Tensor values = want_values ? empty(out_moved, self->dtype()) : Tensor();
  Tensor indices = empty(out_moved, ScalarType::Int64);
  if (indices->numel() > 0 && k > 0) {
    dispatch_all_and_unsigned(self->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      T* vp = want_values ? values->data<T>() : nullptr;
      if (!k_given && R.K >= kRadixMin) {
        if (R.K <= std::numeric_limits<uint32_t>::max()) radix_sort_rows<T, uint32_t>(R, desc, vp, indices->data<int64_t>());
        else radix_sort_rows<T, int64_t>(R, desc, vp, indices->data<int64_t>());
      } else if (desc) {
        order_rows<T, true>(R, k, k_given, sorted, vp, indices->data<int64_t>());
      } else {
        order_rows<T, false>(R, k, k_given, sorted, vp, indices->data<int64_t>());
      }
    });
  }
  return {want_values ? move_back(values, d) : Tensor(), move_back(indices, d)};
}

}  // namespace

namespace cpu {

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  (void)stable;  // every sort here is stable
  return order("sort", self, dim, 0, descending, true, false);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  (void)stable;
  return std::get<1>(order("argsort", self, dim, 0, descending, false, false));
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  return order("topk", self, dim, k, largest, true, true, sorted);
}

}  // namespace cpu
}  // namespace ember

// ------------------------------------------------------------------------ searchsorted's search

namespace ember {
namespace {

// PyTorch's lower (upper) bound of v in seq[0, n): the binary search of its Bucketization.cpp,
// which answers for unsorted sequences and NaN too (a NaN anywhere sends the search right).
template <typename T> int64_t bound(const T* seq, int64_t n, T v, bool right) {
  using A = opmath_t<T>;
  const A x = static_cast<A>(v);
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const A m = static_cast<A>(seq[mid]);
    const bool go_right = right ? !(m > x) : !(m >= x);
    if (go_right) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace

namespace cpu {

Tensor _searchsorted_bounds(const Tensor& sorted_sequence, const Tensor& values, bool right) {
  const char* op = "searchsorted";
  check_cpu(sorted_sequence, op);
  const SearchMeta m = search_meta(sorted_sequence, values);
  Tensor seq = as_contiguous(sorted_sequence), val = as_contiguous(values);
  Tensor out = empty(values->sizes(), ScalarType::Int64);
  const int64_t n = m.n, per_row = m.per_row, total = out->numel();
  if (total == 0) return out;
  dispatch_all_and_unsigned(seq->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* s = seq->data<T>();
    const T* v = val->data<T>();
    int64_t* o = out->data<int64_t>();
    parallel_for(0, total, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* row = m.one_row ? s : s + (i / per_row) * n;
        o[i] = bound(row, n, v[i], right);
      }
    });
  });
  return out;
}

}  // namespace cpu
}  // namespace ember

// ------------------------------------------------------------------- order statistics' select

namespace ember {
namespace cpu {

// For each row along dim, the index of the element at `position` (0-based, one per row, in
// position's keepdim shape) of the row's stable ascending order (NaN last, ties by index):
// what sort(stable=True) puts there, found by a selection (nth_element) instead of a sort.
Tensor _order_select_indices(const Tensor& self, int64_t dim, const Tensor& position) {
  const char* op = "kthvalue";
  check_cpu(self, op);
  const OrderMeta m = order_meta(op, self, dim, 0, false);
  Rows R = rows_along(self, m.dim);
  Shape out_moved = R.moved;
  if (!out_moved.empty()) out_moved.back() = 1;
  if (position->numel() != R.M || position->dtype() != ScalarType::Int64) {
    throw std::runtime_error(message(op, ": expected one int64 position per slice (", R.M, "), got ",
                                     position->numel(), " of ", dtype_name(position->dtype())));
  }
  Rows P = rows_along(position, m.dim);  // one position per row, in the rows' order
  Tensor out = empty(out_moved, ScalarType::Int64);
  const int64_t K = R.K;
  if (R.M == 0 || K == 0) return move_back(out, m.dim);
  const int64_t* want = P.src->data<int64_t>();
  int64_t* res = out->data<int64_t>();
  for (int64_t r = 0; r < R.M; ++r) {
    if (want[r] < 0 || want[r] >= K) {
      throw std::runtime_error(message(op, ": position ", want[r], " out of range for a slice of ", K));
    }
  }
  dispatch_all_and_unsigned(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using A = opmath_t<T>;
    const T* base = R.src->data<T>();
    parallel_for(0, R.M, std::max<int64_t>(1, kParallelGrain / K), [&](int64_t b, int64_t e) {
      std::vector<Entry<A>> buf(static_cast<size_t>(K));
      for (int64_t r = b; r < e; ++r) {
        const T* row = base + r * K;
        for (int64_t i = 0; i < K; ++i) buf[i] = Entry<A>{static_cast<A>(row[i]), i};
        std::nth_element(buf.begin(), buf.begin() + want[r], buf.end(), Before<A, false, true>{});
        res[r] = buf[want[r]].idx;
      }
    });
  });
  return move_back(out, m.dim);
}

}  // namespace cpu
}  // namespace ember
