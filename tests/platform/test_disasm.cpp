// pevp_tools' disassembler against hand-built streams: valid programs print one
// assembly line per record, broken records keep their fields and name index +
// rule in comment lines, and the text assembles back to the same bytes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "pevp/isa_text/assembly.h"
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
  mm.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, 512);
  return isa::encode_matmul(g, mm);
}

TEST(Disasm, ValidStreamPrintsOneLinePerRecordAndReturnsOk) {
  std::ostringstream out;
  const auto status = platform::disassemble(bytes_of({valid_matmul(Generation::MARIANA), valid_matmul(Generation::MARIANA)}),
                                            {Generation::MARIANA, false}, out);
  EXPECT_EQ(status, platform::DisasmStatus::Ok);
  const auto l = lines(out.str());
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], ".gen MARIANA");
  EXPECT_EQ(l[1].rfind("matmul ", 0), 0u) << l[1];
  EXPECT_EQ(l[2].rfind("matmul ", 0), 0u) << l[2];
  EXPECT_NE(l[1].find("# [0000]"), std::string::npos) << l[1];
  EXPECT_NE(l[2].find("# [0001]"), std::string::npos) << l[2];
  EXPECT_NE(l[1].find("in_dtype=BFLOAT16"), std::string::npos);
  // src 0x400 (SBUF partition 0), dst 0x2000000 = PSUM partition 0 byte 0 (D-ADDR).
  EXPECT_NE(l[1].find("src_mem_pattern=sbuf[0]+0x400:[1,512][0,1][0,1]"), std::string::npos) << l[1];
  EXPECT_NE(l[1].find("dst_mem_pattern=psum[0]:[1,512]"), std::string::npos) << l[1];
}

TEST(Disasm, InvalidRecordKeepsFieldsAndNamesIndexAndRule) {
  auto bad = valid_matmul(Generation::CAYMAN);
  bad[40] = static_cast<std::uint8_t>(isa::Dtype::BFLOAT16);  // out_dtype BF16: v4+ only
  std::ostringstream out;
  const auto status = platform::disassemble(bytes_of({valid_matmul(Generation::CAYMAN), bad}),
                                            {Generation::CAYMAN, false}, out);
  EXPECT_EQ(status, platform::DisasmStatus::InvalidRecords);
  const auto l = lines(out.str());
  ASSERT_EQ(l.size(), 4u);
  EXPECT_NE(l[2].find("out_dtype=BFLOAT16"), std::string::npos) << "fields of a bad record are still printed";
  EXPECT_EQ(l[3].rfind("#", 0), 0u) << "the violation is a comment, so the text still assembles: " << l[3];
  EXPECT_NE(l[3].find("instruction 1: out_dtype = 6"), std::string::npos) << l[3];
  EXPECT_NE(l[3].find("[mm.out_dtype]"), std::string::npos) << l[3];
}

TEST(Disasm, TextAssemblesBackToTheSameBytesInvalidRecordsIncluded) {
  auto bad = valid_matmul(Generation::MAVERICK);
  bad[60] = 0x7f;  // a dst_mem_pattern count: any bytes must survive
  isa::RawInstruction unknown{};
  unknown[0] = 0x55;
  const auto bytes = bytes_of({valid_matmul(Generation::MAVERICK), bad, unknown});
  std::ostringstream out;
  platform::disassemble(bytes, {Generation::MAVERICK, false}, out);
  const auto strict = isa::assemble(Generation::MAVERICK, out.str());
  EXPECT_FALSE(strict.ok()) << "rule breaks are errors by default";
  const auto lenient = isa::assemble(Generation::MAVERICK, out.str(), {true});
  ASSERT_TRUE(lenient.ok()) << out.str();
  EXPECT_EQ(lenient.bytes(), bytes) << out.str();
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
  EXPECT_NE(out.str().find("#   ! 10 trailing byte(s) at offset 64"), std::string::npos) << out.str();
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

TEST(Disasm, EmptyInputIsValidAndPrintsOnlyTheGeneration) {
  std::ostringstream out;
  EXPECT_EQ(platform::disassemble({}, {Generation::CAYMAN, false}, out), platform::DisasmStatus::Ok);
  EXPECT_EQ(out.str(), ".gen CAYMAN\n");
  std::ostringstream json;
  EXPECT_EQ(platform::disassemble({}, {Generation::CAYMAN, true}, json), platform::DisasmStatus::Ok);
  EXPECT_TRUE(json.str().empty());
}

}  // namespace

namespace {
// On a geometry other than the preset, sbuf[P] names other bytes: the text carries a .geometry line, assembles back
// to the same bytes on that geometry and is refused, naming both geometries, on another.
TEST(Disasm, TextOfANonPresetGeometrySaysWhichAndAssemblesOnlyForIt) {
  isa::ArrayGeometry geo = isa::preset_geometry(Generation::MARIANA);
  geo.partitions = 256;
  geo.sbuf_partition_bytes = 131072;
  isa::LdweightsArgs lw;
  lw.src = isa::Pattern::row(2 * 131072 + 0x40, 32);
  lw.num_active_rows = 64;
  lw.num_active_cols = 32;
  const isa::RawInstruction raw = isa::encode_ldweights(Generation::MARIANA, geo, lw);
  std::ostringstream out;
  ASSERT_EQ(platform::disassemble(bytes_of({raw}), {Generation::MARIANA, false, geo}, out), platform::DisasmStatus::Ok)
      << out.str();
  const auto text = lines(out.str());
  ASSERT_GE(text.size(), 3u);
  EXPECT_EQ(text[1], ".geometry " + isa::geometry_operands(geo));
  EXPECT_NE(text[2].find("sbuf[2]+0x40"), std::string::npos) << text[2];
  const isa::AsmResult same = isa::assemble(Generation::MARIANA, out.str(), isa::AsmOptions(false, geo));
  ASSERT_TRUE(same.ok());
  ASSERT_EQ(same.records.size(), 1u);
  EXPECT_EQ(same.records[0], raw);
  const isa::AsmResult preset = isa::assemble(Generation::MARIANA, out.str());
  EXPECT_FALSE(preset.ok());
  ASSERT_FALSE(preset.diagnostics.empty());
  EXPECT_EQ(preset.diagnostics[0].rule, "asm.geometry");
  EXPECT_NE(preset.diagnostics[0].message.find("partitions=256"), std::string::npos) << preset.diagnostics[0].message;
  // The preset's own text has no .geometry line.
  std::ostringstream plain;
  platform::disassemble(bytes_of({valid_matmul(Generation::MARIANA)}), {Generation::MARIANA, false}, plain);
  EXPECT_EQ(plain.str().find(".geometry"), std::string::npos);
}
}  // namespace
