// Every validity rule of models/isa/src/validate.cpp: for each rule id a valid
// baseline (builders.h / Encoder) and a minimal mutation that breaks exactly
// that rule, asserting the rule id AND the field it names, on each generation
// where the rule applies; plus the generations / values where it must not fire.
// Expected values come from spec 000 (sections cited per case) and FACTS.md.
#include <gtest/gtest.h>

#include "validate_source.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "isa_test_util.h"

namespace pevp::isa::test {
namespace {

using Base = std::function<RawInstruction(G)>;
using Mut = std::function<void(G, RawInstruction&)>;

Mut set(std::string path, std::int64_t v) {
  return [path, v](G g, RawInstruction& r) { patch(g, r, path, v); };
}
Mut seq(std::vector<Mut> ms) {
  return [ms](G g, RawInstruction& r) {
    for (const auto& m : ms) m(g, r);
  };
}
Mut byte_at(unsigned off, std::uint8_t v) {
  return [off, v](G, RawInstruction& r) { r.at(off) = v; };
}
Mut none() {
  return [](G, RawInstruction&) {};
}
constexpr int D(Dtype d) { return static_cast<int>(d); }

// ---- extra baselines ---------------------------------------------------------------------
// A MEM_PATTERN3D source as the INDIRECT16B member (model: bit 31 marker).
RawInstruction lw_indirect_base(G g) {
  RawInstruction r = lw_base(g);
  patch(g, r, "src_mem_pattern.start_addr", 0x80000000u);
  patch(g, r, "src_mem_pattern.index_addr", 0x8000);
  patch(g, r, "src_mem_pattern.step_elem", 1);
  patch(g, r, "src_mem_pattern.num_elem", 128);
  patch(g, r, "src_mem_pattern.num_index", 64);
  patch(g, r, "src_mem_pattern.reserved", 0);
  return r;
}

// MAVERICK unified MX (spec 7): start_addr bit 0 selects MXTENSOR_V2, scales in SBUF.
void set_mx_src(Encoder& e) {
  e.set("src_mem_pattern.start_addr", 0x1).set("src_mem_pattern.scale_addr", 0x4000);
  e.set("src_mem_pattern.step_elem[0]", 1).set("src_mem_pattern.step_elem[1]", 0);
  e.set("src_mem_pattern.num_elem[0]", 128).set("src_mem_pattern.num_elem[1]", 1);
}
RawInstruction mav_mx_lw_base(G g) {
  Encoder e(g, Opcode::LDWEIGHTS);
  set_mx_src(e);
  e.set("in_dtype", D(Dtype::FP8_EXP4)).set("num_active_rows", 128).set("num_active_cols", 128);
  full_tile(e, g);
  return e.bytes();
}
RawInstruction mav_mx_mm_base(G g) {
  Encoder e(g, Opcode::MATMUL);
  set_mx_src(e);
  e.set("in_dtype", D(Dtype::FP4_EXP2)).set("out_dtype", D(Dtype::BFLOAT16));
  e.set("num_active_rows", 128).set("num_active_cols", 128);
  full_tile(e, g);
  tensor(e, "dst_mem_pattern", kPsum, {1, 0, 0}, {128, 1, 1});
  return e.bytes();
}

// MAVERICK c256 Matmul (spec 11): num_active_cols 0 = all 256 columns, dst upper dim 2.
RawInstruction mav_c256_mm_base(G g) {
  MatmulArgs a = mm_args();
  a.num_active_cols = 256;
  a.tile = {0, 128, 0, 256};
  a.dst = {kPsum, {1, 0, 128}, {128, 1, 2}};
  return encode_matmul(g, a);
}
RawInstruction mav_c256_lw_base(G g) {
  LdweightsArgs a = lw_args();
  a.num_active_cols = 256;
  a.tile = {0, 128, 0, 256};
  return encode_ldweights(g, a);
}
RawInstruction mav_r64_lw_base(G g) {
  LdweightsArgs a = lw_args();
  a.num_active_rows = 64;
  a.tile = {64, 64, 128, 128};  // rows 64..127, cols 128..255
  return encode_ldweights(g, a);
}

// MAVERICK load-seed / save-seed micro-ops (spec 5.1): tile {r64, c256}, a single
// source element, FP32 input, fp32_mode High, xpose, 1 row, cols 0, FP32 out;
// SaveSeed's dst 1x1x2.
LdweightsArgs seed_lw_args(PeSeedMode m) {
  LdweightsArgs a;
  a.src = {0x40, {1}, {1}};
  a.in_dtype = Dtype::FP32;
  a.fp32_mode = Fp32Mode::High;
  a.num_active_rows = 1;
  a.num_active_cols = 256;
  a.tile = {0, 64, 0, 256};
  a.xpose = true;
  a.seed_mode = m;
  return a;
}
MatmulArgs seed_mm_args(PeSeedMode m) {
  MatmulArgs a;
  a.src = {0x40, {1}, {1}};
  a.dst = {kPsum, {1, 1, 1}, {1, 1, 2}};
  a.in_dtype = Dtype::FP32;
  a.fp32_mode = Fp32Mode::High;
  a.out_dtype = Dtype::FP32;
  a.num_active_rows = 1;
  a.num_active_cols = 256;
  a.tile = {0, 64, 0, 256};
  a.xpose = true;
  a.seed_mode = m;
  return a;
}
RawInstruction load_seed_lw(G g) { return encode_ldweights(g, seed_lw_args(PeSeedMode::LOAD_SEED)); }
RawInstruction save_seed_lw(G g) { return encode_ldweights(g, seed_lw_args(PeSeedMode::SAVE_SEED)); }
RawInstruction load_seed_mm(G g) { return encode_matmul(g, seed_mm_args(PeSeedMode::LOAD_SEED)); }
RawInstruction save_seed_mm(G g) { return encode_matmul(g, seed_mm_args(PeSeedMode::SAVE_SEED)); }

// fp8 double_row (FACTS: not combinable with column tiling or transpose).
RawInstruction double_row_lw(G g) {
  LdweightsArgs a = lw_args();
  a.in_dtype = Dtype::FP8_EXP5;
  a.perf = perf_opt::FP8_DOUBLE_ROW;
  return encode_ldweights(g, a);
}
RawInstruction double_row_mm(G g) {
  MatmulArgs a = mm_args();
  a.in_dtype = Dtype::FP8_EXP4;
  a.perf = perf_opt::FP8_DOUBLE_ROW;
  return encode_matmul(g, a);
}

// ---- the case table -------------------------------------------------------------------------
struct Case {
  std::string name;
  G gen;
  Base base;
  Mut mut;
  std::string rule;   // empty: the mutated instruction must be valid
  std::string field;
  std::set<std::string> also{};  // other rules the same mutation necessarily breaks
  std::string bug{};             // a known models/isa bug: skip instead of failing
  bool base_valid = true;        // false: the rule is about the opcode itself on `gen`
};

std::vector<Case>& storage() {
  static std::vector<Case> v;
  return v;
}
bool build_cases();
const std::vector<Case>& cases() {
  static const bool built = build_cases();
  (void)built;
  return storage();
}
void add(std::string name, std::vector<G> gens, Base base, Mut mut, std::string rule, std::string field,
         std::set<std::string> also = {}, std::string bug = {}) {
  for (G g : gens) storage().push_back({name, g, base, mut, rule, field, also, bug});
}
// A rule that rejects the opcode on `gens` whole (the same bytes are valid elsewhere).
void opcode_rule(std::string name, std::vector<G> gens, Base base, std::string rule) {
  for (G g : gens) storage().push_back({name, g, base, none(), rule, "header.opcode", {}, {}, false});
}
void ok(std::string name, std::vector<G> gens, Base base, Mut mut) {
  for (G g : gens) storage().push_back({name, g, base, mut, "", "", {}, {}});
}

const std::vector<G> ALL{G::CAYMAN, G::MARIANA, G::MARIANA_PLUS, G::MAVERICK};
const std::vector<G> V4{G::MARIANA, G::MARIANA_PLUS};
const std::vector<G> V4P{G::MARIANA, G::MARIANA_PLUS, G::MAVERICK};
const std::vector<G> GRP{G::CAYMAN, G::MARIANA, G::MARIANA_PLUS};  // row_grp / col_grp generations
const std::vector<G> MAV{G::MAVERICK};
const std::vector<G> CAY{G::CAYMAN};

bool build_cases() {
  // -- opcode.unknown (spec 2: CAYMAN has no 0x08/0x09/0x0A/0xe4) --
  for (int b : {0x08, 0x09, 0x0A, 0xe4})
    add("UnknownV4OpOnCayman_" + std::to_string(b), CAY, lw_base, byte_at(0, static_cast<std::uint8_t>(b)),
        "opcode.unknown", "header.opcode");
  for (int b : {0x00, 0x04, 0x05, 0x0B, 0x9f, 0xe5, 0xff})
    add("UnknownOp_" + std::to_string(b), ALL, lw_base, byte_at(0, static_cast<std::uint8_t>(b)), "opcode.unknown",
        "header.opcode");

  // -- header / events --
  add("InstWordLen15", ALL, mm_base, set("header.inst_word_len", 15), "header.inst_word_len", "header.inst_word_len");
  add("InstWordLen0", ALL, lw_base, set("header.inst_word_len", 0), "header.inst_word_len", "header.inst_word_len");
  add("WaitMode3", ALL, lw_base, set("events.wait_mode", 3), "events.wait_mode", "events.wait_mode");
  add("UpdateMode4", ALL, mm_base, set("events.update_mode", 4), "events.update_mode", "events.update_mode");
  add("WaitSemWithoutMode", ALL, lw_base, set("events.wait_sem", 5), "events.unused_zero", "events.wait_sem");
  add("WaitValueWithoutMode", ALL, lw_base, set("events.wait_value", 7), "events.unused_zero", "events.wait_value");
  add("UpdateSemWithoutMode", ALL, mm_base, set("events.update_sem", 1), "events.unused_zero", "events.update_sem");
  add("UpdateValueWithoutMode", ALL, mm_base, set("events.update_value", 1), "events.unused_zero",
      "events.update_value");
  add("WaitSem32", ALL, lw_base, seq({set("events.wait_mode", 1), set("events.wait_sem", 32)}), "events.sem_index",
      "events.wait_sem");
  add("UpdateSem200", ALL, mm_base, seq({set("events.update_mode", 3), set("events.update_sem", 200)}),
      "events.sem_index", "events.update_sem");
  ok("EventsInUse", ALL, mm_base,
     seq({set("events.wait_mode", 2), set("events.wait_sem", 31), set("events.wait_value", 1000),
          set("events.update_mode", 2), set("events.update_sem", 0), set("events.update_value", 65535)}));

  // -- reserved.zero: one byte of every reserved span the spec or model names --
  add("ReservedMavLw12", MAV, lw_base, byte_at(12, 1), "reserved.zero", "reserved0");
  add("ReservedMavLw41", MAV, lw_base, byte_at(41, 0x80), "reserved.zero", "reserved1");
  add("ReservedMavLw63", MAV, lw_base, byte_at(63, 1), "reserved.zero", "reserved1");
  add("ReservedMavMm41", MAV, mm_base, byte_at(41, 1), "reserved.zero", "reserved1");
  add("ReservedMavMm47", MAV, mm_base, byte_at(47, 1), "reserved.zero", "reserved1");
  add("ReservedMarLw13", V4, lw_base, byte_at(13, 1), "reserved.zero", "reserved0");
  add("ReservedMarLw34", V4, lw_base, byte_at(34, 1), "reserved.zero", "reserved1");
  add("ReservedMarLw46", V4, lw_base, byte_at(46, 1), "reserved.zero", "reserved4");
  add("ReservedMarLw63", V4, lw_base, byte_at(63, 1), "reserved.zero", "reserved5");
  add("ReservedMarMm41", V4, mm_base, byte_at(41, 1), "reserved.zero", "reserved3");
  add("ReservedMarMm46", V4, mm_base, byte_at(46, 1), "reserved.zero", "reserved4");
  add("ReservedCayMm42", CAY, mm_base, byte_at(42, 1), "reserved.zero", "reserved2");  // no flags byte on v3
  add("ReservedCayLw40", CAY, lw_base, byte_at(40, 1), "reserved.zero", "reserved2");
  add("ReservedCayLw50", CAY, lw_base, byte_at(50, 1), "reserved.zero", "reserved3");
  add("ReservedSparseFlagsCayman", CAY, sparse_base, byte_at(42, 0x10), "reserved.zero", "reserved_flags");
  add("ReservedSeed48", V4, load_seed_base, byte_at(48, 1), "reserved.zero", "reserved");
  add("ReservedSeed63", V4, save_seed_base, byte_at(63, 0xff), "reserved.zero", "reserved");
  add("ReservedMmFlagsBitfield", V4P, mm_base, set("flags.reserved_bitfield", 2), "reserved.zero",
      "flags.reserved_bitfield");
  add("ReservedLwFlagsBitfield", V4P, lw_base, set("flags.reserved_bitfield", 1), "reserved.zero",
      "flags.reserved_bitfield");
  add("ReservedIndirect", V4P, lw_indirect_base, byte_at(31, 1), "reserved.zero", "src_mem_pattern.reserved");
  add("ReservedMxLw", V4, mx_lw_base, byte_at(33, 1), "reserved.zero", "reserved1");
  add("ReservedConvLut", V4P, convlut_base, byte_at(25, 1), "reserved.zero", "reserved");
  add("ReservedLdTags", ALL, ldtags_base, byte_at(34, 1), "reserved.zero", "reserved1");
  add("ReservedRegWrite", ALL, regwrite_base, byte_at(28, 1), "reserved.zero", "reserved0");

  // -- access patterns --
  add("MarkerConflictSrc", V4P, lw_base, set("src_mem_pattern.start_addr", 0x80000001u), "mempattern.marker",
      "src_mem_pattern.start_addr");
  add("MarkerConflictDst", V4P, mm_base, set("dst_mem_pattern.start_addr", 0x82000001u), "mempattern.marker",
      "dst_mem_pattern.start_addr");
  // spec 7: MXTENSOR_V2 is the v5 unified path; v4 uses the separate ops.
  add("MxMemberSrcOnV4", V4, lw_base, set("src_mem_pattern.start_addr", 0x1), "mempattern.mx_v5_only",
      "src_mem_pattern.start_addr");
  ok("MxMemberSrcOnMaverick", MAV, mav_mx_lw_base, none());
  ok("MxMemberMatmulOnMaverick", MAV, mav_mx_mm_base, none());
  add("MxMemberDstOnV4", V4, mm_base, set("dst_mem_pattern.start_addr", kPsum | 1), "mempattern.mx_v5_only",
      "dst_mem_pattern.start_addr", {"mempattern.dst_member"});
  add("MxMemberDstOnMaverick", MAV, mm_base, set("dst_mem_pattern.start_addr", kPsum | 1), "mempattern.dst_member",
      "dst_mem_pattern.start_addr");
  add("DstInSbuf", ALL, mm_base, set("dst_mem_pattern.start_addr", 0x1000), "mempattern.dst_psum",
      "dst_mem_pattern.start_addr");
  add("DstPastPsum", ALL, mm_base, set("dst_mem_pattern.start_addr", kPsum + 128 * kPsumPartition),
      "mempattern.dst_psum", "dst_mem_pattern.start_addr");
  add("SparseDstInSbuf", ALL, sparse_base, set("dst_mem_pattern.start_addr", 0x40), "mempattern.dst_psum",
      "dst_mem_pattern.start_addr");
  add("MxMmDstInSbuf", V4, mx_mm_base, set("dst_mem_pattern.start_addr", 0x40), "mempattern.dst_psum",
      "dst_mem_pattern.start_addr");
  add("SrcInPsum", ALL, lw_base, set("src_mem_pattern.start_addr", kPsum), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");
  add("MmSrcInPsum", ALL, mm_base, set("src_mem_pattern.start_addr", kPsum), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");
  // FACTS: SBUF is 128 x 224 KiB on v3, 128 x 256 KiB on v4: 0x1C00000 is past CAYMAN's SBUF
  // but partition 112 of MARIANA's.
  add("SrcPastCaymanSbuf", CAY, lw_base,
      seq({set("num_active_rows", 16), set("src_mem_pattern.start_addr", 128 * 224 * 1024)}), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");
  ok("SrcInMarianaPartition112", V4P, lw_base,
     seq({set("num_active_rows", 16), set("src_mem_pattern.start_addr", 128 * 224 * 1024)}));
  add("SrcPastMarianaSbuf", V4P, lw_base,
      seq({set("num_active_rows", 16), set("src_mem_pattern.start_addr", 128 * 256 * 1024)}), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");
  add("MxLwSrcOutsideSbuf", V4, mx_lw_base, set("src_mem_pattern.start_addr", kPsum), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");
  add("LdTagsSrcOutsideSbuf", ALL, ldtags_base, set("src_mem_pattern.start_addr", kPsum), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");
  add("ConvLutSrcOutsideSbuf", V4P, convlut_base, set("src_mem_pattern.start_addr", kPsum), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");
  add("RegWriteSrcOutsideSbuf", ALL, regwrite_base,
      seq({set("src_mem_pattern.start_addr", kPsum), set("src_mem_pattern.num_elem[0]", 1)}), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");
  ok("RegWriteFromSbuf", ALL, regwrite_base,
     seq({set("src_mem_pattern.start_addr", 0x300), set("src_mem_pattern.num_elem[0]", 1)}));
  add("SeedIdentityOutsideSbuf", V4, load_seed_base, set("identity_mem_pattern.start_addr", kPsum),
      "mempattern.src_sbuf", "identity_mem_pattern.start_addr");
  // 128 active rows starting in partition 1 run off the 128 partitions.
  add("SrcPartitionOverflow", V4P, lw_base, set("src_mem_pattern.start_addr", 256 * 1024), "mempattern.partitions",
      "src_mem_pattern.start_addr");
  add("SrcPartitionOverflowCayman", CAY, lw_base, set("src_mem_pattern.start_addr", 224 * 1024 + 8),
      "mempattern.partitions", "src_mem_pattern.start_addr");
  ok("SrcHalfRowsFromPartition64", V4P, lw_base,
     seq({set("num_active_rows", 64), set("src_mem_pattern.start_addr", 64 * 256 * 1024)}));
  ok("SrcHalfRowsFromPartition64", CAY, lw_base,
     seq({set("num_active_rows", 64), set("src_mem_pattern.start_addr", 64 * 224 * 1024 + 3)}));
  add("DstPartitionOverflow", ALL, mm_base, set("dst_mem_pattern.start_addr", kPsum + kPsumPartition),
      "mempattern.partitions", "dst_mem_pattern.start_addr");
  ok("DstHalfColsFromPartition64", GRP, mm_base,
     seq({set("num_active_cols", 64), set("col_grp", 0xC), set("dst_mem_pattern.start_addr", kPsum + 64 * kPsumPartition)}));
  add("SeedIdentityPartitionOverflow", V4, load_seed_base,
      set("identity_mem_pattern.start_addr", 120 * 256 * 1024), "mempattern.partitions",
      "identity_mem_pattern.start_addr");
  add("MxScaleOutsideSbuf", MAV, mav_mx_lw_base, set("src_mem_pattern.scale_addr", kPsum), "mempattern.scale_sbuf",
      "src_mem_pattern.scale_addr");
  add("MxOpScaleOutsideSbuf", V4, mx_mm_base, set("src_mem_pattern.scale_addr", 0x3000000), "mempattern.scale_sbuf",
      "src_mem_pattern.scale_addr");
  add("SrcNumElemZero", ALL, lw_base, set("src_mem_pattern.num_elem[1]", 0), "mempattern.num_elem",
      "src_mem_pattern.num_elem[1]");
  add("DstNumElemZero", ALL, mm_base, set("dst_mem_pattern.num_elem[2]", 0), "mempattern.num_elem",
      "dst_mem_pattern.num_elem[2]");
  add("MxSrcNumElemZero", MAV, mav_mx_lw_base, set("src_mem_pattern.num_elem[1]", 0), "mempattern.num_elem",
      "src_mem_pattern.num_elem[1]");
  add("MxOpNumElemZero", V4, mx_lw_base, set("src_mem_pattern.num_elem", 0), "mempattern.num_elem",
      "src_mem_pattern.num_elem");
  add("IndirectNumElemZero", V4P, lw_indirect_base, set("src_mem_pattern.num_elem", 0), "mempattern.num_elem",
      "src_mem_pattern.num_elem");
  add("IndirectNumIndexZero", V4P, lw_indirect_base, set("src_mem_pattern.num_index", 0), "mempattern.num_elem",
      "src_mem_pattern.num_index", {},
      "validate.cpp check_pattern (Indirect16B) reports num_index == 0 against field src_mem_pattern.num_elem "
      "(with num_elem's value); split the require so num_index is named");
  ok("IndirectSource", V4P, lw_indirect_base, none());
  // docs/isa.md: "PSUM dst is a tensor" (mempattern.dst_member); an INDIRECT16B dst must be rejected.
  const Mut indirect_dst = seq({set("dst_mem_pattern.start_addr", kPsum | 0x80000000u),
                                set("dst_mem_pattern.index_addr", 0x100), set("dst_mem_pattern.step_elem", 1),
                                set("dst_mem_pattern.num_elem", 128), set("dst_mem_pattern.num_index", 1),
                                set("dst_mem_pattern.reserved", 0)});
  add("IndirectPsumDst", V4P, mm_base, indirect_dst, "mempattern.dst_member", "dst_mem_pattern.start_addr", {},
      "validate.cpp check_ldweights_or_matmul rejects only the MXTENSOR_V2 dst member; an INDIRECT16B PSUM dst "
      "passes although the rule says 'a PSUM destination must be a TENSOR3D pattern' -- test "
      "dst.member != Tensor3D instead of == MxTensorV2");
  add("IndirectPsumDstMatmulMx", V4, mx_mm_base, indirect_dst, "mempattern.dst_member", "dst_mem_pattern.start_addr",
      {},
      "validate.cpp check_mx_op never applies mempattern.dst_member: an INDIRECT16B MATMUL_MX dst is valid; add the "
      "same dst-member check as check_ldweights_or_matmul");
  add("LdTagsNumElemZero", ALL, ldtags_base, set("src_mem_pattern.num_elem[0]", 0), "mempattern.num_elem",
      "src_mem_pattern.num_elem[0]");
  add("ConvLutNumElemZero", V4P, convlut_base, set("src_mem_pattern.num_elem[1]", 0), "mempattern.num_elem",
      "src_mem_pattern.num_elem[1]");
  add("SparseSrcNumElemZero", ALL, sparse_base, set("src_mem_pattern.num_elem[0]", 0), "mempattern.num_elem",
      "src_mem_pattern.num_elem[0]");
  add("SeedIdentityNumElemZero", V4, load_seed_base, set("identity_mem_pattern.num_elem[0]", 0), "mempattern.num_elem",
      "identity_mem_pattern.num_elem[0]", {"pe_seed.identity"});

  // -- tiles: row_grp / col_grp (CAYMAN, MARIANA), tile_size / tile_sel (MAVERICK, spec 11) --
  add("RowGrpNotAligned", GRP, lw_base, set("row_grp", 0x6), "tile.row_grp", "row_grp");
  add("RowGrpZero", GRP, mm_base, set("row_grp", 0x0), "tile.row_grp", "row_grp");
  add("ColGrpThreeGroups", GRP, lw_base, set("col_grp", 0x7), "tile.col_grp", "col_grp");
  add("LdTagsColGrp", GRP, ldtags_base, set("col_grp", 0x10), "tile.col_grp", "col_grp");
  add("RegWriteRowGrp", GRP, regwrite_base, set("row_grp", 0x5), "tile.row_grp", "row_grp");
  add("MxOpRowGrp", V4, mx_lw_base, set("row_grp", 0x9), "tile.row_grp", "row_grp");
  add("SparseColGrp", GRP, sparse_base, set("col_grp", 0x0), "tile.col_grp", "col_grp");
  // FACTS: "MX: row tiling only".
  add("MxColumnTiling", V4, mx_lw_base, seq({set("num_active_cols", 64), set("col_grp", 0x3)}), "mx.row_tiling_only",
      "col_grp");
  add("MxMmColumnTiling", V4, mx_mm_base, seq({set("num_active_cols", 32), set("col_grp", 0x8)}),
      "mx.row_tiling_only", "col_grp");
  ok("MxRowTiling", V4, mx_lw_base, seq({set("num_active_rows", 32), set("row_grp", 0x4)}));
  ok("PlainColumnTiling", GRP, lw_base, seq({set("num_active_cols", 64), set("col_grp", 0x3)}));
  add("TileSizeRow5", MAV, lw_base, set("tile_size.row", 5), "tile_size.row", "tile_size.row");
  add("TileSizeRow8", MAV, mm_base, set("tile_size.row", 8), "tile_size.row", "tile_size.row");
  add("TileSizeCol6", MAV, lw_base, set("tile_size.col", 6), "tile_size.col", "tile_size.col");
  add("TileSizeCol9", MAV, mm_base, set("tile_size.col", 9), "tile_size.col", "tile_size.col");
  add("SparseTileSizeCol", MAV, sparse_base, set("tile_size.col", 0xF), "tile_size.col", "tile_size.col");
  add("LdTagsTileSizeRow", MAV, ldtags_base, set("tile_size.row", 0), "tile_size.row", "tile_size.row");
  // valid_pe_tile_select: row_sel, col_sel <= 1 (spec 11).
  add("TileSelRow2", MAV, mav_r64_lw_base, set("tile_sel.row_sel", 2), "tile_sel.range", "tile_sel.row_sel");
  add("TileSelCol2", MAV, mav_r64_lw_base, set("tile_sel.col_sel", 2), "tile_sel.range", "tile_sel.col_sel");
  add("RegWriteTileSel", MAV, regwrite_base, seq({set("tile_size.row", 6), set("tile_sel.row_sel", 15)}),
      "tile_sel.range", "tile_sel.row_sel");
  ok("TileSelQuadrant11", MAV, mav_r64_lw_base, none());
  add("R128WithRowSel1", MAV, lw_base, set("tile_sel.row_sel", 1), "tile_sel.fits", "tile_sel.row_sel");
  add("C256WithColSel1", MAV, mav_c256_lw_base, set("tile_sel.col_sel", 1), "tile_sel.fits", "tile_sel.col_sel");
  ok("C128ColSel1OnMaverick", MAV, lw_base, set("tile_sel.col_sel", 1));
  add("ActiveRowsZero", ALL, lw_base, set("num_active_rows", 0), "tile.num_active_rows", "num_active_rows");
  add("ActiveRows129", ALL, mm_base, set("num_active_rows", 129), "tile.num_active_rows", "num_active_rows",
      {"mempattern.partitions"});
  add("ActiveRowsPastGroup", GRP, lw_base, seq({set("row_grp", 0x1), set("num_active_rows", 33)}),
      "tile.num_active_rows", "num_active_rows");
  ok("ActiveRowsFillGroup", GRP, lw_base, seq({set("row_grp", 0x2), set("num_active_rows", 32)}));
  add("ActiveRowsPastR64", MAV, mav_r64_lw_base, set("num_active_rows", 65), "tile.num_active_rows",
      "num_active_rows");
  add("LdTagsActiveRowsZero", ALL, ldtags_base, set("num_active_rows", 0), "tile.num_active_rows", "num_active_rows");
  add("SparseActiveCols129", ALL, sparse_base, set("num_active_cols", 129), "tile.num_active_cols", "num_active_cols");
  add("MxOpActiveRowsPastGroup", V4, mx_mm_base, seq({set("row_grp", 0xC), set("num_active_rows", 65)}),
      "tile.num_active_rows", "num_active_rows");
  add("ActiveColsZeroBeforeV5", GRP, lw_base, set("num_active_cols", 0), "tile.num_active_cols", "num_active_cols");
  add("MmActiveColsZeroBeforeV5", GRP, mm_base, set("num_active_cols", 0), "tile.num_active_cols", "num_active_cols");
  // spec 11: num_active_cols == 0 runs the full 256 columns: needs C256.
  add("ActiveColsZeroOnC128", MAV, lw_base, set("num_active_cols", 0), "tile.num_active_cols", "num_active_cols");
  add("MmActiveColsZeroOnC128", MAV, mm_base, set("num_active_cols", 0), "tile.num_active_cols", "num_active_cols");
  ok("ActiveColsZeroOnC256", MAV, mav_c256_lw_base, none());
  ok("ActiveCols200OnC256", MAV, mav_c256_lw_base, set("num_active_cols", 200));
  add("ActiveCols129OnC128", MAV, lw_base, set("num_active_cols", 129), "tile.num_active_cols", "num_active_cols");
  add("ActiveColsPastGroup", GRP, mm_base, seq({set("col_grp", 0x8), set("num_active_cols", 33)}),
      "tile.num_active_cols", "num_active_cols");

  // -- dtypes (spec 7, 8, 4.3) --
  add("MxSrcBf16", MAV, mav_mx_lw_base, set("in_dtype", D(Dtype::BFLOAT16)), "mx.in_dtype", "in_dtype");
  add("MxSrcSfp8", MAV, mav_mx_mm_base, set("in_dtype", D(Dtype::SFP8_E8)), "mx.in_dtype", "in_dtype");
  add("MxOpFp32", V4, mx_lw_base, set("in_dtype", D(Dtype::FP32)), "mx.in_dtype", "in_dtype");
  add("MxOpFp16", V4, mx_mm_base, set("in_dtype", D(Dtype::FP16)), "mx.in_dtype", "in_dtype");
  for (Dtype d : {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::FP4_EXP2, Dtype::INT4}) {
    ok("MxSrcDtype_" + std::string(name(d)), MAV, mav_mx_lw_base, set("in_dtype", D(d)));
    ok("MxOpDtype_" + std::string(name(d)), V4, mx_lw_base, set("in_dtype", D(d)));
  }
  for (int bad : {0x0, 0x2, 0x0B, 0x0C, 0x10, 0x12, 0x13, 0xff}) {
    add("LwInDtype_" + std::to_string(bad), ALL, lw_base, set("in_dtype", bad), "mm.in_dtype", "in_dtype");
    add("MmInDtype_" + std::to_string(bad), ALL, mm_base, set("in_dtype", bad), "mm.in_dtype", "in_dtype");
  }
  add("SparseInDtype", ALL, sparse_base, set("in_dtype", D(Dtype::INT8)), "mm.in_dtype", "in_dtype");
  for (Dtype d : {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::BFLOAT16, Dtype::FP16}) {
    ok("LwInDtype_" + std::string(name(d)), ALL, lw_base, set("in_dtype", D(d)));
    ok("MmInDtype_" + std::string(name(d)), ALL, mm_base, set("in_dtype", D(d)));
  }
  for (int m : {1, 2, 3}) {
    ok("Fp32InputMode" + std::to_string(m), ALL, mm_base, seq({set("in_dtype", D(Dtype::FP32)), set("fp32_mode", m)}));
    ok("SparseFp32InputMode" + std::to_string(m), ALL, sparse_base,
       seq({set("in_dtype", D(Dtype::FP32)), set("fp32_mode", m)}));
  }
  add("Fp32ModeRange", ALL, lw_base, seq({set("in_dtype", D(Dtype::FP32)), set("fp32_mode", 4)}), "fp32_mode.range",
      "fp32_mode");
  add("Fp32ModeRangeSparse", ALL, sparse_base, seq({set("in_dtype", D(Dtype::FP32)), set("fp32_mode", 0xff)}),
      "fp32_mode.range", "fp32_mode");
  add("Fp32InputModeNone", ALL, lw_base, set("in_dtype", D(Dtype::FP32)), "fp32_mode.dtype", "fp32_mode");
  add("MmFp32InputModeNone", ALL, mm_base, set("in_dtype", D(Dtype::FP32)), "fp32_mode.dtype", "fp32_mode");
  add("Bf16InputModeLow", ALL, mm_base, set("fp32_mode", 1), "fp32_mode.dtype", "fp32_mode");
  add("Fp8InputModeHigh", ALL, lw_base, seq({set("in_dtype", D(Dtype::FP8_EXP4)), set("fp32_mode", 2)}),
      "fp32_mode.dtype", "fp32_mode");
  add("SparseBf16ModeLowHigh", ALL, sparse_base, set("fp32_mode", 3), "fp32_mode.dtype", "fp32_mode");
  add("MxSrcModeLow", MAV, mav_mx_lw_base, set("fp32_mode", 1), "fp32_mode.dtype", "fp32_mode");
  // spec 8: out_dtype 0 (= FP32) on v3; 0, FP32 or BF16 from v4.
  add("OutBf16OnCayman", CAY, mm_base, set("out_dtype", D(Dtype::BFLOAT16)), "mm.out_dtype", "out_dtype");
  add("OutFp32OnCayman", CAY, mm_base, set("out_dtype", D(Dtype::FP32)), "mm.out_dtype", "out_dtype");
  ok("OutFp32FromV4", V4P, mm_base, set("out_dtype", D(Dtype::FP32)));
  ok("OutBf16FromV4", V4P, mm_base, set("out_dtype", D(Dtype::BFLOAT16)));
  ok("OutZeroMeansFp32", ALL, mm_base, set("out_dtype", 0));
  add("OutFp16", ALL, mm_base, set("out_dtype", D(Dtype::FP16)), "mm.out_dtype", "out_dtype");
  add("OutFp8", ALL, mm_base, set("out_dtype", D(Dtype::FP8_EXP4)), "mm.out_dtype", "out_dtype");
  add("SparseOutBf16OnCayman", CAY, sparse_base, set("out_dtype", D(Dtype::BFLOAT16)), "mm.out_dtype", "out_dtype");
  ok("SparseOutBf16FromV4", V4P, sparse_base, set("out_dtype", D(Dtype::BFLOAT16)));
  add("MxMmOutFp16", V4, mx_mm_base, set("out_dtype", D(Dtype::FP16)), "mm.out_dtype", "out_dtype");
  ok("MxMmOutBf16", V4, mx_mm_base, set("out_dtype", D(Dtype::BFLOAT16)));

  // -- PSUM groups (spec 4.1, 4.2) --
  for (int f : {0, 1, 2, 3, 4, 6}) {
    ok("PsumFlags" + std::to_string(f), GRP, mm_base, set("psum_accumulate_flags", f));
    ok("SparsePsumFlags" + std::to_string(f), ALL, sparse_base, set("psum_accumulate_flags", f));
  }
  add("PsumBeginAndBeginAccum", GRP, mm_base, set("psum_accumulate_flags", 5), "psum.accumulate_flags",
      "psum_accumulate_flags");
  add("PsumAllThreeBits", GRP, mm_base, set("psum_accumulate_flags", 7), "psum.accumulate_flags",
      "psum_accumulate_flags");
  add("PsumUndefinedBit", GRP, mm_base, set("psum_accumulate_flags", 8), "psum.accumulate_flags",
      "psum_accumulate_flags");
  add("SparsePsumUndefinedBit", ALL, sparse_base, set("psum_accumulate_flags", 0x83), "psum.accumulate_flags",
      "psum_accumulate_flags");
  add("MxMmPsumFlags", V4, mx_mm_base, set("psum_accumulate_flags", 0x10), "psum.accumulate_flags",
      "psum_accumulate_flags");
  for (int z : {0, 1, 2, 3}) ok("ZeroRegion" + std::to_string(z), GRP, mm_base, set("psum_zero_region", z));
  add("ZeroRegion4", GRP, mm_base, set("psum_zero_region", 4), "psum.zero_region", "psum_zero_region");
  add("SparseZeroRegion", ALL, sparse_base, set("psum_zero_region", 0xff), "psum.zero_region", "psum_zero_region");
  add("MxMmZeroRegion", V4, mx_mm_base, set("psum_zero_region", 9), "psum.zero_region", "psum_zero_region");

  // -- the PSUM footprint (FACTS: moving free size <= 512 fp32 = one bank on v3; v4 up to
  //    4096 fp32 / 8192 bf16 = the partition's 8 banks) --
  ok("Moving512OnCayman", ALL, mm_base, set("dst_mem_pattern.num_elem[0]", 512));
  add("Moving513OnCayman", CAY, mm_base, set("dst_mem_pattern.num_elem[0]", 513), "mm.psum_footprint",
      "dst_mem_pattern.start_addr");
  ok("Moving513FromV4", V4P, mm_base, set("dst_mem_pattern.num_elem[0]", 513));
  ok("Moving4096Fp32FromV4", V4P, mm_base, set("dst_mem_pattern.num_elem[0]", 4096));
  add("Moving4097Fp32", V4P, mm_base, set("dst_mem_pattern.num_elem[0]", 4097), "mm.psum_footprint",
      "dst_mem_pattern.start_addr");
  ok("Moving8192Bf16FromV4", V4P, mm_base,
     seq({set("out_dtype", D(Dtype::BFLOAT16)), set("dst_mem_pattern.num_elem[0]", 8192)}));
  add("Moving8193Bf16", V4P, mm_base,
      seq({set("out_dtype", D(Dtype::BFLOAT16)), set("dst_mem_pattern.num_elem[0]", 8193)}), "mm.psum_footprint",
      "dst_mem_pattern.start_addr");
  add("CrossBankOnCayman", CAY, mm_base,
      seq({set("dst_mem_pattern.start_addr", kPsum + 2044), set("dst_mem_pattern.num_elem[0]", 2)}),
      "mm.psum_footprint", "dst_mem_pattern.start_addr");
  ok("LastBankWordOnCayman", CAY, mm_base,
     seq({set("dst_mem_pattern.start_addr", kPsum + 7 * 2048 + 2044), set("dst_mem_pattern.num_elem[0]", 1)}));
  add("NegativeStepBeforePartition", ALL, mm_base,
      seq({set("dst_mem_pattern.start_addr", kPsum + 4), set("dst_mem_pattern.step_elem[0]", -1),
           set("dst_mem_pattern.num_elem[0]", 3)}),
      "mm.psum_footprint", "dst_mem_pattern.start_addr");
  ok("NegativeStepInside", ALL, mm_base,
     seq({set("dst_mem_pattern.start_addr", kPsum + 8), set("dst_mem_pattern.step_elem[0]", -1),
          set("dst_mem_pattern.num_elem[0]", 3)}));
  add("OuterDimCrossesBankOnCayman", CAY, mm_base,
      seq({set("dst_mem_pattern.num_elem[0]", 256), set("dst_mem_pattern.step_elem[2]", 256),
           set("dst_mem_pattern.num_elem[2]", 3)}),
      "mm.psum_footprint", "dst_mem_pattern.start_addr");
  add("SparseFootprintCayman", CAY, sparse_base,
      seq({set("dst_mem_pattern.step_elem[1]", 128), set("dst_mem_pattern.num_elem[1]", 5)}), "mm.psum_footprint",
      "dst_mem_pattern.start_addr");
  add("MxMmFootprint", V4, mx_mm_base, set("dst_mem_pattern.start_addr", kPsum + 16380), "mm.psum_footprint",
      "dst_mem_pattern.start_addr");

  // -- perf_opt (model: 0 none, 1 fp8 double_row) and MX_PERF_MODE (spec 7) --
  ok("DoubleRowLw", GRP, double_row_lw, none());
  ok("DoubleRowMm", GRP, double_row_mm, none());
  add("PerfOpt2", GRP, lw_base, set("perf_opt", 2), "perf_opt.range", "perf_opt");
  add("MmPerfOpt255", GRP, mm_base, set("perf_opt", 255), "perf_opt.range", "perf_opt");
  add("DoubleRowBf16", GRP, lw_base, set("perf_opt", 1), "perf_opt.double_row", "perf_opt");
  add("DoubleRowFp16Mm", GRP, mm_base, seq({set("in_dtype", D(Dtype::FP16)), set("perf_opt", 1)}),
      "perf_opt.double_row", "perf_opt");
  add("DoubleRowColumnTiling", GRP, double_row_lw, seq({set("num_active_cols", 64), set("col_grp", 0xC)}),
      "perf_opt.double_row", "perf_opt");
  add("DoubleRowTransposeCayman", CAY, double_row_mm, set("transpose_mode", 1), "perf_opt.double_row", "perf_opt");
  add("DoubleRowTransposeMariana", V4, double_row_lw, set("flags.xpose_mode", 1), "perf_opt.double_row", "perf_opt");
  add("PerfMode7", MAV, mav_mx_lw_base, set("perf_mode", 7), "perf_mode.range", "perf_mode");
  add("MxOpPerfMode7", V4, mx_lw_base, set("perf_mode", 7), "perf_mode.range", "perf_mode");
  add("MxMmOpPerfMode255", V4, mx_mm_base, set("perf_mode", 255), "perf_mode.range", "perf_mode");
  for (int m = 0; m <= 6; ++m) {
    ok("MxPerfMode" + std::to_string(m), MAV, mav_mx_mm_base, set("perf_mode", m));
    ok("MxOpPerfMode" + std::to_string(m), V4, mx_lw_base, set("perf_mode", m));
  }
  add("PerfModeOnTensorSource", MAV, lw_base, set("perf_mode", 1), "perf_mode.mx_only", "perf_mode");
  add("MmPerfModeOnTensorSource", MAV, mm_base, set("perf_mode", 4), "perf_mode.mx_only", "perf_mode");
  add("XposeRangeCayman", CAY, lw_base, set("transpose_mode", 2), "xpose.range", "transpose_mode");
  add("MmXposeRangeCayman", CAY, mm_base, set("transpose_mode", 0xff), "xpose.range", "transpose_mode");
  add("BgXposeRange", V4, lw_base, set("bg_xpose_mode", 2), "xpose.range", "bg_xpose_mode");
  add("TagWeightModeRange", ALL, lw_base, set("tag_weight_mode", 2), "ldweights.tag_weight_mode", "tag_weight_mode");
  ok("BgXpose1", V4, lw_base, set("bg_xpose_mode", 1));
  // A transposing matmul writes one PSUM partition per moving element: N <= the partitions.
  ok("MmXposeCayman", CAY, mm_base, set("transpose_mode", 1));
  ok("MmXpose", V4, mm_base, set("flags.xpose_mode", 1));
  ok("MmXposeMaverick", MAV, mm_base, set("flags.xpose_mode", 1));
  add("MmXposeFreeSizeCayman", CAY, mm_base, seq({set("transpose_mode", 1), set("src_mem_pattern.num_elem[0]", 129)}),
      "mm.xpose_free_size", "src_mem_pattern.num_elem[0]");
  add("MmXposeFreeSize", V4, mm_base, seq({set("flags.xpose_mode", 1), set("src_mem_pattern.num_elem[0]", 256)}),
      "mm.xpose_free_size", "src_mem_pattern.num_elem[0]");
  // Transposed onto 16 partitions, the destination starting at partition 120 leaves PSUM.
  add("MmXposeDstPartitions", V4, mm_base,
      seq({set("flags.xpose_mode", 1), set("src_mem_pattern.num_elem[0]", 16),
           set("dst_mem_pattern.start_addr", kPsum + 120 * 16384)}),
      "mempattern.partitions", "dst_mem_pattern.start_addr");
  ok("MmXposeDstPartitionsFit", V4, mm_base,
     seq({set("flags.xpose_mode", 1), set("src_mem_pattern.num_elem[0]", 8),
          set("dst_mem_pattern.start_addr", kPsum + 120 * 16384)}));
  ok("Transpose1", CAY, mm_base, set("transpose_mode", 1));

  // -- seed_mode and the MAVERICK seed micro-op contracts (spec 5, 5.1) --
  add("LwSeedMode3", V4P, lw_base, set("flags.seed_mode", 3), "flags.seed_mode", "flags.seed_mode");
  add("MmSeedMode3", V4P, mm_base, set("flags.seed_mode", 3), "flags.seed_mode", "flags.seed_mode");
  add("SparseSeedMode3", V4P, sparse_base, set("flags.seed_mode", 3), "flags.seed_mode", "flags.seed_mode");
  ok("SeedModeFreeOnV4Lw", V4, lw_base, set("flags.seed_mode", 1));
  ok("SeedModeFreeOnV4Mm", V4, mm_base, set("flags.seed_mode", 2));
  ok("LoadSeedLw", MAV, load_seed_lw, none());
  ok("SaveSeedLw", MAV, save_seed_lw, none());
  ok("LoadSeedMm", MAV, load_seed_mm, none());
  ok("SaveSeedMm", MAV, save_seed_mm, none());
  ok("LoadSeedMmAnyDst", MAV, load_seed_mm, set("dst_mem_pattern.num_elem[2]", 1));  // no c256 dst rule for seeds
  add("SeedOnMaverickNeedsContract", MAV, lw_base, set("flags.seed_mode", 1), "seed.load_contract", "tile_size.row");
  add("LoadSeedR128", MAV, load_seed_lw, set("tile_size.row", tile_size::R128), "seed.load_contract",
      "tile_size.row");
  add("LoadSeedC128", MAV, load_seed_mm, set("tile_size.col", tile_size::C128), "seed.load_contract",
      "tile_size.col", {"tile.num_active_cols"});
  add("LoadSeedTwoSrcElems", MAV, load_seed_lw, set("src_mem_pattern.num_elem[0]", 2), "seed.load_contract",
      "src_mem_pattern.num_elem[0]");
  add("LoadSeedSrcDim2", MAV, load_seed_mm, set("src_mem_pattern.num_elem[2]", 4), "seed.load_contract",
      "src_mem_pattern.num_elem[2]");
  add("LoadSeedBf16", MAV, load_seed_lw, seq({set("in_dtype", D(Dtype::BFLOAT16)), set("fp32_mode", 0)}),
      "seed.load_contract", "in_dtype");
  add("LoadSeedFp32Low", MAV, load_seed_mm, set("fp32_mode", 1), "seed.load_contract", "fp32_mode");
  add("LoadSeedNoXpose", MAV, load_seed_lw, set("flags.xpose_mode", 0), "seed.load_contract", "flags.xpose_mode");
  add("LoadSeedTwoRows", MAV, load_seed_mm, set("num_active_rows", 2), "seed.load_contract", "num_active_rows");
  add("LoadSeedCols1", MAV, load_seed_lw, set("num_active_cols", 1), "seed.load_contract", "num_active_cols");
  add("LoadSeedOutBf16", MAV, load_seed_mm, set("out_dtype", D(Dtype::BFLOAT16)), "seed.load_contract", "out_dtype");
  add("SaveSeedR128", MAV, save_seed_mm, set("tile_size.row", tile_size::R128), "seed.save_contract",
      "tile_size.row");
  add("SaveSeedFp32LowHigh", MAV, save_seed_lw, set("fp32_mode", 3), "seed.save_contract", "fp32_mode");
  add("SaveSeedNoXpose", MAV, save_seed_mm, set("flags.xpose_mode", 0), "seed.save_contract", "flags.xpose_mode");
  add("SaveSeedDstUpper1", MAV, save_seed_mm, set("dst_mem_pattern.num_elem[2]", 1), "seed.save_contract",
      "dst_mem_pattern.num_elem[2]");
  add("SaveSeedDstInner2", MAV, save_seed_mm, set("dst_mem_pattern.num_elem[0]", 2), "seed.save_contract",
      "dst_mem_pattern.num_elem[0]");
  add("SaveSeedDstMid2", MAV, save_seed_mm, set("dst_mem_pattern.num_elem[1]", 2), "seed.save_contract",
      "dst_mem_pattern.num_elem[1]");
  add("SaveSeedOutBf16", MAV, save_seed_mm, set("out_dtype", D(Dtype::BFLOAT16)), "seed.save_contract", "out_dtype");
  // "SaveSeed's dst is a 1x1x2 PSUM tensor", and the identity element is read from SBUF like any source.
  add("SaveSeedDstInSbuf", MAV, save_seed_mm, set("dst_mem_pattern.start_addr", 0x100), "mempattern.dst_psum",
      "dst_mem_pattern.start_addr");
  add("LoadSeedIdentityInPsum", MAV, load_seed_lw, set("src_mem_pattern.start_addr", kPsum), "mempattern.src_sbuf",
      "src_mem_pattern.start_addr");

  // -- c256 dst (spec 11: "the upper dim of dst must have a size of 2") --
  ok("C256Matmul", MAV, mav_c256_mm_base, none());
  add("C256DstUpper1", MAV, mav_c256_mm_base, set("dst_mem_pattern.num_elem[2]", 1), "mm.c256_dst_upper_dim",
      "dst_mem_pattern.num_elem[2]");
  add("C256DstUpper4", MAV, mav_c256_mm_base, set("dst_mem_pattern.num_elem[2]", 4), "mm.c256_dst_upper_dim",
      "dst_mem_pattern.num_elem[2]");
  ok("C128DstUpper1", MAV, mm_base, none());
  ok("C256PartialCols", MAV, mav_c256_mm_base, set("num_active_cols", 130));

  // -- MatmulSparse: 2/3/4 fmaps per partition (spec 9) --
  for (int f : {2, 3, 4}) ok("SparseFmaps" + std::to_string(f), ALL, sparse_base, set("src_mem_pattern.num_elem[3]", f));
  add("SparseFmaps1", ALL, sparse_base, set("src_mem_pattern.num_elem[3]", 1), "sparse.fmaps",
      "src_mem_pattern.num_elem[3]");
  add("SparseFmaps5", ALL, sparse_base, set("src_mem_pattern.num_elem[3]", 5), "sparse.fmaps",
      "src_mem_pattern.num_elem[3]");
  add("SparseFmaps0", ALL, sparse_base, set("src_mem_pattern.num_elem[3]", 0), "sparse.fmaps",
      "src_mem_pattern.num_elem[3]", {"mempattern.num_elem"});

  // -- PeManageSeed (spec 5, 5.2) --
  ok("LoadSeed", V4, load_seed_base, none());
  ok("SaveSeed", V4, save_seed_base, none());
  for (Dtype d : {Dtype::BFLOAT16, Dtype::FP16, Dtype::FP32R, Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4,
                  Dtype::FP8_EXP5})
    ok("IdentityDtype_" + std::string(name(d)), V4, save_seed_base, set("identity_dtype", D(d)));
  opcode_rule("PeSeedOnMaverick", MAV, load_seed_base, "pe_seed.v4_only");
  opcode_rule("SaveSeedOnMaverick", MAV, save_seed_base, "pe_seed.v4_only");
  add("SeedModeNone", V4, load_seed_base, set("mode", 0), "pe_seed.mode", "mode");
  add("SeedMode3", V4, save_seed_base, set("mode", 3), "pe_seed.mode", "mode");
  add("SeedRows15", V4, load_seed_base, set("num_active_rows", 15), "pe_seed.num_active_rows", "num_active_rows");
  add("SeedRows128", V4, save_seed_base, set("num_active_rows", 128), "pe_seed.num_active_rows", "num_active_rows");
  add("SeedCols127", V4, load_seed_base, set("num_active_cols", 127), "pe_seed.num_active_cols", "num_active_cols");
  add("SeedCols16", V4, save_seed_base, set("num_active_cols", 16), "pe_seed.num_active_cols", "num_active_cols");
  add("IdentityFp32", V4, load_seed_base, set("identity_dtype", D(Dtype::FP32)), "pe_seed.identity_dtype",
      "identity_dtype");
  add("IdentityFp4", V4, save_seed_base, set("identity_dtype", D(Dtype::FP4_EXP2)), "pe_seed.identity_dtype",
      "identity_dtype");
  add("IdentityZero", V4, save_seed_base, set("identity_dtype", 0), "pe_seed.identity_dtype", "identity_dtype");
  add("Identity15", V4, load_seed_base, set("identity_mem_pattern.num_elem[0]", 15), "pe_seed.identity",
      "identity_mem_pattern.num_elem[0]");
  add("Identity17", V4, save_seed_base, set("identity_mem_pattern.num_elem[0]", 17), "pe_seed.identity",
      "identity_mem_pattern.num_elem[0]");
  add("LoadSeedWithDst", V4, load_seed_base, set("dst_seed_mem_pattern.start_addr", kPsum), "pe_seed.unused_pattern",
      "dst_seed_mem_pattern.start_addr");
  add("LoadSeedWithDstStep", V4, load_seed_base, set("dst_seed_mem_pattern.step_elem[1]", -1),
      "pe_seed.unused_pattern", "dst_seed_mem_pattern.step_elem[1]");
  add("SaveSeedWithSrc", V4, save_seed_base, set("src_seed_mem_pattern.num_elem[0]", 1), "pe_seed.unused_pattern",
      "src_seed_mem_pattern.num_elem[0]");
  add("LoadSeedSrcPartition1", V4, load_seed_base, set("src_seed_mem_pattern.start_addr", 256 * 1024),
      "pe_seed.load_src", "src_seed_mem_pattern.start_addr");
  add("LoadSeed64PerPartition", V4, load_seed_base, set("src_seed_mem_pattern.num_elem[0]", 64), "pe_seed.load_src",
      "src_seed_mem_pattern.num_elem[0]");
  ok("LoadSeed16x8", V4, load_seed_base,
     seq({set("src_seed_mem_pattern.num_elem[0]", 16), set("src_seed_mem_pattern.num_elem[1]", 8),
          set("src_seed_mem_pattern.step_elem[1]", 16)}));
  add("LoadSeedSrcOutsideSbuf", V4, load_seed_base, set("src_seed_mem_pattern.start_addr", kPsum),
      "mempattern.src_sbuf", "src_seed_mem_pattern.start_addr", {"pe_seed.load_src"});
  add("SaveSeedNum0", V4, save_seed_base, set("dst_seed_mem_pattern.num_elem[0]", 1), "pe_seed.save_dst",
      "dst_seed_mem_pattern.num_elem[0]");
  add("SaveSeedNum1", V4, save_seed_base, set("dst_seed_mem_pattern.num_elem[1]", 16), "pe_seed.save_dst",
      "dst_seed_mem_pattern.num_elem[1]");
  add("SaveSeedStep0", V4, save_seed_base, set("dst_seed_mem_pattern.step_elem[0]", 2), "pe_seed.save_dst",
      "dst_seed_mem_pattern.step_elem[0]");
  add("SaveSeedStep1", V4, save_seed_base, set("dst_seed_mem_pattern.step_elem[1]", 256), "pe_seed.save_dst",
      "dst_seed_mem_pattern.step_elem[1]");
  add("SaveSeedStart", V4, save_seed_base, set("dst_seed_mem_pattern.start_addr", kPsum + 4), "pe_seed.save_dst",
      "dst_seed_mem_pattern.start_addr");
  add("SaveSeedStartSbuf", V4, save_seed_base, set("dst_seed_mem_pattern.start_addr", 0), "pe_seed.save_dst",
      "dst_seed_mem_pattern.start_addr");

  // -- the separate MX ops are v4-only (spec 7: MAVERICK folds MX into 0x01/0x02) --
  ok("MxOps", V4, mx_lw_base, none());
  ok("MxMmOps", V4, mx_mm_base, none());
  opcode_rule("MxLwOpOnMaverick", MAV, mx_lw_base, "mx.separate_ops_v4");
  opcode_rule("MxMmOpOnMaverick", MAV, mx_mm_base, "mx.separate_ops_v4");

  // -- LdTags (spec 9: UINT16 words, force_tag_bits {0x00, 0x04, 0x08, 0x0C}) --
  for (int f : {0x0, 0x4, 0x8, 0xC}) ok("ForceTagBits" + std::to_string(f), ALL, ldtags_base, set("force_tag_bits", f));
  add("LdTagsBf16", ALL, ldtags_base, set("in_dtype", D(Dtype::BFLOAT16)), "ldtags.in_dtype", "in_dtype");
  add("ForceTagBits1", ALL, ldtags_base, set("force_tag_bits", 1), "ldtags.force_tag_bits", "force_tag_bits");
  add("ForceTagBits0x10", ALL, ldtags_base, set("force_tag_bits", 0x10), "ldtags.force_tag_bits", "force_tag_bits");

  // -- ConvLutLoad --
  ok("ConvLut", V4P, convlut_base, none());
  add("ConvLutDtype0C", V4P, convlut_base, set("lut_dtype", 0x0C), "convlut.lut_dtype", "lut_dtype");
  add("ConvLutDtype0xff", V4P, convlut_base, set("lut_dtype", 0xff), "convlut.lut_dtype", "lut_dtype");
  add("ConvLutDtypeInvalid0", V4P, convlut_base, set("lut_dtype", 0), "convlut.lut_dtype", "lut_dtype", {},
      "validate.cpp check_conv_lut uses is_known_dtype(), which accepts 0 (Dtype::INVALID, 'unset'); a LUT with no "
      "element type passes -- also require lut_dtype != 0");

  // -- every usable opcode's baseline is valid on every generation it is usable on --
  for (Opcode op : kAllOpcodes)
    for (G g : ALL)
      if (usable(op, g)) ok("Baseline_" + std::string(name(op)), {g}, [op](G gg) { return base_of(gg, op); }, none());
  return true;
}

// Runs one case; returns false when it hit its known bug (then nothing was asserted).
bool run_case(const Case& c, std::string* bug_report = nullptr) {
  SCOPED_TRACE(c.name + " on " + gen_name(c.gen));
  const RawInstruction base = c.base(c.gen);
  const Decoded b = decode(c.gen, base);
  if (c.base_valid) {
    EXPECT_TRUE(b.valid()) << "baseline invalid: " << dump(b);
    if (!b.valid()) return true;
  }
  RawInstruction raw = base;
  c.mut(c.gen, raw);
  const Decoded d = decode(c.gen, raw);
  if (c.rule.empty()) {
    EXPECT_TRUE(d.valid()) << dump(d);
    return true;
  }
  const bool hit = has_violation(d.violations, c.rule, c.field);
  bool only = true;
  for (const auto& v : d.violations)
    if (v.rule != c.rule && !c.also.count(v.rule)) only = false;
  if (!c.bug.empty() && (!hit || !only)) {
    if (bug_report) *bug_report = c.bug + " -- got: " + dump(d);
    return false;
  }
  EXPECT_TRUE(hit) << "want " << c.rule << "@" << c.field << ", got: " << dump(d);
  EXPECT_TRUE(only) << "the mutation broke other rules too: " << dump(d);
  for (const auto& v : d.violations) {
    EXPECT_FALSE(v.rule.empty());
    EXPECT_FALSE(v.message.empty()) << v.rule;
    // the rendered violation names the rule and the field
    const std::string text = v.describe();
    EXPECT_NE(text.find("[" + v.rule + "]"), std::string::npos) << text;
    if (!v.field.empty()) {
      EXPECT_EQ(text.rfind(v.field, 0), 0u) << text;
      EXPECT_TRUE(d.has(v.field)) << "the violation names no leaf of the instruction: " << v.field;
    }
  }
  return true;
}

std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// One test per rule id: every case that must break it (on every generation listed).
std::vector<std::string> rule_ids() {
  std::vector<std::string> ids;
  for (const auto& c : cases())
    if (!c.rule.empty() && c.bug.empty() && std::find(ids.begin(), ids.end(), c.rule) == ids.end())
      ids.push_back(c.rule);
  return ids;
}
class RuleId : public ::testing::TestWithParam<std::string> {};
TEST_P(RuleId, EachMutationBreaksExactlyThisRule) {
  int n = 0;
  for (const auto& c : cases())
    if (c.rule == GetParam() && c.bug.empty()) {
      run_case(c);
      ++n;
    }
  EXPECT_GT(n, 0);
}
INSTANTIATE_TEST_SUITE_P(Validate, RuleId, ::testing::ValuesIn(rule_ids()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return sanitize(i.param); });

// The values and generations where a rule must not fire: one test per generation.
class NotFired : public ::testing::TestWithParam<G> {};
TEST_P(NotFired, ValidMutationsStayValid) {
  int n = 0;
  for (const auto& c : cases())
    if (c.rule.empty() && c.gen == GetParam()) {
      run_case(c);
      ++n;
    }
  EXPECT_GT(n, 10);
}
INSTANTIATE_TEST_SUITE_P(Validate, NotFired, ::testing::ValuesIn(kAllGenerations),
                         [](const ::testing::TestParamInfo<G>& i) { return gen_name(i.param); });

// Cases that exposed a models/isa bug (since fixed), one test each, kept as regressions.
std::vector<std::size_t> bug_cases() {
  std::vector<std::size_t> v;
  for (std::size_t i = 0; i < cases().size(); ++i)
    if (!cases()[i].bug.empty()) v.push_back(i);
  return v;
}
class FixedBugRegression : public ::testing::TestWithParam<std::size_t> {};
TEST_P(FixedBugRegression, Case) {
  std::string report;
  EXPECT_TRUE(run_case(cases().at(GetParam()), &report)) << report;
}
INSTANTIATE_TEST_SUITE_P(Validate, FixedBugRegression, ::testing::ValuesIn(bug_cases()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) {
                           const Case& c = cases().at(i.param);
                           return sanitize(c.name + "_" + gen_name(c.gen));
                         });

// ---- the value a violation carries is the field's value ----------------------------------------
TEST(RuleMessages, ValueAndDescription) {
  RawInstruction r = mm_base(G::CAYMAN);
  patch(G::CAYMAN, r, "out_dtype", D(Dtype::BFLOAT16));
  const Decoded d = decode(G::CAYMAN, r);
  ASSERT_EQ(d.violations.size(), 1u) << dump(d);
  const Violation& v = d.violations[0];
  EXPECT_EQ(v.rule, "mm.out_dtype");
  EXPECT_EQ(v.field, "out_dtype");
  EXPECT_EQ(v.value, 6);
  EXPECT_EQ(v.describe().rfind("out_dtype = 6: ", 0), 0u) << v.describe();
  EXPECT_NE(v.describe().find("[mm.out_dtype]"), std::string::npos);
  // opcode violations name the byte and the generation
  RawInstruction u = lw_base(G::CAYMAN);
  u[0] = 0x08;
  const Decoded du = decode(G::CAYMAN, u);
  ASSERT_EQ(du.violations.size(), 1u);
  EXPECT_NE(du.violations[0].message.find("0x8"), std::string::npos) << du.violations[0].message;
  EXPECT_NE(du.violations[0].message.find("CAYMAN"), std::string::npos) << du.violations[0].message;
  EXPECT_EQ(du.violations[0].value, 8);
}

// Messages state the requirement with the spec's numbers.
TEST(RuleMessages, StateTheRequirement) {
  auto message_of = [](G g, RawInstruction raw, const std::string& rule) {
    const Decoded d = decode(g, raw);
    for (const auto& v : d.violations)
      if (v.rule == rule) return v.message;
    ADD_FAILURE() << "no " << rule << ": " << dump(d);
    return std::string();
  };
  RawInstruction r = save_seed_base(G::MARIANA);
  patch(G::MARIANA, r, "dst_seed_mem_pattern.step_elem[1]", 256);
  EXPECT_NE(message_of(G::MARIANA, r, "pe_seed.save_dst").find("512"), std::string::npos);
  r = save_seed_base(G::MARIANA);
  patch(G::MARIANA, r, "dst_seed_mem_pattern.start_addr", kPsum + 4);
  EXPECT_NE(message_of(G::MARIANA, r, "pe_seed.save_dst").find(std::to_string(kPsum)), std::string::npos);
  r = load_seed_base(G::MARIANA);
  patch(G::MARIANA, r, "num_active_rows", 15);
  EXPECT_NE(message_of(G::MARIANA, r, "pe_seed.num_active_rows").find("16"), std::string::npos);
  r = mav_r64_lw_base(G::MAVERICK);
  patch(G::MAVERICK, r, "num_active_rows", 65);
  EXPECT_NE(message_of(G::MAVERICK, r, "tile.num_active_rows").find("1..64"), std::string::npos);
  r = mm_base(G::CAYMAN);
  patch(G::CAYMAN, r, "dst_mem_pattern.num_elem[0]", 513);
  EXPECT_NE(message_of(G::CAYMAN, r, "mm.psum_footprint").find("2 KiB"), std::string::npos);
  r = lw_base(G::MARIANA);
  patch(G::MARIANA, r, "src_mem_pattern.start_addr", 256 * 1024);
  EXPECT_NE(message_of(G::MARIANA, r, "mempattern.partitions").find("128"), std::string::npos);
  r = mav_c256_mm_base(G::MAVERICK);
  patch(G::MAVERICK, r, "dst_mem_pattern.num_elem[2]", 1);
  EXPECT_NE(message_of(G::MAVERICK, r, "mm.c256_dst_upper_dim").find("2"), std::string::npos);
  r = mm_base(G::MARIANA);
  patch(G::MARIANA, r, "in_dtype", 0x0C);
  const std::string in = message_of(G::MARIANA, r, "mm.in_dtype");
  for (const char* d : {"FP8_EXP2", "FP8_EXP3", "FP8_EXP4", "FP8_EXP5", "BFLOAT16", "FP16", "FP32"})
    EXPECT_NE(in.find(d), std::string::npos) << in;
}

// ---- spec 8: "if either input is tfloat32/float32, both must be" (StreamChecker) ----------------
LdweightsArgs lw_dtype(Dtype d, Fp32Mode m, Placement p = {}) {
  LdweightsArgs a = lw_args();
  a.in_dtype = d;
  a.fp32_mode = m;
  a.tile = p;
  a.num_active_rows = p.rows;
  a.num_active_cols = p.cols;
  return a;
}
MatmulArgs mm_dtype(Dtype d, Fp32Mode m, Placement p = {}) {
  MatmulArgs a = mm_args();
  a.in_dtype = d;
  a.fp32_mode = m;
  a.tile = p;
  a.num_active_rows = p.rows;
  a.num_active_cols = p.cols;
  return a;
}

class Stream : public ::testing::TestWithParam<G> {};

TEST_P(Stream, Fp32StationaryBf16Moving) {
  const G g = GetParam();
  StreamChecker sc;
  const Decoded lw = decode(g, encode_ldweights(g, lw_dtype(Dtype::FP32, Fp32Mode::Low)));
  const Decoded mm = decode(g, encode_matmul(g, mm_dtype(Dtype::BFLOAT16, Fp32Mode::None)));
  ASSERT_TRUE(lw.valid()) << dump(lw);
  ASSERT_TRUE(mm.valid()) << dump(mm);
  EXPECT_TRUE(sc.check(lw).empty());
  const auto v = sc.check(mm);
  ASSERT_EQ(v.size(), 1u) << dump(v);
  EXPECT_EQ(v[0].rule, "mm.fp32_no_mix");
  EXPECT_EQ(v[0].field, "in_dtype");
  EXPECT_EQ(v[0].value, 6);
  EXPECT_NE(v[0].describe().find("[mm.fp32_no_mix]"), std::string::npos);
  EXPECT_NE(v[0].message.find("FP32"), std::string::npos) << v[0].message;
  EXPECT_NE(v[0].message.find("BFLOAT16"), std::string::npos) << v[0].message;
}

TEST_P(Stream, Fp8StationaryFp32Moving) {
  const G g = GetParam();
  StreamChecker sc;
  EXPECT_TRUE(sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::FP8_EXP4, Fp32Mode::None)))).empty());
  const auto v = sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::FP32, Fp32Mode::High))));
  ASSERT_EQ(v.size(), 1u) << dump(v);
  EXPECT_EQ(v[0].rule, "mm.fp32_no_mix");
  EXPECT_EQ(v[0].field, "in_dtype");
}

TEST_P(Stream, Tf32StationaryFp32HighMoving) {
  const G g = GetParam();
  StreamChecker sc;
  sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::FP32, Fp32Mode::Low))));
  const auto v = sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::FP32, Fp32Mode::High))));
  ASSERT_EQ(v.size(), 1u) << dump(v);
  EXPECT_EQ(v[0].rule, "mm.fp32_mode_match");
  EXPECT_EQ(v[0].field, "fp32_mode");
  EXPECT_EQ(v[0].value, 2);
  EXPECT_NE(v[0].message.find("Low"), std::string::npos) << v[0].message;
}

TEST_P(Stream, LowPrecisionInputsMayMix) {
  const G g = GetParam();
  StreamChecker sc;
  sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::BFLOAT16, Fp32Mode::None))));
  EXPECT_TRUE(sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::FP8_EXP5, Fp32Mode::None)))).empty());
  EXPECT_TRUE(sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::FP16, Fp32Mode::None)))).empty());
  sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::FP32, Fp32Mode::Low_High))));
  EXPECT_TRUE(sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::FP32, Fp32Mode::Low_High)))).empty());
}

TEST_P(Stream, MatmulBeforeAnyLdweightsAndOtherOpcodes) {
  const G g = GetParam();
  StreamChecker sc;
  EXPECT_TRUE(sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::FP32, Fp32Mode::Low)))).empty());
  EXPECT_TRUE(sc.check(decode(g, sparse_base(g))).empty());
  RawInstruction unknown{};
  unknown[0] = 0x55;
  EXPECT_TRUE(sc.check(decode(g, unknown)).empty());
}

TEST_P(Stream, NewLdweightsReplacesTheStationary) {
  const G g = GetParam();
  StreamChecker sc;
  sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::FP32, Fp32Mode::Low))));
  sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::BFLOAT16, Fp32Mode::None))));
  EXPECT_TRUE(sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::BFLOAT16, Fp32Mode::None)))).empty());
  const auto v = sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::FP32, Fp32Mode::Low))));
  ASSERT_EQ(v.size(), 1u) << dump(v);
  EXPECT_EQ(v[0].rule, "mm.fp32_no_mix");
}

INSTANTIATE_TEST_SUITE_P(Gen, Stream, ::testing::ValuesIn(kAllGenerations),
                         [](const ::testing::TestParamInfo<G>& i) { return gen_name(i.param); });

// Tiles: only an overlapping tile's stationary matters (CAYMAN/MARIANA groups).
TEST(StreamTiles, DisjointTilesDoNotInteract) {
  for (G g : {G::CAYMAN, G::MARIANA}) {
    StreamChecker sc;
    sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::FP32, Fp32Mode::Low, {0, 64, 0, 64}))));
    sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::BFLOAT16, Fp32Mode::None, {64, 64, 64, 64}))));
    MatmulArgs a = mm_dtype(Dtype::BFLOAT16, Fp32Mode::None, {64, 64, 64, 64});
    a.src.start_addr = 64 * preset_geometry(g).sbuf_partition_bytes;
    a.dst.start_addr = kPsum + 64 * kPsumPartition;
    const Decoded mm = decode(g, encode_matmul(g, a));
    ASSERT_TRUE(mm.valid()) << dump(mm);
    EXPECT_TRUE(sc.check(mm).empty()) << gen_name(g);
    // the same bf16 moving on the fp32 tile is a mix
    a = mm_dtype(Dtype::BFLOAT16, Fp32Mode::None, {0, 64, 0, 64});
    const auto v = sc.check(decode(g, encode_matmul(g, a)));
    ASSERT_EQ(v.size(), 1u) << gen_name(g);
    EXPECT_EQ(v[0].rule, "mm.fp32_no_mix");
    // a full-array matmul overlaps the fp32 tile
    EXPECT_EQ(sc.check(decode(g, encode_matmul(g, mm_dtype(Dtype::BFLOAT16, Fp32Mode::None)))).size(), 1u);
  }
}

TEST(StreamTiles, MaverickQuadrants) {
  const G g = G::MAVERICK;
  StreamChecker sc;
  LdweightsArgs lw = lw_dtype(Dtype::FP32, Fp32Mode::High, {64, 64, 128, 128});
  lw.src.start_addr = 64 * preset_geometry(g).sbuf_partition_bytes;
  ASSERT_TRUE(decode(g, encode_ldweights(g, lw)).valid());
  sc.check(decode(g, encode_ldweights(g, lw)));
  MatmulArgs other = mm_dtype(Dtype::BFLOAT16, Fp32Mode::None, {0, 64, 0, 128});
  EXPECT_TRUE(sc.check(decode(g, encode_matmul(g, other))).empty());
  MatmulArgs same = mm_dtype(Dtype::FP8_EXP4, Fp32Mode::None, {64, 64, 128, 128});
  same.src.start_addr = 64 * preset_geometry(g).sbuf_partition_bytes;
  const auto v = sc.check(decode(g, encode_matmul(g, same)));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "mm.fp32_no_mix");
}

// A 32x32 reload inside an fp32 128x128 stationary leaves the other 15 quadrants
// fp32 on the array; a bf16 matmul on one of them still mixes.
TEST(StreamTiles, PartialReloadKeepsTheRestOfTheStationary) {
  const G g = G::MARIANA;
  StreamChecker sc;
  sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::FP32, Fp32Mode::Low))));
  sc.check(decode(g, encode_ldweights(g, lw_dtype(Dtype::BFLOAT16, Fp32Mode::None, {0, 32, 0, 32}))));
  MatmulArgs a = mm_dtype(Dtype::BFLOAT16, Fp32Mode::None, {64, 64, 64, 64});
  a.src.start_addr = 64 * preset_geometry(g).sbuf_partition_bytes;
  a.dst.start_addr = kPsum + 64 * kPsumPartition;
  const Decoded mm = decode(g, encode_matmul(g, a));
  ASSERT_TRUE(mm.valid()) << dump(mm);
  const auto v = sc.check(mm);
  if (v.empty())
    FAIL() << "validate.cpp StreamChecker::check erases every loaded tile that merely overlaps a new "
                    "Ldweights, forgetting the fp32 stationary still held by the non-reloaded cells";
  EXPECT_EQ(v[0].rule, "mm.fp32_no_mix");
}

// ---- every rule id in validate.cpp is exercised above -----------------------------------------------
TEST(RuleCoverage, EveryRuleIdInValidateCppHasACase) {
  const std::set<std::string> literals = isa_test::validate_cpp_rule_ids();
  std::set<std::string> covered{"mm.fp32_no_mix", "mm.fp32_mode_match"};  // the Stream suites
  for (const auto& c : cases())
    if (!c.rule.empty()) covered.insert(c.rule);
  ASSERT_GT(literals.size(), 40u);
  for (const auto& l : literals) {
    EXPECT_TRUE(covered.count(l)) << "rule id \"" << l << "\" of validate.cpp has no test case";
  }
  // and the table names no rule the source does not have
  for (const auto& r : covered) EXPECT_TRUE(literals.count(r)) << "unknown rule id " << r;
}

}  // namespace
}  // namespace pevp::isa::test
