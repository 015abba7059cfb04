// The guest's RAM as SYNC_SYSMEM describes it: regions of guest-physical addresses, each backed by a window of a
// memory fd (QEMU's memory-backend-memfd, shared), mapped into this process so the device's DMA reads and writes
// guest memory directly. docs/qemu.md "The device end".
//
// Each SYNC_SYSMEM replaces the whole layout. sync() checks every region first (a size > 0, no wrap past 2^64, no
// overlap with another region, a window inside its fd's current size so that no access can fault past the file's
// end), then maps what is new and reuses the mapping of a window that is unchanged (the same file, offset and size
// -- most SYNC_SYSMEMs repeat the layout), then publishes the new layout; a layout that fails any step leaves the
// map empty (a DMA to guest RAM is then an error, never a stale mapping). It closes every fd it was given, always.
//
// Layouts are immutable snapshots shared by pointer: a reader (the device's DMA, on another thread) keeps the
// mappings of the snapshot it holds alive until it lets go of it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pevp/mpqemu/message.h"
#include "pevp/mpqemu/unique_fd.h"

namespace pevp::mpqemu {

struct GuestRamRegion {
  std::uint64_t gpa = 0;
  std::uint64_t size = 0;
  std::uint8_t* host = nullptr;  // guest-physical gpa + i is host[i]
};

// One mmap of a window of a memory fd, unmapped when the last layout that uses it goes.
class Mapping;

struct GuestRamLayout {
  std::vector<GuestRamRegion> regions;  // by increasing gpa
  std::vector<std::shared_ptr<const Mapping>> mappings;  // keep the regions' bytes mapped
  // The region that holds all of [gpa, gpa + bytes), or nullptr.
  const GuestRamRegion* find(std::uint64_t gpa, std::uint64_t bytes) const;
};

struct GuestRamStats {
  std::uint64_t syncs = 0;     // SYNC_SYSMEMs applied
  std::uint64_t refused = 0;   // SYNC_SYSMEMs refused (the map left empty)
  std::uint64_t mapped = 0;    // windows mmapped
  std::uint64_t reused = 0;    // windows whose earlier mapping was kept
};

class GuestRam {
 public:
  // Applies one SYNC_SYSMEM: region i is backed by fds[i]. "" or why the layout was refused (then the map is
  // empty). Every fd is closed before it returns.
  std::string sync(const std::vector<SysmemRegion>& regions, std::vector<UniqueFd> fds);
  // The layout now (never null; empty before the first sync). Thread-safe.
  std::shared_ptr<const GuestRamLayout> layout() const;
  GuestRamStats stats() const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const GuestRamLayout> layout_ = std::make_shared<GuestRamLayout>();
  GuestRamStats stats_;
};

}  // namespace pevp::mpqemu
