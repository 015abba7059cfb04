// Writes the seed corpus of tests/fuzz/fuzz_checkpoint (a selector byte, then a checkpoint) when
// PEVP_CKPT_SEED_DIR names a directory: for each of the harness's three configurations, a checkpoint of a fresh
// platform at time 0 and one taken after a small program that leaves every section non-trivial (a stationary, an
// open PSUM group, a semaphore, a fault with instructions queued behind it), with one non-zero SBUF and PSUM page so
// the seeds stay small. Without the variable it checks that such checkpoints read back against their own
// configuration.
//   PEVP_CKPT_SEED_DIR=tests/fuzz/corpus/checkpoint build/tests/checkpoint/checkpoint_tests
//     --gtest_filter='*CheckpointSeeds*'   (one process per configuration: ctest runs them so)
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "ckpt_scenario.h"

namespace {

using namespace ckt;

class CheckpointSeeds : public ::testing::TestWithParam<int> {};

TEST_P(CheckpointSeeds, SmallCheckpointsForTheFuzzer) {
  const int selector = GetParam();
  platform::VpConfig cfg = selector == 0 ? platform::preset(Generation::CAYMAN) : platform::preset(Generation::MARIANA);
  if (selector == 2) platform::apply_override(cfg, "tensor_engine.psum_rounding=stochastic");
  const Generation g = cfg.gen();
  platform::VirtualPlatform vp(cfg);
  std::vector<std::vector<std::uint8_t>> seeds;
  vp.run([&](platform::Driver& d) {
    seeds.push_back(platform::save_checkpoint(vp.platform()));
    d.arm();
    const std::uint16_t one = 0x3F80;
    d.write(d.map().sbuf + 0x0, &one, 2);
    d.write(d.map().sbuf + 0x1000, &one, 2);
    isa::EventsArgs set;
    set.update_mode = isa::UpdateMode::SET;
    set.update_sem = kSemaphore;
    set.update_value = kSemaphoreValue;
    isa::MatmulArgs bad;
    bad.src = isa::Pattern::row(0x1000, 64);
    bad.dst = isa::Pattern::row(kPsumBase, 64);
    bad.num_active_rows = bad.num_active_cols = 64;
    bad.tile = {0, 64, 0, 64};
    d.submit({ldweights(g, 0x0), matmul(g, 0x1000, 0, pf::MULTI_START, Dtype::FP32, set), isa::encode_matmul(g, bad),
              matmul(g, 0x1000, 0, pf::MULTI_END)});
    const platform::Completion c = d.wait_idle();
    ASSERT_TRUE(c.error);
    seeds.push_back(platform::save_checkpoint(vp.platform()));
  });
  for (const auto& s : seeds) EXPECT_NO_THROW(platform::read_checkpoint(s.data(), s.size(), cfg, "seed"));
  if (const char* dir = std::getenv("PEVP_CKPT_SEED_DIR")) {
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      std::ofstream out(std::string(dir) + "/seed_" + std::to_string(selector) + "_" + std::to_string(i),
                        std::ios::binary);
      const char sel = static_cast<char>(selector);
      out.write(&sel, 1);
      out.write(reinterpret_cast<const char*>(seeds[i].data()), static_cast<std::streamsize>(seeds[i].size()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configurations, CheckpointSeeds, ::testing::Values(0, 1, 2));

}  // namespace
