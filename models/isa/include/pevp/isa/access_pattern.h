// Access patterns as the model reads them (spec 000 section 4: TENSOR*D and the
// MEM_PATTERN3D union): which member, where it starts, its (step, num)
// dimensions, and what follows from them on an ArrayGeometry -- the partition
// and byte offset of the start, the bytes of a partition it covers, the PSUM
// banks it reaches, and the byte offset of every element inside a partition.
// One library for every unit that reasons about a pattern: the validity rules,
// the typed form of an instruction (instruction.h reads the patterns), the
// PE-array executor and the cost model, so a footprint or a bank mask is
// derived in one place. Addresses are
// in the ISA map (D-ADDR): SBUF partition-major from 0, PSUM at 0x2000000.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "pevp/isa/fields.h"
#include "pevp/isa/geometry.h"

namespace pevp::isa {

// TENSOR4D has the most dimensions.
inline constexpr unsigned kMaxPatternDims = 4;

struct AccessPattern {
  PatternMember member = PatternMember::Tensor3D;
  std::uint32_t start = 0;      // start_addr with the member's marker bits cleared
  std::uint32_t start_raw = 0;  // start_addr as encoded
  unsigned dims = 0;            // dimensions present (1 for the MXMEM / indirect patterns' single one)
  // The ISA's fields are 16 bits wide (steps signed); 32 hold them, and keep a
  // micro-op, which carries two patterns, small.
  std::array<std::int32_t, kMaxPatternDims> step{};  // elements, signed, innermost first
  std::array<std::int32_t, kMaxPatternDims> num{};   // elements per dimension
  std::uint32_t scale_addr = 0;                      // MX patterns: the E8M0 scales in SBUF
  std::uint32_t index_addr = 0;                      // indirect / MXMEM: the index vector (0 = none)
  std::uint32_t num_index = 0;                       // indirect: how many indices

  // Elements the plain dimensions enumerate (0 when a dimension is empty).
  std::uint64_t count() const;
  // Elements per partition the pattern yields: count(), times num_index for the indirect member, whose num_elem
  // elements are per index (D-INDIRECT).
  std::uint64_t elements() const;
  // The element offsets, relative to the start, of the lowest and highest
  // element (negative steps pull the low end below 0). A dimension of 0 or 1
  // elements reaches nothing.
  std::int64_t lowest() const;
  std::int64_t highest() const;
};

enum class Memory : std::uint8_t { Sbuf, Psum };
std::uint32_t base_of(Memory m);
std::uint32_t partition_bytes(Memory m, const ArrayGeometry& geo);

// Where an address falls in a memory: its partition and the byte inside it.
struct Location {
  std::uint32_t partition = 0;
  std::uint32_t offset = 0;
};
std::optional<Location> locate(std::uint32_t addr, Memory m, const ArrayGeometry& geo);

// The bytes one partition's part of a pattern covers, relative to the
// partition's first byte: [first, last]. Outside 0 .. partition_bytes - 1 when
// the pattern leaves its partition.
struct ByteRange {
  std::int64_t first = 0, last = 0;
};
ByteRange covered_bytes(const AccessPattern& p, std::uint32_t offset, unsigned elem_bytes);

// The PSUM banks a range of a partition's bytes touches, bit b = bank b, clamped
// to the banks that exist.
std::uint8_t psum_banks(const ByteRange& r, const ArrayGeometry& geo);

// The per-partition plan of a pattern: the byte offsets of its elements inside
// one partition, in pattern order (the same in every partition), and whether
// they are one contiguous row. `bad_element` is the first element that leaves
// the partition (its indices and offset) when the plan failed.
struct PartitionPlan {
  std::vector<std::size_t> offsets;
  bool contiguous = false;
  struct Outside {
    std::array<std::int64_t, 3> index{};  // [i2][i1][i0]
    std::int64_t offset = 0;
  };
  std::optional<Outside> outside;
};
// Fills `plan` (its storage reused) for the first three dimensions of `p`.
void plan_partition(const AccessPattern& p, std::uint32_t offset, unsigned elem_bytes, std::uint32_t partition_bytes,
                    PartitionPlan& plan);

}  // namespace pevp::isa
