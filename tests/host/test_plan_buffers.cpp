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
  EXPECT_EQ(p.stats.b_panels, 0u) << "no B panel with two buffers";
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

}  // namespace
