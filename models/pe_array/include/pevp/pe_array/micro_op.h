// A PE-array micro-op: what a firmware handler emits and the arr_seq sequencer
// issues to the array. It carries its own operands -- the tile, the access
// patterns, the dtypes, the PSUM group semantics, the flags -- decided once by
// the firmware from the instruction (firmware_stub/), so nothing below the
// firmware reads an instruction field: the executor, the cost model and the
// sequencer read the micro-op. The kinds are the three per-tile counter banks of
// 003 section 4.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "pevp/isa/access_pattern.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"
#include "pevp/isa/tiles.h"

namespace pevp::pe {

enum class MicroOpKind : std::uint8_t { WeightLoad, Matmul, PeRegWrite };

inline const char* name(MicroOpKind k) {
  switch (k) {
    case MicroOpKind::WeightLoad: return "weight_load";
    case MicroOpKind::Matmul: return "matmul";
    case MicroOpKind::PeRegWrite: return "pe_regwrite";
  }
  return "?";
}

// What a Matmul does to PSUM, as its generation's flags say (spec 4.1): CAYMAN
// and MARIANA track a group per bank (BEGIN / BEGIN_ACCUM / END), MARIANA and
// MAVERICK choose add or overwrite by accumulate_flag, CAYMAN by BEGIN.
struct PsumGroup {
  bool tracked = false;  // the group flags exist (CAYMAN, MARIANA): the bank's group state is checked
  std::uint8_t flags = 0;  // psum_accumulate_flags as encoded (messages name them)
  bool begin = false, begin_accumulate = false, end = false;
  bool accumulate = false;      // read-modify-write into PSUM; else overwrite
  unsigned zero_banks = 0;      // a BEGIN first zeroes this many banks (psum_zero_region), 0 = none
  std::int64_t zero_region = 0; // psum_zero_region as encoded
};

// Features the instruction asks for that the array does not execute: the executor refuses them with the field and
// value named (exec.not_modelled) -- fields the spec names without saying what they do.
struct Unmodelled {
  std::int64_t seed_mode = 0;    // flags.seed_mode of MAVERICK's seed micro-ops (v4's execute: MicroOp::seed)
  std::int64_t scalar_mode = 0;  // flags.scalar_mode
};

// What a micro-op does for structured sparsity (pevp/pe_array/sparse.h).
enum class SparseRole : std::uint8_t { None, Tags, TagWeights, Matmul };

// What a seed micro-op moves (PeManageSeed, spec 000 section 5.1; flags.seed_mode on v4): the 2048 PSUM
// stochastic-rounding seeds in from SBUF (Load) or out to PSUM (Save), through the identity stationary.
enum class SeedMove : std::uint8_t { None, Load, Save };

// The columns a weight load of `m` columns at PE column `col0` fills when it stops at absolute column `last`
// (enable_wl_last_active_col): the functional load and its time agree on it.
inline unsigned loaded_columns(unsigned m, unsigned col0, unsigned last) {
  return last < col0 ? 1u : std::min(m, last - col0 + 1);
}

struct MicroOp {
  MicroOpKind kind = MicroOpKind::Matmul;
  std::uint64_t instr_index = 0;  // position in the submitted stream (0-based)
  // The last micro-op of its instruction: the instruction retires (EVENTS update,
  // retired count) when this one completes.
  bool completes_instruction = true;
  // Where it came from, for statistics, traces and messages only.
  isa::Generation gen = isa::Generation::MARIANA;
  std::uint8_t opcode_byte = 0;

  isa::TileRect tile;  // where on the array it runs
  unsigned k = 0;      // active rows (contraction), 0 = 256 already resolved
  unsigned m = 0;      // active columns (output partitions)
  // Operands: the source in SBUF (weights or moving data; PeRegWrite: its word),
  // and a Matmul's destination in PSUM.
  isa::AccessPattern src, dst;
  isa::Dtype in_dtype = isa::Dtype::BFLOAT16;
  isa::Fp32Mode fp32_mode = isa::Fp32Mode::None;
  std::int64_t in_dtype_raw = 0, fp32_mode_raw = 0;  // as encoded (an invalid code stays nameable)
  std::int64_t out_dtype = 0;  // Matmul: as encoded (0 = FP32)
  bool transpose = false;      // transpose_mode / flags.xpose_mode (LDWEIGHTS: or bg_xpose_mode)
  // LDWEIGHTS flags.load_order = FIRST_COL_FIRST (v4+): the SBUF elements fill the columns in reverse, element j
  // landing in column M - 1 - j; the default LAST_COL_FIRST keeps element j in column j (D-LOAD-ORDER).
  bool reverse_columns = false;
  // LDWEIGHTS: set by the sequencer (not the firmware) while the cluster CSR enable_wl_last_active_col is on: the
  // load stops at absolute PE column wl_last_active_col (loaded_columns below), the columns past it hold 0.
  std::optional<unsigned> wl_last_active_col;
  // LDWEIGHTS bg_xpose_mode (MARIANA*): the transposed load runs on the background load path, so its transpose
  // costs no extra pass (D-BG-XPOSE).
  bool background_transpose = false;
  // perf_opt = FP8_DOUBLE_ROW: each active row's partition carries two fp8 contraction rows (element pairs), so the
  // tile contracts over 2 x k logical rows (D-EXEC-DOUBLE-ROW).
  bool double_row = false;
  // An MX source (v4 LdweightsMX / MatmulMX, v5's MXTENSOR_V2 member): src's x4 words and E8M0 scales (src.scale_addr)
  // decode as pevp/pe_array/mx.h says, packed and pumped as MX_PERF_MODE `mx_mode` (as encoded) says. A dense
  // micro-op carries mx_mode 0; any other value is refused (exec.mx_mix).
  bool mx = false;
  std::int64_t mx_mode = 0;
  // ConvLutLoad (a WeightLoad micro-op on the whole array): src holds the converter table for in_dtype, the dtype
  // whose codes it converts (lut_dtype) -- pevp/pe_array/conv_lut.h, D-CONVLUT.
  bool conv_lut = false;
  PsumGroup psum;              // Matmul
  // A seed matmul (transposing, through the 16 x 16 identity): which way, and over how many PSUM partitions the seeds
  // spread (PeManageSeed's num_active_cols, 128) -- the moving free size of a Save, whose source is the seed state.
  SeedMove seed = SeedMove::None;
  unsigned seed_partitions = 0;
  Unmodelled unmodelled;
  // PeRegWrite.
  std::uint32_t reg_addr = 0;
  std::uint32_t imm_value = 0;
  // Structured sparsity (spec 000 section 9, pevp/pe_array/sparse.h): a WeightLoad of tags (LdTags: src holds the
  // packed u16 tag words, force_tag_bits OR'd into each) or of {u16 weight, u16 tag} elements (Ldweights
  // tag_weight_mode TAG_WEIGHT), or a sparse Matmul (MatmulSparse: src is TENSOR4D, num[3] the fmaps per partition).
  SparseRole sparse = SparseRole::None;
  std::uint8_t force_tag_bits = 0;
};

}  // namespace pevp::pe
