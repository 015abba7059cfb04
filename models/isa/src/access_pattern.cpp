#include "pevp/isa/access_pattern.h"

#include <algorithm>

#include "pevp/isa/enums.h"

namespace pevp::isa {

std::uint64_t AccessPattern::count() const {
  std::uint64_t n = 1;
  for (unsigned k = 0; k < dims; ++k) n *= static_cast<std::uint64_t>(std::max<std::int32_t>(num[k], 0));
  return n;
}

std::uint64_t AccessPattern::elements() const {
  return member == PatternMember::Indirect16B ? count() * num_index : count();
}

std::int64_t AccessPattern::lowest() const {
  std::int64_t lo = 0;
  for (unsigned k = 0; k < dims; ++k)
    if (step[k] < 0) lo += std::int64_t{step[k]} * (std::max<std::int64_t>(num[k], 1) - 1);
  return lo;
}

std::int64_t AccessPattern::highest() const {
  std::int64_t hi = 0;
  for (unsigned k = 0; k < dims; ++k)
    if (step[k] > 0) hi += std::int64_t{step[k]} * (std::max<std::int64_t>(num[k], 1) - 1);
  return hi;
}

std::uint32_t base_of(Memory m) { return m == Memory::Psum ? ArrayGeometry::kPsumBase : ArrayGeometry::kSbufBase; }

std::uint32_t partition_bytes(Memory m, const ArrayGeometry& geo) {
  return m == Memory::Psum ? geo.psum_partition_bytes() : geo.sbuf_partition_bytes;
}

std::optional<Location> locate(std::uint32_t addr, Memory m, const ArrayGeometry& geo) {
  const bool inside = m == Memory::Psum ? geo.in_psum(addr) : geo.in_sbuf(addr);
  if (!inside) return std::nullopt;
  const std::uint32_t rel = addr - base_of(m), part = partition_bytes(m, geo);
  return Location{rel / part, rel % part};
}

ByteRange covered_bytes(const AccessPattern& p, std::uint32_t offset, unsigned elem_bytes) {
  const std::int64_t eb = elem_bytes;
  return {offset + p.lowest() * eb, offset + p.highest() * eb + eb - 1};
}

std::uint8_t psum_banks(const ByteRange& r, const ArrayGeometry& geo) {
  const std::int64_t bank = geo.psum_bank_bytes, last_bank = geo.psum_banks - 1;
  const std::int64_t first = std::clamp<std::int64_t>(r.first / bank, 0, last_bank);
  const std::int64_t last = std::clamp<std::int64_t>(r.last / bank, 0, last_bank);
  std::uint8_t mask = 0;
  for (std::int64_t b = first; b <= last; ++b) mask |= static_cast<std::uint8_t>(1u << b);
  return mask;
}

void plan_partition(const AccessPattern& p, std::uint32_t offset, unsigned elem_bytes, std::uint32_t partition_bytes,
                    PartitionPlan& plan) {
  plan.offsets.clear();
  plan.outside.reset();
  plan.offsets.reserve(p.count());
  const std::int64_t eb = elem_bytes;
  const auto num = [&](unsigned k) { return k < p.dims ? p.num[k] : 1; };
  const auto step = [&](unsigned k) { return k < p.dims ? p.step[k] : 0; };
  for (std::int64_t i2 = 0; i2 < num(2); ++i2)
    for (std::int64_t i1 = 0; i1 < num(1); ++i1)
      for (std::int64_t i0 = 0; i0 < num(0); ++i0) {
        const std::int64_t off = offset + (i0 * step(0) + i1 * step(1) + i2 * step(2)) * eb;
        if (off < 0 || off + eb > static_cast<std::int64_t>(partition_bytes)) {
          plan.outside = PartitionPlan::Outside{{i2, i1, i0}, off};
          return;
        }
        plan.offsets.push_back(static_cast<std::size_t>(off));
      }
  plan.contiguous = true;
  for (std::size_t i = 1; i < plan.offsets.size() && plan.contiguous; ++i)
    plan.contiguous = plan.offsets[i] == plan.offsets[0] + i * elem_bytes;
}

}  // namespace pevp::isa
