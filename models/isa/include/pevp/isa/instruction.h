// The typed form of a decoded instruction: one struct per opcode, its parts
// typed -- EVENTS, access patterns with their union member, the tile with its
// active extents resolved (0 = 256 where it applies), operand dtypes, the PSUM
// group fields, the flags -- and the same on every generation whatever byte a
// field sits at (CAYMAN's transpose_mode and MARIANA's flags.xpose_mode are one
// `transpose`). decode() builds it once (Decoded::instr); the validity rules,
// the firmware stub and the SEQ work on this form, never on field paths. Values
// are kept as encoded where a rule may have to judge an invalid one (`*_raw`,
// TileFields), and fields only some generations have are optional.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>

#include "pevp/isa/access_pattern.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/tile_rect.h"

namespace pevp::isa {

struct Decoded;

struct EventsPart {
  WaitMode wait_mode = WaitMode::NONE;
  unsigned wait_sem = 0;
  std::uint32_t wait_value = 0;
  UpdateMode update_mode = UpdateMode::NONE;
  unsigned update_sem = 0;
  std::int64_t update_value = 0;
};

// in_dtype and fp32_mode (fp32_mode None where the struct has none).
struct OperandPart {
  std::int64_t dtype_raw = 0, fp32_mode_raw = 0;
  bool has_fp32_mode = false;
  Dtype dtype() const { return static_cast<Dtype>(dtype_raw); }
  Fp32Mode fp32_mode() const { return static_cast<Fp32Mode>(fp32_mode_raw); }
};

// The tile fields as encoded. Which a struct has depends on its generation:
// row_grp / col_grp group masks (CAYMAN, MARIANA) or tile_size / tile_sel
// (MAVERICK); num_active_rows / num_active_cols where the struct has them.
struct TileFields {
  std::optional<std::int64_t> row_grp, col_grp;
  std::optional<std::int64_t> size_row, size_col, row_sel, col_sel;
  std::optional<std::int64_t> num_active_rows, num_active_cols;
};

// The tile (none when its fields give none) and the PE rows / columns used of it.
struct TilePart {
  std::optional<TileRect> rect;
  unsigned active_rows = 0, active_cols = 0;
  TileFields fields;
};

// A matmul's PSUM group fields: the group flags and zero region of CAYMAN and
// MARIANA, the accumulate flag of MARIANA and MAVERICK.
struct PsumPart {
  std::optional<std::uint8_t> group_flags;  // psum_accumulate_flags
  std::optional<bool> accumulate;           // flags.accumulate_flag
  std::int64_t zero_region = 0;             // psum_zero_region
};

// What every PE instruction has.
struct Common {
  std::uint8_t opcode_byte = 0;
  unsigned inst_word_len = 0;  // header.inst_word_len
  EventsPart events;
};

struct Ldweights : Common {
  AccessPattern src;
  OperandPart in;
  TilePart tile;
  bool transpose = false;         // transpose_mode (v3) / flags.xpose_mode
  std::int64_t transpose_raw = 0; // the transpose_mode byte (v3) or flags.xpose_mode bit as encoded
  std::int64_t bg_transpose = 0;  // bg_xpose_mode (v4)
  std::int64_t seed_mode = 0, scalar_mode = 0, load_order = 0;
  std::int64_t perf_opt = 0, perf_mode = 0;
  std::int64_t tag_weight_mode = 0;  // 1 = TAG_WEIGHT: {u16 weight, u16 tag} elements (spec 9; byte: model)
};

struct Matmul : Common {
  AccessPattern src, dst;
  OperandPart in;
  std::int64_t out_dtype = 0;  // 0 = FP32
  TilePart tile;
  bool transpose = false;
  std::int64_t transpose_raw = 0;
  std::int64_t bg_transpose = 0;
  std::int64_t seed_mode = 0, scalar_mode = 0;
  std::int64_t perf_opt = 0, perf_mode = 0;
  PsumPart psum;
};

struct MatmulSparse : Common {
  AccessPattern src, dst;  // src: TENSOR4D, the 4th dimension the fmaps
  OperandPart in;
  std::int64_t out_dtype = 0;
  TilePart tile;
  std::int64_t seed_mode = 0;
  PsumPart psum;
};

struct LdTags : Common {
  AccessPattern src;
  std::int64_t in_dtype = 0;
  std::int64_t force_tag_bits = 0;
  TilePart tile;
};

struct PeRegWrite : Common {
  std::uint32_t reg_addr = 0, imm_value = 0;
  AccessPattern src;
  TilePart tile;
};

// PeManageSeed's shapes, hard-coded by the spec (000 section 5): 16 seeds per PSUM partition (8 banks x 2), moved
// through a 16 x 16 identity, over 128 partitions (num_active_rows 16, num_active_cols 128).
inline constexpr unsigned kSeedRows = 16, kSeedCols = 128;

struct PeManageSeed : Common {
  std::int64_t mode = 0;  // PE_SEED_MODE: 1 LOAD_SEED, 2 SAVE_SEED
  AccessPattern identity, src_seed, dst_seed;
  std::int64_t identity_dtype = 0;
  unsigned active_rows = 0, active_cols = 0;  // as encoded (the spec hard-codes 16 and 128)
};

struct LdweightsMX : Common {
  AccessPattern src;  // MXMEM_PATTERN1D: data, scales, optional index
  std::int64_t in_dtype = 0, perf_mode = 0;
  TilePart tile;
};

struct MatmulMX : Common {
  AccessPattern src, dst;
  std::int64_t in_dtype = 0, perf_mode = 0, out_dtype = 0;
  TilePart tile;
  PsumPart psum;
};

struct ConvLutLoad : Common {
  AccessPattern src;
  std::int64_t lut_dtype = 0;
};

// std::monostate: the byte is no opcode of the generation.
using Instruction = std::variant<std::monostate, Ldweights, Matmul, MatmulSparse, LdTags, PeRegWrite, PeManageSeed,
                                 LdweightsMX, MatmulMX, ConvLutLoad>;

// The typed form of `d`'s fields (what decode() stores in Decoded::instr).
Instruction typed(const Decoded& d);
// The same into `out` (decode() fills Decoded::instr in place).
void typed_into(const Decoded& d, Instruction& out);

// The tile part of a typed instruction (null for one without a tile).
const TilePart* tile_part(const Instruction& i);

// The EVENTS of any typed instruction (none for an unknown opcode).
EventsPart events_of(const Instruction& i);

}  // namespace pevp::isa
