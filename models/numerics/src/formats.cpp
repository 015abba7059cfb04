// The Format descriptors and the generic dispatch onto the per-format codecs of convert.h.
#include "pevp/numerics/formats.h"

#include <stdexcept>
#include <string>

namespace pevp::num {
namespace {

using detail::Kind;

template <class F>
FormatInfo minifloat_info(std::string_view name, int storage_bits) {
  return FormatInfo{name,
                    F::kCodeBits,
                    storage_bits,
                    F::kExpBits,
                    F::kManBits,
                    F::kBias,
                    true,
                    F::kKind == Kind::Ieee,
                    F::kKind != Kind::Finite,
                    true,
                    bits_float(F::decode(F::kMaxFiniteMag)),
                    bits_float(F::decode(1u << F::kManBits)),
                    bits_float(F::decode(1u)),
                    F::kCanonicalNan};
}

// Indexed by Format. A function-local static, so it is initialised before first use even from other
// translation units' static initialisers.
const std::array<FormatInfo, 11>& infos() {
  static const std::array<FormatInfo, 11> kInfos = {
      minifloat_info<detail::Bf16>("bf16", 16),
      minifloat_info<detail::Fp16>("fp16", 16),
      minifloat_info<detail::Tf32>("tf32", 32),
      minifloat_info<detail::Fp8E4M3>("fp8_e4m3", 8),
      minifloat_info<detail::Fp8E4M3fn>("fp8_e4m3fn", 8),
      minifloat_info<detail::Fp8E5M2>("fp8_e5m2", 8),
      minifloat_info<detail::Fp8E3M4>("fp8_e3m4", 8),
      minifloat_info<detail::Fp8E2M5>("fp8_e2m5", 8),
      minifloat_info<detail::Fp4E2M1>("fp4_e2m1", 4),
      FormatInfo{"int4", 4, 4, 0, 3, 0, true, false, false, false, 7.0f, 1.0f, 1.0f, 0u},
      FormatInfo{"e8m0", 8, 8, 8, 0, 127, false, false, true, false, 0x1p127f, 0x1p-127f, 0x1p-127f, kE8M0Nan},
  };
  return kInfos;
}
static_assert(static_cast<int>(Format::E8M0) == 10, "infos() is indexed by Format");

[[noreturn]] void bad_format(Format f) {
  throw std::invalid_argument("pevp::num: invalid Format value " + std::to_string(static_cast<int>(f)));
}

}  // namespace

const FormatInfo& format_info(Format f) {
  const auto i = static_cast<std::size_t>(f);
  if (i >= infos().size()) bad_format(f);
  return infos()[i];
}

std::optional<Format> format_from_name(std::string_view name) {
  for (Format f : kAllFormats) {
    if (infos()[static_cast<std::size_t>(f)].name == name) return f;
  }
  return std::nullopt;
}

std::uint32_t code_mask(Format f) { return (1u << format_info(f).code_bits) - 1u; }

std::uint32_t encode(Format f, float x) {
  switch (f) {
    case Format::BF16: return to_bf16(x);
    case Format::FP16: return to_fp16(x);
    case Format::TF32: return float_bits(to_tf32(x)) >> 13;
    case Format::FP8_E4M3: return to_fp8_e4m3(x);
    case Format::FP8_E4M3FN: return to_fp8_e4m3fn(x);
    case Format::FP8_E5M2: return to_fp8_e5m2(x);
    case Format::FP8_E3M4: return to_fp8_e3m4(x);
    case Format::FP8_E2M5: return to_fp8_e2m5(x);
    case Format::FP4_E2M1: return to_fp4_e2m1(x);
    case Format::INT4: return to_int4(x);
    case Format::E8M0: return to_e8m0(x);
  }
  bad_format(f);
}

float decode(Format f, std::uint32_t code) {
  switch (f) {
    case Format::BF16: return from_bf16(static_cast<std::uint16_t>(code));
    case Format::FP16: return from_fp16(static_cast<std::uint16_t>(code));
    case Format::TF32: return bits_float((code & 0x7FFFFu) << 13);
    case Format::FP8_E4M3: return from_fp8_e4m3(static_cast<std::uint8_t>(code));
    case Format::FP8_E4M3FN: return from_fp8_e4m3fn(static_cast<std::uint8_t>(code));
    case Format::FP8_E5M2: return from_fp8_e5m2(static_cast<std::uint8_t>(code));
    case Format::FP8_E3M4: return from_fp8_e3m4(static_cast<std::uint8_t>(code));
    case Format::FP8_E2M5: return from_fp8_e2m5(static_cast<std::uint8_t>(code));
    case Format::FP4_E2M1: return from_fp4_e2m1(static_cast<std::uint8_t>(code));
    case Format::INT4: return from_int4(static_cast<std::uint8_t>(code));
    case Format::E8M0: return from_e8m0(static_cast<std::uint8_t>(code));
  }
  bad_format(f);
}

float quantize(Format f, float x) { return decode(f, encode(f, x)); }

}  // namespace pevp::num
