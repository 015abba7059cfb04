// Byte layouts against the offsets typed from spec 000 sections 3-5, 7, 9, 11:
// the field tables (layout_of), their coverage of bytes 0..63, and the typed
// structs of layout.h written with memcpy and read back through decode().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "isa_test_util.h"
#include "pevp/isa/layout.h"

namespace pevp::isa::test {
namespace {

struct Expect {
  const char* name;
  unsigned offset;
  unsigned size;  // 0: the spec does not state it
};

void expect_layout(G g, StructKind kind, const std::vector<Expect>& want) {
  const StructLayout& l = layout_of(g, kind);
  for (const auto& w : want) {
    const FieldDesc* f = l.find(w.name);
    ASSERT_NE(f, nullptr) << l.c_name << " has no field " << w.name;
    EXPECT_EQ(f->offset, w.offset) << l.c_name << "." << w.name;
    if (w.size) {
      EXPECT_EQ(f->size, w.size) << l.c_name << "." << w.name;
    }
  }
}
void expect_absent(G g, StructKind kind, const std::vector<const char*>& names) {
  const StructLayout& l = layout_of(g, kind);
  for (const char* n : names) EXPECT_EQ(l.find(n), nullptr) << l.c_name << " must not have " << n;
}

// ---- MAVERICK (spec 3 and 4, both structs in full) ------------------------------------
TEST(Layout, MaverickS3LwEveryField) {
  expect_layout(G::MAVERICK, StructKind::S3_LW,
                {{"header", 0, 4}, {"events", 4, 8}, {"reserved0", 12, 4}, {"src_mem_pattern", 16, 16},
                 {"in_dtype", 32, 1}, {"fp32_mode", 33, 1}, {"num_active_rows", 34, 1}, {"num_active_cols", 35, 1},
                 {"tile_size", 36, 1}, {"tile_sel", 37, 1}, {"flags", 38, 1}, {"perf_mode", 39, 1},
                 {"tag_weight_mode", 40, 1}, {"reserved1", 41, 23}});  // tag_weight_mode: D-LAYOUT-TAG-WEIGHT
  expect_absent(G::MAVERICK, StructKind::S3_LW, {"row_grp", "col_grp", "out_dtype", "psum_accumulate_flags"});
  EXPECT_EQ(layout_of(G::MAVERICK, StructKind::S3_LW).fields.size(), 14u);
}

TEST(Layout, MaverickS3d3MmEveryField) {
  expect_layout(G::MAVERICK, StructKind::S3D3_MM,
                {{"header", 0, 4}, {"events", 4, 8}, {"reserved0", 12, 4}, {"src_mem_pattern", 16, 16},
                 {"in_dtype", 32, 1}, {"fp32_mode", 33, 1}, {"out_dtype", 34, 1}, {"num_active_rows", 35, 1},
                 {"num_active_cols", 36, 1}, {"tile_size", 37, 1}, {"tile_sel", 38, 1}, {"flags", 39, 1},
                 {"perf_mode", 40, 1}, {"reserved1", 41, 7}, {"dst_mem_pattern", 48, 16}});
  // MAVERICK drops the separate psum_accumulate_flags / row_grp / col_grp / psum_zero_region (spec 4).
  expect_absent(G::MAVERICK, StructKind::S3D3_MM, {"psum_accumulate_flags", "row_grp", "col_grp", "psum_zero_region"});
  EXPECT_EQ(layout_of(G::MAVERICK, StructKind::S3D3_MM).fields.size(), 15u);
}

// Spec 3 NOTE: S3_LW packs one byte tighter than S3D3_MM (no out_dtype).
TEST(Layout, MaverickLwVsMmOneByteShift) {
  const StructLayout& lw = layout_of(G::MAVERICK, StructKind::S3_LW);
  const StructLayout& mm = layout_of(G::MAVERICK, StructKind::S3D3_MM);
  for (const char* n : {"num_active_rows", "num_active_cols", "tile_size", "tile_sel", "flags", "perf_mode"})
    EXPECT_EQ(mm.find(n)->offset, lw.find(n)->offset + 1) << n;
  EXPECT_EQ(lw.find("flags")->offset, 38u);
  EXPECT_EQ(mm.find("flags")->offset, 39u);
  EXPECT_EQ(lw.find("perf_mode")->offset, 39u);
  EXPECT_EQ(mm.find("perf_mode")->offset, 40u);
  for (const char* n : {"header", "events", "src_mem_pattern", "in_dtype", "fp32_mode"})
    EXPECT_EQ(mm.find(n)->offset, lw.find(n)->offset) << n;
}

// ---- MARIANA / MARIANA_PLUS (spec 3.2, 4) -----------------------------------------------
TEST(Layout, MarianaS3Lw) {
  for (G g : {G::MARIANA, G::MARIANA_PLUS}) {
    SCOPED_TRACE(gen_name(g));
    expect_layout(g, StructKind::S3_LW,
                  {{"header", 0, 4}, {"events", 4, 8}, {"bg_xpose_mode", 12, 1}, {"src_mem_pattern", 16, 16},
                   {"in_dtype", 32, 1}, {"row_grp", 44, 1}, {"col_grp", 45, 1}, {"flags", 47, 1}});
    expect_absent(g, StructKind::S3_LW, {"tile_size", "tile_sel", "out_dtype"});
  }
}

TEST(Layout, MarianaS3d3Mm) {
  for (G g : {G::MARIANA, G::MARIANA_PLUS}) {
    SCOPED_TRACE(gen_name(g));
    expect_layout(g, StructKind::S3D3_MM,
                  {{"src_mem_pattern", 16, 16}, {"in_dtype", 32, 1}, {"out_dtype", 40, 1}, {"flags", 42, 1},
                   {"psum_accumulate_flags", 43, 1}, {"row_grp", 44, 1}, {"col_grp", 45, 1},
                   {"psum_zero_region", 47, 1}, {"dst_mem_pattern", 48, 16}});
    expect_absent(g, StructKind::S3D3_MM, {"tile_size", "tile_sel", "perf_mode"});
  }
}

// ---- CAYMAN (spec 3.2, 4) ------------------------------------------------------------------
TEST(Layout, CaymanS3Lw) {
  expect_layout(G::CAYMAN, StructKind::S3_LW,
                {{"src_mem_pattern", 16, 16}, {"in_dtype", 32, 1}, {"transpose_mode", 34, 1}, {"perf_opt", 35, 1},
                 {"num_active_rows", 38, 1}, {"num_active_cols", 39, 1}, {"row_grp", 44, 1}, {"col_grp", 45, 1}});
  // "no flags/seed_mode byte (so no PeManageSeed)"
  expect_absent(G::CAYMAN, StructKind::S3_LW, {"flags", "bg_xpose_mode", "tile_size", "tile_sel"});
}

TEST(Layout, CaymanS3d3MmHasNoFlags) {
  expect_layout(G::CAYMAN, StructKind::S3D3_MM,
                {{"psum_accumulate_flags", 43, 1}, {"row_grp", 44, 1}, {"col_grp", 45, 1},
                 {"psum_zero_region", 47, 1}, {"dst_mem_pattern", 48, 16}});
  expect_absent(G::CAYMAN, StructKind::S3D3_MM, {"flags", "tile_size", "tile_sel", "perf_mode"});
  // and no leaf of a MATMUL_FLAGS byte either
  RawInstruction raw{};
  raw[0] = 0x02;
  const Decoded d = decode(G::CAYMAN, raw);
  EXPECT_FALSE(d.has("flags.seed_mode"));
  EXPECT_FALSE(d.has("flags.accumulate_flag"));
}

// ---- shared structs (spec 5, 7, 9) --------------------------------------------------------
TEST(Layout, S4d3MmEveryGeneration) {
  for (G g : kAllGenerations) {
    SCOPED_TRACE(gen_name(g));
    // "one TENSOR4D src @12-31, one TENSOR3D dst @48-63", psum_zero_region@47
    expect_layout(g, StructKind::S4D3_MM,
                  {{"header", 0, 4}, {"events", 4, 8}, {"src_mem_pattern", 12, 20}, {"psum_zero_region", 47, 1},
                   {"dst_mem_pattern", 48, 16}});
    const FieldDesc* src = layout_of(g, StructKind::S4D3_MM).find("src_mem_pattern");
    EXPECT_EQ(src->part, Part::Tensor4D);
  }
}

TEST(Layout, S2s1d2PeSeedEveryField) {
  for (G g : kAllGenerations) {
    SCOPED_TRACE(gen_name(g));
    expect_layout(g, StructKind::S2S1D2_PE_SEED,
                  {{"header", 0, 4},
                   {"events", 4, 8},
                   {"src_seed_mem_pattern", 12, 12},
                   {"identity_mem_pattern", 24, 8},
                   {"identity_dtype", 32, 1},
                   {"mode", 33, 1},
                   {"num_active_rows", 34, 1},
                   {"num_active_cols", 35, 1},
                   {"dst_seed_mem_pattern", 36, 12},
                   {"reserved", 48, 16}});
    EXPECT_EQ(layout_of(g, StructKind::S2S1D2_PE_SEED).fields.size(), 10u);
  }
}

TEST(Layout, Smx1LwAndSmx1d3Mm) {
  for (G g : kAllGenerations) {
    SCOPED_TRACE(gen_name(g));
    expect_layout(g, StructKind::SMX1_LW,
                  {{"src_mem_pattern", 16, 16}, {"in_dtype", 32, 1}, {"num_active_rows", 38, 1},
                   {"num_active_cols", 39, 1}, {"row_grp", 44, 1}, {"col_grp", 45, 1}});
    EXPECT_EQ(layout_of(g, StructKind::SMX1_LW).find("src_mem_pattern")->part, Part::MxMemPattern1D);
    expect_layout(g, StructKind::SMX1D3_MM,
                  {{"src_mem_pattern", 16, 16}, {"in_dtype", 32, 1}, {"num_active_rows", 38, 1},
                   {"num_active_cols", 39, 1}, {"out_dtype", 40, 1}, {"psum_accumulate_flags", 43, 1},
                   {"row_grp", 44, 1}, {"col_grp", 45, 1}, {"psum_zero_region", 47, 1},
                   {"dst_mem_pattern", 48, 16}});
    EXPECT_EQ(layout_of(g, StructKind::SMX1D3_MM).find("dst_mem_pattern")->part, Part::MemPattern3D);
  }
}

// The source kinds the spec names: TENSOR3D on CAYMAN, the MEM_PATTERN3D union from v4.
TEST(Layout, SourcePatternKindsPerGeneration) {
  EXPECT_EQ(layout_of(G::CAYMAN, StructKind::S3_LW).find("src_mem_pattern")->part, Part::Tensor3D);
  for (G g : {G::MARIANA, G::MARIANA_PLUS, G::MAVERICK}) {
    EXPECT_EQ(layout_of(g, StructKind::S3_LW).find("src_mem_pattern")->part, Part::MemPattern3D) << gen_name(g);
    EXPECT_EQ(layout_of(g, StructKind::S3D3_MM).find("src_mem_pattern")->part, Part::MemPattern3D) << gen_name(g);
  }
  EXPECT_EQ(layout_of(G::MAVERICK, StructKind::S3_LW).find("flags")->part, Part::LdWeightFlags);
  EXPECT_EQ(layout_of(G::MAVERICK, StructKind::S3D3_MM).find("flags")->part, Part::MatmulFlags);
  EXPECT_EQ(layout_of(G::MARIANA, StructKind::S3_LW).find("flags")->part, Part::LdWeightFlags);
  EXPECT_EQ(layout_of(G::MARIANA, StructKind::S3D3_MM).find("flags")->part, Part::MatmulFlags);
}

// ---- every table covers bytes 0..63 exactly once ----------------------------------------------
TEST(Layout, EveryTableCoversAll64BytesOnce) {
  const StructKind kinds[] = {StructKind::S3_LW,   StructKind::S3D3_MM,        StructKind::S4D3_MM,
                              StructKind::S2S1D2_PE_SEED, StructKind::SMX1_LW, StructKind::SMX1D3_MM,
                              StructKind::S3_LT,   StructKind::S_PE_REG_WRITE, StructKind::S2_CONVLUT};
  for (G g : kAllGenerations) {
    for (StructKind k : kinds) {
      const StructLayout& l = layout_of(g, k);
      SCOPED_TRACE(l.c_name);
      EXPECT_EQ(l.kind, k);
      unsigned total = 0;
      std::vector<FieldDesc> sorted = l.fields;
      std::sort(sorted.begin(), sorted.end(), [](const FieldDesc& a, const FieldDesc& b) { return a.offset < b.offset; });
      unsigned next = 0;
      for (const auto& f : sorted) {
        EXPECT_EQ(f.offset, next) << "gap or overlap before " << f.name;
        EXPECT_GT(f.size, 0u) << f.name;
        next = f.offset + f.size;
        total += f.size;
      }
      EXPECT_EQ(total, 64u);
      EXPECT_EQ(next, 64u);
      EXPECT_EQ(sorted.front().offset, 0u);
      EXPECT_STREQ(sorted.front().name, "header");
      // Field names are unique within a table.
      for (std::size_t i = 0; i < l.fields.size(); ++i)
        for (std::size_t j = i + 1; j < l.fields.size(); ++j)
          EXPECT_STRNE(l.fields[i].name, l.fields[j].name);
    }
  }
}

// Every byte of every struct is reachable through exactly one decoded leaf (or one
// bitfield byte): a leaf-level version of the coverage check, for every union member.
TEST(Layout, LeavesCoverEveryByteForEveryUnionMember) {
  const std::uint32_t starts[] = {0x0, 0x1, 0x80000000u, 0x80000001u};  // t, mx, i, conflicting
  for (G g : kAllGenerations) {
    for (Opcode op : kAllOpcodes) {
      if (!exists_in(op, g)) continue;
      for (std::uint32_t s : starts) {
        RawInstruction raw{};
        raw[0] = static_cast<std::uint8_t>(op);
        const StructLayout& l = layout_of(g, struct_of(op));
        for (const auto& f : l.fields)
          if (f.part == Part::MemPattern3D) put32(raw, f.offset, s);
        const auto leaves = leaves_of(l, raw.data());
        std::vector<int> owner(64, 0);
        std::vector<unsigned> bits(64, 0);
        for (const Leaf& lf : leaves) {
          if (lf.bit_width) {
            bits[lf.offset] += lf.bit_width;
            continue;
          }
          for (unsigned i = 0; i < lf.size; ++i) owner.at(lf.offset + i)++;
        }
        for (unsigned b = 0; b < 64; ++b) {
          if (bits[b]) {
            EXPECT_EQ(owner[b], 0) << l.c_name << " byte " << b;
            EXPECT_EQ(bits[b], 8u) << l.c_name << " byte " << b << " (start " << s << ")";
          } else {
            EXPECT_EQ(owner[b], 1) << l.c_name << " byte " << b << " (start " << s << ")";
          }
        }
      }
    }
  }
}

// ---- typed structs written with memcpy decode to the same values ---------------------------
template <typename S>
RawInstruction bytes_of(const S& s) {
  static_assert(sizeof(S) == 64, "operand structs are 64 bytes");
  RawInstruction raw{};
  std::memcpy(raw.data(), &s, sizeof s);
  return raw;
}

TEST(Layout, TypedMaverickMatmulDecodesSameValues) {
  maverick::S3D3_MM s{};
  s.header.opcode = 0x02;
  s.header.inst_word_len = 16;
  s.in_dtype = 0x6;
  s.fp32_mode = 0;
  s.out_dtype = 0xA;
  s.num_active_rows = 77;
  s.num_active_cols = 99;
  s.tile_size = 0x87;  // row R128 (low nibble), col C256 (high nibble)
  s.tile_sel = 0x10;
  s.flags = 0x10;  // accumulate_flag (bit 4)
  s.perf_mode = 0x4;
  s.src_mem_pattern.t.start_addr = 0x1234;
  s.src_mem_pattern.t.step_elem[1] = -3;
  s.src_mem_pattern.t.num_elem[2] = 513;
  s.dst_mem_pattern.t.start_addr = kPsum + 0x40;
  s.dst_mem_pattern.t.num_elem[0] = 7;
  const RawInstruction raw = bytes_of(s);
  // independent byte positions, typed from spec 4
  EXPECT_EQ(raw[34], 0xA);
  EXPECT_EQ(raw[35], 77);
  EXPECT_EQ(raw[39], 0x10);
  EXPECT_EQ(raw[40], 0x4);
  const Decoded d = decode(G::MAVERICK, raw);
  ASSERT_EQ(d.opcode, Opcode::MATMUL);
  EXPECT_EQ(d.get("in_dtype"), 6);
  EXPECT_EQ(d.get("out_dtype"), 0xA);
  EXPECT_EQ(d.get("num_active_rows"), 77);
  EXPECT_EQ(d.get("num_active_cols"), 99);
  EXPECT_EQ(d.get("tile_size.row"), 7);
  EXPECT_EQ(d.get("tile_size.col"), 8);
  EXPECT_EQ(d.get("tile_sel.row_sel"), 0);
  EXPECT_EQ(d.get("tile_sel.col_sel"), 1);
  EXPECT_EQ(d.get("flags.accumulate_flag"), 1);
  EXPECT_EQ(d.get("flags.seed_mode"), 0);
  EXPECT_EQ(d.get("perf_mode"), 4);
  EXPECT_EQ(d.get("src_mem_pattern.start_addr"), 0x1234);
  EXPECT_EQ(d.get("src_mem_pattern.step_elem[1]"), -3);
  EXPECT_EQ(d.get("src_mem_pattern.num_elem[2]"), 513);
  EXPECT_EQ(d.get("dst_mem_pattern.start_addr"), kPsum + 0x40);
  EXPECT_EQ(d.get("dst_mem_pattern.num_elem[0]"), 7);
}

TEST(Layout, TypedMaverickLdweightsDecodesSameValues) {
  maverick::S3_LW s{};
  s.header.opcode = 0x01;
  s.in_dtype = 0xE;
  s.num_active_rows = 5;
  s.num_active_cols = 0;
  s.tile_size = 0x86;
  s.tile_sel = 0x01;
  s.flags = 0x20;  // load_order (bit 5)
  s.perf_mode = 0x2;
  s.reserved1[22] = 0x5A;
  const Decoded d = decode(G::MAVERICK, bytes_of(s));
  EXPECT_EQ(d.get("in_dtype"), 0xE);
  EXPECT_EQ(d.get("num_active_rows"), 5);
  EXPECT_EQ(d.get("num_active_cols"), 0);
  EXPECT_EQ(d.get("tile_size.row"), 6);
  EXPECT_EQ(d.get("tile_size.col"), 8);
  EXPECT_EQ(d.get("tile_sel.row_sel"), 1);
  EXPECT_EQ(d.get("flags.load_order"), 1);
  EXPECT_EQ(d.get("flags.xpose_mode"), 0);
  EXPECT_EQ(d.get("perf_mode"), 2);
  EXPECT_TRUE(has_violation(d.violations, "reserved.zero", "reserved1"));
}

TEST(Layout, TypedMarianaStructsDecodeSameValues) {
  mariana::S3D3_MM mm{};
  mm.header.opcode = 0x02;
  mm.out_dtype = 0x6;
  mm.flags = 0x20;  // xpose_mode (bit 5)
  mm.psum_accumulate_flags = 0x4;
  mm.row_grp = 0xC;
  mm.col_grp = 0x3;
  mm.psum_zero_region = 2;
  const RawInstruction raw = bytes_of(mm);
  EXPECT_EQ(raw[40], 0x6);
  EXPECT_EQ(raw[42], 0x20);
  EXPECT_EQ(raw[43], 0x4);
  EXPECT_EQ(raw[47], 2);
  for (G g : {G::MARIANA, G::MARIANA_PLUS}) {
    const Decoded d = decode(g, raw);
    EXPECT_EQ(d.get("out_dtype"), 6);
    EXPECT_EQ(d.get("flags.xpose_mode"), 1);
    EXPECT_EQ(d.get("flags.accumulate_flag"), 0);
    EXPECT_EQ(d.get("psum_accumulate_flags"), 4);
    EXPECT_EQ(d.get("row_grp"), 0xC);
    EXPECT_EQ(d.get("col_grp"), 0x3);
    EXPECT_EQ(d.get("psum_zero_region"), 2);
  }
  mariana::S3_LW lw{};
  lw.header.opcode = 0x01;
  lw.bg_xpose_mode = 1;
  lw.flags = 0x18;  // seed_mode = 3 (bits 3-4)
  lw.row_grp = 0x2;
  const Decoded d = decode(G::MARIANA, bytes_of(lw));
  EXPECT_EQ(d.get("bg_xpose_mode"), 1);
  EXPECT_EQ(d.get("flags.seed_mode"), 3);
  EXPECT_EQ(d.get("row_grp"), 2);
}

TEST(Layout, TypedCaymanAndSharedStructsDecodeSameValues) {
  cayman::S3D3_MM mm{};
  mm.header.opcode = 0x02;
  mm.transpose_mode = 1;
  mm.perf_opt = 1;
  mm.num_active_rows = 64;
  mm.num_active_cols = 32;
  mm.psum_accumulate_flags = 3;
  mm.psum_zero_region = 3;
  mm.dst_mem_pattern.step_elem[2] = -1;
  Decoded d = decode(G::CAYMAN, bytes_of(mm));
  EXPECT_EQ(d.get("transpose_mode"), 1);
  EXPECT_EQ(d.get("perf_opt"), 1);
  EXPECT_EQ(d.get("num_active_rows"), 64);
  EXPECT_EQ(d.get("num_active_cols"), 32);
  EXPECT_EQ(d.get("psum_accumulate_flags"), 3);
  EXPECT_EQ(d.get("psum_zero_region"), 3);
  EXPECT_EQ(d.get("dst_mem_pattern.step_elem[2]"), -1);

  S4D3_MM sp{};
  sp.header.opcode = 0x07;
  sp.src_mem_pattern.start_addr = 0xabcdef;
  sp.src_mem_pattern.num_elem[3] = 3;
  sp.src_mem_pattern.step_elem[3] = -200;
  sp.dst_mem_pattern.num_elem[1] = 9;
  RawInstruction raw = bytes_of(sp);
  EXPECT_EQ(raw[12], 0xef);  // src @12
  EXPECT_EQ(raw[12 + 18], 3);  // num_elem[3] = the last 2 bytes of the 20-byte TENSOR4D
  for (G g : kAllGenerations) {
    d = decode(g, raw);
    EXPECT_EQ(d.get("src_mem_pattern.start_addr"), 0xabcdef);
    EXPECT_EQ(d.get("src_mem_pattern.num_elem[3]"), 3);
    EXPECT_EQ(d.get("src_mem_pattern.step_elem[3]"), -200);
    EXPECT_EQ(d.get("dst_mem_pattern.num_elem[1]"), 9);
  }

  S2S1D2_PE_SEED seed{};
  seed.header.opcode = 0x08;
  seed.mode = 2;
  seed.identity_dtype = 0xB;
  seed.num_active_rows = 16;
  seed.num_active_cols = 128;
  seed.dst_seed_mem_pattern.start_addr = kPsum;
  seed.dst_seed_mem_pattern.step_elem[1] = 512;
  seed.dst_seed_mem_pattern.num_elem[1] = 8;
  seed.identity_mem_pattern.num_elem[0] = 16;
  raw = bytes_of(seed);
  EXPECT_EQ(raw[33], 2);
  EXPECT_EQ(raw[36 + 3], 0x02);  // 0x2000000 little-endian at 36
  d = decode(G::MARIANA, raw);
  EXPECT_EQ(d.get("mode"), 2);
  EXPECT_EQ(d.get("identity_dtype"), 0xB);
  EXPECT_EQ(d.get("num_active_rows"), 16);
  EXPECT_EQ(d.get("num_active_cols"), 128);
  EXPECT_EQ(d.get("dst_seed_mem_pattern.start_addr"), kPsum);
  EXPECT_EQ(d.get("dst_seed_mem_pattern.step_elem[1]"), 512);
  EXPECT_EQ(d.get("dst_seed_mem_pattern.num_elem[1]"), 8);
  EXPECT_EQ(d.get("identity_mem_pattern.num_elem[0]"), 16);

  SMX1D3_MM mx{};
  mx.header.opcode = 0x0A;
  mx.src_mem_pattern.scale_addr = 0x777;
  mx.src_mem_pattern.index_addr = 0x888;
  mx.src_mem_pattern.num_elem = 31;
  mx.in_dtype = 0x10;
  mx.out_dtype = 0x6;
  mx.psum_zero_region = 1;
  d = decode(G::MARIANA_PLUS, bytes_of(mx));
  EXPECT_EQ(d.get("src_mem_pattern.scale_addr"), 0x777);
  EXPECT_EQ(d.get("src_mem_pattern.index_addr"), 0x888);
  EXPECT_EQ(d.get("src_mem_pattern.num_elem"), 31);
  EXPECT_EQ(d.get("in_dtype"), 0x10);
  EXPECT_EQ(d.get("out_dtype"), 6);
  EXPECT_EQ(d.get("psum_zero_region"), 1);
}

// MEM_PATTERN3D union members are chosen by the start_addr markers (spec 7:
// ADDR4MARKER_MXTENSOR_V2 = 0x01).
TEST(Layout, UnionMemberFromStartAddrMarker) {
  EXPECT_EQ(ADDR4MARKER_MXTENSOR_V2, 0x01u);
  EXPECT_EQ(pattern_member(0x100), PatternMember::Tensor3D);
  EXPECT_EQ(pattern_member(0x101), PatternMember::MxTensorV2);
  maverick::S3_LW s{};
  s.header.opcode = 0x01;
  s.src_mem_pattern.mx.start_addr = 0x201;
  s.src_mem_pattern.mx.scale_addr = 0x4000;
  s.src_mem_pattern.mx.num_elem[1] = 4;
  const Decoded d = decode(G::MAVERICK, bytes_of(s));
  EXPECT_EQ(d.get("src_mem_pattern.scale_addr"), 0x4000);
  EXPECT_EQ(d.get("src_mem_pattern.num_elem[1]"), 4);
  EXPECT_FALSE(d.has("src_mem_pattern.num_elem[2]"));
}

}  // namespace
}  // namespace pevp::isa::test
