// Random VALID instructions for every (generation, opcode): each field value is
// drawn from the set the spec (or a documented model decision) allows, and the
// instruction is built with the Encoder. The round-trip and fuzz suites use it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "isa_test_util.h"

namespace pevp::isa::test {

class Rng {
 public:
  explicit Rng(std::uint32_t seed) : g_(seed) {}
  std::int64_t uni(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(g_); }
  bool coin(int one_in = 2) { return uni(0, one_in - 1) == 0; }
  template <typename T>
  T pick(const std::vector<T>& v) {
    return v.at(static_cast<std::size_t>(uni(0, static_cast<std::int64_t>(v.size()) - 1)));
  }
  std::uint8_t byte() { return static_cast<std::uint8_t>(uni(0, 255)); }
  std::int64_t step() { return coin(3) ? uni(-32768, 32767) : uni(-4, 4); }
  std::int64_t count() { return coin(3) ? uni(1, 65535) : uni(1, 8); }
  std::mt19937& engine() { return g_; }

 private:
  std::mt19937 g_;
};

// Which values each field may take (spec 000 sections cited).
inline const std::vector<int> kMmIn{0x11, 0xD, 0xE, 0xF, 0x6, 0x7, 0xA};          // spec 8
inline const std::vector<int> kMxIn{0x11, 0xD, 0xE, 0xF, 0x10, 0x12};              // spec 7
inline const std::vector<int> kIdentity{0x6, 0x7, 0xB, 0x11, 0xD, 0xE, 0xF};       // spec 5
inline const std::vector<int> kGroupMasks{0x1, 0x2, 0x4, 0x8, 0x3, 0xC, 0xF};       // model D-GRP
inline const std::vector<int> kPsumFlags{0, 1, 2, 3, 4, 6};                         // spec 4.1, D-PSUMFLAGS
inline const std::vector<int> kForceTags{0x0, 0x4, 0x8, 0xC};                       // spec 9
inline const std::vector<int> kLutDtypes{0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xA, 0xB, 0xD, 0xE, 0xF, 0x10, 0x11, 0x12, 0x13};

inline unsigned group_size(int mask) { return mask == 0xF ? 128 : (mask == 0x3 || mask == 0xC) ? 64 : 32; }

struct Gen {
  G g;
  Rng& r;
  Encoder e;
  Gen(G gen, Opcode op, Rng& rng) : g(gen), r(rng), e(gen, op) {}

  const ArrayGeometry& geo() const { return preset_geometry(g); }

  void header_events() {
    e.set("header.debug_cmd", r.byte()).set("header.debug_hint", r.byte());
    const auto wm = r.uni(0, 2), um = r.uni(0, 3);
    e.set("events.wait_mode", wm).set("events.update_mode", um);
    if (wm) e.set("events.wait_sem", r.uni(0, 31)).set("events.wait_value", r.uni(0, 65535));
    if (um) e.set("events.update_sem", r.uni(0, 31)).set("events.update_value", r.uni(0, 65535));
  }

  // The tile; returns the rows and columns it spans. v3/v4 group masks, v5 tile_size/sel.
  std::pair<unsigned, unsigned> tile(bool cols_full = false) {
    if (!is_maverick(g)) {
      const int rm = r.pick(kGroupMasks), cm = cols_full ? 0xF : r.pick(kGroupMasks);
      e.set("row_grp", rm).set("col_grp", cm);
      return {group_size(rm), group_size(cm)};
    }
    const bool r64 = r.coin(), c256 = r.coin();
    e.set("tile_size.row", r64 ? 6 : 7).set("tile_size.col", c256 ? 8 : 7);
    e.set("tile_sel.row_sel", r64 ? r.uni(0, 1) : 0).set("tile_sel.col_sel", c256 ? 0 : r.uni(0, 1));
    return {r64 ? 64u : 128u, c256 ? 256u : 128u};
  }
  // num_active_rows / cols inside the tile; returns the columns as "partitions" (0 => 256).
  std::pair<unsigned, unsigned> active(std::pair<unsigned, unsigned> t) {
    const unsigned rows = static_cast<unsigned>(r.uni(1, t.first));
    unsigned cols;
    if (t.second == 256)
      cols = r.coin(3) ? 0u : static_cast<unsigned>(r.uni(1, 255));
    else
      cols = static_cast<unsigned>(r.uni(1, t.second));
    e.set("num_active_rows", rows).set("num_active_cols", cols);
    return {rows, cols};
  }

  // A start address in SBUF whose partition leaves room for `parts` partitions.
  std::uint32_t sbuf_addr(unsigned parts, bool even) {
    const auto p = r.uni(0, std::max<std::int64_t>(0, 128 - static_cast<std::int64_t>(parts)));
    auto a = static_cast<std::uint32_t>(p * geo().sbuf_partition_bytes + r.uni(0, geo().sbuf_partition_bytes - 1));
    if (even) a &= ~1u;
    return a;
  }
  void tensor(const std::string& name, unsigned dims, std::uint32_t addr) {
    e.set(name + ".start_addr", addr);
    for (unsigned k = 0; k < dims; ++k) {
      e.set(name + ".step_elem[" + std::to_string(k) + "]", r.step());
      e.set(name + ".num_elem[" + std::to_string(k) + "]", r.count());
    }
  }
  // The SBUF source of LDWEIGHTS / MATMUL; returns whether it is the MX member.
  int src_kind = 0;  // the last src(): 0 TENSOR3D, 1 INDIRECT16B, 2 MXTENSOR_V2
  bool src(const std::string& name, unsigned rows, bool is_union, bool allow_mx) {
    const int kind = is_union ? static_cast<int>(r.uni(0, allow_mx ? 2 : 1)) : 0;
    src_kind = kind;
    if (kind == 0) {
      tensor(name, 3, sbuf_addr(rows, is_union));
      return false;
    }
    if (kind == 1) {  // INDIRECT16B (model bit 31)
      e.set(name + ".start_addr", sbuf_addr(rows, true) | 0x80000000u);
      e.set(name + ".index_addr", r.uni(0, 0xFFFFFFFFll)).set(name + ".step_elem", r.step());
      e.set(name + ".num_elem", r.count()).set(name + ".num_index", r.count());
      return false;
    }
    e.set(name + ".start_addr", sbuf_addr(rows, true) | 1u);  // MXTENSOR_V2 (spec 7)
    e.set(name + ".scale_addr", r.uni(0, geo().sbuf_bytes() - 1));
    for (unsigned k = 0; k < 2; ++k) {
      e.set(name + ".step_elem[" + std::to_string(k) + "]", r.step());
      e.set(name + ".num_elem[" + std::to_string(k) + "]", r.count());
    }
    return true;
  }
  void in_dtype(bool mx) {
    const int d = r.pick(mx ? kMxIn : kMmIn);
    e.set("in_dtype", d).set("fp32_mode", d == 0xA ? r.uni(1, 3) : 0);
  }
  int out_dtype() {
    // v3 has the one encoding 0 (= FP32, spec 8); two entries keep the draws the same as before.
    const std::vector<int> outs = is_v4_plus(g) ? std::vector<int>{0, 0xA, 0x6} : std::vector<int>{0, 0};
    const int o = r.pick(outs);
    e.set("out_dtype", o);
    return o;
  }
  // A TENSOR3D PSUM destination inside one bank (v3) or the partition (v4+).
  void psum_dst(const std::string& name, unsigned parts, int out, bool even, int force_upper = 0) {
    const std::int64_t elem = out == 0x6 ? 2 : 4;
    const std::int64_t window = is_v4_plus(g) ? 16384 : 2048;
    std::int64_t n[3], s[3], lo = 0, hi = 0;
    for (int attempt = 0;; ++attempt) {
      lo = hi = 0;
      for (int k = 0; k < 3; ++k) {
        n[k] = k == 0 ? r.uni(1, 600) : r.uni(1, 4);
        s[k] = attempt > 50 ? 1 : r.uni(-300, 300);
      }
      if (force_upper) n[2] = force_upper;
      if (attempt > 50) n[0] = 1, n[1] = 1;
      for (int k = 0; k < 3; ++k) (s[k] < 0 ? lo : hi) += s[k] * (n[k] - 1);
      if ((hi - lo + 1) * elem <= window) break;
    }
    const std::int64_t bank = is_v4_plus(g) ? 0 : r.uni(0, 7) * 2048;
    std::int64_t off = r.uni(bank - lo * elem, bank + window - elem - hi * elem);
    if (even) off &= ~std::int64_t{1};
    const auto p = r.uni(0, 128 - static_cast<std::int64_t>(parts));
    e.set(name + ".start_addr", kPsum + p * kPsumPartition + off);
    for (int k = 0; k < 3; ++k) {
      e.set(name + ".step_elem[" + std::to_string(k) + "]", s[k]);
      e.set(name + ".num_elem[" + std::to_string(k) + "]", n[k]);
    }
  }
  unsigned dst_parts(unsigned cols) const { return cols == 0 ? 128u : std::min(cols, 128u); }

  // MAVERICK load/save-seed micro-ops (spec 5.1).
  void seed_contract(bool is_mm) {
    const int seed = static_cast<int>(r.uni(1, 2));
    e.set("tile_size.row", 6).set("tile_size.col", 8);
    tensor("src_mem_pattern", 0, sbuf_addr(1, true));
    for (int k = 0; k < 3; ++k) {
      e.set("src_mem_pattern.step_elem[" + std::to_string(k) + "]", r.step());
      e.set("src_mem_pattern.num_elem[" + std::to_string(k) + "]", 1);
    }
    e.set("in_dtype", 0xA).set("fp32_mode", 2).set("num_active_rows", 1).set("num_active_cols", 0);
    e.set("flags.seed_mode", seed).set("flags.xpose_mode", 1).set("flags.scalar_mode", r.uni(0, 3));
    if (!is_mm) {
      e.set("flags.load_order", r.uni(0, 1));
      return;
    }
    e.set("flags.accumulate_flag", r.uni(0, 1)).set("out_dtype", 0xA);
    if (seed == 2) {
      psum_dst("dst_mem_pattern", 128, 0xA, true, 2);
      e.set("dst_mem_pattern.num_elem[0]", 1).set("dst_mem_pattern.num_elem[1]", 1);
    } else {
      psum_dst("dst_mem_pattern", 128, 0xA, true);
    }
  }

  void ldweights_or_matmul(bool is_mm) {
    if (is_maverick(g) && r.coin(8)) return seed_contract(is_mm);
    const auto t = tile();
    const auto [rows, cols] = active(t);
    const bool is_union = g != G::CAYMAN;
    const bool mx = src("src_mem_pattern", rows, is_union, is_maverick(g));
    in_dtype(mx);
    const int in = static_cast<int>(e.decoded().get("in_dtype"));
    bool xpose = r.coin();
    if (g == G::CAYMAN) {
      e.set("transpose_mode", xpose);
    } else {
      e.set("flags.xpose_mode", xpose).set("flags.scalar_mode", r.uni(0, 3));
      e.set("flags.seed_mode", is_maverick(g) ? 0 : r.uni(0, 2));
      if (is_mm)
        e.set("flags.accumulate_flag", r.uni(0, 1));
      else
        e.set("flags.load_order", r.uni(0, 1));
      if (g != G::MAVERICK && !is_mm) e.set("bg_xpose_mode", r.uni(0, 1));
    }
    if (!is_maverick(g)) {
      const bool fp8 = in == 0xD || in == 0xE || in == 0xF || in == 0x11;
      const bool cols_full = e.decoded().get("col_grp") == 0xF;
      e.set("perf_opt", fp8 && cols_full && !xpose && r.coin() ? 1 : 0);
    } else {
      e.set("perf_mode", mx ? r.uni(0, 6) : 0);
    }
    if (!is_mm) return;
    const int out = out_dtype();
    if (!is_maverick(g)) e.set("psum_accumulate_flags", r.pick(kPsumFlags)).set("psum_zero_region", r.uni(0, 3));
    unsigned parts = dst_parts(cols);
    if (xpose && (g == G::CAYMAN || e.decoded().get("flags.seed_mode") == 0)) {
      // A transposing matmul (not a seed micro-op) writes one PSUM partition per moving element (mm.xpose_free_size).
      const unsigned dims = src_kind == 0 ? 3 : src_kind == 2 ? 2 : 1;
      unsigned count = 1;
      for (unsigned k = 0; k < dims; ++k) {
        const auto n = static_cast<unsigned>(r.uni(1, k == 0 ? 8 : 4));
        count *= n;
        e.set(dims == 1 ? std::string("src_mem_pattern.num_elem")
                        : "src_mem_pattern.num_elem[" + std::to_string(k) + "]", n);
      }
      if (src_kind == 1) {  // the indirect member's elements are per index (D-INDIRECT)
        const auto indices = static_cast<unsigned>(r.uni(1, 4));
        e.set("src_mem_pattern.num_index", indices);
        count *= indices;
      }
      parts = count;
    }
    psum_dst("dst_mem_pattern", parts, out, is_union, is_maverick(g) && t.second == 256 ? 2 : 0);
  }

  void sparse() {
    const auto t = tile();
    const auto [rows, cols] = active(t);
    tensor("src_mem_pattern", 4, sbuf_addr(rows, false));
    e.set("src_mem_pattern.num_elem[3]", r.uni(2, 4));
    in_dtype(false);
    if (is_v4_plus(g)) {
      e.set("flags.scalar_mode", r.uni(0, 3)).set("flags.seed_mode", r.uni(0, 2));
      e.set("flags.accumulate_flag", r.uni(0, 1)).set("flags.xpose_mode", r.uni(0, 1));
    }
    const int out = out_dtype();
    e.set("psum_accumulate_flags", r.pick(kPsumFlags)).set("psum_zero_region", r.uni(0, 3));
    psum_dst("dst_mem_pattern", dst_parts(cols), out, false);
  }

  void pe_seed() {
    const int mode = static_cast<int>(r.uni(1, 2));
    e.set("mode", mode).set("num_active_rows", 16).set("num_active_cols", 128);
    e.set("identity_dtype", r.pick(kIdentity));
    e.set("identity_mem_pattern.start_addr", sbuf_addr(16, false));
    e.set("identity_mem_pattern.step_elem[0]", r.step()).set("identity_mem_pattern.num_elem[0]", 16);
    if (mode == 1) {
      static const std::vector<std::pair<int, int>> shapes{{1, 128}, {2, 64}, {4, 32}, {8, 16},
                                                           {16, 8},  {32, 4}, {64, 2}, {128, 1}};
      const auto sh = r.pick(shapes);
      e.set("src_seed_mem_pattern.start_addr", r.uni(0, geo().sbuf_partition_bytes - 1));
      e.set("src_seed_mem_pattern.step_elem[0]", r.step()).set("src_seed_mem_pattern.step_elem[1]", r.step());
      e.set("src_seed_mem_pattern.num_elem[0]", sh.first).set("src_seed_mem_pattern.num_elem[1]", sh.second);
    } else {  // spec 5.2
      e.set("dst_seed_mem_pattern.start_addr", kPsum);
      e.set("dst_seed_mem_pattern.step_elem[0]", 1).set("dst_seed_mem_pattern.step_elem[1]", 512);
      e.set("dst_seed_mem_pattern.num_elem[0]", 2).set("dst_seed_mem_pattern.num_elem[1]", 8);
    }
  }

  void mx_op(bool is_mm) {
    const int rm = r.pick(kGroupMasks);
    e.set("row_grp", rm).set("col_grp", 0xF);
    const auto rows = r.uni(1, group_size(rm)), cols = r.uni(1, 128);
    e.set("num_active_rows", rows).set("num_active_cols", cols);
    e.set("src_mem_pattern.start_addr", r.uni(0, geo().sbuf_bytes() - 1));
    e.set("src_mem_pattern.scale_addr", r.uni(0, geo().sbuf_bytes() - 1));
    e.set("src_mem_pattern.step_elem", r.step()).set("src_mem_pattern.num_elem", r.count());
    e.set("src_mem_pattern.index_addr", r.uni(0, 0xFFFFFFFFll));
    e.set("in_dtype", r.pick(kMxIn)).set("perf_mode", r.uni(0, 6));
    if (!is_mm) return;
    const int out = out_dtype();
    e.set("psum_accumulate_flags", r.pick(kPsumFlags)).set("psum_zero_region", r.uni(0, 3));
    psum_dst("dst_mem_pattern", static_cast<unsigned>(cols), out, true);
  }

  void ldtags() {
    const auto [rows, cols] = active(tile());
    (void)cols;
    e.set("in_dtype", 0x5).set("force_tag_bits", r.pick(kForceTags));
    tensor("src_mem_pattern", 3, sbuf_addr(rows, false));
  }

  void pe_reg_write() {
    tile();
    e.set("reg_addr", r.uni(0, 0xFFFFFFFFll)).set("imm_value", r.uni(0, 0xFFFFFFFFll));
    if (r.coin()) {
      e.set("src_mem_pattern.start_addr", r.uni(0, geo().sbuf_bytes() - 1));
      e.set("src_mem_pattern.step_elem[0]", r.step()).set("src_mem_pattern.num_elem[0]", r.count());
    } else {  // register-immediate: the pattern is not read
      e.set("src_mem_pattern.start_addr", r.uni(0, 0xFFFFFFFFll)).set("src_mem_pattern.step_elem[0]", r.step());
    }
  }

  void conv_lut() {
    e.set("lut_dtype", r.pick(kLutDtypes));
    e.set("src_mem_pattern.start_addr", r.uni(0, geo().sbuf_bytes() - 1));
    for (int k = 0; k < 2; ++k) {
      e.set("src_mem_pattern.step_elem[" + std::to_string(k) + "]", r.step());
      e.set("src_mem_pattern.num_elem[" + std::to_string(k) + "]", r.count());
    }
  }
};

// A random valid instruction of `op` on `g` (op must be usable on g).
inline RawInstruction random_valid(G g, Opcode op, Rng& r) {
  Gen x(g, op, r);
  x.header_events();
  switch (op) {
    case Opcode::LDWEIGHTS: x.ldweights_or_matmul(false); break;
    case Opcode::MATMUL: x.ldweights_or_matmul(true); break;
    case Opcode::MATMUL_SPARSE: x.sparse(); break;
    case Opcode::PE_MANAGE_SEED: x.pe_seed(); break;
    case Opcode::LDWEIGHTS_MX: x.mx_op(false); break;
    case Opcode::MATMUL_MX: x.mx_op(true); break;
    case Opcode::LDTAGS: x.ldtags(); break;
    case Opcode::PE_REG_WRITE: x.pe_reg_write(); break;
    case Opcode::CONV_LUT_LOAD: x.conv_lut(); break;
  }
  return x.e.bytes();
}

// Random bytes with a given opcode byte (and sometimes a plausible header).
inline RawInstruction random_bytes(Rng& r, std::uint8_t opcode) {
  RawInstruction raw;
  for (auto& b : raw) b = r.byte();
  raw[0] = opcode;
  if (r.coin()) raw[1] = 16;
  return raw;
}

}  // namespace pevp::isa::test
