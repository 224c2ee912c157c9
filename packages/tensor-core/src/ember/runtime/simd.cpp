#include "ember/runtime/simd.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ember {
namespace {

const char* g_bad_capability = nullptr;  // an EMBER_CPU_CAPABILITY value that was not understood

CpuLevel detect() {
#ifdef EMBER_SIMD_DISPATCH
  __builtin_cpu_init();
  CpuLevel best = CpuLevel::Default;
  // the AVX2 level's code also uses F16C (half_blocks.cpp), BMI and LZCNT, which every CPU
  // with AVX2 and FMA has; F16C is checked, as the conversions call it by intrinsics
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c) best = CpuLevel::AVX2;
  if (best == CpuLevel::AVX2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd")) {
    best = CpuLevel::AVX512;
  }
  // a user may lower the level (to compare paths, or to dodge AVX-512 clock throttling)
  if (const char* cap = std::getenv("EMBER_CPU_CAPABILITY")) {
    CpuLevel want = best;
    if (!std::strcmp(cap, "default")) want = CpuLevel::Default;
    else if (!std::strcmp(cap, "avx2")) want = CpuLevel::AVX2;
    else if (!std::strcmp(cap, "avx512")) want = CpuLevel::AVX512;
    else g_bad_capability = cap;
    if (static_cast<int>(want) < static_cast<int>(best)) best = want;
  }
  return best;
#else
  return CpuLevel::Default;
#endif
}

}  // namespace

#ifdef EMBER_SIMD_DISPATCH
CpuLevel simd_detail::g_level = detect();
#endif

CpuLevel cpu_level() {
#ifdef EMBER_SIMD_DISPATCH
  return simd_detail::g_level;
#else
  return CpuLevel::Default;
#endif
}

const char* unknown_cpu_capability() { return g_bad_capability; }

bool cpu_vendor_is_intel() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  char vendor[13];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  vendor[12] = 0;
  return !std::strcmp(vendor, "GenuineIntel");
#else
  return false;
#endif
}

bool cpu_has_amx_bf16() {
#if defined(__x86_64__)
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE)) return false;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  constexpr unsigned int kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;
  if ((edx & (kAmxBf16 | kAmxTile)) != (kAmxBf16 | kAmxTile)) return false;
  unsigned int xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  constexpr unsigned int kTileState = (1u << 17) | (1u << 18);  // XTILECFG, XTILEDATA
  return (xcr0_lo & kTileState) == kTileState;
#else
  return false;
#endif
}

const char* cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::AVX512: return "avx512";
    case CpuLevel::AVX2: return "avx2";
    default: return "default";
  }
}

}  // namespace ember
