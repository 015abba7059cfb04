// Typed, generation-neutral builders for the instructions a driver writes most:
// describe the operation once, encode it for any generation. Fields that a
// generation does not have are mapped (tile placement -> row_grp/col_grp or
// tile_size/tile_sel; accumulate -> psum_accumulate_flags and/or
// flags.accumulate_flag) or rejected with an EncodeError naming the field.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pevp/isa/encode.h"
#include "pevp/isa/enums.h"

namespace pevp::isa {

// A plain free-dimension access pattern (TENSOR1D..4D or a MEM_PATTERN3D's t).
struct Pattern {
  std::uint32_t start_addr = 0;
  std::vector<std::int16_t> step_elem;
  std::vector<std::uint16_t> num_elem;

  // n contiguous elements from `addr` (a 1-D row per partition).
  static Pattern row(std::uint32_t addr, std::uint16_t n) { return {addr, {1}, {n}}; }
};

// The PE-array rectangle an instruction uses. CAYMAN/MARIANA: 32-aligned groups
// of 32, 64 or 128; MAVERICK: 64 or 128 rows x 128 or 256 columns.
struct Placement {
  unsigned row0 = 0, rows = 128;
  unsigned col0 = 0, cols = 128;
};

struct EventsArgs {
  WaitMode wait_mode = WaitMode::NONE;
  std::uint8_t wait_sem = 0;
  std::uint16_t wait_value = 0;
  UpdateMode update_mode = UpdateMode::NONE;
  std::uint8_t update_sem = 0;
  std::uint16_t update_value = 0;
};

struct LdweightsArgs {
  Pattern src;  // K partitions (num_active_rows) x M elements
  Dtype in_dtype = Dtype::BFLOAT16;
  Fp32Mode fp32_mode = Fp32Mode::None;
  unsigned num_active_rows = 128;
  unsigned num_active_cols = 128;  // 256 = the full MAVERICK c256 array
  Placement tile;
  bool xpose = false;
  PeLwOrder load_order = PeLwOrder::LAST_COL_FIRST;
  PeSeedMode seed_mode = PeSeedMode::NONE;
  std::uint8_t perf = 0;  // perf_opt (v3/v4) or perf_mode (v5)
  EventsArgs events;
};

struct MatmulArgs {
  Pattern src;  // K partitions x N elements (moving)
  Pattern dst;  // M PSUM partitions x N elements
  Dtype in_dtype = Dtype::BFLOAT16;
  Fp32Mode fp32_mode = Fp32Mode::None;
  Dtype out_dtype = Dtype::FP32;
  unsigned num_active_rows = 128;
  unsigned num_active_cols = 128;
  Placement tile;
  bool xpose = false;
  std::uint8_t psum_flags = psum_flags::SINGLE;  // v3/v4 group flags
  // v4/v5 flags.accumulate_flag; by default derived from psum_flags (a group's
  // first write overwrites, later ones accumulate).
  std::optional<bool> accumulate;
  ZeroRegion zero_region = ZeroRegion::BANKS_1;
  PeSeedMode seed_mode = PeSeedMode::NONE;
  std::uint8_t perf = 0;
  EventsArgs events;
};

// PeManageSeed (v4). The identity and the used pattern must be given; the
// other is left zero.
struct PeSeedArgs {
  PeSeedMode mode = PeSeedMode::LOAD_SEED;
  Pattern src_seed;   // LoadSeed: 16 x 128 in SBUF partitions 0-15
  Pattern identity;   // the 16-element identity diagonal in SBUF
  Dtype identity_dtype = Dtype::BFLOAT16;
  Pattern dst_seed;   // SaveSeed: PSUM {2, 8} / {1, 512} at 0x2000000
  EventsArgs events;
};

bool default_accumulate(std::uint8_t psum_group_flags);

// On the generation's preset geometry, or on `geo` (Placement is in PEs of it).
RawInstruction encode_ldweights(Generation g, const LdweightsArgs& a);
RawInstruction encode_matmul(Generation g, const MatmulArgs& a);
RawInstruction encode_ldweights(Generation g, const ArrayGeometry& geo, const LdweightsArgs& a);
RawInstruction encode_matmul(Generation g, const ArrayGeometry& geo, const MatmulArgs& a);
RawInstruction encode_pe_seed(Generation g, const PeSeedArgs& a);

// `raw` with its EVENTS replaced by `events` (every instruction struct has EVENTS at byte 4, layout.h): how a
// runtime adds its synchronisation to a program planned without it. Throws EncodeError when a NONE mode is given
// an index or value (D-EVENTS).
RawInstruction with_events(const RawInstruction& raw, const EventsArgs& events);

}  // namespace pevp::isa
