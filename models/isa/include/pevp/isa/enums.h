// Enums and packed bitfields of the PE operand structs (spec 000 sections 3.1,
// 4.1-4.3, 5, 7, 8, 11). Ordinals the spec states are exact; the few it does not
// state are marked "model" and listed in docs/model-decisions.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pevp/isa/generation.h"
#include "pevp/numerics/formats.h"

namespace pevp::isa {

// NEURON_ISA_TPB_DTYPE.
enum class Dtype : std::uint8_t {
  INVALID = 0x0,    // model: 0 is "unset"; as out_dtype it means FP32 (spec 8)
  INT8 = 0x2,       // model
  UINT8 = 0x3,      // model
  INT16 = 0x4,      // model
  UINT16 = 0x5,     // model
  BFLOAT16 = 0x6,
  FP16 = 0x7,
  INT32 = 0x8,      // model
  UINT32 = 0x9,     // model (SaveSeed's PSUM seeds are UINT32)
  FP32 = 0xA,
  FP32R = 0xB,
  FP8_EXP3 = 0xD,   // e3m4
  FP8_EXP4 = 0xE,   // e4m3 (CAYMAN, max 240) / e4m3fn (v4+, max 448): model
  FP8_EXP5 = 0xF,   // e5m2
  FP4_EXP2 = 0x10,  // e2m1
  FP8_EXP2 = 0x11,  // e2m5
  INT4 = 0x12,      // model
  SFP8_E8 = 0x13,   // E8M0 MX block scale
};

// The input dtypes a dense LDWEIGHTS / MATMUL (and their sparse and seed forms) takes, and those of an MX source
// (rules mm.in_dtype, mx.in_dtype; tf32 is FP32 with fp32_mode Low).
inline constexpr Dtype kMatmulInputDtypes[] = {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5,
                                               Dtype::BFLOAT16, Dtype::FP16,     Dtype::FP32};
inline constexpr Dtype kMxInputDtypes[] = {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4,
                                           Dtype::FP8_EXP5, Dtype::FP4_EXP2, Dtype::INT4};

std::string_view name(Dtype d);  // "BFLOAT16"; "" for an unknown ordinal
bool is_known_dtype(std::uint8_t ordinal);
std::optional<Dtype> parse_dtype(std::string_view text);
// Storage size of one element in bits (4 for FP4_EXP2 and INT4, 0 if unknown).
unsigned dtype_bits(Dtype d);
bool is_fp8(Dtype d);
// The number format a dtype's elements use on generation `g`, or nothing for
// FP32 / FP32R (fp32 itself) and the integer container types. FP8_EXP4 is e4m3
// (max 240) on CAYMAN and e4m3fn (max 448) from v4: D-DTYPE-E4M3.
std::optional<num::Format> element_format(Generation g, Dtype d);

// NEURON_ISA_TPB_PE_FP32MODE.
enum class Fp32Mode : std::uint8_t { None = 0, Low = 1, High = 2, Low_High = 3 };
std::string_view name(Fp32Mode m);

// NEURON_ISA_TPB_ACCUMULATE_MODE (MATMUL_FLAGS.accumulate_flag).
enum class AccumulateMode : std::uint8_t { OVERWRITE = 0, ACCUMULATE = 1 };

// NEURON_ISA_TPB_PE_LW_ORDER (LD_WEIGHT_FLAGS.load_order).
enum class PeLwOrder : std::uint8_t { LAST_COL_FIRST = 0, FIRST_COL_FIRST = 1 };

// NEURON_ISA_TPB_PE_SEED_MODE: the enum, not the stale prose comment (spec 5).
enum class PeSeedMode : std::uint8_t { NONE = 0, LOAD_SEED = 1, SAVE_SEED = 2 };
std::string_view name(PeSeedMode m);

// NEURON_ISA_TPB_MX_PERF_MODE (spec 7).
enum class MxPerfMode : std::uint8_t {
  NONE = 0x0,
  QUAD_ROW = 0x1,
  QUAD_ROW_INTERLEAVE = 0x2,
  QUAD_ROW_TILED = 0x3,
  OCT_ROW = 0x4,
  OCT_ROW_INTERLEAVE = 0x5,
  OCT_ROW_TILED = 0x6,
};
std::string_view name(MxPerfMode m);

// NEURON_ISA_TPB_MATMUL_FLAGS, LSB->MSB: scalar_mode:2, seed_mode:2,
// accumulate_flag:1, xpose_mode:1, reserved_bitfield:2.
struct MatmulFlags {
  std::uint8_t scalar_mode = 0;
  std::uint8_t seed_mode = 0;
  std::uint8_t accumulate_flag = 0;
  std::uint8_t xpose_mode = 0;
  std::uint8_t reserved_bitfield = 0;

  static MatmulFlags unpack(std::uint8_t byte) {
    return {static_cast<std::uint8_t>(byte & 0x3), static_cast<std::uint8_t>((byte >> 2) & 0x3),
            static_cast<std::uint8_t>((byte >> 4) & 0x1), static_cast<std::uint8_t>((byte >> 5) & 0x1),
            static_cast<std::uint8_t>((byte >> 6) & 0x3)};
  }
  std::uint8_t pack() const {
    return static_cast<std::uint8_t>((scalar_mode & 0x3) | (seed_mode & 0x3) << 2 |
                                     (accumulate_flag & 0x1) << 4 | (xpose_mode & 0x1) << 5 |
                                     (reserved_bitfield & 0x3) << 6);
  }
};

// NEURON_ISA_TPB_LD_WEIGHT_FLAGS, LSB->MSB: xpose_mode:1, scalar_mode:2,
// seed_mode:2, load_order:1, reserved_bitfield:2.
struct LdWeightFlags {
  std::uint8_t xpose_mode = 0;
  std::uint8_t scalar_mode = 0;
  std::uint8_t seed_mode = 0;
  std::uint8_t load_order = 0;
  std::uint8_t reserved_bitfield = 0;

  static LdWeightFlags unpack(std::uint8_t byte) {
    return {static_cast<std::uint8_t>(byte & 0x1), static_cast<std::uint8_t>((byte >> 1) & 0x3),
            static_cast<std::uint8_t>((byte >> 3) & 0x3), static_cast<std::uint8_t>((byte >> 5) & 0x1),
            static_cast<std::uint8_t>((byte >> 6) & 0x3)};
  }
  std::uint8_t pack() const {
    return static_cast<std::uint8_t>((xpose_mode & 0x1) | (scalar_mode & 0x3) << 1 |
                                     (seed_mode & 0x3) << 3 | (load_order & 0x1) << 5 |
                                     (reserved_bitfield & 0x3) << 6);
  }
};

// NEURON_ISA_TPB_MATMUL_PSUM_ACCUMULATE_FLAGS: the bits and the derived group
// modes (spec 4.1).
namespace psum_flags {
inline constexpr std::uint8_t BEGIN_MATMUL_GROUP = 1u << 0;
inline constexpr std::uint8_t END_MATMUL_GROUP = 1u << 1;
inline constexpr std::uint8_t BEGIN_ACCUM_MATMUL_GROUP = 1u << 2;
inline constexpr std::uint8_t MULTI_MID = 0;
inline constexpr std::uint8_t MULTI_START = 1;
inline constexpr std::uint8_t MULTI_END = 2;
inline constexpr std::uint8_t SINGLE = 3;
inline constexpr std::uint8_t kDefinedBits = 0x7;
}  // namespace psum_flags
// "SINGLE", "MULTI_START", "BEGIN_ACCUM", "BEGIN_ACCUM|END" for printing; "" for
// a combination that is not a valid group mode.
std::string psum_flags_name(std::uint8_t flags);

// NEURON_ISA_TPB_MATMUL_ZERO_REGION: how many PSUM banks the first write of a
// group clears. The enumerator values were lost from the spec; the model uses
// 0..3 = 1, 2, 4, 8 banks (docs/model-decisions.md D-ZERO).
enum class ZeroRegion : std::uint8_t { BANKS_1 = 0, BANKS_2 = 1, BANKS_4 = 2, BANKS_8 = 3 };
inline unsigned zero_region_banks(ZeroRegion z) { return 1u << static_cast<unsigned>(z); }

// NEURON_ISA_TPB_TILE_SIZE (MAVERICK): {row:4 (low nibble), col:4 (high nibble)}.
// TILE_COL_SIZE C128 = 7, C256 = 8 (spec 11); the row enumerators R64 = 6 and
// R128 = 7 follow the same log2 rule (model). Nibble order: model.
namespace tile_size {
inline constexpr std::uint8_t R64 = 6;
inline constexpr std::uint8_t R128 = 7;
inline constexpr std::uint8_t C128 = 7;
inline constexpr std::uint8_t C256 = 8;
}  // namespace tile_size
struct TileSize {
  std::uint8_t row = tile_size::R128;
  std::uint8_t col = tile_size::C128;
  static TileSize unpack(std::uint8_t b) {
    return {static_cast<std::uint8_t>(b & 0xF), static_cast<std::uint8_t>(b >> 4)};
  }
  std::uint8_t pack() const { return static_cast<std::uint8_t>((row & 0xF) | (col & 0xF) << 4); }
  unsigned rows() const { return 1u << row; }
  unsigned cols() const { return 1u << col; }
};

// NEURON_ISA_TPB_TILE_SEL (MAVERICK): {row_sel:4 (low nibble), col_sel:4}.
struct TileSel {
  std::uint8_t row_sel = 0;
  std::uint8_t col_sel = 0;
  static TileSel unpack(std::uint8_t b) {
    return {static_cast<std::uint8_t>(b & 0xF), static_cast<std::uint8_t>(b >> 4)};
  }
  std::uint8_t pack() const { return static_cast<std::uint8_t>((row_sel & 0xF) | (col_sel & 0xF) << 4); }
};

// row_grp / col_grp (CAYMAN, MARIANA): the spec gives only their offsets. The
// model encodes each as a mask of the groups the tile occupies (bit g = row or
// column group g of ArrayGeometry's grid: 32 wide on the 128 x 128 preset),
// contiguous and aligned to its size: 0x1 0x2 0x4 0x8 (one group), 0x3 0xC
// (two), 0xF (all four). docs/model-decisions.md D-GRP, D-GEOMETRY.
struct GroupSpan {
  unsigned first = 0;  // first group
  unsigned count = 0;  // 1, 2 or 4 groups
};
std::optional<GroupSpan> decode_group_mask(std::uint8_t mask);
// The mask of `group_count` (1, 2 or 4) groups from `first_group` (a multiple of
// the count), or 0 when the span is not a valid tile.
std::uint8_t group_mask(unsigned first_group, unsigned group_count);

// CAYMAN/MARIANA perf_opt (model): 0 = none, 1 = fp8 double_row.
namespace perf_opt {
inline constexpr std::uint8_t NONE = 0;
inline constexpr std::uint8_t FP8_DOUBLE_ROW = 1;
}  // namespace perf_opt

// EVENTS semaphore modes (model; docs/model-decisions.md D-EVENTS).
enum class WaitMode : std::uint8_t { NONE = 0, WAIT_GE = 1, WAIT_EQ = 2 };
enum class UpdateMode : std::uint8_t { NONE = 0, SET = 1, INCREMENT = 2, DECREMENT = 3 };
inline constexpr unsigned kNumSemaphores = 32;

}  // namespace pevp::isa
