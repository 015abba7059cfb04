// The cost model: how many tensor-engine cycles each phase of a micro-op takes.
// Plain C++ (no SystemC). Every parameter has a name, a unit, a default and a
// source -- a public figure from FACTS.md or "model choice" -- and docs/timing.md
// gives every formula with a worked example. The Timeline (timeline.h) turns
// these phase lengths into start/end times under the sequencer's rules.
//
// A micro-op's shape comes from its operands alone (shape_of), never from
// executing it, so the timing-only mode -- no data, no arithmetic -- costs a
// stream exactly as the functional+timing mode does.
#pragma once

#include <cstdint>

#include "pevp/energy/energy_model.h"
#include "pevp/isa/geometry.h"
#include "pevp/params/param.h"
#include "pevp/isa/tiles.h"
#include "pevp/pe_array/micro_op.h"

namespace pevp::arrseq {

// Cycles are tensor-engine (PE array) clock cycles throughout.
struct TimingParams {
  // FACTS.md: 2.8 GHz on v2, 2.4 GHz on v3 (CAYMAN) and v4 (MARIANA).
  double clock_ghz = 2.4;
  // FACTS.md: back-to-back MultiplyMoving II ~ max(N, MM_INIT_LATENCY), 64 on v2
  // (the only published value; used for every generation -- model choice).
  unsigned mm_init_latency = 64;
  // FACTS.md: fp32 inputs cost ~4x (applied to every fp32 mode; tf32-like
  // fp32_mode variants are not costed differently -- model choice).
  unsigned fp32_factor = 4;
  // FACTS.md: from v3 the TensorE transpose of fp32 is 2x faster than an fp32
  // matmul's 4x: a transposing fp32 Matmul costs this factor instead.
  unsigned xpose_fp32_factor = 2;
  // FACTS.md: LoadStationary ~ elements/4 cycles (32 for 128) -- elements per
  // partition, i.e. the stationary's free size M, loaded 4 per cycle.
  unsigned ls_elements_per_cycle = 4;
  // Model choice (not published): cycles from the end of a weight load until a
  // Matmul may start streaming against it. Small enough that a background load
  // (32 cycles for bf16 M = 128) stays hidden behind a 64-cycle Matmul.
  unsigned ls_to_mm_cycles = 4;
  // Model choice: SBUF read bandwidth into the array, bytes per partition per
  // cycle. 8 B makes a bf16 weight load of M elements take M/4 cycles, the
  // public LS rate, and keeps a bf16/fp8 moving stream below one column per
  // cycle of demand; FACTS.md: half when the minor stride exceeds 16 B.
  unsigned sbuf_read_bytes_per_cycle = 8;
  // FACTS.md (v2): starting an SBUF access costs a static ~60 cycles. Pipelined
  // behind the previous micro-op's stream, so it adds to a Matmul's latency to
  // its PSUM commit, not to the initiation interval (model choice).
  unsigned sbuf_access_cycles = 60;
  // Model choice (fill/drain latency is not published): the systolic wavefront
  // moves one PE per cycle -- K rows to fill, M columns to drain.
  unsigned fill_cycles_per_row = 1;
  unsigned drain_cycles_per_col = 1;
  // Model choice (PSUM write bandwidth/latency not published): the last column's
  // PSUM write, and the extra read-modify-write when it accumulates.
  unsigned psum_write_cycles = 8;
  unsigned psum_rmw_cycles = 4;
  // Model choice: a PeRegWrite (register write into every PE of its tile).
  unsigned pe_regwrite_cycles = 4;
  // Model choice: the SEQ firmware's decode + dispatch per instruction. Below
  // half of MM_INIT_LATENCY, so a Ldweights+Matmul pair per 64 cycles keeps up.
  unsigned seq_dispatch_cycles = 16;
  // Model choice: the bandwidth share left to an XBUS whose throttle is on
  // (protected throttle_cfg.disable_throttle bit = 0).
  double throttle_fraction = 0.25;
  // Model choice: the launch stagger -- cycles per row group woken after it
  // sat idle longer than its array_stagger_rgN_ctrl1 limit.
  unsigned stagger_wake_cycles = 8;
};

// The configuration keys of TimingParams (section "timing"); clock_ghz is the
// platform's tensor_engine.clock_ghz.
const params::Params<TimingParams>& timing_parameters();

// What the timing of one micro-op depends on, read from its operands.
struct OpShape {
  pe::MicroOpKind kind = pe::MicroOpKind::Matmul;
  isa::TileRect tile;
  unsigned k = 0, m = 0;       // active rows (contraction) and columns (output partitions)
  std::uint64_t n = 0;         // Matmul: moving elements per partition (the moving free size)
  unsigned elem_bytes = 2;     // SBUF bytes per pattern element (an MX source's: one x4 word)
  bool fp32 = false;           // fp32 inputs (fp32_factor)
  // Contraction rows every partition carries per column: 2 for fp8 double_row (two elements, FACTS.md: 2k rows in
  // the time of k), 4 or 8 for an MX source (one or two x4 words, D-MX-PUMP); else 1.
  unsigned pack = 1;
  // Cycles each moving column spends in the array beyond the dtype's own: an MX source with perf mode NONE feeds
  // its 4 packed rows one per cycle (4); QUAD_ROW / OCT_ROW pump them at once (1) -- D-MX-TIMING.
  unsigned passes = 1;
  unsigned mx_words = 0;       // an MX source's x4 words per column and partition (1 or 2); 0 for a dense one
  // SBUF elements per column and partition: a dense source's `pack` values, an MX source's words.
  unsigned load_elements() const { return mx_words != 0 ? mx_words : pack; }
  // SBUF bytes per column and partition (a stationary column, or a moving element's rows).
  std::uint64_t column_bytes() const { return std::uint64_t{elem_bytes} * load_elements(); }
  bool transpose = false;      // Matmul: a transpose through the identity, max(K, min(64, N)) cycles;
                               // WeightLoad: a transposed load (an extra such pass unless in the background)
  bool background_transpose = false;  // WeightLoad with bg_xpose_mode
  bool strided = false;        // the SBUF source's minor stride exceeds 16 bytes
  bool accumulate = false;     // Matmul: read-modify-write into PSUM
  std::uint8_t banks = 0;      // Matmul: PSUM banks written (bit b = bank b)
  unsigned first_partition = 0;  // SBUF partition the source starts in
  std::uint64_t macs = 0;      // k * pack * m * n; 0 for a transpose (a data move)
  // What each MAC costs in energy: its input width and mode (D-ENERGY-MAC).
  energy::MacKind mac_kind = energy::MacKind::Bf16;
  // SBUF bytes the array reads for it: k partitions of a weight load's m columns or a Matmul's n moving columns.
  std::uint64_t sbuf_read_bytes() const;
  // PSUM bytes a Matmul moves: m partitions of n fp32 accumulators written, and read first when it accumulates
  // (counted at the accumulator's width whatever the output dtype, D-ENERGY-COUNTS).
  std::uint64_t psum_bytes() const;
  bool pe_reg_bypass = false;  // PeRegWrite with queue_cfg.bypass_peregwrite_instr

  // Where it sits on the geometry (place_on), worked out once with the shape
  // because the Timeline reads them for every micro-op it schedules:
  std::uint8_t row_groups = 0;  // the row groups the tile covers, bit g = group g
  std::uint16_t sbuf_xbus = 0;  // the SBUF XBUS ports its rows read
  std::uint16_t psum_xbus = 0;  // a Matmul: the PSUM write port's bit; else 0
};

// The shape of `op` on `geo` from its operands (no execution), placed.
OpShape shape_of(const pe::MicroOp& op, const isa::ArrayGeometry& geo);

// Fills the shape's row groups and XBUS ports from its tile, rows and first
// partition -- model choice D-XBUS: SBUF port p reads partitions
// p x partitions_per_xbus .. (p + 1) x partitions_per_xbus - 1 (16 on the
// preset), port geo.psum_xbus() is the PSUM write port.
void place_on(OpShape& shape, const isa::ArrayGeometry& geo);

// The XBUS ports (protected throttle_cfg, one bit per port) a placed micro-op
// uses: none of SBUF's for a PeRegWrite that takes its immediate.
inline std::uint32_t xbus_ports(const OpShape& s) {
  const bool reads_sbuf = s.kind != pe::MicroOpKind::PeRegWrite || !s.pe_reg_bypass;
  return (reads_sbuf ? s.sbuf_xbus : 0u) | s.psum_xbus;
}

// The phase lengths of one micro-op, in cycles.
struct OpCost {
  // The array resource it holds: the weight-load port (WeightLoad), the stream
  // (Matmul: its initiation interval), or the tile (PeRegWrite).
  std::uint64_t occupancy = 0;
  std::uint64_t unthrottled = 0;  // occupancy had no XBUS been throttled
  // The compute alone, before the SBUF read could stretch it: a Matmul's II, a weight load's load cycles.
  std::uint64_t compute = 0;
  // A Matmul: the cycles its moving data needs at the full rate of its dtype and mode, n x c x passes; 0 for a
  // transpose and the other kinds.
  double data_cycles = 0;
  // Matmul, after the stream: SBUF access + fill + drain, then the PSUM commit.
  std::uint64_t fill_drain = 0;
  std::uint64_t commit = 0;
  // Matmul: from the stream's start to the first column's PSUM commit (done
  // signalled "with the first response", cluster matmul_done_last = 0).
  std::uint64_t first_commit = 0;
  std::uint64_t latency() const { return occupancy + fill_drain + commit; }
};

class CostModel {
 public:
  explicit CostModel(TimingParams params = {}) : p_(params) {}
  const TimingParams& params() const { return p_; }
  TimingParams& params() { return p_; }

  // `throttled` = XBUS ports whose throttle is on (bit set = throttled).
  OpCost cost(const OpShape& shape, std::uint32_t throttled = 0) const;

  // The moving-stream initiation interval alone: max(N x c, MM_INIT_LATENCY); a transpose
  // max(K, min(MM_INIT_LATENCY, N)) x (fp32 ? xpose_fp32_factor : 1).
  std::uint64_t matmul_ii(const OpShape& shape) const;
  std::uint64_t weight_load_cycles(const OpShape& shape) const;

 private:
  TimingParams p_;
};

}  // namespace pevp::arrseq
