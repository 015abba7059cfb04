// Generic sign/exponent/mantissa ("minifloat") codecs on fp32 bit patterns.
//
// Every narrow floating-point format of the PE matrix engine (bf16, fp16, tf32, the fp8 family, fp4 e2m1) is a
// binary format with a sign bit, E exponent bits, M mantissa bits, a bias and one of three conventions for the top
// of the code space (see Kind). This header implements fp32 -> narrow (round-to-nearest-even, subnormals kept) and
// narrow -> fp32 (exact) once, as constexpr integer code, so that the format-specific entry points in convert.h and
// the 256-entry decode tables are instantiations of the same logic. Behaviour is documented in docs/numerics.md.
// Internal header: include pevp/numerics/convert.h or formats.h instead.
#pragma once

#include <array>
#include <cstdint>

namespace pevp::num::detail {

// How a format uses the top of its code space.
enum class Kind : std::uint8_t {
  Ieee,       // exponent all-ones is reserved: mantissa 0 = Inf, otherwise NaN. Overflow rounds to Inf (IEEE 754).
  FiniteNan,  // OCP "fn": no Inf, only S.1..1.1..1 is NaN, the rest of the top binade is finite. Saturating.
  Finite,     // no Inf, no NaN (OCP MX fp4 e2m1): every code is finite. Saturating; NaN encodes as +0.
};

template <int E, int M, int Bias, Kind K>
struct Minifloat {
  static_assert(E >= 1 && E <= 8, "exponent field of 1..8 bits");
  static_assert(M >= 1 && M <= 10, "mantissa field of 1..10 bits (fp32 -> narrow always drops bits)");
  static_assert(Bias >= 1 && Bias <= 127, "bias must keep every value inside the fp32 range");

  static constexpr int kExpBits = E;
  static constexpr int kManBits = M;
  static constexpr int kBias = Bias;
  static constexpr Kind kKind = K;
  static constexpr int kCodeBits = 1 + E + M;
  static constexpr std::uint32_t kCodeMask = (1u << kCodeBits) - 1u;
  static constexpr std::uint32_t kSignBit = 1u << (E + M);
  static constexpr std::uint32_t kMagMask = kSignBit - 1u;
  static constexpr std::uint32_t kManMask = (1u << M) - 1u;
  static constexpr std::uint32_t kExpAllOnes = (1u << E) - 1u;
  // Largest biased exponent that still holds finite values.
  static constexpr int kMaxBiasedExp = K == Kind::Ieee ? static_cast<int>(kExpAllOnes) - 1 : static_cast<int>(kExpAllOnes);
  static constexpr std::uint32_t kInfMag = kExpAllOnes << M;  // meaningful for Kind::Ieee only
  static constexpr std::uint32_t kMaxFiniteMag = K == Kind::Ieee        ? kInfMag - 1u
                                                 : K == Kind::FiniteNan ? kMagMask - 1u
                                                                        : kMagMask;
  // Magnitude written for a finite value beyond the range, and for +-Inf.
  static constexpr std::uint32_t kOverflowMag = K == Kind::Ieee ? kInfMag : kMaxFiniteMag;
  // Canonical NaN: positive, quiet (top mantissa bit set, rest clear) for IEEE-like formats; the single positive NaN
  // code for "fn" formats; +0 for formats without NaN.
  static constexpr std::uint32_t kCanonicalNan = K == Kind::Ieee        ? (kInfMag | (1u << (M - 1)))
                                                 : K == Kind::FiniteNan ? kMagMask
                                                                        : 0u;

  // fp32 bit pattern -> code, round to nearest, ties to even.
  static constexpr std::uint32_t encode(std::uint32_t f) {
    const std::uint32_t sign = (f >> 31) << (E + M);
    const std::uint32_t a = f & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return kCanonicalNan;
    if (a == 0x7F800000u) return sign | kOverflowMag;
    const int e32 = static_cast<int>(a >> 23);
    const std::uint32_t m32 = a & 0x7FFFFFu;
    const int be = e32 - 127 + Bias;  // target biased exponent if the value is a target normal
    std::uint32_t mag = 0;
    if (e32 != 0 && be >= 1) {
      if (be > kMaxBiasedExp) return sign | kOverflowMag;
      constexpr int drop = 23 - M;
      mag = (static_cast<std::uint32_t>(be) << M) | (m32 >> drop);
      const std::uint32_t rem = m32 & ((1u << drop) - 1u);
      constexpr std::uint32_t half = 1u << (drop - 1);
      // A carry out of the mantissa moves to the next binade (or to the Inf code), which is the correct result.
      if (rem > half || (rem == half && (mag & 1u) != 0u)) ++mag;
    } else {
      // Target subnormal: value = sig * 2^exp, quantum = 2^(1 - Bias - M); shift > 0 because Bias <= 127.
      const std::uint32_t sig = e32 != 0 ? (m32 | 0x800000u) : m32;
      const int exp = e32 != 0 ? e32 - 150 : -149;
      const int shift = (1 - Bias - M) - exp;
      // sig < 2^24, so for shift >= 25 the value is below half the smallest subnormal: it rounds to (signed) zero.
      if (shift < 25) {
        mag = sig >> shift;
        const std::uint32_t rem = sig & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (mag & 1u) != 0u)) ++mag;  // may carry into the smallest normal: correct
      }
    }
    if (mag > kMaxFiniteMag) mag = kOverflowMag;
    return sign | mag;
  }

  // code -> fp32 bit pattern (exact). Bits above kCodeBits are ignored. NaN codes keep their sign and their
  // payload, left-aligned in the fp32 mantissa (a widening, as bf16 -> fp32 is).
  static constexpr std::uint32_t decode(std::uint32_t code) {
    code &= kCodeMask;
    const std::uint32_t sign = (code & kSignBit) != 0u ? 0x80000000u : 0u;
    const std::uint32_t mag = code & kMagMask;
    const std::uint32_t e = mag >> M;
    const std::uint32_t m = mag & kManMask;
    if ((K == Kind::Ieee && e == kExpAllOnes) || (K == Kind::FiniteNan && mag == kMagMask)) {
      return sign | 0x7F800000u | (m << (23 - M));
    }
    if (e == 0) {
      if (m == 0) return sign;
      int p = M - 1;  // position of the leading one of the subnormal mantissa
      while (((m >> p) & 1u) == 0u) --p;
      const int e32 = p + 1 - Bias - M + 127;
      if (e32 >= 1) {
        return sign | (static_cast<std::uint32_t>(e32) << 23) | ((m << (23 - p)) & 0x7FFFFFu);
      }
      // Only formats whose smallest subnormal is below fp32's smallest normal (bf16, tf32) get here: the value is an
      // fp32 subnormal with the same mantissa bits, shifted.
      if constexpr (150 - Bias - M < 32) return sign | (m << (150 - Bias - M));
      return sign;  // unreachable for the other formats
    }
    return sign | ((e + 127u - static_cast<std::uint32_t>(Bias)) << 23) | (m << (23 - M));
  }
};

using Bf16 = Minifloat<8, 7, 127, Kind::Ieee>;
using Fp16 = Minifloat<5, 10, 15, Kind::Ieee>;
using Tf32 = Minifloat<8, 10, 127, Kind::Ieee>;
using Fp8E4M3 = Minifloat<4, 3, 7, Kind::Ieee>;
using Fp8E4M3fn = Minifloat<4, 3, 7, Kind::FiniteNan>;
using Fp8E5M2 = Minifloat<5, 2, 15, Kind::Ieee>;
using Fp8E3M4 = Minifloat<3, 4, 3, Kind::Ieee>;  // model decision, see docs/numerics.md
using Fp8E2M5 = Minifloat<2, 5, 1, Kind::Ieee>;  // model decision, see docs/numerics.md
using Fp4E2M1 = Minifloat<2, 1, 1, Kind::Finite>;

// 256-entry fp32-bit-pattern decode table of an 8-bit format, built at compile time.
template <class F>
constexpr std::array<std::uint32_t, 256> make_decode_table() {
  static_assert(F::kCodeBits == 8, "8-bit formats only");
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t c = 0; c < 256u; ++c) t[c] = F::decode(c);
  return t;
}

}  // namespace pevp::num::detail
