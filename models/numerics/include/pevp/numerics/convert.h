// Inline hot-path conversions between fp32 and the PE matrix engine's narrow formats.
//
// The matmul kernels decode millions of operands and the PSUM path rounds every bf16 result, so the formats they use
// most get branch-light inline functions here: bf16 and fp16 both ways, tf32 rounding, compile-time 256-entry decode
// tables for the 8-bit formats, and stochastic rounding fp32 -> bf16 with a caller-supplied random value (the
// hardware's SR generator is not public). Everything rounds to nearest, ties to even, keeps subnormals and follows
// the NaN/Inf/overflow rules of docs/numerics.md; results are identical to pevp::num::encode/decode in formats.h.
// Type punning goes through std::memcpy, so there is no undefined behaviour.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "pevp/numerics/detail/minifloat.h"

namespace pevp::num {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// ---- bf16 (1-8-7) ------------------------------------------------------------------------------------------------

inline constexpr std::uint16_t kBf16CanonicalNan = 0x7FC0;

// fp32 -> bf16, RNE. NaN -> 0x7FC0; values >= max + half ulp (and +-Inf) -> +-Inf; subnormals and -0 kept.
inline std::uint16_t to_bf16(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return kBf16CanonicalNan;
  // Adding 0x7FFF + lsb rounds to nearest-even; a carry ripples into the exponent (up to Inf) exactly as it should.
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// bf16 -> fp32, exact (NaN payload and sign kept).
inline float from_bf16(std::uint16_t h) { return bits_float(static_cast<std::uint32_t>(h) << 16); }

// fp32 -> bf16 with stochastic rounding: the low 16 bits of `random` are added to the 16 discarded bits of the fp32
// pattern, then the result is truncated. So x rounds away from zero with probability (discarded bits) / 2^16,
// exact bf16 values never change, random = 0 truncates. NaN -> 0x7FC0, +-Inf stay +-Inf, -0 stays -0; a value above
// the bf16 max finite may carry into +-Inf (the step above max is treated as 2^128 = Inf, as RNE does).
inline std::uint16_t to_bf16_sr(float x, std::uint32_t random) {
  const std::uint32_t u = float_bits(x);
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return kBf16CanonicalNan;
  if (a == 0x7F800000u) return static_cast<std::uint16_t>(u >> 16);
  return static_cast<std::uint16_t>((u + (random & 0xFFFFu)) >> 16);
}

// ---- fp16 (IEEE binary16) ----------------------------------------------------------------------------------------

inline constexpr std::uint16_t kFp16CanonicalNan = 0x7E00;

// fp32 -> fp16, RNE, IEEE 754 overflow (>= 65520 -> Inf), subnormals kept, NaN -> 0x7E00.
inline std::uint16_t to_fp16(float x) { return static_cast<std::uint16_t>(detail::Fp16::encode(float_bits(x))); }

// fp16 -> fp32, exact (NaN payload and sign kept).
inline float from_fp16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t mag = static_cast<std::uint32_t>(h & 0x7FFFu) << 13;
  if (mag >= 0x0F800000u) return bits_float(sign | 0x7F800000u | mag);  // Inf / NaN
  // The magnitude bits read as an fp32 equal h * 2^-112 (normals and subnormals alike); scaling by 2^112 is exact.
  return bits_float(sign | float_bits(bits_float(mag) * 0x1p112f));
}

// ---- tf32 (1-8-10 in an fp32 container) --------------------------------------------------------------------------

inline constexpr std::uint32_t kTf32CanonicalNan = 0x7FC00000u;  // as the fp32 container pattern

// fp32 -> tf32, RNE, returned in its fp32 container (low 13 mantissa bits zero). NaN -> 0x7FC00000 (as a float);
// values >= tf32 max + half ulp -> +-Inf; subnormals and -0 kept.
inline float to_tf32(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return bits_float(kTf32CanonicalNan);
  return bits_float((u + 0xFFFu + ((u >> 13) & 1u)) & 0xFFFFE000u);
}

// ---- 8-bit formats -----------------------------------------------------------------------------------------------

// fp32 bit patterns of every code, index = code. Built at compile time.
inline constexpr std::array<std::uint32_t, 256> kFp8E4M3Table = detail::make_decode_table<detail::Fp8E4M3>();
inline constexpr std::array<std::uint32_t, 256> kFp8E4M3fnTable = detail::make_decode_table<detail::Fp8E4M3fn>();
inline constexpr std::array<std::uint32_t, 256> kFp8E5M2Table = detail::make_decode_table<detail::Fp8E5M2>();
inline constexpr std::array<std::uint32_t, 256> kFp8E3M4Table = detail::make_decode_table<detail::Fp8E3M4>();
inline constexpr std::array<std::uint32_t, 256> kFp8E2M5Table = detail::make_decode_table<detail::Fp8E2M5>();

inline float from_fp8_e4m3(std::uint8_t c) { return bits_float(kFp8E4M3Table[c]); }
inline float from_fp8_e4m3fn(std::uint8_t c) { return bits_float(kFp8E4M3fnTable[c]); }
inline float from_fp8_e5m2(std::uint8_t c) { return bits_float(kFp8E5M2Table[c]); }
inline float from_fp8_e3m4(std::uint8_t c) { return bits_float(kFp8E3M4Table[c]); }
inline float from_fp8_e2m5(std::uint8_t c) { return bits_float(kFp8E2M5Table[c]); }

inline std::uint8_t to_fp8_e4m3(float x) { return static_cast<std::uint8_t>(detail::Fp8E4M3::encode(float_bits(x))); }
inline std::uint8_t to_fp8_e4m3fn(float x) {
  return static_cast<std::uint8_t>(detail::Fp8E4M3fn::encode(float_bits(x)));
}
inline std::uint8_t to_fp8_e5m2(float x) { return static_cast<std::uint8_t>(detail::Fp8E5M2::encode(float_bits(x))); }
inline std::uint8_t to_fp8_e3m4(float x) { return static_cast<std::uint8_t>(detail::Fp8E3M4::encode(float_bits(x))); }
inline std::uint8_t to_fp8_e2m5(float x) { return static_cast<std::uint8_t>(detail::Fp8E2M5::encode(float_bits(x))); }

// ---- 4-bit formats (code in the low nibble; higher bits of the argument ignored) ---------------------------------

// fp4 e2m1 (OCP MX): values {0, 0.5, 1, 1.5, 2, 3, 4, 6} and negatives. Saturating: |x| > 6 and +-Inf -> +-6;
// NaN -> +0 (the format has no NaN; an MX block signals NaN through its E8M0 scale).
inline std::uint8_t to_fp4_e2m1(float x) { return static_cast<std::uint8_t>(detail::Fp4E2M1::encode(float_bits(x))); }
inline float from_fp4_e2m1(std::uint8_t c) { return bits_float(detail::Fp4E2M1::decode(c)); }

// int4: signed two's complement -8..7. RNE to an integer, then saturate; NaN -> 0, -0 -> 0, +-Inf -> 7 / -8.
inline std::uint8_t to_int4(float x) {
  if (std::isnan(x)) return 0;
  if (x >= 7.0f) return 0x7;
  if (x <= -8.0f) return 0x8;
  // |x| < 8: floor and the fraction are exact, so this RNE does not depend on the FP environment's rounding mode.
  const float fl = std::floor(x);
  const float frac = x - fl;
  int n = static_cast<int>(fl);
  if (frac > 0.5f || (frac == 0.5f && (static_cast<unsigned>(n) & 1u) != 0u)) ++n;
  return static_cast<std::uint8_t>(static_cast<unsigned>(n) & 0xFu);
}
inline float from_int4(std::uint8_t c) { return static_cast<float>(static_cast<int>((c & 0xFu) ^ 0x8u) - 8); }

// ---- E8M0 scales (OCP MX) ----------------------------------------------------------------------------------------

inline constexpr std::uint8_t kE8M0Nan = 0xFF;

// E8M0 -> fp32: 2^(code - 127); 0xFF -> NaN (0x7FC00000). Code 0 is 2^-127, an fp32 subnormal.
inline float from_e8m0(std::uint8_t c) {
  if (c == kE8M0Nan) return bits_float(0x7FC00000u);
  return bits_float(c == 0 ? 0x00400000u : static_cast<std::uint32_t>(c) << 23);
}

// fp32 -> E8M0 by flooring the exponent: code = floor(log2 x) + 127, clamped below to 0 (2^-127), so powers of two
// are exact and other values round down (the OCP MX scale derivation). +-0 -> 0x00 (2^-127, the smallest scale);
// negative values, NaN and +Inf -> 0xFF (NaN).
inline std::uint8_t to_e8m0(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7FFFFFFFu) == 0u) return 0x00;
  if (u >= 0x7F800000u) return kE8M0Nan;  // +Inf, +NaN, and every pattern with the sign bit set
  return static_cast<std::uint8_t>(u >> 23);
}

}  // namespace pevp::num
