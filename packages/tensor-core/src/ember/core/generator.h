// Counter-based random number generation: a Generator is (seed, offset); sample i of a
// call that reserved n numbers at offset k is hash(seed, k + i). Results are therefore the
// same for any number of threads and reproducible across runs and machines.
//
// The hash and the uniforms below are plain integer and floating arithmetic, usable in CUDA
// device code too (the CUDA samplers compute the same numbers as the CPU's) and in constant
// expressions.
#pragma once

#include <cstdint>
#include <mutex>

#include "ember/core/host_device.h"

namespace ember {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) : seed_(seed) {}
  void manual_seed(uint64_t seed) {
    std::lock_guard<std::mutex> g(mu_);
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t initial_seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_state(uint64_t seed, uint64_t offset) {
    std::lock_guard<std::mutex> g(mu_);
    seed_ = seed;
    offset_ = offset;
  }
  // Reserves n counters; returns the first.
  uint64_t reserve(uint64_t n) {
    std::lock_guard<std::mutex> g(mu_);
    uint64_t start = offset_;
    offset_ += n;
    return start;
  }

 private:
  std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

Generator& default_generator();
inline Generator& resolve_generator(Generator* g) { return g ? *g : default_generator(); }

// The seed and the first of n counters freshly reserved from a generator.
struct RandomCounters {
  uint64_t seed, start;
};
inline RandomCounters reserve_counters(Generator& g, uint64_t n) {
  const uint64_t start = g.reserve(n);
  return {g.initial_seed(), start};
}

// A 64-bit hash of (seed, counter) with good avalanche (splitmix64 finaliser, twice).
EMBER_HOST_DEVICE constexpr uint64_t random_bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ULL + counter * 0xbf58476d1ce4e5b9ULL + 0x94d049bb133111ebULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  z += seed ^ 0x2545f4914f6cdd1dULL;
  z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
  z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
  return z ^ (z >> 33);
}
// Uniform double in [0, 1) from the top 53 random bits; float from the top 24.
EMBER_HOST_DEVICE constexpr double uniform_double(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}
EMBER_HOST_DEVICE constexpr float uniform_float(uint64_t bits) {
  return static_cast<float>(bits >> 40) * 0x1.0p-24f;
}

}  // namespace ember

namespace ember {
// The default generator of CUDA device `device` (created at first use; cuda_hooks.cpp).
Generator& cuda_generator(int device);
}  // namespace ember
