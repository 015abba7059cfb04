#include "pevp/pcie/config_space.h"

#include <stdexcept>

namespace pevp::pcie {

namespace {

void put(std::array<std::uint8_t, ConfigSpace::kBytes>& a, unsigned offset, std::uint32_t value, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) a[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

bool power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

ConfigSpace::ConfigSpace(const PciIdentity& id, const BarSizes& bars) : bars_(bars) {
  for (unsigned b = 0; b < kBarSlots; ++b) {
    const std::uint64_t s = bars[b];
    if (s != 0 && (!power_of_two(s) || s < kMinBarBytes || s > kMaxBarBytes))
      throw std::invalid_argument("BAR" + std::to_string(b) + ": " + std::to_string(s) +
                                  " bytes is not a power of two from 16 bytes to 2 GiB (a 32-bit memory BAR)");
  }
  auto& p = power_on_;
  put(p, cfg::kVendor, id.vendor, 2);
  put(p, cfg::kDevice, id.device, 2);
  put(p, cfg::kRevision, id.revision, 1);
  put(p, cfg::kClass, id.class_code, 3);
  put(p, cfg::kSubsystemVendor, id.subsystem_vendor, 2);
  put(p, cfg::kSubsystem, id.subsystem, 2);
  put(p, cfg::kInterruptPin, id.interrupt_pin, 1);
  auto& w = writable_;
  put(w, cfg::kCommand,
      cfg::kCommandMemory | cfg::kCommandBusMaster | cfg::kCommandParity | cfg::kCommandSerr |
          cfg::kCommandIntxDisable,
      2);
  put(w, cfg::kCacheLine, 0xFF, 1);
  put(w, cfg::kLatency, 0xFF, 1);
  put(w, cfg::kInterruptLine, 0xFF, 1);
  // A BAR's address bits above its size are writable; the size bits and the flag bits read 0.
  for (unsigned b = 0; b < kBarSlots; ++b)
    if (bars[b] != 0) put(w, cfg::kBar0 + 4 * b, static_cast<std::uint32_t>(~(bars[b] - 1)) & ~cfg::kBarFlagBits, 4);
  reset();
}

void ConfigSpace::reset() { bytes_ = power_on_; }

std::string ConfigSpace::check(std::uint32_t offset, std::int64_t length) {
  if (length != 1 && length != 2 && length != 4)
    return "config access of " + std::to_string(length) + " bytes (1, 2 or 4)";
  if (offset >= kBytes || static_cast<std::uint64_t>(length) > kBytes - offset)
    return "config offset " + std::to_string(offset) + " + " + std::to_string(length) +
           " passes the 256-byte header";
  if (offset % 4 + static_cast<std::uint32_t>(length) > 4)
    return "config access of " + std::to_string(length) + " bytes at " + std::to_string(offset) +
           " crosses a dword";
  return {};
}

std::uint32_t ConfigSpace::read(std::uint32_t offset, std::int64_t length) const {
  if (!check(offset, length).empty()) return ~std::uint32_t{0};
  std::uint32_t v = 0;
  for (unsigned i = 0; i < static_cast<unsigned>(length); ++i) v |= std::uint32_t{bytes_[offset + i]} << (8 * i);
  return v;
}

bool ConfigSpace::write(std::uint32_t offset, std::uint32_t value, std::int64_t length) {
  if (!check(offset, length).empty()) return false;
  for (unsigned i = 0; i < static_cast<unsigned>(length); ++i) {
    const std::uint8_t b = static_cast<std::uint8_t>(value >> (8 * i));
    std::uint8_t& cell = bytes_[offset + i];
    const std::uint8_t mask = writable_[offset + i];
    cell = static_cast<std::uint8_t>((cell & ~mask) | (b & mask));
  }
  return true;
}

std::uint16_t ConfigSpace::command() const { return static_cast<std::uint16_t>(read(cfg::kCommand, 2)); }

std::uint32_t ConfigSpace::bar_base(unsigned bar) const {
  return read(cfg::kBar0 + 4 * bar, 4) & ~cfg::kBarFlagBits;
}

std::optional<ConfigSpace::Hit> ConfigSpace::decode(std::uint64_t address, std::uint64_t bytes) const {
  for (unsigned b = 0; b < kBarSlots; ++b) {
    const std::uint64_t size = bars_[b];
    if (size == 0) continue;
    const std::uint64_t base = bar_base(b);
    if (address >= base && address - base < size && bytes <= size - (address - base)) return Hit{b, address - base};
  }
  return std::nullopt;
}

}  // namespace pevp::pcie
