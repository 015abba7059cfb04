// The GEMM tiling plan: how C[M,N] = A[M,K] @ B[K,N] runs on the PE array as a sequence of host steps, each "write
// these SBUF regions, run this program of LDWEIGHTS / MATMUL, then read these PSUM regions back into C".
//
// The PE array computes dst[m][n] (PSUM partition m, free index n, fp32) = sum_k stationary[k][m] * moving[k][n].
// A supplies the stationary tiles transposed (SBUF partition k holds A[m0..m0+mb)[k]) and B the moving tiles (SBUF
// partition k holds B[k][n0..n0+nt)). Tiles, on the configured isa::ArrayGeometry (128 x 128 and 2 KiB banks on the
// presets): m-blocks of <= pe_cols (stationary columns = PSUM partitions; MAVERICK's 256 columns fold their second
// half into the upper half of the output tile, the c256 tile), k-tiles of <= pe_rows (array rows = SBUF partitions;
// 2 x pe_rows with fp8 double_row, two rows per partition), n-tiles of <= tile_n fp32 elements (one PSUM bank per
// partition, 512, by default; up to the partition's banks from v4). Each output tile (m-block, n-tile) owns as many
// PSUM banks as it covers while its k-tiles accumulate in a PSUM group (SINGLE for one k-tile, else MULTI_START,
// MULTI_MID..., MULTI_END); as many output tiles as fit the banks are open at once (a "round"). When a
// round's k-tiles do not fit the SBUF budget, the round spans several steps and its groups stay open between them.
// Where it fits and loads less, a panel of B (every k-tile of a few n-tiles) stays in SBUF while the m-blocks of A
// stream past it, a round per step (D-GEMM-BPANEL): B is loaded once instead of once per round, in the same
// per-element k order.
// Every shape is planned; nothing is refused for being larger than SBUF or PSUM. docs/gemm-tiling.md has the
// layout, the PSUM group use per generation and the model decisions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "pevp/host/error.h"
#include "pevp/host/matrix.h"
#include "pevp/host/operands.h"
#include "pevp/host/sparse_operands.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"
#include "pevp/isa/geometry.h"
#include "pevp/isa/opcode.h"
#include "pevp/isa/tile_rect.h"

namespace pevp::host {

// The largest tiles a geometry runs (FACTS.md "nc_matmul limits" on the presets: 128, 128, 512): K up to the array's
// rows, M up to its columns (MAVERICK's 256 columns exceed its 128 partitions: such an m-block folds, D-GEMM-C256),
// N by default one PSUM bank of fp32, at most the whole partition from v4 (half of it where m-blocks fold, whose
// two halves share the partition).
struct TileLimits {
  std::size_t m = 0, k = 0;
  unsigned n = 0;          // the largest tile_n
  unsigned n_default = 0;  // one PSUM bank of fp32
  bool folds = false;      // m-blocks wider than the partitions fold (MAVERICK's c256 tiles)
};
TileLimits tile_limits(const isa::ArrayGeometry& geo, isa::Generation gen);
// The most MATMULs one materialised plan holds (plan_gemm): 2^24 matmuls is a 1 GiB program.
inline constexpr std::uint64_t kMaxMatmuls = std::uint64_t{1} << 24;
// The most MATMULs a walked plan runs (walk_gemm holds one step at a time): 2^32 is days of simulation.
inline constexpr std::uint64_t kMaxWalkedMatmuls = std::uint64_t{1} << 32;

struct GemmShape {
  std::size_t m = 0, k = 0, n = 0;  // C is m x n, A is m x k, B is k x n
};

struct GemmOptions {
  isa::Generation gen = isa::Generation::MARIANA;
  // The machine planned for; none: the generation's preset.
  std::optional<isa::ArrayGeometry> geometry;
  isa::Dtype dtype = isa::Dtype::BFLOAT16;        // both operands
  isa::Fp32Mode fp32_mode = isa::Fp32Mode::None;  // FP32: Low / High / Low_High; every other dtype: None
  unsigned tile_n = 512;  // moving free size per MATMUL, 1..tile_limits().n (512 on the presets)
  // fp8 double_row (perf_opt, CAYMAN and MARIANA*): each SBUF partition holds two contraction rows, so a k-tile is
  // 2 x pe_rows (256) rows in the time of pe_rows.
  bool double_row = false;
  // MX operands (dtype FP8_EXP4 = e4m3fn, FP8_EXP5 or FP4_EXP2, quantized by mx_operands.h; MARIANA, MARIANA_PLUS and
  // MAVERICK): the perf mode that packs R = 4 (NONE, QUAD_ROW*) or 8 (OCT_ROW*) contraction rows per partition, so a
  // k-tile is R x pe_rows rows. v4 runs LDWEIGHTS_MX / MATMUL_MX, MAVERICK LDWEIGHTS / MATMUL with the MXTENSOR_V2
  // source. none: dense operands.
  std::optional<isa::MxPerfMode> mx;
  // Structured sparsity (sparse_operands.h; dtype BFLOAT16 or FP16, every generation): A pruned N:M and loaded as
  // TAG_WEIGHT {weight, tag} elements, B streamed as F fmaps per partition by MATMUL_SPARSE, so a k-tile is
  // F x pe_rows contraction rows. none: dense operands.
  std::optional<SparsePattern> sparsity;
  // SBUF bytes per partition the plan may use (from byte 0 of each partition); default: the whole partition.
  // Smaller values force streaming (tests, or a driver that keeps the rest of SBUF for itself).
  std::optional<std::uint32_t> sbuf_bytes_per_partition;
  // Keep panels of B (every k-tile of a few n-tiles) resident in SBUF while the m-blocks of A stream past them,
  // where that fits the budget and loads fewer bytes than the round order (docs/gemm-tiling.md D-GEMM-BPANEL).
  // false: always the round order. Either way each output element sums its k-tiles in the same order (same bits).
  bool b_resident = true;
  // 1, or 2 for double buffering: consecutive steps load into alternate halves of the SBUF budget, so a runtime
  // that moves data with DMA loads step s + 1 while step s computes (D-GEMM-DMA-BUFFERS). Each half is the budget
  // a step may use -- or, where B panels pay (b_resident), the panel stays resident at byte 0 and the steps' A tiles
  // alternate between two buffers after it, while the steps' output tiles alternate between the two halves of the
  // PSUM banks (D-GEMM-DMA-PANELS).
  unsigned sbuf_buffers = 1;
};

enum class Operand : std::uint8_t { A, B };

// What an SBUF region holds: dense elements, or an MX operand's x4 words or its E8M0 scales (pevp/pe_array/mx.h).
// Or a sparse k-tile's rows: A's {u16 weight, u16 tag} elements or B's F fmaps per partition (sparse_operands.h).
enum class SbufContent : std::uint8_t { Elements, MxWords, MxScales, SparseWeights, SparseFmaps };

// One SBUF region to write before a step's program: partition partition0 + i, bytes [offset, offset +
// bytes_per_partition()), holds the elements of contraction index k0 + i at free indices f0 .. f0 + f_count - 1:
// A[f0 + j][k0 + i] for operand A (A is stored transposed), B[k0 + i][f0 + j] for operand B. With
// rows_per_partition = 2 (fp8 double_row) partition i holds contraction indices k0 + 2i and k0 + 2i + 1 as element
// pairs, free index j's pair at elements 2j, 2j + 1 (an odd k_count's missing last row is zeros).
// MX (content MxWords): rows_per_partition = R (4 or 8) and element_bytes one x4 word's (4 fp8, 2 fp4); partition i
// holds free index j's R / 4 words at words j x R/4 ..., value v of word w being contraction index k0 + row(i, 4w + v)
// in mx_mode's row order (mx_operands.h MxLayout; zeros past k_count). MxScales: the words' E8M0 scales, partition g
// (of ceil(partitions of the words / 8)) byte j x R/4 + w the scale of group g's word w of free index j.
struct SbufLoad {
  Operand operand = Operand::A;
  std::size_t k0 = 0, k_count = 0;
  std::size_t f0 = 0, f_count = 0;
  std::uint32_t partition0 = 0;
  std::uint32_t offset = 0;
  std::size_t element_bytes = 0;
  unsigned rows_per_partition = 1;
  SbufContent content = SbufContent::Elements;
  isa::MxPerfMode mx_mode = isa::MxPerfMode::NONE;
  // Sparse contents (rows_per_partition = F): the PE rows of the k-tile, every one written (a block of contraction
  // rows spreads over all row groups, so a short k-tile still touches them all); zeros past k_count.
  std::uint32_t sparse_rows = 0;
  // How many steps before this load's step the last program that reads the SBUF bytes it overwrites runs: 1 for the
  // previous step (one buffer, or a B panel replacing the one the previous step read), 2 for the buffer's previous
  // step (double buffering); 0 when no earlier step reads them. A runtime that loads ahead (DMA) waits for that
  // step to have computed; a host that loads between steps has waited already.
  unsigned reuse_distance = 0;
  bool sparse() const { return content == SbufContent::SparseWeights || content == SbufContent::SparseFmaps; }
  // The partitions the contraction rows take (of the words, for MX).
  std::size_t data_partitions() const {
    return sparse() ? sparse_rows : (k_count + rows_per_partition - 1) / rows_per_partition;
  }
  std::size_t partitions() const {
    return content == SbufContent::MxScales ? (data_partitions() + kMxScaleGroup - 1) / kMxScaleGroup
                                            : data_partitions();
  }
  std::size_t bytes_per_partition() const {
    switch (content) {
      case SbufContent::SparseWeights: return f_count * kTagWeightHalves * element_bytes;
      case SbufContent::SparseFmaps: break;
      case SbufContent::MxWords: return f_count * element_bytes * (rows_per_partition / kMxWordRows);
      case SbufContent::MxScales: return f_count * (rows_per_partition / kMxWordRows);
      case SbufContent::Elements: break;
    }
    return f_count * element_bytes * rows_per_partition;
  }
  static constexpr unsigned kMxWordRows = 4, kMxScaleGroup = 8;  // an x4 word's rows; partitions per E8M0 scale
  static constexpr unsigned kTagWeightHalves = 2;  // a TAG_WEIGHT element: {weight, tag}
};

// One PSUM region to read after a step's program: partitions partition0 .. + partitions - 1 from byte `offset` of bank
// `bank` on (it may run on into the next banks from v4), `elements` fp32 values of each, are C[row0 + p][col0 + j].
struct PsumRead {
  std::uint32_t partition0 = 0, partitions = 0;
  std::uint32_t bank = 0;
  std::uint32_t elements = 0;
  std::size_t row0 = 0, col0 = 0;
  std::uint32_t offset = 0;
};

struct Step {
  std::vector<SbufLoad> loads;
  std::vector<isa::RawInstruction> program;
  std::vector<PsumRead> reads;  // only after the program has completed
};

struct PlanStats {
  std::map<isa::Opcode, std::size_t> instructions;  // by opcode
  std::size_t steps = 0;
  std::size_t rounds = 0;           // sets of output tiles sharing PSUM (as many as its banks hold)
  std::size_t k_split_rounds = 0;   // rounds whose k-tiles span more than one step (groups left open)
  std::uint64_t macs = 0;           // sum of K x M x N over the matmuls = the GEMM's M * K * N
  std::uint64_t sbuf_bytes_loaded = 0;
  std::uint64_t psum_bytes_read = 0;
  std::uint32_t peak_sbuf_bytes_per_partition = 0;
  // D-GEMM-BPANEL: the B panels the plan kept resident, n-tiles per panel and m-blocks per step (all 0: the round
  // order, D-GEMM-STREAM).
  std::size_t b_panels = 0, b_panel_ntiles = 0, b_panel_mblocks = 0;
  std::vector<isa::TileRect> tiles;  // the array tiles the instructions use, in first-use order
};

struct GemmPlan {
  GemmShape shape;
  GemmOptions options;
  std::size_t k_tile = 0;  // k-tile boundaries: [0, k_tile), [k_tile, 2 k_tile), ... (the reference needs them)
  std::size_t element_bytes = 0;  // an MX plan's: one x4 word's
  // 2 when consecutive steps' output tiles alternate between the two halves of the PSUM banks (each step one round,
  // D-GEMM-DMA-PANELS): the banks a step reads back are written again two steps later, so its results may leave
  // while the next step computes. 1: the next step that opens groups writes them.
  unsigned psum_buffers = 1;
  // How a runtime best lays an operand out in device memory (DmaGemm, D-GEMM-DMA-LAYOUT): its free range (A's M,
  // B's N) in chunks of this many elements, each chunk holding every k-tile of its range before the next chunk
  // starts -- the range one step loads of it (B panels: a panel's n-tiles, a step's m-blocks), so that step's k-tiles,
  // side by side in SBUF, are one stretch of each image row too. 0: one chunk, the whole range.
  std::size_t image_chunk_a = 0, image_chunk_b = 0;
  std::vector<Step> steps;
  PlanStats stats;
};

// Throws PlanError naming the field and the rule when `shape` / `options` cannot be planned: a geometry the model
// cannot address, a zero dimension, tile_n outside 1..tile_limits().n, a dtype that is not a dense matmul input, an
// fp32_mode that does not fit the dtype, more than kMaxMatmuls matmuls, an SBUF budget larger than the geometry's
// partition, or an SBUF partition (or budget) smaller than one k-tile of one output tile needs.
// `max_matmuls`: kMaxMatmuls for a materialised plan, kMaxWalkedMatmuls for a walked one.
void validate_gemm(const GemmShape& shape, const GemmOptions& options, std::uint64_t max_matmuls = kMaxMatmuls);

// The whole plan, every step held (what tests and the plain-C++ runner inspect).
GemmPlan plan_gemm(const GemmShape& shape, const GemmOptions& options);

// The same plan walked step by step without holding it, for shapes whose program would not fit in memory (timing
// runs of any size): `visit` receives each step as it is planned and may move from it; returning false stops the
// walk. Returns the plan with `steps` empty and the stats of the steps walked (of the whole plan unless stopped).
using StepVisitor = std::function<bool(Step&)>;
GemmPlan walk_gemm(const GemmShape& shape, const GemmOptions& options, const StepVisitor& visit);

// The plan's header and stats without its steps (a walk that keeps nothing).
GemmPlan plan_summary(const GemmShape& shape, const GemmOptions& options);

// The geometry `options` plan for: options.geometry or the generation's preset.
const isa::ArrayGeometry& geometry_of(const GemmOptions& options);

// Addresses (isa::ArrayGeometry, docs/model-decisions.md D-ADDR).
std::uint32_t sbuf_address(const isa::ArrayGeometry& geo, std::uint32_t partition, std::uint32_t offset);
std::uint32_t psum_address(const isa::ArrayGeometry& geo, std::uint32_t partition, std::uint32_t bank,
                           std::uint32_t offset);

// Throws HostError unless `a` is M x K and `b` K x N of the plan's shape, both in the plan's dtype and generation
// (MX: quantized for the plan's perf mode and k-tile).
void check_operands(const GemmPlan& plan, const EncodedOperand& a, const EncodedOperand& b);

// The bytes of one load: partitions() rows of bytes_per_partition() bytes, row i destined for partition partition0 + i at
// `offset`. Throws HostError when the load's ranges or element size do not fit its operand.
std::vector<std::uint8_t> load_payload(const SbufLoad& load, const EncodedOperand& a, const EncodedOperand& b);

// A host thread joins a bulk copy of the driver (pe::for_each_share) only for at least this many bytes: below, forming
// the team costs more than the copy. A's gather, dearer per byte, takes a quarter of it.
constexpr std::size_t kMinCopyShareBytes = std::size_t{64} << 10;

// The same bytes as load_payload without a copy where the operand holds them as rows already: row i of the load is
// at data + i * stride. For B (whose rows are the load's rows) the view points into b.bytes; for A (stored
// transposed in SBUF, so each row is a gather) and for element pairs (double_row) it points into `scratch`, which is
// filled like load_payload's result. Valid while the operand and `scratch` are. Throws HostError as load_payload
// does. A's gather runs on up to `threads` host threads (pe::for_each_share; the same bytes for every count).
struct LoadRows {
  const std::uint8_t* data = nullptr;
  std::size_t stride = 0;
};
LoadRows load_rows(const SbufLoad& load, const EncodedOperand& a, const EncodedOperand& b,
                   std::vector<std::uint8_t>& scratch, unsigned threads = 1);

// Stores one read-back into `c` (M x N): `bytes` holds `partitions` rows of `elements` little-endian fp32 values.
// Throws HostError when the region does not fit `c`.
void store_read(const PsumRead& read, const std::uint8_t* bytes, Matrix& c);
// The same with row p at bytes + p * row_stride (straight from PSUM, whose partitions lie that far apart), the rows
// shared out over up to `threads` host threads (pe::for_each_share).
void store_read(const PsumRead& read, const std::uint8_t* bytes, std::size_t row_stride, Matrix& c,
                unsigned threads = 1);

}  // namespace pevp::host
