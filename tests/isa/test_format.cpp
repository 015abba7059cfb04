// format.h: to_text (one readable line) and to_json (keys are the spec's field
// names) of hand-built instructions.
#include <gtest/gtest.h>

#include <string>

#include "isa_test_util.h"

namespace pevp::isa::test {
namespace {

void expect_contains(const std::string& text, const std::vector<std::string>& pieces) {
  for (const auto& p : pieces) EXPECT_NE(text.find(p), std::string::npos) << "missing \"" << p << "\" in: " << text;
}
void expect_lacks(const std::string& text, const std::vector<std::string>& pieces) {
  for (const auto& p : pieces) EXPECT_EQ(text.find(p), std::string::npos) << "unexpected \"" << p << "\" in: " << text;
}

TEST(Format, MarianaMatmulText) {
  MatmulArgs a = mm_args();
  a.psum_flags = psum_flags::SINGLE;
  const Decoded d = decode(G::MARIANA, encode_matmul(G::MARIANA, a));
  ASSERT_TRUE(d.valid()) << dump(d);
  const std::string t = to_text(d);
  EXPECT_EQ(t.rfind("MATMUL ", 0), 0u) << t;
  expect_contains(t, {" in_dtype=BFLOAT16", " fp32_mode=None", " out_dtype=FP32", " psum_accumulate_flags=SINGLE",
                      " psum_zero_region=BANKS_1", " num_active_rows=128", " num_active_cols=128", " row_grp=0xf",
                      " col_grp=0xf", "accumulate_flag=OVERWRITE", "seed_mode=NONE", " flags={",
                      " src_mem_pattern={start_addr=0x0 ", " dst_mem_pattern={start_addr=0x2000000 ",
                      "num_elem=[128,1,1]}", "step_elem=[1,0,0]"});
  // zero reserved bytes, the fixed header bytes and an all-NONE events block are left out
  expect_lacks(t, {"reserved", "inst_word_len", "opcode=", "events", "\n"});
}

TEST(Format, TextShowsWhatIsSet) {
  MatmulArgs a = mm_args();
  a.psum_flags = psum_flags::MULTI_MID;
  a.in_dtype = Dtype::FP32;
  a.fp32_mode = Fp32Mode::Low_High;
  a.out_dtype = Dtype::BFLOAT16;
  a.zero_region = ZeroRegion::BANKS_8;
  a.events.wait_mode = WaitMode::WAIT_GE;
  a.events.wait_sem = 3;
  a.events.wait_value = 9;
  RawInstruction raw = encode_matmul(G::MARIANA, a);
  raw[46] = 0x5a;  // reserved4
  const std::string t = to_text(decode(G::MARIANA, raw));
  expect_contains(t, {" in_dtype=FP32", " fp32_mode=Low_High", " out_dtype=BFLOAT16", " psum_accumulate_flags=MULTI_MID",
                      "accumulate_flag=ACCUMULATE", " psum_zero_region=BANKS_8", "wait_mode=WAIT_GE", "wait_sem=3",
                      "wait_value=9", " reserved4=5a"});
}

TEST(Format, MaverickAndSeedText) {
  const std::string m = to_text(decode(G::MAVERICK, mm_base(G::MAVERICK)));
  expect_contains(m, {"MATMUL ", "tile_size={row=R128 col=C128}", "tile_sel={row_sel=0 col_sel=0}", " perf_mode=NONE",
                      " out_dtype=FP32"});
  expect_lacks(m, {"row_grp", "psum_accumulate_flags"});
  const std::string s = to_text(decode(G::MARIANA, save_seed_base(G::MARIANA)));
  expect_contains(s, {"PE_MANAGE_SEED ", " mode=SAVE_SEED", " identity_dtype=BFLOAT16", " num_active_rows=16",
                      " num_active_cols=128", "dst_seed_mem_pattern={start_addr=0x2000000 step_elem=[1,512] num_elem=[2,8]}"});
  const std::string l = to_text(decode(G::MARIANA, lw_base(G::MARIANA)));
  expect_contains(l, {"LDWEIGHTS ", "load_order=LAST_COL_FIRST", " bg_xpose_mode=0"});
  RawInstruction p = mm_base(G::CAYMAN);
  patch(G::CAYMAN, p, "psum_accumulate_flags", 5);  // no name for BEGIN|BEGIN_ACCUM
  expect_contains(to_text(decode(G::CAYMAN, p)), {" psum_accumulate_flags=5"});
}

TEST(Format, UnknownOpcodeText) {
  RawInstruction raw{};
  raw[0] = 0x55;
  raw[63] = 0xab;
  const std::string t = to_text(decode(G::MARIANA, raw));
  EXPECT_EQ(t.rfind("UNKNOWN opcode=0x55", 0), 0u) << t;
  EXPECT_NE(t.find("55000000"), std::string::npos) << t;
  EXPECT_NE(t.find("ab"), std::string::npos) << t;
}

TEST(Format, JsonKeysAreSpecNames) {
  MatmulArgs a = mm_args();
  a.accumulate = true;
  const Decoded d = decode(G::MARIANA_PLUS, encode_matmul(G::MARIANA_PLUS, a));
  const nlohmann::json j = to_json(d);
  EXPECT_EQ(j.at("generation"), "MARIANA_PLUS");
  EXPECT_EQ(j.at("opcode"), "MATMUL");
  EXPECT_EQ(j.at("struct"), "S3D3_MM");
  EXPECT_EQ(j.at("valid"), true);
  EXPECT_TRUE(j.at("violations").is_array());
  EXPECT_TRUE(j.at("violations").empty());
  EXPECT_EQ(j.at("in_dtype"), "BFLOAT16");
  EXPECT_EQ(j.at("out_dtype"), "FP32");
  EXPECT_EQ(j.at("fp32_mode"), "None");
  EXPECT_EQ(j.at("num_active_rows"), 128);
  EXPECT_EQ(j.at("num_active_cols"), 128);
  EXPECT_EQ(j.at("flags.accumulate_flag"), "ACCUMULATE");
  EXPECT_EQ(j.at("flags.seed_mode"), "NONE");
  EXPECT_EQ(j.at("flags.xpose_mode"), 0);
  EXPECT_EQ(j.at("psum_accumulate_flags"), "SINGLE");
  EXPECT_EQ(j.at("psum_zero_region"), "BANKS_1");
  EXPECT_EQ(j.at("row_grp"), 0xF);
  EXPECT_EQ(j.at("src_mem_pattern.start_addr"), 0);
  EXPECT_EQ(j.at("src_mem_pattern.step_elem[0]"), 1);
  EXPECT_EQ(j.at("src_mem_pattern.num_elem[0]"), 128);
  EXPECT_EQ(j.at("src_mem_pattern.member"), "t");
  EXPECT_EQ(j.at("dst_mem_pattern.start_addr"), kPsum);
  EXPECT_EQ(j.at("header.inst_word_len"), 16);
  EXPECT_EQ(j.at("events.wait_mode"), "NONE");
  EXPECT_EQ(j.at("reserved4"), "00");
  EXPECT_EQ(j.at("reserved0"), "00000000");
  EXPECT_FALSE(j.contains("header.opcode"));
  EXPECT_FALSE(j.contains("tile_size.row"));
}

TEST(Format, JsonOfInvalidAndMaverick) {
  RawInstruction raw = mm_base(G::CAYMAN);
  patch(G::CAYMAN, raw, "out_dtype", static_cast<int>(Dtype::BFLOAT16));
  const nlohmann::json j = to_json(decode(G::CAYMAN, raw));
  EXPECT_EQ(j.at("valid"), false);
  ASSERT_EQ(j.at("violations").size(), 1u);
  EXPECT_EQ(j["violations"][0].at("rule"), "mm.out_dtype");
  EXPECT_EQ(j["violations"][0].at("field"), "out_dtype");
  EXPECT_EQ(j["violations"][0].at("value"), 6);
  EXPECT_FALSE(j["violations"][0].at("message").get<std::string>().empty());
  EXPECT_FALSE(j.contains("flags.accumulate_flag"));  // no flags byte on v3

  const nlohmann::json m = to_json(decode(G::MAVERICK, load_seed_base(G::MARIANA)));
  EXPECT_EQ(m.at("opcode"), "PE_MANAGE_SEED");
  EXPECT_EQ(m.at("mode"), "LOAD_SEED");
  EXPECT_EQ(m.at("valid"), false);
  EXPECT_EQ(m["violations"][0].at("rule"), "pe_seed.v4_only");

  RawInstruction mx{};
  mx[0] = 0x01;
  put32(mx, 16, 0x201);  // MAVERICK S3_LW src: the MXTENSOR_V2 member
  const nlohmann::json x = to_json(decode(G::MAVERICK, mx));
  EXPECT_EQ(x.at("src_mem_pattern.member"), "mx");
  EXPECT_TRUE(x.contains("src_mem_pattern.scale_addr"));
  EXPECT_TRUE(x.contains("tile_size.row"));
  EXPECT_TRUE(x.contains("flags.load_order"));
  EXPECT_TRUE(x.contains("perf_mode"));

  RawInstruction unknown{};
  unknown[0] = 0x99;
  const nlohmann::json u = to_json(decode(G::CAYMAN, unknown));
  EXPECT_EQ(u.at("opcode"), "0x99");
  EXPECT_EQ(u.at("valid"), false);
  EXPECT_EQ(u["violations"][0].at("rule"), "opcode.unknown");
}

TEST(Format, ValueText) {
  const Leaf addr{"x", 0, 4, 0, 0, ValueKind::Address, false, "x"};
  EXPECT_EQ(value_text(addr, 0x2000000), "0x2000000");
  const Leaf dt{"in_dtype", 0, 1, 0, 0, ValueKind::Dtype, false, "in_dtype"};
  EXPECT_EQ(value_text(dt, 0x6), "BFLOAT16");
  EXPECT_EQ(value_text(dt, 0x11), "FP8_EXP2");
  EXPECT_EQ(value_text(dt, 0x0C), "12");
  const Leaf pf{"p", 0, 1, 0, 0, ValueKind::PsumAccumulateFlags, false, "p"};
  EXPECT_EQ(value_text(pf, 0), "MULTI_MID");
  EXPECT_EQ(value_text(pf, 3), "SINGLE");
  const Leaf mx{"p", 0, 1, 0, 0, ValueKind::MxPerfMode, false, "p"};
  EXPECT_EQ(value_text(mx, 4), "OCT_ROW");
  EXPECT_EQ(value_text(mx, 7), "7");
  const Leaf sm{"p", 0, 1, 0, 0, ValueKind::SeedMode, false, "p"};
  EXPECT_EQ(value_text(sm, 2), "SAVE_SEED");
  const Leaf tc{"p", 0, 1, 4, 4, ValueKind::TileColSize, false, "p"};
  EXPECT_EQ(value_text(tc, 8), "C256");
  EXPECT_EQ(value_text(tc, 7), "C128");
}

}  // namespace
}  // namespace pevp::isa::test
