// Shared helpers of the driver-level tests: an independent reference of the
// datapath (plain loops in the defined order, operands decoded with pevp::num,
// PSUM group semantics written from docs/pe-array-executor.md) that mirrors
// SBUF and PSUM, and a bench that drives the platform through the Driver only
// and keeps the reference in step.
//
// The reference never calls the models' decode, kernels or executor: it takes
// the builder arguments a test wrote, not the decoded instruction.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "pevp/isa/builders.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/encode.h"
#include "pevp/isa/rules.h"
#include "pevp/isa/tiles.h"
#include "pevp/numerics/convert.h"
#include "pevp/numerics/formats.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"
#include "test_util.h"
#include "tpb_arr_seq_top_host_visible_regs.h"

// Readable parameter names in test listings and ctest names (gtest finds PrintTo by argument-dependent lookup).
namespace pevp::isa {
inline void PrintTo(Generation g, std::ostream* os) { *os << name(g); }
}  // namespace pevp::isa

namespace vpt {

namespace isa = pevp::isa;
namespace num = pevp::num;
namespace pe = pevp::pe;
namespace platform = pevp::platform;
namespace arrseq = pevp::arrseq;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;
namespace pf = isa::psum_flags;

constexpr std::uint32_t kPsumBase = isa::ArrayGeometry::kPsumBase;
constexpr std::uint32_t kPsumPart = 16 * 1024;
constexpr std::uint32_t kBank = 2048;
constexpr std::uint32_t kCanonicalNan = 0x7FC00000u;

inline std::uint32_t fbits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// ---- independent numerics ---------------------------------------------------------------------
// fp32 -> tf32 (1-8-10) RNE in its fp32 container; Inf and NaN pass through (a NaN stays a NaN).
inline float tf32_rne(float x) {
  std::uint32_t u = fbits(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;
  u = (u + 0xFFFu + ((u >> 13) & 1u)) & ~0x1FFFu;
  return from_bits(u);
}
// The Low_High split (docs/numerics-matmul.md): hi = tf32(x) RNE, truncated when RNE would overflow a finite x;
// lo = tf32(x - hi); lo = 0 for Inf and NaN.
inline void split_tf32(float x, float& hi, float& lo) {
  if (!std::isfinite(x)) {
    hi = x;
    lo = 0.0f;
    return;
  }
  hi = tf32_rne(x);
  if (std::isinf(hi)) hi = from_bits(fbits(x) & ~0x1FFFu);
  lo = tf32_rne(x - hi);
}
// fp32 -> bf16 RNE; every NaN becomes the canonical NaN's upper half.
inline std::uint16_t bf16_rne(float x) {
  const std::uint32_t u = fbits(x);
  if (x != x) return static_cast<std::uint16_t>(kCanonicalNan >> 16);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
inline float canon(float x) { return x != x ? from_bits(kCanonicalNan) : x; }

inline unsigned elem_bytes(Dtype d) {
  switch (d) {
    case Dtype::FP32: return 4;
    case Dtype::BFLOAT16:
    case Dtype::FP16: return 2;
    default: return 1;
  }
}

// One SBUF element as the matmul sees it (before the Low_High split).
inline float ref_element(Generation g, Dtype dt, Fp32Mode mode, const std::uint8_t* p) {
  switch (dt) {
    case Dtype::FP32: {
      const float x = from_bits(std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
                                std::uint32_t{p[3]} << 24);
      return mode == Fp32Mode::Low ? tf32_rne(x) : x;
    }
    case Dtype::BFLOAT16: return from_bits((std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8) << 16);
    case Dtype::FP16: return num::decode(num::Format::FP16, std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8);
    default: return num::decode(*isa::element_format(g, dt), p[0]);
  }
}

// ---- dtype cases ------------------------------------------------------------------------------
struct DtypeCase {
  Dtype dtype;
  Fp32Mode mode;
};
inline std::string case_name(const DtypeCase& c) {
  std::string s(isa::name(c.dtype));
  if (c.dtype == Dtype::FP32) s += "_" + std::string(isa::name(c.mode));
  return s;
}
// Every matmul input of generation g: bf16, fp16, each fp8 the generation has a format for, and fp32 in the three
// modes (Low = tf32).
inline std::vector<DtypeCase> dtype_cases(Generation g) {
  std::vector<DtypeCase> v{{Dtype::BFLOAT16, Fp32Mode::None}, {Dtype::FP16, Fp32Mode::None}};
  for (Dtype d : {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5})
    if (isa::element_format(g, d)) v.push_back({d, Fp32Mode::None});
  for (Fp32Mode m : {Fp32Mode::Low, Fp32Mode::High, Fp32Mode::Low_High}) v.push_back({Dtype::FP32, m});
  return v;
}

// Random SBUF bytes of `count` elements (values around 1; raw codes -- NaN, Inf, subnormals -- at `raw_rate`).
inline std::vector<std::uint8_t> random_elems(Generation g, DtypeCase c, std::size_t count, std::mt19937& rng,
                                              double raw_rate = 0.0) {
  return pe_test::random_operand(pe::OperandType{g, c.dtype, c.mode}, count, rng, raw_rate);
}

// ---- access patterns --------------------------------------------------------------------------
// Element offsets (in elements, relative to the start) of a free-dimension pattern, dimension 0 innermost.
inline std::vector<std::int64_t> walk(const isa::Pattern& p) {
  std::int64_t step[3] = {0, 0, 0}, n[3] = {1, 1, 1};
  for (std::size_t i = 0; i < p.num_elem.size(); ++i) {
    step[i] = p.step_elem[i];
    n[i] = p.num_elem[i];
  }
  std::vector<std::int64_t> out;
  for (std::int64_t i2 = 0; i2 < n[2]; ++i2)
    for (std::int64_t i1 = 0; i1 < n[1]; ++i1)
      for (std::int64_t i0 = 0; i0 < n[0]; ++i0) out.push_back(i0 * step[0] + i1 * step[1] + i2 * step[2]);
  return out;
}

inline isa::TileRect rect(const isa::Placement& p) { return {p.row0, p.rows, p.col0, p.cols}; }

// ---- the reference machine --------------------------------------------------------------------
struct RefStationary {
  isa::TileRect tile;
  unsigned k = 0, m = 0;
  Fp32Mode mode = Fp32Mode::None;
  std::vector<float> v;  // [k][m]
};

class Ref {
 public:
  explicit Ref(Generation gen)
      : g(gen), geo(isa::preset_geometry(gen)), sbuf(geo.sbuf_bytes()), psum(geo.psum_bytes()) {}

  Generation g;
  const isa::ArrayGeometry& geo;
  std::vector<std::uint8_t> sbuf, psum;
  std::vector<RefStationary> st;

  void ldweights(const isa::LdweightsArgs& a) {
    const unsigned K = a.num_active_rows, M = a.num_active_cols;
    const auto offs = walk(a.src);
    const unsigned parts = a.xpose ? M : K, per = a.xpose ? K : M;
    ASSERT_EQ(offs.size(), per) << "test bug: LDWEIGHTS pattern";
    const std::uint32_t P = geo.sbuf_partition_bytes;
    const std::uint32_t p0 = a.src.start_addr / P, o0 = a.src.start_addr % P;
    const unsigned eb = elem_bytes(a.in_dtype);
    RefStationary s;
    s.tile = rect(a.tile);
    s.k = K;
    s.m = M;
    s.mode = a.fp32_mode;
    s.v.resize(std::size_t{K} * M);
    for (unsigned p = 0; p < parts; ++p)
      for (unsigned j = 0; j < per; ++j) {
        const std::size_t at = std::size_t{p0 + p} * P + o0 + static_cast<std::size_t>(offs[j] * eb);
        const float x = ref_element(g, a.in_dtype, a.fp32_mode, &sbuf[at]);
        // Not transposed: partition = k, element = m. Transposed: partition = m, element = k.
        if (a.xpose) s.v[std::size_t{j} * M + p] = x;
        else s.v[std::size_t{p} * M + j] = x;
      }
    std::vector<RefStationary> kept;
    for (auto& o : st)
      if (!o.tile.overlaps(s.tile)) kept.push_back(std::move(o));
    kept.push_back(std::move(s));
    st = std::move(kept);
  }

  void matmul(const isa::MatmulArgs& a) {
    const RefStationary* s = nullptr;
    for (const auto& o : st)
      if (o.tile == rect(a.tile)) s = &o;
    ASSERT_NE(s, nullptr) << "test bug: no stationary in the reference";
    const unsigned K = a.num_active_rows, M = a.num_active_cols;
    ASSERT_EQ(s->k, K);
    ASSERT_EQ(s->m, M);
    const auto soffs = walk(a.src), doffs = walk(a.dst);
    const std::size_t N = soffs.size();
    ASSERT_EQ(doffs.size(), N) << "test bug: MATMUL dst pattern";
    const std::uint32_t P = geo.sbuf_partition_bytes;
    const std::uint32_t sp0 = a.src.start_addr / P, so0 = a.src.start_addr % P;
    const unsigned eb = elem_bytes(a.in_dtype);
    std::vector<float> mv(std::size_t{K} * N);
    for (unsigned k = 0; k < K; ++k)
      for (std::size_t n = 0; n < N; ++n)
        mv[k * N + n] = ref_element(g, a.in_dtype, a.fp32_mode,
                                    &sbuf[std::size_t{sp0 + k} * P + so0 + static_cast<std::size_t>(soffs[n] * eb)]);
    const bool out_bf16 = a.out_dtype == Dtype::BFLOAT16;
    const unsigned ob = out_bf16 ? 2 : 4;
    const std::uint32_t drel = a.dst.start_addr - kPsumBase;
    const std::uint32_t dp0 = drel / kPsumPart, do0 = drel % kPsumPart;
    // Group semantics (docs/pe-array-executor.md): CAYMAN -- BEGIN zeroes and overwrites, all else adds; MARIANA --
    // BEGIN zeroes, accumulate_flag chooses add vs overwrite; MAVERICK -- accumulate_flag only.
    bool zero = false, acc = false;
    unsigned zero_banks = 1;
    if (isa::is_maverick(g)) {
      acc = a.accumulate.value_or(isa::default_accumulate(a.psum_flags));
    } else {
      const bool begin = a.psum_flags & pf::BEGIN_MATMUL_GROUP;
      zero = begin;
      acc = g == Generation::CAYMAN ? !begin : a.accumulate.value_or(isa::default_accumulate(a.psum_flags));
      zero_banks = 1u << static_cast<unsigned>(a.zero_region);
    }
    if (zero) {
      const unsigned bank = do0 / kBank, block = bank / zero_banks * zero_banks;
      for (unsigned p = 0; p < M; ++p)
        std::memset(&psum[std::size_t{dp0 + p} * kPsumPart + block * kBank], 0, zero_banks * kBank);
    }
    // The defined order: per (m, n) a sum over k from +0, each product rounded to fp32, then one add into PSUM.
    auto sum = [&](const std::vector<float>& sv, const std::vector<float>& mvv, unsigned m, std::size_t n) {
      float acc_sum = 0.0f;
      for (unsigned k = 0; k < K; ++k) {
        const float prod = sv[std::size_t{k} * M + m] * mvv[k * N + n];
        acc_sum = acc_sum + prod;
      }
      return acc_sum;
    };
    const bool three = s->mode == Fp32Mode::Low_High && a.fp32_mode == Fp32Mode::Low_High;
    std::vector<float> shi, slo, mhi, mlo;
    if (three) {
      shi.resize(s->v.size());
      slo.resize(s->v.size());
      mhi.resize(mv.size());
      mlo.resize(mv.size());
      for (std::size_t i = 0; i < s->v.size(); ++i) split_tf32(s->v[i], shi[i], slo[i]);
      for (std::size_t i = 0; i < mv.size(); ++i) split_tf32(mv[i], mhi[i], mlo[i]);
    }
    for (unsigned m = 0; m < M; ++m)
      for (std::size_t n = 0; n < N; ++n) {
        std::uint8_t* at = &psum[std::size_t{dp0 + m} * kPsumPart + do0 + static_cast<std::size_t>(doffs[n] * ob)];
        float old = 0.0f;
        if (acc) {
          if (out_bf16) {
            old = from_bits(std::uint32_t(at[0] | at[1] << 8) << 16);
          } else {
            std::memcpy(&old, at, 4);
          }
        }
        float r;
        if (three) {
          const float s1 = sum(shi, mhi, m, n);
          r = acc ? old + s1 : s1;
          r = r + sum(shi, mlo, m, n);
          r = r + sum(slo, mhi, m, n);
        } else {
          const float s1 = sum(s->v, mv, m, n);
          r = acc ? old + s1 : s1;
        }
        r = canon(r);
        if (out_bf16) {
          const std::uint16_t h = bf16_rne(r);
          at[0] = static_cast<std::uint8_t>(h);
          at[1] = static_cast<std::uint8_t>(h >> 8);
        } else {
          std::memcpy(at, &r, 4);
        }
      }
  }
};

// One instruction and its effect on the reference.
struct Step {
  isa::RawInstruction raw;
  std::function<void(Ref&)> apply;
};
inline Step lw_step(Generation g, const isa::LdweightsArgs& a) {
  return {isa::encode_ldweights(g, a), [a](Ref& r) { r.ldweights(a); }};
}
inline Step mm_step(Generation g, const isa::MatmulArgs& a) {
  return {isa::encode_matmul(g, a), [a](Ref& r) { r.matmul(a); }};
}
inline Step raw_step(const isa::RawInstruction& raw) {
  return {raw, [](Ref&) {}};
}

// Builder defaults for a dtype case on a tile.
inline isa::LdweightsArgs ldw(DtypeCase c, std::uint32_t addr, unsigned K, unsigned M, isa::Placement tile = {}) {
  isa::LdweightsArgs a;
  a.src = isa::Pattern::row(addr, static_cast<std::uint16_t>(M));
  a.in_dtype = c.dtype;
  a.fp32_mode = c.mode;
  a.num_active_rows = K;
  a.num_active_cols = M;
  a.tile = tile;
  return a;
}
inline isa::MatmulArgs mmul(DtypeCase c, std::uint32_t src, std::uint32_t dst, unsigned K, unsigned M, unsigned N,
                            std::uint8_t flags = pf::SINGLE, isa::Placement tile = {}) {
  isa::MatmulArgs a;
  a.src = isa::Pattern::row(src, static_cast<std::uint16_t>(N));
  a.dst = isa::Pattern::row(dst, static_cast<std::uint16_t>(N));
  a.in_dtype = c.dtype;
  a.fp32_mode = c.mode;
  a.num_active_rows = K;
  a.num_active_cols = M;
  a.tile = tile;
  a.psum_flags = flags;
  return a;
}
inline std::uint32_t psum_addr(unsigned partition, unsigned byte) { return kPsumBase + partition * kPsumPart + byte; }

// ---- the bench: the driver plus the reference ------------------------------------------------------
class Bench {
 public:
  Bench(platform::Driver& d, Generation g) : d(d), ref(g), g(g) {}
  platform::Driver& d;
  Ref ref;
  Generation g;

  std::uint32_t part_bytes() const { return ref.geo.sbuf_partition_bytes; }
  std::uint32_t sbuf_addr(unsigned partition, unsigned byte) const { return partition * part_bytes() + byte; }

  // Writes `rows` rows of bytes (row-major) to SBUF partitions p0.. at byte `off`, on the platform and in the
  // reference.
  void put_rows(unsigned p0, unsigned off, const std::vector<std::uint8_t>& bytes, unsigned rows) {
    const std::size_t row = bytes.size() / rows;
    for (unsigned r = 0; r < rows; ++r) {
      const std::size_t at = std::size_t{p0 + r} * part_bytes() + off;
      d.write(d.map().sbuf + at, &bytes[r * row], row);
      std::memcpy(&ref.sbuf[at], &bytes[r * row], row);
    }
  }
  // Fills all of PSUM with garbage words (random bits, -0, +-Inf, NaN with payloads) on both sides, so zeroing,
  // overwrites and accumulates all show.
  void garbage_psum(std::mt19937& rng) {
    std::uniform_int_distribution<std::uint32_t> any;
    for (std::size_t i = 0; i + 4 <= ref.psum.size(); i += 4) {
      std::uint32_t w = any(rng);
      switch (w % 16) {
        case 0: w = 0x80000000u; break;  // -0
        case 1: w = 0x7F800000u; break;  // +Inf
        case 2: w = 0x7FA12345u; break;  // NaN with a payload
        default: w = fbits(std::ldexp(1.0f + static_cast<float>(w % 1000) / 1000.0f, static_cast<int>(w % 9) - 4) *
                           ((w >> 20) & 1 ? -1.0f : 1.0f));
      }
      std::memcpy(&ref.psum[i], &w, 4);
    }
    d.write(d.map().psum, ref.psum.data(), ref.psum.size());
  }
  // One PSUM word on both sides.
  void poke32(unsigned partition, unsigned byte, std::uint32_t value) {
    const std::size_t at = std::size_t{partition} * kPsumPart + byte;
    d.write(d.map().psum + at, &value, 4);
    std::memcpy(&ref.psum[at], &value, 4);
  }
  std::vector<std::uint8_t> read_psum() {
    std::vector<std::uint8_t> out(ref.psum.size());
    d.read(d.map().psum, out.data(), out.size());
    return out;
  }
  // Submits the steps' instructions, waits until the SEQ settles and applies the steps to the reference.
  platform::Completion run(const std::vector<Step>& steps) {
    std::vector<isa::RawInstruction> prog;
    for (const auto& s : steps) prog.push_back(s.raw);
    d.submit(prog);
    // Simulated time: every program of these tests settles within microseconds; a hang fails fast.
    const platform::Completion c = d.wait_idle(sc_core::sc_time(2, sc_core::SC_MS));
    for (const auto& s : steps) s.apply(ref);
    return c;
  }
  // Compares all of PSUM with the reference bit for bit; reports the first few differences.
  void expect_psum_matches(const std::string& what) {
    const auto got = read_psum();
    int bad = 0;
    for (std::size_t i = 0; i + 4 <= got.size(); i += 4) {
      std::uint32_t a, b;
      std::memcpy(&a, &got[i], 4);
      std::memcpy(&b, &ref.psum[i], 4);
      if (a != b && ++bad <= 5)
        ADD_FAILURE() << what << ": PSUM partition " << i / kPsumPart << " byte " << i % kPsumPart << " (bank "
                      << (i % kPsumPart) / kBank << "): got " << hex(a) << " (" << from_bits(a) << "), expected "
                      << hex(b) << " (" << from_bits(b) << ")";
    }
    EXPECT_EQ(bad, 0) << what << ": " << bad << " PSUM words differ";
  }
};

// ---- per-tile counters ------------------------------------------------------------------------
// The three perf banks of 003 section 4 (bundle names; bases 0x100 / 0x300 / 0x500).
inline constexpr const char* kBankBundles[3] = {"arr_seq_ififo_perf_weight_load", "arr_seq_ififo_perf_matmul",
                                               "arr_seq_ififo_perf_pe_regwrite"};
inline constexpr std::uint32_t kBankBases[3] = {0x100, 0x300, 0x500};

// The offset of `<tile>_instr_cnt_lsb` in `bundle` from the generated register table; 0 if absent.
inline std::uint32_t counter_offset(const char* bundle, const std::string& tile) {
  const auto& desc = pevp::regs::tpb_arr_seq_top_host_visible::regfile_desc();
  const std::string name = tile + "_instr_cnt_lsb";
  for (std::size_t i = 0; i < desc.num_registers; ++i)
    if (desc.registers[i].bundle == bundle && desc.registers[i].name == name) return desc.registers[i].offset;
  return 0;
}
// Reads a bank's 48-bit counter for a tile over the bus (msb, lsb, msb -- 003 section 6 with the carry guard).
inline std::uint64_t read_tile_counter(platform::Driver& d, unsigned bank, const std::string& tile) {
  const std::uint32_t off = counter_offset(kBankBundles[bank], tile);
  EXPECT_NE(off, 0u) << "no counter " << tile << " in " << kBankBundles[bank];
  if (off == 0) return ~0ull;
  EXPECT_GE(off, kBankBases[bank]);
  EXPECT_LT(off, kBankBases[bank] + 0x200);
  const std::uint64_t base = d.map().top();
  for (;;) {
    const std::uint32_t hi1 = d.read32(base + off + 4) & 0xFFFF;
    const std::uint32_t lo = d.read32(base + off);
    const std::uint32_t hi2 = d.read32(base + off + 4) & 0xFFFF;
    if (hi1 == hi2) return std::uint64_t{hi1} << 32 | lo;
  }
}

}  // namespace vpt
