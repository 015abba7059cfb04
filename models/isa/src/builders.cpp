#include "pevp/isa/builders.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "pevp/isa/layout.h"

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

constexpr std::size_t kEventsOffset = 4;  // PEVP_ASSERT_AT(..., events, 4) for every struct in layout.h

// The tile fields of a rectangle of PEs on `geo` (D-GRP, D-GEOMETRY).
void set_placement(Encoder& e, Generation g, const ArrayGeometry& geo, const Placement& p) {
  if (!is_maverick(g)) {
    auto mask = [](const char* what, unsigned origin, unsigned size, unsigned group) {
      const std::uint8_t m = origin % group == 0 && size % group == 0 ? group_mask(origin / group, size / group) : 0;
      if (m == 0)
        throw EncodeError(std::string(what) + ": a tile of " + std::to_string(size) + " at " + std::to_string(origin) +
                          " is not an aligned " + std::to_string(group) + "/" + std::to_string(2 * group) + "/" +
                          std::to_string(4 * group) + " group");
      return m;
    };
    e.set("row_grp", mask("row_grp", p.row0, p.rows, geo.group_rows()))
        .set("col_grp", mask("col_grp", p.col0, p.cols, geo.group_cols()));
    return;
  }
  // R128 / C256 are the whole array, R64 / C128 half of it.
  const unsigned rows = geo.pe_rows, cols = geo.pe_cols;
  if ((p.rows != rows / 2 && p.rows != rows) || p.row0 % p.rows != 0 || p.row0 + p.rows > rows)
    throw EncodeError("tile_size.row: MAVERICK tiles are " + std::to_string(rows / 2) + " or " + std::to_string(rows) +
                      " rows, aligned");
  if ((p.cols != cols / 2 && p.cols != cols) || p.col0 % p.cols != 0 || p.col0 + p.cols > cols)
    throw EncodeError("tile_size.col: MAVERICK tiles are " + std::to_string(cols / 2) + " or " + std::to_string(cols) +
                      " columns, aligned");
  e.set("tile_size.row", p.rows == rows ? tile_size::R128 : tile_size::R64)
      .set("tile_size.col", p.cols == cols ? tile_size::C256 : tile_size::C128)
      .set("tile_sel.row_sel", p.row0 / p.rows)
      .set("tile_sel.col_sel", p.col0 / p.cols);
}

// num_active_rows / num_active_cols are one byte: 256 is encoded as 0.
void set_active(Encoder& e, unsigned rows, unsigned cols) {
  constexpr unsigned kEncodedAsZero = 256;
  e.set("num_active_rows", rows == kEncodedAsZero ? 0 : rows);
  e.set("num_active_cols", cols == kEncodedAsZero ? 0 : cols);
}

}  // namespace

bool default_accumulate(std::uint8_t f) {
  return (f & psum_flags::BEGIN_MATMUL_GROUP) == 0;
}

RawInstruction encode_ldweights(Generation g, const LdweightsArgs& a) {
  return encode_ldweights(g, preset_geometry(g), a);
}
RawInstruction encode_matmul(Generation g, const MatmulArgs& a) { return encode_matmul(g, preset_geometry(g), a); }

RawInstruction encode_ldweights(Generation g, const ArrayGeometry& geo, const LdweightsArgs& a) {
  Encoder e(g, Opcode::LDWEIGHTS);
  set_events(e, a.events);
  set_pattern(e, "src_mem_pattern", a.src, 3);
  e.set("in_dtype", static_cast<int>(a.in_dtype)).set("fp32_mode", static_cast<int>(a.fp32_mode));
  set_active(e, a.num_active_rows, a.num_active_cols);
  set_placement(e, g, geo, a.tile);
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

RawInstruction encode_matmul(Generation g, const ArrayGeometry& geo, const MatmulArgs& a) {
  Encoder e(g, Opcode::MATMUL);
  set_events(e, a.events);
  set_pattern(e, "src_mem_pattern", a.src, 3);
  set_pattern(e, "dst_mem_pattern", a.dst, 3);
  e.set("in_dtype", static_cast<int>(a.in_dtype))
      .set("fp32_mode", static_cast<int>(a.fp32_mode))
      // NeuronCore-v3 encodes its one output dtype, FP32, as 0 (spec 000 section 8: has_valid_mm_out_dtype).
      .set("out_dtype", g == Generation::CAYMAN && a.out_dtype == Dtype::FP32 ? 0 : static_cast<int>(a.out_dtype));
  set_active(e, a.num_active_rows, a.num_active_cols);
  set_placement(e, g, geo, a.tile);
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

RawInstruction with_events(const RawInstruction& raw, const EventsArgs& a) {
  if (a.wait_mode == WaitMode::NONE && (a.wait_sem != 0 || a.wait_value != 0))
    throw EncodeError("events: a NONE wait takes semaphore 0 and value 0 (D-EVENTS)");
  if (a.update_mode == UpdateMode::NONE && (a.update_sem != 0 || a.update_value != 0))
    throw EncodeError("events: a NONE update takes semaphore 0 and value 0 (D-EVENTS)");
  if (a.wait_sem >= kNumSemaphores || a.update_sem >= kNumSemaphores)
    throw EncodeError("events: semaphore " + std::to_string(std::max(a.wait_sem, a.update_sem)) + " of " +
                      std::to_string(kNumSemaphores));
  Events e{};
  e.wait_mode = static_cast<std::uint8_t>(a.wait_mode);
  e.wait_sem = a.wait_sem;
  e.update_mode = static_cast<std::uint8_t>(a.update_mode);
  e.update_sem = a.update_sem;
  e.wait_value = a.wait_value;
  e.update_value = a.update_value;
  RawInstruction out = raw;
  std::memcpy(out.data() + kEventsOffset, &e, sizeof e);  // little-endian host, as every layout struct (layout.h)
  return out;
}

}  // namespace pevp::isa
