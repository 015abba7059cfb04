#include "pevp/isa/builders.h"

#include <string>

namespace pevp::isa {
namespace {

void set_pattern(Encoder& e, const std::string& name, const Pattern& p, unsigned dims) {
  if (p.step_elem.size() != p.num_elem.size() || p.num_elem.size() > dims)
    throw EncodeError(name + ": a " + std::to_string(dims) + "-D pattern takes at most " + std::to_string(dims) +
                      " (step, num) pairs");
  e.set(name + ".start_addr", p.start_addr);
  for (unsigned d = 0; d < dims; ++d) {
    const bool given = d < p.num_elem.size();
    e.set(name + ".step_elem[" + std::to_string(d) + "]", given ? p.step_elem[d] : 0);
    // Unused outer dimensions iterate once.
    e.set(name + ".num_elem[" + std::to_string(d) + "]", given ? p.num_elem[d] : 1);
  }
}

void set_events(Encoder& e, const EventsArgs& a) {
  e.set("events.wait_mode", static_cast<int>(a.wait_mode))
      .set("events.wait_sem", a.wait_sem)
      .set("events.wait_value", a.wait_value)
      .set("events.update_mode", static_cast<int>(a.update_mode))
      .set("events.update_sem", a.update_sem)
      .set("events.update_value", a.update_value);
}

void set_placement(Encoder& e, Generation g, const Placement& p) {
  if (!is_maverick(g)) {
    auto mask = [](const char* what, unsigned origin, unsigned size) {
      const bool ok = (size == 32 || size == 64 || size == 128) && origin % size == 0 && origin + size <= 128;
      if (!ok)
        throw EncodeError(std::string(what) + ": a tile of " + std::to_string(size) + " at " + std::to_string(origin) +
                          " is not an aligned 32/64/128 group");
      return group_mask(origin / 32, size / 32);
    };
    e.set("row_grp", mask("row_grp", p.row0, p.rows)).set("col_grp", mask("col_grp", p.col0, p.cols));
    return;
  }
  if ((p.rows != 64 && p.rows != 128) || p.row0 % p.rows != 0 || p.row0 + p.rows > 128)
    throw EncodeError("tile_size.row: MAVERICK tiles are 64 or 128 rows, aligned");
  if ((p.cols != 128 && p.cols != 256) || p.col0 % p.cols != 0 || p.col0 + p.cols > 256)
    throw EncodeError("tile_size.col: MAVERICK tiles are 128 or 256 columns, aligned");
  e.set("tile_size.row", p.rows == 64 ? tile_size::R64 : tile_size::R128)
      .set("tile_size.col", p.cols == 128 ? tile_size::C128 : tile_size::C256)
      .set("tile_sel.row_sel", p.row0 / p.rows)
      .set("tile_sel.col_sel", p.col0 / p.cols);
}

void set_active(Encoder& e, Generation g, unsigned rows, unsigned cols) {
  e.set("num_active_rows", rows);
  e.set("num_active_cols", is_maverick(g) && cols == 256 ? 0 : cols);
}

}  // namespace

bool default_accumulate(std::uint8_t f) {
  return (f & psum_flags::BEGIN_MATMUL_GROUP) == 0;
}

RawInstruction encode_ldweights(Generation g, const LdweightsArgs& a) {
  Encoder e(g, Opcode::LDWEIGHTS);
  set_events(e, a.events);
  set_pattern(e, "src_mem_pattern", a.src, 3);
  e.set("in_dtype", static_cast<int>(a.in_dtype)).set("fp32_mode", static_cast<int>(a.fp32_mode));
  set_active(e, g, a.num_active_rows, a.num_active_cols);
  set_placement(e, g, a.tile);
  if (g == Generation::CAYMAN) {
    if (a.seed_mode != PeSeedMode::NONE) throw EncodeError("flags.seed_mode: CAYMAN has no seed_mode");
    if (a.load_order != PeLwOrder::LAST_COL_FIRST) throw EncodeError("flags.load_order: CAYMAN has no load_order field");
    e.set("transpose_mode", a.xpose).set("perf_opt", a.perf);
    return e.bytes();
  }
  e.set("flags.xpose_mode", a.xpose)
      .set("flags.seed_mode", static_cast<int>(a.seed_mode))
      .set("flags.load_order", static_cast<int>(a.load_order));
  e.set(is_maverick(g) ? "perf_mode" : "perf_opt", a.perf);
  return e.bytes();
}

RawInstruction encode_matmul(Generation g, const MatmulArgs& a) {
  Encoder e(g, Opcode::MATMUL);
  set_events(e, a.events);
  set_pattern(e, "src_mem_pattern", a.src, 3);
  set_pattern(e, "dst_mem_pattern", a.dst, 3);
  e.set("in_dtype", static_cast<int>(a.in_dtype))
      .set("fp32_mode", static_cast<int>(a.fp32_mode))
      .set("out_dtype", static_cast<int>(a.out_dtype));
  set_active(e, g, a.num_active_rows, a.num_active_cols);
  set_placement(e, g, a.tile);
  const bool accumulate = a.accumulate.value_or(default_accumulate(a.psum_flags));
  if (g == Generation::CAYMAN) {
    if (a.seed_mode != PeSeedMode::NONE) throw EncodeError("flags.seed_mode: CAYMAN has no seed_mode");
    if (accumulate != default_accumulate(a.psum_flags))
      throw EncodeError("flags.accumulate_flag: CAYMAN derives accumulate from psum_accumulate_flags (" +
                        psum_flags_name(a.psum_flags) + "); an explicit accumulate that disagrees cannot be encoded");
    e.set("transpose_mode", a.xpose).set("perf_opt", a.perf);
  } else {
    e.set("flags.xpose_mode", a.xpose)
        .set("flags.seed_mode", static_cast<int>(a.seed_mode))
        .set("flags.accumulate_flag", accumulate);
    e.set(is_maverick(g) ? "perf_mode" : "perf_opt", a.perf);
  }
  if (!is_maverick(g)) {
    e.set("psum_accumulate_flags", a.psum_flags).set("psum_zero_region", static_cast<int>(a.zero_region));
  } else if (a.zero_region != ZeroRegion::BANKS_1) {
    throw EncodeError("psum_zero_region: MAVERICK's S3D3_MM has no zero region");
  }
  return e.bytes();
}

RawInstruction encode_pe_seed(Generation g, const PeSeedArgs& a) {
  Encoder e(g, Opcode::PE_MANAGE_SEED);
  set_events(e, a.events);
  e.set("mode", static_cast<int>(a.mode)).set("num_active_rows", 16).set("num_active_cols", 128);
  e.set("identity_dtype", static_cast<int>(a.identity_dtype));
  set_pattern(e, "identity_mem_pattern", a.identity, 1);
  if (a.mode == PeSeedMode::LOAD_SEED) set_pattern(e, "src_seed_mem_pattern", a.src_seed, 2);
  if (a.mode == PeSeedMode::SAVE_SEED) set_pattern(e, "dst_seed_mem_pattern", a.dst_seed, 2);
  return e.bytes();
}

}  // namespace pevp::isa
