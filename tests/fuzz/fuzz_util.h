// What the libFuzzer harnesses of tests/fuzz share: a failed property aborts with one line naming the target and
// what broke (libFuzzer then writes the input as crash-<sha1>), the leading selector byte of the ISA harnesses, and
// the geometries they decode and assemble for. docs/reliability.md describes each harness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pevp/isa/generation.h"
#include "pevp/isa/geometry.h"

namespace pevp::fuzz {

// A broken property. abort() rather than an exception: the harnesses let exceptions outside the error contract
// escape on purpose, and an abort is reported the same way (deadly signal) with a stack.
[[noreturn]] inline void fail(const char* target, const std::string& what) {
  std::fprintf(stderr, "\n==pevp-fuzz== %s: %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline std::string hex(const std::uint8_t* p, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) s += digits[p[i] >> 4], s += digits[p[i] & 0xF];
  return s;
}

// Bits 0-1 of a selector byte: the generation.
inline isa::Generation generation_of(std::uint8_t selector) { return isa::kAllGenerations[selector & 3]; }

// Index 0 is the generation's preset; 1-6 the shapes the platform and geometry tests configure (a smaller array,
// 256 partitions, fewer PSUM banks); 7 a shape read from three more input bytes (`custom`, any member values
// isa::check_geometry may accept: a side of 32..256, SBUF partitions of any whole number of 4 KiB pages, PSUM
// banks of any multiple of 64 bytes). A shape the generation cannot take falls back to the preset, so every input
// decodes on a geometry isa::check_geometry accepts.
constexpr unsigned kCustomGeometry = 7;
constexpr std::size_t kCustomGeometryBytes = 3;
inline isa::ArrayGeometry geometry_of(isa::Generation g, unsigned index, const std::uint8_t* custom = nullptr) {
  isa::ArrayGeometry geo = isa::preset_geometry(g);
  switch (index % 8) {
    case 0: return geo;
    case 1: geo.pe_rows = geo.pe_cols = 64; break;
    case 2: geo.pe_rows = geo.pe_cols = 32; break;
    case 3: geo.pe_cols = 256, geo.partitions = 256, geo.sbuf_partition_bytes = 131072; break;
    case 4: geo.pe_rows = geo.pe_cols = 256, geo.partitions = 256, geo.sbuf_partition_bytes = 131072; break;
    case 5: geo.pe_rows = geo.pe_cols = 64, geo.psum_banks = 4, geo.psum_bank_bytes = 1024; break;
    case 6: geo.partitions = 256, geo.sbuf_partition_bytes = 131072; break;
    case kCustomGeometry:
      if (custom == nullptr) return geo;
      geo.pe_rows = 32u << (custom[0] & 3);
      geo.pe_cols = 32u << (custom[0] >> 2 & 3);
      geo.partitions = 32u << (custom[0] >> 4 & 3);
      geo.psum_banks = 1u << (custom[0] >> 6 & 3);
      geo.sbuf_partition_bytes = 4096u * (1u + custom[1] % (8192u / geo.partitions));
      geo.psum_bank_bytes = 64u * (1u + (custom[2] | (custom[1] & 0x3u) << 8) % 1024u);
      break;
  }
  return isa::check_geometry(geo, g) ? isa::preset_geometry(g) : geo;
}

}  // namespace pevp::fuzz
