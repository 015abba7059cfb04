#include "pevp/memory/footprint.h"

#include "pevp/isa/hex.h"

#include <cstdio>
#include <limits>

namespace pevp::memory {
namespace {

std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<std::int64_t>::max()
                                                      : std::numeric_limits<std::int64_t>::min();
  return r;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

Footprint failure(std::string rule, std::string message) {
  Footprint f;
  f.error = FootprintError{std::move(rule), std::move(message)};
  return f;
}

}  // namespace

PsumLimit psum_limit(isa::Generation gen) {
  return isa::is_v4_plus(gen) ? PsumLimit::Partition : PsumLimit::OneBank;
}

Footprint footprint(const isa::ArrayGeometry& geo, Region region, const AccessPattern& p, PsumLimit psum) {
  const bool is_psum = region == Region::Psum;
  const char* mem = is_psum ? "PSUM" : "SBUF";
  if (p.step_elem.size() != p.num_elem.size())
    return failure("footprint.shape", std::to_string(p.step_elem.size()) + " step_elem but " +
                                          std::to_string(p.num_elem.size()) + " num_elem: one of each per dimension");
  for (std::size_t k = 0; k < p.num_elem.size(); ++k)
    if (p.num_elem[k] == 0)
      return failure("footprint.shape", "num_elem[" + std::to_string(k) + "] is 0: every dimension needs >= 1 element");
  if (p.elem_bits != 4 && p.elem_bits != 8 && p.elem_bits != 16 && p.elem_bits != 32)
    return failure("footprint.elem_bits", "element size " + std::to_string(p.elem_bits) + " bits: must be 4, 8, 16 or 32");

  const std::uint64_t base = is_psum ? isa::ArrayGeometry::kPsumBase : isa::ArrayGeometry::kSbufBase;
  const std::uint32_t part_bytes = is_psum ? geo.psum_partition_bytes() : geo.sbuf_partition_bytes;
  const std::uint64_t bytes = std::uint64_t{geo.partitions} * part_bytes;
  if (p.start_addr < base || p.start_addr - base >= bytes)
    return failure("footprint.region", "start_addr " + hex(p.start_addr) + " is not in " + mem + " [" + hex(base) +
                                           ", " + hex(base + bytes) + ")");
  const auto local = static_cast<std::uint32_t>(p.start_addr - base);
  const std::uint32_t first_part = local / part_bytes;
  const std::uint32_t offset = local % part_bytes;
  if (p.partitions == 0 || std::uint64_t{first_part} + p.partitions > geo.partitions)
    return failure("footprint.partitions", "starts in " + std::string(mem) + " partition " + std::to_string(first_part) +
                                               " and spans " + std::to_string(p.partitions) + " partitions: needs 1.." +
                                               std::to_string(geo.partitions - first_part) + " (" +
                                               std::to_string(geo.partitions) + " partitions exist)");

  // Element extents of the free pattern relative to the start, negative steps
  // pulling the low end down. Saturation only matters for already-absurd patterns.
  std::int64_t lo = 0, hi = 0;
  for (std::size_t k = 0; k < p.num_elem.size(); ++k) {
    const std::int64_t reach = std::int64_t{p.step_elem[k]} * (std::int64_t{p.num_elem[k]} - 1);  // < 2^63
    if (reach < 0) lo = sat_add(lo, reach);
    else hi = sat_add(hi, reach);
  }
  const std::int64_t limit = std::int64_t{part_bytes} * 2 + 1;  // more elements than any partition holds
  const std::string extent = "elements " + std::to_string(lo) + ".." + std::to_string(hi) + " of " +
                             std::to_string(p.elem_bits) + " bits from partition byte " + std::to_string(offset);
  if (lo < -limit || hi > limit)
    return failure("footprint.partition", extent + " leave the " + std::to_string(part_bytes) + "-byte " + mem +
                                              " partition");
  const std::int64_t bits = p.elem_bits;
  const std::int64_t first = offset + floor_div(lo * bits, 8);
  const std::int64_t last = offset + floor_div(hi * bits + bits - 1, 8);
  const std::string covers = extent + " cover partition bytes " + std::to_string(first) + ".." + std::to_string(last);
  if (first < 0 || last >= part_bytes)
    return failure("footprint.partition", covers + ", outside the " + std::string(mem) + " partition's bytes 0.." +
                                              std::to_string(part_bytes - 1));
  if (is_psum && psum == PsumLimit::OneBank) {
    const std::int64_t bank = offset / geo.psum_bank_bytes;
    const std::int64_t bank_lo = bank * geo.psum_bank_bytes, bank_hi = bank_lo + geo.psum_bank_bytes - 1;
    if (first < bank_lo || last > bank_hi)
      return failure("footprint.psum_bank", covers + ", crossing PSUM bank " + std::to_string(bank) + " (bytes " +
                                                std::to_string(bank_lo) + ".." + std::to_string(bank_hi) +
                                                "): an access stays in one bank on this generation");
  }

  Footprint f;
  f.spans.reserve(p.partitions);
  for (std::uint32_t i = 0; i < p.partitions; ++i)
    f.spans.push_back({first_part + i, static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(last - first + 1)});
  return f;
}

}  // namespace pevp::memory
