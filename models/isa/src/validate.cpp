// Every validity rule of the ISA layer. Each rule has a stable id (the string in
// brackets of a message) and is listed with its source -- spec text or model
// decision -- in docs/isa.md. A rule reads decoded leaves by their spec names,
// so one rule serves every generation whose struct has the field.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <sstream>
#include <tuple>

#include "pevp/isa/access_pattern.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/tiles.h"

namespace pevp::isa {
namespace {

constexpr Dtype kMmInputs[] = {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5,
                               Dtype::BFLOAT16, Dtype::FP16,     Dtype::FP32};
constexpr Dtype kMxInputs[] = {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4,
                               Dtype::FP8_EXP5, Dtype::FP4_EXP2, Dtype::INT4};
constexpr Dtype kIdentityDtypes[] = {Dtype::BFLOAT16, Dtype::FP16,     Dtype::FP32R,   Dtype::FP8_EXP2,
                                     Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5};

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
// "16 KiB", "2 KiB", or bytes when not a whole number of KiB.
std::string size_text(std::uint32_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB" : std::to_string(bytes) + " bytes";
}
std::string hex(std::int64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// ---- the leaves the rules read ------------------------------------------------------
// A rule names the leaves it reads by Key, not by path string: decode() runs
// every rule for every instruction the SEQ fetches, and hashing a path per read
// (plus building "x.num_elem[" + k + "]" strings) was most of its cost. Each
// key is resolved to a position in Decoded::fields once per leaf set of every
// layout (LeafSetInfo below); a read is then fields[position].
enum Key : std::uint8_t {
  kInstWordLen, kWaitMode, kWaitSem, kWaitValue, kUpdateMode, kUpdateSem, kUpdateValue,
  kInDtype, kFp32Mode, kOutDtype, kNumActiveRows, kNumActiveCols, kRowGrp, kColGrp,
  kTileRow, kTileCol, kRowSel, kColSel, kPerfOpt, kPerfMode, kTransposeMode, kBgXposeMode,
  kSeedMode, kXposeMode, kPsumAccumulateFlags, kPsumZeroRegion, kMode, kIdentityDtype,
  kForceTagBits, kLutDtype,
  kNumFixedKeys,  // then kNumPatterns x kNumSubs keys: one per (pattern, sub-leaf), see key()
};
constexpr std::string_view kFixedPaths[kNumFixedKeys] = {
    "header.inst_word_len", "events.wait_mode", "events.wait_sem", "events.wait_value", "events.update_mode",
    "events.update_sem", "events.update_value", "in_dtype", "fp32_mode", "out_dtype", "num_active_rows",
    "num_active_cols", "row_grp", "col_grp", "tile_size.row", "tile_size.col", "tile_sel.row_sel",
    "tile_sel.col_sel", "perf_opt", "perf_mode", "transpose_mode", "bg_xpose_mode", "flags.seed_mode",
    "flags.xpose_mode", "psum_accumulate_flags", "psum_zero_region", "mode", "identity_dtype", "force_tag_bits",
    "lut_dtype"};

// The access patterns the rules check, and the sub-leaves they read of each.
enum class PatternId : std::uint8_t { Src, Dst, Identity, SrcSeed, DstSeed };
constexpr std::string_view kPatternNames[] = {"src_mem_pattern", "dst_mem_pattern", "identity_mem_pattern",
                                              "src_seed_mem_pattern", "dst_seed_mem_pattern"};
constexpr unsigned kNumPatterns = std::size(kPatternNames);
// step_elem[k] and num_elem[k] for k < kMaxDims follow kNumIndex.
enum Sub : std::uint8_t { kStartAddr, kScaleAddr, kNumElem, kNumIndex, kStepElem0, kNumElem0 = kStepElem0 + 4 };
constexpr unsigned kMaxDims = 4;  // TENSOR4D
constexpr unsigned kNumSubs = kNumElem0 + kMaxDims;
constexpr unsigned kNumKeys = kNumFixedKeys + kNumPatterns * kNumSubs;

constexpr unsigned key(PatternId p, unsigned sub) { return kNumFixedKeys + static_cast<unsigned>(p) * kNumSubs + sub; }
constexpr unsigned step_elem(PatternId p, unsigned k) { return key(p, kStepElem0 + k); }
constexpr unsigned num_elem(PatternId p, unsigned k) { return key(p, kNumElem0 + k); }
std::string_view name(PatternId p) { return kPatternNames[static_cast<unsigned>(p)]; }

// The path of every key ("events.wait_sem", "src_mem_pattern.num_elem[2]").
const std::string& path(unsigned k) {
  static const auto paths = [] {
    std::vector<std::string> all(kFixedPaths, kFixedPaths + kNumFixedKeys);
    for (unsigned p = 0; p < kNumPatterns; ++p) {
      const std::string base(kPatternNames[p]);
      for (const char* leaf : {".start_addr", ".scale_addr", ".num_elem", ".num_index"}) all.push_back(base + leaf);
      for (const char* leaf : {".step_elem[", ".num_elem["})
        for (unsigned d = 0; d < kMaxDims; ++d) all.push_back(base + leaf + std::to_string(d) + "]");
    }
    return all;
  }();
  return paths[k];
}

// What the rules need to know of one leaf set, resolved once.
struct LeafSetInfo {
  std::array<std::int16_t, kNumKeys> position{};  // in Decoded::fields; -1: the struct has no such leaf
  std::vector<std::uint16_t> reserved;            // positions of the leaves reserved.zero checks, in order
  bool src_union = false, dst_union = false;      // src/dst_mem_pattern is a MEM_PATTERN3D union
};

bool is_union_field(const Decoded& d, std::string_view name) {
  const FieldDesc* f = d.layout ? d.layout->find(name) : nullptr;
  return f && f->part == Part::MemPattern3D;
}

// Resolves every key against `d` exactly as Decoded::field() finds paths.
LeafSetInfo resolve(const Decoded& d) {
  LeafSetInfo info;
  for (unsigned k = 0; k < kNumKeys; ++k) {
    const DecodedField* f = d.field(path(k));
    info.position[k] = static_cast<std::int16_t>(f ? f - d.fields.data() : -1);
  }
  for (std::size_t i = 0; i < d.fields.size(); ++i) {
    const Leaf& leaf = d.fields[i].leaf;
    if (leaf.kind == ValueKind::Reserved || leaf.path.find("reserved_bitfield") != std::string::npos)
      info.reserved.push_back(static_cast<std::uint16_t>(i));
  }
  info.src_union = is_union_field(d, name(PatternId::Src));
  info.dst_union = is_union_field(d, name(PatternId::Dst));
  return info;
}

// The resolved keys of every leaf set of every layout, by global leaf set
// number (StructLayout::first_leaf_set). Built once, on first use.
const std::vector<LeafSetInfo>& leaf_set_infos() {
  static const auto infos = per_leaf_set<LeafSetInfo>(resolve);
  return infos;
}

// Records a violation when `ok` is false. A macro so that the field path and the
// message -- often built with std::string arithmetic -- are only evaluated on
// failure: decode() runs every rule for every instruction the SEQ fetches.
#define PEVP_REQUIRE(rules, ok, field, rule, message) \
  do {                                                  \
    if (!(ok)) (rules).fail((field), (rule), (message)); \
  } while (0)

// Collects violations for one instruction.
class Rules {
 public:
  explicit Rules(const Decoded& d) : d_(d), at_(info_of(d)) {}
  std::vector<Violation> take() { return std::move(out_); }

  bool has(unsigned k) const { return at_.position[k] >= 0; }
  // The leaf's value; like Decoded::get, throws naming the path if absent.
  std::int64_t get(unsigned k) const { return has(k) ? value_at(k) : d_.get(path(k)); }
  std::int64_t get_or_default(unsigned k) const { return has(k) ? value_at(k) : 0; }
  void fail(unsigned field, std::string rule, std::string message) {
    out_.push_back({path(field), get_or_default(field), std::move(rule), std::move(message)});
  }
  void fail(std::string_view field, std::string rule, std::string message) {
    out_.push_back({std::string(field), field.empty() ? 0 : d_.get_or(field, 0), std::move(rule), std::move(message)});
  }
  void equal(unsigned field, std::int64_t expected, const char* rule, const char* what) {
    if (has(field) && get(field) != expected) fail(field, rule, std::string(what) + " must be " + std::to_string(expected));
  }
  const LeafSetInfo& leaf_set() const { return at_; }

  const Decoded& d_;

 private:
  std::int64_t value_at(unsigned k) const { return d_.fields[static_cast<std::size_t>(at_.position[k])].value; }
  // decode()'s instructions find their set's info from Decoded::index (which of
  // the layout's leaf_index it points to); any other Decoded (built by hand) is
  // resolved here, once.
  const LeafSetInfo& info_of(const Decoded& d) {
    if (const auto set = leaf_set_number(d)) return leaf_set_infos()[*set];
    own_ = std::make_unique<LeafSetInfo>(resolve(d));
    return *own_;
  }

  std::unique_ptr<LeafSetInfo> own_;
  const LeafSetInfo& at_;
  std::vector<Violation> out_;
};

// ---- rules every struct shares ------------------------------------------------------
void check_header_and_events(Rules& r) {
  PEVP_REQUIRE(r, r.get(kInstWordLen) == 16, kInstWordLen, "header.inst_word_len",
            "a 64-byte instruction has inst_word_len 16 (32-bit words)");
  const auto wait_mode = r.get(kWaitMode), update_mode = r.get(kUpdateMode);
  PEVP_REQUIRE(r, wait_mode <= 2, kWaitMode, "events.wait_mode", "wait_mode must be NONE(0), WAIT_GE(1) or WAIT_EQ(2)");
  PEVP_REQUIRE(r, update_mode <= 3, kUpdateMode, "events.update_mode",
            "update_mode must be NONE(0), SET(1), INCREMENT(2) or DECREMENT(3)");
  for (auto [mode, sem, value] : {std::tuple{wait_mode, kWaitSem, kWaitValue},
                                  std::tuple{update_mode, kUpdateSem, kUpdateValue}}) {
    if (mode == 0) {
      PEVP_REQUIRE(r, r.get(sem) == 0 && r.get(value) == 0, r.get(sem) ? sem : value, "events.unused_zero",
                "semaphore index and value must be 0 when the mode is NONE");
    } else {
      PEVP_REQUIRE(r, r.get(sem) < static_cast<std::int64_t>(kNumSemaphores), sem, "events.sem_index",
                "semaphore index must be below " + std::to_string(kNumSemaphores));
    }
  }
}

void check_reserved(Rules& r) {
  for (const std::uint16_t i : r.leaf_set().reserved) {
    const DecodedField& f = r.d_.fields[i];
    if (f.value != 0)
      r.fail(f.leaf.path, "reserved.zero",
             "reserved bits (byte " + std::to_string(f.leaf.offset) + ", " + std::to_string(f.leaf.size) +
                 " byte(s)) must be 0");
  }
}

// ---- access patterns ------------------------------------------------------------------
struct PatternView {
  PatternId id = PatternId::Src;
  PatternMember member = PatternMember::Tensor3D;
  std::uint32_t addr = 0;  // start_addr without marker bits
};

PatternView view_pattern(const Rules& r, PatternId id, bool is_union) {
  PatternView v{id};
  const auto start = static_cast<std::uint32_t>(r.get(key(id, kStartAddr)));
  v.member = is_union ? pattern_member(start) : PatternMember::Tensor3D;
  v.addr = start;
  if (v.member == PatternMember::MxTensorV2) v.addr &= ~ADDR4MARKER_MXTENSOR_V2;
  if (v.member == PatternMember::Indirect16B) v.addr &= ~ADDR_MARKER_INDIRECT;
  return v;
}

// Dimension count of a plain tensor pattern leaf set ("x.num_elem[k]").
unsigned dims_of(const Rules& r, PatternId id) {
  unsigned n = 0;
  while (n < kMaxDims && r.has(num_elem(id, n))) ++n;
  return n;
}

// Memory region and shape checks shared by every pattern.
void check_pattern(Rules& r, const PatternView& p, bool want_psum, unsigned partitions) {
  const ArrayGeometry& geo = r.d_.geo;
  const unsigned start = key(p.id, kStartAddr);
  if (p.member == PatternMember::Conflicting) {
    r.fail(start, "mempattern.marker", "start_addr sets both the MXTENSOR_V2 (0x1) and INDIRECT (bit 31) markers");
    return;
  }
  if (p.member == PatternMember::MxTensorV2 && !is_maverick(r.d_.gen))
    r.fail(start, "mempattern.mx_v5_only",
           "the MXTENSOR_V2 member (start_addr bit 0) exists only on MAVERICK; v4 uses LDWEIGHTS_MX / MATMUL_MX");
  if (want_psum) {
    PEVP_REQUIRE(r, geo.in_psum(p.addr), start, "mempattern.dst_psum",
              "destination must lie in PSUM [" + hex(ArrayGeometry::kPsumBase) + ", " +
                  hex(ArrayGeometry::kPsumBase + geo.psum_bytes()) + ")");
  } else {
    PEVP_REQUIRE(r, geo.in_sbuf(p.addr), start, "mempattern.src_sbuf",
              "source must lie in SBUF [0, " + hex(geo.sbuf_bytes()) + ") (AllowedInPSUM::False)");
  }
  const std::uint32_t part_bytes = want_psum ? geo.psum_partition_bytes() : geo.sbuf_partition_bytes;
  const std::uint32_t base = want_psum ? ArrayGeometry::kPsumBase : ArrayGeometry::kSbufBase;
  if ((want_psum ? geo.in_psum(p.addr) : geo.in_sbuf(p.addr)) && partitions > 0) {
    const std::uint32_t first = (p.addr - base) / part_bytes;
    PEVP_REQUIRE(r, first + partitions <= geo.partitions, start, "mempattern.partitions",
              "starts in partition " + std::to_string(first) + " but spans " + std::to_string(partitions) +
                  " partitions; only " + std::to_string(geo.partitions) + " exist");
  }
  if (p.member == PatternMember::MxTensorV2) {
    PEVP_REQUIRE(r, geo.in_sbuf(static_cast<std::uint32_t>(r.get(key(p.id, kScaleAddr)))), key(p.id, kScaleAddr),
              "mempattern.scale_sbuf", "MX scales must lie in SBUF");
  }
  if (p.member == PatternMember::Indirect16B) {
    PEVP_REQUIRE(r, r.get(key(p.id, kNumElem)) >= 1, key(p.id, kNumElem), "mempattern.num_elem",
              "an indirect pattern needs at least 1 element per index");
    PEVP_REQUIRE(r, r.get(key(p.id, kNumIndex)) >= 1, key(p.id, kNumIndex), "mempattern.num_elem",
              "an indirect pattern needs at least 1 index");
    return;
  }
  const unsigned dims = p.member == PatternMember::MxTensorV2 ? 2 : dims_of(r, p.id);
  for (unsigned k = 0; k < dims; ++k)
    PEVP_REQUIRE(r, r.get(num_elem(p.id, k)) >= 1, num_elem(p.id, k), "mempattern.num_elem",
              "every dimension needs at least 1 element");
}

// ---- tiles -------------------------------------------------------------------------------
// The effective active rows/cols, and the tile they must fit in.
void check_tile(Rules& r, bool mx_row_tiling_only) {
  const ArrayGeometry& geo = r.d_.geo;
  if (r.has(kRowGrp)) {
    PEVP_REQUIRE(r, decode_group_mask(static_cast<std::uint8_t>(r.get(kRowGrp))).has_value(), kRowGrp, "tile.row_grp",
              "row_grp must be a mask of aligned " + std::to_string(geo.group_rows()) +
                  "-row groups: 0x1 0x2 0x4 0x8 0x3 0xC 0xF");
    PEVP_REQUIRE(r, decode_group_mask(static_cast<std::uint8_t>(r.get(kColGrp))).has_value(), kColGrp, "tile.col_grp",
              "col_grp must be a mask of aligned " + std::to_string(geo.group_cols()) +
                  "-column groups: 0x1 0x2 0x4 0x8 0x3 0xC 0xF");
    if (mx_row_tiling_only)
      PEVP_REQUIRE(r, r.get(kColGrp) == 0xF, kColGrp, "mx.row_tiling_only", "MX matmul tiles rows only: col_grp must be 0xF");
  } else if (r.has(kTileRow)) {
    const auto row = r.get(kTileRow), col = r.get(kTileCol);
    PEVP_REQUIRE(r, row == tile_size::R64 || row == tile_size::R128, kTileRow, "tile_size.row",
              "tile_size.row must be R64 (6) or R128 (7)");
    PEVP_REQUIRE(r, col == tile_size::C128 || col == tile_size::C256, kTileCol, "tile_size.col",
              "tile_size.col must be C128 (7) or C256 (8)");
    PEVP_REQUIRE(r, r.get(kRowSel) <= 1, kRowSel, "tile_sel.range", "row_sel must be <= 1 (valid_pe_tile_select)");
    PEVP_REQUIRE(r, r.get(kColSel) <= 1, kColSel, "tile_sel.range", "col_sel must be <= 1 (valid_pe_tile_select)");
    if (row == tile_size::R128)
      PEVP_REQUIRE(r, r.get(kRowSel) == 0, kRowSel, "tile_sel.fits", "an R128 tile spans every row: row_sel must be 0");
    if (col == tile_size::C256)
      PEVP_REQUIRE(r, r.get(kColSel) == 0, kColSel, "tile_sel.fits",
                "the tile spans every column: col_sel must be 0");
  }
  const auto tile = tile_of(r.d_);
  if (!tile || !r.has(kNumActiveRows)) return;
  const std::int64_t rows = active_extent(r.get(kNumActiveRows), tile->rows);
  PEVP_REQUIRE(r, rows >= 1 && rows <= static_cast<std::int64_t>(tile->rows), kNumActiveRows, "tile.num_active_rows",
            "num_active_rows must be 1.." + std::to_string(tile->rows) + " (the tile's rows)");
  std::int64_t cols = r.get(kNumActiveCols);
  if (is_maverick(r.d_.gen) && cols == 0) {
    PEVP_REQUIRE(r, tile->cols == 256, kNumActiveCols, "tile.num_active_cols",
              geo.pe_cols == ArrayGeometry::kMaxArraySide
                  ? std::string("num_active_cols 0 means the full 256 columns and needs tile_size.col C256")
                  : "num_active_cols 0 means 256 columns and needs a 256-column tile (tile_size.col C256 is " +
                        std::to_string(geo.pe_cols) + " columns on this array)");
    return;
  }
  cols = active_extent(cols, tile->cols);
  PEVP_REQUIRE(r, cols >= 1 && cols <= static_cast<std::int64_t>(tile->cols), kNumActiveCols, "tile.num_active_cols",
            "num_active_cols must be 1.." + std::to_string(tile->cols) + " (the tile's columns)");
}

// ---- dtypes --------------------------------------------------------------------------------
void check_in_dtype(Rules& r, bool mx_source) {
  const auto in = r.get(kInDtype);
  if (mx_source)
    PEVP_REQUIRE(r, one_of(in, kMxInputs), kInDtype, "mx.in_dtype", "an MX source dtype must be one of " + set_text(kMxInputs));
  else
    PEVP_REQUIRE(r, one_of(in, kMmInputs), kInDtype, "mm.in_dtype",
              "a matmul input dtype must be one of " + set_text(kMmInputs) + " (tf32 is FP32 with fp32_mode Low)");
  if (!r.has(kFp32Mode)) return;
  const auto mode = r.get(kFp32Mode);
  PEVP_REQUIRE(r, mode <= 3, kFp32Mode, "fp32_mode.range", "fp32_mode must be None(0), Low(1), High(2) or Low_High(3)");
  if (in == static_cast<std::int64_t>(Dtype::FP32))
    PEVP_REQUIRE(r, mode != 0, kFp32Mode, "fp32_mode.dtype", "FP32 input needs fp32_mode Low, High or Low_High");
  else
    PEVP_REQUIRE(r, mode == 0, kFp32Mode, "fp32_mode.dtype", "a non-FP32 input needs fp32_mode None");
}

void check_out_dtype(Rules& r) {
  const auto out = r.get(kOutDtype);
  const bool fp32 = out == 0 || out == static_cast<std::int64_t>(Dtype::FP32);
  const bool bf16 = out == static_cast<std::int64_t>(Dtype::BFLOAT16);
  if (is_v4_plus(r.d_.gen))
    PEVP_REQUIRE(r, fp32 || bf16, kOutDtype, "mm.out_dtype", "out_dtype must be 0 (=FP32), FP32 or BFLOAT16");
  else
    PEVP_REQUIRE(r, fp32, kOutDtype, "mm.out_dtype", "out_dtype must be 0 (=FP32) or FP32 (BFLOAT16 output starts at v4)");
}

// ---- PSUM groups -------------------------------------------------------------------------------
void check_psum_group(Rules& r) {
  if (r.has(kPsumAccumulateFlags)) {
    const auto f = r.get(kPsumAccumulateFlags);
    PEVP_REQUIRE(r, (f & ~std::int64_t{psum_flags::kDefinedBits}) == 0, kPsumAccumulateFlags, "psum.accumulate_flags",
              "only BEGIN (0x1), END (0x2) and BEGIN_ACCUM (0x4) are defined");
    PEVP_REQUIRE(r, !((f & psum_flags::BEGIN_MATMUL_GROUP) && (f & psum_flags::BEGIN_ACCUM_MATMUL_GROUP)),
              kPsumAccumulateFlags, "psum.accumulate_flags",
              "BEGIN (zero, then write) and BEGIN_ACCUM (accumulate onto PSUM) exclude each other");
  }
  if (r.has(kPsumZeroRegion))
    PEVP_REQUIRE(r, r.get(kPsumZeroRegion) <= 3, kPsumZeroRegion, "psum.zero_region",
              "psum_zero_region must be 0..3 (1, 2, 4 or 8 banks)");
}

// The destination footprint: v3 keeps a matmul output inside one PSUM bank
// (moving free size <= 512 fp32); v4+ may span the banks of one partition.
void check_dst_footprint(Rules& r, const PatternView& p) {
  if (p.member != PatternMember::Tensor3D || !r.d_.geo.in_psum(p.addr)) return;
  const ArrayGeometry& geo = r.d_.geo;
  const auto out = r.get_or_default(kOutDtype);
  const unsigned elem = out == static_cast<std::int64_t>(Dtype::BFLOAT16) ? 2 : 4;
  AccessPattern pattern;
  pattern.dims = 3;
  for (unsigned k = 0; k < pattern.dims; ++k) {
    pattern.num[k] = r.get(num_elem(p.id, k));
    pattern.step[k] = r.get(step_elem(p.id, k));
    if (pattern.num[k] < 1) return;  // reported by mempattern.num_elem
  }
  const Location at = *locate(p.addr, Memory::Psum, geo);
  const ByteRange bytes = covered_bytes(pattern, at.offset, elem);
  const std::int64_t bank = geo.psum_bank_bytes;
  const std::int64_t limit_lo = is_v4_plus(r.d_.gen) ? 0 : at.offset / bank * bank;
  const std::int64_t limit_hi = is_v4_plus(r.d_.gen) ? geo.psum_partition_bytes() : limit_lo + bank;
  PEVP_REQUIRE(r, bytes.first >= limit_lo && bytes.last < limit_hi, key(p.id, kStartAddr), "mm.psum_footprint",
            std::string("the output occupies partition bytes ") + std::to_string(bytes.first) + ".." +
                std::to_string(bytes.last) +
                (is_v4_plus(r.d_.gen)
                     ? ", outside the partition's " + size_text(geo.psum_partition_bytes()) + " of PSUM"
                     : ", crossing its " + size_text(geo.psum_bank_bytes) +
                           " PSUM bank (one bank per matmul before v4)"));
}

// A PSUM destination: region, partitions, footprint, and the member a PSUM
// write can use (a TENSOR3D; mx and indirect address SBUF data).
void check_dst(Rules& r, const PatternView& dst, unsigned partitions) {
  check_pattern(r, dst, true, partitions);
  check_dst_footprint(r, dst);
  if (dst.member == PatternMember::MxTensorV2 || dst.member == PatternMember::Indirect16B)
    r.fail(key(dst.id, kStartAddr), "mempattern.dst_member", "a PSUM destination must be a TENSOR3D pattern");
}

// ---- per instruction family ---------------------------------------------------------------------
void check_perf_opt(Rules& r, bool xpose) {
  if (!r.has(kPerfOpt)) return;
  const auto opt = r.get(kPerfOpt);
  PEVP_REQUIRE(r, opt <= perf_opt::FP8_DOUBLE_ROW, kPerfOpt, "perf_opt.range", "perf_opt must be 0 (none) or 1 (fp8 double_row)");
  if (opt != perf_opt::FP8_DOUBLE_ROW) return;
  PEVP_REQUIRE(r, is_fp8(static_cast<Dtype>(r.get(kInDtype))), kPerfOpt, "perf_opt.double_row",
            "double_row needs an fp8 in_dtype");
  PEVP_REQUIRE(r, r.get(kColGrp) == 0xF, kPerfOpt, "perf_opt.double_row", "double_row cannot combine with column tiling (col_grp 0xF)");
  PEVP_REQUIRE(r, !xpose, kPerfOpt, "perf_opt.double_row", "double_row cannot combine with transpose");
}

void check_mx_perf_mode(Rules& r, bool mx_source) {
  if (!r.has(kPerfMode)) return;
  const auto mode = r.get(kPerfMode);
  PEVP_REQUIRE(r, mode <= 6, kPerfMode, "perf_mode.range", "MX_PERF_MODE must be 0..6");
  if (mode != 0)
    PEVP_REQUIRE(r, mx_source, kPerfMode, "perf_mode.mx_only", "QUAD_ROW / OCT_ROW pump MX sources only");
}

bool xpose_of(const Rules& r) {
  if (r.has(kTransposeMode)) return r.get(kTransposeMode) != 0;
  if (r.has(kXposeMode)) return r.get(kXposeMode) != 0;
  return false;
}

// MAVERICK load-seed / save-seed micro-op contracts (spec 5.1).
void check_seed_contract(Rules& r, bool is_matmul) {
  if (!r.has(kSeedMode)) return;
  const auto seed = r.get(kSeedMode);
  PEVP_REQUIRE(r, seed <= 2, kSeedMode, "flags.seed_mode", "seed_mode must be NONE(0), LOAD_SEED(1) or SAVE_SEED(2)");
  if (!is_maverick(r.d_.gen) || seed == 0 || seed > 2) return;
  const char* rule = seed == 1 ? "seed.load_contract" : "seed.save_contract";
  r.equal(kTileRow, tile_size::R64, rule, "a seed micro-op's tile_size.row (r64)");
  r.equal(kTileCol, tile_size::C256, rule, "a seed micro-op's tile_size.col (c256)");
  for (unsigned k = 0; k < 3; ++k)
    r.equal(num_elem(PatternId::Src, k), 1, rule, "the single identity source element's extent");
  r.equal(kInDtype, static_cast<std::int64_t>(Dtype::FP32), rule, "a seed micro-op's in_dtype (FP32)");
  r.equal(kFp32Mode, static_cast<std::int64_t>(Fp32Mode::High), rule, "a seed micro-op's fp32_mode (High)");
  r.equal(kXposeMode, 1, rule, "a seed micro-op's xpose_mode (enabled)");
  r.equal(kNumActiveRows, 1, rule, "a seed micro-op's num_active_rows");
  // The whole C256 tile: 0 encodes its 256 columns; on a narrower array (D-GEOMETRY) its column count.
  const std::int64_t whole_cols = r.d_.geo.pe_cols == ArrayGeometry::kMaxArraySide ? 0 : r.d_.geo.pe_cols;
  r.equal(kNumActiveCols, whole_cols, rule, "a seed micro-op's num_active_cols");
  if (!is_matmul) return;
  const auto out = r.get(kOutDtype);  // 0 means FP32 (spec 8)
  PEVP_REQUIRE(r, out == 0 || out == static_cast<std::int64_t>(Dtype::FP32), kOutDtype, rule,
            "a seed micro-op's out_dtype must be FP32 (or 0 = FP32)");
  if (seed == 2 && pattern_member(static_cast<std::uint32_t>(r.get(key(PatternId::Dst, kStartAddr)))) == PatternMember::Tensor3D) {
    r.equal(num_elem(PatternId::Dst, 0), 1, rule, "SaveSeed's 1x1x2 dst");
    r.equal(num_elem(PatternId::Dst, 1), 1, rule, "SaveSeed's 1x1x2 dst");
    r.equal(num_elem(PatternId::Dst, 2), 2, rule, "SaveSeed's 1x1x2 dst");
  }
}

// The source's partitions: one per active PE row.
unsigned src_partitions(const Rules& r) {
  const auto rows = r.get(kNumActiveRows);
  const auto tile = tile_of(r.d_);
  return tile ? active_extent(rows, tile->rows) : static_cast<unsigned>(rows);
}

unsigned dst_partitions(const Rules& r) {
  // 0 is 256 columns on MAVERICK and on any 256-wide tile (D-GEOMETRY); more
  // columns than partitions fold (c256).
  const auto cols = r.get_or_default(kNumActiveCols);
  const auto tile = tile_of(r.d_);
  const bool zero_is_256 = cols == 0 && (is_maverick(r.d_.gen) || (tile && tile->cols == 256));
  return static_cast<unsigned>(std::min<std::int64_t>(zero_is_256 ? 256 : cols, r.d_.geo.partitions));
}

void check_ldweights_or_matmul(Rules& r, bool is_matmul) {
  const PatternView src = view_pattern(r, PatternId::Src, r.leaf_set().src_union);
  const bool mx = src.member == PatternMember::MxTensorV2;
  check_in_dtype(r, mx && is_maverick(r.d_.gen));
  check_pattern(r, src, false, src_partitions(r));
  check_tile(r, false);
  check_perf_opt(r, xpose_of(r));
  check_mx_perf_mode(r, mx);
  for (const Key b : {kTransposeMode, kBgXposeMode})
    if (r.has(b)) PEVP_REQUIRE(r, r.get(b) <= 1, b, "xpose.range", path(b) + " must be 0 or 1");
  check_seed_contract(r, is_matmul);
  if (!is_matmul) return;
  check_out_dtype(r);
  check_psum_group(r);
  const PatternView dst = view_pattern(r, PatternId::Dst, r.leaf_set().dst_union);
  check_dst(r, dst, dst_partitions(r));
  // "if c256 and tensor_pattern, the upper dim of dst must have a size of 2": the
  // two halves of a tile wider than the partitions (D-GEOMETRY: on an array
  // whose columns fit the partitions, a c256 tile does not fold).
  const auto tile = tile_of(r.d_);
  if (r.has(kTileCol) && r.get(kTileCol) == tile_size::C256 && tile && tile->cols > r.d_.geo.partitions &&
      dst.member == PatternMember::Tensor3D && r.get(kSeedMode) == 0) {
    const unsigned half = tile->cols / 2;
    PEVP_REQUIRE(r, r.get(num_elem(PatternId::Dst, 2)) == 2, num_elem(PatternId::Dst, 2), "mm.c256_dst_upper_dim",
              "a c256 matmul's dst upper dimension must be 2 (PE columns 0-" + std::to_string(half - 1) + " and " +
                  std::to_string(half) + "-" + std::to_string(tile->cols - 1) + ")");
  }
}

void check_sparse(Rules& r) {
  check_in_dtype(r, false);
  check_pattern(r, view_pattern(r, PatternId::Src, false), false, src_partitions(r));
  const auto fmaps = r.get(num_elem(PatternId::Src, 3));
  PEVP_REQUIRE(r, fmaps >= 2 && fmaps <= 4, num_elem(PatternId::Src, 3), "sparse.fmaps",
            "MatmulSparse sends 2, 3 or 4 fmaps per partition (the 4th source dimension)");
  check_tile(r, false);
  check_out_dtype(r);
  check_psum_group(r);
  if (r.has(kSeedMode))
    PEVP_REQUIRE(r, r.get(kSeedMode) <= 2, kSeedMode, "flags.seed_mode", "seed_mode must be 0..2");
  check_dst(r, view_pattern(r, PatternId::Dst, false), dst_partitions(r));
}

void check_pe_seed(Rules& r) {
  PEVP_REQUIRE(r, is_v4(r.d_.gen), "header.opcode", "pe_seed.v4_only",
            "PE_MANAGE_SEED is valid only on NeuronCore-v4 (MARIANA, MARIANA_PLUS)");
  const auto mode = r.get(kMode);
  PEVP_REQUIRE(r, mode == 1 || mode == 2, kMode, "pe_seed.mode", "mode must be LOAD_SEED (1) or SAVE_SEED (2)");
  r.equal(kNumActiveRows, 16, "pe_seed.num_active_rows", "PeManageSeed's num_active_rows (hard-coded)");
  r.equal(kNumActiveCols, 128, "pe_seed.num_active_cols", "PeManageSeed's num_active_cols (hard-coded)");
  PEVP_REQUIRE(r, one_of(r.get(kIdentityDtype), kIdentityDtypes), kIdentityDtype, "pe_seed.identity_dtype",
            "identity_dtype must be one of " + set_text(kIdentityDtypes));
  r.equal(num_elem(PatternId::Identity, 0), 16, "pe_seed.identity", "the identity diagonal's element count");
  check_pattern(r, view_pattern(r, PatternId::Identity, false), false, 16);
  auto unused_zero = [&](PatternId id) {
    for (const auto& f : r.d_.fields)
      if (f.leaf.top == name(id) && f.value != 0)
        r.fail(f.leaf.path, "pe_seed.unused_pattern", "the pattern this mode does not use must be all zero");
  };
  if (mode == 1) {  // LoadSeed: 16 x 128 seeds in SBUF partitions 0-15
    const PatternView src = view_pattern(r, PatternId::SrcSeed, false);
    check_pattern(r, src, false, 16);
    PEVP_REQUIRE(r, src.addr < r.d_.geo.sbuf_partition_bytes, key(PatternId::SrcSeed, kStartAddr),
              "pe_seed.load_src", "LoadSeed reads SBUF partitions 0-15: start_addr must be in partition 0");
    PEVP_REQUIRE(r, r.get(num_elem(PatternId::SrcSeed, 0)) * r.get(num_elem(PatternId::SrcSeed, 1)) == 128,
              num_elem(PatternId::SrcSeed, 0), "pe_seed.load_src", "LoadSeed reads 128 seeds per partition");
    unused_zero(PatternId::DstSeed);
  } else if (mode == 2) {  // SaveSeed: 128 x 16 seeds into PSUM
    r.equal(num_elem(PatternId::DstSeed, 0), 2, "pe_seed.save_dst", "SaveSeed dst num_elem[0]");
    r.equal(num_elem(PatternId::DstSeed, 1), 8, "pe_seed.save_dst", "SaveSeed dst num_elem[1]");
    r.equal(step_elem(PatternId::DstSeed, 0), 1, "pe_seed.save_dst", "SaveSeed dst step_elem[0]");
    r.equal(step_elem(PatternId::DstSeed, 1), 512, "pe_seed.save_dst", "SaveSeed dst step_elem[1]");
    r.equal(key(PatternId::DstSeed, kStartAddr), ArrayGeometry::kPsumBase, "pe_seed.save_dst",
            "SaveSeed dst start_addr (PSUM partition 0 byte 0)");
    unused_zero(PatternId::SrcSeed);
  }
}

void check_mx_op(Rules& r, bool is_matmul) {
  PEVP_REQUIRE(r, is_v4(r.d_.gen), "header.opcode", "mx.separate_ops_v4",
            "LDWEIGHTS_MX / MATMUL_MX are the v4 MX path; MAVERICK folds MX into LDWEIGHTS / MATMUL (MXTENSOR_V2)");
  check_in_dtype(r, true);
  const PatternView src{PatternId::Src, PatternMember::Tensor3D,
                        static_cast<std::uint32_t>(r.get(key(PatternId::Src, kStartAddr)))};
  const ArrayGeometry& geo = r.d_.geo;
  PEVP_REQUIRE(r, geo.in_sbuf(src.addr), key(PatternId::Src, kStartAddr), "mempattern.src_sbuf", "MX data must lie in SBUF");
  PEVP_REQUIRE(r, geo.in_sbuf(static_cast<std::uint32_t>(r.get(key(PatternId::Src, kScaleAddr)))),
            key(PatternId::Src, kScaleAddr), "mempattern.scale_sbuf", "MX scales must lie in SBUF");
  PEVP_REQUIRE(r, r.get(key(PatternId::Src, kNumElem)) >= 1, key(PatternId::Src, kNumElem), "mempattern.num_elem",
            "the MX source needs at least 1 element");
  check_mx_perf_mode(r, true);
  check_tile(r, true);
  if (!is_matmul) return;
  check_out_dtype(r);
  check_psum_group(r);
  check_dst(r, view_pattern(r, PatternId::Dst, true), dst_partitions(r));
}

void check_ldtags(Rules& r) {
  r.equal(kInDtype, static_cast<std::int64_t>(Dtype::UINT16), "ldtags.in_dtype", "LdTags' in_dtype (UINT16 tag words)");
  const auto force = r.get(kForceTagBits);
  PEVP_REQUIRE(r, force == 0x0 || force == 0x4 || force == 0x8 || force == 0xC, kForceTagBits, "ldtags.force_tag_bits",
            "force_tag_bits must be 0x00, 0x04, 0x08 or 0x0C");
  check_pattern(r, view_pattern(r, PatternId::Src, false), false, src_partitions(r));
  check_tile(r, false);
}

void check_pe_reg_write(Rules& r) {
  check_tile(r, false);
  if (r.get(num_elem(PatternId::Src, 0)) != 0) check_pattern(r, view_pattern(r, PatternId::Src, false), false, 1);
}

void check_conv_lut(Rules& r) {
  const auto lut = r.get(kLutDtype);
  PEVP_REQUIRE(r, lut != 0 && is_known_dtype(static_cast<std::uint8_t>(lut)), kLutDtype, "convlut.lut_dtype",
            "lut_dtype must be a known, non-INVALID dtype ordinal");
  check_pattern(r, view_pattern(r, PatternId::Src, false), false, 1);
}

}  // namespace

std::vector<Violation> validate(const Decoded& d) {
  if (!d.opcode)  // no layout, so no leaf set for Rules to resolve
    return {Violation{"header.opcode", d.get_or("header.opcode", 0), "opcode.unknown",
                      "opcode " + hex(d.opcode_byte) + " is not a PE instruction of " + std::string(name(d.gen))}};
  Rules r(d);
  check_header_and_events(r);
  check_reserved(r);
  switch (*d.opcode) {
    case Opcode::LDWEIGHTS: check_ldweights_or_matmul(r, false); break;
    case Opcode::MATMUL: check_ldweights_or_matmul(r, true); break;
    case Opcode::MATMUL_SPARSE: check_sparse(r); break;
    case Opcode::PE_MANAGE_SEED: check_pe_seed(r); break;
    case Opcode::LDWEIGHTS_MX: check_mx_op(r, false); break;
    case Opcode::MATMUL_MX: check_mx_op(r, true); break;
    case Opcode::LDTAGS: check_ldtags(r); break;
    case Opcode::PE_REG_WRITE: check_pe_reg_write(r); break;
    case Opcode::CONV_LUT_LOAD: check_conv_lut(r); break;
  }
  return r.take();
}

StreamChecker::Key StreamChecker::key_of(const Decoded& d) {
  const auto tile = tile_of(d);
  return tile ? key_of(d, *tile) : Key{};
}

StreamChecker::Key StreamChecker::key_of(const Decoded& d, const TileRect& tile) {
  Key k;
  if (!d.opcode || (*d.opcode != Opcode::LDWEIGHTS && *d.opcode != Opcode::MATMUL)) return k;
  k.role = *d.opcode == Opcode::LDWEIGHTS ? Key::Role::Load : Key::Role::Use;
  // Every grid cell the tile covers: an Ldweights replaces exactly those cells'
  // stationary, so a partial reload leaves the rest of an earlier one in place.
  const unsigned gr = d.geo.group_rows(), gc = d.geo.group_cols();
  k.r0 = static_cast<std::uint8_t>(std::min(tile.row0 / gr, kRows));
  k.r1 = static_cast<std::uint8_t>(std::min((tile.row0 + tile.rows + gr - 1) / gr, kRows));
  k.c0 = static_cast<std::uint8_t>(std::min(tile.col0 / gc, kCols));
  k.c1 = static_cast<std::uint8_t>(std::min((tile.col0 + tile.cols + gc - 1) / gc, kCols));
  k.in_dtype = d.get("in_dtype");
  k.fp32_mode = d.get_or("fp32_mode", 0);
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
        out.push_back({"in_dtype", k.in_dtype, "mm.fp32_no_mix",
                       "if either matmul input is tf32/fp32 both must be: the stationary is " +
                           std::string(name(static_cast<Dtype>(st_dtype))) + ", the moving " +
                           std::string(name(static_cast<Dtype>(k.in_dtype)))});
      else if (st_fp32 && st_mode != (k.fp32_mode & 0xFF))
        out.push_back({"fp32_mode", k.fp32_mode, "mm.fp32_mode_match",
                       "the moving fp32_mode must match the stationary's (" +
                           std::string(name(static_cast<Fp32Mode>(st_mode & 3))) + ")"});
      if (!out.empty()) return out;  // one report per matmul
    }
  return out;
}

}  // namespace pevp::isa
