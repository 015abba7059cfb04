// The server side of QEMU's ivshmem-doorbell device (QEMU's docs/specs/ivshmem-spec.txt, "Client-Server
// Protocol"): under TCG the guest gets the device's interrupts only this way, as MSI-X vectors of a second, stock
// PCI function (docs/qemu.md "Interrupts").
//
// The server makes one eventfd per vector and a small shared-memory file (the protocol requires one; the device
// does not use it) and greets its one client on the chardev's socket with 8-byte little-endian messages: the
// protocol version (0), the client's id, -1 with the shared-memory fd, then the client's own id once per vector
// with that vector's eventfd. QEMU reads them synchronously while it realizes the device, so greet() must run
// before QEMU starts. signal(v) then raises vector v in the guest (an eventfd write; any thread may call it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pevp/mpqemu/unique_fd.h"

namespace pevp::mpqemu {

class Doorbell {
 public:
  static constexpr std::int64_t kProtocolVersion = 0;
  static constexpr std::int64_t kClientId = 0;
  static constexpr std::uint64_t kSharedMemoryBytes = 4096;  // a power of two: QEMU maps it as a BAR

  // Makes the eventfds and the shared-memory file; nullptr with *error when the system refuses.
  static std::unique_ptr<Doorbell> create(unsigned vectors, std::string* error);
  // Writes the whole greeting on `socket` (a connected AF_UNIX stream socket, the chardev's other end). "" or why.
  std::string greet(int socket) const;
  // Raises `vector` (ignored past vectors()). Thread-safe.
  void signal(unsigned vector);
  unsigned vectors() const { return static_cast<unsigned>(eventfds_.size()); }
  std::uint64_t signals(unsigned vector) const { return counts_[vector].load(); }
  // The eventfd of a vector (the tests read it as QEMU would).
  int eventfd(unsigned vector) const { return eventfds_[vector].get(); }

 private:
  Doorbell() = default;
  std::vector<UniqueFd> eventfds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  UniqueFd shared_memory_;
};

}  // namespace pevp::mpqemu
