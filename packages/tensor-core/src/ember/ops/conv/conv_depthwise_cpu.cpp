// Direct depthwise convolution (groups == C, M = O / C filters per input channel), float32
// and float64, any kernel, stride, padding and dilation: forward, backward-input and
// backward-weight.
//
// The layout. A task takes one input channel and a block of nb batch entries (several when
// the planes are small, so that the vector loops stay long). Their zero-padded input planes
// are split into sh*sw phases: phase (qi, qj) holds the padded rows qi, qi+sh, ... and columns
// qj, qj+sw, ... as an Hq x Wq plane, the block's planes back to back ([phase][n][Hq][Wq]).
// Tap (i, j) of output (y, x) then reads phase ((i*dh) % sh, (j*dw) % sw) at row
// y + (i*dh)/sh, column x + (j*dw)/sw. With the outputs laid out flat in the same pitch,
// z = n*Hq*Wq + y*Wq + x (columns x >= ow and rows y >= oh are slack that is computed and
// dropped), every tap is one fixed offset from z, whatever the stride and dilation:
//
//   forward          out[z]  = bias + sum_t w[t] * S[z + base_t]          (one pass, 3x3)
//   backward-input   SG_q[u] = sum over the taps t of phase q of w[t] * G[u - shift_t]
//   backward-weight  gw[t]   = sum_z G[z] * S[z + base_t]
//
// where G is grad_output laid out flat with zeros in the slack (and a zero margin in front
// for backward-input), and SG the gradient of the phase buffer, whose padding is dropped.
// All three are vector loops over z with the taps unrolled (groups of up to 9 taps per pass)
// and no bounds checks; moving planes in and out of the flat layout is the only per-row work:
// whole rows (stride-2 rows deinterleaved with shuffles) for wide planes, whole-plane shuffles
// or index maps for narrow ones. The loops run inside simd_dispatch, at the CPU's best level.
//
// Parallel over tasks (forward, backward-input) or input channels (backward-weight, summing
// over the batch in a fixed order: lanes per block, blocks in double). Non-finite values: the
// slack's zeros meet real values only in backward-input (times the weights) and
// backward-weight (times the input), where 0 * inf would make NaNs the convolution does not
// have; so a channel whose weights are not all finite (backward-input), or whose weight
// gradient comes out not finite (backward-weight), goes to an exact loop over the windows,
// which gives PyTorch's infinities and NaNs.
#include "ember/ops/conv/conv_depthwise_cpu.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/runtime/simd.h"

namespace ember::cpu {
namespace {

// x (N, C, H, W) convolved with w (C*M, 1, kh, kw): y (N, C*M, oh, ow); output channel o
// reads input channel o / M.
struct DepthwiseShape {
  int64_t N, C, H, W, M, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
};

// Taps summed per pass over a block (a 3x3 kernel is one pass).
constexpr int kGroup = 9;
// Elements of a task's phase buffer: planes are grouped until they fill it.
constexpr int64_t kBlockElems = 4096;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Vectors of 64 bytes (one AVX-512 register; two or four at the lower levels), and the
// integer vectors that pick lanes in shuffles.
template <typename T> struct Vec {
  static constexpr int L = 64 / sizeof(T);
  typedef T V __attribute__((vector_size(64)));
  using Int = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef Int I __attribute__((vector_size(64)));
};

// Where phase q's values come from: its row r reads input row r*sh + roff (rows [rlo, rhi)
// lie in the input), its column c input column c*sw + coff (columns [lo, hi)).
struct PhaseRange {
  int64_t roff, rlo, rhi, coff, lo, hi;
};

// [lo, hi): the c in [0, n) with 0 <= c*step + off < size.
std::pair<int64_t, int64_t> inside(int64_t off, int64_t step, int64_t size, int64_t n) {
  const int64_t lo = std::min(off >= 0 ? 0 : ceil_div(-off, step), n);
  const int64_t hi = std::clamp<int64_t>(off < size ? (size - 1 - off) / step + 1 : 0, lo, n);
  return {lo, hi};
}

template <typename T> struct Plan {
  using Int = typename Vec<T>::Int;
  static constexpr int L = Vec<T>::L;
  DepthwiseShape s;
  int64_t K, Hq, Wq, plane, phases, nb, nblocks;
  std::vector<int64_t> phase, shift;  // per tap: its phase, its offset within the phase
  std::vector<int64_t> base;          // per tap: its offset from z into the phase buffer
  std::vector<PhaseRange> range;      // per phase
  // stride 2 across: an input row's even and odd elements (counts ne, no) go to columns ce
  // and co of phases (qi, pe) and (qi, 1 - pe)
  int64_t pe = 0, ce = 0, co = 0, ne = 0, no = 0;
  // Narrow planes (rows too short for row copies) move through index maps: the input pixels
  // that lie in the phase buffer (index in the plane, position in the buffer for n = 0) and
  // the z of each output pixel. Planes of at most L elements move by whole-vector shuffles
  // where these are set (lanes >= L pick zeros / the second vector):
  bool maps;
  std::vector<int64_t> in_src, in_pos, out_pos;
  int64_t in_chunks = 0, out_chunks = 0;  // vectors per plane of the phase buffer / flat layout
  std::vector<Int> in_spread;   // [phase][chunk]: the input lane of each position, or L (zero)
  std::vector<Int> out_spread;  // [chunk]: the output lane of each z, or L (zero)
  std::vector<Int> out_collect;  // the z of each output lane, from two vectors at z = 0
  std::vector<Int> in_collect;   // the position of each input lane, from two vectors at in_first
  int64_t in_first = 0;

  int64_t phase_len() const { return nb * plane; }
  // z of the last real output of n planes, plus one
  int64_t valid_len(int64_t n) const { return (n - 1) * plane + (s.oh - 1) * Wq + s.ow; }
  int64_t margin() const { return *std::max_element(shift.begin(), shift.end()); }
};

template <typename T> Plan<T> make_plan(const DepthwiseShape& s) {
  using Int = typename Vec<T>::Int;
  constexpr int L = Vec<T>::L;
  Plan<T> p{};
  p.s = s;
  p.K = s.kh * s.kw;
  p.Hq = s.oh + (s.kh - 1) * s.dh / s.sh;
  p.Wq = s.ow + (s.kw - 1) * s.dw / s.sw;
  p.plane = p.Hq * p.Wq;
  p.phases = s.sh * s.sw;
  p.nb = std::clamp<int64_t>(kBlockElems / (p.phases * p.plane), 1, std::max<int64_t>(s.N, 1));
  p.nblocks = ceil_div(s.N, p.nb);
  for (int64_t i = 0; i < s.kh; ++i) {
    for (int64_t j = 0; j < s.kw; ++j) {
      const int64_t q = (i * s.dh % s.sh) * s.sw + j * s.dw % s.sw;
      const int64_t shift = i * s.dh / s.sh * p.Wq + j * s.dw / s.sw;
      p.phase.push_back(q);
      p.shift.push_back(shift);
      p.base.push_back(q * p.phase_len() + shift);
    }
  }
  for (int64_t qi = 0; qi < s.sh; ++qi) {
    for (int64_t qj = 0; qj < s.sw; ++qj) {
      const auto [rlo, rhi] = inside(qi - s.ph, s.sh, s.H, p.Hq);
      const auto [lo, hi] = inside(qj - s.pw, s.sw, s.W, p.Wq);
      p.range.push_back({qi - s.ph, rlo, rhi, qj - s.pw, lo, hi});
    }
  }
  if (s.sw == 2) {
    p.pe = s.pw % 2;
    p.ce = s.pw / 2;
    p.co = (s.pw + 1) / 2;
    p.ne = std::clamp<int64_t>((s.W + 1) / 2, 0, std::max<int64_t>(p.Wq - p.ce, 0));
    p.no = std::clamp<int64_t>(s.W / 2, 0, std::max<int64_t>(p.Wq - p.co, 0));
  }
  // where rows pay (measured on the MobileNetV2 layers: 8x8 planes at stride 1, 16x16 at 2)
  p.maps = s.W < (s.sw == 1 ? 8 : 16);
  if (!p.maps) return p;
  for (int64_t q = 0; q < p.phases; ++q) {
    const PhaseRange& g = p.range[q];
    for (int64_t r = g.rlo; r < g.rhi; ++r) {
      for (int64_t c = g.lo; c < g.hi; ++c) {
        p.in_src.push_back((r * s.sh + g.roff) * s.W + c * s.sw + g.coff);
        p.in_pos.push_back(q * p.phase_len() + r * p.Wq + c);
      }
    }
  }
  for (int64_t y = 0; y < s.oh; ++y) {
    for (int64_t x = 0; x < s.ow; ++x) p.out_pos.push_back(y * p.Wq + x);
  }
  const int64_t HW = s.H * s.W, OHW = s.oh * s.ow, npix = static_cast<int64_t>(p.in_pos.size());
  if (HW <= L) {
    p.in_chunks = ceil_div(p.plane, L);
    p.in_spread.assign(p.phases * p.in_chunks * L, L);
    for (int64_t k = 0; k < npix; ++k) {
      const int64_t q = p.in_pos[k] / p.phase_len();
      p.in_spread[q * p.in_chunks * L + p.in_pos[k] % p.phase_len()] = static_cast<Int>(p.in_src[k]);
    }
  }
  if (OHW <= L) {
    p.out_chunks = ceil_div(p.plane, L);
    p.out_spread.assign(p.out_chunks * L, L);
    for (int64_t e = 0; e < OHW; ++e) p.out_spread[p.out_pos[e]] = static_cast<Int>(e);
    if (p.out_pos.back() < 2 * L) {
      p.out_collect.assign(L, 0);
      for (int64_t e = 0; e < OHW; ++e) p.out_collect[e] = static_cast<Int>(p.out_pos[e]);
    }
  }
  // every pixel in the (single) phase, within two vectors: a plane of gx is one shuffle
  if (HW <= L && p.phases == 1 && npix == HW) {
    const int64_t first = *std::min_element(p.in_pos.begin(), p.in_pos.end());
    if (*std::max_element(p.in_pos.begin(), p.in_pos.end()) - first < 2 * L) {
      p.in_first = first;
      p.in_collect.assign(L, 0);
      for (int64_t k = 0; k < npix; ++k) {
        p.in_collect[p.in_src[k]] = static_cast<Int>(p.in_pos[k] - first);
      }
    }
  }
  return p;
}

// ---- moving planes in and out of the flat layouts (inlined into the simd_dispatch bodies)

// Row copies as loops of whole vectors: most rows here are a few to a few dozen elements,
// where a library call costs more than the copy. Short rows take two overlapping moves.
template <typename T> inline void copy_short(const T* __restrict src, int64_t n, T* __restrict dst) {
  constexpr int64_t B = 64 / sizeof(T);  // elements per 64 bytes; n < B
  if (2 * n >= B) {
    __builtin_memcpy(dst, src, 32);
    __builtin_memcpy(dst + n - B / 2, src + n - B / 2, 32);
  } else if (4 * n >= B) {
    __builtin_memcpy(dst, src, 16);
    __builtin_memcpy(dst + n - B / 4, src + n - B / 4, 16);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}
template <typename T> inline void copy_n(const T* __restrict src, int64_t n, T* __restrict dst) {
  constexpr int64_t B = 64 / sizeof(T);
  if (n < B) {
    copy_short(src, n, dst);
    return;
  }
  int64_t i = 0;
  for (; i + B <= n; i += B) __builtin_memcpy(dst + i, src + i, 64);
  if (i < n) __builtin_memcpy(dst + n - B, src + n - B, 64);  // the same values again
}

template <typename T> inline void zero_n(T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = T(0);
}

// even[c] = src[2c] for c < ne, odd[c] = src[2c + 1] for c < no (a row of at least
// 2 min(ne, no) elements split in two): in whole vectors of VB bytes from c0 on while both
// have L more; returns where it stopped.
template <int VB, typename T>
inline int64_t split_by(const T* __restrict src, int64_t n, T* __restrict even, T* __restrict odd, int64_t c0) {
  constexpr int L = VB / sizeof(T);
  typedef T V __attribute__((vector_size(VB)));
  typedef typename Vec<T>::Int I __attribute__((vector_size(VB)));
  I ie, io;
  for (int l = 0; l < L; ++l) {
    ie[l] = 2 * l;
    io[l] = 2 * l + 1;
  }
  int64_t c = c0;
  for (; c + L <= n; c += L) {
    V a, b;
    __builtin_memcpy(&a, src + 2 * c, sizeof(V));
    __builtin_memcpy(&b, src + 2 * c + L, sizeof(V));
    const V e = __builtin_shuffle(a, b, ie), o = __builtin_shuffle(a, b, io);
    __builtin_memcpy(even + c, &e, sizeof(V));
    __builtin_memcpy(odd + c, &o, sizeof(V));
  }
  return c;
}

template <typename T>
inline void split(const T* __restrict src, int64_t ne, int64_t no, T* __restrict even, T* __restrict odd) {
  const int64_t n = std::min(ne, no);
  int64_t c = split_by<64>(src, n, even, odd, 0);
  c = split_by<32>(src, n, even, odd, c);
  c = split_by<16>(src, n, even, odd, c);
  for (int64_t k = c; k < ne; ++k) even[k] = src[2 * k];
  for (int64_t k = c; k < no; ++k) odd[k] = src[2 * k + 1];
}

// split's adjoint: dst[2c] = a[c], dst[2c + 1] = b[c], in whole vectors of VB bytes from c0
// on while both have L more (n = min(na, nb)); returns where it stopped.
template <int VB, typename T>
inline int64_t interleave_by(const T* __restrict a, const T* __restrict b, int64_t n, T* __restrict dst,
                             int64_t c0) {
  constexpr int L = VB / sizeof(T);
  typedef T V __attribute__((vector_size(VB)));
  typedef typename Vec<T>::Int I __attribute__((vector_size(VB)));
  I lo, hi;
  for (int l = 0; l < L; ++l) {
    lo[l] = l / 2 + (l % 2) * L;
    hi[l] = L / 2 + l / 2 + (l % 2) * L;
  }
  int64_t c = c0;
  for (; c + L <= n; c += L) {
    V va, vb;
    __builtin_memcpy(&va, a + c, sizeof(V));
    __builtin_memcpy(&vb, b + c, sizeof(V));
    const V x = __builtin_shuffle(va, vb, lo), y = __builtin_shuffle(va, vb, hi);
    __builtin_memcpy(dst + 2 * c, &x, sizeof(V));
    __builtin_memcpy(dst + 2 * c + L, &y, sizeof(V));
  }
  return c;
}

// dst[2c] = a[c] for c < na, dst[2c + 1] = b[c] for c < nb.
template <typename T>
inline void interleave(const T* __restrict a, const T* __restrict b, int64_t na, int64_t nb, T* __restrict dst) {
  const int64_t n = std::min(na, nb);
  int64_t c = interleave_by<64>(a, b, n, dst, 0);
  c = interleave_by<32>(a, b, n, dst, c);
  c = interleave_by<16>(a, b, n, dst, c);
  for (int64_t k = c; k < na; ++k) dst[2 * k] = a[k];
  for (int64_t k = c; k < nb; ++k) dst[2 * k + 1] = b[k];
}

// chunks vectors at dst: each the shuffle of the vector at src and zeros by its row of idx.
template <typename T> inline void spread(const T* src, const typename Vec<T>::Int* idx, int64_t chunks, T* dst) {
  using V = typename Vec<T>::V;
  using I = typename Vec<T>::I;
  constexpr int L = Vec<T>::L;
  V v;
  __builtin_memcpy(&v, src, sizeof(V));
  const V zero{};
  for (int64_t k = 0; k < chunks; ++k) {
    I ix;
    __builtin_memcpy(&ix, idx + k * L, sizeof(I));
    const V r = __builtin_shuffle(v, zero, ix);
    __builtin_memcpy(dst + k * L, &r, sizeof(V));
  }
}

// dst[0, n) = lanes of the two vectors at src picked by idx.
template <typename T> inline void collect(const T* src, const typename Vec<T>::Int* idx, int64_t n, T* dst) {
  using V = typename Vec<T>::V;
  using I = typename Vec<T>::I;
  constexpr int L = Vec<T>::L;
  V a, b;
  I ix;
  __builtin_memcpy(&a, src, sizeof(V));
  __builtin_memcpy(&b, src + L, sizeof(V));
  __builtin_memcpy(&ix, idx, sizeof(I));
  const V r = __builtin_shuffle(a, b, ix);
  if (n == L) {
    __builtin_memcpy(dst, &r, sizeof(V));
  } else {
    T part[L];
    __builtin_memcpy(part, &r, sizeof(V));
    copy_short(part, n, dst);
  }
}

// The input plane src (H x W) into place n of the block's phase buffer S. The positions that
// hold no input value (the padding) stay as the buffer was allocated, zero: every block puts
// its values in the same places.
template <typename T> inline void fill_plane(const Plan<T>& p, const T* src, T* S, int64_t n) {
  S += n * p.plane;
  if (p.maps) {
    const int64_t* pos = p.in_pos.data();
    const int64_t* from = p.in_src.data();
    for (size_t k = 0; k < p.in_pos.size(); ++k) S[pos[k]] = src[from[k]];
    return;
  }
  const int64_t sw = p.s.sw, W = p.s.W;
  if (sw == 2) {  // each input row split between the two phases of its row
    for (int64_t qi = 0; qi < p.s.sh; ++qi) {
      const PhaseRange& g = p.range[qi * 2];
      T* even = S + (qi * 2 + p.pe) * p.phase_len() + p.ce;
      T* odd = S + (qi * 2 + 1 - p.pe) * p.phase_len() + p.co;
      for (int64_t r = g.rlo; r < g.rhi; ++r) {
        split(src + (r * p.s.sh + g.roff) * W, p.ne, p.no, even + r * p.Wq, odd + r * p.Wq);
      }
    }
    return;
  }
  for (int64_t q = 0; q < p.phases; ++q) {
    const PhaseRange& g = p.range[q];
    T* dst = S + q * p.phase_len();
    for (int64_t r = g.rlo; r < g.rhi; ++r) {
      const T* row = src + (r * p.s.sh + g.roff) * W;  // column c*sw + coff
      T* d = dst + r * p.Wq;
      if (sw == 1) {
        copy_n(row + g.lo + g.coff, g.hi - g.lo, d + g.lo);
      } else {
        for (int64_t c = g.lo; c < g.hi; ++c) d[c] = row[c * sw + g.coff];
      }
    }
  }
}

// The nn planes of input channel c from batch entry n0 on into the phase buffer S. Planes of
// at most L elements are spread whole, phase by phase and plane by plane: a spread also
// writes the plane's padding (zeros) and up to L - 1 elements past it, over places that are
// written later (or are padding, or the buffer's tail). The last planes of the tensor, where
// a vector load would pass its end, are filled after the spreads.
template <typename T>
inline void fill_block(const Plan<T>& p, const T* x, int64_t c, int64_t n0, int64_t nn, T* S) {
  constexpr int L = Vec<T>::L;
  const DepthwiseShape& s = p.s;
  const int64_t HW = s.H * s.W;
  const T* end = x + s.N * s.C * HW;
  const T* first = x + (n0 * s.C + c) * HW;
  int64_t spread_planes = 0;
  if (p.in_chunks > 0) {
    while (spread_planes < nn && end - (first + spread_planes * s.C * HW) >= L) ++spread_planes;
    for (int64_t q = 0; q < p.phases; ++q) {
      for (int64_t n = 0; n < spread_planes; ++n) {
        spread(first + n * s.C * HW, p.in_spread.data() + q * p.in_chunks * L, p.in_chunks,
               S + q * p.phase_len() + n * p.plane);
      }
    }
  }
  for (int64_t n = spread_planes; n < nn; ++n) fill_plane(p, first + n * s.C * HW, S, n);
}

// The adjoint of fill_plane: plane n of the phase buffer's gradient SG into the (H x W)
// plane dst, zero where no phase position lies (input no window reaches).
template <typename T> inline void unfill_plane(const Plan<T>& p, const T* SG, int64_t n, T* dst) {
  const int64_t sw = p.s.sw, W = p.s.W;
  SG += n * p.plane;
  if (!p.in_collect.empty()) {
    collect(SG + p.in_first, p.in_collect.data(), p.s.H * W, dst);
    return;
  }
  if (p.maps) {
    if (static_cast<int64_t>(p.in_pos.size()) < p.s.H * W) zero_n(dst, p.s.H * W);
    const int64_t* pos = p.in_pos.data();
    const int64_t* to = p.in_src.data();
    for (size_t k = 0; k < p.in_pos.size(); ++k) dst[to[k]] = SG[pos[k]];
    return;
  }
  // the rows and columns the phases cover (the rest: zero)
  const int64_t rcover = std::clamp<int64_t>(p.Hq * p.s.sh - p.s.ph, 0, p.s.H);
  const int64_t ccover = std::clamp<int64_t>(p.Wq * sw - p.s.pw, 0, W);
  zero_n(dst + rcover * W, (p.s.H - rcover) * W);
  for (int64_t y = 0; y < rcover; ++y) zero_n(dst + y * W + ccover, W - ccover);
  if (sw == 2) {  // an input row: the rows of its two phases interleaved
    for (int64_t qi = 0; qi < p.s.sh; ++qi) {
      const PhaseRange& g = p.range[qi * 2];
      const T* even = SG + (qi * 2 + p.pe) * p.phase_len() + p.ce;
      const T* odd = SG + (qi * 2 + 1 - p.pe) * p.phase_len() + p.co;
      for (int64_t r = g.rlo; r < g.rhi; ++r) {
        interleave(even + r * p.Wq, odd + r * p.Wq, p.ne, p.no, dst + (r * p.s.sh + g.roff) * W);
      }
    }
    return;
  }
  for (int64_t q = 0; q < p.phases; ++q) {
    const PhaseRange& g = p.range[q];
    const T* src = SG + q * p.phase_len();
    for (int64_t r = g.rlo; r < g.rhi; ++r) {
      T* row = dst + (r * p.s.sh + g.roff) * W;  // column c*sw + coff
      const T* d = src + r * p.Wq;
      if (sw == 1) {
        copy_n(d + g.lo, g.hi - g.lo, row + g.lo + g.coff);
      } else {
        for (int64_t c = g.lo; c < g.hi; ++c) row[c * sw + g.coff] = d[c];
      }
    }
  }
}

// Output plane n of the flat block F into dst (oh x ow).
template <typename T> inline void flat_to_plane(const Plan<T>& p, const T* F, int64_t n, T* dst) {
  F += n * p.plane;
  if (!p.out_collect.empty()) {
    collect(F, p.out_collect.data(), p.s.oh * p.s.ow, dst);
  } else if (p.maps) {
    const int64_t* pos = p.out_pos.data();
    for (size_t e = 0; e < p.out_pos.size(); ++e) dst[e] = F[pos[e]];
  } else {
    for (int64_t r = 0; r < p.s.oh; ++r) copy_n(F + r * p.Wq, p.s.ow, dst + r * p.s.ow);
  }
}

// Its adjoint: the (oh x ow) plane src into place n of the flat layout G, whose slack stays
// zero (spreads write the slack's zeros and up to L - 1 elements past the plane: fill the
// planes in order). end: the end of the tensor src lies in.
template <typename T> inline void plane_to_flat(const Plan<T>& p, const T* src, const T* end, int64_t n, T* G) {
  G += n * p.plane;
  if (p.out_chunks > 0 && end - src >= Plan<T>::L) {
    spread(src, p.out_spread.data(), p.out_chunks, G);
  } else if (p.maps) {
    const int64_t* pos = p.out_pos.data();
    for (size_t e = 0; e < p.out_pos.size(); ++e) G[pos[e]] = src[e];
  } else {
    for (int64_t r = 0; r < p.s.oh; ++r) copy_n(src + r * p.s.ow, p.s.ow, G + r * p.Wq);
  }
}

// ---- the vector loops

// out[z] = (ACC ? out[z] : init) + sum_t w[t] * src[z + off[t]], z in [0, len) rounded up to
// whole vectors (so reads and writes reach up to L - 1 elements past len).
template <int K, bool ACC, typename T>
inline void corr_fixed(T* __restrict out, const T* __restrict src, const int64_t* off, const T* w, T init,
                       int64_t len) {
  using V = typename Vec<T>::V;
  constexpr int L = Vec<T>::L;
  const T* p[K];
  V wv[K];
  for (int t = 0; t < K; ++t) {
    p[t] = src + off[t];
    wv[t] = V{} + w[t];
  }
  const V iv = V{} + init;
  for (int64_t z = 0; z < len; z += L) {
    V acc = iv;
    if (ACC) __builtin_memcpy(&acc, out + z, sizeof(V));
    for (int t = 0; t < K; ++t) {
      V v;
      __builtin_memcpy(&v, p[t] + z, sizeof(V));
      acc += wv[t] * v;
    }
    __builtin_memcpy(out + z, &acc, sizeof(V));
  }
}

template <bool ACC, typename T>
inline void corr_group(int k, T* out, const T* src, const int64_t* off, const T* w, T init, int64_t len) {
  switch (k) {
    case 1: corr_fixed<1, ACC>(out, src, off, w, init, len); break;
    case 2: corr_fixed<2, ACC>(out, src, off, w, init, len); break;
    case 3: corr_fixed<3, ACC>(out, src, off, w, init, len); break;
    case 4: corr_fixed<4, ACC>(out, src, off, w, init, len); break;
    case 5: corr_fixed<5, ACC>(out, src, off, w, init, len); break;
    case 6: corr_fixed<6, ACC>(out, src, off, w, init, len); break;
    case 7: corr_fixed<7, ACC>(out, src, off, w, init, len); break;
    case 8: corr_fixed<8, ACC>(out, src, off, w, init, len); break;
    default: corr_fixed<9, ACC>(out, src, off, w, init, len); break;
  }
}

// out[z] = init + sum over the n taps of w[t] * src[z + off[t]] (corr_fixed's rounding).
template <typename T>
inline void correlate(T* out, const T* src, const int64_t* off, const T* w, int64_t n, T init, int64_t len) {
  if (n == 0) {
    for (int64_t z = 0; z < len; ++z) out[z] = init;
    return;
  }
  for (int64_t t = 0; t < n; t += kGroup) {
    const int k = static_cast<int>(std::min<int64_t>(kGroup, n - t));
    if (t == 0) {
      corr_group<false>(k, out, src, off, w, init, len);
    } else {
      corr_group<true>(k, out, src, off + t, w + t, init, len);
    }
  }
}

// acc[t*L + l] = the sum over z = l (mod L) of g[z] * src[z + off[t]], z in [0, len) rounded
// up to whole vectors (g must be zero from len to there).
template <int K, typename T>
inline void dot_fixed(const T* __restrict g, const T* __restrict src, const int64_t* off, int64_t len, T* acc) {
  using V = typename Vec<T>::V;
  constexpr int L = Vec<T>::L;
  const T* p[K];
  V a[K];
  for (int t = 0; t < K; ++t) {
    p[t] = src + off[t];
    a[t] = V{};
  }
  for (int64_t z = 0; z < len; z += L) {
    V gv;
    __builtin_memcpy(&gv, g + z, sizeof(V));
    for (int t = 0; t < K; ++t) {
      V v;
      __builtin_memcpy(&v, p[t] + z, sizeof(V));
      a[t] += gv * v;
    }
  }
  for (int t = 0; t < K; ++t) __builtin_memcpy(acc + t * L, &a[t], sizeof(V));
}

template <typename T>
inline void dot_group(int k, const T* g, const T* src, const int64_t* off, int64_t len, T* acc) {
  switch (k) {
    case 1: dot_fixed<1>(g, src, off, len, acc); break;
    case 2: dot_fixed<2>(g, src, off, len, acc); break;
    case 3: dot_fixed<3>(g, src, off, len, acc); break;
    case 4: dot_fixed<4>(g, src, off, len, acc); break;
    case 5: dot_fixed<5>(g, src, off, len, acc); break;
    case 6: dot_fixed<6>(g, src, off, len, acc); break;
    case 7: dot_fixed<7>(g, src, off, len, acc); break;
    case 8: dot_fixed<8>(g, src, off, len, acc); break;
    default: dot_fixed<9>(g, src, off, len, acc); break;
  }
}

// The lanes of v summed in a fixed tree: halves, quarters, then the last four or two.
template <typename T> inline T lane_total(const typename Vec<T>::V& v) {
  typedef T V32 __attribute__((vector_size(32)));
  typedef T V16 __attribute__((vector_size(16)));
  V32 a, b;
  __builtin_memcpy(&a, &v, 32);
  __builtin_memcpy(&b, reinterpret_cast<const char*>(&v) + 32, 32);
  a += b;
  V16 c, d;
  __builtin_memcpy(&c, &a, 16);
  __builtin_memcpy(&d, reinterpret_cast<const char*>(&a) + 16, 16);
  c += d;
  if constexpr (sizeof(T) == 4) return (c[0] + c[2]) + (c[1] + c[3]);
  return c[0] + c[1];
}
template <typename T> inline T lane_total(const T* lanes) {
  typename Vec<T>::V v;
  __builtin_memcpy(&v, lanes, sizeof(v));
  return lane_total<T>(v);
}

// Whether p[0, n) are all finite (x - x is 0 for them, NaN for an infinity or a NaN).
template <typename T> inline bool all_finite(const T* p, int64_t n) {
  T s = 0;
  for (int64_t i = 0; i < n; ++i) s += p[i] - p[i];
  return s == s;
}

// ---- the exact loops: every (window, tap) term and no other, for the channels whose values
// are not all finite

// gx plane (n, c): the gradient of input channel c of batch entry n.
template <typename T>
void backward_input_exact(const DepthwiseShape& s, const T* gy, const T* w, T* gx, int64_t n, int64_t c) {
  T* dst = gx + (n * s.C + c) * s.H * s.W;
  std::fill(dst, dst + s.H * s.W, T(0));
  for (int64_t m = 0; m < s.M; ++m) {
    const int64_t o = c * s.M + m;
    const T* g = gy + (n * s.C * s.M + o) * s.oh * s.ow;
    const T* wo = w + o * s.kh * s.kw;
    for (int64_t y = 0; y < s.oh; ++y) {
      for (int64_t xo = 0; xo < s.ow; ++xo) {
        const T gv = g[y * s.ow + xo];
        for (int64_t i = 0; i < s.kh; ++i) {
          const int64_t yy = y * s.sh - s.ph + i * s.dh;
          if (yy < 0 || yy >= s.H) continue;
          for (int64_t j = 0; j < s.kw; ++j) {
            const int64_t xx = xo * s.sw - s.pw + j * s.dw;
            if (xx >= 0 && xx < s.W) dst[yy * s.W + xx] += wo[i * s.kw + j] * gv;
          }
        }
      }
    }
  }
}

// The gw rows of input channel c (its M output channels), summed in double.
template <typename T> void backward_weight_exact(const DepthwiseShape& s, const T* gy, const T* x, T* gw, int64_t c) {
  for (int64_t m = 0; m < s.M; ++m) {
    const int64_t o = c * s.M + m;
    for (int64_t i = 0; i < s.kh; ++i) {
      for (int64_t j = 0; j < s.kw; ++j) {
        double sum = 0;
        for (int64_t n = 0; n < s.N; ++n) {
          const T* g = gy + (n * s.C * s.M + o) * s.oh * s.ow;
          const T* in = x + (n * s.C + c) * s.H * s.W;
          for (int64_t y = 0; y < s.oh; ++y) {
            const int64_t yy = y * s.sh - s.ph + i * s.dh;
            if (yy < 0 || yy >= s.H) continue;
            for (int64_t xo = 0; xo < s.ow; ++xo) {
              const int64_t xx = xo * s.sw - s.pw + j * s.dw;
              if (xx >= 0 && xx < s.W) sum += static_cast<double>(g[y * s.ow + xo] * in[yy * s.W + xx]);
            }
          }
        }
        gw[o * s.kh * s.kw + i * s.kw + j] = static_cast<T>(sum);
      }
    }
  }
}

// ---- the three passes

// Tasks of at least about kParallelGrain multiply-adds.
int64_t grain_for(int64_t work_per_task) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_task, 1));
}

// Buffers get this many elements past their end: the vector loops' rounding, spreads' and
// collects' whole vectors.
template <typename T> constexpr int64_t kTail = 2 * Vec<T>::L;

// Forward, one task per (input channel, block of batch entries): each of the channel's M
// output channels is one correlation of the block's phase buffer.
template <typename T> struct ForwardTask {
  const Plan<T>& p;
  const T *x, *w, *bias;
  T* y;
  T* S;  // the phase buffer, zero where the padding is
  T* F;  // one output channel of the block, flat
  void operator()(int64_t task) const {
    const DepthwiseShape& s = p.s;
    const int64_t M = s.M, OHW = s.oh * s.ow;
    const int64_t c = task / p.nblocks, n0 = task % p.nblocks * p.nb, nn = std::min(p.nb, s.N - n0);
    fill_block(p, x, c, n0, nn, S);
    for (int64_t m = 0; m < M; ++m) {
      const int64_t o = c * M + m;
      correlate(F, S, p.base.data(), w + o * p.K, p.K, bias ? bias[o] : T(0), p.valid_len(nn));
      for (int64_t n = 0; n < nn; ++n) flat_to_plane(p, F, n, y + ((n0 + n) * s.C * M + o) * OHW);
    }
  }
};

template <typename T> void forward(const DepthwiseShape& s, const T* x, const T* w, const T* bias, T* y) {
  const Plan<T> p = make_plan<T>(s);
  parallel_for(0, s.C * p.nblocks, grain_for(p.phase_len() * p.K * s.M), [&](int64_t begin, int64_t end) {
    std::vector<T> S(p.phases * p.phase_len() + kTail<T>, T(0)), F(p.phase_len() + kTail<T>);
    const ForwardTask<T> run{p, x, w, bias, y, S.data(), F.data()};
    simd_dispatch([&] {
      for (int64_t task = begin; task < end; ++task) run(task);
    });
  });
}

// Backward-input, the forward's adjoint, one task per (input channel, block): grad_output of
// the channel's M output channels laid out flat (G, zero slack, a zero margin in front); each
// phase of the phase buffer's gradient is one correlation of G with that phase's taps at
// negated offsets; the padding is then dropped.
template <typename T> struct BackwardInputTask {
  const Plan<T>& p;
  const T *gy, *w;
  T* gx;
  int64_t margin, glen;  // G's margin; G's length per output channel
  // the taps (m, t) by phase: [first[q], first[q + 1]) of their offsets into G and the index
  // of their weight among the channel's M*K
  const int64_t *first, *offs, *widx;
  const char* finite;  // per input channel: its weights are
  T *G, *SG, *ws;      // flat grad_output; the phase buffer's gradient; tap weights
  void operator()(int64_t task) const {
    const DepthwiseShape& s = p.s;
    const int64_t M = s.M, OHW = s.oh * s.ow;
    const int64_t c = task / p.nblocks, n0 = task % p.nblocks * p.nb, nn = std::min(p.nb, s.N - n0);
    if (!finite[c]) {
      for (int64_t n = n0; n < n0 + nn; ++n) backward_input_exact(s, gy, w, gx, n, c);
      return;
    }
    const T* end = gy + s.N * s.C * M * OHW;
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < nn; ++n) {
        plane_to_flat(p, gy + ((n0 + n) * s.C * M + c * M + m) * OHW, end, n, G + m * glen + margin);
      }
    }
    for (int64_t k = 0; k < M * p.K; ++k) ws[k] = w[c * M * p.K + widx[k]];
    for (int64_t q = 0; q < p.phases; ++q) {
      correlate(SG + q * p.phase_len(), G, offs + first[q], ws + first[q], first[q + 1] - first[q], T(0),
                nn * p.plane);
    }
    for (int64_t n = 0; n < nn; ++n) unfill_plane(p, SG, n, gx + ((n0 + n) * s.C + c) * s.H * s.W);
  }
};

template <typename T> void backward_input(const DepthwiseShape& s, const T* gy, const T* w, T* gx) {
  const Plan<T> p = make_plan<T>(s);
  const int64_t M = s.M, MK = M * p.K, margin = p.margin(), glen = margin + p.phase_len();
  std::vector<int64_t> first(p.phases + 1, 0), offs, widx;
  for (int64_t q = 0; q < p.phases; ++q) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t t = 0; t < p.K; ++t) {
        if (p.phase[t] != q) continue;
        offs.push_back(m * glen + margin - p.shift[t]);
        widx.push_back(m * p.K + t);
      }
    }
    first[q + 1] = static_cast<int64_t>(offs.size());
  }
  std::vector<char> finite(s.C);
  for (int64_t c = 0; c < s.C; ++c) finite[c] = all_finite(w + c * MK, MK);
  parallel_for(0, s.C * p.nblocks, grain_for(p.phase_len() * MK), [&](int64_t begin, int64_t end) {
    std::vector<T> G(M * glen + kTail<T>, T(0)), SG(p.phases * p.phase_len() + kTail<T>), ws(MK);
    const BackwardInputTask<T> run{p,           gy,          w,           gx,        margin,   glen,
                                   first.data(), offs.data(), widx.data(), finite.data(), G.data(), SG.data(),
                                   ws.data()};
    simd_dispatch([&] {
      for (int64_t task = begin; task < end; ++task) run(task);
    });
  });
}

// Backward-weight, one task per input channel: the batch's phase buffers block by block
// against grad_output laid out flat (zero slack), one dot product per tap, in vector lanes
// per block and the blocks' lane totals in double.
template <typename T> struct BackwardWeightTask {
  const Plan<T>& p;
  const T *gy, *x;
  T* gw;
  T *S, *G, *lanes;
  double* total;
  // false (nothing written) when a sum is not finite: then an infinity or a NaN was read,
  // maybe in the slack (0 * inf, a NaN the convolution does not have), and the exact loop
  // decides. (S may keep the values, and later channels find them the same way.)
  bool operator()(int64_t c) const {
    const DepthwiseShape& s = p.s;
    const int64_t M = s.M, OHW = s.oh * s.ow;
    constexpr int L = Vec<T>::L;
    const T* end = gy + s.N * s.C * M * OHW;
    for (int64_t i = 0; i < M * p.K; ++i) total[i] = 0;
    for (int64_t n0 = 0; n0 < s.N; n0 += p.nb) {
      const int64_t nn = std::min(p.nb, s.N - n0), len = p.valid_len(nn);
      fill_block(p, x, c, n0, nn, S);
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < nn; ++n) plane_to_flat(p, gy + ((n0 + n) * s.C * M + c * M + m) * OHW, end, n, G);
        const typename Vec<T>::V zero{};  // G to the end of the last vector: stale planes of an earlier block
        __builtin_memcpy(G + len, &zero, sizeof(zero));
        for (int64_t t = 0; t < p.K; t += kGroup) {
          dot_group(static_cast<int>(std::min<int64_t>(kGroup, p.K - t)), G, S, p.base.data() + t, len,
                    lanes + t * L);
        }
        for (int64_t t = 0; t < p.K; ++t) total[m * p.K + t] += static_cast<double>(lane_total(lanes + t * L));
      }
    }
    double check = 0;
    for (int64_t i = 0; i < M * p.K; ++i) check += total[i] - total[i];
    if (check != check) return false;
    for (int64_t i = 0; i < M * p.K; ++i) gw[c * M * p.K + i] = static_cast<T>(total[i]);
    return true;
  }
};

template <typename T> void backward_weight(const DepthwiseShape& s, const T* gy, const T* x, T* gw) {
  const Plan<T> p = make_plan<T>(s);
  parallel_for(0, s.C, grain_for(s.N * p.plane * p.K * s.M), [&](int64_t begin, int64_t end) {
    std::vector<T> S(p.phases * p.phase_len() + kTail<T>, T(0)), G(p.phase_len() + kTail<T>, T(0));
    std::vector<T> lanes(p.K * Vec<T>::L);
    std::vector<double> total(s.M * p.K);
    const BackwardWeightTask<T> run{p, gy, x, gw, S.data(), G.data(), lanes.data(), total.data()};
    for (int64_t c = begin; c < end; ++c) {
      bool done = false;
      simd_dispatch([&] { done = run(c); });
      if (!done) backward_weight_exact(s, gy, x, gw, c);
    }
  });
}

}  // namespace

// ---- the tensor entry points

namespace {

bool depthwise_enabled() {
  static const bool enabled = [] {
    const char* e = std::getenv("EMBER_CONV_DEPTHWISE");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return enabled;
}

DepthwiseShape shape_of(const Conv2dMeta& m) {
  const ConvGeometry& g = m.g;
  return {m.N, m.C, m.H, m.W, m.O / m.C, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, m.oh, m.ow};
}

}  // namespace

bool depthwise_suits(const Tensor& t, const Conv2dMeta& m) {
  const ScalarType dt = t->dtype();
  return (dt == ScalarType::Float32 || dt == ScalarType::Float64) && m.groups == m.C && depthwise_enabled();
}

Tensor depthwise_conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dMeta& m) {
  Tensor x = as_contiguous(input), w = as_contiguous(weight), b = bias ? as_contiguous(bias) : Tensor();
  Tensor out = empty({m.N, m.O, m.oh, m.ow}, input->dtype());
  dispatch_real(input->dtype(), [&](auto zero) {
    using T = decltype(zero);
    forward(shape_of(m), x->data<T>(), w->data<T>(), b ? b->data<T>() : nullptr, out->data<T>());
  });
  return out;
}

Tensor depthwise_conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Conv2dMeta& m) {
  Tensor gy = as_contiguous(grad_output), w = as_contiguous(weight);
  Tensor gx = empty({m.N, m.C, m.H, m.W}, grad_output->dtype());
  dispatch_real(grad_output->dtype(), [&](auto zero) {
    using T = decltype(zero);
    backward_input(shape_of(m), gy->data<T>(), w->data<T>(), gx->data<T>());
  });
  return gx;
}

Tensor depthwise_conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Conv2dMeta& m) {
  Tensor gy = as_contiguous(grad_output), x = as_contiguous(input);
  Tensor gw = empty({m.O, 1, m.g.kh, m.g.kw}, grad_output->dtype());
  dispatch_real(grad_output->dtype(), [&](auto zero) {
    using T = decltype(zero);
    backward_weight(shape_of(m), gy->data<T>(), x->data<T>(), gw->data<T>());
  });
  return gw;
}

}  // namespace ember::cpu
