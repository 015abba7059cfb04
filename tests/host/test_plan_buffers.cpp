// Double-buffered plans (GemmOptions::sbuf_buffers = 2, D-GEMM-DMA-BUFFERS): consecutive steps load into alternate
// halves of the SBUF budget, so a runtime can move step s + 1's operands while step s computes. The halves are
// derived by hand from the budget; the results must keep the single-buffer plan's bits (same k order per element).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "host_test_util.h"
#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/isa/decode.h"

namespace {

using namespace host_test;
namespace isa = pevp::isa;
using isa::Generation;

// Every load of step s lies in its buffer, [(s % 2) x half, (s % 2 + 1) x half) of each partition.
void expect_loads_in_their_buffer(const host::GemmPlan& plan, std::uint32_t half) {
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const std::uint32_t lo = static_cast<std::uint32_t>(s % 2) * half, hi = lo + half;
    for (const host::SbufLoad& l : plan.steps[s].loads) {
      EXPECT_GE(l.offset, lo) << "step " << s;
      EXPECT_LE(l.offset + l.bytes_per_partition(), hi) << "step " << s;
    }
  }
}

TEST(PlanBuffers, StepsAlternateBetweenTheTwoHalvesOfTheBudget) {
  host::GemmOptions o;
  o.gen = Generation::MARIANA;
  o.tile_n = 128;
  // 8 KiB per partition: halves of 4096 bytes. One k-tile of a 128-wide m-block and a 128-wide n-tile in bf16 is
  // 256 + 256 = 512 bytes, so a half holds 8 k-tiles; K = 4096 has 32 k-tiles: 4 steps per output tile.
  o.sbuf_bytes_per_partition = 8192;
  o.sbuf_buffers = 2;
  const host::GemmPlan p = host::plan_gemm({256, 4096, 256}, o);
  ASSERT_GE(p.steps.size(), 4u);
  expect_loads_in_their_buffer(p, 4096);
  EXPECT_EQ(p.stats.b_panels, 0u) << "one round of 2 x 2 output tiles: panels would load no less";
  EXPECT_EQ(p.stats.peak_sbuf_bytes_per_partition, 8192u) << "the second half is filled to its end";
  // The instructions read what the loads wrote: executing the plan gives the single-buffer plan's bits.
  const host::Matrix am = random_matrix(256, 4096, 5), bm = random_matrix(4096, 256, 6);
  const host::EncodedOperand a = host::encode_operand(am, o.gen, o.dtype), b = host::encode_operand(bm, o.gen, o.dtype);
  host::GemmOptions single = o;
  single.sbuf_buffers = 1;
  single.sbuf_bytes_per_partition = 4096;  // the same step size
  const host::GemmPlan one = host::plan_gemm({256, 4096, 256}, single);
  EXPECT_EQ(one.steps.size(), p.steps.size());
  const host::Matrix got = host::execute_plan(p, a, b);
  EXPECT_EQ(host::count_bit_mismatches(got, host::execute_plan(one, a, b)), 0u);
  EXPECT_EQ(host::count_bit_mismatches(got, host::reference_defined_order(p, a, b)), 0u);
}

TEST(PlanBuffers, AnOddBudgetIsSplitOnTheRegionAlignment) {
  host::GemmOptions o;
  o.gen = Generation::CAYMAN;
  o.tile_n = 64;
  o.sbuf_bytes_per_partition = 4102;  // halves of 2051, aligned down to 4 bytes: 2048
  o.sbuf_buffers = 2;
  const host::GemmPlan p = host::plan_gemm({128, 2048, 64}, o);
  expect_loads_in_their_buffer(p, 2048);
}

TEST(PlanBuffers, RefusedWhenAHalfCannotHoldOneKTileOrTheCountIsWrong) {
  host::GemmOptions o;
  o.gen = Generation::MARIANA;
  o.tile_n = 512;
  // One k-tile needs 256 (A, 128 bf16) + 1024 (B, 512 bf16) = 1280 bytes; a half of 2048 is 1024.
  o.sbuf_bytes_per_partition = 2048;
  o.sbuf_buffers = 2;
  try {
    host::plan_gemm({128, 128, 512}, o);
    FAIL() << "planned";
  } catch (const host::PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("options.sbuf_buffers = 2: each buffer holds 1024 SBUF bytes per partition, "
                                         "one k-tile of one output tile needs 1280"),
              std::string::npos)
        << e.what();
  }
  o.sbuf_buffers = 3;
  o.sbuf_bytes_per_partition.reset();
  try {
    host::plan_gemm({128, 128, 512}, o);
    FAIL() << "planned";
  } catch (const host::PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("options.sbuf_buffers = 3: 1 (single) or 2 (double buffering)"),
              std::string::npos)
        << e.what();
  }
}

// Double-buffered B panels (D-GEMM-DMA-PANELS). 512 x 1024 x 1024 bf16 on MARIANA with tile_n 128 and 8 KiB per
// partition: 4 m-blocks, 8 k-tiles, 8 n-tiles; every tile is 128 x 2 = 256 bytes per partition per k-tile, and one
// output tile takes one PSUM bank (512 bytes of its 2 KiB), so a step's output tiles get half of the 8 banks: 4.
// The panel and two A buffers must fit: 8 k-tiles x (p x 256 + 2 x q x 256) <= 8192, so p + 2q <= 4: panels of
// p = 2 n-tiles (4 panels), q = 1 m-block per step, 16 steps. Panel [0, 4096), A buffers [4096, 6144) and
// [6144, 8192); step s's output tiles in banks (s mod 2) x 4 + u.
TEST(PlanBuffers, APanelStaysWhileTheATilesAlternateBehindItAndThePsumHalvesAlternate) {
  host::GemmOptions o;
  o.gen = Generation::MARIANA;
  o.tile_n = 128;
  o.sbuf_bytes_per_partition = 8192;
  o.sbuf_buffers = 2;
  const host::GemmPlan p = host::plan_gemm({512, 1024, 1024}, o);
  ASSERT_EQ(p.stats.b_panels, 4u);
  EXPECT_EQ(p.stats.b_panel_ntiles, 2u);
  EXPECT_EQ(p.stats.b_panel_mblocks, 1u);
  ASSERT_EQ(p.steps.size(), 16u);
  EXPECT_EQ(p.psum_buffers, 2u);
  EXPECT_EQ(p.image_chunk_a, 128u) << "a step's m-block";
  EXPECT_EQ(p.image_chunk_b, 256u) << "a panel's two n-tiles";
  EXPECT_EQ(p.stats.peak_sbuf_bytes_per_partition, 8192u);
  // B once (1024 x 1024 x 2 bytes) and A once per panel (4 x 512 x 1024 x 2).
  EXPECT_EQ(p.stats.sbuf_bytes_loaded, (1024u * 1024u + 4u * 512u * 1024u) * 2u);
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    const bool panel_start = s % 4 == 0;
    std::size_t b_loads = 0;
    for (const host::SbufLoad& l : p.steps[s].loads) {
      if (l.operand == host::Operand::B) {
        ++b_loads;
        EXPECT_LT(l.offset, 4096u) << "the panel lives in [0, 4096)";
        EXPECT_EQ(l.reuse_distance, s == 0 ? 0u : 1u) << "a panel replaces the one the previous step read";
      } else {
        const std::uint32_t lo = 4096 + static_cast<std::uint32_t>(s % 2) * 2048;
        EXPECT_GE(l.offset, lo);
        EXPECT_LE(l.offset + l.bytes_per_partition(), lo + 2048u);
        EXPECT_EQ(l.reuse_distance, s < 2 ? 0u : 2u) << "its buffer's previous step";
      }
    }
    EXPECT_EQ(b_loads, panel_start ? 8u * 2u : 0u) << "the panel's 8 k-tiles x 2 n-tiles, at a panel's first step";
    for (const host::PsumRead& r : p.steps[s].reads) {
      EXPECT_GE(r.bank, (s % 2) * 4u);
      EXPECT_LT(r.bank, (s % 2) * 4u + 4u);
    }
    EXPECT_EQ(p.steps[s].reads.size(), 2u) << "one m-block x the panel's two n-tiles, read back at once";
  }
  // The same bits as the single-buffer plan and the defined-order reference: every element sums its k-tiles in order.
  const host::Matrix am = random_matrix(512, 1024, 7), bm = random_matrix(1024, 1024, 8);
  const host::EncodedOperand a = host::encode_operand(am, o.gen, o.dtype), b = host::encode_operand(bm, o.gen, o.dtype);
  host::GemmOptions single = o;
  single.sbuf_buffers = 1;
  const host::Matrix got = host::execute_plan(p, a, b);
  EXPECT_EQ(host::count_bit_mismatches(got, host::execute_plan(host::plan_gemm({512, 1024, 1024}, single), a, b)), 0u);
  EXPECT_EQ(host::count_bit_mismatches(got, host::reference_defined_order(p, a, b)), 0u);
}

// A B panel is kept only where it loads less: without b_resident the double-buffered plan is the round order.
TEST(PlanBuffers, WithoutResidentPanelsTheDoubleBufferedPlanIsTheRoundOrder) {
  host::GemmOptions o;
  o.gen = Generation::MARIANA;
  o.tile_n = 128;
  o.sbuf_bytes_per_partition = 8192;
  o.sbuf_buffers = 2;
  o.b_resident = false;
  const host::GemmPlan p = host::plan_gemm({512, 1024, 1024}, o);
  EXPECT_EQ(p.stats.b_panels, 0u);
  EXPECT_EQ(p.psum_buffers, 1u);
  expect_loads_in_their_buffer(p, 4096);
}

}  // namespace
