// Shared helpers of the ISA suites: violation queries, a byte-level patcher for
// mutations, and valid baseline instructions for every (generation, opcode).
// The baselines are built with builders.h / the Encoder from values the spec
// allows; the suites then assert against numbers typed from the spec text.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pevp/isa/builders.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/encode.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/fields.h"
#include "pevp/isa_text/format.h"
#include "pevp/isa_text/json.h"
#include "pevp/isa/generation.h"
#include "pevp/isa/opcode.h"

#if defined(__SANITIZE_ADDRESS__)
#define PEVP_ISA_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PEVP_ISA_SANITIZED 1
#endif
#endif
#ifndef PEVP_ISA_SANITIZED
#define PEVP_ISA_SANITIZED 0
#endif

namespace pevp::isa::test {

using G = Generation;

// Record counts of the volume suites (round trip, fuzz). A sanitizer build runs
// 1/`sanitized_divisor` of them (its value is the memory checks, and it is ~10x
// slower); PEVP_ISA_VOLUME=<factor> multiplies them for a deeper run.
inline int volume(int normal, int sanitized_divisor) {
  int n = PEVP_ISA_SANITIZED ? std::max(1, normal / sanitized_divisor) : normal;
  if (const char* f = std::getenv("PEVP_ISA_VOLUME")) n *= std::max(1, std::atoi(f));
  return n;
}

inline constexpr std::uint32_t kPsum = 0x2000000;  // spec 5.2: PSUM partition 0 byte 0
inline constexpr std::uint32_t kPsumPartition = 16 * 1024;  // FACTS.md: 8 banks x 2 KiB

inline std::string gen_name(G g) { return std::string(name(g)); }

// "rule@field; rule@field" for failure messages.
inline std::string dump(const std::vector<Violation>& vs) {
  std::ostringstream o;
  for (const auto& v : vs) o << v.rule << "@" << v.field << " (" << v.describe() << "); ";
  return o.str();
}
inline std::string dump(const Decoded& d) { return dump(d.violations); }

inline bool has_violation(const std::vector<Violation>& vs, const std::string& rule, const std::string& field) {
  for (const auto& v : vs)
    if (v.rule == rule && v.field == field) return true;
  return false;
}
inline bool has_rule(const std::vector<Violation>& vs, const std::string& rule) {
  for (const auto& v : vs)
    if (v.rule == rule) return true;
  return false;
}
inline std::set<std::string> rules_of(const std::vector<Violation>& vs) {
  std::set<std::string> s;
  for (const auto& v : vs) s.insert(v.rule);
  return s;
}

// Writes `value` into the leaf `path` of an already-encoded instruction (the
// union member is resolved from the current bytes). Fails the test when the
// path does not exist or the value does not fit.
inline void patch(G g, RawInstruction& raw, const std::string& path, std::int64_t value) {
  const auto op = opcode_from_byte(raw[0], g);
  ASSERT_TRUE(op.has_value()) << "patch: opcode byte " << int(raw[0]) << " not in " << gen_name(g);
  const StructLayout& l = layout_of(g, struct_of(*op));
  for (const Leaf& leaf : leaves_of(l, raw.data())) {
    if (leaf.path != path) continue;
    ASSERT_TRUE(write_leaf(raw.data(), leaf, value)) << "patch: " << path << " = " << value << " does not fit";
    return;
  }
  FAIL() << "patch: " << l.c_name << " has no leaf " << path;
}

// Little-endian raw writes at a byte offset (independent of the field tables).
inline void put8(RawInstruction& r, unsigned off, std::uint8_t v) { r.at(off) = v; }
inline void put16(RawInstruction& r, unsigned off, std::uint16_t v) {
  r.at(off) = static_cast<std::uint8_t>(v);
  r.at(off + 1) = static_cast<std::uint8_t>(v >> 8);
}
inline void put32(RawInstruction& r, unsigned off, std::uint32_t v) {
  for (unsigned i = 0; i < 4; ++i) r.at(off + i) = static_cast<std::uint8_t>(v >> (8 * i));
}

// ---- valid baselines ---------------------------------------------------------------------
// Ldweights: 128 x 128 bf16 stationary from SBUF 0, full tile.
inline LdweightsArgs lw_args() {
  LdweightsArgs a;
  a.src = Pattern::row(0, 128);
  a.in_dtype = Dtype::BFLOAT16;
  return a;
}
// Matmul: 128 moving bf16 columns from SBUF 0 into PSUM bank 0 (512 B per partition).
inline MatmulArgs mm_args() {
  MatmulArgs a;
  a.src = Pattern::row(0, 128);
  a.dst = Pattern::row(kPsum, 128);
  a.in_dtype = Dtype::BFLOAT16;
  a.out_dtype = Dtype::FP32;
  a.psum_flags = psum_flags::SINGLE;
  return a;
}
inline RawInstruction lw_base(G g) { return encode_ldweights(g, lw_args()); }
inline RawInstruction mm_base(G g) { return encode_matmul(g, mm_args()); }

inline PeSeedArgs load_seed_args() {
  PeSeedArgs a;
  a.mode = PeSeedMode::LOAD_SEED;
  a.src_seed = {0x100, {1, 0}, {128, 1}};      // 128 seeds per partition, partitions 0-15
  a.identity = Pattern::row(0x2000, 16);        // the 16-element identity diagonal
  a.identity_dtype = Dtype::BFLOAT16;
  return a;
}
inline PeSeedArgs save_seed_args() {
  PeSeedArgs a;
  a.mode = PeSeedMode::SAVE_SEED;
  a.identity = Pattern::row(0x2000, 16);
  a.identity_dtype = Dtype::BFLOAT16;
  a.dst_seed = {kPsum, {1, 512}, {2, 8}};  // spec 5.2
  return a;
}
inline RawInstruction load_seed_base(G g) { return encode_pe_seed(g, load_seed_args()); }
inline RawInstruction save_seed_base(G g) { return encode_pe_seed(g, save_seed_args()); }

// The tile fields of a full 128 x 128 tile, whichever form `g` uses.
inline void full_tile(Encoder& e, G g) {
  if (is_maverick(g))
    e.set("tile_size.row", tile_size::R128).set("tile_size.col", tile_size::C128);
  else
    e.set("row_grp", 0xF).set("col_grp", 0xF);
}
inline void tensor(Encoder& e, const std::string& name, std::uint32_t addr, std::vector<std::int64_t> steps,
                   std::vector<std::int64_t> nums) {
  e.set(name + ".start_addr", addr);
  for (std::size_t k = 0; k < steps.size(); ++k) e.set(name + ".step_elem[" + std::to_string(k) + "]", steps[k]);
  for (std::size_t k = 0; k < nums.size(); ++k) e.set(name + ".num_elem[" + std::to_string(k) + "]", nums[k]);
}

// MatmulSparse: a 4-D bf16 source with 2 fmaps per partition.
inline RawInstruction sparse_base(G g) {
  Encoder e(g, Opcode::MATMUL_SPARSE);
  tensor(e, "src_mem_pattern", 0, {1, 0, 0, 128}, {128, 1, 1, 2});
  e.set("in_dtype", static_cast<int>(Dtype::BFLOAT16));
  e.set("num_active_rows", 128).set("num_active_cols", 128);
  e.set("out_dtype", g == G::CAYMAN ? 0 : static_cast<int>(Dtype::FP32));  // v3 encodes FP32 as 0 (spec 8)
  e.set("psum_accumulate_flags", psum_flags::SINGLE);
  full_tile(e, g);
  tensor(e, "dst_mem_pattern", kPsum, {1, 0, 0}, {128, 1, 1});
  return e.bytes();
}

// LdweightsMX / MatmulMX (v4): fp8 e4m3 data + scales in SBUF, row tiling only.
inline RawInstruction mx_lw_base(G g) {
  Encoder e(g, Opcode::LDWEIGHTS_MX);
  e.set("src_mem_pattern.start_addr", 0x0).set("src_mem_pattern.scale_addr", 0x4000);
  e.set("src_mem_pattern.step_elem", 1).set("src_mem_pattern.num_elem", 128);
  e.set("in_dtype", static_cast<int>(Dtype::FP8_EXP4));
  e.set("num_active_rows", 128).set("num_active_cols", 128);
  e.set("row_grp", 0xF).set("col_grp", 0xF);
  return e.bytes();
}
inline RawInstruction mx_mm_base(G g) {
  Encoder e(g, Opcode::MATMUL_MX);
  e.set("src_mem_pattern.start_addr", 0x0).set("src_mem_pattern.scale_addr", 0x4000);
  e.set("src_mem_pattern.step_elem", 1).set("src_mem_pattern.num_elem", 128);
  e.set("in_dtype", static_cast<int>(Dtype::FP8_EXP4));
  e.set("num_active_rows", 128).set("num_active_cols", 128);
  e.set("row_grp", 0xF).set("col_grp", 0xF);
  e.set("out_dtype", static_cast<int>(Dtype::FP32));
  e.set("psum_accumulate_flags", psum_flags::SINGLE);
  tensor(e, "dst_mem_pattern", kPsum, {1, 0, 0}, {128, 1, 1});
  return e.bytes();
}

// LdTags: UINT16 tag words, 32 per partition.
inline RawInstruction ldtags_base(G g) {
  Encoder e(g, Opcode::LDTAGS);
  tensor(e, "src_mem_pattern", 0, {1, 0, 0}, {32, 1, 1});
  e.set("in_dtype", static_cast<int>(Dtype::UINT16)).set("force_tag_bits", 0x4);
  e.set("num_active_rows", 128).set("num_active_cols", 128);
  full_tile(e, g);
  return e.bytes();
}

// PeRegWrite: register-immediate (no SBUF source).
inline RawInstruction regwrite_base(G g) {
  Encoder e(g, Opcode::PE_REG_WRITE);
  e.set("reg_addr", 0x10).set("imm_value", 0xdeadbeef);
  full_tile(e, g);
  return e.bytes();
}

// ConvLutLoad (v4+): a 64-entry bf16 table from SBUF.
inline RawInstruction convlut_base(G g) {
  Encoder e(g, Opcode::CONV_LUT_LOAD);
  tensor(e, "src_mem_pattern", 0x800, {1, 0}, {64, 1});
  e.set("lut_dtype", static_cast<int>(Dtype::BFLOAT16));
  return e.bytes();
}

// A valid instruction of `op` on `g` (for opcodes whose use on `g` is valid).
inline RawInstruction base_of(G g, Opcode op) {
  switch (op) {
    case Opcode::LDWEIGHTS: return lw_base(g);
    case Opcode::MATMUL: return mm_base(g);
    case Opcode::PE_REG_WRITE: return regwrite_base(g);
    case Opcode::LDTAGS: return ldtags_base(g);
    case Opcode::MATMUL_SPARSE: return sparse_base(g);
    case Opcode::PE_MANAGE_SEED: return load_seed_base(g);
    case Opcode::LDWEIGHTS_MX: return mx_lw_base(g);
    case Opcode::MATMUL_MX: return mx_mm_base(g);
    case Opcode::CONV_LUT_LOAD: return convlut_base(g);
  }
  return {};
}

// Whether the spec lets `op` be used (validly) on `g`: CAYMAN has the five v3
// ops; PeManageSeed and the separate MX ops are v4-only (spec 5.1, 7).
inline bool usable(Opcode op, G g) {
  if (!exists_in(op, g)) return false;
  if (op == Opcode::PE_MANAGE_SEED || op == Opcode::LDWEIGHTS_MX || op == Opcode::MATMUL_MX) return is_v4(g);
  return true;
}

}  // namespace pevp::isa::test
