// Writes the seed corpus of tests/fuzz/fuzz_checkpoint (a selector byte, then a checkpoint) when
// PEVP_CKPT_SEED_DIR names a directory: for each of the harness's three configurations, a checkpoint of a fresh
// platform at time 0 and one taken after a small program that leaves every section non-trivial (a stationary, an
// open PSUM group, a semaphore, a fault with instructions queued behind it), with one non-zero SBUF and PSUM page so
// the seeds stay small. Without the variable it checks that such checkpoints read back against their own
// configuration.
//   PEVP_CKPT_SEED_DIR=tests/fuzz/corpus/checkpoint build/tests/checkpoint/checkpoint_tests
//     --gtest_filter='*CheckpointSeeds*/0'   (and /1, /2: one process per configuration, as ctest runs them)
// CheckpointCorpus holds the committed seeds to the current format and configuration keys: when a key is added,
// it fails until they are written again so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

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

// The committed seeds are checkpoints this pe-vp still reads against their selector's configuration -- a seed
// written before a configuration key was added is refused at the key comparison, and the fuzzer then never gets
// past it -- and MARIANA's restore into a fresh platform, after which a program runs to completion.
TEST(CheckpointCorpus, TheCommittedSeedsReadAndRestore) {
  std::vector<std::filesystem::path> seeds;
  for (const auto& e : std::filesystem::directory_iterator(PEVP_CKPT_CORPUS)) seeds.push_back(e.path());
  std::sort(seeds.begin(), seeds.end());
  ASSERT_GE(seeds.size(), 6u);
  std::vector<std::vector<std::uint8_t>> marianas;
  for (const auto& path : seeds) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<std::uint8_t> seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GE(seed.size(), 2u) << path;
    const int selector = seed[0] % 3;
    platform::VpConfig cfg = selector == 0 ? platform::preset(Generation::CAYMAN) : platform::preset(Generation::MARIANA);
    if (selector == 2) platform::apply_override(cfg, "tensor_engine.psum_rounding=stochastic");
    try {
      platform::read_checkpoint(seed.data() + 1, seed.size() - 1, cfg, path.filename().string());
    } catch (const platform::CheckpointError& e) {
      ADD_FAILURE() << e.what() << " (regenerate the seeds: see the top of this file)";
    }
    if (selector == 1) marianas.emplace_back(seed.begin() + 1, seed.end());
  }
  ASSERT_EQ(marianas.size(), 2u);
  // The later seed (taken after its program) into the platform first, then the one at time 0 is refused by time.
  platform::VirtualPlatform vp(platform::preset(Generation::MARIANA));
  vp.run([&](platform::Driver& d) {
    const std::vector<std::uint8_t>& later =
        platform::read_checkpoint(marianas[0].data(), marianas[0].size(), vp.platform().vp_config(), "a").time_value >
                platform::read_checkpoint(marianas[1].data(), marianas[1].size(), vp.platform().vp_config(), "b").time_value
            ? marianas[0]
            : marianas[1];
    platform::restore_checkpoint(vp.platform(), later, "seed");
    d.clear_error();
    d.submit({ldweights(Generation::MARIANA, 0x0), matmul(Generation::MARIANA, 0x1000, 7, pf::SINGLE)});
    const platform::Completion c = d.wait_idle(sc_core::sc_time(1, sc_core::SC_MS));
    EXPECT_TRUE(c.done && !c.error && !c.timed_out);
  });
}

}  // namespace
