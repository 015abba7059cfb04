// The GEMM planner (see gemm_plan.h and docs/gemm-tiling.md).
#include "pevp/host/gemm_plan.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

#include "pevp/host/mx_operands.h"
#include "pevp/isa/builders.h"
#include "pevp/isa/layout.h"
#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"
#include "pevp/pe_array/mx.h"
#include "pevp/pe_array/sparse.h"

namespace pevp::host {
namespace {

// A contiguous range of one dimension.
struct Span {
  std::size_t start = 0, size = 0;
};

// Every SBUF region starts at a multiple of 4 bytes: from v4 a MATMUL/LDWEIGHTS source is a MEM_PATTERN3D union whose
// start_addr bit 0 selects the MX member (docs/model-decisions.md D-MEMPAT), so a plain pattern needs an even address
// -- an odd-sized fp8 tile would otherwise push the next region onto an odd one -- and 4 keeps fp32 elements aligned
// (D-EXEC-ALIGN). docs/gemm-tiling.md D-GEMM-ALIGN.
constexpr std::size_t kRegionAlign = 4;

std::size_t region_bytes(std::size_t elements, std::size_t es) {
  return (elements * es + kRegionAlign - 1) / kRegionAlign * kRegionAlign;
}

std::vector<Span> split(std::size_t total, std::size_t tile) {
  std::vector<Span> out;
  for (std::size_t s = 0; s < total; s += tile) out.push_back({s, std::min(tile, total - s)});
  return out;
}

// Output tiles sharing PSUM, each holding `span` banks (from bank u x span) while they accumulate over every k-tile. `units` are
// (m-block, n-tile) index pairs in m-major order; `mblocks` / `ntiles` the distinct ones, in first-use order.
struct Round {
  std::vector<std::pair<std::size_t, std::size_t>> units;
  std::vector<std::size_t> mblocks, ntiles;
  std::size_t bytes_per_ktile = 0;  // SBUF bytes per partition one k-tile of the round occupies
  unsigned first_bank = 0;          // output tile u of the round holds PSUM banks first_bank + u x span ...
};

// Rows of the array one k-tile's contraction covers per partition: 2 for fp8 double_row, the perf mode's 4 or 8 for
// MX, else 1.
unsigned rows_per_partition(const GemmOptions& o) {
  if (o.mx) return mx_layout(*o.mx).rows;
  if (o.sparsity) return o.sparsity->fmaps;
  return o.double_row ? 2 : 1;
}

// SBUF bytes per free element of one k-tile's element (dense) or x4 word (MX) region, and of an MX scale region.
std::size_t element_bytes_of(const GemmOptions& o) {
  return o.mx ? pe::mx_word_bytes(o.dtype) : pe::operand_bytes(o.dtype);
}
unsigned mx_words(const GemmOptions& o) { return o.mx ? mx_layout(*o.mx).words() : 0; }

// SBUF bytes per partition one k-tile of an operand tile of `f` free elements occupies: its elements (x 2 for
// double_row's pairs; a sparse tile's F fmaps, which also bound its stationary's 2 x 16-bit {weight, tag} elements as
// F >= 2), or an MX tile's words and, in a region of its own, their scales (one byte per word, in the
// first ceil(partitions / 8) partitions only; the region spans every partition so that offsets stay uniform).
std::size_t tile_bytes(const GemmOptions& o, std::size_t f) {
  if (o.mx) return region_bytes(f * mx_words(o), element_bytes_of(o)) + region_bytes(f * mx_words(o), 1);
  return region_bytes(f * rows_per_partition(o), element_bytes_of(o));
}

// Greedy rounds: add output tiles in m-major order while the round has room for one more (`per_round`, the PSUM
// banks over each tile's span) and one k-tile of all its operand tiles fits the SBUF budget. validate_gemm()
// guarantees a single tile fits.
std::vector<Round> make_rounds(const std::vector<Span>& mb, const std::vector<Span>& nt, const GemmOptions& o,
                               std::size_t budget, std::size_t per_round) {
  auto contains = [](const std::vector<std::size_t>& v, std::size_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  // SBUF bytes per partition per k-tile once tile (i, j) joins `r`: a new m-block or n-tile adds its operand tile.
  auto bytes_with = [&](const Round& r, std::size_t i, std::size_t j) {
    return r.bytes_per_ktile + (contains(r.mblocks, i) ? 0 : tile_bytes(o, mb[i].size)) +
           (contains(r.ntiles, j) ? 0 : tile_bytes(o, nt[j].size));
  };
  std::vector<Round> rounds;
  Round cur;
  for (std::size_t i = 0; i < mb.size(); ++i)
    for (std::size_t j = 0; j < nt.size(); ++j) {
      if (!cur.units.empty() && (cur.units.size() == per_round || bytes_with(cur, i, j) > budget)) {
        rounds.push_back(std::move(cur));
        cur = Round{};
      }
      cur.bytes_per_ktile = bytes_with(cur, i, j);
      if (!contains(cur.mblocks, i)) cur.mblocks.push_back(i);
      if (!contains(cur.ntiles, j)) cur.ntiles.push_back(j);
      cur.units.push_back({i, j});
    }
  if (!cur.units.empty()) rounds.push_back(std::move(cur));
  return rounds;
}

// The PSUM group flags of k-tile t of T (spec 4.1 group modes).
std::uint8_t group_flags(std::size_t t, std::size_t tiles) {
  if (tiles == 1) return isa::psum_flags::SINGLE;
  if (t == 0) return isa::psum_flags::MULTI_START;
  if (t + 1 == tiles) return isa::psum_flags::MULTI_END;
  return isa::psum_flags::MULTI_MID;
}

// Every instruction runs on the largest tile (tile_limits) with num_active_rows/cols giving the partial K and M. The
// ISA accepts any 1..(tile extent) active rows/cols in a tile (validate.cpp tile.num_active_rows/cols), so partial
// tiles need neither padding nor a smaller (group-aligned) placement. docs/gemm-tiling.md D-GEMM-TILE. Where the
// array is wider than the partitions (MAVERICK), an m-block that fits the partitions runs on the left half (C128),
// a wider one on the whole array (C256), folding its columns beyond the partitions (D-GEMM-C256).
bool folds(const isa::ArrayGeometry& geo, std::size_t m) { return m > geo.partitions; }
isa::Placement tile_for(const isa::ArrayGeometry& geo, std::size_t m) {
  const unsigned cols = geo.pe_cols > geo.partitions && !folds(geo, m) ? geo.pe_cols / 2 : geo.pe_cols;
  return {0, geo.pe_rows, 0, cols};
}
isa::RawInstruction ldweights(const GemmOptions& o, std::uint32_t addr, std::size_t k, std::size_t m) {
  const unsigned pack = rows_per_partition(o);
  isa::LdweightsArgs a;
  a.src = isa::Pattern::row(addr, static_cast<std::uint16_t>(m * pack));
  a.in_dtype = o.dtype;
  a.fp32_mode = o.fp32_mode;
  a.num_active_rows = static_cast<unsigned>((k + pack - 1) / pack);
  a.num_active_cols = static_cast<unsigned>(m);
  a.tile = tile_for(geometry_of(o), m);
  if (o.double_row) a.perf = isa::perf_opt::FP8_DOUBLE_ROW;
  return isa::encode_ldweights(o.gen, geometry_of(o), a);
}

// `half_stride`: where a folded output tile's second column half starts, in fp32 elements after the first.
isa::RawInstruction matmul(const GemmOptions& o, std::uint32_t src, std::uint32_t dst, std::size_t k, std::size_t m,
                           std::size_t n, std::uint8_t flags, unsigned half_stride) {
  const unsigned pack = rows_per_partition(o);
  const isa::ArrayGeometry& geo = geometry_of(o);
  isa::MatmulArgs a;
  a.src = isa::Pattern::row(src, static_cast<std::uint16_t>(n * pack));
  if (folds(geo, m))
    a.dst = {dst, {1, 0, static_cast<std::int16_t>(half_stride)}, {static_cast<std::uint16_t>(n), 1, 2}};
  else
    a.dst = isa::Pattern::row(dst, static_cast<std::uint16_t>(n));
  a.in_dtype = o.dtype;
  a.fp32_mode = o.fp32_mode;
  a.out_dtype = isa::Dtype::FP32;
  a.num_active_rows = static_cast<unsigned>((k + pack - 1) / pack);
  a.num_active_cols = static_cast<unsigned>(m);
  a.tile = tile_for(geo, m);
  a.psum_flags = flags;  // MARIANA / MAVERICK: accumulate_flag derived by the builder (first write overwrites)
  if (o.double_row) a.perf = isa::perf_opt::FP8_DOUBLE_ROW;
  return isa::encode_matmul(o.gen, geo, a);
}

// ---- MX instructions (the builders cover the dense forms only) ---------------------------------------------------

// num_active_rows / num_active_cols are one byte: 256 (MAVERICK's whole c256 array) is encoded as 0.
constexpr unsigned kActiveEncodedAsZero = 256;
unsigned active(std::size_t n) { return n == kActiveEncodedAsZero ? 0 : static_cast<unsigned>(n); }

// The tile fields of `p` as encode_ldweights would set them: row_grp / col_grp group masks on v4, tile_size /
// tile_sel on MAVERICK.
void set_tile(isa::Encoder& e, isa::Generation g, const isa::ArrayGeometry& geo, const isa::Placement& p) {
  if (!isa::is_maverick(g)) {
    e.set("row_grp", isa::group_mask(p.row0 / geo.group_rows(), p.rows / geo.group_rows()))
        .set("col_grp", isa::group_mask(p.col0 / geo.group_cols(), p.cols / geo.group_cols()));
    return;
  }
  e.set("tile_size.row", p.rows == geo.pe_rows ? isa::tile_size::R128 : isa::tile_size::R64)
      .set("tile_size.col", p.cols == geo.pe_cols ? isa::tile_size::C256 : isa::tile_size::C128)
      .set("tile_sel.row_sel", p.row0 / p.rows)
      .set("tile_sel.col_sel", p.col0 / p.cols);
}

// The MX source: `words` x4 words per partition from `data` (partition 0 of the k-tile), their scales from
// `scales`: v4's MXMEM_PATTERN1D (no index vector), MAVERICK's MXTENSOR_V2 member (start_addr bit 0, 2-D).
void set_mx_source(isa::Encoder& e, isa::Generation g, std::uint32_t data, std::uint32_t scales, std::size_t words) {
  const std::string src = "src_mem_pattern.";
  if (isa::is_maverick(g)) {
    e.set(src + "start_addr", data | isa::ADDR4MARKER_MXTENSOR_V2)
        .set(src + "scale_addr", scales)
        .set(src + "step_elem[0]", 1)
        .set(src + "num_elem[0]", static_cast<std::int64_t>(words))
        .set(src + "step_elem[1]", 0)
        .set(src + "num_elem[1]", 1);
    return;
  }
  e.set(src + "start_addr", data)
      .set(src + "scale_addr", scales)
      .set(src + "step_elem", 1)
      .set(src + "num_elem", static_cast<std::int64_t>(words))
      .set(src + "index_addr", 0);
}

// LDWEIGHTS_MX (v4) or LDWEIGHTS with the MX source (MAVERICK): `k` contraction rows of `m` columns.
isa::RawInstruction ldweights_mx(const GemmOptions& o, std::uint32_t addr, std::uint32_t scales, std::size_t k,
                                 std::size_t m) {
  const isa::ArrayGeometry& geo = geometry_of(o);
  const unsigned pack = rows_per_partition(o);
  isa::Encoder e(o.gen, isa::is_maverick(o.gen) ? isa::Opcode::LDWEIGHTS : isa::Opcode::LDWEIGHTS_MX);
  set_mx_source(e, o.gen, addr, scales, m * mx_words(o));
  e.set("in_dtype", static_cast<int>(o.dtype)).set("perf_mode", static_cast<int>(*o.mx));
  e.set("num_active_rows", active((k + pack - 1) / pack)).set("num_active_cols", active(m));
  set_tile(e, o.gen, geo, tile_for(geo, m));
  return e.bytes();
}

// The dst of an MX or sparse matmul, as the dense matmul's: `n` fp32 elements per partition at `dst`; a folded tile's
// second column half `half_stride` elements further (the upper dimension of 2).
void set_psum_dst(isa::Encoder& e, const isa::ArrayGeometry& geo, std::uint32_t dst, std::size_t m, std::size_t n,
                  unsigned half_stride) {
  const bool fold = folds(geo, m);
  const std::string d = "dst_mem_pattern.";
  e.set(d + "start_addr", dst)
      .set(d + "step_elem[0]", 1)
      .set(d + "num_elem[0]", static_cast<std::int64_t>(n))
      .set(d + "step_elem[1]", 0)
      .set(d + "num_elem[1]", 1)
      .set(d + "step_elem[2]", fold ? half_stride : 0)
      .set(d + "num_elem[2]", fold ? 2 : 1);
}

// MATMUL_MX (v4) or MATMUL with the MX source (MAVERICK), fp32 out; the dst as the dense matmul's.
isa::RawInstruction matmul_mx(const GemmOptions& o, std::uint32_t src, std::uint32_t scales, std::uint32_t dst,
                              std::size_t k, std::size_t m, std::size_t n, std::uint8_t flags, unsigned half_stride) {
  const isa::ArrayGeometry& geo = geometry_of(o);
  const unsigned pack = rows_per_partition(o);
  isa::Encoder e(o.gen, isa::is_maverick(o.gen) ? isa::Opcode::MATMUL : isa::Opcode::MATMUL_MX);
  set_mx_source(e, o.gen, src, scales, n * mx_words(o));
  set_psum_dst(e, geo, dst, m, n, half_stride);
  e.set("in_dtype", static_cast<int>(o.dtype))
      .set("perf_mode", static_cast<int>(*o.mx))
      .set("out_dtype", static_cast<int>(isa::Dtype::FP32));
  e.set("num_active_rows", active((k + pack - 1) / pack)).set("num_active_cols", active(m));
  set_tile(e, o.gen, geo, tile_for(geo, m));
  if (isa::is_maverick(o.gen))
    e.set("flags.accumulate_flag", isa::default_accumulate(flags));  // a group's first write overwrites
  else
    e.set("psum_accumulate_flags", flags).set("psum_zero_region", static_cast<int>(isa::ZeroRegion::BANKS_1));
  return e.bytes();
}

// ---- sparse instructions (the builders cover the dense forms only) ---------------------------------------------

// LDWEIGHTS with tag_weight_mode TAG_WEIGHT: `m` {weight, tag} elements per partition on every PE row of the tile
// (a sparse k-tile always spans the whole tile, D-GEMM-SPARSE).
isa::RawInstruction ldweights_sparse(const GemmOptions& o, std::uint32_t addr, std::size_t m) {
  const isa::ArrayGeometry& geo = geometry_of(o);
  isa::Encoder e(o.gen, isa::Opcode::LDWEIGHTS);
  const std::string src = "src_mem_pattern.";
  e.set(src + "start_addr", addr)
      .set(src + "step_elem[0]", 1)
      .set(src + "num_elem[0]", static_cast<std::int64_t>(m))
      .set(src + "num_elem[1]", 1)
      .set(src + "num_elem[2]", 1);
  e.set("in_dtype", static_cast<int>(o.dtype)).set("tag_weight_mode", pe::tag_weight_mode::TAG_WEIGHT);
  e.set("num_active_rows", active(geo.pe_rows)).set("num_active_cols", active(m));
  set_tile(e, o.gen, geo, tile_for(geo, m));
  return e.bytes();
}

// MATMUL_SPARSE: a TENSOR4D source of F fmaps of `n` elements per partition (fmap f at element f x n), fp32 out; the
// dst as the dense matmul's.
isa::RawInstruction matmul_sparse(const GemmOptions& o, std::uint32_t src, std::uint32_t dst, std::size_t m,
                                  std::size_t n, std::uint8_t flags, unsigned half_stride) {
  const isa::ArrayGeometry& geo = geometry_of(o);
  isa::Encoder e(o.gen, isa::Opcode::MATMUL_SPARSE);
  const std::string s = "src_mem_pattern.";
  e.set(s + "start_addr", src)
      .set(s + "step_elem[0]", 1)
      .set(s + "num_elem[0]", static_cast<std::int64_t>(n))
      .set(s + "num_elem[1]", 1)
      .set(s + "num_elem[2]", 1)
      .set(s + "step_elem[3]", static_cast<std::int64_t>(n))
      .set(s + "num_elem[3]", o.sparsity->fmaps);
  set_psum_dst(e, geo, dst, m, n, half_stride);
  // NeuronCore-v3 encodes its one output dtype, FP32, as 0 (as encode_matmul does).
  e.set("in_dtype", static_cast<int>(o.dtype))
      .set("out_dtype", o.gen == isa::Generation::CAYMAN ? 0 : static_cast<int>(isa::Dtype::FP32));
  e.set("num_active_rows", active(geo.pe_rows)).set("num_active_cols", active(m));
  set_tile(e, o.gen, geo, tile_for(geo, m));
  // S4D3_MM keeps the PSUM group flags on every generation; from v4 a group's first write overwrites.
  e.set("psum_accumulate_flags", flags);
  if (isa::is_v4_plus(o.gen)) e.set("flags.accumulate_flag", isa::default_accumulate(flags));
  if (!isa::is_maverick(o.gen)) e.set("psum_zero_region", static_cast<int>(isa::ZeroRegion::BANKS_1));
  return e.bytes();
}

// The instructions a plan has encoded, by their arguments. A plan repeats few distinct instructions (the SBUF
// layout of every step and the PSUM banks of every round recur), and encoding one costs far more than finding it:
// large timing runs would otherwise spend more host time encoding than simulating.
class InstructionCache {
 public:
  explicit InstructionCache(const GemmOptions& o) : o_(o) {}
  // `scales`: an MX source's scale address (unused for dense operands).
  const isa::RawInstruction& ldweights(std::uint32_t addr, std::uint32_t scales, std::size_t k, std::size_t m) {
    return find_or_encode({isa::Opcode::LDWEIGHTS, addr, scales, 0, k, m, 0, 0}, [&] {
      if (o_.sparsity) return ldweights_sparse(o_, addr, m);
      return o_.mx ? ldweights_mx(o_, addr, scales, k, m) : host::ldweights(o_, addr, k, m);
    });
  }
  const isa::RawInstruction& matmul(std::uint32_t src, std::uint32_t scales, std::uint32_t dst, std::size_t k,
                                    std::size_t m, std::size_t n, std::uint8_t flags) {
    return find_or_encode({isa::Opcode::MATMUL, src, scales, dst, k, m, n, flags}, [&] {
      if (o_.sparsity) return matmul_sparse(o_, src, dst, m, n, flags, o_.tile_n);
      return o_.mx ? matmul_mx(o_, src, scales, dst, k, m, n, flags, o_.tile_n)
                   : host::matmul(o_, src, dst, k, m, n, flags, o_.tile_n);
    });
  }

 private:
  using Key = std::tuple<isa::Opcode, std::uint32_t, std::uint32_t, std::uint32_t, std::size_t, std::size_t,
                         std::size_t, std::uint8_t>;
  template <class Encode>
  const isa::RawInstruction& find_or_encode(const Key& key, Encode encode) {
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, encode()).first;
    return it->second;
  }
  const GemmOptions& o_;
  std::map<Key, isa::RawInstruction> cache_;
};

// PSUM banks one output tile holds: its tile_n fp32 values per partition, twice where m-blocks fold.
unsigned bank_span(const GemmShape& shape, const GemmOptions& o) {
  const isa::ArrayGeometry& geo = geometry_of(o);
  const std::size_t halves = folds(geo, std::min<std::size_t>(shape.m, tile_limits(geo, o.gen).m)) ? 2 : 1;
  const std::size_t bytes = halves * o.tile_n * 4;
  return static_cast<unsigned>((bytes + geo.psum_bank_bytes - 1) / geo.psum_bank_bytes);
}

// The SBUF bytes per partition the whole plan may use.
std::uint32_t whole_budget(const GemmOptions& o) {
  return o.sbuf_bytes_per_partition.value_or(geometry_of(o).sbuf_partition_bytes);
}

// The SBUF bytes per partition one step may use: the whole budget, or one buffer's half of it (aligned down, so the
// second buffer starts aligned).
std::uint32_t budget_of(const GemmOptions& o) {
  const std::uint32_t whole = whole_budget(o);
  if (o.sbuf_buffers <= 1) return whole;
  return static_cast<std::uint32_t>(whole / o.sbuf_buffers / kRegionAlign * kRegionAlign);
}

// Where step number `step` of the plan starts in each partition: its buffer's first byte.
std::uint32_t buffer_base(const GemmOptions& o, std::size_t step) {
  return o.sbuf_buffers <= 1 ? 0 : static_cast<std::uint32_t>(step % o.sbuf_buffers) * budget_of(o);
}

// Where one k-tile's operand tiles sit in SBUF (byte offsets in partition 0..), per position in Round::mblocks /
// Round::ntiles.
struct KtileLayout {
  std::vector<std::uint32_t> a, b;
  std::vector<std::uint32_t> a_scales, b_scales;  // MX: the tiles' scale regions (0 for dense operands)
};

// Appends the load(s) of one operand tile at `offset` (advanced past them): its elements, or an MX tile's words and
// then their scales. Returns the scales' offset (0 for dense operands).
std::uint32_t lay_out_tile(Operand which, const Span& k, const Span& f, const GemmOptions& o, std::size_t es,
                           unsigned pack, std::uint32_t& offset, Step& step) {
  if (o.sparsity) {
    SbufLoad l{which, k.start, k.size, f.start, f.size, 0, offset, es, pack};
    l.content = which == Operand::A ? SbufContent::SparseWeights : SbufContent::SparseFmaps;
    l.sparse_rows = geometry_of(o).pe_rows;
    step.loads.push_back(l);
    offset += static_cast<std::uint32_t>(region_bytes(l.bytes_per_partition(), 1));
    return 0;
  }
  if (!o.mx) {
    step.loads.push_back({which, k.start, k.size, f.start, f.size, 0, offset, es, pack});
    offset += static_cast<std::uint32_t>(region_bytes(f.size * pack, es));
    return 0;
  }
  SbufLoad words{which, k.start, k.size, f.start, f.size, 0, offset, es, pack, SbufContent::MxWords, *o.mx};
  step.loads.push_back(words);
  offset += static_cast<std::uint32_t>(region_bytes(f.size * mx_words(o), es));
  SbufLoad scales = words;
  scales.content = SbufContent::MxScales;
  scales.offset = offset;
  step.loads.push_back(scales);
  offset += static_cast<std::uint32_t>(region_bytes(f.size * mx_words(o), 1));
  return scales.offset;
}

// Appends the loads of k-tile `k` of round `r` at `offset` (advanced past them): the A^T tile of every m-block, then
// the B tile of every n-tile.
// Appends one operand's tiles of k-tile `k` of round `r` to `at` (A's of every m-block or B's of every n-tile).
void lay_out_operand(Operand which, const Round& r, const std::vector<Span>& mb, const std::vector<Span>& nt,
                     const Span& k, const GemmOptions& o, std::size_t es, unsigned pack, std::uint32_t& offset,
                     Step& step, KtileLayout& at) {
  if (which == Operand::A) {
    for (std::size_t i : r.mblocks) {
      at.a.push_back(offset);
      at.a_scales.push_back(lay_out_tile(Operand::A, k, mb[i], o, es, pack, offset, step));
    }
    return;
  }
  for (std::size_t j : r.ntiles) {
    at.b.push_back(offset);
    at.b_scales.push_back(lay_out_tile(Operand::B, k, nt[j], o, es, pack, offset, step));
  }
}

KtileLayout lay_out_ktile(const Round& r, const std::vector<Span>& mb, const std::vector<Span>& nt, const Span& k,
                          const GemmOptions& o, std::size_t es, unsigned pack, std::uint32_t& offset, Step& step) {
  KtileLayout at;
  lay_out_operand(Operand::A, r, mb, nt, k, o, es, pack, offset, step, at);
  lay_out_operand(Operand::B, r, mb, nt, k, o, es, pack, offset, step, at);
  return at;
}

// Appends k-tile `t` (of `tiles`) of round `r` to the step's program: one stationary per m-block, then the matmuls of
// that m-block's output tiles, output tile u of the round into PSUM banks first_bank + u x span ...
void program_ktile(const Round& r, const std::vector<Span>& mb, const std::vector<Span>& nt, const Span& k,
                   std::size_t t, std::size_t tiles, const KtileLayout& at, const GemmOptions& o, unsigned span,
                   InstructionCache& encoded, Step& step, PlanStats& stats) {
  const auto pos = [](const std::vector<std::size_t>& v, std::size_t x) {
    return static_cast<std::size_t>(std::find(v.begin(), v.end(), x) - v.begin());
  };
  for (std::size_t ip = 0; ip < r.mblocks.size(); ++ip) {
    const Span& m = mb[r.mblocks[ip]];
    const isa::Placement p = tile_for(geometry_of(o), m.size);
    const isa::TileRect rect{p.row0, p.rows, p.col0, p.cols};
    if (std::find(stats.tiles.begin(), stats.tiles.end(), rect) == stats.tiles.end()) stats.tiles.push_back(rect);
    const isa::ArrayGeometry& geo = geometry_of(o);
    step.program.push_back(
        encoded.ldweights(sbuf_address(geo, 0, at.a[ip]), sbuf_address(geo, 0, at.a_scales[ip]), k.size, m.size));
    ++stats.instructions[o.mx && !isa::is_maverick(o.gen) ? isa::Opcode::LDWEIGHTS_MX : isa::Opcode::LDWEIGHTS];
    for (std::size_t u = 0; u < r.units.size(); ++u) {
      if (r.units[u].first != r.mblocks[ip]) continue;
      const Span& n = nt[r.units[u].second];
      const std::size_t b = pos(r.ntiles, r.units[u].second);
      const std::uint32_t src = sbuf_address(geo, 0, at.b[b]), scales = sbuf_address(geo, 0, at.b_scales[b]);
      const std::uint32_t dst = psum_address(geo, 0, static_cast<std::uint32_t>(r.first_bank + u * span), 0);
      step.program.push_back(encoded.matmul(src, scales, dst, k.size, m.size, n.size, group_flags(t, tiles)));
      ++stats.instructions[o.sparsity                              ? isa::Opcode::MATMUL_SPARSE
                           : o.mx && !isa::is_maverick(o.gen) ? isa::Opcode::MATMUL_MX
                                                              : isa::Opcode::MATMUL];
      // The logical contraction rows (k.size), not the padding of a ragged k-tile's last partitions; for a sparse
      // plan the dense-equivalent products, F x those the array makes (D-SPARSE-MACS).
      stats.macs += static_cast<std::uint64_t>(k.size) * m.size * n.size;
    }
  }
}

// The read-back of every output tile of the round, after its last step: a folded tile's rows beyond the partitions
// from its upper half, tile_n values further on.
void add_reads(const Round& r, const std::vector<Span>& mb, const std::vector<Span>& nt, const GemmOptions& o,
               unsigned span, Step& step, PlanStats& stats) {
  const std::size_t parts = geometry_of(o).partitions;
  for (std::size_t u = 0; u < r.units.size(); ++u) {
    const Span& m = mb[r.units[u].first];
    const Span& n = nt[r.units[u].second];
    const auto bank = static_cast<std::uint32_t>(r.first_bank + u * span);
    for (std::size_t half = 0; half * parts < m.size; ++half) {
      const std::size_t rows = std::min(parts, m.size - half * parts);
      step.reads.push_back({0, static_cast<std::uint32_t>(rows), bank, static_cast<std::uint32_t>(n.size),
                            m.start + half * parts, n.start, static_cast<std::uint32_t>(half * o.tile_n * 4)});
    }
    stats.psum_bytes_read += m.size * n.size * 4;
  }
}

// Plans one round: its k-tiles split into as few steps as the SBUF budget allows, balanced (D-GEMM-STREAM); the
// PSUM groups open in the first step and close in the last, which alone reads back.
// Returns false when `visit` stopped the walk.
bool plan_round(const Round& r, const std::vector<Span>& mb, const std::vector<Span>& nt, const std::vector<Span>& kt,
                unsigned span, InstructionCache& encoded, GemmPlan& plan, const StepVisitor& visit) {
  const std::size_t per_step = std::min(kt.size(), budget_of(plan.options) / r.bytes_per_ktile);
  const std::size_t nsteps = (kt.size() + per_step - 1) / per_step;
  if (nsteps > 1) ++plan.stats.k_split_rounds;
  std::size_t t = 0;
  for (std::size_t s = 0; s < nsteps; ++s) {
    const std::size_t count = kt.size() / nsteps + (s < kt.size() % nsteps ? 1 : 0);
    Step step;
    std::uint32_t offset = buffer_base(plan.options, plan.stats.steps);
    const unsigned pack = rows_per_partition(plan.options);
    if (plan.options.sbuf_buffers > 1) {
      // Double buffered (for DMA): every A tile of the step's k-tiles, then every B tile, so consecutive k-tiles of
      // an operand lie side by side in each partition and one descriptor can load many (D-GEMM-DMA-BUFFERS).
      std::vector<KtileLayout> at(count);
      for (const Operand which : {Operand::A, Operand::B})
        for (std::size_t i = 0; i < count; ++i)
          lay_out_operand(which, r, mb, nt, kt[t + i], plan.options, plan.element_bytes, pack, offset, step, at[i]);
      for (std::size_t i = 0; i < count; ++i, ++t)
        program_ktile(r, mb, nt, kt[t], t, kt.size(), at[i], plan.options, span, encoded, step, plan.stats);
    } else {
      for (std::size_t end = t + count; t < end; ++t) {
        const KtileLayout at =
            lay_out_ktile(r, mb, nt, kt[t], plan.options, plan.element_bytes, pack, offset, step);
        program_ktile(r, mb, nt, kt[t], t, kt.size(), at, plan.options, span, encoded, step, plan.stats);
      }
    }
    // Each step's loads overwrite its buffer, which the buffer's previous step read.
    const unsigned reuse = std::max(1u, plan.options.sbuf_buffers);
    for (auto& l : step.loads) {
      l.reuse_distance = plan.stats.steps >= reuse ? reuse : 0;
      plan.stats.sbuf_bytes_loaded += l.partitions() * l.bytes_per_partition();
    }
    plan.stats.peak_sbuf_bytes_per_partition = std::max(plan.stats.peak_sbuf_bytes_per_partition, offset);
    if (s + 1 == nsteps) add_reads(r, mb, nt, plan.options, span, step, plan.stats);
    ++plan.stats.steps;
    if (!visit(step)) return false;
  }
  return true;
}

// ---- B panels resident (D-GEMM-BPANEL) ---------------------------------------------------------------------------

// A panel: `ntiles` n-tiles of B, every k-tile, resident from SBUF byte 0 while the m-blocks of A pass `mblocks` at a
// time (one step each, its output tiles one round of PSUM). Double buffered (D-GEMM-DMA-PANELS): the steps' A tiles
// alternate between two buffers of `a_buffer` bytes per partition after the widest panel, and where a round of
// PSUM holds at least two output tiles, the steps' output tiles alternate between the two halves of the banks
// (`psum_half_banks` banks each; 0: every step uses the banks from 0).
struct PanelShape {
  std::size_t ntiles = 0, mblocks = 0;
  std::uint32_t a_buffer = 0;
  unsigned psum_half_banks = 0;
};

// The panel shape, or none when the round order is to run: the option is off, no panel of one n-tile and one m-block
// with every k-tile fits the budget (K too long for SBUF: the round order streams it, D-GEMM-STREAM), or the panels
// would load no fewer bytes than the rounds (a GEMM of one round loads every operand element once either way).
// Widest panel first (fewest reloads of A), then the panel count balanced, then as many m-blocks per step as PSUM
// and SBUF hold. Bytes compared per partition per k-tile (tile_bytes), the unit both orders load in. Double
// buffered, the panel and two A buffers share the whole budget, and a step's output tiles take half the banks.
std::optional<PanelShape> choose_panels(const std::vector<Round>& rounds, const std::vector<Span>& mb,
                                        const std::vector<Span>& nt, std::size_t ktiles, const GemmOptions& o,
                                        unsigned span, std::size_t per_round) {
  if (!o.b_resident) return std::nullopt;
  const bool double_buffered = o.sbuf_buffers > 1;
  const std::uint64_t budget = whole_budget(o);
  const std::uint64_t a_buffers = double_buffered ? 2 : 1;
  const bool psum_halves = double_buffered && per_round >= 2;
  if (psum_halves) per_round /= 2;
  // The first tiles are the full ones (split() puts the remainder last), so they bound every panel and step.
  const std::uint64_t a_full = tile_bytes(o, mb.front().size), b_full = tile_bytes(o, nt.front().size);
  const auto fits = [&](std::uint64_t p, std::uint64_t q) {
    return ktiles * (p * b_full + a_buffers * q * a_full) <= budget;
  };
  std::size_t widest = std::min(per_round, nt.size());
  while (widest > 0 && !fits(widest, 1)) --widest;
  if (widest == 0) return std::nullopt;
  const std::size_t panels = (nt.size() + widest - 1) / widest;
  PanelShape ps;
  ps.ntiles = (nt.size() + panels - 1) / panels;
  ps.mblocks = std::max<std::size_t>(1, std::min(per_round / ps.ntiles, mb.size()));
  while (ps.mblocks > 1 && !fits(ps.ntiles, ps.mblocks)) --ps.mblocks;
  std::uint64_t a_all = 0, b_all = 0, rounds_cost = 0;
  for (const Span& m : mb) a_all += tile_bytes(o, m.size);
  for (const Span& n : nt) b_all += tile_bytes(o, n.size);
  for (const Round& r : rounds) {
    for (std::size_t i : r.mblocks) rounds_cost += tile_bytes(o, mb[i].size);
    for (std::size_t j : r.ntiles) rounds_cost += tile_bytes(o, nt[j].size);
  }
  const std::uint64_t panel_count = (nt.size() + ps.ntiles - 1) / ps.ntiles;
  if (panel_count * a_all + b_all >= rounds_cost) return std::nullopt;
  if (double_buffered) ps.a_buffer = static_cast<std::uint32_t>(ktiles * ps.mblocks * a_full);
  if (psum_halves) ps.psum_half_banks = static_cast<unsigned>(per_round * span);
  return ps;
}

// Plans the GEMM as B panels: per panel, its first step loads the panel (k-tile major, n-tiles in order, from byte 0)
// and every step loads its m-blocks' A tiles after it (k-tile major, m-blocks in order), runs every k-tile in order --
// so each output element sums its k-tiles in the round order's sequence, in one PSUM group -- and reads its output
// tiles back. Double buffered, the A tiles of step s go to buffer s mod 2 after the widest panel (the first), so no
// A buffer ever overlaps a panel, and its output tiles to PSUM half s mod 2.
// Returns false when `visit` stopped the walk.
bool plan_panels(const PanelShape& ps, const std::vector<Span>& mb, const std::vector<Span>& nt,
                 const std::vector<Span>& kt, unsigned span, InstructionCache& encoded, GemmPlan& plan,
                 const StepVisitor& visit) {
  const GemmOptions& o = plan.options;
  const unsigned pack = rows_per_partition(o);
  const bool double_buffered = o.sbuf_buffers > 1;
  const std::uint32_t budget = double_buffered ? whole_budget(o) : budget_of(o);
  std::optional<std::uint32_t> a_base;  // double buffered: where the A buffers start, after the widest panel
  for (std::size_t j0 = 0; j0 < nt.size(); j0 += ps.ntiles) {
    const std::size_t j1 = std::min(nt.size(), j0 + ps.ntiles);
    Step panel;
    std::uint32_t panel_end = 0;
    std::vector<KtileLayout> at(kt.size());
    for (std::size_t t = 0; t < kt.size(); ++t)
      for (std::size_t j = j0; j < j1; ++j) {
        at[t].b.push_back(panel_end);
        at[t].b_scales.push_back(lay_out_tile(Operand::B, kt[t], nt[j], o, plan.element_bytes, pack, panel_end, panel));
      }
    if (!a_base) a_base = panel_end;
    for (std::size_t i0 = 0; i0 < mb.size(); i0 += ps.mblocks) {
      const std::size_t i1 = std::min(mb.size(), i0 + ps.mblocks);
      const std::size_t s = plan.stats.steps;
      Round r;
      if (ps.psum_half_banks) r.first_bank = static_cast<unsigned>(s % 2) * ps.psum_half_banks;
      for (std::size_t j = j0; j < j1; ++j) r.ntiles.push_back(j);
      for (std::size_t i = i0; i < i1; ++i) {
        r.mblocks.push_back(i);
        for (std::size_t j = j0; j < j1; ++j) r.units.push_back({i, j});
      }
      Step step;
      if (i0 == 0) {
        step.loads = std::move(panel.loads);  // after every step of the previous panel has read its own
        for (SbufLoad& l : step.loads) l.reuse_distance = s >= 1 ? 1 : 0;
      }
      const std::size_t panel_loads = step.loads.size();
      std::uint32_t offset = double_buffered ? *a_base + static_cast<std::uint32_t>(s % 2) * ps.a_buffer : panel_end;
      for (std::size_t t = 0; t < kt.size(); ++t) {
        at[t].a.clear();
        at[t].a_scales.clear();
        for (std::size_t i = i0; i < i1; ++i) {
          at[t].a.push_back(offset);
          at[t].a_scales.push_back(lay_out_tile(Operand::A, kt[t], mb[i], o, plan.element_bytes, pack, offset, step));
        }
      }
      // A's buffer was last read by its previous step: two steps back when double buffered.
      const unsigned a_reuse = double_buffered ? 2 : 1;
      for (std::size_t l = panel_loads; l < step.loads.size(); ++l)
        step.loads[l].reuse_distance = s >= a_reuse ? a_reuse : 0;
      // choose_panels() sized the panel and the step for full tiles, the largest.
      if (offset > budget)
        throw PlanError("internal: a B-panel step needs " + std::to_string(offset) + " SBUF bytes per partition, over "
                        "the budget of " + std::to_string(budget));
      for (std::size_t t = 0; t < kt.size(); ++t)
        program_ktile(r, mb, nt, kt[t], t, kt.size(), at[t], o, span, encoded, step, plan.stats);
      for (const auto& l : step.loads) plan.stats.sbuf_bytes_loaded += l.partitions() * l.bytes_per_partition();
      plan.stats.peak_sbuf_bytes_per_partition = std::max(plan.stats.peak_sbuf_bytes_per_partition, offset);
      add_reads(r, mb, nt, o, span, step, plan.stats);
      ++plan.stats.steps;
      if (!visit(step)) return false;
    }
  }
  return true;
}

std::string text(std::size_t v) { return std::to_string(v); }

// The MX options: a generation with an MX matmul, an element type the host quantizes to, no dense-only mode.
void validate_mx(const GemmOptions& o) {
  const std::string gen(isa::name(o.gen));
  if (!isa::is_v4_plus(o.gen))
    throw PlanError("options.mx: " + gen + " has no MX matmul (MX sources start at v4: LDWEIGHTS_MX / MATMUL_MX on "
                    "MARIANA and MARIANA_PLUS, LDWEIGHTS / MATMUL with the MXTENSOR_V2 source on MAVERICK)");
  if (!is_host_mx_dtype(o.dtype))
    throw PlanError("options.dtype = " + std::string(isa::name(o.dtype)) + ": the host quantizes MX operands to "
                    "FP8_EXP4 (e4m3fn), FP8_EXP5 (e5m2) or FP4_EXP2 (e2m1) only");
  if (o.double_row)
    throw PlanError("options.double_row: fp8 double_row packs dense operands; an MX source packs its rows by "
                    "its perf mode (" + mx_perf_mode_name(*o.mx) + ")");
  if (o.fp32_mode != isa::Fp32Mode::None)
    throw PlanError("options.fp32_mode = " + std::string(isa::name(o.fp32_mode)) + ": MX operands take none");
}

// The sparse options: a generation with MATMUL_SPARSE, a 16-bit dtype a TAG_WEIGHT load carries, no other mode,
// and the four row groups a 4-bit tag names.
void validate_sparse(const GemmOptions& o) {
  const std::string gen(isa::name(o.gen)), pattern = sparsity_name(*o.sparsity);
  if (!isa::exists_in(isa::Opcode::MATMUL_SPARSE, o.gen))
    throw PlanError("options.sparsity: " + gen + " has no MATMUL_SPARSE");
  if (!is_sparse_dtype(o.dtype))
    throw PlanError("options.dtype = " + std::string(isa::name(o.dtype)) + ": sparsity " + pattern +
                    " loads A as TAG_WEIGHT {u16 weight, u16 tag} elements, whose weight is BFLOAT16 or FP16");
  if (o.mx) throw PlanError("options.sparsity: " + pattern + " and MX operands do not combine (no MX sparse matmul)");
  if (o.double_row)
    throw PlanError("options.double_row: a sparse matmul multiplies one weight per PE cell; double_row packs two");
  if (o.fp32_mode != isa::Fp32Mode::None)
    throw PlanError("options.fp32_mode = " + std::string(isa::name(o.fp32_mode)) + ": sparse operands take none");
  const isa::ArrayGeometry& geo = geometry_of(o);
  const unsigned tag_groups = pe::kTagLimit >> pe::kFmapSelectBits;
  if (geo.row_groups != tag_groups)
    throw PlanError("options.geometry: " + std::to_string(geo.row_groups) + " row groups; a 4-bit tag names " +
                    std::to_string(tag_groups) + " (D-SPARSE-SELECT), which the host's compression assumes");
}

}  // namespace

TileLimits tile_limits(const isa::ArrayGeometry& geo, isa::Generation gen) {
  constexpr unsigned kFp32Bytes = 4;
  TileLimits t;
  t.m = geo.pe_cols;
  t.k = geo.pe_rows;
  t.folds = geo.pe_cols > geo.partitions;
  t.n_default = geo.psum_bank_bytes / kFp32Bytes;
  // v3 keeps a matmul's output in one bank (mm.psum_footprint); from v4 it may span the partition.
  t.n = isa::is_v4_plus(gen) ? geo.psum_partition_bytes() / kFp32Bytes / (t.folds ? 2 : 1) : t.n_default;
  return t;
}

const isa::ArrayGeometry& geometry_of(const GemmOptions& o) {
  return o.geometry ? *o.geometry : isa::preset_geometry(o.gen);
}

std::uint32_t sbuf_address(const isa::ArrayGeometry& geo, std::uint32_t partition, std::uint32_t offset) {
  return isa::ArrayGeometry::kSbufBase + partition * geo.sbuf_partition_bytes + offset;
}

std::uint32_t psum_address(const isa::ArrayGeometry& geo, std::uint32_t partition, std::uint32_t bank,
                           std::uint32_t offset) {
  return isa::ArrayGeometry::kPsumBase + partition * geo.psum_partition_bytes() + bank * geo.psum_bank_bytes + offset;
}

void validate_gemm(const GemmShape& shape, const GemmOptions& o, std::uint64_t max_matmuls) {
  for (const auto& [dim, v] : {std::pair{"M", shape.m}, std::pair{"K", shape.k}, std::pair{"N", shape.n}})
    if (v == 0) throw PlanError(std::string("shape: ") + dim + " = 0: every GEMM dimension must be at least 1");
  const isa::ArrayGeometry& geo = geometry_of(o);
  if (const auto e = isa::check_geometry(geo, o.gen)) throw PlanError("options.geometry: " + e->describe());
  const TileLimits limits = tile_limits(geo, o.gen);
  const std::string gen(isa::name(o.gen));
  if (o.tile_n < 1 || o.tile_n > limits.n)
    throw PlanError("options.tile_n = " + text(o.tile_n) + ": must be 1.." + text(limits.n) + " (fp32 elements of " +
                    (isa::is_v4_plus(o.gen) ? std::string("a PSUM partition's ") + text(geo.psum_banks) + " banks" +
                                                  (limits.folds ? ", halved for the two halves of a c256 tile" : "")
                                            : "one " + text(geo.psum_bank_bytes) + "-byte PSUM bank, as " + gen +
                                                  " keeps a matmul in one bank") +
                    ")");
  if (o.mx) validate_mx(o);
  if (o.sparsity) validate_sparse(o);
  if (o.double_row) {
    if (isa::is_maverick(o.gen))
      throw PlanError("options.double_row: fp8 double_row is perf_opt, a field of CAYMAN and MARIANA(_PLUS); " + gen +
                      "'s perf_mode pumps MX sources only");
    if (!isa::is_fp8(o.dtype))
      throw PlanError("options.double_row: double_row packs two fp8 rows per partition; the dtype is " +
                      std::string(isa::name(o.dtype)));
  }
  if (std::string e = o.mx || o.sparsity ? std::string() : pe::operand_error({o.gen, o.dtype, o.fp32_mode}); !e.empty())
    throw PlanError("options.dtype / options.fp32_mode (" + std::string(isa::name(o.dtype)) + ", " +
                    std::string(isa::name(o.fp32_mode)) + ") on " + gen + ": " + e);
  // A materialised plan holds 64 bytes per instruction, so a shape whose program could not be held in memory is
  // refused up front with its size rather than failing in an allocation half way; a walked one holds one step.
  // Ceiling divisions that cannot wrap for a dimension near SIZE_MAX; every count is >= 1 (checked above).
  auto tiles_of = [](std::size_t v, std::size_t t) -> std::uint64_t { return v / t + (v % t != 0); };
  const std::size_t k_tile = limits.k * rows_per_partition(o);
  const std::uint64_t tiles[] = {tiles_of(shape.m, limits.m), tiles_of(shape.k, k_tile), tiles_of(shape.n, o.tile_n)};
  const bool too_many = tiles[0] > max_matmuls || tiles[1] > max_matmuls / tiles[0] ||
                        tiles[2] > max_matmuls / (tiles[0] * tiles[1]);
  if (too_many)
    throw PlanError("shape " + text(shape.m) + " x " + text(shape.k) + " x " + text(shape.n) + " with tile_n " +
                    text(o.tile_n) + ": needs more than " + text(max_matmuls) + " matmuls, the most " +
                    (max_matmuls == kMaxMatmuls ? "one materialised plan holds (a 1 GiB program)"
                                                : "a walked plan runs (days of simulation)") +
                    "; split the GEMM");
  const std::size_t need =
      tile_bytes(o, std::min(shape.m, limits.m)) + tile_bytes(o, std::min<std::size_t>(shape.n, o.tile_n));
  // What one k-tile of one output tile holds per partition, for the messages below.
  const std::string what =
      text(std::min(shape.m, limits.m)) + " stationary + " + text(std::min<std::size_t>(shape.n, o.tile_n)) +
      (o.mx ? " moving columns of " + text(mx_words(o)) + " x4 word(s) of " + text(element_bytes_of(o)) +
                  " bytes and as many E8M0 scale bytes"
            : " moving elements of " + text(element_bytes_of(o) * rows_per_partition(o)) + " bytes") +
      ", each region 4-byte aligned";
  if (o.sbuf_buffers < 1 || o.sbuf_buffers > 2)
    throw PlanError("options.sbuf_buffers = " + text(o.sbuf_buffers) + ": 1 (single) or 2 (double buffering)");
  if (o.sbuf_buffers > 1 && budget_of(o) < need)
    throw PlanError("options.sbuf_buffers = 2: each buffer holds " + text(budget_of(o)) +
                    " SBUF bytes per partition, one k-tile of one output tile needs " + text(need) + " (" + what +
                    "); a smaller tile_n needs less, or use one buffer");
  if (!o.sbuf_bytes_per_partition && geo.sbuf_partition_bytes < need)
    throw PlanError("geometry.sbuf_partition_bytes = " + text(geo.sbuf_partition_bytes) +
                    ": one k-tile of one output tile needs " + text(need) + " bytes per partition (" + what +
                    "); a smaller tile_n needs less");
  if (o.sbuf_bytes_per_partition) {
    const std::uint32_t cap = *o.sbuf_bytes_per_partition;
    if (cap > geo.sbuf_partition_bytes)
      throw PlanError("options.sbuf_bytes_per_partition = " + text(cap) + ": " + gen + "'s SBUF partitions hold " +
                      text(geo.sbuf_partition_bytes) + " bytes");
    if (cap < need)
      throw PlanError("options.sbuf_bytes_per_partition = " + text(cap) + ": one k-tile of one output tile needs " +
                      text(need) + " bytes per partition (" + what + ")");
  }
}

namespace {

// The walk under the limit of what will hold its steps: kMaxMatmuls when they are kept, kMaxWalkedMatmuls not.
GemmPlan walk(const GemmShape& shape, const GemmOptions& options, std::uint64_t max_matmuls, const StepVisitor& visit) {
  validate_gemm(shape, options, max_matmuls);
  GemmPlan plan;
  plan.shape = shape;
  plan.options = options;
  plan.element_bytes = element_bytes_of(options);
  const isa::ArrayGeometry& geo = geometry_of(options);
  const TileLimits limits = tile_limits(geo, options.gen);
  plan.k_tile = limits.k * rows_per_partition(options);
  const auto mb = split(shape.m, limits.m), kt = split(shape.k, plan.k_tile), nt = split(shape.n, options.tile_n);
  const unsigned span = bank_span(shape, options);
  const std::size_t per_round = geo.psum_banks / span;
  const auto rounds = make_rounds(mb, nt, options, budget_of(options), per_round);
  const auto panels = choose_panels(rounds, mb, nt, kt.size(), options, span, per_round);
  InstructionCache encoded(plan.options);
  try {
    if (panels) {
      const std::size_t count = (nt.size() + panels->ntiles - 1) / panels->ntiles;
      plan.stats.b_panels = count;
      plan.stats.b_panel_ntiles = panels->ntiles;
      plan.stats.b_panel_mblocks = panels->mblocks;
      plan.stats.rounds = count * ((mb.size() + panels->mblocks - 1) / panels->mblocks);
      plan.psum_buffers = panels->psum_half_banks ? 2 : 1;
      plan.image_chunk_a = panels->mblocks * limits.m;
      plan.image_chunk_b = panels->ntiles * options.tile_n;
      plan_panels(*panels, mb, nt, kt, span, encoded, plan, visit);
    } else {
      plan.stats.rounds = rounds.size();
      for (const Round& r : rounds)
        if (!plan_round(r, mb, nt, kt, span, encoded, plan, visit)) break;
    }
  } catch (const isa::EncodeError& e) {
    // validate_gemm() admits only encodable options, so this is a planner bug; still an error, not a crash.
    throw PlanError(std::string("internal: an instruction of the plan does not encode: ") + e.what());
  }
  return plan;
}

}  // namespace

GemmPlan walk_gemm(const GemmShape& shape, const GemmOptions& options, const StepVisitor& visit) {
  return walk(shape, options, kMaxWalkedMatmuls, visit);
}

GemmPlan plan_gemm(const GemmShape& shape, const GemmOptions& options) {
  std::vector<Step> steps;
  GemmPlan plan = walk(shape, options, kMaxMatmuls, [&](Step& step) {
    steps.push_back(std::move(step));
    return true;
  });
  plan.steps = std::move(steps);
  return plan;
}

GemmPlan plan_summary(const GemmShape& shape, const GemmOptions& options) {
  return walk_gemm(shape, options, [](Step&) { return true; });
}

void check_operands(const GemmPlan& plan, const EncodedOperand& a, const EncodedOperand& b) {
  const GemmShape& s = plan.shape;
  auto shape_text = [](std::size_t r, std::size_t c) { return "(" + text(r) + ", " + text(c) + ")"; };
  if (a.rows != s.m || a.cols != s.k)
    throw HostError("operand A is " + shape_text(a.rows, a.cols) + " but the plan needs M x K = " +
                    shape_text(s.m, s.k));
  if (b.rows != s.k || b.cols != s.n)
    throw HostError("operand B is " + shape_text(b.rows, b.cols) + " but the plan needs K x N = " +
                    shape_text(s.k, s.n));
  for (const auto& [what, op] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    if (op->dtype != plan.options.dtype || op->gen != plan.options.gen)
      throw HostError(std::string("operand ") + what + " is " + std::string(isa::name(op->dtype)) + " for " +
                      std::string(isa::name(op->gen)) + " but the plan is " +
                      std::string(isa::name(plan.options.dtype)) + " for " +
                      std::string(isa::name(plan.options.gen)));
    const bool mx = plan.options.mx.has_value();
    if (op->mx != plan.options.mx || (mx && op->mx_k_tile != plan.k_tile))
      throw HostError(std::string("operand ") + what + " is " +
                      (op->mx ? "MX (" + mx_perf_mode_name(*op->mx) + ", k-tile " + text(op->mx_k_tile) + ")"
                              : std::string("dense")) +
                      " but the plan is " +
                      (mx ? "MX (" + mx_perf_mode_name(*plan.options.mx) + ", k-tile " + text(plan.k_tile) + ")"
                          : std::string("dense")));
    // A sparse plan's A is pruned to its pattern (B stays dense); a dense plan takes no pruned operand.
    const auto& want = op == &a ? plan.options.sparsity : std::optional<SparsePattern>();
    if (op->sparsity != want || (op->sparsity && op->sparse_kept.size() != op->rows * op->cols))
      throw HostError(std::string("operand ") + what + " is " +
                      (op->sparsity ? "pruned " + sparsity_name(*op->sparsity) : std::string("dense")) +
                      " but the plan needs it " + (want ? "pruned " + sparsity_name(*want) : std::string("dense")));
    // MX operands hold one element code per byte (the plan's element is a packed x4 word).
    if (op->bytes.size() != op->rows * op->cols * op->element_bytes ||
        op->element_bytes != (mx ? 1 : plan.element_bytes) || (mx && op->mx_scales.size() != op->bytes.size()))
      throw HostError(std::string("operand ") + what + ": its byte buffer does not match its shape and dtype");
  }
}

namespace {

// Whether an MX load fits its operand: words of the operand's dtype, the operand quantized in the load's perf mode,
// and the load exactly one of the k-tiles its blocks were formed in.
bool mx_load_fits(const SbufLoad& l, const EncodedOperand& op, std::size_t k_extent) {
  if (l.content == SbufContent::Elements || l.sparse()) return !op.mx;
  if (!op.mx || *op.mx != l.mx_mode || op.mx_k_tile == 0 || op.mx_scales.size() != op.bytes.size()) return false;
  if (l.rows_per_partition != mx_layout(l.mx_mode).rows || l.element_bytes != pe::mx_word_bytes(op.dtype))
    return false;
  return l.k0 % op.mx_k_tile == 0 && l.k_count == std::min(op.mx_k_tile, k_extent - l.k0);
}

// A plan may come from elsewhere (edited, deserialised): never read outside the operand.
void check_load(const SbufLoad& l, const EncodedOperand& a, const EncodedOperand& b) {
  const EncodedOperand& op = l.operand == Operand::A ? a : b;
  const std::size_t k_extent = l.operand == Operand::A ? op.cols : op.rows;
  const std::size_t f_extent = l.operand == Operand::A ? op.rows : op.cols;
  const bool dense = l.content == SbufContent::Elements;
  // A sparse load: a pruned A (weights) or B (fmaps), F rows per partition, within its whole-tile k-tile.
  const bool sparse_bad = l.sparse() && (l.element_bytes != op.element_bytes || l.rows_per_partition < pe::kMinFmaps ||
                                         l.rows_per_partition > pe::kMaxFmaps ||
                                         l.k_count > std::size_t{l.sparse_rows} * l.rows_per_partition ||
                                         (l.content == SbufContent::SparseWeights) != (l.operand == Operand::A) ||
                                         (l.operand == Operand::A && !op.sparsity));
  if (l.k0 > k_extent || l.k_count > k_extent - l.k0 || l.f0 > f_extent || l.f_count > f_extent - l.f0 ||
      (dense && (l.rows_per_partition < 1 || l.rows_per_partition > 2 || l.element_bytes != op.element_bytes)) ||
      !mx_load_fits(l, op, k_extent) || sparse_bad || op.bytes.size() != op.rows * op.cols * op.element_bytes)
    throw HostError(std::string("SBUF load of operand ") + (l.operand == Operand::A ? "A" : "B") + " (k " +
                    text(l.k0) + "+" + text(l.k_count) + ", free " + text(l.f0) + "+" + text(l.f_count) + ", " +
                    text(l.element_bytes) + "-byte elements, " + text(l.rows_per_partition) +
                    " row(s) per partition) does not fit the " + text(op.rows) + " x " +
                    text(op.cols) + " operand of " + text(op.element_bytes) + "-byte elements");
}

// Rows i0 .. i1 - 1 of an A load of ES-byte elements: the row of partition i gathers column k0 + i of A (A is stored
// transposed). ES is a constant so that each element moves as one load and store, not a memcpy call. The rows go in
// blocks of one cache line of A's row (64 / ES partitions): each line of A is read once per block, not once per
// partition -- 3.6x faster than row by row for a 128 x 128 bf16 tile of a 4096 x 4096 A, whose rows lie 8 KiB apart.
template <std::size_t ES>
void gather_a_rows(const SbufLoad& l, const EncodedOperand& a, std::uint8_t* out, std::size_t i0, std::size_t i1) {
  constexpr std::size_t kBlock = 64 / ES;
  const std::size_t row = l.f_count * ES;
  for (std::size_t b0 = i0; b0 < i1; b0 += kBlock) {
    const std::size_t rows = std::min(kBlock, i1 - b0);
    for (std::size_t j = 0; j < l.f_count; ++j) {
      const std::uint8_t* src = a.element(l.f0 + j, l.k0 + b0);
      std::uint8_t* p = out + b0 * row + j * ES;
      for (std::size_t r = 0; r < rows; ++r) std::memcpy(p + r * row, src + r * ES, ES);
    }
  }
}

// The rows of an A load, shared out by rows over up to `threads` host threads (a quarter of kMinCopyShareBytes each:
// a gather costs more per byte than a copy).
void gather_a(const SbufLoad& l, const EncodedOperand& a, std::uint8_t* p, unsigned threads) {
  const std::size_t es = l.element_bytes, row = l.f_count * es;
  const std::size_t min_rows = kMinCopyShareBytes / 4 / std::max<std::size_t>(row, 1);
  pe::for_each_share(l.k_count, min_rows, threads, [&](std::size_t i0, std::size_t i1) {
    switch (es) {
      case 1: return gather_a_rows<1>(l, a, p, i0, i1);
      case 2: return gather_a_rows<2>(l, a, p, i0, i1);
      case 4: return gather_a_rows<4>(l, a, p, i0, i1);
      default:  // check_load admits 1, 2 and 4-byte elements only
        for (std::size_t i = i0; i < i1; ++i)
          for (std::size_t j = 0; j < l.f_count; ++j)
            std::memcpy(p + (i * l.f_count + j) * es, a.element(l.f0 + j, l.k0 + i), es);
    }
  });
}

// The rows of a double_row load: partition i's free index j holds the pair of contraction indices k0 + 2i, k0 + 2i + 1
// (zeros past k_count).
void gather_pairs(const SbufLoad& l, const EncodedOperand& a, const EncodedOperand& b, std::uint8_t* p) {
  const std::size_t es = l.element_bytes;
  std::memset(p, 0, l.partitions() * l.bytes_per_partition());
  for (std::size_t i = 0; i < l.partitions(); ++i)
    for (std::size_t j = 0; j < l.f_count; ++j)
      for (std::size_t r = 0; r < 2; ++r, p += es) {
        const std::size_t k = 2 * i + r;
        if (k >= l.k_count) continue;
        std::memcpy(p, l.operand == Operand::A ? a.element(l.f0 + j, l.k0 + k) : b.element(l.k0 + k, l.f0 + j), es);
      }
}

// The contraction row `r` (of the load's k-tile) of free index j: its element code and its block's scale, or
// nullopt past k_count (the zeros a ragged k-tile is padded with).
struct MxCell {
  std::uint8_t code = 0, scale = 0;
};
std::optional<MxCell> mx_cell(const SbufLoad& l, const EncodedOperand& op, std::size_t r, std::size_t j) {
  if (r >= l.k_count) return std::nullopt;
  const std::size_t k = l.k0 + r, f = l.f0 + j;
  const std::size_t i = l.operand == Operand::A ? f * op.cols + k : k * op.cols + f;
  return MxCell{op.bytes[i], op.mx_scales[i]};
}

// The rows of an MX words load: partition p, free index j, word w packs the codes of values v = 0..3 at contraction
// rows layout.row(p, 4w + v) -- fp8 byte v, fp4 nibble v of the little-endian u16 (low nibble first).
void gather_mx_words(const SbufLoad& l, const EncodedOperand& op, std::uint8_t* out) {
  const MxLayout layout = mx_layout(l.mx_mode);
  const std::size_t parts = l.data_partitions(), wb = l.element_bytes, per = l.bytes_per_partition();
  const bool nibbles = wb < kMxWordValues;
  std::memset(out, 0, parts * per);
  for (std::size_t p = 0; p < parts; ++p)
    for (std::size_t j = 0; j < l.f_count; ++j)
      for (unsigned w = 0; w < layout.words(); ++w) {
        std::uint8_t* word = out + p * per + (j * layout.words() + w) * wb;
        for (unsigned v = 0; v < kMxWordValues; ++v) {
          const auto cell = mx_cell(l, op, layout.row(p, w * kMxWordValues + v, parts), j);
          if (!cell) continue;
          if (nibbles)
            word[v / 2] |= static_cast<std::uint8_t>((cell->code & 0xFu) << (4 * (v % 2)));
          else
            word[v] = cell->code;
        }
      }
}

// The rows of an MX scales load: partition g, byte j x words + w is the scale of the block of group g's partitions
// x word w of free index j -- the scale every data element of the block carries; a block of padding alone takes
// 0x00, the scale of an all-zero block.
void gather_mx_scales(const SbufLoad& l, const EncodedOperand& op, std::uint8_t* out) {
  const MxLayout layout = mx_layout(l.mx_mode);
  const std::size_t parts = l.data_partitions(), per = l.bytes_per_partition();
  std::memset(out, 0, l.partitions() * per);
  for (std::size_t g = 0; g < l.partitions(); ++g)
    for (std::size_t j = 0; j < l.f_count; ++j)
      for (unsigned w = 0; w < layout.words(); ++w) {
        std::optional<MxCell> cell;
        const std::size_t p0 = g * kMxBlockPartitions;
        for (std::size_t p = p0; !cell && p < std::min(parts, p0 + kMxBlockPartitions); ++p)
          for (unsigned v = 0; !cell && v < kMxWordValues; ++v)
            cell = mx_cell(l, op, layout.row(p, w * kMxWordValues + v, parts), j);
        if (cell) out[g * per + j * layout.words() + w] = cell->scale;
      }
}

}  // namespace

std::vector<std::uint8_t> load_payload(const SbufLoad& l, const EncodedOperand& a, const EncodedOperand& b) {
  std::vector<std::uint8_t> out;
  const LoadRows rows = load_rows(l, a, b, out);
  if (l.operand == Operand::A || l.rows_per_partition != 1) return out;
  const std::size_t row = l.bytes_per_partition();
  out.resize(l.k_count * row);
  for (std::size_t i = 0; i < l.k_count; ++i) std::memcpy(out.data() + i * row, rows.data + i * rows.stride, row);
  return out;
}

LoadRows load_rows(const SbufLoad& l, const EncodedOperand& a, const EncodedOperand& b,
                   std::vector<std::uint8_t>& scratch, unsigned threads) {
  check_load(l, a, b);
  if (l.sparse()) {
    scratch.resize(l.partitions() * l.bytes_per_partition());
    if (l.content == SbufContent::SparseWeights)
      gather_sparse_weights(a, *a.sparsity, l.sparse_rows, l.k0, l.k_count, l.f0, l.f_count, scratch.data());
    else
      gather_sparse_fmaps(b, SparsePattern{0, 0, l.rows_per_partition}, l.sparse_rows, l.k0, l.k_count, l.f0, l.f_count,
                          scratch.data());
    return {scratch.data(), l.bytes_per_partition()};
  }
  if (l.content != SbufContent::Elements) {
    const EncodedOperand& op = l.operand == Operand::A ? a : b;
    scratch.resize(l.partitions() * l.bytes_per_partition());
    if (l.content == SbufContent::MxWords)
      gather_mx_words(l, op, scratch.data());
    else
      gather_mx_scales(l, op, scratch.data());
    return {scratch.data(), l.bytes_per_partition()};
  }
  if (l.rows_per_partition == 2) {
    scratch.resize(l.partitions() * l.bytes_per_partition());
    gather_pairs(l, a, b, scratch.data());
    return {scratch.data(), l.bytes_per_partition()};
  }
  if (l.operand == Operand::B) return {b.element(l.k0, l.f0), b.cols * b.element_bytes};
  scratch.resize(l.k_count * l.bytes_per_partition());
  gather_a(l, a, scratch.data(), threads);
  return {scratch.data(), l.bytes_per_partition()};
}

void store_read(const PsumRead& r, const std::uint8_t* bytes, Matrix& c) {
  store_read(r, bytes, std::size_t{r.elements} * 4, c);
}

void store_read(const PsumRead& r, const std::uint8_t* bytes, std::size_t row_stride, Matrix& c, unsigned threads) {
  if (r.row0 > c.rows || r.partitions > c.rows - r.row0 || r.col0 > c.cols || r.elements > c.cols - r.col0 ||
      c.data.size() != c.rows * c.cols)
    throw HostError("PSUM read-back of " + text(r.partitions) + " x " + text(r.elements) + " at C[" + text(r.row0) +
                    "][" + text(r.col0) + "] does not fit the " + text(c.rows) + " x " + text(c.cols) + " result");
  const std::size_t min_rows = kMinCopyShareBytes / std::max<std::size_t>(std::size_t{r.elements} * 4, 1);
  pe::for_each_share(r.partitions, min_rows, threads, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t p = p0; p < p1; ++p)
      for (std::size_t j = 0; j < r.elements; ++j) {
        const std::uint8_t* e = bytes + p * row_stride + j * 4;
        const std::uint32_t u = static_cast<std::uint32_t>(e[0]) | static_cast<std::uint32_t>(e[1]) << 8 |
                                static_cast<std::uint32_t>(e[2]) << 16 | static_cast<std::uint32_t>(e[3]) << 24;
        c.at(r.row0 + p, r.col0 + j) = num::bits_float(u);
      }
  });
}

}  // namespace pevp::host
