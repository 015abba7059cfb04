// host::DmaGemm, the plan lowered to DMA descriptors and semaphore-synchronised programs (docs/memory-system.md,
// D-GEMM-DMA-SYNC): the waits and updates step by step against the protocol written out by hand, the merged loads,
// and the refusals.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "pevp/dma/address_space.h"
#include "pevp/dma/descriptor.h"
#include "pevp/host/dma_plan.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/instruction.h"

namespace {

using namespace pevp;

host::GemmPlan double_buffered(std::size_t m, std::size_t k, std::size_t n, std::uint32_t budget) {
  host::GemmOptions o;
  o.gen = isa::Generation::MARIANA;
  o.tile_n = 128;
  o.sbuf_bytes_per_partition = budget;
  o.sbuf_buffers = 2;
  return host::plan_gemm({m, k, n}, o);
}

isa::EventsPart events(const isa::RawInstruction& raw) {
  return isa::events_of(isa::decode(isa::Generation::MARIANA, raw).instr);
}

TEST(DmaPlan, EveryStepFollowsTheSynchronisationProtocol) {
  // 128 x 4096 x 128 bf16 with 2 KiB halves: one k-tile needs 512 bytes per partition, so 4 k-tiles a step and
  // 8 steps, the last one reading C back.
  const host::GemmPlan plan = double_buffered(128, 4096, 128, 4096);
  ASSERT_EQ(plan.steps.size(), 8u);
  const host::DmaSemaphores sem;
  host::DmaGemm lowering(plan, dma::kHbmBase, host::DmaQueueUse{16, 16});
  std::uint64_t counted[4] = {};
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    const host::DmaStep d = lowering.lower(plan.steps[s], nullptr, nullptr);
    const std::uint16_t token = static_cast<std::uint16_t>(s / 2 + 1), earlier = static_cast<std::uint16_t>(s / 2);
    unsigned loads = 0, signals = 0, evictions = 0;
    for (const host::QueuedDescriptor& q : d.descriptors) {
      const dma::Descriptor& x = q.descriptor;
      EXPECT_TRUE(dma::validate(x, 32).ok()) << dma::validate(x, 32).message;
      if (x.kind == dma::Kind::SIGNAL) {
        ++signals;
        EXPECT_EQ(q.engine, 0u);
        EXPECT_EQ(q.queue, 0u);
        EXPECT_EQ(x.wait_mode, isa::WaitMode::WAIT_GE);
        EXPECT_EQ(x.wait_sem, sem.copies[s % 4]);
        EXPECT_EQ(x.wait_value, counted[s % 4]) << "every load of this step and eviction of the one before";
        EXPECT_EQ(x.update_mode, isa::UpdateMode::SET);
        EXPECT_EQ(x.update_sem, sem.ready[s % 2]);
        EXPECT_EQ(x.update_value, token);
        continue;
      }
      EXPECT_NE(q.engine, 0u) << "copies stay off the control queue's engine";
      const bool load = x.dst < dma::kHbmBase;
      if (load) {
        ++loads;
        ++counted[s % 4];
        EXPECT_EQ(x.update_sem, sem.copies[s % 4]);
        if (s < 2) {
          EXPECT_EQ(x.wait_mode, isa::WaitMode::NONE);
        } else {
          EXPECT_EQ(x.wait_mode, isa::WaitMode::WAIT_EQ);
          EXPECT_EQ(x.wait_sem, sem.done[s % 2]);
          EXPECT_EQ(x.wait_value, earlier) << "its buffer's previous step, s - 2";
        }
      } else {
        ++evictions;
        ++counted[(s + 1) % 4];
        EXPECT_EQ(x.wait_mode, isa::WaitMode::WAIT_EQ);
        EXPECT_EQ(x.wait_sem, sem.done[s % 2]);
        EXPECT_EQ(x.wait_value, token) << "this step has computed";
        EXPECT_EQ(x.update_sem, sem.copies[(s + 1) % 4]);
        EXPECT_EQ(x.dst_row_stride, 128u * 4u) << "C's rows, N fp32 apart";
      }
      EXPECT_EQ(x.update_mode, isa::UpdateMode::INCREMENT);
      EXPECT_EQ(x.update_value, 1u);
    }
    EXPECT_EQ(signals, 1u);
    EXPECT_GT(loads, 0u);
    EXPECT_EQ(evictions > 0, s + 1 == plan.steps.size()) << "only the round's last step reads C back";
    const isa::EventsPart first = events(d.program.front()), last = events(d.program.back());
    EXPECT_EQ(first.wait_mode, isa::WaitMode::WAIT_EQ);
    EXPECT_EQ(first.wait_sem, sem.ready[s % 2]);
    EXPECT_EQ(first.wait_value, token);
    EXPECT_EQ(last.update_mode, isa::UpdateMode::SET);
    EXPECT_EQ(last.update_sem, sem.done[s % 2]);
    EXPECT_EQ(last.update_value, token);
    for (std::size_t i = 1; i + 1 < d.program.size(); ++i)
      EXPECT_EQ(events(d.program[i]).wait_mode, isa::WaitMode::NONE) << "instruction " << i;
  }
  std::uint64_t total = 0;
  for (unsigned c = 0; c < 4; ++c) {
    EXPECT_EQ(lowering.copies(c), counted[c]);
    total += counted[c];
  }
  EXPECT_EQ(lowering.copies(), total);
}

TEST(DmaPlan, AStepsKTilesOfAnOperandMoveAsOneSliceOfItsImage) {
  // One step of 4 k-tiles (128 x 512 x 128, bf16): A's 4 tiles of 256 bytes per partition lie side by side in SBUF
  // and in A's image, so they move as 1 KiB rows; B's likewise. The step's 256 KiB over 15 data engines: each slice
  // (128 KiB) is cut into 128 KiB / (256 KiB / 15) = 7 descriptors of whole partitions.
  const host::GemmPlan plan = double_buffered(128, 512, 128, 4096);
  ASSERT_EQ(plan.steps.size(), 1u);
  host::DmaGemm lowering(plan, dma::kHbmBase, host::DmaQueueUse{16, 16});
  const host::DmaStep d = lowering.lower(plan.steps[0], nullptr, nullptr);
  unsigned loads = 0;
  std::uint32_t rows = 0;
  for (const host::QueuedDescriptor& q : d.descriptors) {
    if (q.descriptor.kind != dma::Kind::COPY || q.descriptor.dst >= dma::kHbmBase) continue;
    ++loads;
    rows += q.descriptor.rows;
    EXPECT_EQ(q.descriptor.row_bytes, 4u * 128u * 2u);
  }
  EXPECT_EQ(loads, 14u);
  EXPECT_EQ(rows, 2u * 128u) << "A's and B's 128 partitions each";
  EXPECT_EQ(d.load_bytes, 2u * 128u * 1024u);
}

// One buffer (the fallback when two do not fit): a step's loads wait for the previous step to have computed.
TEST(DmaPlan, WithOneBufferEachStepsLoadsWaitForThePreviousStep) {
  host::GemmOptions o;
  o.tile_n = 128;
  o.sbuf_bytes_per_partition = 2048;  // 4 k-tiles of 512 bytes a step: K = 4096 is 8 steps
  const host::GemmPlan plan = host::plan_gemm({128, 4096, 128}, o);
  ASSERT_EQ(plan.steps.size(), 8u);
  const host::DmaSemaphores sem;
  host::DmaGemm lowering(plan, dma::kHbmBase, host::DmaQueueUse{16, 16});
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const host::DmaStep d = lowering.lower(plan.steps[s], nullptr, nullptr);
    for (const host::QueuedDescriptor& q : d.descriptors) {
      const dma::Descriptor& x = q.descriptor;
      if (x.kind != dma::Kind::COPY || x.dst >= dma::kHbmBase) continue;
      if (s == 0) {
        EXPECT_EQ(x.wait_mode, isa::WaitMode::NONE);
        continue;
      }
      EXPECT_EQ(x.wait_sem, sem.done[0]);
      EXPECT_EQ(x.wait_value, s) << "token(s - 1) = s - 1 + 1";
    }
    EXPECT_EQ(events(d.program.back()).update_value, s + 1);
  }
}

TEST(DmaPlan, APlanOfThreeBuffersIsRefused) {
  host::GemmPlan plan = double_buffered(128, 128, 128, 4096);
  plan.options.sbuf_buffers = 3;
  try {
    host::DmaGemm lowering(plan, dma::kHbmBase, host::DmaQueueUse{16, 16});
    FAIL() << "lowered";
  } catch (const host::HostError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a plan of one or two SBUF buffers, got 3"), std::string::npos)
        << e.what();
  }
}

// Double-buffered B panels (D-GEMM-DMA-PANELS) on the plan of host.PlanBuffers.APanelStays...: 512 x 1024 x 1024 bf16,
// tile_n 128, 8 KiB per partition -- panels of 2 n-tiles (4 panels), one m-block per step, 16 steps, PSUM halves.
// Hand-derived protocol: a panel's loads wait for the previous step (it read the old panel), a step's A loads for the
// step two before (its buffer), evictions count for the step two later (the next step on the same PSUM half). With
// the images chunked as the plan loads them, a step's A (8 k-tiles x 256 bytes) is one slice of 2 KiB rows and a
// panel (8 k-tiles x 2 n-tiles x 256 bytes) one slice of 4 KiB rows.
TEST(DmaPlan, PanelsAndATilesWaitForTheirLastReadersAndMoveAsOneSliceEach) {
  host::GemmOptions o;
  o.gen = isa::Generation::MARIANA;
  o.tile_n = 128;
  o.sbuf_bytes_per_partition = 8192;
  o.sbuf_buffers = 2;
  const host::GemmPlan plan = host::plan_gemm({512, 1024, 1024}, o);
  ASSERT_EQ(plan.steps.size(), 16u);
  ASSERT_EQ(plan.psum_buffers, 2u);
  const host::DmaSemaphores sem;
  host::DmaGemm lowering(plan, dma::kHbmBase, host::DmaQueueUse{16, 16});
  std::uint64_t counted[4] = {};
  const auto token = [](std::size_t step) { return static_cast<std::uint32_t>(step / 2 + 1); };
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    const host::DmaStep d = lowering.lower(plan.steps[s], nullptr, nullptr);
    std::uint64_t a_bytes = 0, b_bytes = 0;
    for (const host::QueuedDescriptor& q : d.descriptors) {
      const dma::Descriptor& x = q.descriptor;
      EXPECT_TRUE(dma::validate(x, 32).ok()) << dma::validate(x, 32).message;
      if (x.kind == dma::Kind::SIGNAL) {
        EXPECT_EQ(x.wait_sem, sem.copies[s % 4]);
        EXPECT_EQ(x.wait_value, counted[s % 4]) << "this step's loads and the evictions of step s - 2";
        continue;
      }
      if (x.dst >= dma::kHbmBase) {  // an eviction
        ++counted[(s + 2) % 4];
        EXPECT_EQ(x.update_sem, sem.copies[(s + 2) % 4]);
        EXPECT_EQ(x.wait_sem, sem.done[s % 2]);
        EXPECT_EQ(x.wait_value, token(s));
        continue;
      }
      ++counted[s % 4];
      const bool panel = x.dst % 8192 < 4096;  // SBUF offset within the partition
      if (panel) {
        b_bytes += std::uint64_t{x.row_bytes} * x.rows;
        EXPECT_EQ(x.row_bytes, 4096u) << "the whole panel row at once";
        EXPECT_EQ(x.wait_mode, s == 0 ? isa::WaitMode::NONE : isa::WaitMode::WAIT_EQ);
        if (s > 0) {
          EXPECT_EQ(x.wait_sem, sem.done[(s - 1) % 2]);
          EXPECT_EQ(x.wait_value, token(s - 1)) << "the previous step read the old panel";
        }
      } else {
        a_bytes += std::uint64_t{x.row_bytes} * x.rows;
        EXPECT_EQ(x.row_bytes, 2048u) << "the step's 8 k-tiles of its m-block at once";
        EXPECT_EQ(x.wait_mode, s < 2 ? isa::WaitMode::NONE : isa::WaitMode::WAIT_EQ);
        if (s >= 2) {
          EXPECT_EQ(x.wait_sem, sem.done[s % 2]);
          EXPECT_EQ(x.wait_value, token(s - 2)) << "its A buffer's previous step";
        }
      }
    }
    EXPECT_EQ(a_bytes, 128u * 2048u);
    EXPECT_EQ(b_bytes, s % 4 == 0 ? 128u * 4096u : 0u);
  }
}

}  // namespace
