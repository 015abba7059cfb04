// The functional coverage model (pevp/coverage): what programs lowered by the real firmware hit, counted by hand;
// merging; the table's percentages and holes; the crosses the ISA rules out; refused files.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "pevp/coverage/collector.h"
#include "pevp/firmware/firmware.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/rules.h"
#include "pevp/isa_text/assembly.h"

namespace pevp {
namespace {

using coverage::BinKey;
using coverage::Collector;
using coverage::Counts;
using isa::Generation;

// Every micro-op the firmware lowers `source` into, added as the sequencer's observer would add them.
Collector collect(Generation gen, const std::string& source) {
  const isa::AsmResult r = isa::assemble(gen, source);
  if (!r.ok()) throw std::runtime_error(r.diagnostics.front().describe("source"));
  Collector c;
  std::uint64_t index = 0;
  for (const isa::RawInstruction& rec : r.records) {
    fw::Prepared p = fw::prepare(std::make_shared<const isa::Decoded>(isa::decode(gen, rec)));
    if (p.fault) throw std::runtime_error("the firmware refused instruction " + std::to_string(index));
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      p.ops[i].instr_index = index;
      p.ops[i].completes_instruction = i + 1 == p.ops.size();
      c.add(p.ops[i], gen);
    }
    ++index;
  }
  return c;
}

const std::string kFull = " in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF col_grp=0xF";
// One transposed Ldweights and three bf16 Matmuls making one PSUM group (start, middle, end; the last two
// accumulate).
const std::string kStream = ".gen MARIANA\n"
                            "ldweights src=sbuf[0]:[1,128]" + kFull + " flags.xpose_mode=1\n"
                            "matmul src=sbuf[0]+0x1000:[1,8]" + kFull +
                            " psum_accumulate_flags=MULTI_START dst=psum[0]:[1,8]\n"
                            "matmul src=sbuf[0]+0x1000:[1,8]" + kFull +
                            " psum_accumulate_flags=MULTI_MID flags.accumulate_flag=1 dst=psum[0]:[1,8]\n"
                            "matmul src=sbuf[0]+0x1000:[1,8]" + kFull +
                            " psum_accumulate_flags=MULTI_END flags.accumulate_flag=1 dst=psum[0]:[1,8]\n";

TEST(Bins, AHandCountedStreamHitsExactlyTheseBins) {
  const Collector c = collect(Generation::MARIANA, kStream);
  // By hand: 1 Ldweights + 3 Matmuls, all bf16 on whole 128 x 128 tiles with every row and column active; the
  // group's start overwrites (accumulate_flag 0) and zeroes psum_zero_region 0 = 1 bank; the other two accumulate.
  const Counts want = {
      {{"opcode", "MARIANA", "LDWEIGHTS"}, 1},          {{"opcode", "MARIANA", "MATMUL"}, 3},
      {{"dtype", "MARIANA", "LDWEIGHTS/BFLOAT16"}, 1},  {{"dtype", "MARIANA", "MATMUL/BFLOAT16"}, 3},
      {{"psum", "MARIANA", "group/MULTI_START"}, 1},     {{"psum", "MARIANA", "group/MULTI_MID"}, 1},
      {{"psum", "MARIANA", "group/MULTI_END"}, 1},      {{"psum", "MARIANA", "write/overwrite"}, 1},
      {{"psum", "MARIANA", "write/accumulate"}, 2},     {{"psum", "MARIANA", "zero/1_banks"}, 1},
      {{"tile_shape", "MARIANA", "weight_load/full"}, 1}, {{"tile_shape", "MARIANA", "matmul/full"}, 3},
      {{"tile_grid", "MARIANA", "whole_array"}, 4},     {{"feature", "MARIANA", "transpose/weight_load"}, 1},
  };
  EXPECT_EQ(c.hits(), want);
  EXPECT_TRUE(c.outside_model().empty());
}

TEST(Bins, PartialTilesAndGridPositions) {
  // A 32-row band of row group 1 (rows 32..63, all columns) with 16 of its 32 rows active and every column: a
  // partial-rows weight load on a row band away from the origin.
  const Collector c = collect(Generation::MARIANA,
                              ".gen MARIANA\nldweights src=sbuf[0]:[1,128] in_dtype=fp16 num_active_rows=16 "
                              "num_active_cols=128 row_grp=0x2 col_grp=0xF\n");
  EXPECT_EQ(c.count({"tile_shape", "MARIANA", "weight_load/partial_rows"}), 1u);
  EXPECT_EQ(c.count({"tile_grid", "MARIANA", "row_band@offset"}), 1u);
  EXPECT_EQ(c.count({"dtype", "MARIANA", "LDWEIGHTS/FP16"}), 1u);
  EXPECT_EQ(c.hits().size(), 4u);  // with opcode LDWEIGHTS
}

TEST(Bins, AFaultCountsItsRuleOnce) {
  Collector c;
  c.add_fault(static_cast<std::uint16_t>(isa::Rule::kMmInDtype));
  c.add_fault(static_cast<std::uint16_t>(isa::Rule::kMmInDtype));
  c.add_fault(0x7777);  // no rule has it: nothing counted
  EXPECT_EQ(c.hits(), (Counts{{{"rule", "", "mm.in_dtype"}, 2}}));
}

TEST(Model, TheIsaRulesOutImpossibleCrosses) {
  // The v4 MX opcodes and PeManageSeed only on MARIANA / MARIANA_PLUS (MAVERICK keeps them in its enum, refused).
  for (const char* op : {"LDWEIGHTS_MX", "MATMUL_MX", "PE_MANAGE_SEED"}) {
    EXPECT_FALSE(coverage::is_bin({"opcode", "CAYMAN", op})) << op;
    EXPECT_TRUE(coverage::is_bin({"opcode", "MARIANA", op})) << op;
    EXPECT_FALSE(coverage::is_bin({"opcode", "MAVERICK", op})) << op;
  }
  // MX sources through LDWEIGHTS / MATMUL only on MAVERICK; MX perf modes only where MX exists.
  EXPECT_TRUE(coverage::is_bin({"dtype", "MAVERICK", "MATMUL/mx/FP4_EXP2"}));
  EXPECT_FALSE(coverage::is_bin({"dtype", "MARIANA", "MATMUL/mx/FP4_EXP2"}));
  EXPECT_FALSE(coverage::is_bin({"feature", "CAYMAN", "mx_perf/QUAD_ROW"}));
  EXPECT_TRUE(coverage::is_bin({"feature", "MARIANA", "mx_perf/QUAD_ROW"}));
  EXPECT_TRUE(coverage::is_bin({"feature", "MAVERICK", "mx_perf/OCT_ROW_TILED"}));
  // The PSUM group flags (psum_accumulate_flags) are CAYMAN's and MARIANA's; MAVERICK has accumulate_flag alone.
  EXPECT_TRUE(coverage::is_bin({"psum", "CAYMAN", "group/SINGLE"}));
  EXPECT_FALSE(coverage::is_bin({"psum", "MAVERICK", "group/SINGLE"}));
  EXPECT_FALSE(coverage::is_bin({"psum", "MAVERICK", "zero/8_banks"}));
  EXPECT_TRUE(coverage::is_bin({"psum", "MAVERICK", "write/accumulate"}));
  // The background transpose is MARIANA's field; an fp32 mode exists for every generation's dense ops.
  EXPECT_TRUE(coverage::is_bin({"feature", "MARIANA", "transpose/weight_load_background"}));
  EXPECT_FALSE(coverage::is_bin({"feature", "CAYMAN", "transpose/weight_load_background"}));
  EXPECT_TRUE(coverage::is_bin({"fp32_mode", "CAYMAN", "MATMUL/Low_High"}));
  // Rules are not crossed with the generation.
  EXPECT_TRUE(coverage::is_bin({"rule", "", "exec.no_stationary"}));
  EXPECT_FALSE(coverage::is_bin({"rule", "MARIANA", "exec.no_stationary"}));
  // A sample the table rules out is kept apart, not counted as a hit.
  Collector c;
  c.add_bin({"opcode", "CAYMAN", "MATMUL_MX"});
  EXPECT_TRUE(c.hits().empty());
  EXPECT_EQ(c.outside_model().size(), 1u);
}

TEST(Merge, CountsAndRunsAdd) {
  Collector a = collect(Generation::MARIANA, kStream);
  const Collector b = collect(Generation::MARIANA, kStream);
  Collector faults;
  faults.add_fault(static_cast<std::uint16_t>(isa::Rule::kExecNoStationary));
  a.merge(b);
  a.merge(faults);
  EXPECT_EQ(a.runs(), 3u);
  EXPECT_EQ(a.count({"opcode", "MARIANA", "MATMUL"}), 6u);     // 3 + 3
  EXPECT_EQ(a.count({"psum", "MARIANA", "write/accumulate"}), 4u);  // 2 + 2
  EXPECT_EQ(a.count({"rule", "", "exec.no_stationary"}), 1u);
  // The file keeps everything: read back, it is the same collection.
  const Collector back = coverage::from_json(coverage::to_json(a), "a.json");
  EXPECT_EQ(back.hits(), a.hits());
  EXPECT_EQ(back.runs(), 3u);
}

TEST(Report, PercentagesAndHoles) {
  const Collector c = collect(Generation::MARIANA, kStream);
  const std::string table = coverage::report(c, 1);
  // Opcode bins: CAYMAN 5 (no v4 opcodes), MARIANA and MARIANA_PLUS 9 each, MAVERICK 6 (9 less the two v4 MX
  // opcodes and PeManageSeed) = 29; 2 hit = 6.9%.
  EXPECT_NE(table.find("opcode: 2 of 29 bins (6.9%)"), std::string::npos) << table;
  EXPECT_NE(table.find("MARIANA: PE_REG_WRITE LDTAGS MATMUL_SPARSE PE_MANAGE_SEED LDWEIGHTS_MX MATMUL_MX "
                       "CONV_LUT_LOAD"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("CAYMAN: LDWEIGHTS MATMUL PE_REG_WRITE LDTAGS MATMUL_SPARSE"), std::string::npos) << table;
  EXPECT_NE(table.find("  MARIANA       MATMUL"), std::string::npos) << table;
  const std::vector<coverage::GroupSummary> s = coverage::summarize(c);
  std::size_t bins = 0;
  for (const auto& g : s) bins += g.bins;
  EXPECT_EQ(bins, coverage::all_bins().size());
}

// The refusal of a file whose text is `doc`, or "" when it is read.
std::string refusal(const std::string& doc) {
  try {
    coverage::from_json(doc, "f.json");
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

std::string file_with(const std::string& bins) {
  return R"({"format":"pe-vp-coverage","version":1,"runs":1,"outside_model":[],"bins":[)" + bins + "]}";
}

TEST(File, BadFilesAreRefusedNamingTheFileAndField) {
  EXPECT_EQ(refusal(file_with(R"({"group":"opcode","generation":"MARIANA","bin":"MATMUL","count":2})")), "");
  EXPECT_EQ(refusal("{").rfind("f.json: (document): not JSON", 0), 0u) << refusal("{");
  EXPECT_EQ(refusal(R"({"format":"x","version":1,"runs":1,"bins":[],"outside_model":[]})"),
            "f.json: format: 'x' is not pe-vp-coverage");
  EXPECT_EQ(refusal(R"({"format":"pe-vp-coverage","version":2,"runs":1,"bins":[],"outside_model":[]})"),
            "f.json: version: 2 is not a version this pe-vp reads (1)");
  EXPECT_EQ(refusal(file_with(R"({"group":"opcode","generation":"VAX","bin":"MATMUL","count":1})")),
            "f.json: bins[0].generation: 'VAX' is not a generation (CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK)");
  EXPECT_EQ(refusal(file_with(R"({"group":"opcode","generation":"CAYMAN","bin":"MATMUL_MX","count":1})")),
            "f.json: bins[0].bin: 'MATMUL_MX' is not a bin of group opcode on CAYMAN (docs/coverage.md lists them)");
  EXPECT_EQ(refusal(file_with(R"({"group":"opcode","generation":"MARIANA","bin":"MATMUL","count":1},)"
                              R"({"group":"opcode","generation":"MARIANA","bin":"MATMUL","count":0})")),
            "f.json: bins[1].count: must be a positive integer, not 0");
  EXPECT_EQ(refusal(file_with(R"({"group":"opcode","generation":"MARIANA","bin":"MATMUL","count":1},)"
                              R"({"group":"opcode","generation":"MARIANA","bin":"MATMUL","count":1})")),
            "f.json: bins[1]: lists opcode MARIANA MATMUL a second time");
  EXPECT_EQ(refusal(file_with(R"({"group":"colour","generation":"","bin":"red","count":1})")).rfind(
                "f.json: bins[0].group: 'colour' is not a group of the model", 0),
            0u);
  EXPECT_EQ(refusal(file_with(R"({"group":"rule","generation":"MARIANA","bin":"mm.in_dtype","count":1})")),
            "f.json: bins[0].generation: must be \"\": group rule is not crossed with the generation");
  EXPECT_EQ(refusal(file_with(R"({"group":"opcode","generation":"MARIANA","bin":"MATMUL"})")),
            "f.json: bins[0].count: missing");
}

}  // namespace
}  // namespace pevp
