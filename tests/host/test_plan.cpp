// The GEMM plan: every instruction decodes with zero violations on every generation and dtype; the instruction
// counts, MACs and PSUM group flags follow from the tiling arithmetic; loads stay inside the SBUF budget; the
// read-backs cover C exactly once; shapes larger than SBUF stream with groups left open across steps; bad options get
// precise errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "host_test_util.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/isa/decode.h"

namespace {

using namespace host_test;
namespace isa = pevp::isa;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;
namespace pf = isa::psum_flags;

struct TypeCase {
  Dtype dtype;
  Fp32Mode mode;
};
const TypeCase kTypes[] = {{Dtype::BFLOAT16, Fp32Mode::None}, {Dtype::FP16, Fp32Mode::None},
                           {Dtype::FP8_EXP2, Fp32Mode::None}, {Dtype::FP8_EXP3, Fp32Mode::None},
                           {Dtype::FP8_EXP4, Fp32Mode::None}, {Dtype::FP8_EXP5, Fp32Mode::None},
                           {Dtype::FP32, Fp32Mode::Low},      {Dtype::FP32, Fp32Mode::High},
                           {Dtype::FP32, Fp32Mode::Low_High}};

host::GemmOptions options(Generation g, TypeCase t, unsigned tile_n = 512) {
  host::GemmOptions o;
  o.gen = g;
  o.dtype = t.dtype;
  o.fp32_mode = t.mode;
  o.tile_n = tile_n;
  return o;
}

// Decodes every instruction of the plan (and runs the cross-instruction checker) and tracks the PSUM groups per bank:
// each output tile's matmuls must open with START (or SINGLE), continue with MID and close with END, in order.
void expect_valid_program(const host::GemmPlan& plan) {
  const Generation g = plan.options.gen;
  isa::StreamChecker stream;
  std::map<std::int64_t, bool> open;  // PSUM bank -> group open
  std::size_t count = 0;
  for (std::size_t s = 0; s < plan.steps.size(); ++s)
    for (std::size_t i = 0; i < plan.steps[s].program.size(); ++i, ++count) {
      const isa::Decoded d = isa::decode(g, plan.steps[s].program[i]);
      for (const auto& v : d.violations) ADD_FAILURE() << "step " << s << " instr " << i << ": " << v.describe();
      for (const auto& v : stream.check(d)) ADD_FAILURE() << "step " << s << " instr " << i << ": " << v.describe();
      ASSERT_TRUE(d.opcode.has_value());
      EXPECT_EQ(d.get("in_dtype"), static_cast<std::int64_t>(plan.options.dtype));
      EXPECT_EQ(d.get("fp32_mode"), static_cast<std::int64_t>(plan.options.fp32_mode));
      // Columns up to the array's (0 encodes MAVERICK's 256, a folded c256 tile).
      const auto rows = d.get("num_active_rows"), encoded_cols = d.get("num_active_cols");
      const auto cols = encoded_cols == 0 && isa::is_maverick(g) ? 256 : encoded_cols;
      const std::int64_t max_cols = isa::preset_geometry(g).pe_cols;
      EXPECT_TRUE(rows >= 1 && rows <= 128 && cols >= 1 && cols <= max_cols) << rows << " x " << cols;
      // Sources start 4-byte aligned (an odd start_addr would select the MX member on v4+).
      EXPECT_EQ(d.get("src_mem_pattern.start_addr") % 4, 0);
      if (*d.opcode != isa::Opcode::MATMUL) continue;
      const auto bank = (d.get("dst_mem_pattern.start_addr") - isa::ArrayGeometry::kPsumBase) % (16 * 1024) / 2048;
      // The accumulate flag (v4+) must be "overwrite" exactly when a group begins.
      const std::uint8_t flags =
          d.has("psum_accumulate_flags") ? static_cast<std::uint8_t>(d.get("psum_accumulate_flags")) : 0xFF;
      if (flags != 0xFF) {
        const bool begin = flags & pf::BEGIN_MATMUL_GROUP, end = flags & pf::END_MATMUL_GROUP;
        EXPECT_EQ(begin, !open[bank]) << "step " << s << " instr " << i << " bank " << bank;
        EXPECT_EQ(flags & pf::BEGIN_ACCUM_MATMUL_GROUP, 0);
        if (d.has("flags.accumulate_flag")) {
          EXPECT_EQ(d.get("flags.accumulate_flag"), begin ? 0 : 1);
        }
        open[bank] = !end;
      }
    }
  for (const auto& [bank, is_open] : open) EXPECT_FALSE(is_open) << "PSUM bank " << bank << " left open";
  std::size_t counted = 0;
  for (const auto& [op, n] : plan.stats.instructions) counted += n;
  EXPECT_EQ(counted, count);
}

TEST(Plan, EveryInstructionValidOnEveryGenerationAndDtype) {
  for (Generation g : isa::kAllGenerations)
    for (const TypeCase& t : kTypes)
      for (const host::GemmShape& s : {host::GemmShape{1, 1, 1}, host::GemmShape{33, 70, 129},
                                       host::GemmShape{130, 300, 1030}, host::GemmShape{257, 129, 65}}) {
        SCOPED_TRACE(std::string(isa::name(g)) + " " + std::string(isa::name(t.dtype)) + " " +
                     std::string(isa::name(t.mode)) + " " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
                     std::to_string(s.n));
        const auto plan = host::plan_gemm(s, options(g, t));
        expect_valid_program(plan);
        // A forced-streaming variant of the same shape must be just as valid.
        auto o = options(g, t, 96);
        o.sbuf_bytes_per_partition =
            static_cast<std::uint32_t>((host::tile_limits(isa::preset_geometry(g), g).m + 96) * plan.element_bytes);
        expect_valid_program(host::plan_gemm(s, o));
      }
}

TEST(Plan, CountsFollowTheTiling) {
  // 130 x 300 x 1030 bf16: m-blocks {128, 2}, k-tiles {128, 128, 44}, n-tiles {512, 512, 6}: 6 output tiles in
  // one round, one step. Per k-tile: one LDWEIGHTS per m-block, one MATMUL per output tile.
  const auto plan = host::plan_gemm({130, 300, 1030}, options(Generation::MARIANA, kTypes[0]));
  EXPECT_EQ(plan.stats.steps, 1u);
  EXPECT_EQ(plan.stats.rounds, 1u);
  EXPECT_EQ(plan.stats.k_split_rounds, 0u);
  EXPECT_EQ(plan.stats.instructions.at(isa::Opcode::LDWEIGHTS), 3u * 2u);
  EXPECT_EQ(plan.stats.instructions.at(isa::Opcode::MATMUL), 3u * 6u);
  EXPECT_EQ(plan.stats.macs, 130ull * 300 * 1030);
  EXPECT_EQ(plan.stats.sbuf_bytes_loaded, 2ull * (130 * 300 + 300 * 1030));  // every operand element once
  EXPECT_EQ(plan.stats.psum_bytes_read, 4ull * 130 * 1030);
  EXPECT_EQ(plan.stats.peak_sbuf_bytes_per_partition, 3u * 2u * (130 + 1030));
  EXPECT_EQ(plan.k_tile, 128u);

  // More than 8 output tiles: 300 x 1 x 2000 with tile_n 512 = 3 m-blocks x 4 n-tiles = 12 tiles, 2 rounds.
  const auto wide = host::plan_gemm({300, 1, 2000}, options(Generation::CAYMAN, kTypes[0]));
  EXPECT_EQ(wide.stats.rounds, 2u);
  EXPECT_EQ(wide.stats.instructions.at(isa::Opcode::MATMUL), 12u);
  EXPECT_EQ(wide.stats.macs, 300ull * 2000);
}

TEST(Plan, ReadsCoverEveryElementOfCOnce) {
  for (unsigned tile_n : {512u, 100u, 1u}) {
    const host::GemmShape s{257, 40, 301};
    auto o = options(Generation::MAVERICK, kTypes[1], tile_n);
    const auto plan = host::plan_gemm(s, o);
    std::vector<int> hits(s.m * s.n, 0);
    for (const auto& step : plan.steps)
      for (const auto& r : step.reads) {
        EXPECT_LE(r.partitions, 128u);
        EXPECT_LE(r.elements, tile_n);
        EXPECT_LT(r.bank, 8u);
        for (std::size_t p = 0; p < r.partitions; ++p)
          for (std::size_t j = 0; j < r.elements; ++j) ++hits[(r.row0 + p) * s.n + r.col0 + j];
      }
    for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "C element " << i << " tile_n " << tile_n;
  }
}

TEST(Plan, LoadsStayInsideTheBudgetAndDoNotOverlap) {
  for (std::uint32_t cap : {2000u, 4096u, 65536u}) {
    auto o = options(Generation::CAYMAN, kTypes[0]);
    o.sbuf_bytes_per_partition = cap;
    const auto plan = host::plan_gemm({130, 300, 1030}, o);
    for (const auto& step : plan.steps) {
      std::vector<std::pair<std::size_t, std::size_t>> spans;
      for (const auto& l : step.loads) {
        EXPECT_LE(l.offset + l.bytes_per_partition(), cap);
        EXPECT_LE(l.partition0 + l.k_count, 128u);
        for (const auto& [lo, hi] : spans) EXPECT_TRUE(l.offset >= hi || l.offset + l.bytes_per_partition() <= lo);
        spans.push_back({l.offset, l.offset + l.bytes_per_partition()});
      }
    }
    EXPECT_LE(plan.stats.peak_sbuf_bytes_per_partition, cap);
  }
}

TEST(Plan, KSplitAcrossStepsKeepsGroupsOpen) {
  // Budget 4096 B: one k-tile of the round needs (130 + 1030) x 2 = 2320 B, so each step holds one k-tile and the
  // three k-tiles take three steps; the groups open in step 0 and close in step 2, which alone reads PSUM back.
  auto o = options(Generation::MARIANA, kTypes[0]);
  o.sbuf_bytes_per_partition = 4096;
  const auto plan = host::plan_gemm({130, 300, 1030}, o);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.stats.k_split_rounds, 1u);
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(plan.steps[s].reads.empty(), s < 2) << s;
    for (const auto& raw : plan.steps[s].program) {
      const auto d = isa::decode(o.gen, raw);
      // Sources start 4-byte aligned (an odd start_addr would select the MX member on v4+).
      EXPECT_EQ(d.get("src_mem_pattern.start_addr") % 4, 0);
      if (*d.opcode != isa::Opcode::MATMUL) continue;
      const std::uint8_t want = s == 0 ? pf::MULTI_START : s == 1 ? pf::MULTI_MID : pf::MULTI_END;
      EXPECT_EQ(d.get("psum_accumulate_flags"), want) << "step " << s;
    }
  }
  expect_valid_program(plan);
}

TEST(Plan, ShapesLargerThanSbufStream) {
  // 256 x 8192 x 4096 bf16: B alone is 64 MiB, twice MARIANA's SBUF. A round (one m-block, 8 n-tiles) needs
  // (128 + 4096) x 2 = 8448 B per k-tile, 64 k-tiles = 528 KiB per partition > 256 KiB, so every round streams:
  // floor(262144 / 8448) = 31 k-tiles fit, 64 k-tiles take 3 steps (22 + 21 + 21), 6 steps in all.
  // The round order (B panels would fit here: D-GEMM-BPANEL, tests/host/test_plan_bpanel.cpp).
  auto o = options(Generation::MARIANA, kTypes[0]);
  o.b_resident = false;
  const auto plan = host::plan_gemm({256, 8192, 4096}, o);
  EXPECT_EQ(plan.stats.rounds, 2u);
  EXPECT_EQ(plan.stats.k_split_rounds, 2u);
  EXPECT_EQ(plan.stats.steps, 6u);
  EXPECT_LE(plan.stats.peak_sbuf_bytes_per_partition, 256u * 1024u);
  EXPECT_EQ(plan.stats.macs, 256ull * 8192 * 4096);
  EXPECT_EQ(plan.stats.instructions.at(isa::Opcode::MATMUL), 2u * 64u * 8u);
  expect_valid_program(plan);
}

TEST(Plan, AddressesFollowTheGeometry) {
  EXPECT_EQ(host::sbuf_address(isa::preset_geometry(Generation::CAYMAN), 3, 10), 3u * 224 * 1024 + 10);
  EXPECT_EQ(host::sbuf_address(isa::preset_geometry(Generation::MARIANA), 3, 10), 3u * 256 * 1024 + 10);
  EXPECT_EQ(host::psum_address(isa::preset_geometry(Generation::MAVERICK), 2, 5, 8), 0x2000000u + 2 * 16384 + 5 * 2048 + 8);
}

TEST(Plan, InvalidOptionsArePreciseErrors) {
  auto expect_error = [](host::GemmShape s, host::GemmOptions o, const std::string& what) {
    try {
      host::plan_gemm(s, o);
      ADD_FAILURE() << what << ": accepted";
    } catch (const host::PlanError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  const auto bf16 = options(Generation::CAYMAN, kTypes[0]);
  expect_error({0, 4, 4}, bf16, "shape: M = 0");
  expect_error({4, 0, 4}, bf16, "shape: K = 0");
  expect_error({4, 4, 0}, bf16, "shape: N = 0");
  auto o = bf16;
  o.tile_n = 0;
  expect_error({4, 4, 4}, o, "options.tile_n = 0: must be 1..512");
  o.tile_n = 513;
  expect_error({4, 4, 4}, o, "options.tile_n = 513");
  o = bf16;
  o.fp32_mode = Fp32Mode::Low;
  expect_error({4, 4, 4}, o, "fp32_mode must be None for a non-FP32 input");
  o = options(Generation::MARIANA, {Dtype::FP32, Fp32Mode::None});
  expect_error({4, 4, 4}, o, "FP32 input needs fp32_mode Low, High or Low_High");
  o = options(Generation::MARIANA, {Dtype::INT8, Fp32Mode::None});
  expect_error({4, 4, 4}, o, "INT8 is not a dense matmul input");
  o = bf16;
  o.sbuf_bytes_per_partition = 224 * 1024 + 1;
  expect_error({4, 4, 4}, o, "CAYMAN's SBUF partitions hold 229376 bytes");
  o.sbuf_bytes_per_partition = 1279;  // one k-tile of a 128 x 512 output tile needs (128 + 512) x 2
  expect_error({200, 4, 600}, o, "needs 1280 bytes per partition");
  o.sbuf_bytes_per_partition = 12;  // a 4 x 4 x 4 GEMM needs only (4 + 4) x 2 bytes
  expect_error({4, 4, 4}, o, "needs 16 bytes");
  // 2^12 x 2^12 x 2^9 tiles = 2^33 matmuls; the products of the tile counts must not overflow either.
  expect_error({std::size_t{1} << 19, std::size_t{1} << 19, std::size_t{1} << 18}, bf16,
               "needs more than 16777216 matmuls");
  expect_error({SIZE_MAX, SIZE_MAX, SIZE_MAX}, bf16, "needs more than 16777216 matmuls");
}

}  // namespace
