// Bit- and cycle-identical continuation across real processes: this test runs program A then B uninterrupted in
// its own process, then starts this same executable twice more (/proc/self/exe, the test's own --gtest_filter and
// PEVP_CKPT_ROLE): one process runs A and saves a checkpoint file, a fresh one restores it and runs B. The
// observations (every CSR of every face, the 48-bit retired count, PSUM and SBUF bytes, the completion time and the
// whole --stats-json document, the PeRegWrite value) must be equal.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ckpt_scenario.h"

namespace {

using namespace ckt;

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return buf;
}

std::string current_test() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Runs this test again in a new process with `role`; its output goes to `log`.
int run_role(const std::string& role, const std::filesystem::path& dir) {
  const std::string cmd = "PEVP_CKPT_ROLE=" + role + " PEVP_CKPT_DIR=" + quoted(dir.string()) + " " +
                          quoted(self_exe()) + " --gtest_filter=" + quoted(current_test()) + " > " +
                          quoted((dir / (role + ".log")).string()) + " 2>&1";
  return std::system(cmd.c_str());
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class CheckpointRoundTrip : public ::testing::TestWithParam<std::tuple<Generation, platform::SimMode>> {};

TEST_P(CheckpointRoundTrip, ARestoredProcessContinuesBitAndCycleIdentical) {
  const auto [g, mode] = GetParam();
  platform::VpConfig cfg = scenario_config(g);
  cfg.mode = mode;
  const char* role = std::getenv("PEVP_CKPT_ROLE");
  const char* dir_env = std::getenv("PEVP_CKPT_DIR");
  if (role && dir_env) {  // a child process: one half of the cut
    const std::filesystem::path dir(dir_env);
    platform::VirtualPlatform vp(cfg);
    nlohmann::json seen;
    vp.run([&](platform::Driver& d) {
      if (std::string(role) == "save") {
        run_a(d, cfg.geometry, g, mode);
        platform::save_checkpoint_file(vp.platform(), (dir / "cut.ckpt").string());
      } else {
        platform::restore_checkpoint_file(vp.platform(), (dir / "cut.ckpt").string());
        run_b(d, g);
        seen = observe(d, vp.platform());
      }
    });
    if (!seen.is_null()) std::ofstream(dir / "restored.json") << seen.dump(1);
    return;
  }

  // The uninterrupted run, in this process.
  platform::VirtualPlatform vp(cfg);
  nlohmann::json expected;
  vp.run([&](platform::Driver& d) {
    run_a(d, cfg.geometry, g, mode);
    run_b(d, g);
    expected = observe(d, vp.platform());
  });
  ASSERT_FALSE(HasFailure());

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pevp_ckpt_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_EQ(run_role("save", dir), 0) << slurp(dir / "save.log");
  ASSERT_TRUE(std::filesystem::exists(dir / "cut.ckpt")) << slurp(dir / "save.log");
  ASSERT_EQ(run_role("restore", dir), 0) << slurp(dir / "restore.log");
  const nlohmann::json restored = nlohmann::json::parse(slurp(dir / "restored.json"));

  // Field by field, so a difference names what differs.
  EXPECT_EQ(restored["done_at_ps"], expected["done_at_ps"]) << "completion time";
  EXPECT_EQ(restored["end_ps"], expected["end_ps"]);
  EXPECT_EQ(restored["retired"], expected["retired"]);
  EXPECT_EQ(restored["pe_register"], expected["pe_register"]);
  for (const auto& [name, value] : expected["csrs"].items()) EXPECT_EQ(restored["csrs"][name], value) << name;
  for (std::size_t p = 0; p < expected["psum"].size(); ++p)
    EXPECT_EQ(restored["psum"][p], expected["psum"][p]) << "PSUM partition " << p;
  for (std::size_t p = 0; p < expected["sbuf"].size(); ++p)
    EXPECT_EQ(restored["sbuf"][p], expected["sbuf"][p]) << "SBUF partition " << p;
  EXPECT_EQ(restored["stats"].dump(1), expected["stats"].dump(1));
  // The scenario did what it is meant to: the queued instructions and B ran, the cut crossed real state.
  EXPECT_EQ(expected["retired"].get<std::uint64_t>(), program_a(g, mode).size() - 1 + program_b(g).size());
  if (mode != platform::SimMode::Functional) {
    EXPECT_GT(expected["stats"]["stall_cycles"]["inter_instr_delay"].get<std::uint64_t>(), 0u);
    EXPECT_GT(expected["stats"]["stall_cycles"]["serialised"].get<std::uint64_t>(), 0u);
  }
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Generations, CheckpointRoundTrip,
    ::testing::Values(std::make_tuple(Generation::MARIANA, platform::SimMode::Both),
                      std::make_tuple(Generation::CAYMAN, platform::SimMode::Both),
                      std::make_tuple(Generation::MARIANA_PLUS, platform::SimMode::Both),
                      std::make_tuple(Generation::MARIANA, platform::SimMode::Timing),
                      std::make_tuple(Generation::CAYMAN, platform::SimMode::Functional)),
    [](const ::testing::TestParamInfo<std::tuple<Generation, platform::SimMode>>& i) {
      return std::string(isa::name(std::get<0>(i.param))) + "_" + std::string(platform::name(std::get<1>(i.param)));
    });

}  // namespace
