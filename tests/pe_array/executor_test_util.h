// Helpers of the executor suites: SBUF / PSUM buffers of a preset, an independent decode and defined-order sum, the
// firmware's lowering of a built instruction, and the argument builders.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "pevp/firmware/firmware.h"
#include "pevp/isa/builders.h"
#include "pevp/isa/decode.h"
#include "pevp/pe_array/executor.h"
#include "test_util.h"

namespace pe_test {

using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;
namespace pf = isa::psum_flags;

constexpr std::uint32_t kPsum = isa::ArrayGeometry::kPsumBase;
constexpr std::uint32_t kPsumPart = 16 * 1024;
constexpr std::uint32_t kBank = 2048;

struct Mem {
  Generation g;
  std::vector<std::uint8_t> sbuf, psum;
  explicit Mem(Generation gen) : g(gen), sbuf(isa::preset_geometry(gen).sbuf_bytes()), psum(isa::preset_geometry(gen).psum_bytes()) {
    std::mt19937 rng(7);
    for (auto& b : psum) b = static_cast<std::uint8_t>(rng());  // garbage: zeroing and overwrites must show
  }
  std::uint32_t part() const { return isa::preset_geometry(g).sbuf_partition_bytes; }
  // Writes rows x cols elements (row-major bytes) to SBUF partitions p0.. at byte offset `off`.
  void put(std::size_t p0, std::size_t off, const std::vector<std::uint8_t>& bytes, std::size_t rows) {
    const std::size_t row_bytes = bytes.size() / rows;
    for (std::size_t r = 0; r < rows; ++r)
      std::memcpy(&sbuf[(p0 + r) * part() + off], &bytes[r * row_bytes], row_bytes);
  }
  std::uint32_t addr(std::size_t p0, std::size_t off) const { return static_cast<std::uint32_t>(p0 * part() + off); }
};

// Independent decode of element i.
inline float ref_decode(const pe::OperandType& t, const std::vector<std::uint8_t>& b, std::size_t i) {
  if (t.dtype == Dtype::FP32) {
    std::uint32_t u;
    std::memcpy(&u, &b[i * 4], 4);
    return from_bits(u);
  }
  if (t.dtype == Dtype::BFLOAT16 || t.dtype == Dtype::FP16) {
    const std::uint32_t code = b[i * 2] | (b[i * 2 + 1] << 8);
    return t.dtype == Dtype::BFLOAT16 ? num::from_bf16(static_cast<std::uint16_t>(code))
                                      : num::decode(num::Format::FP16, code);
  }
  return num::decode(*isa::element_format(t.gen, t.dtype), b[i]);
}

// S[m][n] = sum_k st[k][m] * mv[k][n] from +0 in k order; NaN canonical.
inline std::vector<float> ref_sum(const pe::OperandType& t, const std::vector<std::uint8_t>& st,
                           const std::vector<std::uint8_t>& mv, std::size_t K, std::size_t M, std::size_t N) {
  std::vector<float> out(M * N);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      float s = 0.0f;
      for (std::size_t k = 0; k < K; ++k) s = s + ref_decode(t, st, k * M + m) * ref_decode(t, mv, k * N + n);
      out[m * N + n] = s;
    }
  return out;
}
inline float canon(float x) { return x != x ? from_bits(pe::kCanonicalNan) : x; }

inline std::uint32_t psum_u32(const Mem& mem, std::size_t p, std::size_t off) {
  std::uint32_t u;
  std::memcpy(&u, &mem.psum[p * kPsumPart + off], 4);
  return u;
}

// The micro-op the firmware lowers a valid instruction to: the executor's input.
inline pe::MicroOp dec(Generation g, const isa::RawInstruction& raw) {
  const pevp::fw::Prepared p = pevp::fw::prepare(std::make_shared<const isa::Decoded>(isa::decode(g, raw)));
  if (p.ops.empty()) {
    ADD_FAILURE() << "not lowered: " << (p.fault ? p.fault->describe() : std::string("no micro-op"));
    return {};
  }
  return p.ops.front();
}

inline isa::LdweightsArgs ldw(const pe::OperandType& t, std::uint32_t addr, unsigned K, unsigned M) {
  isa::LdweightsArgs a;
  a.src = isa::Pattern::row(addr, static_cast<std::uint16_t>(M));
  a.in_dtype = t.dtype;
  a.fp32_mode = t.fp32_mode;
  a.num_active_rows = K;
  a.num_active_cols = M;
  return a;
}
inline isa::MatmulArgs mm(const pe::OperandType& t, std::uint32_t src, std::uint32_t dst, unsigned K, unsigned M,
                   unsigned N, std::uint8_t flags) {
  isa::MatmulArgs a;
  a.src = isa::Pattern::row(src, static_cast<std::uint16_t>(N));
  a.dst = isa::Pattern::row(dst, static_cast<std::uint16_t>(N));
  a.in_dtype = t.dtype;
  a.fp32_mode = t.fp32_mode;
  a.num_active_rows = K;
  a.num_active_cols = M;
  a.psum_flags = flags;
  return a;
}

inline void expect_ok(const pe::ExecResult& r) { ASSERT_TRUE(r.ok) << r.describe(); }

}  // namespace pe_test
