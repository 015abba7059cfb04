// Every validity rule of the ISA layer. Each rule has a stable id (the string in
// brackets of a message) and is listed with its source -- spec text or model
// decision -- in docs/isa.md. A rule reads decoded leaves by their spec names,
// so one rule serves every generation whose struct has the field.
#include <algorithm>
#include <initializer_list>
#include <sstream>
#include <tuple>

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
std::string hex(std::int64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
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
  explicit Rules(const Decoded& d) : d_(d) {}
  std::vector<Violation> take() { return std::move(out_); }

  bool has(std::string_view p) const { return d_.has(p); }
  std::int64_t get(std::string_view p) const { return d_.get(p); }
  std::int64_t get_or_default(std::string_view p) const { return d_.get_or(p, 0); }
  void fail(std::string_view field, std::string rule, std::string message) {
    out_.push_back({std::string(field), field.empty() ? 0 : d_.get_or(field, 0), std::move(rule), std::move(message)});
  }
  void equal(std::string_view field, std::int64_t expected, const char* rule, const char* what) {
    if (has(field) && get(field) != expected) fail(field, rule, std::string(what) + " must be " + std::to_string(expected));
  }

  const Decoded& d_;

 private:
  std::vector<Violation> out_;
};

// ---- rules every struct shares ------------------------------------------------------
void check_header_and_events(Rules& r) {
  PEVP_REQUIRE(r, r.get("header.inst_word_len") == 16, "header.inst_word_len", "header.inst_word_len",
            "a 64-byte instruction has inst_word_len 16 (32-bit words)");
  const auto wait_mode = r.get("events.wait_mode"), update_mode = r.get("events.update_mode");
  PEVP_REQUIRE(r, wait_mode <= 2, "events.wait_mode", "events.wait_mode", "wait_mode must be NONE(0), WAIT_GE(1) or WAIT_EQ(2)");
  PEVP_REQUIRE(r, update_mode <= 3, "events.update_mode", "events.update_mode",
            "update_mode must be NONE(0), SET(1), INCREMENT(2) or DECREMENT(3)");
  for (auto [mode, sem, value] : {std::tuple{wait_mode, "events.wait_sem", "events.wait_value"},
                                  std::tuple{update_mode, "events.update_sem", "events.update_value"}}) {
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
  for (const auto& f : r.d_.fields) {
    const bool reserved = f.leaf.kind == ValueKind::Reserved || f.leaf.path.find("reserved_bitfield") != std::string::npos;
    if (reserved && f.value != 0)
      r.fail(f.leaf.path, "reserved.zero",
             "reserved bits (byte " + std::to_string(f.leaf.offset) + ", " + std::to_string(f.leaf.size) +
                 " byte(s)) must be 0");
  }
}

// ---- access patterns ------------------------------------------------------------------
struct PatternView {
  std::string name;  // "src_mem_pattern"
  PatternMember member = PatternMember::Tensor3D;
  std::uint32_t addr = 0;  // start_addr without marker bits
};

PatternView view_pattern(const Rules& r, const std::string& name, bool is_union) {
  PatternView v{name};
  const auto start = static_cast<std::uint32_t>(r.get(name + ".start_addr"));
  v.member = is_union ? pattern_member(start) : PatternMember::Tensor3D;
  v.addr = start;
  if (v.member == PatternMember::MxTensorV2) v.addr &= ~ADDR4MARKER_MXTENSOR_V2;
  if (v.member == PatternMember::Indirect16B) v.addr &= ~ADDR_MARKER_INDIRECT;
  return v;
}

bool is_union_field(const Decoded& d, const std::string& name) {
  const FieldDesc* f = d.layout->find(name);
  return f && f->part == Part::MemPattern3D;
}

// Dimension count of a plain tensor pattern leaf set ("x.num_elem[k]").
unsigned dims_of(const Rules& r, const std::string& name) {
  unsigned n = 0;
  while (r.has(name + ".num_elem[" + std::to_string(n) + "]")) ++n;
  return n;
}

// Memory region and shape checks shared by every pattern.
void check_pattern(Rules& r, const PatternView& p, bool want_psum, unsigned partitions) {
  const Geometry& geo = geometry(r.d_.gen);
  const std::string start = p.name + ".start_addr";
  if (p.member == PatternMember::Conflicting) {
    r.fail(start, "mempattern.marker", "start_addr sets both the MXTENSOR_V2 (0x1) and INDIRECT (bit 31) markers");
    return;
  }
  if (p.member == PatternMember::MxTensorV2 && !is_maverick(r.d_.gen))
    r.fail(start, "mempattern.mx_v5_only",
           "the MXTENSOR_V2 member (start_addr bit 0) exists only on MAVERICK; v4 uses LDWEIGHTS_MX / MATMUL_MX");
  if (want_psum) {
    PEVP_REQUIRE(r, geo.in_psum(p.addr), start, "mempattern.dst_psum",
              "destination must lie in PSUM [" + hex(Geometry::kPsumBase) + ", " +
                  hex(Geometry::kPsumBase + geo.psum_bytes()) + ")");
  } else {
    PEVP_REQUIRE(r, geo.in_sbuf(p.addr), start, "mempattern.src_sbuf",
              "source must lie in SBUF [0, " + hex(geo.sbuf_bytes()) + ") (AllowedInPSUM::False)");
  }
  const std::uint32_t part_bytes = want_psum ? geo.psum_partition_bytes : geo.sbuf_partition_bytes;
  const std::uint32_t base = want_psum ? Geometry::kPsumBase : Geometry::kSbufBase;
  if ((want_psum ? geo.in_psum(p.addr) : geo.in_sbuf(p.addr)) && partitions > 0) {
    const std::uint32_t first = (p.addr - base) / part_bytes;
    PEVP_REQUIRE(r, first + partitions <= geo.partitions, start, "mempattern.partitions",
              "starts in partition " + std::to_string(first) + " but spans " + std::to_string(partitions) +
                  " partitions; only " + std::to_string(geo.partitions) + " exist");
  }
  if (p.member == PatternMember::MxTensorV2) {
    PEVP_REQUIRE(r, geo.in_sbuf(static_cast<std::uint32_t>(r.get(p.name + ".scale_addr"))), p.name + ".scale_addr",
              "mempattern.scale_sbuf", "MX scales must lie in SBUF");
  }
  if (p.member == PatternMember::Indirect16B) {
    PEVP_REQUIRE(r, r.get(p.name + ".num_elem") >= 1, p.name + ".num_elem", "mempattern.num_elem",
              "an indirect pattern needs at least 1 element per index");
    PEVP_REQUIRE(r, r.get(p.name + ".num_index") >= 1, p.name + ".num_index", "mempattern.num_elem",
              "an indirect pattern needs at least 1 index");
    return;
  }
  const unsigned dims = p.member == PatternMember::MxTensorV2 ? 2 : dims_of(r, p.name);
  for (unsigned k = 0; k < dims; ++k) {
    const std::string leaf = p.name + ".num_elem[" + std::to_string(k) + "]";
    PEVP_REQUIRE(r, r.get(leaf) >= 1, leaf, "mempattern.num_elem", "every dimension needs at least 1 element");
  }
}

// ---- tiles -------------------------------------------------------------------------------
// The effective active rows/cols, and the tile they must fit in.
void check_tile(Rules& r, bool mx_row_tiling_only) {
  const Geometry& geo = geometry(r.d_.gen);
  if (r.has("row_grp")) {
    PEVP_REQUIRE(r, decode_group_mask(static_cast<std::uint8_t>(r.get("row_grp"))).has_value(), "row_grp", "tile.row_grp",
              "row_grp must be a mask of aligned 32-row groups: 0x1 0x2 0x4 0x8 0x3 0xC 0xF");
    PEVP_REQUIRE(r, decode_group_mask(static_cast<std::uint8_t>(r.get("col_grp"))).has_value(), "col_grp", "tile.col_grp",
              "col_grp must be a mask of aligned 32-column groups: 0x1 0x2 0x4 0x8 0x3 0xC 0xF");
    if (mx_row_tiling_only)
      PEVP_REQUIRE(r, r.get("col_grp") == 0xF, "col_grp", "mx.row_tiling_only", "MX matmul tiles rows only: col_grp must be 0xF");
  } else if (r.has("tile_size.row")) {
    const auto row = r.get("tile_size.row"), col = r.get("tile_size.col");
    PEVP_REQUIRE(r, row == tile_size::R64 || row == tile_size::R128, "tile_size.row", "tile_size.row",
              "tile_size.row must be R64 (6) or R128 (7)");
    PEVP_REQUIRE(r, col == tile_size::C128 || col == tile_size::C256, "tile_size.col", "tile_size.col",
              "tile_size.col must be C128 (7) or C256 (8)");
    PEVP_REQUIRE(r, r.get("tile_sel.row_sel") <= 1, "tile_sel.row_sel", "tile_sel.range", "row_sel must be <= 1 (valid_pe_tile_select)");
    PEVP_REQUIRE(r, r.get("tile_sel.col_sel") <= 1, "tile_sel.col_sel", "tile_sel.range", "col_sel must be <= 1 (valid_pe_tile_select)");
    if (row == tile_size::R128)
      PEVP_REQUIRE(r, r.get("tile_sel.row_sel") == 0, "tile_sel.row_sel", "tile_sel.fits", "an R128 tile spans every row: row_sel must be 0");
    if (col == tile_size::C256 || (col == tile_size::C128 && geo.pe_cols == 128))
      PEVP_REQUIRE(r, r.get("tile_sel.col_sel") == 0, "tile_sel.col_sel", "tile_sel.fits",
                "the tile spans every column: col_sel must be 0");
  }
  const auto tile = tile_of(r.d_);
  if (!tile || !r.has("num_active_rows")) return;
  const auto rows = r.get("num_active_rows");
  PEVP_REQUIRE(r, rows >= 1 && rows <= static_cast<std::int64_t>(tile->rows), "num_active_rows", "tile.num_active_rows",
            "num_active_rows must be 1.." + std::to_string(tile->rows) + " (the tile's rows)");
  std::int64_t cols = r.get("num_active_cols");
  if (is_maverick(r.d_.gen) && cols == 0) {
    PEVP_REQUIRE(r, tile->cols == 256, "num_active_cols", "tile.num_active_cols",
              "num_active_cols 0 means the full 256 columns and needs tile_size.col C256");
    return;
  }
  PEVP_REQUIRE(r, cols >= 1 && cols <= static_cast<std::int64_t>(tile->cols), "num_active_cols", "tile.num_active_cols",
            "num_active_cols must be 1.." + std::to_string(tile->cols) + " (the tile's columns)");
}

// ---- dtypes --------------------------------------------------------------------------------
void check_in_dtype(Rules& r, bool mx_source) {
  const auto in = r.get("in_dtype");
  if (mx_source)
    PEVP_REQUIRE(r, one_of(in, kMxInputs), "in_dtype", "mx.in_dtype", "an MX source dtype must be one of " + set_text(kMxInputs));
  else
    PEVP_REQUIRE(r, one_of(in, kMmInputs), "in_dtype", "mm.in_dtype",
              "a matmul input dtype must be one of " + set_text(kMmInputs) + " (tf32 is FP32 with fp32_mode Low)");
  if (!r.has("fp32_mode")) return;
  const auto mode = r.get("fp32_mode");
  PEVP_REQUIRE(r, mode <= 3, "fp32_mode", "fp32_mode.range", "fp32_mode must be None(0), Low(1), High(2) or Low_High(3)");
  if (in == static_cast<std::int64_t>(Dtype::FP32))
    PEVP_REQUIRE(r, mode != 0, "fp32_mode", "fp32_mode.dtype", "FP32 input needs fp32_mode Low, High or Low_High");
  else
    PEVP_REQUIRE(r, mode == 0, "fp32_mode", "fp32_mode.dtype", "a non-FP32 input needs fp32_mode None");
}

void check_out_dtype(Rules& r) {
  const auto out = r.get("out_dtype");
  const bool fp32 = out == 0 || out == static_cast<std::int64_t>(Dtype::FP32);
  const bool bf16 = out == static_cast<std::int64_t>(Dtype::BFLOAT16);
  if (is_v4_plus(r.d_.gen))
    PEVP_REQUIRE(r, fp32 || bf16, "out_dtype", "mm.out_dtype", "out_dtype must be 0 (=FP32), FP32 or BFLOAT16");
  else
    PEVP_REQUIRE(r, fp32, "out_dtype", "mm.out_dtype", "out_dtype must be 0 (=FP32) or FP32 (BFLOAT16 output starts at v4)");
}

// ---- PSUM groups -------------------------------------------------------------------------------
void check_psum_group(Rules& r) {
  if (r.has("psum_accumulate_flags")) {
    const auto f = r.get("psum_accumulate_flags");
    PEVP_REQUIRE(r, (f & ~std::int64_t{psum_flags::kDefinedBits}) == 0, "psum_accumulate_flags", "psum.accumulate_flags",
              "only BEGIN (0x1), END (0x2) and BEGIN_ACCUM (0x4) are defined");
    PEVP_REQUIRE(r, !((f & psum_flags::BEGIN_MATMUL_GROUP) && (f & psum_flags::BEGIN_ACCUM_MATMUL_GROUP)),
              "psum_accumulate_flags", "psum.accumulate_flags",
              "BEGIN (zero, then write) and BEGIN_ACCUM (accumulate onto PSUM) exclude each other");
  }
  if (r.has("psum_zero_region"))
    PEVP_REQUIRE(r, r.get("psum_zero_region") <= 3, "psum_zero_region", "psum.zero_region",
              "psum_zero_region must be 0..3 (1, 2, 4 or 8 banks)");
}

// The destination footprint: v3 keeps a matmul output inside one PSUM bank
// (moving free size <= 512 fp32); v4+ may span the banks of one partition.
void check_dst_footprint(Rules& r, const PatternView& p) {
  if (p.member != PatternMember::Tensor3D || !geometry(r.d_.gen).in_psum(p.addr)) return;
  const Geometry& geo = geometry(r.d_.gen);
  const auto out = r.get_or_default("out_dtype");
  const unsigned elem = out == static_cast<std::int64_t>(Dtype::BFLOAT16) ? 2 : 4;
  std::int64_t lo = 0, hi = 0;
  for (unsigned k = 0; k < 3; ++k) {
    const auto n = r.get(p.name + ".num_elem[" + std::to_string(k) + "]");
    const auto s = r.get(p.name + ".step_elem[" + std::to_string(k) + "]");
    if (n < 1) return;  // reported by mempattern.num_elem
    (s < 0 ? lo : hi) += s * (n - 1);
  }
  const std::int64_t offset = (p.addr - Geometry::kPsumBase) % geo.psum_partition_bytes;
  const std::int64_t first = offset + lo * elem, last = offset + hi * elem + elem - 1;
  const std::int64_t limit_lo = is_v4_plus(r.d_.gen) ? 0 : offset / geo.psum_bank_bytes * geo.psum_bank_bytes;
  const std::int64_t limit_hi = is_v4_plus(r.d_.gen) ? geo.psum_partition_bytes : limit_lo + geo.psum_bank_bytes;
  PEVP_REQUIRE(r, first >= limit_lo && last < limit_hi, p.name + ".start_addr", "mm.psum_footprint",
            std::string("the output occupies partition bytes ") + std::to_string(first) + ".." + std::to_string(last) +
                (is_v4_plus(r.d_.gen) ? ", outside the partition's 16 KiB of PSUM"
                                      : ", crossing its 2 KiB PSUM bank (one bank per matmul before v4)"));
}

// A PSUM destination: region, partitions, footprint, and the member a PSUM
// write can use (a TENSOR3D; mx and indirect address SBUF data).
void check_dst(Rules& r, const PatternView& dst, unsigned partitions) {
  check_pattern(r, dst, true, partitions);
  check_dst_footprint(r, dst);
  if (dst.member == PatternMember::MxTensorV2 || dst.member == PatternMember::Indirect16B)
    r.fail(dst.name + ".start_addr", "mempattern.dst_member", "a PSUM destination must be a TENSOR3D pattern");
}

// ---- per instruction family ---------------------------------------------------------------------
void check_perf_opt(Rules& r, bool xpose) {
  if (!r.has("perf_opt")) return;
  const auto opt = r.get("perf_opt");
  PEVP_REQUIRE(r, opt <= perf_opt::FP8_DOUBLE_ROW, "perf_opt", "perf_opt.range", "perf_opt must be 0 (none) or 1 (fp8 double_row)");
  if (opt != perf_opt::FP8_DOUBLE_ROW) return;
  PEVP_REQUIRE(r, is_fp8(static_cast<Dtype>(r.get("in_dtype"))), "perf_opt", "perf_opt.double_row",
            "double_row needs an fp8 in_dtype");
  PEVP_REQUIRE(r, r.get("col_grp") == 0xF, "perf_opt", "perf_opt.double_row", "double_row cannot combine with column tiling (col_grp 0xF)");
  PEVP_REQUIRE(r, !xpose, "perf_opt", "perf_opt.double_row", "double_row cannot combine with transpose");
}

void check_mx_perf_mode(Rules& r, bool mx_source) {
  if (!r.has("perf_mode")) return;
  const auto mode = r.get("perf_mode");
  PEVP_REQUIRE(r, mode <= 6, "perf_mode", "perf_mode.range", "MX_PERF_MODE must be 0..6");
  if (mode != 0)
    PEVP_REQUIRE(r, mx_source, "perf_mode", "perf_mode.mx_only", "QUAD_ROW / OCT_ROW pump MX sources only");
}

bool xpose_of(const Rules& r) {
  if (r.has("transpose_mode")) return r.get("transpose_mode") != 0;
  if (r.has("flags.xpose_mode")) return r.get("flags.xpose_mode") != 0;
  return false;
}

// MAVERICK load-seed / save-seed micro-op contracts (spec 5.1).
void check_seed_contract(Rules& r, bool is_matmul) {
  if (!r.has("flags.seed_mode")) return;
  const auto seed = r.get("flags.seed_mode");
  PEVP_REQUIRE(r, seed <= 2, "flags.seed_mode", "flags.seed_mode", "seed_mode must be NONE(0), LOAD_SEED(1) or SAVE_SEED(2)");
  if (!is_maverick(r.d_.gen) || seed == 0 || seed > 2) return;
  const char* rule = seed == 1 ? "seed.load_contract" : "seed.save_contract";
  r.equal("tile_size.row", tile_size::R64, rule, "a seed micro-op's tile_size.row (r64)");
  r.equal("tile_size.col", tile_size::C256, rule, "a seed micro-op's tile_size.col (c256)");
  for (unsigned k = 0; k < 3; ++k)
    r.equal("src_mem_pattern.num_elem[" + std::to_string(k) + "]", 1, rule, "the single identity source element's extent");
  r.equal("in_dtype", static_cast<std::int64_t>(Dtype::FP32), rule, "a seed micro-op's in_dtype (FP32)");
  r.equal("fp32_mode", static_cast<std::int64_t>(Fp32Mode::High), rule, "a seed micro-op's fp32_mode (High)");
  r.equal("flags.xpose_mode", 1, rule, "a seed micro-op's xpose_mode (enabled)");
  r.equal("num_active_rows", 1, rule, "a seed micro-op's num_active_rows");
  r.equal("num_active_cols", 0, rule, "a seed micro-op's num_active_cols");
  if (!is_matmul) return;
  const auto out = r.get("out_dtype");  // 0 means FP32 (spec 8)
  PEVP_REQUIRE(r, out == 0 || out == static_cast<std::int64_t>(Dtype::FP32), "out_dtype", rule,
            "a seed micro-op's out_dtype must be FP32 (or 0 = FP32)");
  if (seed == 2 && pattern_member(static_cast<std::uint32_t>(r.get("dst_mem_pattern.start_addr"))) == PatternMember::Tensor3D) {
    r.equal("dst_mem_pattern.num_elem[0]", 1, rule, "SaveSeed's 1x1x2 dst");
    r.equal("dst_mem_pattern.num_elem[1]", 1, rule, "SaveSeed's 1x1x2 dst");
    r.equal("dst_mem_pattern.num_elem[2]", 2, rule, "SaveSeed's 1x1x2 dst");
  }
}

unsigned dst_partitions(const Rules& r) {
  const auto cols = r.get_or_default("num_active_cols");
  return static_cast<unsigned>(std::min<std::int64_t>(cols == 0 && is_maverick(r.d_.gen) ? 128 : cols, 128));
}

void check_ldweights_or_matmul(Rules& r, bool is_matmul) {
  const bool src_union = is_union_field(r.d_, "src_mem_pattern");
  const PatternView src = view_pattern(r, "src_mem_pattern", src_union);
  const bool mx = src.member == PatternMember::MxTensorV2;
  check_in_dtype(r, mx && is_maverick(r.d_.gen));
  check_pattern(r, src, false, static_cast<unsigned>(r.get("num_active_rows")));
  check_tile(r, false);
  check_perf_opt(r, xpose_of(r));
  check_mx_perf_mode(r, mx);
  for (const char* b : {"transpose_mode", "bg_xpose_mode"})
    if (r.has(b)) PEVP_REQUIRE(r, r.get(b) <= 1, b, "xpose.range", std::string(b) + " must be 0 or 1");
  check_seed_contract(r, is_matmul);
  if (!is_matmul) return;
  check_out_dtype(r);
  check_psum_group(r);
  const PatternView dst = view_pattern(r, "dst_mem_pattern", is_union_field(r.d_, "dst_mem_pattern"));
  check_dst(r, dst, dst_partitions(r));
  // "if c256 and tensor_pattern, the upper dim of dst must have a size of 2"
  if (r.has("tile_size.col") && r.get("tile_size.col") == tile_size::C256 && dst.member == PatternMember::Tensor3D &&
      r.get("flags.seed_mode") == 0)
    PEVP_REQUIRE(r, r.get("dst_mem_pattern.num_elem[2]") == 2, "dst_mem_pattern.num_elem[2]", "mm.c256_dst_upper_dim",
              "a c256 matmul's dst upper dimension must be 2 (PE columns 0-127 and 128-255)");
}

void check_sparse(Rules& r) {
  check_in_dtype(r, false);
  check_pattern(r, view_pattern(r, "src_mem_pattern", false), false, static_cast<unsigned>(r.get("num_active_rows")));
  const auto fmaps = r.get("src_mem_pattern.num_elem[3]");
  PEVP_REQUIRE(r, fmaps >= 2 && fmaps <= 4, "src_mem_pattern.num_elem[3]", "sparse.fmaps",
            "MatmulSparse sends 2, 3 or 4 fmaps per partition (the 4th source dimension)");
  check_tile(r, false);
  check_out_dtype(r);
  check_psum_group(r);
  if (r.has("flags.seed_mode"))
    PEVP_REQUIRE(r, r.get("flags.seed_mode") <= 2, "flags.seed_mode", "flags.seed_mode", "seed_mode must be 0..2");
  check_dst(r, view_pattern(r, "dst_mem_pattern", false), dst_partitions(r));
}

void check_pe_seed(Rules& r) {
  PEVP_REQUIRE(r, is_v4(r.d_.gen), "header.opcode", "pe_seed.v4_only",
            "PE_MANAGE_SEED is valid only on NeuronCore-v4 (MARIANA, MARIANA_PLUS)");
  const auto mode = r.get("mode");
  PEVP_REQUIRE(r, mode == 1 || mode == 2, "mode", "pe_seed.mode", "mode must be LOAD_SEED (1) or SAVE_SEED (2)");
  r.equal("num_active_rows", 16, "pe_seed.num_active_rows", "PeManageSeed's num_active_rows (hard-coded)");
  r.equal("num_active_cols", 128, "pe_seed.num_active_cols", "PeManageSeed's num_active_cols (hard-coded)");
  PEVP_REQUIRE(r, one_of(r.get("identity_dtype"), kIdentityDtypes), "identity_dtype", "pe_seed.identity_dtype",
            "identity_dtype must be one of " + set_text(kIdentityDtypes));
  r.equal("identity_mem_pattern.num_elem[0]", 16, "pe_seed.identity", "the identity diagonal's element count");
  check_pattern(r, view_pattern(r, "identity_mem_pattern", false), false, 16);
  auto unused_zero = [&](const std::string& name) {
    for (const auto& f : r.d_.fields)
      if (f.leaf.top == name && f.value != 0)
        r.fail(f.leaf.path, "pe_seed.unused_pattern", "the pattern this mode does not use must be all zero");
  };
  if (mode == 1) {  // LoadSeed: 16 x 128 seeds in SBUF partitions 0-15
    const PatternView src = view_pattern(r, "src_seed_mem_pattern", false);
    check_pattern(r, src, false, 16);
    PEVP_REQUIRE(r, src.addr < geometry(r.d_.gen).sbuf_partition_bytes, "src_seed_mem_pattern.start_addr",
              "pe_seed.load_src", "LoadSeed reads SBUF partitions 0-15: start_addr must be in partition 0");
    PEVP_REQUIRE(r, r.get("src_seed_mem_pattern.num_elem[0]") * r.get("src_seed_mem_pattern.num_elem[1]") == 128,
              "src_seed_mem_pattern.num_elem[0]", "pe_seed.load_src", "LoadSeed reads 128 seeds per partition");
    unused_zero("dst_seed_mem_pattern");
  } else if (mode == 2) {  // SaveSeed: 128 x 16 seeds into PSUM
    r.equal("dst_seed_mem_pattern.num_elem[0]", 2, "pe_seed.save_dst", "SaveSeed dst num_elem[0]");
    r.equal("dst_seed_mem_pattern.num_elem[1]", 8, "pe_seed.save_dst", "SaveSeed dst num_elem[1]");
    r.equal("dst_seed_mem_pattern.step_elem[0]", 1, "pe_seed.save_dst", "SaveSeed dst step_elem[0]");
    r.equal("dst_seed_mem_pattern.step_elem[1]", 512, "pe_seed.save_dst", "SaveSeed dst step_elem[1]");
    r.equal("dst_seed_mem_pattern.start_addr", Geometry::kPsumBase, "pe_seed.save_dst",
            "SaveSeed dst start_addr (PSUM partition 0 byte 0)");
    unused_zero("src_seed_mem_pattern");
  }
}

void check_mx_op(Rules& r, bool is_matmul) {
  PEVP_REQUIRE(r, is_v4(r.d_.gen), "header.opcode", "mx.separate_ops_v4",
            "LDWEIGHTS_MX / MATMUL_MX are the v4 MX path; MAVERICK folds MX into LDWEIGHTS / MATMUL (MXTENSOR_V2)");
  check_in_dtype(r, true);
  const PatternView src{"src_mem_pattern", PatternMember::Tensor3D,
                        static_cast<std::uint32_t>(r.get("src_mem_pattern.start_addr"))};
  const Geometry& geo = geometry(r.d_.gen);
  PEVP_REQUIRE(r, geo.in_sbuf(src.addr), "src_mem_pattern.start_addr", "mempattern.src_sbuf", "MX data must lie in SBUF");
  PEVP_REQUIRE(r, geo.in_sbuf(static_cast<std::uint32_t>(r.get("src_mem_pattern.scale_addr"))), "src_mem_pattern.scale_addr",
            "mempattern.scale_sbuf", "MX scales must lie in SBUF");
  PEVP_REQUIRE(r, r.get("src_mem_pattern.num_elem") >= 1, "src_mem_pattern.num_elem", "mempattern.num_elem",
            "the MX source needs at least 1 element");
  check_mx_perf_mode(r, true);
  check_tile(r, true);
  if (!is_matmul) return;
  check_out_dtype(r);
  check_psum_group(r);
  check_dst(r, view_pattern(r, "dst_mem_pattern", true), dst_partitions(r));
}

void check_ldtags(Rules& r) {
  r.equal("in_dtype", static_cast<std::int64_t>(Dtype::UINT16), "ldtags.in_dtype", "LdTags' in_dtype (UINT16 tag words)");
  const auto force = r.get("force_tag_bits");
  PEVP_REQUIRE(r, force == 0x0 || force == 0x4 || force == 0x8 || force == 0xC, "force_tag_bits", "ldtags.force_tag_bits",
            "force_tag_bits must be 0x00, 0x04, 0x08 or 0x0C");
  check_pattern(r, view_pattern(r, "src_mem_pattern", false), false, static_cast<unsigned>(r.get("num_active_rows")));
  check_tile(r, false);
}

void check_pe_reg_write(Rules& r) {
  check_tile(r, false);
  if (r.get("src_mem_pattern.num_elem[0]") != 0) check_pattern(r, view_pattern(r, "src_mem_pattern", false), false, 1);
}

void check_conv_lut(Rules& r) {
  const auto lut = r.get("lut_dtype");
  PEVP_REQUIRE(r, lut != 0 && is_known_dtype(static_cast<std::uint8_t>(lut)), "lut_dtype", "convlut.lut_dtype",
            "lut_dtype must be a known, non-INVALID dtype ordinal");
  check_pattern(r, view_pattern(r, "src_mem_pattern", false), false, 1);
}

}  // namespace

std::vector<Violation> validate(const Decoded& d) {
  Rules r(d);
  if (!d.opcode) {
    r.fail("header.opcode", "opcode.unknown",
           "opcode " + hex(d.opcode_byte) + " is not a PE instruction of " + std::string(name(d.gen)));
    return r.take();
  }
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

std::vector<Violation> StreamChecker::check(const Decoded& d) {
  std::vector<Violation> out;
  if (!d.opcode || (*d.opcode != Opcode::LDWEIGHTS && *d.opcode != Opcode::MATMUL)) return out;
  const auto tile = tile_of(d);
  if (!tile) return out;
  // Every 32x32 cell the tile covers: an Ldweights replaces exactly those cells'
  // stationary, so a partial reload leaves the rest of an earlier one in place.
  const unsigned r0 = tile->row0 / kCell, r1 = (tile->row0 + tile->rows + kCell - 1) / kCell;
  const unsigned c0 = tile->col0 / kCell, c1 = (tile->col0 + tile->cols + kCell - 1) / kCell;
  const Stationary mine{true, d.get("in_dtype"), d.get_or("fp32_mode", 0)};
  const bool mine_fp32 = mine.in_dtype == static_cast<std::int64_t>(Dtype::FP32);
  for (unsigned r = r0; r < r1 && r < kRows; ++r)
    for (unsigned c = c0; c < c1 && c < kCols; ++c) {
      Stationary& cell = cells_[r][c];
      if (*d.opcode == Opcode::LDWEIGHTS) {
        cell = mine;
        continue;
      }
      if (!cell.loaded || !out.empty()) continue;  // one report per matmul
      const bool st_fp32 = cell.in_dtype == static_cast<std::int64_t>(Dtype::FP32);
      if (st_fp32 != mine_fp32)
        out.push_back({"in_dtype", mine.in_dtype, "mm.fp32_no_mix",
                       "if either matmul input is tf32/fp32 both must be: the stationary is " +
                           std::string(name(static_cast<Dtype>(cell.in_dtype))) + ", the moving " +
                           std::string(name(static_cast<Dtype>(mine.in_dtype)))});
      else if (st_fp32 && cell.fp32_mode != mine.fp32_mode)
        out.push_back({"fp32_mode", mine.fp32_mode, "mm.fp32_mode_match",
                       "the moving fp32_mode must match the stationary's (" +
                           std::string(name(static_cast<Fp32Mode>(cell.fp32_mode & 3))) + ")"});
    }
  return out;
}

}  // namespace pevp::isa
