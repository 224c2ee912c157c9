// sort, argsort, topk along one dim.
//
// The dim is moved last and the input made contiguous, so each of the M rows of K elements is
// ordered on its own (in parallel over rows). Keys are compared in opmath (float for the
// 16-bit floats); NaN orders above every number, as in PyTorch, and ties keep their original
// order (every sort is stable). Results are computed in the moved layout and moved back.
// The argument checks are order_meta (sort_meta.h), shared with the CUDA kernels.
#include <algorithm>
#include <cmath>
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
      if (desc) order_rows<T, true>(R, k, k_given, sorted, vp, indices->data<int64_t>());
      else order_rows<T, false>(R, k, k_given, sorted, vp, indices->data<int64_t>());
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
