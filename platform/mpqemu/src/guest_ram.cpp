#include "pevp/mpqemu/guest_ram.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace pevp::mpqemu {

class Mapping {
 public:
  // The window [offset, offset + size) of the file identified by (dev, ino).
  struct Key {
    dev_t dev = 0;
    ino_t ino = 0;
    std::int64_t offset = 0;
    std::uint64_t size = 0;
    bool operator==(const Key& o) const {
      return dev == o.dev && ino == o.ino && offset == o.offset && size == o.size;
    }
  };
  Mapping(Key key, void* base, std::size_t length, std::uint8_t* window)
      : key_(key), base_(base), length_(length), window_(window) {}
  ~Mapping() { ::munmap(base_, length_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const Key& key() const { return key_; }
  std::uint8_t* window() const { return window_; }

 private:
  Key key_;
  void* base_;
  std::size_t length_;
  std::uint8_t* window_;
};

namespace {

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string describe(std::size_t i, const SysmemRegion& r) {
  return "region " + std::to_string(i) + " (gpa " + hex(r.gpa) + ", " + hex(r.size) + " bytes at fd offset " +
         std::to_string(r.offset) + ")";
}

}  // namespace

const GuestRamRegion* GuestRamLayout::find(std::uint64_t gpa, std::uint64_t bytes) const {
  // Regions are few (QEMU sends at most 7): a linear search.
  for (const GuestRamRegion& r : regions)
    if (gpa >= r.gpa && gpa - r.gpa < r.size && bytes <= r.size - (gpa - r.gpa)) return &r;
  return nullptr;
}

std::string GuestRam::sync(const std::vector<SysmemRegion>& regions, std::vector<UniqueFd> fds) {
  // Drop the old layout first (QEMU's remote does the same): a refused layout leaves nothing stale behind.
  std::shared_ptr<const GuestRamLayout> old;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    old = std::exchange(layout_, std::make_shared<GuestRamLayout>());
  }
  const auto refuse = [&](std::string why) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.refused;
    return why;  // fds close as `fds` goes
  };
  if (regions.size() != fds.size())
    return refuse("SYNC_SYSMEM: " + std::to_string(regions.size()) + " regions for " + std::to_string(fds.size()) +
                  " file descriptors");
  const long page = ::sysconf(_SC_PAGESIZE);
  auto next = std::make_shared<GuestRamLayout>();
  std::uint64_t mapped = 0, reused = 0;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const SysmemRegion& r = regions[i];
    if (r.size == 0) return refuse("SYNC_SYSMEM: " + describe(i, r) + ": size 0");
    if (r.gpa > std::numeric_limits<std::uint64_t>::max() - (r.size - 1))
      return refuse("SYNC_SYSMEM: " + describe(i, r) + ": wraps past 2^64");
    if (r.offset < 0) return refuse("SYNC_SYSMEM: " + describe(i, r) + ": negative offset");
    for (std::size_t j = 0; j < i; ++j) {
      const SysmemRegion& o = regions[j];
      if (r.gpa <= o.gpa + (o.size - 1) && o.gpa <= r.gpa + (r.size - 1))
        return refuse("SYNC_SYSMEM: " + describe(i, r) + " overlaps " + describe(j, o));
    }
    struct stat st{};
    if (::fstat(fds[i].get(), &st) != 0)
      return refuse("SYNC_SYSMEM: " + describe(i, r) + ": fstat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return refuse("SYNC_SYSMEM: " + describe(i, r) + ": the fd is not a memory file");
    const std::uint64_t file_size = static_cast<std::uint64_t>(st.st_size);
    const std::uint64_t offset = static_cast<std::uint64_t>(r.offset);
    if (offset > file_size || r.size > file_size - offset)
      return refuse("SYNC_SYSMEM: " + describe(i, r) + ": the window passes the file's end (" + hex(file_size) +
                    " bytes)");
    const Mapping::Key key{st.st_dev, st.st_ino, r.offset, r.size};
    std::shared_ptr<const Mapping> m;
    if (old)
      for (const auto& candidate : old->mappings)
        if (candidate->key() == key) m = candidate;
    if (m) {
      ++reused;
    } else {
      const std::uint64_t aligned = offset - offset % static_cast<std::uint64_t>(page);
      const std::size_t length = static_cast<std::size_t>(r.size + (offset - aligned));
      void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i].get(),
                          static_cast<off_t>(aligned));
      if (base == MAP_FAILED) return refuse("SYNC_SYSMEM: " + describe(i, r) + ": mmap: " + std::strerror(errno));
      m = std::make_shared<const Mapping>(key, base, length, static_cast<std::uint8_t*>(base) + (offset - aligned));
      ++mapped;
    }
    next->regions.push_back({r.gpa, r.size, m->window()});
    if (std::find(next->mappings.begin(), next->mappings.end(), m) == next->mappings.end()) next->mappings.push_back(m);
  }
  std::sort(next->regions.begin(), next->regions.end(),
            [](const GuestRamRegion& a, const GuestRamRegion& b) { return a.gpa < b.gpa; });
  fds.clear();  // the mappings hold the memory; the fds are no longer needed
  std::lock_guard<std::mutex> lock(mutex_);
  layout_ = std::move(next);
  ++stats_.syncs;
  stats_.mapped += mapped;
  stats_.reused += reused;
  return {};
}

std::shared_ptr<const GuestRamLayout> GuestRam::layout() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return layout_;
}

GuestRamStats GuestRam::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void GuestRam::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  layout_ = std::make_shared<GuestRamLayout>();
}

}  // namespace pevp::mpqemu
