// The GEMM planner (see gemm_plan.h and docs/gemm-tiling.md).
#include "pevp/host/gemm_plan.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

#include "pevp/isa/builders.h"
#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"

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
};

// Greedy rounds: add output tiles in m-major order while the round has room for one more (`per_round`, the PSUM
// banks over each tile's span) and one k-tile of all its operand tiles fits the SBUF budget. validate_gemm()
// guarantees a single tile fits. `es`: SBUF bytes per free element (x 2 for double_row's pairs).
std::vector<Round> make_rounds(const std::vector<Span>& mb, const std::vector<Span>& nt, std::size_t es,
                               std::size_t budget, std::size_t per_round) {
  auto contains = [](const std::vector<std::size_t>& v, std::size_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  // SBUF bytes per partition per k-tile once tile (i, j) joins `r`: a new m-block or n-tile adds its operand tile.
  auto bytes_with = [&](const Round& r, std::size_t i, std::size_t j) {
    return r.bytes_per_ktile + (contains(r.mblocks, i) ? 0 : region_bytes(mb[i].size, es)) +
           (contains(r.ntiles, j) ? 0 : region_bytes(nt[j].size, es));
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
// Rows of the array one k-tile's contraction covers per partition.
unsigned rows_per_partition(const GemmOptions& o) { return o.double_row ? 2 : 1; }

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

// The instructions a plan has encoded, by their arguments. A plan repeats few distinct instructions (the SBUF
// layout of every step and the PSUM banks of every round recur), and encoding one costs far more than finding it:
// large timing runs would otherwise spend more host time encoding than simulating.
class InstructionCache {
 public:
  explicit InstructionCache(const GemmOptions& o) : o_(o) {}
  const isa::RawInstruction& ldweights(std::uint32_t addr, std::size_t k, std::size_t m) {
    return find_or_encode({isa::Opcode::LDWEIGHTS, addr, 0, k, m, 0, 0}, [&] { return host::ldweights(o_, addr, k, m); });
  }
  const isa::RawInstruction& matmul(std::uint32_t src, std::uint32_t dst, std::size_t k, std::size_t m, std::size_t n,
                                    std::uint8_t flags) {
    return find_or_encode({isa::Opcode::MATMUL, src, dst, k, m, n, flags},
                          [&] { return host::matmul(o_, src, dst, k, m, n, flags, o_.tile_n); });
  }

 private:
  using Key = std::tuple<isa::Opcode, std::uint32_t, std::uint32_t, std::size_t, std::size_t, std::size_t, std::uint8_t>;
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

std::uint32_t budget_of(const GemmOptions& o) {
  return o.sbuf_bytes_per_partition.value_or(geometry_of(o).sbuf_partition_bytes);
}

// Where one k-tile's operand tiles sit in SBUF (byte offsets in partition 0..), per position in Round::mblocks /
// Round::ntiles.
struct KtileLayout {
  std::vector<std::uint32_t> a, b;
};

// Appends the loads of k-tile `k` of round `r` at `offset` (advanced past them): the A^T tile of every m-block, then
// the B tile of every n-tile.
KtileLayout lay_out_ktile(const Round& r, const std::vector<Span>& mb, const std::vector<Span>& nt, const Span& k,
                          std::size_t es, unsigned pack, std::uint32_t& offset, Step& step) {
  KtileLayout at;
  for (std::size_t i : r.mblocks) {
    at.a.push_back(offset);
    step.loads.push_back({Operand::A, k.start, k.size, mb[i].start, mb[i].size, 0, offset, es, pack});
    offset += static_cast<std::uint32_t>(region_bytes(mb[i].size * pack, es));
  }
  for (std::size_t j : r.ntiles) {
    at.b.push_back(offset);
    step.loads.push_back({Operand::B, k.start, k.size, nt[j].start, nt[j].size, 0, offset, es, pack});
    offset += static_cast<std::uint32_t>(region_bytes(nt[j].size * pack, es));
  }
  return at;
}

// Appends k-tile `t` (of `tiles`) of round `r` to the step's program: one stationary per m-block, then the matmuls of
// that m-block's output tiles, output tile u of the round into PSUM banks u x span ...
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
    step.program.push_back(encoded.ldweights(sbuf_address(geometry_of(o), 0, at.a[ip]), k.size, m.size));
    ++stats.instructions[isa::Opcode::LDWEIGHTS];
    for (std::size_t u = 0; u < r.units.size(); ++u) {
      if (r.units[u].first != r.mblocks[ip]) continue;
      const Span& n = nt[r.units[u].second];
      const std::uint32_t src = sbuf_address(geometry_of(o), 0, at.b[pos(r.ntiles, r.units[u].second)]);
      const std::uint32_t dst = psum_address(geometry_of(o), 0, static_cast<std::uint32_t>(u * span), 0);
      step.program.push_back(encoded.matmul(src, dst, k.size, m.size, n.size, group_flags(t, tiles)));
      ++stats.instructions[isa::Opcode::MATMUL];
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
    const auto bank = static_cast<std::uint32_t>(u * span);
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
    std::uint32_t offset = 0;
    for (std::size_t end = t + count; t < end; ++t) {
      const KtileLayout at =
          lay_out_ktile(r, mb, nt, kt[t], plan.element_bytes, rows_per_partition(plan.options), offset, step);
      program_ktile(r, mb, nt, kt[t], t, kt.size(), at, plan.options, span, encoded, step, plan.stats);
    }
    for (const auto& l : step.loads) plan.stats.sbuf_bytes_loaded += l.partitions() * l.bytes_per_partition();
    plan.stats.peak_sbuf_bytes_per_partition = std::max(plan.stats.peak_sbuf_bytes_per_partition, offset);
    if (s + 1 == nsteps) add_reads(r, mb, nt, plan.options, span, step, plan.stats);
    ++plan.stats.steps;
    if (!visit(step)) return false;
  }
  return true;
}

std::string text(std::size_t v) { return std::to_string(v); }

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
  if (o.double_row) {
    if (isa::is_maverick(o.gen))
      throw PlanError("options.double_row: fp8 double_row is perf_opt, a field of CAYMAN and MARIANA(_PLUS); " + gen +
                      "'s perf_mode pumps MX sources only");
    if (!isa::is_fp8(o.dtype))
      throw PlanError("options.double_row: double_row packs two fp8 rows per partition; the dtype is " +
                      std::string(isa::name(o.dtype)));
  }
  if (std::string e = pe::operand_error({o.gen, o.dtype, o.fp32_mode}); !e.empty())
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
  const std::size_t es = pe::operand_bytes(o.dtype) * rows_per_partition(o);  // per free element (pairs: x 2)
  const std::size_t need =
      region_bytes(std::min(shape.m, limits.m), es) + region_bytes(std::min<std::size_t>(shape.n, o.tile_n), es);
  if (!o.sbuf_bytes_per_partition && geo.sbuf_partition_bytes < need)
    throw PlanError("geometry.sbuf_partition_bytes = " + text(geo.sbuf_partition_bytes) +
                    ": one k-tile of one output tile needs " + text(need) + " bytes per partition (" +
                    text(std::min(shape.m, limits.m)) + " stationary + " +
                    text(std::min<std::size_t>(shape.n, o.tile_n)) + " moving elements of " + text(es) +
                    " bytes, each region 4-byte aligned); a smaller tile_n needs less");
  if (o.sbuf_bytes_per_partition) {
    const std::uint32_t cap = *o.sbuf_bytes_per_partition;
    if (cap > geo.sbuf_partition_bytes)
      throw PlanError("options.sbuf_bytes_per_partition = " + text(cap) + ": " + gen + "'s SBUF partitions hold " +
                      text(geo.sbuf_partition_bytes) + " bytes");
    if (cap < need)
      throw PlanError("options.sbuf_bytes_per_partition = " + text(cap) + ": one k-tile of one output tile needs " +
                      text(need) + " bytes per partition (" + text(std::min(shape.m, limits.m)) + " stationary + " +
                      text(std::min<std::size_t>(shape.n, o.tile_n)) + " moving elements of " + text(es) +
                      " bytes, each region 4-byte aligned)");
  }
}

namespace {

// The walk under the limit of what will hold its steps: kMaxMatmuls when they are kept, kMaxWalkedMatmuls not.
GemmPlan walk(const GemmShape& shape, const GemmOptions& options, std::uint64_t max_matmuls, const StepVisitor& visit) {
  validate_gemm(shape, options, max_matmuls);
  GemmPlan plan;
  plan.shape = shape;
  plan.options = options;
  plan.element_bytes = pe::operand_bytes(options.dtype);
  const isa::ArrayGeometry& geo = geometry_of(options);
  const TileLimits limits = tile_limits(geo, options.gen);
  plan.k_tile = limits.k * rows_per_partition(options);
  const auto mb = split(shape.m, limits.m), kt = split(shape.k, plan.k_tile), nt = split(shape.n, options.tile_n);
  const unsigned span = bank_span(shape, options);
  const auto rounds = make_rounds(mb, nt, plan.element_bytes * rows_per_partition(options), budget_of(options),
                                  geo.psum_banks / span);
  plan.stats.rounds = rounds.size();
  InstructionCache encoded(plan.options);
  try {
    for (const Round& r : rounds)
      if (!plan_round(r, mb, nt, kt, span, encoded, plan, visit)) break;
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
    if (op->bytes.size() != op->rows * op->cols * op->element_bytes || op->element_bytes != plan.element_bytes)
      throw HostError(std::string("operand ") + what + ": its byte buffer does not match its shape and dtype");
  }
}

namespace {

// A plan may come from elsewhere (edited, deserialised): never read outside the operand.
void check_load(const SbufLoad& l, const EncodedOperand& a, const EncodedOperand& b) {
  const EncodedOperand& op = l.operand == Operand::A ? a : b;
  const std::size_t k_extent = l.operand == Operand::A ? op.cols : op.rows;
  const std::size_t f_extent = l.operand == Operand::A ? op.rows : op.cols;
  if (l.k0 > k_extent || l.k_count > k_extent - l.k0 || l.f0 > f_extent || l.f_count > f_extent - l.f0 ||
      l.rows_per_partition < 1 || l.rows_per_partition > 2 ||
      l.element_bytes != op.element_bytes || op.bytes.size() != op.rows * op.cols * op.element_bytes)
    throw HostError(std::string("SBUF load of operand ") + (l.operand == Operand::A ? "A" : "B") + " (k " +
                    text(l.k0) + "+" + text(l.k_count) + ", free " + text(l.f0) + "+" + text(l.f_count) + ", " +
                    text(l.element_bytes) + "-byte elements, " + text(l.rows_per_partition) +
                    " row(s) per partition) does not fit the " + text(op.rows) + " x " +
                    text(op.cols) + " operand of " + text(op.element_bytes) + "-byte elements");
}

// The rows of an A load: the row of partition k gathers column k of A (A is stored transposed).
void gather_a(const SbufLoad& l, const EncodedOperand& a, std::uint8_t* p) {
  const std::size_t es = l.element_bytes;
  for (std::size_t i = 0; i < l.k_count; ++i)
    for (std::size_t j = 0; j < l.f_count; ++j, p += es) std::memcpy(p, a.element(l.f0 + j, l.k0 + i), es);
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
                   std::vector<std::uint8_t>& scratch) {
  check_load(l, a, b);
  if (l.rows_per_partition == 2) {
    scratch.resize(l.partitions() * l.bytes_per_partition());
    gather_pairs(l, a, b, scratch.data());
    return {scratch.data(), l.bytes_per_partition()};
  }
  if (l.operand == Operand::B) return {b.element(l.k0, l.f0), b.cols * b.element_bytes};
  scratch.resize(l.k_count * l.bytes_per_partition());
  gather_a(l, a, scratch.data());
  return {scratch.data(), l.bytes_per_partition()};
}

void store_read(const PsumRead& r, const std::uint8_t* bytes, Matrix& c) {
  if (r.row0 > c.rows || r.partitions > c.rows - r.row0 || r.col0 > c.cols || r.elements > c.cols - r.col0 ||
      c.data.size() != c.rows * c.cols)
    throw HostError("PSUM read-back of " + text(r.partitions) + " x " + text(r.elements) + " at C[" + text(r.row0) +
                    "][" + text(r.col0) + "] does not fit the " + text(c.rows) + " x " + text(c.cols) + " result");
  for (std::size_t p = 0; p < r.partitions; ++p)
    for (std::size_t j = 0; j < r.elements; ++j) {
      const std::uint8_t* e = bytes + (p * r.elements + j) * 4;
      const std::uint32_t u = static_cast<std::uint32_t>(e[0]) | static_cast<std::uint32_t>(e[1]) << 8 |
                              static_cast<std::uint32_t>(e[2]) << 16 | static_cast<std::uint32_t>(e[3]) << 24;
      c.at(r.row0 + p, r.col0 + j) = num::bits_float(u);
    }
}

}  // namespace pevp::host
