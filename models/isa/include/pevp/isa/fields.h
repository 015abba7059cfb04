// Field reflection: one table per (generation, struct) naming every byte of the
// 64-byte instruction with the spec's field names. The decoder, the JSON and
// text printers, the validity rules and the generic encoder all walk these
// tables, so a layout exists in exactly one place (layout.h) and the tables are
// built from it with offsetof.
#pragma once

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

struct StructLayout {
  StructKind kind;
  std::string c_name;  // "MAVERICK S3_LW"
  std::vector<FieldDesc> fields;
  const FieldDesc* find(std::string_view name) const;

  // The expanded leaves, one set per combination of MEM_PATTERN3D union members
  // (filled once by layout_of; leaves_of picks the set).
  std::vector<std::vector<Leaf>> leaf_sets;
  std::vector<std::unordered_map<std::string_view, std::uint16_t>> leaf_index;  // path -> position, per set
  std::vector<std::uint8_t> union_offsets;  // byte offsets of the MEM_PATTERN3D fields
};

// The layout `g` uses for `kind`.
const StructLayout& layout_of(Generation g, StructKind kind);

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

// Little-endian read/write of a (non-reserved) leaf. write_leaf returns false when
// `value` does not fit the leaf's width (nothing is written then).
std::uint64_t read_leaf(const std::uint8_t* bytes, const Leaf& leaf);
std::int64_t read_leaf_signed(const std::uint8_t* bytes, const Leaf& leaf);
bool write_leaf(std::uint8_t* bytes, const Leaf& leaf, std::int64_t value);

}  // namespace pevp::isa
