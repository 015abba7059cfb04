// Every validity rule of the ISA layer. Each rule has a stable id and number
// (rules.h) and is listed with its source -- spec text or model decision -- in
// docs/isa.md. The rules judge the typed form of an instruction (instruction.h),
// so one rule serves every generation whose struct has the part; the decoded
// leaves are read only to name the field a broken rule is about (its path and
// encoded value) and for the layout-level checks (reserved bytes, unused
// patterns).
#include <algorithm>
#include <iterator>
#include <sstream>
#include <tuple>
#include <type_traits>
#include <variant>

#include "pevp/isa/access_pattern.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/rules.h"
#include "pevp/isa/tiles.h"

namespace pevp::isa {
namespace {

constexpr const auto& kMmInputs = kMatmulInputDtypes;
constexpr const auto& kMxInputs = kMxInputDtypes;
constexpr Dtype kIdentityDtypes[] = {Dtype::BFLOAT16, Dtype::FP16,     Dtype::FP32R,   Dtype::FP8_EXP2,
                                     Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5};

// PeManageSeed's hard-coded extents (spec 000 section 5.2): 16 seeds per
// partition of 128 partitions, moved through a 16 x 128 identity tile.

template <std::size_t N>
bool one_of(std::int64_t v, const Dtype (&set)[N]) {
  return std::any_of(std::begin(set), std::end(set), [&](Dtype d) { return static_cast<std::int64_t>(d) == v; });
}
template <std::size_t N>
std::string set_text(const Dtype (&set)[N]) {
  std::string s = "{";
  for (std::size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::string(name(set[i]));
  return s + "}";
}
constexpr std::int64_t ordinal(Dtype d) { return static_cast<std::int64_t>(d); }
// "16 KiB", "2 KiB", or bytes when not a whole number of KiB.
std::string size_text(std::uint32_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB" : std::to_string(bytes) + " bytes";
}
std::string hex(std::int64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// ---- the reserved leaves of each leaf set -------------------------------------------
// Which leaves are reserved is a property of the layout, not of the typed form:
// their positions are found once per leaf set (a search of every path for
// "reserved_bitfield" per instruction would cost more than all the rules).
std::vector<std::uint16_t> reserved_positions(const Decoded& d) {
  std::vector<std::uint16_t> out;
  for (std::size_t i = 0; i < d.fields.size(); ++i) {
    const Leaf& leaf = d.fields[i].leaf;
    if (leaf.kind == ValueKind::Reserved || leaf.path.find("reserved_bitfield") != std::string::npos)
      out.push_back(static_cast<std::uint16_t>(i));
  }
  return out;
}

// ---- the leaf paths a violation names --------------------------------------------------
// A pattern of the typed form and the struct field it was read from.
struct Pattern {
  const AccessPattern& p;
  std::string_view field;  // "src_mem_pattern"
};
// A leaf of a pattern ("x.start_addr", "x.num_elem[k]"), spelled out only when
// a violation names it.
struct PatternLeaf {
  std::string_view field;
  const char* sub;
  int index = -1;  // the dimension, for the sub-leaves with one per dimension
};
PatternLeaf leaf(const Pattern& p, const char* sub) { return {p.field, sub}; }
PatternLeaf dim_leaf(const Pattern& p, const char* sub, unsigned k) { return {p.field, sub, static_cast<int>(k)}; }
std::optional<std::int64_t> num_of(const AccessPattern& p, unsigned k) {
  return k < p.dims ? std::optional<std::int64_t>(p.num[k]) : std::nullopt;
}

// Records a violation when `ok` is false. A macro so that the field path and the
// message -- often built with std::string arithmetic -- are only evaluated on
// failure: decode() runs every rule for every instruction the SEQ fetches.
#define PEVP_REQUIRE(rules, ok, field, rule, message) \
  do {                                                  \
    if (!(ok)) (rules).fail((field), (rule), (message)); \
  } while (0)

// Collects the violations of one instruction.
class Rules {
 public:
  explicit Rules(const Decoded& d) : d(d), geo(d.geo), gen(d.gen) {}
  std::vector<Violation> take() { return std::move(out_); }

  // A broken rule about the leaf at `path` (its encoded value goes with it;
  // "" names no leaf).
  void fail(std::string_view path, Rule rule, std::string message) {
    out_.push_back({std::string(path), path.empty() ? 0 : d.get_or(path, 0), std::string(id(rule)), std::move(message)});
  }
  // The one-dimension forms (MXMEM_PATTERN1D, the indirect member) name
  // num_elem / step_elem without an index.
  void fail(const PatternLeaf& l, Rule rule, std::string message) {
    const std::string plain = std::string(l.field) + "." + l.sub;
    const std::string indexed = l.index < 0 ? plain : plain + "[" + std::to_string(l.index) + "]";
    fail(d.has(indexed) ? indexed : plain, rule, std::move(message));
  }
  // `actual` must be `expected` when the struct has the field.
  template <class Path>
  void equal(const std::optional<std::int64_t>& actual, std::int64_t expected, const Path& path, Rule rule,
             const char* what) {
    if (actual && *actual != expected) fail(path, rule, std::string(what) + " must be " + std::to_string(expected));
  }

  const Decoded& d;
  const ArrayGeometry& geo;
  const Generation gen;

 private:
  std::vector<Violation> out_;
};

// ---- rules every struct shares ------------------------------------------------------
void check_header_and_events(Rules& r, const Common& c) {
  PEVP_REQUIRE(r, c.inst_word_len == 16, "header.inst_word_len", Rule::kHeaderInstWordLen,
               "a 64-byte instruction has inst_word_len 16 (32-bit words)");
  const EventsPart& e = c.events;
  const auto wait_mode = static_cast<std::int64_t>(e.wait_mode), update_mode = static_cast<std::int64_t>(e.update_mode);
  PEVP_REQUIRE(r, wait_mode <= 2, "events.wait_mode", Rule::kEventsWaitMode,
               "wait_mode must be NONE(0), WAIT_GE(1) or WAIT_EQ(2)");
  PEVP_REQUIRE(r, update_mode <= 3, "events.update_mode", Rule::kEventsUpdateMode,
               "update_mode must be NONE(0), SET(1), INCREMENT(2) or DECREMENT(3)");
  for (auto [mode, sem, value, sem_path, value_path] :
       {std::tuple{wait_mode, std::int64_t{e.wait_sem}, std::int64_t{e.wait_value}, "events.wait_sem",
                   "events.wait_value"},
        std::tuple{update_mode, std::int64_t{e.update_sem}, e.update_value, "events.update_sem",
                   "events.update_value"}}) {
    if (mode == 0) {
      PEVP_REQUIRE(r, sem == 0 && value == 0, sem ? sem_path : value_path, Rule::kEventsUnusedZero,
                   "semaphore index and value must be 0 when the mode is NONE");
    } else {
      PEVP_REQUIRE(r, sem < static_cast<std::int64_t>(kNumSemaphores), sem_path, Rule::kEventsSemIndex,
                   "semaphore index must be below " + std::to_string(kNumSemaphores));
    }
  }
}

void check_reserved(Rules& r) {
  static const auto per_set = per_leaf_set<std::vector<std::uint16_t>>(reserved_positions);
  const auto set = leaf_set_number(r.d);
  const std::vector<std::uint16_t> own = set ? std::vector<std::uint16_t>{} : reserved_positions(r.d);
  for (const std::uint16_t i : set ? per_set[*set] : own) {
    const DecodedField& f = r.d.fields[i];
    if (f.value != 0)
      r.fail(f.leaf.path, Rule::kReservedZero,
             "reserved bits (byte " + std::to_string(f.leaf.offset) + ", " + std::to_string(f.leaf.size) +
                 " byte(s)) must be 0");
  }
}

// ---- access patterns ------------------------------------------------------------------
// Memory region and shape checks shared by every pattern.
void check_pattern(Rules& r, const Pattern& pat, bool want_psum, unsigned partitions) {
  const AccessPattern& p = pat.p;
  const ArrayGeometry& geo = r.geo;
  const PatternLeaf start = leaf(pat, "start_addr");
  if (p.member == PatternMember::Conflicting) {
    r.fail(start, Rule::kMempatternMarker, "start_addr sets both the MXTENSOR_V2 (0x1) and INDIRECT (bit 31) markers");
    return;
  }
  if (p.member == PatternMember::MxTensorV2 && !mx_in_dense_ops(r.gen))
    r.fail(start, Rule::kMempatternMxV5Only,
           "the MXTENSOR_V2 member (start_addr bit 0) exists only on MAVERICK; v4 uses LDWEIGHTS_MX / MATMUL_MX");
  const bool inside = want_psum ? geo.in_psum(p.start) : geo.in_sbuf(p.start);
  if (want_psum) {
    PEVP_REQUIRE(r, inside, start, Rule::kMempatternDstPsum,
                 "destination must lie in PSUM [" + hex(ArrayGeometry::kPsumBase) + ", " +
                     hex(ArrayGeometry::kPsumBase + geo.psum_bytes()) + ")");
  } else {
    PEVP_REQUIRE(r, inside, start, Rule::kMempatternSrcSbuf,
                 "source must lie in SBUF [0, " + hex(geo.sbuf_bytes()) + ") (AllowedInPSUM::False)");
  }
  if (inside && partitions > 0) {
    const std::uint32_t first = locate(p.start, want_psum ? Memory::Psum : Memory::Sbuf, geo)->partition;
    PEVP_REQUIRE(r, first + partitions <= geo.partitions, start, Rule::kMempatternPartitions,
                 "starts in partition " + std::to_string(first) + " but spans " + std::to_string(partitions) +
                     " partitions; only " + std::to_string(geo.partitions) + " exist");
  }
  if (p.member == PatternMember::MxTensorV2)
    PEVP_REQUIRE(r, geo.in_sbuf(p.scale_addr), leaf(pat, "scale_addr"), Rule::kMempatternScaleSbuf,
                 "MX scales must lie in SBUF");
  if (p.member == PatternMember::Indirect16B) {
    PEVP_REQUIRE(r, p.num[0] >= 1, leaf(pat, "num_elem"), Rule::kMempatternNumElem,
                 "an indirect pattern needs at least 1 element per index");
    PEVP_REQUIRE(r, p.num_index >= 1, leaf(pat, "num_index"), Rule::kMempatternNumElem,
                 "an indirect pattern needs at least 1 index");
    return;
  }
  for (unsigned k = 0; k < p.dims; ++k)
    PEVP_REQUIRE(r, p.num[k] >= 1, dim_leaf(pat, "num_elem", k), Rule::kMempatternNumElem,
                 "every dimension needs at least 1 element");
}

// ---- tiles -------------------------------------------------------------------------------
// The tile fields, the effective active rows/cols, and the tile they must fit in.
void check_tile(Rules& r, const TilePart& t, bool mx_row_tiling_only) {
  const ArrayGeometry& geo = r.geo;
  const TileFields& f = t.fields;
  if (f.row_grp) {
    const std::int64_t col_grp = f.col_grp.value_or(0);
    PEVP_REQUIRE(r, decode_group_mask(static_cast<std::uint8_t>(*f.row_grp)).has_value(), "row_grp", Rule::kTileRowGrp,
                 "row_grp must be a mask of aligned " + std::to_string(geo.group_rows()) +
                     "-row groups: 0x1 0x2 0x4 0x8 0x3 0xC 0xF");
    PEVP_REQUIRE(r, decode_group_mask(static_cast<std::uint8_t>(col_grp)).has_value(), "col_grp", Rule::kTileColGrp,
                 "col_grp must be a mask of aligned " + std::to_string(geo.group_cols()) +
                     "-column groups: 0x1 0x2 0x4 0x8 0x3 0xC 0xF");
    if (mx_row_tiling_only)
      PEVP_REQUIRE(r, col_grp == 0xF, "col_grp", Rule::kMxRowTilingOnly, "MX matmul tiles rows only: col_grp must be 0xF");
  } else if (f.size_row) {
    const std::int64_t row = *f.size_row, col = f.size_col.value_or(0);
    const std::int64_t row_sel = f.row_sel.value_or(0), col_sel = f.col_sel.value_or(0);
    PEVP_REQUIRE(r, row == tile_size::R64 || row == tile_size::R128, "tile_size.row", Rule::kTileSizeRow,
                 "tile_size.row must be R64 (6) or R128 (7)");
    PEVP_REQUIRE(r, col == tile_size::C128 || col == tile_size::C256, "tile_size.col", Rule::kTileSizeCol,
                 "tile_size.col must be C128 (7) or C256 (8)");
    PEVP_REQUIRE(r, row_sel <= 1, "tile_sel.row_sel", Rule::kTileSelRange, "row_sel must be <= 1 (valid_pe_tile_select)");
    PEVP_REQUIRE(r, col_sel <= 1, "tile_sel.col_sel", Rule::kTileSelRange, "col_sel must be <= 1 (valid_pe_tile_select)");
    if (row == tile_size::R128)
      PEVP_REQUIRE(r, row_sel == 0, "tile_sel.row_sel", Rule::kTileSelFits,
                   "an R128 tile spans every row: row_sel must be 0");
    if (col == tile_size::C256)
      PEVP_REQUIRE(r, col_sel == 0, "tile_sel.col_sel", Rule::kTileSelFits, "the tile spans every column: col_sel must be 0");
  }
  const auto& tile = t.rect;
  if (!tile || !f.num_active_rows) return;
  const std::int64_t rows = active_extent(*f.num_active_rows, tile->rows);
  PEVP_REQUIRE(r, rows >= 1 && rows <= static_cast<std::int64_t>(tile->rows), "num_active_rows",
               Rule::kTileNumActiveRows, "num_active_rows must be 1.." + std::to_string(tile->rows) + " (the tile's rows)");
  std::int64_t cols = f.num_active_cols.value_or(0);
  if (is_maverick(r.gen) && cols == 0) {
    PEVP_REQUIRE(r, tile->cols == kActiveZeroMeans, "num_active_cols", Rule::kTileNumActiveCols,
                 geo.pe_cols == kActiveZeroMeans
                     ? std::string("num_active_cols 0 means the full 256 columns and needs tile_size.col C256")
                     : "num_active_cols 0 means 256 columns and needs a 256-column tile (tile_size.col C256 is " +
                           std::to_string(geo.pe_cols) + " columns on this array)");
    return;
  }
  cols = active_extent(cols, tile->cols);
  PEVP_REQUIRE(r, cols >= 1 && cols <= static_cast<std::int64_t>(tile->cols), "num_active_cols",
               Rule::kTileNumActiveCols,
               "num_active_cols must be 1.." + std::to_string(tile->cols) + " (the tile's columns)");
}

// The source's partitions: one per active PE row.
unsigned src_partitions(const TilePart& t) { return t.active_rows; }

// The destination's partitions: one per active PE column. 0 is 256 columns on
// MAVERICK and on any 256-wide tile (D-GEOMETRY); more columns than partitions
// fold (c256).
unsigned dst_partitions(const Rules& r, const TilePart& t) {
  const std::int64_t cols = t.fields.num_active_cols.value_or(0);
  const bool zero_is_256 = cols == 0 && (is_maverick(r.gen) || (t.rect && t.rect->cols == kActiveZeroMeans));
  return static_cast<unsigned>(
      std::min<std::int64_t>(zero_is_256 ? kActiveZeroMeans : cols, r.geo.partitions));
}

// ---- dtypes --------------------------------------------------------------------------------
void check_in_dtype(Rules& r, const OperandPart& in, bool mx_source) {
  const std::int64_t dtype = in.dtype_raw;
  if (mx_source)
    PEVP_REQUIRE(r, one_of(dtype, kMxInputs), "in_dtype", Rule::kMxInDtype,
                 "an MX source dtype must be one of " + set_text(kMxInputs));
  else
    PEVP_REQUIRE(r, one_of(dtype, kMmInputs), "in_dtype", Rule::kMmInDtype,
                 "a matmul input dtype must be one of " + set_text(kMmInputs) + " (tf32 is FP32 with fp32_mode Low)");
  if (!in.has_fp32_mode) return;
  const std::int64_t mode = in.fp32_mode_raw;
  PEVP_REQUIRE(r, mode <= 3, "fp32_mode", Rule::kFp32ModeRange,
               "fp32_mode must be None(0), Low(1), High(2) or Low_High(3)");
  if (dtype == ordinal(Dtype::FP32))
    PEVP_REQUIRE(r, mode != 0, "fp32_mode", Rule::kFp32ModeDtype, "FP32 input needs fp32_mode Low, High or Low_High");
  else
    PEVP_REQUIRE(r, mode == 0, "fp32_mode", Rule::kFp32ModeDtype, "a non-FP32 input needs fp32_mode None");
}

void check_out_dtype(Rules& r, std::int64_t out) {
  const bool fp32 = out == 0 || out == ordinal(Dtype::FP32);
  const bool bf16 = out == ordinal(Dtype::BFLOAT16);
  if (is_v4_plus(r.gen))
    PEVP_REQUIRE(r, fp32 || bf16, "out_dtype", Rule::kMmOutDtype, "out_dtype must be 0 (=FP32), FP32 or BFLOAT16");
  else  // spec 000 section 8: "out_dtype == 0 (= FP32) on NC-v2/v3"
    PEVP_REQUIRE(r, out == 0, "out_dtype", Rule::kMmOutDtype,
                 "out_dtype must be 0 (= FP32) on NeuronCore-v3; FP32 and BFLOAT16 are the v4+ encodings");
}

// ---- PSUM groups -------------------------------------------------------------------------------
void check_psum_group(Rules& r, const PsumPart& p) {
  if (p.group_flags) {
    const std::uint8_t f = *p.group_flags;
    PEVP_REQUIRE(r, (f & ~psum_flags::kDefinedBits) == 0, "psum_accumulate_flags", Rule::kPsumAccumulateFlags,
                 "only BEGIN (0x1), END (0x2) and BEGIN_ACCUM (0x4) are defined");
    PEVP_REQUIRE(r, !((f & psum_flags::BEGIN_MATMUL_GROUP) && (f & psum_flags::BEGIN_ACCUM_MATMUL_GROUP)),
                 "psum_accumulate_flags", Rule::kPsumAccumulateFlags,
                 "BEGIN (zero, then write) and BEGIN_ACCUM (accumulate onto PSUM) exclude each other");
  }
  PEVP_REQUIRE(r, p.zero_region <= 3, "psum_zero_region", Rule::kPsumZeroRegion,
               "psum_zero_region must be 0..3 (1, 2, 4 or 8 banks)");
}

// The destination footprint: v3 keeps a matmul output inside one PSUM bank
// (moving free size <= 512 fp32); v4+ may span the banks of one partition.
void check_dst_footprint(Rules& r, const Pattern& dst, std::int64_t out_dtype) {
  const AccessPattern& p = dst.p;
  const ArrayGeometry& geo = r.geo;
  if (p.member != PatternMember::Tensor3D || !geo.in_psum(p.start)) return;
  for (unsigned k = 0; k < p.dims; ++k)
    if (p.num[k] < 1) return;  // reported by mempattern.num_elem
  const unsigned elem = out_dtype == ordinal(Dtype::BFLOAT16) ? 2 : 4;
  const Location at = *locate(p.start, Memory::Psum, geo);
  const ByteRange bytes = covered_bytes(p, at.offset, elem);
  const std::int64_t bank = geo.psum_bank_bytes;
  const bool whole_partition = is_v4_plus(r.gen);
  const std::int64_t limit_lo = whole_partition ? 0 : at.offset / bank * bank;
  const std::int64_t limit_hi = whole_partition ? geo.psum_partition_bytes() : limit_lo + bank;
  PEVP_REQUIRE(r, bytes.first >= limit_lo && bytes.last < limit_hi, leaf(dst, "start_addr"), Rule::kMmPsumFootprint,
               std::string("the output occupies partition bytes ") + std::to_string(bytes.first) + ".." +
                   std::to_string(bytes.last) +
                   (whole_partition ? ", outside the partition's " + size_text(geo.psum_partition_bytes()) + " of PSUM"
                                    : ", crossing its " + size_text(geo.psum_bank_bytes) +
                                          " PSUM bank (one bank per matmul before v4)"));
}

// A PSUM destination: region, partitions, footprint, and the member a PSUM
// write can use (a TENSOR3D; mx and indirect address SBUF data).
void check_dst(Rules& r, const AccessPattern& p, unsigned partitions, std::int64_t out_dtype) {
  const Pattern dst{p, "dst_mem_pattern"};
  check_pattern(r, dst, true, partitions);
  check_dst_footprint(r, dst, out_dtype);
  if (p.member == PatternMember::MxTensorV2 || p.member == PatternMember::Indirect16B)
    r.fail(leaf(dst, "start_addr"), Rule::kMempatternDstMember, "a PSUM destination must be a TENSOR3D pattern");
}

// ---- per instruction family ---------------------------------------------------------------------
void check_perf_opt(Rules& r, std::int64_t opt, const OperandPart& in, const TilePart& t, bool xpose) {
  PEVP_REQUIRE(r, opt <= perf_opt::FP8_DOUBLE_ROW, "perf_opt", Rule::kPerfOptRange,
               "perf_opt must be 0 (none) or 1 (fp8 double_row)");
  if (opt != perf_opt::FP8_DOUBLE_ROW) return;
  PEVP_REQUIRE(r, is_fp8(in.dtype()), "perf_opt", Rule::kPerfOptDoubleRow, "double_row needs an fp8 in_dtype");
  PEVP_REQUIRE(r, t.fields.col_grp.value_or(0xF) == 0xF, "perf_opt", Rule::kPerfOptDoubleRow,
               "double_row cannot combine with column tiling (col_grp 0xF)");
  PEVP_REQUIRE(r, !xpose, "perf_opt", Rule::kPerfOptDoubleRow, "double_row cannot combine with transpose");
}

void check_mx_perf_mode(Rules& r, std::int64_t mode, bool mx_source) {
  PEVP_REQUIRE(r, mode <= 6, "perf_mode", Rule::kPerfModeRange, "MX_PERF_MODE must be 0..6");
  if (mode != 0)
    PEVP_REQUIRE(r, mx_source, "perf_mode", Rule::kPerfModeMxOnly, "QUAD_ROW / OCT_ROW pump MX sources only");
}

// MAVERICK load-seed / save-seed micro-op contracts (spec 5.1): an Ldweights or
// Matmul with flags.seed_mode set is the firmware's seed micro-op.
template <class I>
void check_seed_contract(Rules& r, const I& i) {
  constexpr bool is_matmul = std::is_same_v<I, Matmul>;
  PEVP_REQUIRE(r, i.seed_mode <= 2, "flags.seed_mode", Rule::kFlagsSeedMode,
               "seed_mode must be NONE(0), LOAD_SEED(1) or SAVE_SEED(2)");
  if (!is_maverick(r.gen) || i.seed_mode == 0 || i.seed_mode > 2) return;
  const Rule rule = i.seed_mode == 1 ? Rule::kSeedLoadContract : Rule::kSeedSaveContract;
  const TileFields& f = i.tile.fields;
  r.equal(f.size_row, tile_size::R64, "tile_size.row", rule, "a seed micro-op's tile_size.row (r64)");
  r.equal(f.size_col, tile_size::C256, "tile_size.col", rule, "a seed micro-op's tile_size.col (c256)");
  const Pattern src{i.src, "src_mem_pattern"};
  if (i.src.member != PatternMember::Indirect16B)  // its one element count is per index
    for (unsigned k = 0; k < 3; ++k)
      r.equal(num_of(i.src, k), 1, dim_leaf(src, "num_elem", k), rule,
              "the single identity source element's extent");
  r.equal(i.in.dtype_raw, ordinal(Dtype::FP32), "in_dtype", rule, "a seed micro-op's in_dtype (FP32)");
  if (i.in.has_fp32_mode)
    r.equal(i.in.fp32_mode_raw, static_cast<std::int64_t>(Fp32Mode::High), "fp32_mode", rule,
            "a seed micro-op's fp32_mode (High)");
  r.equal(i.transpose_raw, 1, "flags.xpose_mode", rule, "a seed micro-op's xpose_mode (enabled)");
  r.equal(f.num_active_rows, 1, "num_active_rows", rule, "a seed micro-op's num_active_rows");
  // The whole C256 tile: 0 encodes its 256 columns; on a narrower array (D-GEOMETRY) its column count.
  const std::int64_t whole_cols = r.geo.pe_cols == kActiveZeroMeans ? 0 : r.geo.pe_cols;
  r.equal(f.num_active_cols, whole_cols, "num_active_cols", rule, "a seed micro-op's num_active_cols");
  if constexpr (is_matmul) {
    const std::int64_t out = i.out_dtype;  // 0 means FP32 (spec 8)
    PEVP_REQUIRE(r, out == 0 || out == ordinal(Dtype::FP32), "out_dtype", rule,
                 "a seed micro-op's out_dtype must be FP32 (or 0 = FP32)");
    if (i.seed_mode == 2 && i.dst.member == PatternMember::Tensor3D) {
      const Pattern dst{i.dst, "dst_mem_pattern"};
      for (unsigned k = 0; k < 3; ++k)
        r.equal(num_of(i.dst, k), k == 2 ? 2 : 1, dim_leaf(dst, "num_elem", k), rule, "SaveSeed's 1x1x2 dst");
    }
  }
}

// Ldweights tag_weight_mode (spec 9; its byte is D-LAYOUT-TAG-WEIGHT): NONE (0) or TAG_WEIGHT (1), whose {u16 weight,
// u16 tag} elements need a 16-bit weight dtype and a plain load (no transpose, double_row, MX or seed move).
void check_tag_weight(Rules& r, const Ldweights& i) {
  const std::int64_t mode = i.tag_weight_mode;
  PEVP_REQUIRE(r, mode == 0 || mode == 1, "tag_weight_mode", Rule::kLdweightsTagWeightMode,
               "tag_weight_mode must be NONE (0) or TAG_WEIGHT (1)");
  if (mode != 1) return;
  const std::int64_t dtype = i.in.dtype_raw;
  PEVP_REQUIRE(r, dtype == ordinal(Dtype::BFLOAT16) || dtype == ordinal(Dtype::FP16), "in_dtype",
               Rule::kLdweightsTagWeightMode, "TAG_WEIGHT interleaves u16 weights with u16 tags: in_dtype must be "
                                              "BFLOAT16 or FP16");
  const char* xpose = i.bg_transpose            ? "bg_xpose_mode"
                      : r.d.has("transpose_mode") ? "transpose_mode"
                                                  : "flags.xpose_mode";
  PEVP_REQUIRE(r, !i.transpose && i.bg_transpose == 0, xpose, Rule::kLdweightsTagWeightMode,
               "a TAG_WEIGHT load cannot be transposed");
  PEVP_REQUIRE(r, i.perf_opt != perf_opt::FP8_DOUBLE_ROW, "perf_opt", Rule::kLdweightsTagWeightMode,
               "a TAG_WEIGHT load cannot be double_row (sparse and double_row do not combine)");
  PEVP_REQUIRE(r, i.src.member != PatternMember::MxTensorV2, "src_mem_pattern.start_addr",
               Rule::kLdweightsTagWeightMode, "a TAG_WEIGHT load cannot have an MX source");
  PEVP_REQUIRE(r, i.seed_mode == 0, "flags.seed_mode", Rule::kLdweightsTagWeightMode,
               "a TAG_WEIGHT load cannot be a seed micro-op");
}

// Ldweights and Matmul: the dense pair (and, on MAVERICK, the MX and seed forms).
template <class I>
void check_dense(Rules& r, const I& i) {
  const Pattern src{i.src, "src_mem_pattern"};
  const bool mx = i.src.member == PatternMember::MxTensorV2;
  check_in_dtype(r, i.in, mx && is_maverick(r.gen));
  check_pattern(r, src, false, src_partitions(i.tile));
  check_tile(r, i.tile, false);
  check_perf_opt(r, i.perf_opt, i.in, i.tile, i.transpose);
  check_mx_perf_mode(r, i.perf_mode, mx);
  PEVP_REQUIRE(r, i.transpose_raw <= 1, "transpose_mode", Rule::kXposeRange, "transpose_mode must be 0 or 1");
  PEVP_REQUIRE(r, i.bg_transpose <= 1, "bg_xpose_mode", Rule::kXposeRange, "bg_xpose_mode must be 0 or 1");
  check_seed_contract(r, i);
  if constexpr (std::is_same_v<I, Ldweights>) check_tag_weight(r, i);
  if constexpr (std::is_same_v<I, Matmul>) {
    check_out_dtype(r, i.out_dtype);
    check_psum_group(r, i.psum);
    if (i.transpose && i.seed_mode == 0) {
      // A transposing matmul writes one PSUM partition per moving element (D-EXEC-XPOSE-MM).
      const std::uint64_t free_size = i.src.elements();
      PEVP_REQUIRE(r, free_size <= r.geo.partitions, dim_leaf(src, "num_elem", 0), Rule::kMmXposeFreeSize,
                   "a transposing matmul's moving free size (" + std::to_string(free_size) +
                       " elements per partition) must be at most the " + std::to_string(r.geo.partitions) +
                       " PSUM partitions it transposes onto");
      check_dst(r, i.dst, static_cast<unsigned>(std::min<std::uint64_t>(free_size, r.geo.partitions)),
                i.out_dtype);
    } else {
      check_dst(r, i.dst, dst_partitions(r, i.tile), i.out_dtype);
    }
    // "if c256 and tensor_pattern, the upper dim of dst must have a size of 2": the
    // two halves of a tile wider than the partitions (D-GEOMETRY: on an array
    // whose columns fit the partitions, a c256 tile does not fold).
    const auto& tile = i.tile.rect;
    if (i.tile.fields.size_col == tile_size::C256 && tile && tile->cols > r.geo.partitions &&
        i.dst.member == PatternMember::Tensor3D && i.seed_mode == 0) {
      const unsigned half = tile->cols / 2;
      PEVP_REQUIRE(r, num_of(i.dst, 2) == 2, "dst_mem_pattern.num_elem[2]", Rule::kMmC256DstUpperDim,
                   "a c256 matmul's dst upper dimension must be 2 (PE columns 0-" + std::to_string(half - 1) +
                       " and " + std::to_string(half) + "-" + std::to_string(tile->cols - 1) + ")");
    }
  }
}

void check_sparse(Rules& r, const MatmulSparse& i) {
  check_in_dtype(r, i.in, false);
  check_pattern(r, {i.src, "src_mem_pattern"}, false, src_partitions(i.tile));
  const std::int64_t fmaps = num_of(i.src, 3).value_or(0);
  PEVP_REQUIRE(r, fmaps >= 2 && fmaps <= 4, "src_mem_pattern.num_elem[3]", Rule::kSparseFmaps,
               "MatmulSparse sends 2, 3 or 4 fmaps per partition (the 4th source dimension)");
  check_tile(r, i.tile, false);
  check_out_dtype(r, i.out_dtype);
  check_psum_group(r, i.psum);
  PEVP_REQUIRE(r, i.seed_mode <= 2, "flags.seed_mode", Rule::kFlagsSeedMode, "seed_mode must be 0..2");
  check_dst(r, i.dst, dst_partitions(r, i.tile), i.out_dtype);
}

void check_pe_seed(Rules& r, const PeManageSeed& i) {
  PEVP_REQUIRE(r, usable_in(Opcode::PE_MANAGE_SEED, r.gen), "header.opcode", Rule::kPeSeedV4Only,
               "PE_MANAGE_SEED is valid only on NeuronCore-v4 (MARIANA, MARIANA_PLUS)");
  PEVP_REQUIRE(r, i.mode == 1 || i.mode == 2, "mode", Rule::kPeSeedMode, "mode must be LOAD_SEED (1) or SAVE_SEED (2)");
  r.equal(i.active_rows, kSeedRows, "num_active_rows", Rule::kPeSeedNumActiveRows,
          "PeManageSeed's num_active_rows (hard-coded)");
  r.equal(i.active_cols, kSeedCols, "num_active_cols", Rule::kPeSeedNumActiveCols,
          "PeManageSeed's num_active_cols (hard-coded)");
  PEVP_REQUIRE(r, one_of(i.identity_dtype, kIdentityDtypes), "identity_dtype", Rule::kPeSeedIdentityDtype,
               "identity_dtype must be one of " + set_text(kIdentityDtypes));
  const Pattern identity{i.identity, "identity_mem_pattern"};
  r.equal(num_of(i.identity, 0), kSeedRows, dim_leaf(identity, "num_elem", 0), Rule::kPeSeedIdentity,
          "the identity diagonal's element count");
  check_pattern(r, identity, false, kSeedRows);
  // The pattern a mode does not use is all zero: a layout-level check of its bits.
  auto unused_zero = [&](std::string_view field) {
    for (const auto& f : r.d.fields)
      if (f.leaf.top == field && f.value != 0)
        r.fail(f.leaf.path, Rule::kPeSeedUnusedPattern, "the pattern this mode does not use must be all zero");
  };
  if (i.mode == 1) {  // LoadSeed: 16 x 128 seeds in SBUF partitions 0-15
    const Pattern src{i.src_seed, "src_seed_mem_pattern"};
    check_pattern(r, src, false, kSeedRows);
    PEVP_REQUIRE(r, i.src_seed.start < r.geo.sbuf_partition_bytes, leaf(src, "start_addr"), Rule::kPeSeedLoadSrc,
                 "LoadSeed reads SBUF partitions 0-15: start_addr must be in partition 0");
    PEVP_REQUIRE(r, std::int64_t{i.src_seed.num[0]} * i.src_seed.num[1] == kSeedCols, dim_leaf(src, "num_elem", 0),
                 Rule::kPeSeedLoadSrc, "LoadSeed reads 128 seeds per partition");
    unused_zero("dst_seed_mem_pattern");
  } else if (i.mode == 2) {  // SaveSeed: 128 x 16 seeds into PSUM
    const Pattern dst{i.dst_seed, "dst_seed_mem_pattern"};
    r.equal(i.dst_seed.num[0], 2, dim_leaf(dst, "num_elem", 0), Rule::kPeSeedSaveDst, "SaveSeed dst num_elem[0]");
    r.equal(i.dst_seed.num[1], 8, dim_leaf(dst, "num_elem", 1), Rule::kPeSeedSaveDst, "SaveSeed dst num_elem[1]");
    r.equal(i.dst_seed.step[0], 1, dim_leaf(dst, "step_elem", 0), Rule::kPeSeedSaveDst, "SaveSeed dst step_elem[0]");
    r.equal(i.dst_seed.step[1], 512, dim_leaf(dst, "step_elem", 1), Rule::kPeSeedSaveDst,
            "SaveSeed dst step_elem[1]");
    r.equal(i.dst_seed.start_raw, ArrayGeometry::kPsumBase, leaf(dst, "start_addr"), Rule::kPeSeedSaveDst,
            "SaveSeed dst start_addr (PSUM partition 0 byte 0)");
    unused_zero("src_seed_mem_pattern");
  }
}

// LdweightsMX and MatmulMX: the v4 MX path, an MXMEM_PATTERN1D source.
template <class I>
void check_mx_op(Rules& r, const I& i) {
  PEVP_REQUIRE(r, usable_in(Opcode::LDWEIGHTS_MX, r.gen), "header.opcode", Rule::kMxSeparateOpsV4,
               "LDWEIGHTS_MX / MATMUL_MX are the v4 MX path; MAVERICK folds MX into LDWEIGHTS / MATMUL (MXTENSOR_V2)");
  check_in_dtype(r, OperandPart{i.in_dtype, 0, false}, true);
  const Pattern src{i.src, "src_mem_pattern"};
  PEVP_REQUIRE(r, r.geo.in_sbuf(i.src.start_raw), leaf(src, "start_addr"), Rule::kMempatternSrcSbuf,
               "MX data must lie in SBUF");
  PEVP_REQUIRE(r, r.geo.in_sbuf(i.src.scale_addr), leaf(src, "scale_addr"), Rule::kMempatternScaleSbuf,
               "MX scales must lie in SBUF");
  PEVP_REQUIRE(r, i.src.num[0] >= 1, leaf(src, "num_elem"), Rule::kMempatternNumElem,
               "the MX source needs at least 1 element");
  check_mx_perf_mode(r, i.perf_mode, true);
  check_tile(r, i.tile, true);
  if constexpr (std::is_same_v<I, MatmulMX>) {
    check_out_dtype(r, i.out_dtype);
    check_psum_group(r, i.psum);
    check_dst(r, i.dst, dst_partitions(r, i.tile), i.out_dtype);
  }
}

void check_ldtags(Rules& r, const LdTags& i) {
  r.equal(i.in_dtype, ordinal(Dtype::UINT16), "in_dtype", Rule::kLdtagsInDtype, "LdTags' in_dtype (UINT16 tag words)");
  const std::int64_t force = i.force_tag_bits;
  PEVP_REQUIRE(r, force == 0x0 || force == 0x4 || force == 0x8 || force == 0xC, "force_tag_bits",
               Rule::kLdtagsForceTagBits, "force_tag_bits must be 0x00, 0x04, 0x08 or 0x0C");
  check_pattern(r, {i.src, "src_mem_pattern"}, false, src_partitions(i.tile));
  check_tile(r, i.tile, false);
}

void check_pe_reg_write(Rules& r, const PeRegWrite& i) {
  check_tile(r, i.tile, false);
  if (i.src.num[0] != 0) check_pattern(r, {i.src, "src_mem_pattern"}, false, 1);
}

void check_conv_lut(Rules& r, const ConvLutLoad& i) {
  PEVP_REQUIRE(r, i.lut_dtype != 0 && is_known_dtype(static_cast<std::uint8_t>(i.lut_dtype)), "lut_dtype",
               Rule::kConvlutLutDtype, "lut_dtype must be a known, non-INVALID dtype ordinal");
  check_pattern(r, {i.src, "src_mem_pattern"}, false, 1);
}

void check(Rules& r, const Ldweights& i) { check_dense(r, i); }
void check(Rules& r, const Matmul& i) { check_dense(r, i); }
void check(Rules& r, const MatmulSparse& i) { check_sparse(r, i); }
void check(Rules& r, const PeManageSeed& i) { check_pe_seed(r, i); }
void check(Rules& r, const LdweightsMX& i) { check_mx_op(r, i); }
void check(Rules& r, const MatmulMX& i) { check_mx_op(r, i); }
void check(Rules& r, const LdTags& i) { check_ldtags(r, i); }
void check(Rules& r, const PeRegWrite& i) { check_pe_reg_write(r, i); }
void check(Rules& r, const ConvLutLoad& i) { check_conv_lut(r, i); }

}  // namespace

std::vector<Violation> validate(const Decoded& d) {
  if (!d.opcode)  // no layout, so no typed form
    return {Violation{"header.opcode", d.get_or("header.opcode", 0), std::string(id(Rule::kOpcodeUnknown)),
                      "opcode " + hex(d.opcode_byte) + " is not a PE instruction of " + std::string(name(d.gen))}};
  Instruction scratch;
  Rules r(d);
  std::visit(
      [&](const auto& i) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(i)>, std::monostate>) {
          check_header_and_events(r, i);
          check_reserved(r);
          check(r, i);
        }
      },
      typed_form(d, scratch));
  return r.take();
}

StreamChecker::Key StreamChecker::key_of(const Decoded& d) {
  const auto tile = tile_of(d);
  return tile ? key_of(d, *tile) : Key{};
}

StreamChecker::Key StreamChecker::key_of(const Decoded& d, const TileRect& tile) {
  Key k;
  Instruction scratch;
  const Instruction& i = typed_form(d, scratch);
  const OperandPart* in = nullptr;
  if (const auto* lw = std::get_if<Ldweights>(&i)) {
    k.role = Key::Role::Load;
    in = &lw->in;
  } else if (const auto* mm = std::get_if<Matmul>(&i)) {
    k.role = Key::Role::Use;
    in = &mm->in;
  } else {
    return k;
  }
  // Every grid cell the tile covers: an Ldweights replaces exactly those cells'
  // stationary, so a partial reload leaves the rest of an earlier one in place.
  const unsigned gr = d.geo.group_rows(), gc = d.geo.group_cols();
  k.r0 = static_cast<std::uint8_t>(std::min(tile.row0 / gr, kRows));
  k.r1 = static_cast<std::uint8_t>(std::min((tile.row0 + tile.rows + gr - 1) / gr, kRows));
  k.c0 = static_cast<std::uint8_t>(std::min(tile.col0 / gc, kCols));
  k.c1 = static_cast<std::uint8_t>(std::min((tile.col0 + tile.cols + gc - 1) / gc, kCols));
  k.in_dtype = in->dtype_raw;
  k.fp32_mode = in->has_fp32_mode ? in->fp32_mode_raw : 0;
  return k;
}

std::vector<Violation> StreamChecker::check(const Key& k) {
  std::vector<Violation> out;
  const std::uint32_t mine = pack(k.in_dtype, k.fp32_mode);
  if (k.role == Key::Role::Load) {
    for (unsigned r = k.r0; r < k.r1; ++r) std::fill(cells_[r].begin() + k.c0, cells_[r].begin() + k.c1, mine);
    last_load_ = {k.r0, k.r1, k.c0, k.c1, mine};
    return out;
  }
  const LastLoad& l = last_load_;
  if (mine == l.value && k.r0 >= l.r0 && k.r1 <= l.r1 && k.c0 >= l.c0 && k.c1 <= l.c1) return out;
  const auto fp32 = static_cast<std::int64_t>(Dtype::FP32);
  const bool mine_fp32 = (k.in_dtype & 0xFF) == fp32;
  for (unsigned r = k.r0; r < k.r1; ++r)
    for (unsigned c = k.c0; c < k.c1; ++c) {
      const std::uint32_t cell = cells_[r][c];
      if (cell == 0 || cell == mine) continue;  // nothing loaded, or exactly this dtype and mode
      const std::int64_t st_dtype = cell >> 8 & 0xFF, st_mode = cell & 0xFF;
      const bool st_fp32 = st_dtype == fp32;
      if (st_fp32 != mine_fp32)
        out.push_back({"in_dtype", k.in_dtype, std::string(id(Rule::kMmFp32NoMix)),
                       "if either matmul input is tf32/fp32 both must be: the stationary is " +
                           std::string(name(static_cast<Dtype>(st_dtype))) + ", the moving " +
                           std::string(name(static_cast<Dtype>(k.in_dtype)))});
      else if (st_fp32 && st_mode != (k.fp32_mode & 0xFF))
        out.push_back({"fp32_mode", k.fp32_mode, std::string(id(Rule::kMmFp32ModeMatch)),
                       "the moving fp32_mode must match the stationary's (" +
                           std::string(name(static_cast<Fp32Mode>(st_mode & 3))) + ")"});
      if (!out.empty()) return out;  // one report per matmul
    }
  return out;
}

}  // namespace pevp::isa
