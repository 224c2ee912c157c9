// Blocked direct convolution (float32, stride 1, dilation 1, groups 1), AVX-512 only.
//
// The kernel of benchmarks/conv_study/conv_bench.cpp ("direct"), moved onto Ember's pool
// and runtime dispatch: the input is copied once into zero-padded planes whose rows are a
// multiple of 16 floats wide (plus kw - 1), the weight is re-laid out as
// [O/OCB][C][kh][kw][OCB], and every task computes an OCB x RY x (16 XV) output tile
// (OCB output channels, RY rows, XV vectors of 16 columns) in up to 24 zmm accumulators,
// looping over all input channels and taps: one unaligned load per input vector and tap,
// one broadcast per weight. Output channels past O (the last block) get zero weights and are
// not stored; columns and rows past the output are computed on the zero padding and dropped.
//
// Backward-data is the same kernel on grad_output padded by k - 1 - p, with the flipped,
// transposed weight. Backward-weight keeps an OCB x kw block of vector accumulators per
// (output-channel block, input channel, kernel row) task and sums over batch and rows.
//
// The vector code uses GCC vector types inside functions compiled with the AVX-512 target
// attribute (simd.h's EMBER_TARGET_AVX512); they are reached only when cpu_level() is
// AVX512 (direct_*_suits() says so), so the library still runs on any x86-64 CPU and the
// other levels take im2col + GEMM (conv_cpu.cpp). Results differ from im2col + GEMM by float32
// rounding (another summation order).
#include "ember/ops/conv/conv_direct_cpu.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "ember/runtime/parallel.h"
#include "ember/runtime/simd.h"
#include "ember/core/tensor.h"

namespace ember::cpu {
namespace {

bool direct_enabled() {
#ifdef EMBER_SIMD_DISPATCH
  static const bool allowed = [] {
    const char* e = std::getenv("EMBER_CONV_DIRECT");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return allowed && cpu_level() == CpuLevel::AVX512;
#else
  return false;
#endif
}

// Where the kernel pays (benchmarks/conv_study and the measurements in
// docs/conv-algorithms.md): at least 16 channels on both sides (8 -> 16 channels lost to
// im2col + GEMM), a real spatial kernel (1x1 is a plain GEMM, which BLAS does better), and
// output rows that fill at least 85% of their 16-wide vectors (12-wide rows lost: 14, 16,
// 28-32 won). Backward-weight also wants rows of at least two vectors (even at 16 wide,
// lost at 14).
bool shape_suits(int64_t N, int64_t C, int64_t O, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                 int64_t min_ow = 1) {
  const int64_t owr = (ow + 15) / 16 * 16;
  return N >= 1 && oh >= 1 && ow >= min_ow && C >= 16 && O >= 16 && kh * kw > 1 && kh <= 16 && kw <= 16 &&
         20 * ow >= 17 * owr;
}

struct Plan {
  int64_t N, C, O, kh, kw, oh, ow;  // the convolution computed: C channels in, O out
  int ocb, ry, xv;                  // register tile
  int64_t ohr, owr, Hp, Wq, nob, nyt, nxt;
  int64_t plane() const { return Hp * Wq; }
};

Plan make_plan(int64_t N, int64_t C, int64_t O, int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  Plan p{N, C, O, kh, kw, oh, ow, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  p.owr = (ow + 15) / 16 * 16;
  p.ocb = O > 4 ? 8 : 4;
  // rows per tile: the count that wastes fewest padded rows
  const int hint = (oh % 3 == 0 || (oh % 2 != 0 && (oh + 2) / 3 * 3 - oh < (oh + 1) / 2 * 2 - oh)) ? 3 : 2;
  if ((p.owr / 16) % 2 == 0) {
    p.xv = 2;
    p.ry = p.ocb == 4 && oh > 1 ? 2 : 1;
  } else {
    p.xv = 1;
    p.ry = oh > 1 ? hint : 1;
  }
  p.ohr = (oh + p.ry - 1) / p.ry * p.ry;
  p.Hp = p.ohr + kh - 1;
  p.Wq = p.owr + kw - 1;
  p.nob = (O + p.ocb - 1) / p.ocb;
  p.nyt = p.ohr / p.ry;
  p.nxt = p.owr / (16 * p.xv);
  return p;
}

Tensor scratch(int64_t n) { return empty({n}, ScalarType::Float32); }

// P planes of Hi x Wi placed at (offy, offx) in zeroed Hp x Wq planes.
void pad_planes(const float* src, float* dst, int64_t P, int64_t Hi, int64_t Wi, int64_t Hp, int64_t Wq,
                int64_t offy, int64_t offx) {
  parallel_for(0, P, std::max<int64_t>(1, kParallelGrain / (Hp * Wq)), [&](int64_t begin, int64_t end) {
    for (int64_t pl = begin; pl < end; ++pl) {
      const float* s = src + pl * Hi * Wi;
      float* d = dst + pl * Hp * Wq;
      for (int64_t y = 0; y < Hp; ++y, d += Wq) {
        const int64_t sy = y - offy;
        if (sy < 0 || sy >= Hi) {
          std::fill(d, d + Wq, 0.f);
          continue;
        }
        std::fill(d, d + offx, 0.f);
        std::memcpy(d + offx, s + sy * Wi, Wi * sizeof(float));
        std::fill(d + offx + Wi, d + Wq, 0.f);
      }
    }
  });
}

// w (O, C, kh, kw), or for the adjoint w (C, O, kh, kw) flipped in both spatial dims, into
// [O/OCB][C][kh*kw][OCB] with zeros for the channels past O.
void layout_weight(const Plan& p, const float* w, float* wt, bool adjoint) {
  const int64_t KK = p.kh * p.kw, OCB = p.ocb;
  parallel_for(0, p.nob * OCB, std::max<int64_t>(1, kParallelGrain / (p.C * KK)), [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      float* dst = wt + (o / OCB) * p.C * KK * OCB + o % OCB;
      for (int64_t c = 0; c < p.C; ++c) {
        for (int64_t k = 0; k < KK; ++k) {
          float v = 0.f;
          if (o < p.O) v = adjoint ? w[(c * p.O + o) * KK + (KK - 1 - k)] : w[(o * p.C + c) * KK + k];
          dst[(c * KK + k) * OCB] = v;
        }
      }
    }
  });
}

#ifdef EMBER_SIMD_DISPATCH
typedef float v16 __attribute__((vector_size(64)));

// One OCB x RY x (16 XV) tile at output channel o0, row y0, column x0 of image `in` (its C
// prepared planes) into `out` (its (O, oh, ow) output); wt: the block's [C][kh*kw][OCB].
template <int OCB, int RY, int XV>
EMBER_TARGET_AVX512 void direct_tile(const Plan& p, const float* in, const float* wt, const float* bias,
                                     float* out, int64_t o0, int64_t y0, int64_t x0) {
  v16 acc[OCB][RY][XV];
  for (int o = 0; o < OCB; ++o) {
    const float b = bias && o0 + o < p.O ? bias[o0 + o] : 0.f;
    for (int r = 0; r < RY; ++r)
      for (int v = 0; v < XV; ++v) acc[o][r][v] = v16{} + b;
  }
  const int64_t Wq = p.Wq, kh = p.kh, kw = p.kw;
  for (int64_t c = 0; c < p.C; ++c) {
    const float* plane = in + c * p.plane() + y0 * Wq + x0;
    const float* wc = wt + c * kh * kw * OCB;
    for (int64_t i = 0; i < kh; ++i) {
      for (int64_t j = 0; j < kw; ++j) {
        const float* base = plane + i * Wq + j;
        const float* wp = wc + (i * kw + j) * OCB;
        v16 xin[RY][XV];
        for (int r = 0; r < RY; ++r)
          for (int v = 0; v < XV; ++v) __builtin_memcpy(&xin[r][v], base + r * Wq + v * 16, sizeof(v16));
        for (int o = 0; o < OCB; ++o) {
          const v16 wv = v16{} + wp[o];
          for (int r = 0; r < RY; ++r)
            for (int v = 0; v < XV; ++v) acc[o][r][v] += wv * xin[r][v];
        }
      }
    }
  }
  for (int o = 0; o < OCB && o0 + o < p.O; ++o) {
    for (int r = 0; r < RY && y0 + r < p.oh; ++r) {
      float* row = out + ((o0 + o) * p.oh + y0 + r) * p.ow;
      for (int v = 0; v < XV; ++v) {
        const int64_t x = x0 + 16 * v;
        if (x + 16 <= p.ow) {
          __builtin_memcpy(row + x, &acc[o][r][v], sizeof(v16));
        } else {
          for (int64_t l = 0; l < 16 && x + l < p.ow; ++l) row[x + l] = acc[o][r][v][l];
        }
      }
    }
  }
}

// Tasks [begin, end) of N x row tiles x column tiles x channel blocks (blocks innermost:
// they share the input rows).
template <int OCB, int RY, int XV>
EMBER_TARGET_AVX512 void direct_tiles(const Plan& p, const float* prep, const float* wt, const float* bias,
                                      float* out, int64_t begin, int64_t end) {
  for (int64_t t = begin; t < end; ++t) {
    const int64_t ob = t % p.nob;
    int64_t r = t / p.nob;
    const int64_t xt = r % p.nxt;
    r /= p.nxt;
    const int64_t yt = r % p.nyt, n = r / p.nyt;
    direct_tile<OCB, RY, XV>(p, prep + n * p.C * p.plane(), wt + ob * OCB * p.C * p.kh * p.kw, bias,
                             out + n * p.O * p.oh * p.ow, ob * OCB, yt * RY, xt * 16 * XV);
  }
}

void run_tiles(const Plan& p, const float* prep, const float* wt, const float* bias, float* out) {
  const int64_t tasks = p.N * p.nyt * p.nxt * p.nob;
  parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    switch (p.ocb * 100 + p.ry * 10 + p.xv) {
      case 812: direct_tiles<8, 1, 2>(p, prep, wt, bias, out, begin, end); break;
      case 831: direct_tiles<8, 3, 1>(p, prep, wt, bias, out, begin, end); break;
      case 821: direct_tiles<8, 2, 1>(p, prep, wt, bias, out, begin, end); break;
      case 811: direct_tiles<8, 1, 1>(p, prep, wt, bias, out, begin, end); break;
      case 422: direct_tiles<4, 2, 2>(p, prep, wt, bias, out, begin, end); break;
      case 412: direct_tiles<4, 1, 2>(p, prep, wt, bias, out, begin, end); break;
      case 431: direct_tiles<4, 3, 1>(p, prep, wt, bias, out, begin, end); break;
      case 421: direct_tiles<4, 2, 1>(p, prep, wt, bias, out, begin, end); break;
      case 411: direct_tiles<4, 1, 1>(p, prep, wt, bias, out, begin, end); break;
      default: throw std::logic_error("conv2d direct: no tile kernel for this plan");
    }
  });
}

// gw[o][c][i][:] for the OCB channels of block ob (kw = KW): sum over n, y, x of
// gy[n][o][y][x] * xpad[n][c][y + i][x + j]; gyp: gy with rows padded to owr and channels to
// a multiple of OCB (zeros), prep: the input planes as for forward.
template <int OCB, int KW>
EMBER_TARGET_AVX512 void weight_task(const Plan& p, const float* gyp, const float* prep, float* gw, int64_t Opad,
                                     int64_t ob, int64_t c, int64_t i) {
  v16 acc[OCB][KW];
  for (int o = 0; o < OCB; ++o)
    for (int j = 0; j < KW; ++j) acc[o][j] = v16{};
  const int64_t oh = p.oh, owr = p.owr;
  for (int64_t n = 0; n < p.N; ++n) {
    const float* pn = prep + (n * p.C + c) * p.plane() + i * p.Wq;
    const float* gn = gyp + (n * Opad + ob * OCB) * oh * owr;
    for (int64_t y = 0; y < oh; ++y) {
      const float* rowp = pn + y * p.Wq;
      for (int64_t x0 = 0; x0 < owr; x0 += 16) {
        v16 xin[KW];
        for (int j = 0; j < KW; ++j) __builtin_memcpy(&xin[j], rowp + x0 + j, sizeof(v16));
        for (int o = 0; o < OCB; ++o) {
          v16 gv;
          __builtin_memcpy(&gv, gn + (o * oh + y) * owr + x0, sizeof(v16));
          for (int j = 0; j < KW; ++j) acc[o][j] += gv * xin[j];
        }
      }
    }
  }
  for (int o = 0; o < OCB && ob * OCB + o < p.O; ++o) {
    for (int j = 0; j < KW; ++j) {
      float s = 0.f;
      for (int l = 0; l < 16; ++l) s += acc[o][j][l];
      gw[((ob * OCB + o) * p.C + c) * p.kh * KW + i * KW + j] = s;
    }
  }
}

template <int OCB, int KW>
EMBER_TARGET_AVX512 void weight_tasks(const Plan& p, const float* gyp, const float* prep, float* gw, int64_t Opad,
                                      int64_t begin, int64_t end) {
  for (int64_t t = begin; t < end; ++t) {
    const int64_t i = t % p.kh, c = (t / p.kh) % p.C, ob = t / (p.kh * p.C);
    weight_task<OCB, KW>(p, gyp, prep, gw, Opad, ob, c, i);
  }
}
#endif

}  // namespace

bool direct_forward_suits(const DirectConvShape& s) {
  return direct_enabled() && shape_suits(s.N, s.C, s.O, s.kh, s.kw, s.oh(), s.ow());
}

bool direct_backward_input_suits(const DirectConvShape& s) {
  // the adjoint: O channels in, C out, an H x W output, padding k - 1 - p >= 0
  return direct_enabled() && s.ph <= s.kh - 1 && s.pw <= s.kw - 1 && s.oh() >= 1 && s.ow() >= 1 &&
         shape_suits(s.N, s.O, s.C, s.kh, s.kw, s.H, s.W);
}

bool direct_backward_weight_suits(const DirectConvShape& s) {
  return direct_enabled() && (s.kw == 3 || s.kw == 5) && shape_suits(s.N, s.C, s.O, s.kh, s.kw, s.oh(), s.ow(), 28);
}

#ifdef EMBER_SIMD_DISPATCH
void direct_conv2d_forward(const DirectConvShape& s, const float* x, const float* w, const float* bias, float* y) {
  const Plan p = make_plan(s.N, s.C, s.O, s.kh, s.kw, s.oh(), s.ow());
  Tensor prep = scratch(p.N * p.C * p.plane()), wt = scratch(p.nob * p.ocb * p.C * p.kh * p.kw);
  pad_planes(x, prep->data<float>(), s.N * s.C, s.H, s.W, p.Hp, p.Wq, s.ph, s.pw);
  layout_weight(p, w, wt->data<float>(), false);
  run_tiles(p, prep->data<float>(), wt->data<float>(), bias, y);
}

void direct_conv2d_backward_input(const DirectConvShape& s, const float* gy, const float* w, float* gx) {
  const Plan p = make_plan(s.N, s.O, s.C, s.kh, s.kw, s.H, s.W);
  Tensor prep = scratch(p.N * p.C * p.plane()), wt = scratch(p.nob * p.ocb * p.C * p.kh * p.kw);
  pad_planes(gy, prep->data<float>(), s.N * s.O, s.oh(), s.ow(), p.Hp, p.Wq, s.kh - 1 - s.ph, s.kw - 1 - s.pw);
  layout_weight(p, w, wt->data<float>(), true);
  run_tiles(p, prep->data<float>(), wt->data<float>(), nullptr, gx);
}

void direct_conv2d_backward_weight(const DirectConvShape& s, const float* gy, const float* x, float* gw) {
  const Plan p = make_plan(s.N, s.C, s.O, s.kh, s.kw, s.oh(), s.ow());
  const int ocb = s.kw == 3 ? 8 : 4;  // OCB x kw accumulators: at most 24
  const int64_t Opad = (s.O + ocb - 1) / ocb * ocb, oh = p.oh, ow = p.ow, owr = p.owr;
  Tensor prep = scratch(p.N * p.C * p.plane()), gyp_t = scratch(p.N * Opad * oh * owr);
  pad_planes(x, prep->data<float>(), s.N * s.C, s.H, s.W, p.Hp, p.Wq, s.ph, s.pw);
  float* gyp = gyp_t->data<float>();
  parallel_for(0, p.N * Opad, std::max<int64_t>(1, kParallelGrain / (oh * owr)), [&](int64_t begin, int64_t end) {
    for (int64_t pl = begin; pl < end; ++pl) {
      float* d = gyp + pl * oh * owr;
      const int64_t n = pl / Opad, o = pl % Opad;
      if (o >= s.O) {
        std::fill(d, d + oh * owr, 0.f);
        continue;
      }
      const float* src = gy + (n * s.O + o) * oh * ow;
      for (int64_t y = 0; y < oh; ++y) {
        std::memcpy(d + y * owr, src + y * ow, ow * sizeof(float));
        std::fill(d + y * owr + ow, d + (y + 1) * owr, 0.f);
      }
    }
  });
  const float* pr = prep->data<float>();
  parallel_for(0, Opad / ocb * s.C * s.kh, 1, [&](int64_t begin, int64_t end) {
    if (s.kw == 3) {
      weight_tasks<8, 3>(p, gyp, pr, gw, Opad, begin, end);
    } else if (s.kw == 5) {
      weight_tasks<4, 5>(p, gyp, pr, gw, Opad, begin, end);
    } else {
      throw std::logic_error("conv2d direct backward-weight: kw must be 3 or 5");
    }
  });
}
#else
void direct_conv2d_forward(const DirectConvShape&, const float*, const float*, const float*, float*) {
  throw std::logic_error("conv2d direct: not built");
}
void direct_conv2d_backward_input(const DirectConvShape&, const float*, const float*, float*) {
  throw std::logic_error("conv2d direct: not built");
}
void direct_conv2d_backward_weight(const DirectConvShape&, const float*, const float*, float*) {
  throw std::logic_error("conv2d direct: not built");
}
#endif

}  // namespace ember::cpu
