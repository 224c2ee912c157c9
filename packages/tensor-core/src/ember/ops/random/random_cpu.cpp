// Random sampling: rand, randn, randint, randperm, normal_, uniform_, bernoulli, bernoulli_,
// rand_like, randn_like.
//
// Every op uses the counter-based generator of generator.h: it reserves all the counters it
// needs up front (Generator::reserve), and element i is computed from
// random_bits(seed, start + ...) alone, so the values are the same for any number of threads
// and any chunking of the work. What each op draws:
//  - uniform (rand, uniform_): one counter per element. float64 uses a 53-bit uniform, the
//    other dtypes a 24-bit float uniform in [0, 1); the value from + (to - from) * u is
//    computed in double and rounded to the dtype. A rounded value that reaches `to` (possible
//    for float16/bfloat16 near the top of the range) is stepped down to the next value below.
//  - normal (randn, normal_): Box-Muller on pairs of elements. Elements 2j and 2j+1 share the
//    counters start + 2j and start + 2j + 1, which give u1 in (0, 1] (53 bits) and u2 in
//    [0, 1) (53 bits for float64, 24 bits otherwise); with r = sqrt(-2 ln u1) (in double) and
//    theta = 2 pi u2 (in double for float64, float otherwise), element 2j is r cos(theta) and
//    element 2j+1 is r sin(theta), then scaled by std, shifted by mean and rounded to the
//    dtype. An op on n elements reserves 2 * ceil(n / 2) counters.
//  - randint: one counter per element, mapped onto [low, high) by the high half of a
//    64 x 64 -> 128-bit product (bias at most range / 2^64).
//  - bernoulli: one counter per element; the element is 1 when a 53-bit uniform u < p.
//  - randperm: Fisher-Yates, serial: n counters, step i (n-1 down to 1) swaps element i with
//    element j in [0, i] drawn from counter start + i.
//  - multinomial with replacement: one counter per sample; a 53-bit uniform u scaled by the
//    row's total picks the first category whose cumulative weight exceeds it. Without
//    replacement: one counter per category; the key -log(u) / w (exponential race,
//    Efraimidis-Spirakis) orders the categories, and the num_samples smallest keys, in
//    increasing order, are the draws (the law of sequential draws without replacement);
//    categories of weight zero follow the others, in random order.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ember/ops/elementwise/vec_math.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/ops/random/random_meta.h"
#include "ember/runtime/simd.h"

namespace ember::cpu {
namespace {

constexpr int64_t kUniformGrain = 32768;
constexpr int64_t kNormalGrain = 8192;
constexpr double kTwoPi = 6.283185307179586476925286766559;

Device resolve_device(const std::optional<Device>& device) { return device ? *device : Device{}; }

// n freshly reserved counters of the generator (the default one when null).
RandomCounters reserve(Generator* generator, uint64_t n) {
  return reserve_counters(resolve_generator(generator), n);
}

// Creates (or reuses out=) a contiguous tensor, fills it, sets requires_grad.
template <typename Fill>
Tensor create(const char* op, const Shape& size, ScalarType dtype, const std::optional<Device>& device,
              bool requires_grad, const Tensor& out, Fill fill) {
  Tensor res = out ? prepare_out(op, out, size, dtype) : ember::empty(size, dtype, resolve_device(device));
  fill(res);
  res = finish_out(op, out, res);
  if (requires_grad) set_requires_grad(res, true);
  return res;
}

// Runs fill(contiguous tensor) on t itself when contiguous, else on a temporary copied into t.
template <typename Fill> void fill_into(const Tensor& t, Fill fill) {
  check_cpu(t, "random");
  if (t->is_contiguous()) {
    fill(t);
    return;
  }
  Tensor tmp = ember::empty(t->sizes(), t->dtype());
  fill(tmp);
  copy_into(t, tmp);
}

template <typename T> void uniform_kernel(T* p, int64_t n, RandomCounters c, double from, double to) {
  // A value that rounds up to `to` becomes the largest one below it (when that is >= from).
  const UniformRange<T> R = uniform_range<T>(from, to);
  const double span = R.span;
  const T top = R.top;
  const bool clamp = R.clamp;
  auto value = [&](uint64_t counter) {
    const uint64_t bits = random_bits(c.seed, counter);
    const double u = std::is_same_v<T, double> ? uniform_double(bits) : static_cast<double>(uniform_float(bits));
    return convert<T>(from + span * u);
  };
  parallel_for(0, n, kUniformGrain, [&](int64_t b, int64_t e) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      simd_dispatch([&] {  // branch-free, so the hash and the scaling vectorise
        for (int64_t i = b; i < e; ++i) {
          const T v = value(c.start + static_cast<uint64_t>(i));
          p[i] = clamp && static_cast<double>(v) >= to ? top : v;
        }
      });
    } else {
      for (int64_t i = b; i < e; ++i) {
        const T v = value(c.start + static_cast<uint64_t>(i));
        p[i] = clamp && static_cast<double>(static_cast<opmath_t<T>>(v)) >= to ? top : v;
      }
    }
  });
}

template <typename T> void normal_kernel(T* p, int64_t n, RandomCounters c, double mean, double std) {
  auto pair = [&](int64_t j, double& z0, double& z1) {
    const uint64_t k = c.start + 2 * static_cast<uint64_t>(j);
    const double u1 = 1.0 - uniform_double(random_bits(c.seed, k));  // (0, 1]: log is finite
    if constexpr (std::is_same_v<T, double>) {
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double theta = kTwoPi * uniform_double(random_bits(c.seed, k + 1));
      z0 = r * std::cos(theta);
      z1 = r * std::sin(theta);
    } else {
      // float results: the angle as a float turn (a 24-bit u2) is plenty; the radius stays
      // in double so that the tails reach |z| ~ 8.6 rather than 5.8. Both by vec_math.h's
      // straight-line functions, so that the loop vectorises.
      const double r = std::sqrt(-2.0 * log_pos_d(u1));
      float s, co;
      sincos_turn_f(uniform_float(random_bits(c.seed, k + 1)), s, co);
      z0 = r * static_cast<double>(co);
      z1 = r * static_cast<double>(s);
    }
  };
  parallel_for(0, n, kNormalGrain, [&](int64_t b, int64_t e) {
    double z0, z1;
    int64_t i = b;
    if (i < e && (i & 1)) {  // a chunk starting on the second element of a pair
      pair(i / 2, z0, z1);
      p[i] = convert<T>(mean + std * z1);
      ++i;
    }
    const int64_t pairs_end = i + ((e - i) & ~int64_t{1});
    auto body = [&] {
      for (int64_t k = i; k < pairs_end; k += 2) {
        double a, b2;
        pair(k / 2, a, b2);
        p[k] = convert<T>(mean + std * a);
        p[k + 1] = convert<T>(mean + std * b2);
      }
    };
    if constexpr (std::is_same_v<T, float>) simd_dispatch(body);
    else body();
    i = pairs_end;
    if (i < e) {  // a chunk ending on the first element of a pair
      pair(i / 2, z0, z1);
      p[i] = convert<T>(mean + std * z0);
    }
  });
}

void fill_uniform(const Tensor& t, Generator* generator, double from, double to) {
  fill_into(t, [&](const Tensor& r) {
    const RandomCounters c = reserve(generator, static_cast<uint64_t>(r->numel()));
    dispatch_float(r->dtype(), "uniform", [&](auto tag) {
      using T = decltype(tag);
      uniform_kernel(r->data<T>(), r->numel(), c, from, to);
    });
  });
}

void fill_normal(const Tensor& t, Generator* generator, double mean, double std) {
  fill_into(t, [&](const Tensor& r) {
    const uint64_t n = static_cast<uint64_t>(r->numel());
    const RandomCounters c = reserve(generator, n + (n & 1));
    dispatch_float(r->dtype(), "normal", [&](auto tag) {
      using T = decltype(tag);
      normal_kernel(r->data<T>(), r->numel(), c, mean, std);
    });
  });
}

// Element i = 1 when a uniform draw is below prob(i), else 0.
template <typename Prob> void fill_bernoulli(const Tensor& t, Generator* generator, Prob prob) {
  fill_into(t, [&](const Tensor& r) {
    const int64_t n = r->numel();
    const RandomCounters c = reserve(generator, static_cast<uint64_t>(n));
    dispatch_all(r->dtype(), "bernoulli", [&](auto tag) {
      using T = decltype(tag);
      T* p = r->data<T>();
      parallel_for(0, n, kUniformGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const double u = uniform_double(random_bits(c.seed, c.start + static_cast<uint64_t>(i)));
          p[i] = convert<T>(static_cast<int64_t>(u < prob(i)));
        }
      });
    });
  });
}

}  // namespace

Tensor randint(int64_t low, int64_t high, const Shape& size, Generator* generator, std::optional<ScalarType> dtype,
               std::optional<Device> device, bool requires_grad) {
  const RandintMeta M = randint_meta(low, high, dtype);
  const ScalarType dt = M.dtype;
  const uint64_t range = M.range;
  return create("randint", size, dt, device, requires_grad, Tensor(), [&](const Tensor& r) {
    const int64_t n = r->numel();
    const RandomCounters c = reserve(generator, static_cast<uint64_t>(n));
    dispatch_all_and_unsigned(dt, "randint", [&](auto tag) {
      using T = decltype(tag);
      T* p = r->data<T>();
      parallel_for(0, n, kUniformGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const uint64_t bits = random_bits(c.seed, c.start + static_cast<uint64_t>(i));
          const uint64_t k = static_cast<uint64_t>((static_cast<unsigned __int128>(bits) * range) >> 64);
          p[i] = convert<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + k));
        }
      });
    });
  });
}

Tensor randint_high(int64_t high, const Shape& size, Generator* generator, std::optional<ScalarType> dtype,
                    std::optional<Device> device, bool requires_grad) {
  return randint(0, high, size, generator, dtype, device, requires_grad);
}

Tensor randperm(int64_t n, Generator* generator, std::optional<ScalarType> dtype, std::optional<Device> device,
                bool requires_grad) {
  const ScalarType dt = randperm_meta(n, dtype);
  return create("randperm", {n}, dt, device, requires_grad, Tensor(), [&](const Tensor& r) {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t(0));
    const RandomCounters c = reserve(generator, static_cast<uint64_t>(n));
    for (int64_t i = n - 1; i > 0; --i) {
      const uint64_t bits = random_bits(c.seed, c.start + static_cast<uint64_t>(i));
      const auto j = static_cast<int64_t>((static_cast<unsigned __int128>(bits) * static_cast<uint64_t>(i + 1)) >> 64);
      std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
    }
    dispatch_numeric(dt, "randperm", [&](auto tag) {
      using T = decltype(tag);
      T* p = r->data<T>();
      for (int64_t i = 0; i < n; ++i) p[i] = convert<T>(perm[static_cast<size_t>(i)]);
    });
  });
}

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, Generator* generator) {
  const MultinomialMeta M = multinomial_meta(self, num_samples, replacement);
  const int64_t rows = M.rows, cats = M.cats;
  Tensor w = ember::empty(self->sizes(), ScalarType::Float64);
  copy_into(w, self);
  const double* wp = w->data<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t k = 0; k < cats; ++k) {
      const double v = wp[r * cats + k];
      if (!(v >= 0.0) || std::isinf(v)) throw_bad_multinomial_weight(v, r, k);
      total += v;
    }
    if (!(total > 0)) throw_multinomial_zero_sum(r);
  }
  Tensor res = ember::empty(M.shape, ScalarType::Int64);
  int64_t* out = res->data<int64_t>();
  const RandomCounters c = reserve(generator, static_cast<uint64_t>(rows * (replacement ? num_samples : cats)));
  parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
    std::vector<double> acc(static_cast<size_t>(cats));
    std::vector<int64_t> order(static_cast<size_t>(cats));
    for (int64_t r = b; r < e; ++r) {
      const double* row = wp + r * cats;
      int64_t* dst = out + r * num_samples;
      if (replacement) {
        std::partial_sum(row, row + cats, acc.begin());
        const double total = acc.back();
        for (int64_t s = 0; s < num_samples; ++s) {
          const double u = uniform_double(random_bits(c.seed, c.start + static_cast<uint64_t>(r * num_samples + s)));
          const auto it = std::upper_bound(acc.begin(), acc.end(), u * total);
          int64_t k = std::min<int64_t>(it - acc.begin(), cats - 1);
          while (row[k] == 0.0) --k;  // u * total rounded onto the last cumulative weight
          dst[s] = k;
        }
      } else {
        for (int64_t k = 0; k < cats; ++k) {
          const double u = uniform_double(random_bits(c.seed, c.start + static_cast<uint64_t>(r * cats + k)));
          // -log(1 - u) is an exponential draw (u < 1); zero weights come after every positive
          // one (as in PyTorch, which draws them only once the others are exhausted), in a
          // uniformly random order
          const double e = -std::log1p(-u);
          acc[static_cast<size_t>(k)] = row[k] > 0 ? e / row[k] : e;
        }
        std::iota(order.begin(), order.end(), int64_t(0));
        auto first = [&](int64_t a, int64_t z) {
          const bool za = row[a] == 0.0, zz = row[z] == 0.0;
          return za != zz ? zz : acc[static_cast<size_t>(a)] < acc[static_cast<size_t>(z)];
        };
        std::partial_sort(order.begin(), order.begin() + num_samples, order.end(), first);
        std::copy(order.begin(), order.begin() + num_samples, dst);
      }
    }
  });
  return res;
}

// In-place fills: the binding passes self as `out`; a null out (a functional call from C++)
// fills a new tensor shaped like self.
Tensor normal(const Tensor& self, double mean, double std, Generator* generator, const Tensor& out) {
  Tensor target = normal_meta(self, std, out);
  fill_normal(target, generator, mean, std);
  return target;
}

Tensor uniform(const Tensor& self, double from, double to, Generator* generator, const Tensor& out) {
  Tensor target = uniform_meta(self, from, to, out);
  fill_uniform(target, generator, from, to);
  return target;
}

namespace {

// p broadcast to `shape` as a contiguous float64 tensor, every value checked to be in [0, 1].
Tensor checked_probabilities(const char* op, const Tensor& p, const Shape& shape) {
  check_probabilities_dtype(op, p);
  Tensor probs = ember::empty(shape, ScalarType::Float64);
  copy_into(probs, expand_to(p, shape, op));
  const double* pp = probs->data<double>();
  const int64_t n = probs->numel();
  for (int64_t i = 0; i < n; ++i) {
    if (!(pp[i] >= 0.0 && pp[i] <= 1.0)) throw_bad_probability(op, pp[i], i);
  }
  return probs;
}

}  // namespace

Tensor bernoulli(const Tensor& self, std::optional<double> p, Generator* generator) {
  if (p) return bernoulli_p(self, *p, generator, Tensor());  // a new tensor shaped like self
  check_sampler_dtype("bernoulli", self->dtype());
  Tensor probs = checked_probabilities("bernoulli", self, self->sizes());
  const double* pp = probs->data<double>();
  Tensor res = ember::empty(self->sizes(), self->dtype(), self->device());
  fill_bernoulli(res, generator, [pp](int64_t i) { return pp[i]; });
  return res;
}

Tensor bernoulli_tensor(const Tensor& self, const Tensor& p, Generator* generator, const Tensor& out) {
  Tensor target = out ? out : ember::empty(self->sizes(), self->dtype(), self->device());
  Tensor probs = checked_probabilities("bernoulli_", p, target->sizes());
  const double* pp = probs->data<double>();
  fill_bernoulli(target, generator, [pp](int64_t i) { return pp[i]; });
  return target;
}

Tensor bernoulli_p(const Tensor& self, double p, Generator* generator, const Tensor& out) {
  Tensor target = bernoulli_p_meta(self, p, out);
  fill_bernoulli(target, generator, [p](int64_t) { return p; });
  return target;
}

}  // namespace ember::cpu
