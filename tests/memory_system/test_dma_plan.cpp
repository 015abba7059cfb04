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

}  // namespace
