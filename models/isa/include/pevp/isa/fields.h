// Field reflection: one table per (generation, struct) naming every byte of the
// 64-byte instruction with the spec's field names. The decoder, the JSON and
// text printers, the validity rules and the generic encoder all walk these
// tables, so a layout exists in exactly one place (layout.h) and the tables are
// built from it with offsetof.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pevp/isa/generation.h"
#include "pevp/isa/opcode.h"

namespace pevp::isa {

// What a leaf value means (drives printing and enum names).
enum class ValueKind : std::uint8_t {
  Unsigned,
  Signed,
  Address,
  Opcode,
  Dtype,
  Fp32Mode,
  Bool,
  PerfOpt,
  MxPerfMode,
  PsumAccumulateFlags,
  ZeroRegion,
  GroupMask,
  SeedMode,
  WaitMode,
  UpdateMode,
  AccumulateMode,
  LoadOrder,
  TileRowSize,
  TileColSize,
  Reserved,  // must be zero; value printed as hex bytes
};

// How a top-level field is laid out inside.
enum class Part : std::uint8_t {
  Scalar,
  Reserved,
  Header,
  Events,
  Tensor1D,
  Tensor2D,
  Tensor3D,
  Tensor4D,
  MemPattern3D,  // union {t | i | mx}, member chosen by start_addr markers
  MxMemPattern1D,
  MatmulFlags,
  LdWeightFlags,
  TileSize,
  TileSel,
};

struct FieldDesc {
  const char* name;
  std::uint8_t offset;
  std::uint8_t size;
  Part part;
  ValueKind kind;  // for Scalar parts
};

struct Leaf;

// path -> position in one leaf set, for Decoded::field(), which other models call
// by path for every instruction. The paths are grouped by length, so a lookup
// hashes nothing and compares only the few paths of the same length; the first
// leaf with a path wins, as in StructLayout::leaf_index.
class LeafLookup {
 public:
  explicit LeafLookup(const std::vector<Leaf>& leaves);
  // The position of `path`, or -1 when the set has no such leaf.
  int find(std::string_view path) const {
    if (path.size() + 1 >= first_.size()) return -1;
    for (std::size_t i = first_[path.size()]; i < first_[path.size() + 1]; ++i)
      if (entries_[i].path == path) return entries_[i].position;
    return -1;
  }

 private:
  struct Entry {
    std::string_view path;
    std::uint16_t position;
  };
  std::vector<Entry> entries_;           // by path length, then position
  std::vector<std::uint16_t> first_;     // entries_ of length n: [first_[n], first_[n + 1])
};

struct StructLayout {
  StructKind kind;
  std::string c_name;  // "MAVERICK S3_LW"
  std::vector<FieldDesc> fields;
  const FieldDesc* find(std::string_view name) const;

  // The expanded leaves, one set per combination of MEM_PATTERN3D union members
  // (filled once by layout_of; leaves_of picks the set).
  std::vector<std::vector<Leaf>> leaf_sets;
  std::vector<std::unordered_map<std::string_view, std::uint16_t>> leaf_index;  // path -> position, per set
  std::vector<LeafLookup> leaf_lookup;  // the same, faster to query; per set
  std::vector<std::uint8_t> union_offsets;  // byte offsets of the MEM_PATTERN3D fields

  // The leaf sets of all layouts are numbered 0 .. leaf_set_count() - 1; this
  // layout's set s is first_leaf_set + s. Code that precomputes something per
  // leaf set (decode's field templates, the rules' resolved paths) keeps it in
  // a vector indexed by that number instead of looking it up per instruction.
  std::size_t first_leaf_set = 0;
};

// The layout `g` uses for `kind`.
const StructLayout& layout_of(Generation g, StructKind kind);
// Every layout (each generation's nine structs), and how many leaf sets they have.
const std::vector<StructLayout>& all_layouts();
std::size_t leaf_set_count();

// Which member of a MEM_PATTERN3D union a start_addr selects.
enum class PatternMember : std::uint8_t { Tensor3D, MxTensorV2, Indirect16B, Conflicting };
PatternMember pattern_member(std::uint32_t start_addr);
std::string_view name(PatternMember m);

// A leaf: one number-valued piece of the instruction.
struct Leaf {
  // "flags.accumulate_flag", "src_mem_pattern.num_elem[2]"; points into storage
  // that lives as long as the program, so a Leaf is cheap to copy.
  std::string_view path;
  std::uint8_t offset = 0;   // byte offset in the instruction
  std::uint8_t size = 0;     // bytes (1, 2, 4; reserved: any)
  std::uint8_t bit_lo = 0;   // for bitfields inside the bytes
  std::uint8_t bit_width = 0;  // 0: the whole bytes
  ValueKind kind = ValueKind::Unsigned;
  bool is_signed = false;
  std::string_view top;      // the top-level field this leaf belongs to
};

// The position of each path in the vector leaves_of() returns for `bytes`.
const std::unordered_map<std::string_view, std::uint16_t>& leaf_index_of(const StructLayout& layout,
                                                                         const std::uint8_t* bytes);

// The layout's leaves; union members are chosen from `bytes`. The vector lives
// as long as the program (no allocation per call).
const std::vector<Leaf>& leaves_of(const StructLayout& layout, const std::uint8_t* bytes);
// Which of layout.leaf_sets (and leaf_index) `bytes` use: leaves_of() is
// layout.leaf_sets[leaf_set_of(layout, bytes)].
std::size_t leaf_set_of(const StructLayout& layout, const std::uint8_t* bytes);

// Little-endian read/write of a (non-reserved) leaf. write_leaf returns false when
// `value` does not fit the leaf's width (nothing is written then).
std::uint64_t read_leaf(const std::uint8_t* bytes, const Leaf& leaf);
std::int64_t read_leaf_signed(const std::uint8_t* bytes, const Leaf& leaf);
bool write_leaf(std::uint8_t* bytes, const Leaf& leaf, std::int64_t value);

}  // namespace pevp::isa
