// `pe-vp asm` (run_asm) against real files: a good program is written in full
// and disassembles back to text that assembles to the same bytes; a bad one
// reports file:line:col and leaves an existing output file untouched.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unistd.h>

#include "pevp/isa/decode.h"
#include "pevp/platform/asm_cmd.h"
#include "pevp/platform/disasm.h"

namespace {
using namespace pevp;
using isa::Generation;
namespace fs = std::filesystem;

class AsmCmd : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pevp_asm_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);  // a killed run with the same pid may have left files behind
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  static std::vector<std::uint8_t> read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  fs::path dir_;
};

// A K-tiled accumulation group on MARIANA: two K tiles of 128 rows into one
// PSUM region (the program of docs/assembly.md).
const char* kProgram =
    ".gen MARIANA\n"
    ".const N = 512\n"
    ".const OUT = psum[0]\n"
    "ldweights src=sbuf[0]:[1,128] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,N] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF "
    "col_grp=0xF psum_accumulate_flags=MULTI_START dst=OUT:[1,N]\n"
    "ldweights src=sbuf[0]+0x100:[1,128] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF "
    "col_grp=0xF\n"
    "matmul src=sbuf[0]+0x2000:[1,N] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF "
    "col_grp=0xF flags.accumulate_flag=ACCUMULATE psum_accumulate_flags=MULTI_END dst=OUT:[1,N]\n";

TEST_F(AsmCmd, ProgramAssemblesAndDisassemblesBackToTheSameBytes) {
  const auto src = write("k.s", kProgram), bin = (dir_ / "k.bin").string();
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_asm(Generation::MARIANA, src, bin, {}, out, err), 0) << err.str();
  EXPECT_TRUE(err.str().empty()) << err.str();
  EXPECT_NE(out.str().find("wrote 4 instruction(s) (256 bytes)"), std::string::npos) << out.str();
  const auto bytes = read(bin);
  ASSERT_EQ(bytes.size(), 256u);
  EXPECT_EQ(isa::decode(Generation::MARIANA, bytes.data() + 64).get("psum_accumulate_flags"), 1);
  EXPECT_EQ(isa::decode(Generation::MARIANA, bytes.data() + 192).get("flags.accumulate_flag"), 1);
  EXPECT_EQ(isa::decode(Generation::MARIANA, bytes.data() + 192).get("dst_mem_pattern.start_addr"), 0x2000000);

  std::ostringstream text;
  ASSERT_EQ(platform::disassemble(bytes, {Generation::MARIANA, false}, text), platform::DisasmStatus::Ok);
  const auto again = write("again.s", text.str()), bin2 = (dir_ / "again.bin").string();
  std::ostringstream out2, err2;
  ASSERT_EQ(platform::run_asm(Generation::MARIANA, again, bin2, {}, out2, err2), 0) << err2.str() << text.str();
  EXPECT_EQ(read(bin2), bytes);
}

TEST_F(AsmCmd, ErrorsNameFileLineColumnAndLeaveTheOutputUntouched) {
  const auto src = write("bad.s", "# header\nmatmul in_dtype=bf17\nmatmul out_dtype=BFLOAT16\n");
  const auto bin = write("bad.bin", "old contents");
  std::ostringstream out, err;
  EXPECT_EQ(platform::run_asm(Generation::CAYMAN, src, bin, {}, out, err), 1);
  EXPECT_NE(err.str().find(src + ":2:17: error: in_dtype: unknown dtype 'bf17'"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find(src + ":3:8: error: out_dtype = 6: "), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("[mm.out_dtype]"), std::string::npos) << err.str();
  const auto kept = read(bin);
  EXPECT_EQ(std::string(kept.begin(), kept.end()), "old contents");
  EXPECT_FALSE(fs::exists(bin + ".asm-partial"));
}

TEST_F(AsmCmd, AllowInvalidWritesRuleBreakingRecordsWithWarnings) {
  const auto src = write("neg.s", "matmul out_dtype=BFLOAT16\n");
  const auto bin = (dir_ / "neg.bin").string();
  std::ostringstream out, err;
  EXPECT_EQ(platform::run_asm(Generation::CAYMAN, src, bin, {true}, out, err), 0) << err.str();
  EXPECT_NE(err.str().find(src + ":1:8: warning: out_dtype = 6:"), std::string::npos) << err.str();
  // The out_dtype rule, and one asm.missing for each field left out whose default breaks a rule: in_dtype, src,
  // row_grp, col_grp, dst (docs/assembly.md).
  EXPECT_NE(out.str().find(", 6 warning(s)\n"), std::string::npos) << out.str();
  ASSERT_EQ(read(bin).size(), 64u);
  EXPECT_EQ(read(bin)[40], 0x6);
  // Value errors stay errors even then.
  const auto src2 = write("neg2.s", "matmul out_dtype=BFLOAT17\n");
  std::ostringstream out2, err2;
  EXPECT_EQ(platform::run_asm(Generation::CAYMAN, src2, (dir_ / "neg2.bin").string(), {true}, out2, err2), 1);
  EXPECT_FALSE(fs::exists(dir_ / "neg2.bin"));
}

TEST_F(AsmCmd, MissingInputAndUnwritableOutputAreIoErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(platform::run_asm(Generation::MARIANA, (dir_ / "nope.s").string(), (dir_ / "x.bin").string(), {}, out,
                              err),
            2);
  EXPECT_NE(err.str().find("cannot open"), std::string::npos);
  const auto src = write("ok.s", "matmul\n");
  std::ostringstream out2, err2;
  EXPECT_EQ(platform::run_asm(Generation::MARIANA, src, (dir_ / "no_dir" / "x.bin").string(), {true}, out2, err2), 2);
  EXPECT_NE(err2.str().find("cannot create"), std::string::npos) << err2.str();
}

TEST_F(AsmCmd, GenerationMismatchIsAnError) {
  const auto src = write("g.s", ".gen MAVERICK\nmatmul\n");
  std::ostringstream out, err;
  EXPECT_EQ(platform::run_asm(Generation::MARIANA, src, (dir_ / "g.bin").string(), {true}, out, err), 1);
  EXPECT_NE(err.str().find(src + ":1:1: error: the file is for MAVERICK but --gen is MARIANA [asm.gen]"),
            std::string::npos)
      << err.str();
}

}  // namespace
