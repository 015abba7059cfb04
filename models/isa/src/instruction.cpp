#include "pevp/isa/instruction.h"

#include "pevp/isa/decode.h"
#include "pevp/isa/tiles.h"

#include <array>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace pevp::isa {
namespace {

// ---- the leaves typed() reads, resolved to positions once per leaf set ---------------------------------------
// typed() runs for every distinct instruction the SEQ fetches (every instruction of a stream that never repeats):
// a path lookup per leaf would cost more than the rest of the firmware's work, so each path is resolved to its
// position in Decoded::fields once per leaf set of every layout, as the validity rules do.
enum Scalar : unsigned {
  kInDtype, kFp32Mode, kOutDtype, kNumActiveRows, kNumActiveCols, kTransposeMode, kXposeMode, kBgXposeMode,
  kSeedMode, kScalarMode, kLoadOrder, kPerfOpt, kPerfMode, kPsumFlags, kAccumulateFlag, kZeroRegion,
  kForceTagBits, kRegAddr, kImmValue, kMode, kIdentityDtype, kLutDtype, kWaitMode, kWaitSem, kWaitValue,
  kUpdateMode, kUpdateSem, kUpdateValue, kInstWordLen, kRowGrp, kColGrp, kTileRow, kTileCol, kRowSel, kColSel,
  kTagWeightMode, kNumScalars
};
constexpr std::array<std::string_view, kNumScalars> kScalarPaths = {
    "in_dtype", "fp32_mode", "out_dtype", "num_active_rows", "num_active_cols", "transpose_mode", "flags.xpose_mode",
    "bg_xpose_mode", "flags.seed_mode", "flags.scalar_mode", "flags.load_order", "perf_opt", "perf_mode",
    "psum_accumulate_flags", "flags.accumulate_flag", "psum_zero_region", "force_tag_bits", "reg_addr", "imm_value",
    "mode", "identity_dtype", "lut_dtype", "events.wait_mode", "events.wait_sem", "events.wait_value",
    "events.update_mode", "events.update_sem", "events.update_value", "header.inst_word_len", "row_grp", "col_grp",
    "tile_size.row", "tile_size.col", "tile_sel.row_sel", "tile_sel.col_sel", "tag_weight_mode"};

enum PatternName : unsigned { kSrc, kDst, kIdentity, kSrcSeed, kDstSeed, kNumPatterns };
constexpr std::array<std::string_view, kNumPatterns> kPatternNames = {
    "src_mem_pattern", "dst_mem_pattern", "identity_mem_pattern", "src_seed_mem_pattern", "dst_seed_mem_pattern"};
// The sub-leaves of a pattern: the one-dimension forms name num_elem / step_elem without an index.
enum PatternLeaf : unsigned {
  kStart, kScale, kIndex, kNumIndex, kNumScalar, kStepScalar, kNum0, kStep0 = kNum0 + kMaxPatternDims,
  kNumPatternLeaves = kStep0 + kMaxPatternDims
};

constexpr unsigned kNumPaths = kNumScalars + kNumPatterns * kNumPatternLeaves;
constexpr unsigned pattern_path(PatternName p, unsigned leaf) { return kNumScalars + p * kNumPatternLeaves + leaf; }

const std::string& path_text(unsigned k) {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v(kScalarPaths.begin(), kScalarPaths.end());
    for (std::string_view name : kPatternNames) {
      const std::string base(name);
      for (const char* leaf : {".start_addr", ".scale_addr", ".index_addr", ".num_index", ".num_elem", ".step_elem"})
        v.push_back(base + leaf);
      for (unsigned d = 0; d < kMaxPatternDims; ++d) v.push_back(base + ".num_elem[" + std::to_string(d) + "]");
      for (unsigned d = 0; d < kMaxPatternDims; ++d) v.push_back(base + ".step_elem[" + std::to_string(d) + "]");
    }
    return v;
  }();
  return all[k];
}

struct LeafSet {
  std::array<std::int16_t, kNumPaths> position{};  // in Decoded::fields; -1: no such leaf
  std::array<bool, kNumPatterns> is_union{};       // the pattern is a MEM_PATTERN3D (markers choose the member)
};

LeafSet resolve(const Decoded& d) {
  LeafSet s;
  for (unsigned k = 0; k < kNumPaths; ++k) {
    const DecodedField* f = d.field(path_text(k));
    s.position[k] = static_cast<std::int16_t>(f ? f - d.fields.data() : -1);
  }
  for (unsigned p = 0; p < kNumPatterns; ++p) {
    const FieldDesc* f = d.layout ? d.layout->find(kPatternNames[p]) : nullptr;
    s.is_union[p] = f && f->part == Part::MemPattern3D;
  }
  return s;
}

// Every leaf set of every layout, by global leaf set number; built once.
const std::vector<LeafSet>& leaf_sets() {
  static const auto sets = per_leaf_set<LeafSet>(resolve);
  return sets;
}

// Reads a decoded instruction's leaves by position.
class Reader {
 public:
  explicit Reader(const Decoded& d) : d_(d), set_(set_of(d)) {}

  std::int64_t get(unsigned k, std::int64_t fallback = 0) const {
    const std::int16_t at = set_->position[k];
    return at < 0 ? fallback : d_.fields[static_cast<std::size_t>(at)].value;
  }
  bool has(unsigned k) const { return set_->position[k] >= 0; }
  std::optional<std::int64_t> maybe(unsigned k) const {
    return has(k) ? std::optional<std::int64_t>(get(k)) : std::nullopt;
  }

  AccessPattern pattern(PatternName p) const {
    AccessPattern a;
    if (!has(pattern_path(p, kStart))) return a;
    a.start_raw = static_cast<std::uint32_t>(get(pattern_path(p, kStart)));
    a.member = set_->is_union[p] ? pattern_member(a.start_raw) : PatternMember::Tensor3D;
    a.start = a.start_raw;
    if (a.member == PatternMember::MxTensorV2) a.start &= ~ADDR4MARKER_MXTENSOR_V2;
    if (a.member == PatternMember::Indirect16B) a.start &= ~ADDR_MARKER_INDIRECT;
    a.scale_addr = static_cast<std::uint32_t>(get(pattern_path(p, kScale)));
    a.index_addr = static_cast<std::uint32_t>(get(pattern_path(p, kIndex)));
    a.num_index = static_cast<std::uint32_t>(get(pattern_path(p, kNumIndex)));
    if (has(pattern_path(p, kNumScalar))) {  // MXMEM_PATTERN1D, the indirect member
      a.num[0] = static_cast<std::int32_t>(get(pattern_path(p, kNumScalar)));
      a.step[0] = static_cast<std::int32_t>(get(pattern_path(p, kStepScalar)));
      a.dims = 1;
      return a;
    }
    for (unsigned k = 0; k < kMaxPatternDims && has(pattern_path(p, kNum0 + k)); ++k) {
      a.num[k] = static_cast<std::int32_t>(get(pattern_path(p, kNum0 + k)));
      a.step[k] = static_cast<std::int32_t>(get(pattern_path(p, kStep0 + k)));
      a.dims = k + 1;
    }
    return a;
  }
  OperandPart operand() const { return {get(kInDtype), get(kFp32Mode), has(kFp32Mode)}; }
  TilePart tile() const {
    TilePart t;
    t.fields = {maybe(kRowGrp),  maybe(kColGrp), maybe(kTileRow),       maybe(kTileCol),
                maybe(kRowSel),  maybe(kColSel), maybe(kNumActiveRows), maybe(kNumActiveCols)};
    t.rect = tile_rect(t.fields, d_.geo);
    const unsigned rows = t.rect ? t.rect->rows : 0, cols = t.rect ? t.rect->cols : 0;
    // A struct without active counts uses its whole tile (PeRegWrite).
    t.active_rows = has(kNumActiveRows) ? active_extent(get(kNumActiveRows), rows) : rows;
    t.active_cols = has(kNumActiveCols) ? active_extent(get(kNumActiveCols), cols) : cols;
    return t;
  }
  PsumPart psum() const {
    PsumPart p;
    if (has(kPsumFlags)) p.group_flags = static_cast<std::uint8_t>(get(kPsumFlags));
    if (has(kAccumulateFlag)) p.accumulate = get(kAccumulateFlag) != 0;
    p.zero_region = get(kZeroRegion);
    return p;
  }
  bool transpose() const { return transpose_raw() != 0; }
  std::int64_t transpose_raw() const { return has(kTransposeMode) ? get(kTransposeMode) : get(kXposeMode); }
  void common(Common& c) const {
    c.opcode_byte = d_.opcode_byte;
    c.inst_word_len = static_cast<unsigned>(get(kInstWordLen));
    c.events.wait_mode = static_cast<WaitMode>(get(kWaitMode));
    c.events.wait_sem = static_cast<unsigned>(get(kWaitSem));
    c.events.wait_value = static_cast<std::uint32_t>(get(kWaitValue));
    c.events.update_mode = static_cast<UpdateMode>(get(kUpdateMode));
    c.events.update_sem = static_cast<unsigned>(get(kUpdateSem));
    c.events.update_value = get(kUpdateValue);
  }

 private:
  // decode()'s instructions find their set from Decoded::index; one built by hand is resolved here.
  const LeafSet* set_of(const Decoded& d) {
    if (const auto set = leaf_set_number(d)) return &leaf_sets()[*set];
    own_ = std::make_unique<LeafSet>(resolve(d));
    return own_.get();
  }

  const Decoded& d_;
  std::unique_ptr<LeafSet> own_;  // only for a Decoded built by hand (no zeroing on decode()'s path)
  const LeafSet* set_;
};

// The instruction built in place in the variant (it is a few hundred bytes:
// no copy on the way out).
template <typename T>
T& emplace(Instruction& out, const Reader& r) {
  T& t = out.emplace<T>();
  r.common(t);
  return t;
}

}  // namespace

Instruction typed(const Decoded& d) {
  Instruction out;
  typed_into(d, out);
  return out;
}

void typed_into(const Decoded& d, Instruction& out) {
  out = std::monostate{};
  if (!d.opcode) return;
  const Reader r(d);
  switch (*d.opcode) {
    case Opcode::LDWEIGHTS: {
      auto& i = emplace<Ldweights>(out, r);
      i.src = r.pattern(kSrc);
      i.in = r.operand();
      i.tile = r.tile();
      i.transpose = r.transpose();
      i.transpose_raw = r.transpose_raw();
      i.bg_transpose = r.get(kBgXposeMode);
      i.seed_mode = r.get(kSeedMode);
      i.scalar_mode = r.get(kScalarMode);
      i.load_order = r.get(kLoadOrder);
      i.perf_opt = r.get(kPerfOpt);
      i.perf_mode = r.get(kPerfMode);
      i.tag_weight_mode = r.get(kTagWeightMode);
      return;
    }
    case Opcode::MATMUL: {
      auto& i = emplace<Matmul>(out, r);
      i.src = r.pattern(kSrc);
      i.dst = r.pattern(kDst);
      i.in = r.operand();
      i.out_dtype = r.get(kOutDtype);
      i.tile = r.tile();
      i.transpose = r.transpose();
      i.transpose_raw = r.transpose_raw();
      i.bg_transpose = r.get(kBgXposeMode);
      i.seed_mode = r.get(kSeedMode);
      i.scalar_mode = r.get(kScalarMode);
      i.perf_opt = r.get(kPerfOpt);
      i.perf_mode = r.get(kPerfMode);
      i.psum = r.psum();
      return;
    }
    case Opcode::MATMUL_SPARSE: {
      auto& i = emplace<MatmulSparse>(out, r);
      i.src = r.pattern(kSrc);
      i.dst = r.pattern(kDst);
      i.in = r.operand();
      i.out_dtype = r.get(kOutDtype);
      i.tile = r.tile();
      i.seed_mode = r.get(kSeedMode);
      i.psum = r.psum();
      return;
    }
    case Opcode::LDTAGS: {
      auto& i = emplace<LdTags>(out, r);
      i.src = r.pattern(kSrc);
      i.in_dtype = r.get(kInDtype);
      i.force_tag_bits = r.get(kForceTagBits);
      i.tile = r.tile();
      return;
    }
    case Opcode::PE_REG_WRITE: {
      auto& i = emplace<PeRegWrite>(out, r);
      i.reg_addr = static_cast<std::uint32_t>(r.get(kRegAddr));
      i.imm_value = static_cast<std::uint32_t>(r.get(kImmValue));
      i.src = r.pattern(kSrc);
      i.tile = r.tile();
      return;
    }
    case Opcode::PE_MANAGE_SEED: {
      auto& i = emplace<PeManageSeed>(out, r);
      i.mode = r.get(kMode);
      i.identity = r.pattern(kIdentity);
      i.src_seed = r.pattern(kSrcSeed);
      i.dst_seed = r.pattern(kDstSeed);
      i.identity_dtype = r.get(kIdentityDtype);
      i.active_rows = static_cast<unsigned>(r.get(kNumActiveRows));
      i.active_cols = static_cast<unsigned>(r.get(kNumActiveCols));
      return;
    }
    case Opcode::LDWEIGHTS_MX: {
      auto& i = emplace<LdweightsMX>(out, r);
      i.src = r.pattern(kSrc);
      i.in_dtype = r.get(kInDtype);
      i.perf_mode = r.get(kPerfMode);
      i.tile = r.tile();
      return;
    }
    case Opcode::MATMUL_MX: {
      auto& i = emplace<MatmulMX>(out, r);
      i.src = r.pattern(kSrc);
      i.dst = r.pattern(kDst);
      i.in_dtype = r.get(kInDtype);
      i.perf_mode = r.get(kPerfMode);
      i.out_dtype = r.get(kOutDtype);
      i.tile = r.tile();
      i.psum = r.psum();
      return;
    }
    case Opcode::CONV_LUT_LOAD: {
      auto& i = emplace<ConvLutLoad>(out, r);
      i.src = r.pattern(kSrc);
      i.lut_dtype = r.get(kLutDtype);
      return;
    }
  }
  return;
}

namespace {
template <class T, class = void>
struct HasTilePart : std::false_type {};
template <class T>
struct HasTilePart<T, std::void_t<decltype(std::declval<const T&>().tile)>>
    : std::is_same<std::decay_t<decltype(std::declval<const T&>().tile)>, TilePart> {};
}  // namespace

const TilePart* tile_part(const Instruction& i) {
  return std::visit(
      [](const auto& x) -> const TilePart* {
        if constexpr (HasTilePart<std::decay_t<decltype(x)>>::value) return &x.tile;
        else return nullptr;
      },
      i);
}

EventsPart events_of(const Instruction& i) {
  return std::visit(
      [](const auto& x) -> EventsPart {
        if constexpr (std::is_base_of_v<Common, std::decay_t<decltype(x)>>) return x.events;
        else return {};
      },
      i);
}

}  // namespace pevp::isa
