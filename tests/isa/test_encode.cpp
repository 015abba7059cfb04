// The Encoder's and the builders' errors: each throws EncodeError whose message
// names the offending path (or the opcode and generation); and what a
// successful set writes, checked at the spec's byte offsets.
#include <gtest/gtest.h>

#include <string>

#include "isa_test_util.h"

namespace pevp::isa::test {
namespace {

// Runs `f`, expects an EncodeError whose message contains every piece.
template <typename F>
void expect_error(F&& f, const std::vector<std::string>& pieces) {
  try {
    f();
    ADD_FAILURE() << "no EncodeError; expected one naming " << pieces.front();
  } catch (const EncodeError& e) {
    const std::string what = e.what();
    for (const auto& p : pieces) EXPECT_NE(what.find(p), std::string::npos) << "\"" << p << "\" not in: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected EncodeError, got: " << e.what();
  }
}

TEST(Encoder, OpcodeNotInGeneration) {
  for (Opcode op : {Opcode::PE_MANAGE_SEED, Opcode::LDWEIGHTS_MX, Opcode::MATMUL_MX, Opcode::CONV_LUT_LOAD})
    expect_error([&] { Encoder e(G::CAYMAN, op); }, {std::string(name(op)), "CAYMAN"});
  EXPECT_NO_THROW(Encoder(G::MAVERICK, Opcode::PE_MANAGE_SEED));  // decodes there; validity says no
  EXPECT_NO_THROW(Encoder(G::MARIANA, Opcode::CONV_LUT_LOAD));
  expect_error([] { encode_pe_seed(G::CAYMAN, load_seed_args()); }, {"PE_MANAGE_SEED", "CAYMAN"});
}

TEST(Encoder, UnknownPath) {
  Encoder e(G::MARIANA, Opcode::MATMUL);
  expect_error([&] { e.set("no_such_field", 1); }, {"no_such_field"});
  expect_error([&] { e.set("tile_size.row", 7); }, {"tile_size.row"});  // MAVERICK only
  expect_error([&] { e.set("src_mem_pattern.num_elem[3]", 1); }, {"src_mem_pattern.num_elem[3]"});
  expect_error([&] { e.set("src_mem_pattern.scale_addr", 0); }, {"src_mem_pattern.scale_addr"});  // member t
  expect_error([&] { e.set("flags", 1); }, {"flags"});  // a composite, not a leaf
  Encoder c(G::CAYMAN, Opcode::MATMUL);
  expect_error([&] { c.set("flags.seed_mode", 1); }, {"flags.seed_mode"});  // v3 has no flags byte
  Encoder m(G::MAVERICK, Opcode::MATMUL);
  expect_error([&] { m.set("row_grp", 0xF); }, {"row_grp"});
  expect_error([&] { m.set("psum_accumulate_flags", 3); }, {"psum_accumulate_flags"});
  // after start_addr selects the mx member its leaves exist
  m.set("src_mem_pattern.start_addr", 0x1);
  EXPECT_NO_THROW(m.set("src_mem_pattern.scale_addr", 0x4000));
  expect_error([&] { m.set("src_mem_pattern.num_elem[2]", 1); }, {"src_mem_pattern.num_elem[2]"});
  expect_error([&] { m.set("header.opcode", 2); }, {"header.opcode"});
}

TEST(Encoder, ValueTooWide) {
  Encoder e(G::MAVERICK, Opcode::MATMUL);
  expect_error([&] { e.set("num_active_rows", 256); }, {"num_active_rows", "256"});
  expect_error([&] { e.set("in_dtype", -1); }, {"in_dtype"});
  expect_error([&] { e.set("flags.xpose_mode", 2); }, {"flags.xpose_mode"});
  expect_error([&] { e.set("flags.seed_mode", 4); }, {"flags.seed_mode"});
  expect_error([&] { e.set("tile_size.row", 16); }, {"tile_size.row"});
  expect_error([&] { e.set("src_mem_pattern.step_elem[0]", 32768); }, {"src_mem_pattern.step_elem[0]"});
  expect_error([&] { e.set("src_mem_pattern.step_elem[1]", -32769); }, {"src_mem_pattern.step_elem[1]"});
  expect_error([&] { e.set("src_mem_pattern.num_elem[0]", 65536); }, {"src_mem_pattern.num_elem[0]"});
  expect_error([&] { e.set("src_mem_pattern.num_elem[0]", -1); }, {"src_mem_pattern.num_elem[0]"});
  expect_error([&] { e.set("dst_mem_pattern.start_addr", std::int64_t{1} << 32); }, {"dst_mem_pattern.start_addr"});
  expect_error([&] { e.set("reserved1", 1); }, {"reserved1"});
  expect_error([&] { e.set("events.wait_value", 70000); }, {"events.wait_value"});
  // the edges fit
  EXPECT_NO_THROW(e.set("src_mem_pattern.step_elem[0]", -32768));
  EXPECT_NO_THROW(e.set("src_mem_pattern.step_elem[1]", 32767));
  EXPECT_NO_THROW(e.set("src_mem_pattern.num_elem[0]", 65535));
  EXPECT_NO_THROW(e.set("dst_mem_pattern.start_addr", 0xFFFFFFFE));
  EXPECT_NO_THROW(e.set("reserved1", 0));
  EXPECT_NO_THROW(e.set("num_active_rows", 255));
  // nothing was written by the failed sets
  const RawInstruction& b = e.bytes();
  EXPECT_EQ(b[35], 255);  // num_active_rows @35 (spec 4)
  EXPECT_EQ(b[39], 0);    // flags untouched
  EXPECT_EQ(b[32], 0);    // in_dtype untouched
}

TEST(Encoder, JsonValues) {
  Encoder e(G::MARIANA, Opcode::MATMUL);
  set_json(e, "in_dtype", nlohmann::json("FP8_EXP4"));
  set_json(e, "psum_accumulate_flags", nlohmann::json("MULTI_END"));
  set_json(e, "flags.accumulate_flag", nlohmann::json("ACCUMULATE"));
  set_json(e, "src_mem_pattern.start_addr", nlohmann::json("0x40"));
  set_json(e, "reserved4", nlohmann::json("00"));
  set_json(e, "psum_zero_region", nlohmann::json("BANKS_4"));
  set_json(e, "num_active_rows", nlohmann::json(64));
  const RawInstruction& b = e.bytes();
  EXPECT_EQ(b[32], 0xE);   // in_dtype @32
  EXPECT_EQ(b[43], 2);     // psum_accumulate_flags @43
  EXPECT_EQ(b[42], 0x10);  // MATMUL_FLAGS accumulate_flag = bit 4, flags @42
  EXPECT_EQ(b[16], 0x40);  // src @16
  EXPECT_EQ(b[47], 2);     // zero region @47: BANKS_4 = 2 (model D-ZERO)
  EXPECT_EQ(b[38], 64);
  EXPECT_EQ(b[0], 0x02);
  EXPECT_EQ(b[1], 16);  // inst_word_len
  expect_error([&] { set_json(e, "in_dtype", nlohmann::json("FLOAT99")); }, {"in_dtype", "FLOAT99"});
  expect_error([&] { set_json(e, "fp32_mode", nlohmann::json("none")); }, {"fp32_mode"});  // names are exact
  expect_error([&] { set_json(e, "reserved4", nlohmann::json("0")); }, {"reserved4"});
  expect_error([&] { set_json(e, "reserved4", nlohmann::json("zz")); }, {"reserved4"});
  expect_error([&] { set_json(e, "num_active_rows", nlohmann::json(1.5)); }, {"num_active_rows"});
  expect_error([&] { set_json(e, "num_active_rows", nlohmann::json(true)); }, {"num_active_rows"});
  expect_error([&] { set_json(e, "nope", nlohmann::json("BFLOAT16")); }, {"nope"});
}

// A hex string must be all hex: "0x40zz" is a typo, not 0x40.
TEST(Encoder, HexStringWithTrailingGarbage) {
  Encoder e(G::MARIANA, Opcode::MATMUL);
  std::vector<std::string> accepted;
  for (const char* text : {"0xZZ", "0x40zz", "0x", "0x1 2"}) {
    try {
      set_json(e, "src_mem_pattern.start_addr", nlohmann::json(text));
      accepted.push_back(std::string(text) + " -> " + std::to_string(e.decoded().get("src_mem_pattern.start_addr")));
    } catch (const EncodeError& err) {
      EXPECT_NE(std::string(err.what()).find("src_mem_pattern.start_addr"), std::string::npos) << err.what();
    }
  }
  if (!accepted.empty()) {
    std::string list;
    for (const auto& a : accepted) list += "\"" + a + "\" ";
    FAIL() << "encode.cpp Encoder::set(path, json) parses hex with std::stoull(text, nullptr, 16) and "
                    "ignores what follows the digits: " << list << "-- pass &pos and require pos == text.size()";
  }
}

TEST(Encoder, EncodeJsonErrors) {
  expect_error([] { encode_json(G::MARIANA, nlohmann::json::array()); }, {"object"});
  expect_error([] { encode_json(G::MARIANA, nlohmann::json{{"in_dtype", "FP32"}}); }, {"opcode"});
  expect_error([] { encode_json(G::MARIANA, nlohmann::json{{"opcode", "NOP"}}); }, {"NOP"});
  expect_error([] { encode_json(G::CAYMAN, nlohmann::json{{"opcode", "PE_MANAGE_SEED"}}); },
               {"PE_MANAGE_SEED", "CAYMAN"});
  expect_error([] { encode_json(G::MARIANA, nlohmann::json{{"opcode", "MATMUL"}, {"bogus.path", 1}}); },
               {"bogus.path"});
  expect_error([] { encode_json(G::MARIANA, nlohmann::json{{"opcode", "MATMUL"}, {"num_active_cols", 300}}); },
               {"num_active_cols"});
  // a minimal object encodes; ignored keys are ignored
  const RawInstruction r = encode_json(
      G::MAVERICK, nlohmann::json{{"opcode", "LDWEIGHTS"}, {"valid", false}, {"violations", "x"}, {"struct", "?"},
                                  {"index", 3}, {"generation", "CAYMAN"}, {"src_mem_pattern.member", "t"},
                                  {"flags.load_order", "FIRST_COL_FIRST"}});
  EXPECT_EQ(r[0], 0x01);
  EXPECT_EQ(r[38], 0x20);  // MAVERICK S3_LW flags @38, load_order bit 5
}

TEST(Builders, Errors) {
  LdweightsArgs lw = lw_args();
  lw.seed_mode = PeSeedMode::LOAD_SEED;
  expect_error([&] { encode_ldweights(G::CAYMAN, lw); }, {"flags.seed_mode"});
  lw = lw_args();
  lw.load_order = PeLwOrder::FIRST_COL_FIRST;
  expect_error([&] { encode_ldweights(G::CAYMAN, lw); }, {"flags.load_order"});
  lw = lw_args();
  lw.tile = {0, 96, 0, 128};
  expect_error([&] { encode_ldweights(G::MARIANA, lw); }, {"row_grp"});
  lw.tile = {0, 128, 32, 64};
  expect_error([&] { encode_ldweights(G::CAYMAN, lw); }, {"col_grp"});
  lw.tile = {0, 32, 0, 128};
  expect_error([&] { encode_ldweights(G::MAVERICK, lw); }, {"tile_size.row"});
  lw.tile = {0, 128, 0, 64};
  expect_error([&] { encode_ldweights(G::MAVERICK, lw); }, {"tile_size.col"});
  lw.tile = {0, 128, 64, 128};
  expect_error([&] { encode_ldweights(G::MAVERICK, lw); }, {"tile_size.col"});
  lw = lw_args();
  lw.src = {0, {1, 1, 1, 1}, {1, 1, 1, 1}};
  expect_error([&] { encode_ldweights(G::MARIANA, lw); }, {"src_mem_pattern"});
  lw.src = {0, {1}, {1, 2}};
  expect_error([&] { encode_ldweights(G::MARIANA, lw); }, {"src_mem_pattern"});
  MatmulArgs mm = mm_args();
  mm.seed_mode = PeSeedMode::SAVE_SEED;
  expect_error([&] { encode_matmul(G::CAYMAN, mm); }, {"flags.seed_mode"});
  mm = mm_args();
  mm.num_active_rows = 300;
  expect_error([&] { encode_matmul(G::MARIANA, mm); }, {"num_active_rows"});
}

// builders.h: "Fields that a generation does not have are mapped ... or rejected
// with an EncodeError naming the field." A field with no home must not vanish.
TEST(Builders, UnmappableFieldsAreRejected) {
  std::vector<std::string> dropped;
  MatmulArgs a = mm_args();
  a.zero_region = ZeroRegion::BANKS_8;  // MAVERICK has no psum_zero_region
  try {
    encode_matmul(G::MAVERICK, a);
    dropped.push_back("MAVERICK zero_region=BANKS_8");
  } catch (const EncodeError& e) {
    EXPECT_NE(std::string(e.what()).find("psum_zero_region"), std::string::npos) << e.what();
  }
  a = mm_args();
  a.accumulate = true;  // CAYMAN has no accumulate_flag, and SINGLE zeroes PSUM
  try {
    encode_matmul(G::CAYMAN, a);
    dropped.push_back("CAYMAN accumulate=true with psum_flags SINGLE");
  } catch (const EncodeError& e) {
    EXPECT_NE(std::string(e.what()).find("accumulate"), std::string::npos) << e.what();
  }
  if (!dropped.empty()) {
    std::string list;
    for (const auto& d : dropped) list += "[" + d + "] ";
    FAIL() << "builders.cpp encode_matmul silently drops " << list
                 << "-- throw EncodeError(\"psum_zero_region: ...\") on MAVERICK when zero_region != BANKS_1, and on "
                    "CAYMAN when an explicit accumulate disagrees with default_accumulate(psum_flags)";
  }
}

// What the builders write, at the spec's offsets.
TEST(Builders, WriteSpecOffsets) {
  MatmulArgs mm = mm_args();
  mm.psum_flags = psum_flags::MULTI_MID;  // accumulate by default
  mm.xpose = true;
  mm.out_dtype = Dtype::BFLOAT16;
  RawInstruction r = encode_matmul(G::MARIANA, mm);
  EXPECT_EQ(r[40], 0x6);   // out_dtype @40
  EXPECT_EQ(r[42], 0x30);  // flags @42: accumulate (bit 4) | xpose (bit 5)
  EXPECT_EQ(r[43], 0x0);   // MULTI_MID
  EXPECT_EQ(r[44], 0xF);
  EXPECT_EQ(r[45], 0xF);
  r = encode_matmul(G::CAYMAN, mm_args());
  EXPECT_EQ(r[43], 3);   // SINGLE @43
  EXPECT_EQ(r[42], 0);   // no flags byte
  EXPECT_EQ(r[34], 0);   // transpose_mode @34
  mm = mm_args();
  mm.num_active_cols = 256;
  mm.tile = {0, 128, 0, 256};
  mm.dst = {kPsum, {1, 0, 128}, {128, 1, 2}};
  mm.accumulate = true;
  r = encode_matmul(G::MAVERICK, mm);
  EXPECT_EQ(r[36], 0);     // num_active_cols @36: 0 = 256 (spec 3, 11)
  EXPECT_EQ(r[37], 0x87);  // tile_size @37 {row R128 low nibble, col C256 high nibble}
  EXPECT_EQ(r[39], 0x10);  // flags @39, accumulate
  EXPECT_EQ(r[48], 0x00);
  EXPECT_EQ(r[51], 0x02);  // dst start 0x2000000 @48
  EXPECT_TRUE(decode(G::MAVERICK, r).valid()) << dump(decode(G::MAVERICK, r));
  LdweightsArgs lw = lw_args();
  lw.load_order = PeLwOrder::FIRST_COL_FIRST;
  lw.xpose = true;
  lw.perf = 3;
  r = encode_ldweights(G::MAVERICK, lw);
  EXPECT_EQ(r[38], 0x21);  // LD_WEIGHT_FLAGS @38: xpose bit 0, load_order bit 5
  EXPECT_EQ(r[39], 3);     // perf_mode @39
  r = encode_ldweights(G::MARIANA, lw);
  EXPECT_EQ(r[47], 0x21);  // flags @47
  EXPECT_EQ(r[35], 3);     // perf_opt @35 (model)
  r = encode_pe_seed(G::MARIANA, save_seed_args());
  EXPECT_EQ(r[0], 0x08);
  EXPECT_EQ(r[33], 2);    // mode @33 SAVE_SEED
  EXPECT_EQ(r[34], 16);   // num_active_rows @34
  EXPECT_EQ(r[35], 128);  // num_active_cols @35
  EXPECT_EQ(r[39], 0x02);  // dst start 0x2000000 @36
  EXPECT_EQ(r[44], 2);    // dst num_elem[0] @36+8
  EXPECT_EQ(r[46], 8);    // dst num_elem[1]
}

}  // namespace
}  // namespace pevp::isa::test

namespace pevp::isa::test {
namespace {

// A runtime adds EVENTS to a planned program: the bytes equal the builder's own with the same EVENTS, on every
// generation (EVENTS is at byte 4 of every struct), and nothing else moves.
TEST(Builders, WithEventsEqualsEncodingTheEventsInTheFirstPlace) {
  for (const G g : {G::CAYMAN, G::MARIANA, G::MARIANA_PLUS, G::MAVERICK}) {
    SCOPED_TRACE(name(g));
    MatmulArgs a = mm_args();
    const RawInstruction plain = encode_matmul(g, a);
    a.events.wait_mode = WaitMode::WAIT_EQ;
    a.events.wait_sem = 31;
    a.events.wait_value = 0xBEEF;
    a.events.update_mode = UpdateMode::SET;
    a.events.update_sem = 2;
    a.events.update_value = 7;
    EXPECT_EQ(with_events(plain, a.events), encode_matmul(g, a));
    const EventsPart e = events_of(decode(g, with_events(plain, a.events)).instr);
    EXPECT_EQ(e.wait_sem, 31u);
    EXPECT_EQ(e.wait_value, 0xBEEFu);
    EXPECT_EQ(e.update_mode, UpdateMode::SET);
    EXPECT_EQ(with_events(with_events(plain, a.events), EventsArgs{}), plain) << "NONE restores the plain bytes";
  }
}

TEST(Builders, WithEventsRefusesWhatD_EventsForbids) {
  const RawInstruction plain = mm_base(G::MARIANA);
  EventsArgs idle_index;
  idle_index.wait_sem = 3;  // a NONE wait with an index
  expect_error([&] { with_events(plain, idle_index); }, {"NONE wait takes semaphore 0"});
  EventsArgs idle_value;
  idle_value.update_value = 1;
  expect_error([&] { with_events(plain, idle_value); }, {"NONE update takes semaphore 0"});
  EventsArgs too_far;
  too_far.update_mode = UpdateMode::INCREMENT;
  too_far.update_sem = kNumSemaphores;
  expect_error([&] { with_events(plain, too_far); }, {"semaphore 32 of 32"});
}

}  // namespace
}  // namespace pevp::isa::test
