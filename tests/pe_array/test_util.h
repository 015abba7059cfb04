// Shared helpers of the pe_array tests: seeded operand generators per dtype and bit-pattern comparison.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pevp/numerics/convert.h"
#include "pevp/numerics/formats.h"
#include "pevp/pe_array/compute.h"

namespace pe_test {

namespace isa = pevp::isa;
namespace num = pevp::num;
namespace pe = pevp::pe;

inline std::uint32_t bits(float f) { return num::float_bits(f); }
inline float from_bits(std::uint32_t u) { return num::bits_float(u); }

// Encodes one finite value of operand type t into SBUF bytes (RNE onto the format).
inline void encode_value(const pe::OperandType& t, float x, std::uint8_t* out) {
  std::uint32_t code = 0;
  std::size_t n = pe::operand_bytes(t.dtype);
  if (t.dtype == isa::Dtype::FP32) {
    code = bits(x);
  } else if (t.dtype == isa::Dtype::BFLOAT16) {
    code = num::to_bf16(x);
  } else if (t.dtype == isa::Dtype::FP16) {
    code = num::to_fp16(x);
  } else {
    code = num::encode(*isa::element_format(t.gen, t.dtype), x);
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(code >> (8 * i));
}

// `count` elements of type t: mostly finite values spread over a few binades around 1 (fp32: random mantissas, so
// products round), and with probability `raw_rate` a raw random code, which may be NaN, Inf or a subnormal.
inline std::vector<std::uint8_t> random_operand(const pe::OperandType& t, std::size_t count, std::mt19937& rng,
                                                double raw_rate) {
  const std::size_t eb = pe::operand_bytes(t.dtype);
  std::vector<std::uint8_t> bytes(count * eb);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp(-4, 3);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint8_t* p = bytes.data() + i * eb;
    if (coin(rng) < raw_rate) {
      for (std::size_t b = 0; b < eb; ++b) p[b] = static_cast<std::uint8_t>(byte(rng));
    } else {
      float x = std::ldexp(mant(rng), exp(rng));
      if (coin(rng) < 0.5) x = -x;
      if (coin(rng) < 0.02) x = 0.0f;
      encode_value(t, x, p);
    }
  }
  return bytes;
}

inline std::vector<float> decode(const pe::OperandType& t, const std::vector<std::uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / pe::operand_bytes(t.dtype));
  if (!pe::decode_operands(t, bytes.data(), out.size(), out.data())) out.clear();
  return out;
}

// Index of the first element whose bit pattern differs, or -1.
inline long first_bit_mismatch(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (bits(a[i]) != bits(b[i])) return static_cast<long>(i);
  return -1;
}

}  // namespace pe_test
