// Enum ordinals, bitfield positions, opcodes and per-generation presence, typed
// from spec 000 sections 2-5, 7, 8, 11.
#include <gtest/gtest.h>

#include <set>

#include "isa_test_util.h"

namespace pevp::isa::test {
namespace {

template <typename E>
constexpr int ord(E e) {
  return static_cast<int>(e);
}

// Spec 8: "BFLOAT16=0x6, FP16=0x7, FP32=0xA, FP32R=0xB, FP8_EXP3=0xD, FP8_EXP4=0xE,
// FP8_EXP5=0xF, FP4_EXP2=0x10, FP8_EXP2=0x11, SFP8_E8=0x13".
TEST(Enums, DtypeOrdinals) {
  EXPECT_EQ(ord(Dtype::BFLOAT16), 0x6);
  EXPECT_EQ(ord(Dtype::FP16), 0x7);
  EXPECT_EQ(ord(Dtype::FP32), 0xA);
  EXPECT_EQ(ord(Dtype::FP32R), 0xB);
  EXPECT_EQ(ord(Dtype::FP8_EXP3), 0xD);
  EXPECT_EQ(ord(Dtype::FP8_EXP4), 0xE);
  EXPECT_EQ(ord(Dtype::FP8_EXP5), 0xF);
  EXPECT_EQ(ord(Dtype::FP4_EXP2), 0x10);
  EXPECT_EQ(ord(Dtype::FP8_EXP2), 0x11);
  EXPECT_EQ(ord(Dtype::SFP8_E8), 0x13);
  EXPECT_EQ(name(Dtype::BFLOAT16), "BFLOAT16");
  EXPECT_EQ(name(Dtype::FP8_EXP4), "FP8_EXP4");
  EXPECT_EQ(name(static_cast<Dtype>(0x0C)), "");
  EXPECT_FALSE(is_known_dtype(0x0C));
  EXPECT_TRUE(is_known_dtype(0x13));
  EXPECT_EQ(parse_dtype("bfloat16"), Dtype::BFLOAT16);
  EXPECT_EQ(parse_dtype("fp8_exp5"), Dtype::FP8_EXP5);
  EXPECT_FALSE(parse_dtype("float17").has_value());
  EXPECT_EQ(dtype_bits(Dtype::FP4_EXP2), 4u);
  EXPECT_EQ(dtype_bits(Dtype::BFLOAT16), 16u);
  EXPECT_EQ(dtype_bits(Dtype::FP32), 32u);
  EXPECT_EQ(dtype_bits(Dtype::FP8_EXP2), 8u);
  for (Dtype d : {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5}) EXPECT_TRUE(is_fp8(d));
  for (Dtype d : {Dtype::BFLOAT16, Dtype::FP16, Dtype::FP32, Dtype::FP4_EXP2, Dtype::SFP8_E8}) EXPECT_FALSE(is_fp8(d));
}

// Spec 4.3: None=0 / Low=1 / High=2 / Low_High=3.
TEST(Enums, Fp32Mode) {
  EXPECT_EQ(ord(Fp32Mode::None), 0);
  EXPECT_EQ(ord(Fp32Mode::Low), 1);
  EXPECT_EQ(ord(Fp32Mode::High), 2);
  EXPECT_EQ(ord(Fp32Mode::Low_High), 3);
  EXPECT_EQ(name(Fp32Mode::Low_High), "Low_High");
}

// Spec 4.1, 3.1, 12.
TEST(Enums, AccumulateModeAndLoadOrder) {
  EXPECT_EQ(ord(AccumulateMode::OVERWRITE), 0);
  EXPECT_EQ(ord(AccumulateMode::ACCUMULATE), 1);
  EXPECT_EQ(ord(PeLwOrder::LAST_COL_FIRST), 0);
  EXPECT_EQ(ord(PeLwOrder::FIRST_COL_FIRST), 1);
}

// Spec 5: the enum NONE = 0, LOAD_SEED = 1, SAVE_SEED = 2 (not the stale prose 0/1).
TEST(Enums, PeSeedMode) {
  EXPECT_EQ(ord(PeSeedMode::NONE), 0);
  EXPECT_EQ(ord(PeSeedMode::LOAD_SEED), 1);
  EXPECT_EQ(ord(PeSeedMode::SAVE_SEED), 2);
  EXPECT_EQ(name(PeSeedMode::SAVE_SEED), "SAVE_SEED");
}

// Spec 7: NONE=0x0, QUAD_ROW=0x1 (+_INTERLEAVE=0x2/_TILED=0x3), OCT_ROW=0x4 (+0x5/0x6).
TEST(Enums, MxPerfMode) {
  EXPECT_EQ(ord(MxPerfMode::NONE), 0);
  EXPECT_EQ(ord(MxPerfMode::QUAD_ROW), 1);
  EXPECT_EQ(ord(MxPerfMode::QUAD_ROW_INTERLEAVE), 2);
  EXPECT_EQ(ord(MxPerfMode::QUAD_ROW_TILED), 3);
  EXPECT_EQ(ord(MxPerfMode::OCT_ROW), 4);
  EXPECT_EQ(ord(MxPerfMode::OCT_ROW_INTERLEAVE), 5);
  EXPECT_EQ(ord(MxPerfMode::OCT_ROW_TILED), 6);
  EXPECT_EQ(name(MxPerfMode::OCT_ROW_TILED), "OCT_ROW_TILED");
}

// Spec 4.1: BEGIN 0x1, END 0x2, BEGIN_ACCUM 0x4; MULTI_MID 0, MULTI_START 1, MULTI_END 2, SINGLE 3.
TEST(Enums, PsumAccumulateFlags) {
  EXPECT_EQ(psum_flags::BEGIN_MATMUL_GROUP, 0x1);
  EXPECT_EQ(psum_flags::END_MATMUL_GROUP, 0x2);
  EXPECT_EQ(psum_flags::BEGIN_ACCUM_MATMUL_GROUP, 0x4);
  EXPECT_EQ(psum_flags::MULTI_MID, 0);
  EXPECT_EQ(psum_flags::MULTI_START, 1);
  EXPECT_EQ(psum_flags::MULTI_END, 2);
  EXPECT_EQ(psum_flags::SINGLE, 3);
  EXPECT_EQ(psum_flags_name(0), "MULTI_MID");
  EXPECT_EQ(psum_flags_name(1), "MULTI_START");
  EXPECT_EQ(psum_flags_name(2), "MULTI_END");
  EXPECT_EQ(psum_flags_name(3), "SINGLE");
  // NKI semantics (spec 4.1): a group's first write overwrites, later ones accumulate.
  EXPECT_FALSE(default_accumulate(psum_flags::SINGLE));
  EXPECT_FALSE(default_accumulate(psum_flags::MULTI_START));
  EXPECT_TRUE(default_accumulate(psum_flags::MULTI_MID));
  EXPECT_TRUE(default_accumulate(psum_flags::MULTI_END));
}

// Spec 11: TILE_COL_SIZE C128 = 7 = 2^7, C256 = 8 = 2^8.
TEST(Enums, TileSize) {
  EXPECT_EQ(tile_size::C128, 7);
  EXPECT_EQ(tile_size::C256, 8);
  TileSize t;
  t.col = tile_size::C256;
  EXPECT_EQ(t.cols(), 256u);
  t.col = tile_size::C128;
  EXPECT_EQ(t.cols(), 128u);
  EXPECT_EQ(TileSize::unpack(TileSize{6, 8}.pack()).row, 6);
  EXPECT_EQ(TileSize::unpack(TileSize{6, 8}.pack()).col, 8);
  EXPECT_EQ(TileSel::unpack(TileSel{1, 1}.pack()).col_sel, 1);
}

// Spec 4.1: MATMUL_FLAGS LSB->MSB scalar_mode:2, seed_mode:2, accumulate_flag:1, xpose_mode:1, reserved:2.
TEST(Enums, MatmulFlagsBitPositions) {
  MatmulFlags f;
  f.scalar_mode = 3;
  EXPECT_EQ(f.pack(), 0x03);
  f = {};
  f.seed_mode = 3;
  EXPECT_EQ(f.pack(), 0x0C);
  f = {};
  f.accumulate_flag = 1;
  EXPECT_EQ(f.pack(), 0x10);
  f = {};
  f.xpose_mode = 1;
  EXPECT_EQ(f.pack(), 0x20);
  f = {};
  f.reserved_bitfield = 3;
  EXPECT_EQ(f.pack(), 0xC0);
  const MatmulFlags u = MatmulFlags::unpack(0x06);  // scalar 2, seed 1
  EXPECT_EQ(u.scalar_mode, 2);
  EXPECT_EQ(u.seed_mode, 1);
  EXPECT_EQ(u.accumulate_flag, 0);
  for (unsigned b = 0; b < 256; ++b) EXPECT_EQ(MatmulFlags::unpack(static_cast<std::uint8_t>(b)).pack(), b);
}

// Spec 3.1: LD_WEIGHT_FLAGS LSB->MSB xpose_mode:1, scalar_mode:2, seed_mode:2, load_order:1, reserved:2.
TEST(Enums, LdWeightFlagsBitPositions) {
  LdWeightFlags f;
  f.xpose_mode = 1;
  EXPECT_EQ(f.pack(), 0x01);
  f = {};
  f.scalar_mode = 3;
  EXPECT_EQ(f.pack(), 0x06);
  f = {};
  f.seed_mode = 3;
  EXPECT_EQ(f.pack(), 0x18);
  f = {};
  f.load_order = 1;
  EXPECT_EQ(f.pack(), 0x20);
  f = {};
  f.reserved_bitfield = 3;
  EXPECT_EQ(f.pack(), 0xC0);
  const LdWeightFlags u = LdWeightFlags::unpack(0x11);  // xpose 1, seed 2
  EXPECT_EQ(u.xpose_mode, 1);
  EXPECT_EQ(u.seed_mode, 2);
  EXPECT_EQ(u.scalar_mode, 0);
  for (unsigned b = 0; b < 256; ++b) EXPECT_EQ(LdWeightFlags::unpack(static_cast<std::uint8_t>(b)).pack(), b);
}

// A flags byte with exactly one bit set decodes to exactly one non-zero leaf, the
// one the spec's bit order names.
TEST(Enums, FlagsByteWithOneBitDecodes) {
  const char* mm[8] = {"flags.scalar_mode", "flags.scalar_mode", "flags.seed_mode", "flags.seed_mode",
                       "flags.accumulate_flag", "flags.xpose_mode", "flags.reserved_bitfield", "flags.reserved_bitfield"};
  const unsigned mmv[8] = {1, 2, 1, 2, 1, 1, 1, 2};
  const char* lw[8] = {"flags.xpose_mode", "flags.scalar_mode", "flags.scalar_mode", "flags.seed_mode",
                       "flags.seed_mode", "flags.load_order", "flags.reserved_bitfield", "flags.reserved_bitfield"};
  const unsigned lwv[8] = {1, 1, 2, 1, 2, 1, 1, 2};
  struct Where {
    G g;
    Opcode op;
    unsigned off;
    bool is_mm;
  };
  const Where where[] = {{G::MAVERICK, Opcode::MATMUL, 39, true},   {G::MAVERICK, Opcode::LDWEIGHTS, 38, false},
                         {G::MARIANA, Opcode::MATMUL, 42, true},    {G::MARIANA, Opcode::LDWEIGHTS, 47, false},
                         {G::MARIANA_PLUS, Opcode::MATMUL, 42, true}, {G::MARIANA_PLUS, Opcode::LDWEIGHTS, 47, false}};
  for (const auto& w : where) {
    for (unsigned bit = 0; bit < 8; ++bit) {
      RawInstruction raw{};
      raw[0] = static_cast<std::uint8_t>(w.op);
      raw[w.off] = static_cast<std::uint8_t>(1u << bit);
      const Decoded d = decode(w.g, raw);
      const char* want = w.is_mm ? mm[bit] : lw[bit];
      const unsigned wantv = w.is_mm ? mmv[bit] : lwv[bit];
      int nonzero = 0;
      for (const auto& f : d.fields)
        if (f.leaf.top == std::string_view("flags") && f.value != 0) {
          ++nonzero;
          EXPECT_EQ(f.leaf.path, want) << gen_name(w.g) << " bit " << bit;
          EXPECT_EQ(f.value, static_cast<std::int64_t>(wantv)) << gen_name(w.g) << " bit " << bit;
        }
      EXPECT_EQ(nonzero, 1) << gen_name(w.g) << " " << name(w.op) << " bit " << bit;
    }
  }
}

// Spec 2: LDWEIGHTS=0x01 ... MATMUL_MX=0x0A, CONV_LUT_LOAD=0xe4.
TEST(Opcodes, Values) {
  EXPECT_EQ(ord(Opcode::LDWEIGHTS), 0x01);
  EXPECT_EQ(ord(Opcode::MATMUL), 0x02);
  EXPECT_EQ(ord(Opcode::PE_REG_WRITE), 0x03);
  EXPECT_EQ(ord(Opcode::LDTAGS), 0x06);
  EXPECT_EQ(ord(Opcode::MATMUL_SPARSE), 0x07);
  EXPECT_EQ(ord(Opcode::PE_MANAGE_SEED), 0x08);
  EXPECT_EQ(ord(Opcode::LDWEIGHTS_MX), 0x09);
  EXPECT_EQ(ord(Opcode::MATMUL_MX), 0x0A);
  EXPECT_EQ(ord(Opcode::CONV_LUT_LOAD), 0xe4);
  EXPECT_EQ(std::size(kAllOpcodes), 9u);
}

// Spec 1 fact 8 / 2.1: CAYMAN {01,02,03,06,07}; v4 adds exactly {08,09,0A,e4};
// MAVERICK keeps them in its enum.
TEST(Opcodes, ExistsPerGeneration) {
  const std::set<int> cayman{0x01, 0x02, 0x03, 0x06, 0x07};
  const std::set<int> v4{0x01, 0x02, 0x03, 0x06, 0x07, 0x08, 0x09, 0x0A, 0xe4};
  for (G g : kAllGenerations) {
    const std::set<int>& want = g == G::CAYMAN ? cayman : v4;
    std::set<int> got;
    for (unsigned b = 0; b < 256; ++b) {
      const auto op = opcode_from_byte(static_cast<std::uint8_t>(b), g);
      if (op) {
        got.insert(static_cast<int>(b));
        EXPECT_EQ(static_cast<unsigned>(*op), b);
      }
    }
    EXPECT_EQ(got, want) << gen_name(g);
    for (Opcode op : kAllOpcodes) EXPECT_EQ(exists_in(op, g), want.count(ord(op)) == 1) << gen_name(g) << " " << name(op);
  }
}

// Spec 2: the struct2opcode map.
TEST(Opcodes, StructOf) {
  EXPECT_EQ(struct_of(Opcode::LDWEIGHTS), StructKind::S3_LW);
  EXPECT_EQ(struct_of(Opcode::MATMUL), StructKind::S3D3_MM);
  EXPECT_EQ(struct_of(Opcode::MATMUL_SPARSE), StructKind::S4D3_MM);  // the CORRECTION of spec 1
  EXPECT_EQ(struct_of(Opcode::PE_MANAGE_SEED), StructKind::S2S1D2_PE_SEED);
  EXPECT_EQ(struct_of(Opcode::LDWEIGHTS_MX), StructKind::SMX1_LW);
  EXPECT_EQ(struct_of(Opcode::MATMUL_MX), StructKind::SMX1D3_MM);
  EXPECT_EQ(struct_of(Opcode::LDTAGS), StructKind::S3_LT);
  EXPECT_EQ(name(StructKind::S3D3_MM), "S3D3_MM");
  EXPECT_EQ(name(StructKind::S2S1D2_PE_SEED), "S2S1D2_PE_SEED");
  // decode() picks the struct by opcode
  RawInstruction raw{};
  raw[0] = 0x07;
  EXPECT_EQ(decode(G::CAYMAN, raw).layout->kind, StructKind::S4D3_MM);
  raw[0] = 0x08;
  EXPECT_EQ(decode(G::MARIANA, raw).layout->kind, StructKind::S2S1D2_PE_SEED);
}

TEST(Opcodes, NamesParse) {
  for (Opcode op : kAllOpcodes) EXPECT_EQ(parse_opcode(name(op)), op);
  EXPECT_EQ(parse_opcode("matmul_sparse"), Opcode::MATMUL_SPARSE);
  EXPECT_FALSE(parse_opcode("NOP").has_value());
}

TEST(Generations, VersionsAndNames) {
  EXPECT_EQ(core_version(G::CAYMAN), 3);
  EXPECT_EQ(core_version(G::MARIANA), 4);
  EXPECT_EQ(core_version(G::MARIANA_PLUS), 4);
  EXPECT_EQ(core_version(G::MAVERICK), 5);
  EXPECT_EQ(parse_generation("v3"), G::CAYMAN);
  EXPECT_EQ(parse_generation("mariana"), G::MARIANA);
  EXPECT_EQ(parse_generation("v4+"), G::MARIANA_PLUS);
  EXPECT_EQ(parse_generation("Maverick"), G::MAVERICK);
  EXPECT_FALSE(parse_generation("sunda").has_value());
  for (G g : kAllGenerations) EXPECT_EQ(parse_generation(name(g)), g);
  // Spec 5.2: PSUM partition 0 byte 0 is 0x2000000; FACTS: 8 banks x 2 KiB.
  for (G g : kAllGenerations) {
    EXPECT_EQ(ArrayGeometry::kPsumBase, kPsum);
    EXPECT_EQ(preset_geometry(g).psum_banks, 8u);
    EXPECT_EQ(preset_geometry(g).psum_bank_bytes, 2048u);
    EXPECT_EQ(preset_geometry(g).partitions, 128u);
  }
  EXPECT_EQ(preset_geometry(G::MAVERICK).pe_cols, 256u);  // spec 11: the 256-column array
  EXPECT_EQ(preset_geometry(G::MARIANA).pe_cols, 128u);
}

// Group masks (model D-GRP): aligned groups of the tile grid (32 wide on the preset).
TEST(Enums, GroupMasks) {
  struct M {
    std::uint8_t mask;
    unsigned first, count;
  };
  for (const M m : {M{0x1, 0, 1}, M{0x2, 1, 1}, M{0x4, 2, 1}, M{0x8, 3, 1}, M{0x3, 0, 2}, M{0xC, 2, 2},
                    M{0xF, 0, 4}}) {
    const auto s = decode_group_mask(m.mask);
    ASSERT_TRUE(s.has_value()) << int(m.mask);
    EXPECT_EQ(s->first, m.first);
    EXPECT_EQ(s->count, m.count);
    EXPECT_EQ(group_mask(s->first, s->count), m.mask);
  }
  for (unsigned m : {0x0u, 0x5u, 0x6u, 0x7u, 0x9u, 0xEu, 0x10u, 0x1Fu, 0xFFu})
    EXPECT_FALSE(decode_group_mask(static_cast<std::uint8_t>(m)).has_value()) << m;
  EXPECT_EQ(zero_region_banks(ZeroRegion::BANKS_1), 1u);
  EXPECT_EQ(zero_region_banks(ZeroRegion::BANKS_8), 8u);
}

}  // namespace
}  // namespace pevp::isa::test
