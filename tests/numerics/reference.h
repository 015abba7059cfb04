// Independent reference for the numerics tests.
//
// Nothing here reads the library's descriptors or calls its codecs: the format parameters are written out by hand,
// decode is the textbook formula evaluated in double with std::ldexp, and encode is a search for the nearest member
// of the decoded value set (ties to the even code) followed by the documented overflow / NaN rules. The tests compare
// the library against these, so a shared mistake would have to be made twice, in two different ways.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "pevp/numerics/formats.h"

namespace ref {

using pevp::num::Format;

enum class Kind { Ieee, FiniteNan, Finite, Int, Scale };

struct Spec {
  Format fmt;
  const char* name;
  int bits;  // code width
  int e;     // exponent bits
  int m;     // mantissa bits
  int bias;
  Kind kind;
  std::uint32_t canonical_nan;  // code expected for NaN input
  double max;                   // largest finite value, derived by hand
  double min_sub;               // smallest positive value, derived by hand
};

// Hand-derived. max: IEEE-like (2 - 2^-M) * 2^(2^E - 2 - bias); e4m3fn 1.75 * 2^8; e2m1 1.5 * 2^2.
inline const std::vector<Spec>& specs() {
  static const std::vector<Spec> s = {
      {Format::BF16, "bf16", 16, 8, 7, 127, Kind::Ieee, 0x7FC0, 0x1.fep127, 0x1p-133},
      {Format::FP16, "fp16", 16, 5, 10, 15, Kind::Ieee, 0x7E00, 65504.0, 0x1p-24},
      {Format::TF32, "tf32", 19, 8, 10, 127, Kind::Ieee, 0x3FE00, 0x1.ffcp127, 0x1p-136},
      {Format::FP8_E4M3, "fp8_e4m3", 8, 4, 3, 7, Kind::Ieee, 0x7C, 240.0, 0x1p-9},
      {Format::FP8_E4M3FN, "fp8_e4m3fn", 8, 4, 3, 7, Kind::FiniteNan, 0x7F, 448.0, 0x1p-9},
      {Format::FP8_E5M2, "fp8_e5m2", 8, 5, 2, 15, Kind::Ieee, 0x7E, 57344.0, 0x1p-16},
      {Format::FP8_E3M4, "fp8_e3m4", 8, 3, 4, 3, Kind::Ieee, 0x78, 15.5, 0x1p-6},
      {Format::FP8_E2M5, "fp8_e2m5", 8, 2, 5, 1, Kind::Ieee, 0x70, 3.9375, 0x1p-5},
      {Format::FP4_E2M1, "fp4_e2m1", 4, 2, 1, 1, Kind::Finite, 0x0, 6.0, 0.5},
      {Format::INT4, "int4", 4, 0, 3, 0, Kind::Int, 0x0, 7.0, 1.0},
      {Format::E8M0, "e8m0", 8, 8, 0, 127, Kind::Scale, 0xFF, 0x1p127, 0x1p-127},
  };
  return s;
}

inline const Spec& spec(Format f) {
  for (const Spec& s : specs()) {
    if (s.fmt == f) return s;
  }
  std::abort();
}

inline bool is_float_kind(const Spec& s) { return s.kind == Kind::Ieee || s.kind == Kind::FiniteNan || s.kind == Kind::Finite; }

inline std::uint32_t sign_bit(const Spec& s) { return 1u << (s.bits - 1); }

inline bool is_nan_code(const Spec& s, std::uint32_t c) {
  const std::uint32_t mag = c & (sign_bit(s) - 1u);
  switch (s.kind) {
    case Kind::Ieee: return (mag >> s.m) == (1u << s.e) - 1u && (mag & ((1u << s.m) - 1u)) != 0u;
    case Kind::FiniteNan: return mag == sign_bit(s) - 1u;
    case Kind::Scale: return c == 0xFFu;
    default: return false;
  }
}

inline bool is_inf_code(const Spec& s, std::uint32_t c) {
  return s.kind == Kind::Ieee && (c & (sign_bit(s) - 1u)) == ((1u << s.e) - 1u) << s.m;
}

// The textbook value of a code, in double.
inline double decode(const Spec& s, std::uint32_t c) {
  switch (s.kind) {
    case Kind::Int: return c >= 8u ? static_cast<double>(c) - 16.0 : static_cast<double>(c);
    case Kind::Scale: return c == 0xFFu ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, static_cast<int>(c) - 127);
    default: break;
  }
  const bool neg = (c >> (s.bits - 1)) & 1u;
  const int e = static_cast<int>((c >> s.m) & ((1u << s.e) - 1u));
  const int m = static_cast<int>(c & ((1u << s.m) - 1u));
  double v;
  if (is_nan_code(s, c)) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (is_inf_code(s, c)) {
    v = std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - s.bias - s.m);  // subnormal: 2^(1-bias) * m / 2^M
  } else {
    v = std::ldexp(static_cast<double>((1 << s.m) + m), e - s.bias - s.m);  // 2^(e-bias) * (1 + m / 2^M)
  }
  return neg ? -v : v;
}

struct Entry {
  double v;
  std::uint32_t code;
};

// Every finite value of a format once, ascending; zero appears once, as the +0 code.
inline std::vector<Entry> value_set(const Spec& s) {
  std::vector<Entry> out;
  for (std::uint32_t c = 0; c < (1u << s.bits); ++c) {
    const double v = decode(s, c);
    if (std::isnan(v) || std::isinf(v)) continue;
    if (v == 0.0 && std::signbit(v)) continue;
    out.push_back({v, c});
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.v < b.v; });
  return out;
}

inline bool has_signed_zero(const Spec& s) { return is_float_kind(s); }

inline std::uint32_t neg_zero_code(const Spec& s) { return sign_bit(s); }

// The code the rules in docs/numerics.md require for x (all formats but E8M0), from the sorted value set vs.
inline std::uint32_t encode(const Spec& s, const std::vector<Entry>& vs, float xf) {
  const double x = xf;
  if (std::isnan(x)) return s.canonical_nan;
  const double lo_max = vs.front().v;  // most negative finite
  const double hi_max = vs.back().v;   // most positive finite
  const auto code_of = [&](double v) {
    const auto it = std::lower_bound(vs.begin(), vs.end(), v, [](const Entry& e, double t) { return e.v < t; });
    return it->code;
  };
  const bool neg = std::signbit(x);
  const double a = std::fabs(x);
  if (s.kind == Kind::Ieee) {
    // IEEE 754: round as if the exponent were unbounded; a result of 2^(emax+1) or more is Inf.
    const int emax = (1 << s.e) - 2 - s.bias;
    const double threshold = hi_max + std::ldexp(1.0, emax - s.m - 1);
    const std::uint32_t inf = ((1u << s.e) - 1u) << s.m;
    if (a >= threshold) return (neg ? sign_bit(s) : 0u) | inf;
  }
  if (x >= hi_max) return code_of(hi_max);  // saturating formats and [max, max + half ulp) of IEEE ones
  if (x <= lo_max) return code_of(lo_max);
  const auto it = std::upper_bound(vs.begin(), vs.end(), x, [](double t, const Entry& e) { return t < e.v; });
  const Entry hi = *it;
  const Entry lo = *(it - 1);
  Entry pick;
  if (lo.v == x) {
    pick = lo;
  } else {
    const double mid = (lo.v + hi.v) / 2;  // exact: both have few significant bits and are adjacent
    if (x < mid) pick = lo;
    else if (x > mid) pick = hi;
    else pick = (lo.code & 1u) == 0u ? lo : hi;
  }
  if (pick.v == 0.0 && has_signed_zero(s) && neg) return neg_zero_code(s);
  return pick.code;
}

// E8M0 encode rule: floor(log2 x) + 127 clamped to [0, 254] for x > 0; zero -> 0; negative, NaN, +Inf -> 0xFF.
inline std::uint32_t encode_e8m0(float xf) {
  const double x = xf;
  if (std::isnan(x) || std::isinf(x)) return 0xFF;
  if (x == 0.0) return 0x00;
  if (x < 0.0) return 0xFF;
  int e = 0;
  std::frexp(x, &e);  // x = f * 2^e, f in [0.5, 1)  =>  floor(log2 x) = e - 1
  return static_cast<std::uint32_t>(std::clamp(e - 1 + 127, 0, 254));
}

inline std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace ref

namespace pevp::num {
// GoogleTest prints parameters with this (found by ADL) instead of as raw bytes.
inline void PrintTo(Format f, std::ostream* os) { *os << ref::spec(f).name; }
}  // namespace pevp::num
