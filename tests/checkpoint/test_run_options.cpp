// `pe-vp run --checkpoint FILE` and `--restore FILE` through run_program, each run in its own process (this
// executable started again with PEVP_CKPT_ROLE): program A saved at its end, program B restored from it, against
// A and B in one run -- the same PSUM bytes (the dump), and the restored run's retired count goes on from A's.
// Bad checkpoints and unwritable paths fail with status 2 before anything is simulated; a checkpoint well formed but
// impossible fails with status 2 when it is applied.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ckpt_fields.h"
#include "ckpt_scenario.h"
#include "pevp/host/npy.h"
#include "pevp/platform/run.h"

namespace {

using namespace ckt;
namespace fs = std::filesystem;

constexpr Generation kGen = Generation::MARIANA;

std::vector<isa::RawInstruction> run_a_program() {
  isa::EventsArgs set;
  set.update_mode = isa::UpdateMode::SET;
  set.update_sem = kSemaphore;
  set.update_value = kSemaphoreValue;
  return {ldweights(kGen, 0x0000), matmul(kGen, 0x1000, 0, pf::SINGLE, Dtype::FP32, set)};
}
std::vector<isa::RawInstruction> run_b_program() {
  isa::EventsArgs wait;
  wait.wait_mode = isa::WaitMode::WAIT_GE;
  wait.wait_sem = kSemaphore;
  wait.wait_value = kSemaphoreValue;
  return {matmul(kGen, 0x1000, 1, pf::SINGLE, Dtype::FP32, wait), matmul(kGen, 0x1000, 2, pf::SINGLE)};
}

void write_program(const fs::path& p, const std::vector<isa::RawInstruction>& program) {
  std::ofstream out(p, std::ios::binary);
  for (const auto& r : program) out.write(reinterpret_cast<const char*>(r.data()), static_cast<std::streamsize>(r.size()));
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

platform::RunCommand command(const fs::path& dir, const std::string& program) {
  platform::RunCommand c;
  c.gen = kGen;
  c.program = (dir / program).string();
  return c;
}

std::vector<platform::LoadSpec> loads(const fs::path& dir) {
  return {{(dir / "st.npy").string(), 0x0, "bf16"}, {(dir / "mv.npy").string(), 0x1000, "bf16"}};
}

platform::DumpSpec dump(const fs::path& dir, const std::string& name) {
  platform::DumpSpec d;
  d.address = kPsumBase;
  d.rows = 128;
  d.cols = 3 * kBank / 4;  // banks 0-2 of each partition, as fp32
  d.dtype = "fp32";
  d.file = (dir / name).string();
  return d;
}

int child(const std::string& role, const fs::path& dir) {
  std::ostringstream out, err;
  platform::RunCommand c;
  if (role == "save") {
    c = command(dir, "a.bin");
    c.loads = loads(dir);
    c.checkpoint = (dir / "a.ckpt").string();
  } else if (role == "restore") {
    c = command(dir, "b.bin");
    c.restore = (dir / "a.ckpt").string();
    c.dumps = {dump(dir, "restored.npy")};
  } else {
    c = command(dir, "ab.bin");
    c.loads = loads(dir);
    c.dumps = {dump(dir, "whole.npy")};
  }
  const int status = platform::run_program(c, out, err);
  std::ofstream(dir / (role + ".out")) << out.str() << err.str();
  return status;
}

TEST(RunCheckpointOptions, ARunRestoredFromAnotherRunsCheckpointContinuesIt) {
  const char* role = std::getenv("PEVP_CKPT_ROLE");
  const char* dir_env = std::getenv("PEVP_CKPT_DIR");
  if (role && dir_env) {
    ASSERT_EQ(child(role, dir_env), 0) << slurp(fs::path(dir_env) / (std::string(role) + ".out"));
    return;
  }
  const fs::path dir = fs::temp_directory_path() / ("pevp_ckpt_run_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  pevp::host::Matrix st(128, 128), mv(128, 64);
  for (std::size_t i = 0; i < st.data.size(); ++i) st.data[i] = static_cast<float>((i * 37) % 17) / 8.0f - 1.0f;
  for (std::size_t i = 0; i < mv.data.size(); ++i) mv.data[i] = static_cast<float>((i * 11) % 13) / 4.0f - 1.5f;
  pevp::host::write_npy((dir / "st.npy").string(), st);
  pevp::host::write_npy((dir / "mv.npy").string(), mv);
  auto ab = run_a_program();
  const auto b = run_b_program();
  write_program(dir / "a.bin", ab);
  write_program(dir / "b.bin", b);
  ab.insert(ab.end(), b.begin(), b.end());
  write_program(dir / "ab.bin", ab);
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(n, 0);
  exe[n] = '\0';
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  for (const std::string r : {"save", "restore", "whole"}) {
    const std::string cmd = "PEVP_CKPT_ROLE=" + r + " PEVP_CKPT_DIR='" + dir.string() + "' '" + exe +
                            "' --gtest_filter='" + info->test_suite_name() + "." + info->name() + "' > '" +
                            (dir / (r + ".log")).string() + "' 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << r << ":\n" << slurp(dir / (r + ".log"));
  }
  const std::string saved = slurp(dir / "save.out"), restored = slurp(dir / "restore.out");
  EXPECT_NE(saved.find("wrote " + (dir / "a.ckpt").string() + " (checkpoint)"), std::string::npos) << saved;
  EXPECT_NE(restored.find("2 instructions, 4 retired"), std::string::npos) << restored;
  EXPECT_NE(restored.find("restored " + (dir / "a.ckpt").string() + " (at "), std::string::npos) << restored;
  const std::string whole = slurp(dir / "whole.npy");
  EXPECT_FALSE(whole.empty());
  EXPECT_TRUE(slurp(dir / "restored.npy") == whole) << "the restored run's PSUM differs from the whole run's";
  if (!HasFailure()) fs::remove_all(dir);
}

TEST(RunCheckpointOptions, BadCheckpointsAndPathsAreStatusTwoBeforeSimulating) {
  const fs::path dir = fs::temp_directory_path() / ("pevp_ckpt_run_bad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_program(dir / "a.bin", run_a_program());
  std::ofstream(dir / "junk.ckpt") << "PEVPCKPT!";  // the magic and one byte of the version
  const auto run = [&](platform::RunCommand c, const std::string& expected) {
    std::ostringstream out, err;
    EXPECT_EQ(platform::run_program(c, out, err), 2) << err.str();
    EXPECT_EQ(err.str(), expected);
  };
  platform::RunCommand c = command(dir, "a.bin");
  c.restore = (dir / "junk.ckpt").string();
  run(c, "pe-vp run: checkpoint " + c.restore + ": truncated in the header at byte 8 reading the format version " +
             "(needs 4 bytes, 1 left)\n");
  c.restore = (dir / "missing.ckpt").string();
  run(c, "pe-vp run: checkpoint " + c.restore + ": cannot open: No such file or directory\n");
  c.restore = dir.string();
  run(c, "pe-vp run: checkpoint " + c.restore + ": is a directory\n");
  c.restore.clear();
  c.checkpoint = (dir / "nowhere" / "a.ckpt").string();
  run(c, "pe-vp run: --checkpoint " + c.checkpoint + ": no such directory '" + (dir / "nowhere").string() + "'\n");
  c.checkpoint = dir.string();
  run(c, "pe-vp run: --checkpoint " + c.checkpoint + ": is a directory\n");
  fs::remove_all(dir);
}

// A checkpoint made on purpose (a field edited, the CRCs recomputed; ckpt_fields.h) is refused with status 2 and the
// rule it breaks, whether the reader refuses it before simulating (a time past the supported limit) or the unit's
// rule when it is applied (a tile's stream port at cycle 7e16: the run after it never finished). The checkpoint is
// saved by a forked child's run, before this process elaborates anything.
TEST(RunCheckpointOptions, ACraftedCheckpointIsStatusTwoNamingTheRule) {
  const fs::path dir = fs::temp_directory_path() / ("pevp_ckpt_run_crafted_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  pevp::host::Matrix st(128, 128), mv(128, 64);
  pevp::host::write_npy((dir / "st.npy").string(), st);
  pevp::host::write_npy((dir / "mv.npy").string(), mv);
  write_program(dir / "a.bin", run_a_program());
  write_program(dir / "b.bin", run_b_program());
  const pid_t pid = ::fork();
  if (pid == 0) std::_Exit(child("save", dir));
  int status = -1;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(dir / "save.out");
  std::ifstream in(dir / "a.ckpt", std::ios::binary);
  const ckf::Bytes cut((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto run_restoring = [&](const ckf::Bytes& bytes, const std::string& expected) {
    const fs::path file = dir / "crafted.ckpt";
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    platform::RunCommand c = command(dir, "b.bin");
    c.restore = file.string();
    std::ostringstream out, err;
    EXPECT_EQ(platform::run_program(c, out, err), 2) << err.str();
    EXPECT_EQ(err.str(), "pe-vp run: checkpoint " + file.string() + ": " + expected + "\n");
  };
  run_restoring(ckf::with_field(cut, "time.value", std::uint64_t{1} << 63),
                "section 'time': the simulated time 9223372036854775808 ps is past the latest this pe-vp supports, "
                "1000 s (10^15 ps, D-SIM-TIME-LIMIT)");
  // Last: this run elaborates the platform (the unit rules are checked in its host thread).
  const std::uint64_t limit = static_cast<std::uint64_t>(platform::kMaxCheckpointTimePs * 2.4 / 1000);
  run_restoring(ckf::with_field(cut, "arr_seq.tiles[0].stream_free", 70000000000000000ull),
                "section 'arr_seq': tile state 0: its stream frees at cycle 70000000000000000, past the latest cycle "
                "this pe-vp supports (" + std::to_string(limit) + ")");
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
