// LargeBuffer: zero-filled, writable to its last byte, aligned to the huge-page size when large, and moved without
// a copy or a double unmap.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "pevp/buffers/large_buffer.h"

namespace {

using pevp::buffers::LargeBuffer;

TEST(LargeBuffer, ZeroFilledAndWritableEverywhere) {
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4097}, std::size_t{3} << 20}) {
    LargeBuffer b(bytes);
    ASSERT_EQ(b.size(), bytes);
    ASSERT_NE(b.data(), nullptr);
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < bytes; i += 4093) nonzero += b.data()[i] != 0;
    EXPECT_EQ(nonzero, 0u);
    EXPECT_EQ(b.data()[bytes - 1], 0);
    b.data()[0] = 1;
    b.data()[bytes - 1] = 2;
    EXPECT_EQ(b.data()[0], bytes == 1 ? 2 : 1);  // one byte: the same byte twice
    EXPECT_EQ(b.data()[bytes - 1], 2);
  }
}

TEST(LargeBuffer, LargeBuffersStartOnAHugePageBoundary) {
  LargeBuffer b(std::size_t{5} << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % (std::uintptr_t{2} << 20), 0u);
}

TEST(LargeBuffer, EmptyAndMoved) {
  LargeBuffer empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
  LargeBuffer zero(0);
  EXPECT_EQ(zero.size(), 0u);

  LargeBuffer a(1 << 20);
  a.data()[5] = 42;
  std::uint8_t* const where = a.data();
  LargeBuffer b(std::move(a));
  EXPECT_EQ(b.data(), where);  // the mapping moved, nothing was copied
  EXPECT_EQ(b.data()[5], 42);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(a.size(), 0u);
  LargeBuffer c(64);
  c = std::move(b);
  EXPECT_EQ(c.data(), where);
  EXPECT_EQ(c.size(), std::size_t{1} << 20);
  c = std::move(c);  // self-move keeps the buffer
  EXPECT_EQ(c.data(), where);
}

}  // namespace

namespace {

TEST(LargeBuffer, ZeroGivesEveryByteBackAtTheSameAddress) {
  for (const pevp::buffers::Backing backing : {pevp::buffers::Backing::HugePages, pevp::buffers::Backing::Sparse}) {
    const std::size_t bytes = (std::size_t{5} << 20) + 123;  // not a whole number of pages
    LargeBuffer b(bytes, backing);
    std::uint8_t* const before = b.data();
    for (std::size_t i = 0; i < bytes; i += 1000) b.data()[i] = 0xAB;
    b.data()[bytes - 1] = 0xCD;
    b.zero();
    ASSERT_EQ(b.data(), before);
    ASSERT_EQ(b.size(), bytes);
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < bytes; ++i) nonzero += b.data()[i] != 0;
    EXPECT_EQ(nonzero, 0u);
    b.data()[7] = 1;  // still writable
    EXPECT_EQ(b.data()[7], 1);
  }
  LargeBuffer empty;
  empty.zero();
  EXPECT_EQ(empty.size(), 0u);
}

TEST(LargeBuffer, SparseBuffersAreZeroAndWritableToTheirLastByte) {
  const std::size_t bytes = std::size_t{1} << 30;
  LargeBuffer b(bytes, pevp::buffers::Backing::Sparse);
  EXPECT_EQ(b.data()[bytes - 1], 0);
  b.data()[bytes - 1] = 9;
  EXPECT_EQ(b.data()[bytes - 1], 9);
}

// "THPeligible" of the mapping (VMA) of /proc/self/smaps that holds address `at`: 1 where the kernel may back it with
// huge pages, 0 where not, -1 when the kernel does not say.
int thp_eligible_at(const void* at) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(at);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

bool thp_enabled() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(f, modes);
  return !modes.empty() && modes.find("[never]") == std::string::npos;
}

TEST(LargeBuffer, AdviseDenseKeepsTheBytesAndMakesOnlyTheWholeHugePagesInsideEligible) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t bytes = 64 * kHuge;
  LargeBuffer b(bytes, pevp::buffers::Backing::Sparse);
  b.data()[5 * kHuge + 7] = 42;
  // From the middle of huge page 4 (relative to the buffer, which starts on one) to past the end of the buffer: the
  // whole huge pages inside are 5..63; page 4 is only partly inside and stays small-paged.
  b.advise_dense(4 * kHuge + 4096, 2 * bytes);
  b.advise_dense(2 * bytes, 10);  // wholly outside: nothing
  EXPECT_EQ(b.data()[5 * kHuge + 7], 42);
  EXPECT_EQ(b.data()[4 * kHuge + 4096], 0);
  b.data()[bytes - 1] = 3;
  EXPECT_EQ(b.data()[bytes - 1], 3);
  if (!thp_enabled() || thp_eligible_at(b.data()) < 0) GTEST_SKIP() << "no transparent huge pages to observe";
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % kHuge, 0u);
  EXPECT_EQ(thp_eligible_at(b.data() + 4 * kHuge + 8192), 0);
  EXPECT_EQ(thp_eligible_at(b.data() + 5 * kHuge), 1);
  EXPECT_EQ(thp_eligible_at(b.data() + bytes - 1), 1);
  EXPECT_EQ(thp_eligible_at(b.data()), 0);
}

}  // namespace
