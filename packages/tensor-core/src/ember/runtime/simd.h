// Runtime CPU dispatch for vectorised inner loops.
//
// The library is compiled for baseline x86-64 (SSE2) so that one wheel runs everywhere. Hot
// inner loops are compiled twice more, for AVX2+FMA and for AVX-512, and one of the three is
// picked at run time: `simd_dispatch([&] { loop(...); })` runs the lambda body compiled for
// the best level this CPU supports (capped by EMBER_CPU_CAPABILITY=default|avx2|avx512).
//
// How: each level's trampoline carries GCC's `target` attribute plus `flatten`, which inlines
// the whole body (the loop and the element functor it calls) into the trampoline, where the
// vectoriser sees the wider ISA. Functions the body calls but cannot inline (std::function,
// recursion, other translation units) run at the baseline level, so put the dispatch around
// the innermost loop, not around parallel_for. Template code outside the trampolines keeps
// the baseline ISA, so no AVX instruction can leak into code that runs on an older CPU.
// FMA contraction makes the AVX levels differ from baseline in the last bit of some results.
#pragma once

namespace ember {

enum class CpuLevel : int { Default = 0, AVX2 = 1, AVX512 = 2 };

// The level used by simd_dispatch: detected once, capped by EMBER_CPU_CAPABILITY.
CpuLevel cpu_level();
const char* cpu_level_name(CpuLevel level);
// The EMBER_CPU_CAPABILITY value when it is none of default/avx2/avx512 (ignored), else null.
const char* unknown_cpu_capability();
// Whether the CPU's vendor string is GenuineIntel (x86 cpuid leaf 0).
bool cpu_vendor_is_intel();
// Whether the CPU has AMX tiles with bfloat16 products (cpuid leaf 7: AMX-TILE, AMX-BF16) and
// the OS keeps their state (XCR0 bits 17 and 18): Sapphire Rapids and later Xeons.
bool cpu_has_amx_bf16();

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(EMBER_NO_SIMD_DISPATCH)
#define EMBER_SIMD_DISPATCH 1
#define EMBER_TARGET_AVX2 __attribute__((target("avx2,fma,f16c,bmi,bmi2,lzcnt,popcnt"), flatten))
#define EMBER_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx2,fma,f16c,bmi,bmi2,lzcnt,popcnt"), flatten))

namespace simd_detail {
extern CpuLevel g_level;  // set at load time
template <typename Body> EMBER_TARGET_AVX512 void run_avx512(const Body& body) { body(); }
template <typename Body> EMBER_TARGET_AVX2 void run_avx2(const Body& body) { body(); }
}  // namespace simd_detail

// Whether simd_dispatch runs AVX-512 code: for kernels written with AVX-512 intrinsics
// (functions carrying EMBER_TARGET_AVX512), which only run when this is true.
inline bool simd_avx512() { return simd_detail::g_level == CpuLevel::AVX512; }

template <typename Body> inline void simd_dispatch(const Body& body) {
  switch (simd_detail::g_level) {
    case CpuLevel::AVX512: simd_detail::run_avx512(body); return;
    case CpuLevel::AVX2: simd_detail::run_avx2(body); return;
    default: body(); return;
  }
}
#else
inline bool simd_avx512() { return false; }
template <typename Body> inline void simd_dispatch(const Body& body) { body(); }
#endif

}  // namespace ember
