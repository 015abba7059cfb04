// The PE matrix engine's data formats and the generic conversion API.
//
// The tensor engine reads bf16, fp16, tf32, fp8 (e4m3, e4m3fn, e5m2, e3m4, e2m5), fp4 e2m1 and int4 operands, MX
// blocks scaled by E8M0 exponents, and writes fp32 or bf16 PSUM (docs/numerics.md lists the public sources; FACTS.md
// "Semantics"). This header names those formats (Format), describes them (FormatInfo) and converts any of them to and
// from fp32: encode() rounds to nearest-even (E8M0: floors the exponent), decode() is exact and total, quantize() is
// decode(encode()). The per-format inline hot paths live in convert.h and give identical results. Format is this
// library's own enumeration, not the ISA's dtype encoding.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "pevp/numerics/convert.h"

namespace pevp::num {

enum class Format : std::uint8_t {
  BF16,        // 1-8-7, bias 127, IEEE-like
  FP16,        // IEEE binary16: 1-5-10, bias 15
  TF32,        // 1-8-10, bias 127, IEEE-like; code = the top 19 bits of its fp32 container
  FP8_E4M3,    // IEEE-like: bias 7, Inf and NaN at exponent 1111, max 240
  FP8_E4M3FN,  // OCP: bias 7, no Inf, NaN = S.1111.111 only, max 448
  FP8_E5M2,    // IEEE-like: bias 15, max 57344
  FP8_E3M4,    // IEEE-like: bias 3, max 15.5 (model decision)
  FP8_E2M5,    // IEEE-like: bias 1, max 3.9375 (model decision)
  FP4_E2M1,    // OCP MX: bias 1, no Inf/NaN, max 6
  INT4,        // signed two's complement -8..7
  E8M0,        // OCP MX scale: 2^(code - 127), 0xFF = NaN, no sign, no zero
};

inline constexpr std::array<Format, 11> kAllFormats = {
    Format::BF16,     Format::FP16,     Format::TF32,     Format::FP8_E4M3, Format::FP8_E4M3FN, Format::FP8_E5M2,
    Format::FP8_E3M4, Format::FP8_E2M5, Format::FP4_E2M1, Format::INT4,     Format::E8M0};

struct FormatInfo {
  std::string_view name;  // lower-case, e.g. "fp8_e4m3fn"
  int code_bits;          // width of the codes encode() returns and decode() reads (tf32: 19)
  int storage_bits;       // bits one value occupies in memory (tf32: 32, an fp32 container; fp4/int4: 4, packed)
  int exponent_bits;      // 0 for INT4
  int mantissa_bits;      // stored fraction bits (INT4: 3 magnitude bits; E8M0: 0)
  int bias;               // exponent bias (0 for INT4)
  bool is_signed;         // false for E8M0 only
  bool has_inf;
  bool has_nan;
  bool has_subnormals;    // false for INT4 and E8M0
  float max_finite;       // largest finite value
  float min_normal;       // smallest positive normal (INT4: 1; E8M0: 2^-127)
  float min_subnormal;    // smallest positive value (a subnormal for the float formats; INT4: 1; E8M0: 2^-127)
  std::uint32_t canonical_nan;  // code encode() returns for NaN input (formats without NaN: see docs)
};

const FormatInfo& format_info(Format f);
std::optional<Format> format_from_name(std::string_view name);  // inverse of FormatInfo::name

// Mask of the valid code bits of f: (1 << code_bits) - 1.
std::uint32_t code_mask(Format f);

// fp32 -> code of f, right-aligned. RNE for every format except E8M0 (floor of the exponent). Never fails.
std::uint32_t encode(Format f, float x);

// code of f -> fp32, exact. Total: every code of the format's width decodes; bits above code_bits are ignored
// (masked), e.g. decode(FP8_E4M3, 0x138) == decode(FP8_E4M3, 0x38).
float decode(Format f, std::uint32_t code);

// decode(f, encode(f, x)): x rounded onto the value set of f.
float quantize(Format f, float x);

}  // namespace pevp::num
