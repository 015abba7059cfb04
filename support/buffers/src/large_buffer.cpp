#include "pevp/buffers/large_buffer.h"

#include "pevp/buffers/oom_headroom.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace pevp::buffers {
namespace {

// The transparent huge page size on x86-64 (and the usual one elsewhere); only an alignment hint here.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

}  // namespace

LargeBuffer::LargeBuffer(std::size_t bytes, Backing backing) : size_(bytes) {
  if (bytes == 0) return;
  const bool huge = backing == Backing::HugePages;
  // Over-map by one huge page so the buffer can start on a huge-page boundary: the kernel backs only aligned 2 MiB
  // ranges with huge pages.
  const std::size_t slack = huge && bytes >= kHugePage ? kHugePage : 0;
  mapped_ = bytes + slack;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (huge ? 0 : MAP_NORESERVE);
  // A failed mapping is handled as operator new handles a failure: the new_handler may free memory (and the mapping
  // is tried again) or throw std::bad_alloc.
  while ((mapping_ = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, flags, -1, 0)) == MAP_FAILED) {
    mapping_ = nullptr;
    handle_allocation_failure();
  }
  const auto start = reinterpret_cast<std::uintptr_t>(mapping_);
  const std::uintptr_t aligned = slack ? (start + slack - 1) / slack * slack : start;
  data_ = reinterpret_cast<std::uint8_t*>(aligned);
#ifdef MADV_HUGEPAGE
  if (slack) madvise(data_, bytes, MADV_HUGEPAGE);  // advice only: failure leaves small pages
#endif
#ifdef MADV_NOHUGEPAGE
  // Where THP is "always" the kernel would back a sparse buffer's touched bytes with 2 MiB pages anyway.
  if (!huge) madvise(data_, bytes, MADV_NOHUGEPAGE);
#endif
}

LargeBuffer::~LargeBuffer() { release(); }

void LargeBuffer::advise_dense(std::size_t offset, std::size_t bytes) {
  if (offset >= size_) return;
  bytes = std::min(bytes, size_ - offset);
  const auto begin = reinterpret_cast<std::uintptr_t>(data_ + offset);
  const std::uintptr_t first = (begin + kHugePage - 1) / kHugePage * kHugePage;
  const std::uintptr_t last = (begin + bytes) / kHugePage * kHugePage;
#ifdef MADV_HUGEPAGE
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

void LargeBuffer::zero() {
  if (size_ == 0) return;
  // A private anonymous page given back with MADV_DONTNEED reads zero at its next touch; the whole mapping (the
  // alignment slack with it) is given back, so the range is page-aligned at both ends.
  if (madvise(mapping_, mapped_, MADV_DONTNEED) != 0) std::memset(data_, 0, size_);
}

LargeBuffer::LargeBuffer(LargeBuffer&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      mapped_(std::exchange(other.mapped_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapped_ = std::exchange(other.mapped_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void LargeBuffer::release() {
  if (mapping_) munmap(mapping_, mapped_);
  mapping_ = nullptr;
  mapped_ = 0;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace pevp::buffers
