// The assembly text (docs/assembly.md): every record the decoder accepts --
// random valid ones and random bytes with reserved bytes and markers set --
// prints as text that assembles to the same 64 bytes on every generation;
// hand-written programs assemble to the bytes the Encoder builds from the same
// field values; and every kind of bad input gets its line, column, field and rule.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <set>
#include <iterator>
#include <vector>

#include "isa_random.h"
#include "pevp/isa_text/assembly.h"

namespace pevp::isa::test {
namespace {

const int kPerOpcode = volume(200, 4);

std::string hex_of(const RawInstruction& r) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto b : r) s += d[b >> 4], s += d[b & 0xF];
  return s;
}

std::string diags(const AsmResult& r) {
  std::string s;
  for (const auto& d : r.diagnostics) s += d.describe("t.s") + "\n";
  return s;
}

// Assembles one printed line and checks it gives back `raw`.
void expect_round_trip(G g, const RawInstruction& raw, bool expect_valid, int& failures) {
  const Decoded d = decode(g, raw);
  const std::string text = to_assembly(d);
  const AsmResult r = assemble(g, text, {true});
  if (!r.ok() || r.records.size() != 1 || r.records[0] != raw) {
    ++failures;
    ADD_FAILURE() << name(g) << "\n text " << text << "\n in   " << hex_of(raw) << "\n out  "
                  << (r.records.empty() ? std::string("-") : hex_of(r.records[0])) << "\n"
                  << diags(r);
    return;
  }
  if (expect_valid) {  // a valid record re-assembles without even a warning
    const AsmResult strict = assemble(g, text);
    if (!strict.diagnostics.empty()) ++failures, ADD_FAILURE() << text << "\n" << diags(strict);
  }
}

class AsmRoundTrip : public ::testing::TestWithParam<G> {};

TEST_P(AsmRoundTrip, RandomValidInstructionsOfEveryOpcode) {
  const G g = GetParam();
  Rng r(0xa5a50000u + static_cast<unsigned>(g));
  for (Opcode op : kAllOpcodes) {
    if (!usable(op, g)) continue;
    int failures = 0;
    for (int i = 0; i < kPerOpcode && failures < 3; ++i) {
      const RawInstruction raw = random_valid(g, op, r);
      ASSERT_TRUE(decode(g, raw).valid()) << name(op);
      expect_round_trip(g, raw, true, failures);
    }
  }
}

TEST_P(AsmRoundTrip, ArbitraryBytesOfEveryOpcodeOfTheGeneration) {
  const G g = GetParam();
  Rng r(0xc0de0000u + static_cast<unsigned>(g));
  for (Opcode op : kAllOpcodes) {
    if (!exists_in(op, g)) continue;
    int failures = 0;
    for (int i = 0; i < kPerOpcode && failures < 3; ++i) {
      RawInstruction raw = random_bytes(r, static_cast<std::uint8_t>(op));
      // Steer a third of the MEM_PATTERN3D start addresses to each union member.
      for (std::uint8_t off : layout_of(g, struct_of(op)).union_offsets) {
        const int member = static_cast<int>(r.uni(0, 3));
        raw[off] = static_cast<std::uint8_t>(member == 1 ? raw[off] | 1 : raw[off] & ~1);
        raw[off + 3] = static_cast<std::uint8_t>(member >= 2 ? raw[off + 3] | 0x80 : raw[off + 3] & 0x7F);
        if (member == 3) raw[off] |= 1;  // both markers: decodes as TENSOR3D, invalid
      }
      expect_round_trip(g, raw, false, failures);
    }
  }
}

TEST_P(AsmRoundTrip, UnknownOpcodesUseRaw) {
  const G g = GetParam();
  Rng r(0x7a770000u + static_cast<unsigned>(g));
  int failures = 0;
  for (int byte = 0; byte < 256; ++byte) {
    if (opcode_from_byte(static_cast<std::uint8_t>(byte), g)) continue;
    const RawInstruction raw = random_bytes(r, static_cast<std::uint8_t>(byte));
    EXPECT_EQ(to_assembly(decode(g, raw)).rfind(".raw ", 0), 0u);
    expect_round_trip(g, raw, false, failures);
  }
}

TEST_P(AsmRoundTrip, AllZeroAndAllOnesRecords) {
  const G g = GetParam();
  int failures = 0;
  for (Opcode op : kAllOpcodes) {
    if (!exists_in(op, g)) continue;
    RawInstruction zero{}, ones;
    ones.fill(0xFF);
    zero[0] = ones[0] = static_cast<std::uint8_t>(op);
    expect_round_trip(g, zero, false, failures);
    expect_round_trip(g, ones, false, failures);
  }
}

INSTANTIATE_TEST_SUITE_P(Gens, AsmRoundTrip, ::testing::ValuesIn(kAllGenerations),
                         [](const auto& info) { return gen_name(info.param); });

// ---- hand-written text against the Encoder ------------------------------------------

TEST(Asm, MatmulTextGivesTheEncodersBytes) {
  // MARIANA: SBUF partition p byte o = p * 256 KiB + o; PSUM partition p byte o =
  // 0x2000000 + p * 16 KiB + o (D-ADDR).
  const std::string text =
      "matmul src=sbuf[0]+0x400:[1,512][0,1] in_dtype=bf16 num_active_rows=128 num_active_cols=64 "
      "out_dtype=FP32 flags.accumulate_flag=ACCUMULATE psum_accumulate_flags=MULTI_START row_grp=0xF "
      "col_grp=0x3 psum_zero_region=BANKS_2 dst_mem_pattern=psum[0]+0x800:[1,512] events.update_mode=INCREMENT "
      "events.update_sem=3 events.update_value=1\n";
  const AsmResult r = assemble(G::MARIANA, text);
  ASSERT_TRUE(r.ok()) << diags(r);
  ASSERT_EQ(r.records.size(), 1u);
  Encoder e(G::MARIANA, Opcode::MATMUL);
  e.set("src_mem_pattern.start_addr", 0x400)
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", 512)
      .set("src_mem_pattern.num_elem[1]", 1)
      .set("src_mem_pattern.num_elem[2]", 1)
      .set("in_dtype", 0x6)
      .set("num_active_rows", 128)
      .set("num_active_cols", 64)
      .set("out_dtype", 0xA)
      .set("flags.accumulate_flag", 1)
      .set("psum_accumulate_flags", 1)
      .set("row_grp", 0xF)
      .set("col_grp", 0x3)
      .set("psum_zero_region", 1)
      .set("dst_mem_pattern.start_addr", 0x2000000 + 0x800)
      .set("dst_mem_pattern.step_elem[0]", 1)
      .set("dst_mem_pattern.num_elem[0]", 512)
      .set("dst_mem_pattern.num_elem[1]", 1)
      .set("dst_mem_pattern.num_elem[2]", 1)
      .set("events.update_mode", 2)
      .set("events.update_sem", 3)
      .set("events.update_value", 1);
  EXPECT_EQ(hex_of(r.records[0]), hex_of(e.bytes()));
  EXPECT_EQ(r.records[0][1], 16) << "inst_word_len defaults to 16 (D-HEADER)";
}

TEST(Asm, MxAndIndirectMembersSetTheirMarkers) {
  const AsmResult r = assemble(
      G::MAVERICK,
      "matmul src=mx(sbuf[0]+0x10, scale=sbuf[1]):[1,64][64,2] in_dtype=fp8_e4m3 "
      "dst=indirect(psum[0], index=0x100, num_index=7):[-2,3]\n");
  ASSERT_EQ(r.records.size(), 1u) << diags(r);
  const Decoded d = decode(G::MAVERICK, r.records[0]);
  EXPECT_EQ(d.get("src_mem_pattern.start_addr"), 0x11) << "mx() sets ADDR4MARKER_MXTENSOR_V2 (spec 7)";
  EXPECT_EQ(d.get("src_mem_pattern.scale_addr"), 256 * 1024);
  EXPECT_EQ(d.get("src_mem_pattern.step_elem[1]"), 64);
  EXPECT_EQ(d.get("src_mem_pattern.num_elem[1]"), 2);
  EXPECT_EQ(d.get("in_dtype"), 0xE);
  EXPECT_EQ(d.get("dst_mem_pattern.start_addr"), 0x82000000ll) << "indirect() sets bit 31 (D-MEMPAT)";
  EXPECT_EQ(d.get("dst_mem_pattern.index_addr"), 0x100);
  EXPECT_EQ(d.get("dst_mem_pattern.num_index"), 7);
  EXPECT_EQ(d.get("dst_mem_pattern.step_elem"), -2);
  EXPECT_EQ(d.get("dst_mem_pattern.num_elem"), 3);
}

TEST(Asm, OmittedDimensionsTakeOneElementAndOmittedFieldsZero) {
  const AsmResult r = assemble(G::CAYMAN, "ldtags src=0x40:[2,8]\n", {true});
  ASSERT_EQ(r.records.size(), 1u);
  const Decoded d = decode(G::CAYMAN, r.records[0]);
  EXPECT_EQ(d.get("src_mem_pattern.step_elem[0]"), 2);
  EXPECT_EQ(d.get("src_mem_pattern.num_elem[0]"), 8);
  EXPECT_EQ(d.get("src_mem_pattern.step_elem[1]"), 0);
  EXPECT_EQ(d.get("src_mem_pattern.num_elem[1]"), 1);
  EXPECT_EQ(d.get("src_mem_pattern.num_elem[2]"), 1);
  EXPECT_EQ(d.get("in_dtype"), 0);
  EXPECT_EQ(d.get("row_grp"), 0);
}

TEST(Asm, ConstantsLabelsCommentsAndExpressions) {
  const std::string text =
      "# a comment line\n"
      ".gen v4   ; the generation, checked against the caller's\n"
      ".const K = 64\n"
      ".equ BASE, sbuf[1] + 2*K\n"
      "first: pe_reg_write reg_addr=next imm_value=K|0x100 src=BASE:[1,1] row_grp=0x1 col_grp=0x1\n"
      "next:\n"
      "  pe_reg_write reg_addr=first imm_value=-(-5) src=BASE+K-1:[-1,1] row_grp=0x1 col_grp=0x1 # trailing\n";
  const AsmResult r = assemble(G::MARIANA, text);
  ASSERT_TRUE(r.ok()) << diags(r);
  ASSERT_EQ(r.records.size(), 2u);
  const Decoded a = decode(G::MARIANA, r.records[0]), b = decode(G::MARIANA, r.records[1]);
  EXPECT_EQ(a.get("reg_addr"), 64) << "a label is the byte offset of the next record";
  EXPECT_EQ(a.get("imm_value"), 0x140);
  EXPECT_EQ(a.get("src_mem_pattern.start_addr"), 256 * 1024 + 128);
  EXPECT_EQ(b.get("reg_addr"), 0);
  EXPECT_EQ(b.get("imm_value"), 5);
  EXPECT_EQ(b.get("src_mem_pattern.start_addr"), 256 * 1024 + 128 + 63);
  EXPECT_EQ(b.get("src_mem_pattern.step_elem[0]"), -1);
}

// gen_directive() finds the .gen the assembler reads -- past comments and labels, the name in any case -- and the
// assembler accepts the source for the generation it names.
TEST(Asm, GenDirectiveIsFoundAsTheAssemblerReadsIt) {
  struct Case {
    const char* text;
    std::optional<std::string> want;
  };
  for (const Case& c : std::vector<Case>{
           {".gen MARIANA\n", "MARIANA"},
           {"# MAVERICK\n; .gen CAYMAN in a comment\n  .GEN v4   ; and a comment\n", "v4"},
           {".gen MARIANA;v4\n", "MARIANA"},
           {"start: .gen CAYMAN # after a label\n", "CAYMAN"},
           {"a: b: .Gen mariana_plus\n.gen MAVERICK\n", "mariana_plus"},
           {"start:\t.GEN\tMAVERICK\r\n.const K = 1\r\n", "MAVERICK"},
           {".gen\n", ""},
           {".const K = 1\n", std::nullopt},
           {"", std::nullopt},
       }) {
    EXPECT_EQ(gen_directive(c.text), c.want) << c.text;
    if (!c.want || c.want->empty()) continue;
    const std::optional<Generation> g = parse_generation(*c.want);
    ASSERT_TRUE(g) << *c.want;
    const std::string text(c.text);
    if (text.find("\n.gen MAVERICK") != std::string::npos) continue;  // a second .gen that disagrees, on purpose
    EXPECT_TRUE(assemble(*g, text).ok()) << c.text << diags(assemble(*g, text));
  }
}

TEST(Asm, PsumFlagBitsCombineWithBar) {
  const AsmResult r =
      assemble(G::CAYMAN, "matmul psum_accumulate_flags=BEGIN_ACCUM|END\nmatmul psum_accumulate_flags=BEGIN|END\n",
               {true});
  ASSERT_EQ(r.records.size(), 2u) << diags(r);
  EXPECT_EQ(decode(G::CAYMAN, r.records[0]).get("psum_accumulate_flags"), 6);
  EXPECT_EQ(decode(G::CAYMAN, r.records[1]).get("psum_accumulate_flags"), 3);
}

TEST(Asm, ReservedBytesAreWrittenInMemoryOrder) {
  const AsmResult r = assemble(G::CAYMAN, "ldweights reserved3=bytes:0a0b\n", {true});
  ASSERT_EQ(r.records.size(), 1u) << diags(r);
  EXPECT_EQ(r.records[0][46], 0x0a);  // cayman::S3_LW reserved3 @46
  EXPECT_EQ(r.records[0][47], 0x0b);
  EXPECT_EQ(r.records[0][48], 0x00);
}

// Every code block of docs/assembly.md that opens with .gen assembles without a
// diagnostic: the documented examples are valid programs. The docs path is found
// from the validate.cpp path tests/isa/CMakeLists.txt passes in.
TEST(Asm, DocumentedExamplesAreValid) {
  std::string root = PEVP_VALIDATE_CPP;
  root.resize(root.size() - std::string("models/isa/src/validate.cpp").size());
  std::ifstream in(root + "docs/assembly.md");
  ASSERT_TRUE(in) << root;
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int blocks = 0;
  for (std::size_t at = doc.find("```\n.gen "); at != std::string::npos; at = doc.find("```\n.gen ", at)) {
    const std::size_t begin = at + 4, end = doc.find("```", begin);
    const std::string block = doc.substr(begin, end - begin);
    const auto g = parse_generation(block.substr(5, block.find('\n') - 5));
    ASSERT_TRUE(g) << block;
    const AsmResult r = assemble(*g, block);
    EXPECT_TRUE(r.diagnostics.empty()) << block << "\n" << diags(r);
    EXPECT_FALSE(r.records.empty());
    // and what disasm prints for it assembles to the same bytes
    std::string text;
    for (const auto& rec : r.records) text += to_assembly(decode(*g, rec)) + "\n";
    EXPECT_EQ(assemble(*g, text).bytes(), r.bytes()) << text;
    ++blocks, at = end + 3;
  }
  EXPECT_GE(blocks, 4);
}

// ---- errors -----------------------------------------------------------------------

const AsmDiagnostic* find_rule(const AsmResult& r, const std::string& rule) {
  for (const auto& d : r.diagnostics)
    if (d.rule == rule) return &d;
  return nullptr;
}

TEST(AsmErrors, ValueErrorsNameLineColumnFieldAndRule) {
  struct Case {
    std::string text, rule, field;
    unsigned column;
    std::string message_part;
  };
  const std::vector<Case> cases{
      {"matmull in_dtype=bf16", "asm.mnemonic", "", 1, "unknown mnemonic 'matmull'"},
      {"matmul in_dtyp=bf16", "asm.field", "in_dtyp", 8, "has no field 'in_dtyp'"},
      {"matmul in_dtype=bf17", "asm.name", "in_dtype", 17, "unknown dtype 'bf17'"},
      {"matmul num_active_rows=256", "asm.range", "num_active_rows", 24, "8-bit unsigned: 0..255"},
      {"matmul src=0x0:[40000,1]", "asm.range", "src_mem_pattern.step_elem[0]", 16, "16-bit signed"},
      {"matmul in_dtype=bf16 in_dtype=fp16", "asm.duplicate", "in_dtype", 31, "more than once"},
      {"matmul src=0x0:[1,2][1,2][1,2][1,2]", "asm.pattern", "src_mem_pattern", 31, "one too many"},
      {"matmul src=0x0:[1 2]", "asm.syntax", "src_mem_pattern", 19, "expected ','"},
      {"matmul src=0x1:[1,2]", "asm.pattern", "src_mem_pattern.start_addr", 12, "MXTENSOR_V2 marker"},
      {"matmul src=indirect(0x0, scale=4)", "asm.pattern", "src_mem_pattern", 26, "'scale' is not a key"},
      {"matmul fp32_mode=medium", "asm.name", "fp32_mode", 18, "Low_High"},
      {"matmul flags=3", "asm.field", "flags", 8, "is a group"},
      {"matmul src=sbuf[128]", "asm.range", "src_mem_pattern.start_addr", 12, "partition 128"},
      {"matmul num_active_rows=0x", "asm.syntax", "num_active_rows", 26, "digits"},
      {"matmul num_active_rows=12q", "asm.syntax", "num_active_rows", 26, "malformed number"},
      {"matmul header.opcode=2", "asm.field", "header.opcode", 8, "set by the mnemonic"},
      {"matmul src_mem_pattern.scale_addr=4", "asm.pattern", "src_mem_pattern.scale_addr", 35, "union member"},
      {".gen MAVERICK", "asm.gen", "", 1, "--gen is MARIANA"},
      {".bogus 1", "asm.directive", "", 1, "unknown directive"},
      {".raw 00", "asm.raw", "", 1, "128 hex digits"},
      {"matmul reserved0=5", "asm.range", "reserved0", 8, "reserved field takes 0"},
      {"matmul num_active_rows=K", "asm.name", "num_active_rows", 24, "unknown name 'K'"},
      // The address keywords are reserved: not labels, not constants, not shadowed.
      {"psum: matmul", "asm.symbol", "psum", 1, "'psum' is reserved for addresses"},
      {"SBUF: matmul", "asm.symbol", "SBUF", 1, "'SBUF' is reserved for addresses"},
      {".const sbuf = 4", "asm.symbol", "sbuf", 7, "'sbuf' is reserved for addresses"},
      {"matmul src=psum+0x40", "asm.syntax", "src_mem_pattern.start_addr", 16, "psum needs a partition"},
  };
  for (const Case& c : cases) {
    const AsmResult r = assemble(G::MARIANA, "\n" + c.text + "\n", {true});
    EXPECT_FALSE(r.ok()) << c.text;
    const AsmDiagnostic* d = find_rule(r, c.rule);
    ASSERT_NE(d, nullptr) << c.text << "\n" << diags(r);
    EXPECT_EQ(d->severity, AsmDiagnostic::Severity::Error) << c.text;
    EXPECT_EQ(d->line, 2u) << c.text;
    EXPECT_EQ(d->column, c.column) << c.text << "\n" << diags(r);
    EXPECT_EQ(d->field, c.field) << c.text;
    EXPECT_NE(d->message.find(c.message_part), std::string::npos) << c.text << "\n" << d->message;
  }
}

TEST(AsmErrors, EveryBadLineIsReportedNotOnlyTheFirst) {
  const AsmResult r = assemble(G::CAYMAN, "matmul in_dtype=nope\nbad\nmatmul out_dtype=fp33 src=0x0:[1\n");
  EXPECT_FALSE(r.ok());
  std::set<unsigned> lines;
  for (const auto& d : r.diagnostics) lines.insert(d.line);
  EXPECT_EQ(lines, (std::set<unsigned>{1, 2, 3})) << diags(r);
  // Both problems of line 3: the value error before the syntax error is kept.
  int line3 = 0;
  for (const auto& d : r.diagnostics) line3 += d.line == 3 && (d.rule == "asm.name" || d.rule == "asm.syntax");
  EXPECT_EQ(line3, 2) << diags(r);
}

TEST(AsmErrors, RuleViolationsAreErrorsUnlessAllowed) {
  // out_dtype BF16 is v4+ only (spec 8): rule mm.out_dtype, reported at the operand.
  const std::string text = "matmul out_dtype=BFLOAT16\n";
  const AsmResult strict = assemble(G::CAYMAN, text);
  EXPECT_FALSE(strict.ok());
  const AsmDiagnostic* d = find_rule(strict, "mm.out_dtype");
  ASSERT_NE(d, nullptr) << diags(strict);
  EXPECT_EQ(d->field, "out_dtype");
  EXPECT_EQ(d->column, 8u);
  EXPECT_EQ(d->severity, AsmDiagnostic::Severity::Error);
  EXPECT_EQ(d->describe("k.s").rfind("k.s:1:8: error: out_dtype = 6: ", 0), 0u) << d->describe("k.s");

  const AsmResult lenient = assemble(G::CAYMAN, text, {true});
  EXPECT_TRUE(lenient.ok()) << diags(lenient);
  ASSERT_EQ(lenient.records.size(), 1u);
  EXPECT_EQ(lenient.records[0][40], 0x6);
  ASSERT_NE(find_rule(lenient, "mm.out_dtype"), nullptr);
  EXPECT_EQ(find_rule(lenient, "mm.out_dtype")->severity, AsmDiagnostic::Severity::Warning);
}

TEST(AsmErrors, StreamRulesAreCheckedAcrossLines) {
  // An fp32 stationary then a bf16 matmul on the same tile: mm.fp32_no_mix (spec 8).
  const std::string text =
      "ldweights src=0x0:[1,128] in_dtype=FP32 fp32_mode=High num_active_rows=128 num_active_cols=128 "
      "row_grp=0xF col_grp=0xF\n"
      "matmul src=0x0:[1,128] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF col_grp=0xF "
      "dst=psum[0]:[1,128] psum_accumulate_flags=SINGLE\n";
  const AsmResult r = assemble(G::MARIANA, text);
  const AsmDiagnostic* d = find_rule(r, "mm.fp32_no_mix");
  ASSERT_NE(d, nullptr) << diags(r);
  EXPECT_EQ(d->line, 2u);
  EXPECT_EQ(r.diagnostics.size(), 1u) << diags(r);
}

// A field left out whose default breaks rules is one error naming the instruction, the line and the field -- not
// one per rule its default breaks (a pattern left out breaks num_elem once per dimension, and its address).
TEST(AsmErrors, AFieldLeftOutIsOneErrorNamingInstructionLineAndField) {
  const std::string lw =
      "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n";
  const std::string mm_operands =
      "in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF psum_accumulate_flags=SINGLE";
  struct Case {
    std::string second_line, field, mention, first_rule;
  };
  const std::vector<Case> cases{
      // dst left out: its start address 0 is not in PSUM and its three dimensions hold 0 elements (4 rules).
      {"matmul src=sbuf[0]+0x1000:[1,48] " + mm_operands, "dst_mem_pattern", "matmul needs dst=ADDR:[step,num]",
       "mempattern.dst_psum"},
      // src left out: three dimensions of 0 elements.
      {"matmul " + mm_operands + " dst=psum[0]:[1,48]", "src_mem_pattern", "matmul needs src=ADDR:[step,num]",
       "mempattern.num_elem"},
      // A scalar left out: its default 0 breaks the tile rule.
      {"matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_cols=32 row_grp=0xF col_grp=0xF "
       "psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]",
       "num_active_rows", "matmul needs num_active_rows=VALUE", "tile.num_active_rows"},
  };
  for (const Case& c : cases) {
    const AsmResult r = assemble(G::MARIANA, lw + c.second_line + "\n");
    ASSERT_EQ(r.diagnostics.size(), 1u) << c.second_line << "\n" << diags(r);
    const AsmDiagnostic& d = r.diagnostics[0];
    EXPECT_EQ(d.severity, AsmDiagnostic::Severity::Error);
    EXPECT_EQ(d.rule, "asm.missing");
    EXPECT_EQ(d.line, 2u);
    EXPECT_EQ(d.column, 1u);
    EXPECT_EQ(d.field, c.field);
    EXPECT_NE(d.message.find(c.mention), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("(rule " + c.first_rule + ")"), std::string::npos) << d.message;
    EXPECT_FALSE(r.ok());
  }
  // The whole line as the command line prints it.
  const AsmResult r = assemble(G::MARIANA, lw + cases[0].second_line + "\n");
  EXPECT_EQ(r.diagnostics[0].describe("p.pes"),
            "p.pes:2:1: error: dst_mem_pattern: missing: matmul needs dst=ADDR:[step,num]...; left out, its default "
            "breaks dst_mem_pattern.start_addr = 0: destination must lie in PSUM [0x2000000, 0x2200000) (rule "
            "mempattern.dst_psum) [asm.missing]");
  // With --allow-invalid it is one warning, and the record is written with the default.
  const AsmResult lenient = assemble(G::MARIANA, lw + cases[0].second_line + "\n", {true});
  ASSERT_EQ(lenient.diagnostics.size(), 1u) << diags(lenient);
  EXPECT_EQ(lenient.diagnostics[0].severity, AsmDiagnostic::Severity::Warning);
  EXPECT_TRUE(lenient.ok());
  EXPECT_EQ(lenient.records.size(), 2u);
  // A field that is written keeps its own precise error: nothing is missing, the value breaks the rule.
  const AsmResult written =
      assemble(G::MARIANA, lw + "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=int8 num_active_rows=64 "
                                "num_active_cols=32 row_grp=0xF col_grp=0xF psum_accumulate_flags=SINGLE "
                                "dst=psum[0]:[1,48]\n");
  ASSERT_EQ(written.diagnostics.size(), 1u) << diags(written);
  EXPECT_EQ(written.diagnostics[0].rule, "mm.in_dtype");
  EXPECT_EQ(written.diagnostics[0].field, "in_dtype");
  // Two fields left out: one error each, on their line.
  const AsmResult two = assemble(G::MARIANA, lw + "matmul " + mm_operands + "\n");
  std::set<std::string> fields;
  for (const auto& d : two.diagnostics) {
    EXPECT_EQ(d.rule, "asm.missing") << diags(two);
    fields.insert(d.field);
  }
  EXPECT_EQ(fields, (std::set<std::string>{"src_mem_pattern", "dst_mem_pattern"})) << diags(two);
  EXPECT_EQ(two.diagnostics.size(), 2u) << diags(two);
}

// "key=" with nothing after it: one error at the operand, not an unknown name (the next key) and a syntax error.
TEST(AsmErrors, AnEmptyValueIsOneErrorAtItsOperand) {
  const AsmResult r = assemble(
      G::MARIANA,
      "ldweights src= in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n"
      "matmul src=sbuf[0]:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
      "psum_accumulate_flags=SINGLE dst=\n");
  ASSERT_EQ(r.diagnostics.size(), 2u) << diags(r);
  EXPECT_EQ(r.diagnostics[0].describe("p.pes"),
            "p.pes:1:11: error: src_mem_pattern: missing value: 'src=' is followed by nothing [asm.missing]");
  EXPECT_EQ(r.diagnostics[1].describe("p.pes"),
            "p.pes:2:132: error: dst_mem_pattern: missing value: 'dst=' is followed by nothing [asm.missing]");
}

TEST(AsmErrors, MnemonicOfAnotherGenerationAndDuplicateSymbols) {
  const AsmResult r = assemble(G::CAYMAN, "ldweights_mx\n.const A = 1\n.const A = 2\nA: ldtags\n", {true});
  ASSERT_NE(find_rule(r, "asm.mnemonic"), nullptr);
  EXPECT_NE(find_rule(r, "asm.mnemonic")->message.find("not an instruction of CAYMAN"), std::string::npos);
  int dup = 0;
  for (const auto& d : r.diagnostics) dup += d.rule == "asm.symbol";
  EXPECT_EQ(dup, 2) << diags(r);
}

TEST(AsmErrors, NoTextCrashesTheAssembler) {
  // Byte soup, unbalanced brackets, huge numbers, overflow: diagnostics only.
  Rng r(0x5eed);
  const std::string alphabet = "matmul=[](),:.|+-*#;x0123456789abcdefsbufpsum_ \n\t\"'";
  for (int i = 0; i < volume(3000, 10); ++i) {
    std::string s;
    const auto n = r.uni(0, 80);
    for (std::int64_t k = 0; k < n; ++k) s += alphabet[static_cast<std::size_t>(r.uni(0, alphabet.size() - 1))];
    if (r.coin()) s = "matmul " + s;
    (void)assemble(G::MAVERICK, s, {r.coin()});
  }
  const AsmResult big = assemble(G::MARIANA, "matmul imm=1 num_active_rows=99999999999999999999999\n");
  EXPECT_NE(find_rule(big, "asm.range"), nullptr) << diags(big);
  const AsmResult deep = assemble(G::MARIANA, "matmul num_active_rows=" + std::string(100000, '(') + "1\n");
  EXPECT_NE(find_rule(deep, "asm.syntax"), nullptr) << "nesting is bounded, not a stack overflow";
  const AsmResult neg = assemble(G::MARIANA, "matmul num_active_rows=" + std::string(100000, '-') + "1\n");
  EXPECT_NE(find_rule(neg, "asm.syntax"), nullptr);
  const AsmResult ovf = assemble(G::MARIANA, "matmul num_active_rows=0x7fffffffffffffff*2\n");
  EXPECT_NE(find_rule(ovf, "asm.syntax"), nullptr) << diags(ovf);
}

}  // namespace
}  // namespace pevp::isa::test

namespace pevp::isa::test {
namespace {
// The .geometry directive: every malformed operand is a diagnostic, never an exception.
TEST(AsmGeometry, MalformedOperandsAreDiagnostics) {
  for (const char* line : {".geometry pe_rows=", ".geometry pe_rows", ".geometry foo=1", ".geometry pe_rows=-4",
                           ".geometry pe_rows=99999999999999999999999999", ".geometry pe_rows=0x40",
                           ".geometry pe_rows=64x"}) {
    const AsmResult r = assemble(G::MARIANA, std::string(line) + "\n");
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_EQ(r.diagnostics[0].rule, "asm.geometry") << line;
  }
  // A directive that states the preset's own values is the preset.
  EXPECT_TRUE(assemble(G::MARIANA, ".geometry pe_rows=128 psum_banks=8\n").ok());
}

// Partitions and SBUF bytes a .geometry line does not name follow its array (D-GEOMETRY-FOLLOW), as --set's do:
// 256 columns on MARIANA take 256 partitions of 32 MiB / 256 = 128 KiB.
TEST(AsmGeometry, UnnamedMembersFollowTheArray) {
  ArrayGeometry wide = preset_geometry(G::MARIANA);
  wide.pe_cols = 256;
  wide.partitions = 256;
  wide.sbuf_partition_bytes = 131072;
  EXPECT_TRUE(assemble(G::MARIANA, ".geometry pe_cols=256\n", AsmOptions(false, wide)).ok());
  const AsmResult kept = assemble(G::MARIANA, ".geometry pe_cols=256 sbuf_partition_bytes=65536\n", AsmOptions(false, wide));
  ASSERT_FALSE(kept.ok());
  EXPECT_NE(kept.diagnostics[0].message.find("sbuf_partition_bytes=65536"), std::string::npos)
      << kept.diagnostics[0].message;
}
}  // namespace
}  // namespace pevp::isa::test
