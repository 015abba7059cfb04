// pevp_tools' disassembler against hand-built streams: valid programs print one
// line per record, broken records keep their fields and name index + rule.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "pevp/isa/builders.h"
#include "pevp/platform/disasm.h"
#include "pevp/platform/samples.h"

namespace {
using namespace pevp;
using isa::Generation;

std::vector<std::uint8_t> bytes_of(const std::vector<isa::RawInstruction>& records) {
  std::vector<std::uint8_t> out;
  for (const auto& r : records) out.insert(out.end(), r.begin(), r.end());
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

isa::RawInstruction valid_matmul(Generation g) {
  isa::MatmulArgs mm;
  mm.src = isa::Pattern::row(0x400, 512);
  mm.dst = isa::Pattern::row(isa::Geometry::kPsumBase, 512);
  return isa::encode_matmul(g, mm);
}

TEST(Disasm, ValidStreamPrintsOneLinePerRecordAndReturnsOk) {
  std::ostringstream out;
  const auto status = platform::disassemble(bytes_of({valid_matmul(Generation::MARIANA), valid_matmul(Generation::MARIANA)}),
                                            {Generation::MARIANA, false}, out);
  EXPECT_EQ(status, platform::DisasmStatus::Ok);
  const auto l = lines(out.str());
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].rfind("[0000] MATMUL ", 0), 0u) << l[0];
  EXPECT_EQ(l[1].rfind("[0001] MATMUL ", 0), 0u) << l[1];
  EXPECT_NE(l[0].find("in_dtype=BFLOAT16"), std::string::npos);
  EXPECT_NE(l[0].find("dst_mem_pattern={start_addr=0x2000000"), std::string::npos);
}

TEST(Disasm, InvalidRecordKeepsFieldsAndNamesIndexAndRule) {
  auto bad = valid_matmul(Generation::CAYMAN);
  bad[40] = static_cast<std::uint8_t>(isa::Dtype::BFLOAT16);  // out_dtype BF16: v4+ only
  std::ostringstream out;
  const auto status = platform::disassemble(bytes_of({valid_matmul(Generation::CAYMAN), bad}),
                                            {Generation::CAYMAN, false}, out);
  EXPECT_EQ(status, platform::DisasmStatus::InvalidRecords);
  const auto l = lines(out.str());
  ASSERT_EQ(l.size(), 3u);
  EXPECT_NE(l[1].find("out_dtype=BFLOAT16"), std::string::npos) << "fields of a bad record are still printed";
  EXPECT_NE(l[2].find("instruction 1: out_dtype = 6"), std::string::npos) << l[2];
  EXPECT_NE(l[2].find("[mm.out_dtype]"), std::string::npos) << l[2];
}

TEST(Disasm, JsonLinesCarryIndexFieldsAndViolations) {
  auto bad = valid_matmul(Generation::MAVERICK);
  bad[0] = 0x55;  // not an opcode
  std::ostringstream out;
  platform::disassemble(bytes_of({valid_matmul(Generation::MAVERICK), bad}), {Generation::MAVERICK, true}, out);
  const auto l = lines(out.str());
  ASSERT_EQ(l.size(), 2u);
  const auto first = nlohmann::json::parse(l[0]);
  EXPECT_EQ(first["index"], 0);
  EXPECT_EQ(first["opcode"], "MATMUL");
  EXPECT_EQ(first["in_dtype"], "BFLOAT16");
  EXPECT_EQ(first["num_active_rows"], 128);
  EXPECT_EQ(first["flags.accumulate_flag"], "OVERWRITE");
  EXPECT_EQ(first["src_mem_pattern.start_addr"], 0x400);
  EXPECT_EQ(first["valid"], true);
  const auto second = nlohmann::json::parse(l[1]);
  EXPECT_EQ(second["index"], 1);
  EXPECT_EQ(second["valid"], false);
  ASSERT_EQ(second["violations"].size(), 1u);
  EXPECT_EQ(second["violations"][0]["rule"], "opcode.unknown");
}

TEST(Disasm, TrailingPartialRecordIsAnError) {
  auto bytes = bytes_of({valid_matmul(Generation::MARIANA)});
  bytes.resize(64 + 10, 0);
  std::ostringstream out;
  EXPECT_EQ(platform::disassemble(bytes, {Generation::MARIANA, false}, out), platform::DisasmStatus::InvalidRecords);
  EXPECT_NE(out.str().find("10 trailing byte(s) at offset 64"), std::string::npos) << out.str();
}

TEST(Disasm, StreamRuleFlagsFp32MixBetweenStationaryAndMoving) {
  isa::LdweightsArgs lw;
  lw.src = isa::Pattern::row(0, 128);
  lw.in_dtype = isa::Dtype::FP32;
  lw.fp32_mode = isa::Fp32Mode::High;
  std::ostringstream out;
  const auto status = platform::disassemble(
      bytes_of({isa::encode_ldweights(Generation::MARIANA, lw), valid_matmul(Generation::MARIANA)}),
      {Generation::MARIANA, false}, out);
  EXPECT_EQ(status, platform::DisasmStatus::InvalidRecords);
  EXPECT_NE(out.str().find("instruction 1: in_dtype = 6"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("[mm.fp32_no_mix]"), std::string::npos) << out.str();
}

TEST(Disasm, EmptyInputIsValidAndPrintsNothing) {
  std::ostringstream out;
  EXPECT_EQ(platform::disassemble({}, {Generation::CAYMAN, false}, out), platform::DisasmStatus::Ok);
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
