// The execution-time access-pattern footprint check: which
// bytes of SBUF or PSUM a pattern touches, per partition, or the precise rule it
// breaks. Plain C++ (no SystemC): the PE array and the firmware stub call it
// before reading operands through DMI, so an out-of-range pattern becomes an
// instruction error instead of a clipped or wild access. Addresses are in the
// global map (D-ADDR): SBUF partition-major from 0, PSUM partition 0 byte 0 at
// 0x2000000. docs/memory.md lists the rules and the 4-bit packing decision.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pevp/isa/generation.h"
#include "pevp/isa/geometry.h"

namespace pevp::memory {

enum class Region : std::uint8_t { Sbuf, Psum };

// How far a PSUM footprint may reach inside its partition: one 2 KiB bank (a
// CAYMAN matmul output) or the whole 16 KiB partition (v4+).
enum class PsumLimit : std::uint8_t { OneBank, Partition };
PsumLimit psum_limit(isa::Generation gen);  // CAYMAN OneBank, later Partition

struct AccessPattern {
  std::uint32_t start_addr = 0;         // global byte address
  std::vector<std::int32_t> step_elem;  // per free dimension, in elements, signed
  std::vector<std::uint32_t> num_elem;  // per free dimension, each >= 1
  unsigned elem_bits = 8;               // 4, 8, 16 or 32; 4-bit elements pack two per byte
  std::uint32_t partitions = 1;         // consecutive partitions from the start's, >= 1
};

// The bytes one partition's footprint lies in: [offset, offset + length) of
// that partition. It is the bounding range: a strided pattern touches a subset,
// and a 4-bit pattern may use one nibble of its first and last byte.
struct Span {
  std::uint32_t partition = 0;
  std::uint32_t offset = 0;  // byte offset inside the partition
  std::uint32_t length = 0;  // bytes
  bool operator==(const Span& o) const {
    return partition == o.partition && offset == o.offset && length == o.length;
  }
};

struct FootprintError {
  std::string rule;     // "footprint.region", "footprint.partitions", ...
  std::string message;  // names the values and the limit
};

struct Footprint {
  std::vector<Span> spans;            // one per partition, in partition order
  std::optional<FootprintError> error;  // set => spans is empty
  bool ok() const { return !error.has_value(); }
};

// Rules, checked in this order (the first broken one is reported):
//   footprint.shape       step_elem and num_elem differ in length, or a num_elem is 0
//   footprint.elem_bits   elem_bits is not 4, 8, 16 or 32
//   footprint.region      start_addr is not inside the chosen memory
//   footprint.partitions  partitions == 0, or first partition + partitions > geometry partitions
//   footprint.partition   the free footprint (negative steps included) leaves the partition
//   footprint.psum_bank   PSUM with PsumLimit::OneBank: the footprint leaves the start's 2 KiB bank
Footprint footprint(const isa::ArrayGeometry& geo, Region region, const AccessPattern& pattern,
                    PsumLimit psum = PsumLimit::Partition);

}  // namespace pevp::memory
