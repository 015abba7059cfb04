// Every fault reaches the error record, `pe-vp run`'s exit status (1) and the C API, whatever the simulation mode
// and whenever the instructions before it respond. The delicate case: a Matmul, then a last instruction the array
// refuses (a PeManageSeed whose identity is not one). With timing, the Matmul responds while the SEQ waits to report
// the fault in program order; its retirement must find the faulting instruction still queued, not a done program
// (else `pe-vp run` prints "3 instructions, 2 retired, done" and exits 0).
//
// One simulated run per test (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pevp/isa/builders.h"
#include "pevp/isa/rules.h"
#include "pevp/pevp.h"
#include "pevp/platform/config.h"
#include "pevp/platform/run.h"

namespace {

using namespace pevp;
namespace fs = std::filesystem;
constexpr auto kGen = isa::Generation::MARIANA;
constexpr std::uint32_t kMovingOffset = 4096;

// How the run is simulated and when a Matmul responds (its first or its last column's PSUM commit).
struct Case {
  const char* mode;  // "functional", "timing", "both"
  bool matmul_done_last;
  // The last instruction: refused by the array when it executes (the seed micro-op finds no identity) or by the
  // firmware before it issues (an invalid field).
  bool array_fault;
};

std::string case_name(const testing::TestParamInfo<Case>& i) {
  return std::string(i.param.mode) + (i.param.matmul_done_last ? "_DoneLast" : "_DoneFirst") +
         (i.param.array_fault ? "_ArrayFault" : "_FirmwareFault");
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (const char* mode : {"functional", "timing", "both"})
    for (bool last : {false, true})
      for (bool array : {true, false})
        // A timing-only run moves no data, so the identity's value is never seen: no array fault to report.
        if (!array || std::string(mode) != "timing") v.push_back({mode, last, array});
  return v;
}

// Ldweights + Matmul (128 x 128 x 512 fp32 -> PSUM bank 0), then the faulting instruction: 3 instructions, the fault
// at index 2.
std::vector<isa::RawInstruction> program(bool array_fault) {
  isa::LdweightsArgs lw;
  lw.src = isa::Pattern::row(0, 128);
  lw.num_active_rows = 128;
  lw.num_active_cols = 128;
  isa::MatmulArgs mm;
  mm.src = isa::Pattern::row(kMovingOffset, 512);
  mm.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, 512);
  mm.num_active_rows = 128;
  mm.num_active_cols = 128;
  isa::PeSeedArgs seed;
  seed.mode = isa::PeSeedMode::SAVE_SEED;
  // SBUF holds zeros: the identity the seed LdWeight stages is no identity (exec.seed_identity, at run time).
  seed.identity = isa::Pattern::row(0x1000, 16);
  seed.identity_dtype = isa::Dtype::BFLOAT16;
  seed.dst_seed = {isa::ArrayGeometry::kPsumBase, {1, 512}, {2, 8}};
  isa::RawInstruction last = isa::encode_pe_seed(kGen, seed);
  // An identity dtype outside the set is refused before anything issues.
  if (!array_fault) last[32] = static_cast<std::uint8_t>(isa::Dtype::FP32);
  return {isa::encode_ldweights(kGen, lw), isa::encode_matmul(kGen, mm), last};
}

const char* expected_rule(bool array_fault) { return array_fault ? "exec.seed_identity" : "pe_seed.identity_dtype"; }

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("pevp_fault_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

class FaultAfterMatmul : public testing::TestWithParam<Case> {};

TEST_P(FaultAfterMatmul, PeVpRunExitsWith1AndNamesTheFault) {
  const Case& c = GetParam();
  const fs::path bin = scratch("p.bin"), regs = scratch("regs.txt");
  {
    std::ofstream f(bin, std::ios::binary);
    for (const auto& r : program(c.array_fault)) f.write(reinterpret_cast<const char*>(r.data()), r.size());
  }
  std::ofstream(regs) << "write cluster arr_cluster_cfg.matmul_done_last " << (c.matmul_done_last ? 1 : 0)
                      << "\nwait\n";
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = bin.string();
  cmd.regs = regs.string();
  platform::VpConfig cfg = platform::preset(kGen);
  platform::apply_override(cfg, std::string("mode=") + c.mode);
  cmd.config = cfg;
  std::ostringstream out, err;
  const int status = platform::run_program(cmd, out, err);
  EXPECT_EQ(status, 1) << out.str() << err.str();
  EXPECT_NE(err.str().find("the program faulted: instruction 2 (PE_MANAGE_SEED)"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find(expected_rule(c.array_fault)), std::string::npos) << err.str();
  EXPECT_EQ(out.str().find("retired, done"), std::string::npos) << out.str();
}

TEST_P(FaultAfterMatmul, TheCApiSeesTheErrorAndItsRecord) {
  const Case& c = GetParam();
  const std::string mode = std::string("mode=") + c.mode;
  const char* settings[] = {mode.c_str()};
  pevp_vp* vp = nullptr;
  ASSERT_EQ(pevp_open_config("MARIANA", settings, 1, &vp), PEVP_OK) << pevp_open_error();
  ASSERT_EQ(pevp_arm(vp, 0, 0, 0), PEVP_OK) << pevp_last_error(vp);
  ASSERT_EQ(pevp_write_reg(vp, "cluster", "arr_cluster_cfg.matmul_done_last", c.matmul_done_last ? 1 : 0), PEVP_OK)
      << pevp_last_error(vp);
  const std::vector<isa::RawInstruction> p = program(c.array_fault);
  ASSERT_EQ(pevp_submit(vp, p.data(), p.size()), PEVP_OK) << pevp_last_error(vp);
  pevp_completion done{};
  ASSERT_EQ(pevp_wait_idle(vp, 1000000, &done), PEVP_OK) << pevp_last_error(vp);
  EXPECT_EQ(done.error, 1);
  EXPECT_EQ(done.done, 0);
  EXPECT_EQ(done.retired, 2u);
  pevp_error_info info{};
  ASSERT_EQ(pevp_error_record(vp, &info), PEVP_OK) << pevp_last_error(vp);
  EXPECT_EQ(info.valid, 1);
  EXPECT_EQ(info.index, 2u);
  EXPECT_EQ(info.opcode, 0x08u);
  EXPECT_EQ(info.rule_number, isa::rule_number(expected_rule(c.array_fault)));
  // The record stays until the driver clears it; then the program is complete.
  std::uint32_t error_bit = 0;
  ASSERT_EQ(pevp_read_reg(vp, "vp", "seq_status.error", &error_bit), PEVP_OK) << pevp_last_error(vp);
  EXPECT_EQ(error_bit, 1u);
  ASSERT_EQ(pevp_clear_error(vp), PEVP_OK) << pevp_last_error(vp);
  ASSERT_EQ(pevp_wait_idle(vp, 1000000, &done), PEVP_OK) << pevp_last_error(vp);
  EXPECT_EQ(done.done, 1);
  EXPECT_EQ(done.error, 0);
  pevp_close(vp);
}

INSTANTIATE_TEST_SUITE_P(Modes, FaultAfterMatmul, testing::ValuesIn(all_cases()), case_name);

// The array-refused seed instruction at each position of Ldweights, Matmul, Ldweights, Matmul: after nothing, after
// each kind, last or with instructions behind it. The record names it, the ones before it retired, none after.
struct Position {
  const char* mode;
  std::size_t at;
};

class FaultAtEachPosition : public testing::TestWithParam<Position> {};

TEST_P(FaultAtEachPosition, IsReportedWithTheInstructionsBeforeItRetired) {
  const Position& c = GetParam();
  const std::vector<isa::RawInstruction> base = program(true);
  std::vector<isa::RawInstruction> p = {base[0], base[1], base[0], base[1]};
  p.insert(p.begin() + static_cast<std::ptrdiff_t>(c.at), base[2]);
  const std::string mode = std::string("mode=") + c.mode;
  const char* settings[] = {mode.c_str()};
  pevp_vp* vp = nullptr;
  ASSERT_EQ(pevp_open_config("MARIANA", settings, 1, &vp), PEVP_OK) << pevp_open_error();
  ASSERT_EQ(pevp_arm(vp, 0, 0, 0), PEVP_OK) << pevp_last_error(vp);
  ASSERT_EQ(pevp_submit(vp, p.data(), p.size()), PEVP_OK) << pevp_last_error(vp);
  pevp_completion done{};
  ASSERT_EQ(pevp_wait_idle(vp, 1000000, &done), PEVP_OK) << pevp_last_error(vp);
  EXPECT_EQ(done.error, 1);
  EXPECT_EQ(done.done, 0);
  EXPECT_EQ(done.retired, c.at);
  pevp_error_info info{};
  ASSERT_EQ(pevp_error_record(vp, &info), PEVP_OK) << pevp_last_error(vp);
  EXPECT_EQ(info.index, c.at);
  EXPECT_EQ(std::string(info.rule), "exec.seed_identity");
  // Cleared, the rest runs to done.
  ASSERT_EQ(pevp_clear_error(vp), PEVP_OK) << pevp_last_error(vp);
  ASSERT_EQ(pevp_wait_idle(vp, 1000000, &done), PEVP_OK) << pevp_last_error(vp);
  EXPECT_EQ(done.done, 1);
  EXPECT_EQ(done.error, 0);
  EXPECT_EQ(done.retired, p.size() - 1);
  pevp_close(vp);
}

INSTANTIATE_TEST_SUITE_P(Modes, FaultAtEachPosition,
                         testing::Values(Position{"functional", 0}, Position{"functional", 1}, Position{"functional", 2},
                                         Position{"functional", 3}, Position{"functional", 4}, Position{"both", 0},
                                         Position{"both", 1}, Position{"both", 2}, Position{"both", 3},
                                         Position{"both", 4}),
                         [](const testing::TestParamInfo<Position>& i) {
                           return std::string(i.param.mode) + "_At" + std::to_string(i.param.at);
                         });

}  // namespace
