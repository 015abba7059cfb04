// The PE array's micro-op executor, in plain C++ (no SystemC): runs the WeightLoad and Matmul micro-ops a firmware
// handler lowered (plain TENSOR3D patterns) against caller-provided SBUF and PSUM byte buffers, reading the
// micro-op's operands and never an instruction field.
//
// SBUF buffer byte i is SBUF address i (partition-major, isa::ArrayGeometry); PSUM buffer byte i is PSUM address
// 0x2000000 + i (partition p byte o at p * psum_partition_bytes + o). Every address a micro-op touches is
// bounds-checked against its partition and the buffer; on any error nothing is written and the executor's state is
// unchanged. Semantics and the model decisions: docs/pe-array-executor.md.
#pragma once

#include <array>
#include <optional>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pevp/isa/geometry.h"
#include "pevp/isa/tiles.h"
#include "pevp/pe_array/compute.h"
#include "pevp/pe_array/conv_lut.h"
#include "pevp/pe_array/datapath.h"
#include "pevp/pe_array/micro_op.h"
#include "pevp/pe_array/mx.h"
#include "pevp/pe_array/sparse.h"

namespace pevp::pe {

// The outcome of one instruction: ok, or the broken rule ("exec.k_mismatch") and a message naming the field and
// value.
struct ExecResult {
  bool ok = true;
  std::string rule;
  std::string message;

  static ExecResult success() { return {}; }
  static ExecResult error(std::string rule, std::string message) { return {false, std::move(rule), std::move(message)}; }
  std::string describe() const { return ok ? "ok" : message + " [" + rule + "]"; }
};

// What the last successful instruction did, for the per-tile perf counters.
struct ExecStats {
  MicroOpKind kind = MicroOpKind::WeightLoad;
  isa::TileRect tile;
  std::size_t k = 0, m = 0, n = 0;  // LDWEIGHTS: n = 0; k: logical rows (double_row: 2 per active row)
  std::uint64_t macs = 0;           // MATMUL: k * m * n; a transposing MATMUL (a data move) and LDWEIGHTS: 0
  unsigned passes = 0;              // MATMUL: kernel passes (3 for fp32 Low_High, else 1)
  std::uint64_t elements_loaded = 0;  // LDWEIGHTS: k * m
};

// A loaded stationary: [k][m] decoded fp32 values (row-major, m contiguous) for one tile rectangle.
struct Stationary {
  isa::TileRect tile;
  std::size_t k = 0, m = 0;
  OperandType type;
  bool double_row = false;  // loaded with perf_opt FP8_DOUBLE_ROW: k counts logical rows (2 per partition)
  // Loaded from an MX source with MX_PERF_MODE mx_mode: k counts logical rows (4 or 8 per partition), the values are
  // dequantized (pevp/pe_array/mx.h).
  bool mx = false;
  std::int64_t mx_mode = 0;
  std::vector<float> values;
};

// How a Matmul's fp32 result rounds to a bf16 PSUM output (the "drain"): to nearest even, or stochastically from
// the PSUM's seeds (NeuronCore-v4, D-SR-RNG).
enum class Bf16Rounding : std::uint8_t { NearestEven, Stochastic };

class ArrayExecutor {
 public:
  // The memories' partitions and banks the micro-ops address.
  // `threads`: host threads a large matmul's arithmetic may fan out to (matmul_pass_fast; 0 counts as 1). The
  // results are the same bits for every count.
  explicit ArrayExecutor(const isa::ArrayGeometry& geo, unsigned threads = 1,
                         Bf16Rounding rounding = Bf16Rounding::NearestEven);
  unsigned threads() const { return threads_; }
  Bf16Rounding rounding() const { return rounding_; }

  // The PSUM's stochastic-rounding state (spec 000 section 5): 2 seeds per bank of every partition (2048 on the
  // presets), seed s of partition p rounding bank s / 2's elements at even (s even) or odd bf16 positions.
  static constexpr unsigned kSeedsPerBank = 2;
  std::size_t seed_count() const { return seeds_.size(); }
  std::uint32_t seed(std::size_t partition, unsigned s) const { return seeds_.at(partition * seeds_per_partition() + s); }
  unsigned seeds_per_partition() const { return geo_.psum_banks * kSeedsPerBank; }
  // The state at reset: seed i = a fixed non-zero hash of i (D-SR-RNG).
  static std::uint32_t reset_seed(std::size_t i);

  // Group state per PSUM bank: as many as a one-byte bank mask addresses.
  static constexpr unsigned kBanks = isa::ArrayGeometry::kMaxPsumBanks;

  // A WeightLoad micro-op: a stationary, or (MicroOp::conv_lut) a converter table.
  ExecResult ldweights(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes);
  ExecResult matmul(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes, std::uint8_t* psum,
                    std::size_t psum_bytes);

  const ExecStats& last_stats() const { return stats_; }

  // The datapath that computes the dense loads and matmul passes instead of the C++ kernels (datapath.h), or null
  // (the default). With one, every micro-op it refuses fails with rule exec.datapath and its reason, nothing
  // written: a micro-op never falls back to the C++ arithmetic.
  void set_datapath(Datapath* d) { datapath_ = d; }
  Datapath* datapath() const { return datapath_; }
  // The datapath's time for the last successful weight load or matmul.
  const DatapathTiming& datapath_timing() const { return datapath_timing_; }
  // The stationary loaded for exactly `tile`, or null.
  const Stationary* stationary(const isa::TileRect& tile) const;
  std::size_t stationary_count() const { return stationaries_.size(); }
  // The tags loaded for exactly `tile` (LdTags, or Ldweights tag_weight_mode), or null.
  const TagTile* tags(const isa::TileRect& tile) const;
  bool group_open(unsigned bank) const { return bank < kBanks && open_[bank]; }
  // The converter table loaded for `d` (conv_lut_entries(d) fp32 values), or null.
  const float* conv_lut(isa::Dtype d) const;
  // Forget every stationary and converter table, close every group and put the seeds back to their reset values (a
  // reset of the array).
  void reset();

  // Everything a later micro-op reads, as plain data, for a VP checkpoint (docs/checkpoint.md): the seeds, the
  // per-tile stationaries, a staged seed identity, the open PSUM groups and the last instruction's figures. The
  // scratch buffers are not state.
  struct State {
    std::vector<std::uint32_t> seeds;
    std::vector<Stationary> stationaries;
    std::optional<Stationary> staged_identity;
    std::array<bool, kBanks> open{};
    ExecStats stats;
    std::vector<TagTile> tags;  // per tile, non-overlapping (a tag load replaces what it overlaps)
    std::array<std::vector<float>, kConvLutDtypes> conv_luts;  // per conv_lut_slot; empty = none loaded
  };
  State state() const { return {seeds_, stationaries_, staged_identity_, open_, stats_, tags_, conv_luts_}; }
  // Why `s` cannot be this executor's state, or "": the seed count of the geometry; each stationary on a tile
  // inside the array, of a dense operand type of `gen`, with k x m values (k at most two per PE row of the array, m
  // at most one per column); no two stationaries overlapping (a load replaces what it overlaps); each converter
  // table empty or of its dtype's entry count.
  std::string check(const State& s, isa::Generation gen) const;
  void restore(State s);

 private:
  void install(Stationary s);
  void install_tags(TagTile t);
  // LdTags: ceil(M / 4) u16 words per partition, unpacked per sparse.h (D-SPARSE-TAGS).
  ExecResult load_tags(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes);
  // Ldweights tag_weight_mode TAG_WEIGHT: M {u16 weight, u16 tag} elements per partition, a stationary and its tags.
  ExecResult ldweights_tagged(const MicroOp& op, const OperandType& t, const std::uint8_t* sbuf,
                              std::size_t sbuf_bytes);
  // MatmulSparse's checks of the tile's stationary and tags, and its plan (D-SPARSE-SELECT, D-SPARSE-ORDER).
  ExecResult plan_sparse_matmul(const MicroOp& op, const Stationary& st, SparsePlan& plan) const;
  ExecResult load_conv_lut(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes);
  // A load's last steps, dense or MX: the column order (FIRST_COL_FIRST) and an early stop (wl_last_active_col).
  void finish_load(const MicroOp& op, Stationary& s);
  ExecResult ldweights_mx(const MicroOp& op, const OperandType& t, const MxPacking& mx, const std::uint8_t* sbuf,
                          std::size_t sbuf_bytes);
  // Gathers an MX source of k partitions (its x4 words and E8M0 scales, D-MX-SCALES) and decodes it into `dst`
  // (rows x columns, pevp/pe_array/mx.h); touches only scratch.
  ExecResult read_mx(const MicroOp& op, const OperandType& t, const MxPacking& mx, std::size_t k,
                     const std::uint8_t* sbuf, std::size_t sbuf_bytes, std::vector<float>& dst, std::size_t& columns);
  unsigned open_banks() const;  // bit b = PSUM bank b's group is open
  ExecResult seed_matmul(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes, std::uint8_t* psum,
                         std::size_t psum_bytes);
  // MAVERICK's flags.seed_mode micro-ops: their identity element checked, then refused (D-SEED-V5-EXEC).
  ExecResult maverick_seed_move(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes) const;
  // The bf16 drain of `value` into PSUM buffer byte `at` (stochastic on v4 when configured: advances the seed that
  // rounds that position).
  std::uint16_t drain_bf16(float value, std::size_t at, bool stochastic);

  isa::ArrayGeometry geo_;
  unsigned threads_ = 1;
  Bf16Rounding rounding_ = Bf16Rounding::NearestEven;
  std::vector<std::uint32_t> seeds_;
  std::vector<Stationary> stationaries_;
  std::vector<TagTile> tags_;
  // A seed LdWeight's identity, staged until its seed Matmul: installed as the tile's stationary only when the move
  // succeeds, so a PeManageSeed that faults leaves the array as it was (its two micro-ops act as one).
  std::optional<Stationary> staged_identity_;
  std::array<bool, kBanks> open_{};
  ExecStats stats_;
  // Scratch reused across instructions: one packed row, the decoded moving tile, the output tile, a column half of
  // a folded stationary (or the double_row moving rows), a transpose's output bits.
  std::vector<std::uint8_t> row_;
  std::vector<float> moving_, out_, half_;
  std::vector<std::uint32_t> xposed_;
  std::vector<std::uint8_t> mx_words_, mx_scales_;  // an MX source's gathered words and scales
  std::array<std::vector<float>, kConvLutDtypes> conv_luts_;  // ConvLutLoad's tables, per conv_lut_slot
  Datapath* datapath_ = nullptr;
  DatapathTiming datapath_timing_;
};

}  // namespace pevp::pe
