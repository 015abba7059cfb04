// The shape of the modelled machine at run time: the PE array, its tile grid,
// the sequencer's queues and XBUS ports, SBUF and PSUM. Every unit reads its
// sizes from one ArrayGeometry; none keeps a literal of its own. A generation
// gives the preset (FACTS.md "Geometry", spec 000 sections 2 and 11); an
// architect overrides any settable member (docs/configuration.md, geometry.*)
// and check_geometry() says whether the ISA and the register files can still
// address the result. What each ISA field means on a non-default geometry is
// model decision D-GEOMETRY (docs/model-decisions.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pevp/isa/generation.h"

namespace pevp::isa {

struct ArrayGeometry {
  // The systolic array: rows contract (K), columns are output partitions (M).
  std::uint32_t pe_rows = 128;
  std::uint32_t pe_cols = 128;
  // The tile grid the ISA's tile fields address: bit g of row_grp is row group g
  // of pe_rows / row_groups rows. Derived from the generation, not settable:
  // the 4-bit row_grp/col_grp masks, the four array_stagger_rgN registers and
  // the 4 x 4 grid the per-tile counters name fix them.
  std::uint32_t row_groups = 4;
  std::uint32_t col_groups = 4;
  // The arr_seq issue queues (003 section 3: 16, one per cell of a 4 x 4 grid).
  std::uint32_t queues = 16;
  // SBUF read ports; the PSUM write port is XBUS sbuf_xbus_ports. Fixed by the
  // protected throttle_cfg.disable_throttle[8:0] (nine bits, D-XBUS).
  std::uint32_t sbuf_xbus_ports = 8;
  // SBUF and PSUM have this many partitions each.
  std::uint32_t partitions = 128;
  std::uint32_t sbuf_partition_bytes = 256 * 1024;
  std::uint32_t psum_banks = 8;
  std::uint32_t psum_bank_bytes = 2048;

  // The ISA address map (D-ADDR): SBUF partition-major from 0, PSUM partition 0
  // byte 0 at 0x2000000 (the spec's SaveSeed start_addr).
  static constexpr std::uint32_t kSbufBase = 0x0000000;
  static constexpr std::uint32_t kPsumBase = 0x2000000;
  // Bit masks of PSUM banks are one byte wide (psum_zero_region reaches 8 banks).
  static constexpr std::uint32_t kMaxPsumBanks = 8;
  // num_active_rows/cols are one-byte fields whose 0 encodes 256 (D-GEOMETRY).
  static constexpr std::uint32_t kMaxArraySide = 256;
  static constexpr std::uint32_t kMinArraySide = 32;

  std::uint32_t group_rows() const { return pe_rows / row_groups; }
  std::uint32_t group_cols() const { return pe_cols / col_groups; }
  std::uint32_t psum_partition_bytes() const { return psum_banks * psum_bank_bytes; }
  std::uint32_t sbuf_bytes() const { return partitions * sbuf_partition_bytes; }
  std::uint32_t psum_bytes() const { return partitions * psum_partition_bytes(); }
  std::uint32_t xbus_ports() const { return sbuf_xbus_ports + 1; }
  std::uint32_t psum_xbus() const { return sbuf_xbus_ports; }
  std::uint32_t partitions_per_xbus() const { return partitions / sbuf_xbus_ports; }
  bool in_sbuf(std::uint32_t addr) const { return addr < kSbufBase + sbuf_bytes(); }
  bool in_psum(std::uint32_t addr) const { return addr >= kPsumBase && addr - kPsumBase < psum_bytes(); }

  bool operator==(const ArrayGeometry& o) const;
  bool operator!=(const ArrayGeometry& o) const { return !(*this == o); }
};

// The preset of a generation: SBUF 128 x 224 KiB (v3) or 128 x 256 KiB (v4+),
// PSUM 128 x 8 x 2 KiB, a 128 x 128 array (MAVERICK: 128 x 256, the spec's c256
// tiles) on a grid of 32 x 32 cells.
const ArrayGeometry& preset_geometry(Generation g);

// The first rule `geo` breaks for generation `g`, or nothing: which member
// (named as its configuration key, "geometry.pe_rows"), the value, and what is
// allowed.
struct GeometryError {
  std::string key;
  std::uint64_t value = 0;
  std::string rule;
  std::string describe() const;  // "geometry.pe_rows = 96: must be a power of two in 32..256"
};
std::optional<GeometryError> check_geometry(const ArrayGeometry& geo, Generation g);

// The members that follow the array unless set explicitly (D-GEOMETRY-FOLLOW).
// partitions: the fewest the array needs (each PE row reads one SBUF
// partition, each PE column writes one PSUM partition, MAVERICK's c256 folding
// two columns into one), never fewer than the generation's preset has.
std::uint32_t partitions_for_array(std::uint32_t pe_rows, std::uint32_t pe_cols, Generation g);
// sbuf_partition_bytes: the preset's total SBUF bytes shared over `partitions`
// (whole 4 KiB pages), so an array of another shape keeps the same memory.
std::uint32_t sbuf_partition_bytes_for(std::uint32_t partitions, Generation g);

}  // namespace pevp::isa
