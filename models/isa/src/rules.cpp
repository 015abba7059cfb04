// The VP rule table (rules.h). Append new ids at the end of their range; never
// renumber.
#include "pevp/isa/rules.h"

#include <algorithm>

namespace pevp::isa {
namespace {

std::vector<std::pair<std::uint16_t, std::string_view>> build() {
  std::vector<std::pair<std::uint16_t, std::string_view>> t;
  auto range = [&t](std::uint16_t first, std::initializer_list<std::string_view> ids) {
    std::uint16_t n = first;
    for (auto id : ids) t.emplace_back(n++, id);
  };
  range(0x001, {"opcode.unknown", "header.inst_word_len", "reserved.zero", "events.wait_mode",
                "events.update_mode", "events.sem_index", "events.unused_zero", "mm.in_dtype", "mx.in_dtype",
                "fp32_mode.range", "fp32_mode.dtype", "mm.fp32_no_mix", "mm.fp32_mode_match", "mm.out_dtype",
                "tile.row_grp", "tile.col_grp", "tile_size.row", "tile_size.col", "tile_sel.range",
                "tile_sel.fits", "tile.num_active_rows", "tile.num_active_cols", "mm.c256_dst_upper_dim",
                "mempattern.src_sbuf", "mempattern.dst_psum", "mempattern.scale_sbuf", "mempattern.partitions",
                "mempattern.num_elem", "mempattern.marker", "mempattern.mx_v5_only", "mempattern.dst_member",
                "mm.psum_footprint", "psum.accumulate_flags", "psum.zero_region", "flags.seed_mode",
                "seed.load_contract", "seed.save_contract", "pe_seed.v4_only", "pe_seed.mode",
                "pe_seed.num_active_rows", "pe_seed.num_active_cols", "pe_seed.identity_dtype",
                "pe_seed.identity", "pe_seed.save_dst", "pe_seed.load_src", "pe_seed.unused_pattern",
                "mx.separate_ops_v4", "mx.row_tiling_only", "perf_mode.range", "perf_mode.mx_only",
                "perf_opt.range", "perf_opt.double_row", "xpose.range", "sparse.fmaps", "ldtags.in_dtype",
                "ldtags.force_tag_bits", "convlut.lut_dtype"});
  range(0x100, {"exec.opcode", "exec.invalid", "exec.in_dtype", "exec.out_dtype", "exec.tile",
                "exec.not_modelled", "exec.pattern_region", "exec.pattern_align", "exec.pattern_partitions",
                "exec.pattern_partition_bounds", "exec.pattern_count", "exec.buffer_bounds", "exec.k_mismatch",
                "exec.m_mismatch", "exec.no_stationary", "exec.fp32_mix", "exec.psum_bank_cross",
                "exec.psum_flags", "exec.psum_group_open", "exec.psum_group_unopened", "exec.psum_zero_region"});
  range(0x200, {"seq.not_modelled", "seq.semaphore_underflow", "seq.semaphore_overflow", "seq.peregwrite_src"});
  return t;
}

const std::vector<std::pair<std::uint16_t, std::string_view>>& table() {
  static const auto t = build();
  return t;
}

}  // namespace

const std::vector<std::pair<std::uint16_t, std::string_view>>& rule_table() { return table(); }

std::uint16_t rule_number(std::string_view id) {
  for (const auto& [n, name] : table())
    if (name == id) return n;
  return kUnknownRule;
}

std::string_view rule_id(std::uint16_t number) {
  const auto& t = table();
  auto it = std::lower_bound(t.begin(), t.end(), number, [](const auto& e, std::uint16_t n) { return e.first < n; });
  return it != t.end() && it->first == number ? it->second : std::string_view{};
}

}  // namespace pevp::isa
