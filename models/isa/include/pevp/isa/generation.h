// Generations of the PE (TensorE) engine the ISA layer speaks, and what each
// one's memories look like (spec 000 sections 2, 11; FACTS.md "Geometry").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pevp::isa {

// The spec's code names. MARIANA_PLUS is a NeuronCore-v4 variant with the same
// instruction set and struct layouts as MARIANA.
enum class Generation : std::uint8_t { CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK };

inline constexpr Generation kAllGenerations[] = {Generation::CAYMAN, Generation::MARIANA,
                                                 Generation::MARIANA_PLUS, Generation::MAVERICK};

std::string_view name(Generation g);
// Accepts the code name in any case, or v3 / v4 / v4+ / v5.
std::optional<Generation> parse_generation(std::string_view text);

// NeuronCore major version: CAYMAN 3, MARIANA and MARIANA_PLUS 4, MAVERICK 5.
int core_version(Generation g);
inline bool is_v4_plus(Generation g) { return core_version(g) >= 4; }
inline bool is_v4(Generation g) { return core_version(g) == 4; }
inline bool is_maverick(Generation g) { return g == Generation::MAVERICK; }

// The address map every access pattern is decoded against (a model decision,
// docs/model-decisions.md D-ADDR): SBUF partition-major from 0, PSUM partition
// 0 byte 0 at 0x2000000 (the spec's SaveSeed start_addr).
struct Geometry {
  std::uint32_t partitions;          // SBUF and PSUM both have this many
  std::uint32_t sbuf_partition_bytes;
  std::uint32_t psum_partition_bytes;  // 8 banks x 2 KiB
  std::uint32_t psum_bank_bytes;
  std::uint32_t psum_banks;
  std::uint32_t pe_rows;             // systolic array rows (contraction)
  std::uint32_t pe_cols;             // systolic array columns (output partitions)

  static constexpr std::uint32_t kSbufBase = 0x0000000;
  static constexpr std::uint32_t kPsumBase = 0x2000000;

  std::uint32_t sbuf_bytes() const { return partitions * sbuf_partition_bytes; }
  std::uint32_t psum_bytes() const { return partitions * psum_partition_bytes; }
  bool in_sbuf(std::uint32_t addr) const { return addr < kSbufBase + sbuf_bytes(); }
  bool in_psum(std::uint32_t addr) const {
    return addr >= kPsumBase && addr - kPsumBase < psum_bytes();
  }
};

const Geometry& geometry(Generation g);

}  // namespace pevp::isa
