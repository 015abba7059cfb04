// A PCI function's type-0 configuration header (256 bytes), as the device owns it: the host reads and writes it
// through the link, and the host's own copy decides where the BARs are mapped, so the two must agree bit for bit
// (docs/qemu.md "The device end"). Plain C++.
//
// What the model implements (PCI Local Bus 3.0 section 6.2, type-0 header): the identity (vendor, device, class,
// revision, subsystem), up to six 32-bit, non-prefetchable memory BARs of power-of-two sizes -- a BAR reads back its
// size mask after all-ones are written, the low four bits read 0 (memory, 32-bit, not prefetchable) -- the command
// register (memory space, bus master, parity and SERR responses, INTx disable writable; I/O space reads 0: there is
// no I/O BAR), the interrupt line (writable) and pin (read-only), cache line size and latency timer (writable,
// no effect), and zeros elsewhere: status (no capabilities list, no errors recorded), CardBus CIS (0x28), the
// expansion ROM (0x30: none), BIST, the capabilities pointer. Every other bit is read-only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace pevp::pcie {

struct PciIdentity {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint32_t class_code = 0;  // base class, subclass, programming interface (24 bits)
  std::uint8_t revision = 0;
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem = 0;
  std::uint8_t interrupt_pin = 1;  // INTA#; 0 = none
};

inline constexpr unsigned kBarSlots = 6;
using BarSizes = std::array<std::uint64_t, kBarSlots>;  // bytes; 0 = the slot is not implemented

// The register offsets of the type-0 header the model reads and writes by name.
namespace cfg {
inline constexpr unsigned kVendor = 0x00, kDevice = 0x02, kCommand = 0x04, kStatus = 0x06, kRevision = 0x08;
inline constexpr unsigned kClass = 0x09, kCacheLine = 0x0C, kLatency = 0x0D, kHeaderType = 0x0E, kBist = 0x0F;
inline constexpr unsigned kBar0 = 0x10, kCardbusCis = 0x28, kSubsystemVendor = 0x2C, kSubsystem = 0x2E;
inline constexpr unsigned kRom = 0x30, kCapabilities = 0x34, kInterruptLine = 0x3C, kInterruptPin = 0x3D;
inline constexpr std::uint16_t kCommandMemory = 1u << 1, kCommandBusMaster = 1u << 2;
inline constexpr std::uint16_t kCommandParity = 1u << 6, kCommandSerr = 1u << 8, kCommandIntxDisable = 1u << 10;
inline constexpr std::uint32_t kBarFlagBits = 0xF;  // memory, 32-bit, non-prefetchable: all 0
}  // namespace cfg

class ConfigSpace {
 public:
  static constexpr unsigned kBytes = 256;
  // The smallest and largest BAR a 32-bit memory BAR can describe.
  static constexpr std::uint64_t kMinBarBytes = 16;
  static constexpr std::uint64_t kMaxBarBytes = std::uint64_t{1} << 31;

  // Throws std::invalid_argument naming the BAR when a size is not 0 or a power of two in [16 B, 2 GiB].
  ConfigSpace(const PciIdentity& identity, const BarSizes& bars);

  // "" when an access of `length` bytes at `offset` is one the header takes (length 1, 2 or 4, inside the 256
  // bytes, not crossing a dword), else why not; read() and write() refuse the same accesses.
  static std::string check(std::uint32_t offset, std::int64_t length);
  // Little-endian value of `length` bytes at `offset`; all-ones for a refused access.
  std::uint32_t read(std::uint32_t offset, std::int64_t length) const;
  // Writes the writable bits; a refused access changes nothing. False when refused.
  bool write(std::uint32_t offset, std::uint32_t value, std::int64_t length);
  // Power-on values (every BAR 0, the command register 0).
  void reset();

  std::uint16_t command() const;
  bool memory_enabled() const { return (command() & cfg::kCommandMemory) != 0; }
  bool bus_master() const { return (command() & cfg::kCommandBusMaster) != 0; }
  std::uint64_t bar_size(unsigned bar) const { return bars_[bar]; }
  std::uint32_t bar_base(unsigned bar) const;  // the address the host programmed (0 until then)

  // Which implemented BAR holds all of [address, address + bytes) at its current base, and the offset in it.
  struct Hit {
    unsigned bar = 0;
    std::uint64_t offset = 0;
  };
  std::optional<Hit> decode(std::uint64_t address, std::uint64_t bytes) const;

 private:
  std::array<std::uint8_t, kBytes> bytes_{};
  std::array<std::uint8_t, kBytes> writable_{};  // a 1 bit: software may change that bit
  std::array<std::uint8_t, kBytes> power_on_{};
  BarSizes bars_{};
};

}  // namespace pevp::pcie
