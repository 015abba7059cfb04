// The execution-time footprint check: every rule with hand-derived numbers.
#include <gtest/gtest.h>

#include <limits>

#include "pevp/memory/footprint.h"

namespace {
using namespace pevp::memory;
using pevp::isa::Generation;
using pevp::isa::preset_geometry;
constexpr std::uint32_t kPsum = 0x2000000;
constexpr std::uint32_t kCaymanPart = 224 * 1024;  // 229376 SBUF bytes per partition

AccessPattern row(std::uint32_t addr, std::uint32_t n, unsigned bits, std::uint32_t partitions = 1, std::int32_t step = 1) {
  return {addr, {step}, {n}, bits, partitions};
}

// The rule broken, and the message must contain `text`.
void expect_error(const Footprint& f, const std::string& rule, const std::string& text) {
  ASSERT_FALSE(f.ok()) << "expected " << rule;
  EXPECT_EQ(f.error->rule, rule) << f.error->message;
  EXPECT_NE(f.error->message.find(text), std::string::npos) << f.error->message;
  EXPECT_TRUE(f.spans.empty());
}

TEST(Footprint, PsumRowOf512Fp32FitsOneBank513CrossesOnCayman) {
  const auto& cay = preset_geometry(Generation::CAYMAN);
  ASSERT_EQ(psum_limit(Generation::CAYMAN), PsumLimit::OneBank);
  // Partition 3, bank 1: 0x2000000 + 3 * 16384 + 2048.
  const std::uint32_t start = kPsum + 3 * 16384 + 2048;
  Footprint f = footprint(cay, Region::Psum, row(start, 512, 32), PsumLimit::OneBank);
  ASSERT_TRUE(f.ok()) << f.error->message;
  ASSERT_EQ(f.spans.size(), 1u);
  EXPECT_EQ(f.spans[0], (Span{3, 2048, 2048}));
  // 513 x 4 bytes from byte 2048 end at byte 4099, in bank 2.
  expect_error(footprint(cay, Region::Psum, row(start, 513, 32), PsumLimit::OneBank), "footprint.psum_bank",
               "partition bytes 2048..4099, crossing PSUM bank 1 (bytes 2048..4095)");
  // MARIANA lets a row span the banks of its partition.
  const auto& mar = preset_geometry(Generation::MARIANA);
  ASSERT_EQ(psum_limit(Generation::MARIANA), PsumLimit::Partition);
  f = footprint(mar, Region::Psum, row(start, 513, 32), psum_limit(Generation::MARIANA));
  ASSERT_TRUE(f.ok()) << f.error->message;
  EXPECT_EQ(f.spans[0], (Span{3, 2048, 2052}));
  // All 8 banks (4096 fp32) from byte 0 fit; one more leaves the 16 KiB partition.
  EXPECT_TRUE(footprint(mar, Region::Psum, row(kPsum, 4096, 32, 128), PsumLimit::Partition).ok());
  expect_error(footprint(mar, Region::Psum, row(kPsum, 4097, 32), PsumLimit::Partition), "footprint.partition",
               "partition bytes 0..16387, outside the PSUM partition's bytes 0..16383");
  // A negative step out of bank 1 into bank 0 crosses too: first byte 2044.
  expect_error(footprint(cay, Region::Psum, row(start, 2, 32, 1, -1), PsumLimit::OneBank), "footprint.psum_bank",
               "2044..2051");
  // The last bank of the last partition: bytes 14336..16383 of partition 127.
  f = footprint(cay, Region::Psum, row(kPsum + 127 * 16384 + 14336, 512, 32), PsumLimit::OneBank);
  ASSERT_TRUE(f.ok()) << f.error->message;
  EXPECT_EQ(f.spans[0], (Span{127, 14336, 2048}));
  // The bank rule is PSUM-only: the same SBUF row crosses no bank.
  EXPECT_TRUE(footprint(cay, Region::Sbuf, row(2048, 513, 32), PsumLimit::OneBank).ok());
}

TEST(Footprint, PartitionsRunPastTheLast) {
  const auto& cay = preset_geometry(Generation::CAYMAN);
  const std::uint32_t p120 = 120 * kCaymanPart;  // 27525120
  expect_error(footprint(cay, Region::Sbuf, row(p120, 4, 16, 16)), "footprint.partitions",
               "starts in SBUF partition 120 and spans 16 partitions: needs 1..8 (128 partitions exist)");
  const Footprint f = footprint(cay, Region::Sbuf, row(p120 + 6, 4, 16, 8));
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f.spans.size(), 8u);
  for (std::uint32_t i = 0; i < 8; ++i) EXPECT_EQ(f.spans[i], (Span{120 + i, 6, 8}));
  expect_error(footprint(cay, Region::Psum, row(kPsum + 127 * 16384, 4, 32, 2)), "footprint.partitions", "needs 1..1");
  expect_error(footprint(cay, Region::Sbuf, row(0, 4, 16, 0)), "footprint.partitions", "spans 0 partitions");
  EXPECT_TRUE(footprint(cay, Region::Sbuf, row(0, 4, 16, 128)).ok());
}

TEST(Footprint, StartMustBeInTheChosenMemory) {
  const auto& cay = preset_geometry(Generation::CAYMAN);
  const auto& mar = preset_geometry(Generation::MARIANA);
  // CAYMAN SBUF is 28 MiB = [0, 0x1c00000); MARIANA's 32 MiB ends at PSUM's base.
  expect_error(footprint(cay, Region::Sbuf, row(0x1C00000, 1, 8)), "footprint.region",
               "start_addr 0x1c00000 is not in SBUF [0x0, 0x1c00000)");
  EXPECT_TRUE(footprint(cay, Region::Sbuf, row(0x1BFFFFF, 1, 8)).ok());
  EXPECT_TRUE(footprint(mar, Region::Sbuf, row(0x1FFFFFF, 1, 8)).ok());
  expect_error(footprint(mar, Region::Sbuf, row(kPsum, 1, 8)), "footprint.region", "not in SBUF");
  expect_error(footprint(mar, Region::Psum, row(0x1000, 1, 8)), "footprint.region",
               "start_addr 0x1000 is not in PSUM [0x2000000, 0x2200000)");
  expect_error(footprint(mar, Region::Psum, row(0x2200000, 1, 8)), "footprint.region", "not in PSUM");
}

TEST(Footprint, FreeFootprintStaysInItsPartition) {
  const auto& cay = preset_geometry(Generation::CAYMAN);
  // The last 4 bytes of partition 5 hold one fp32; two run into partition 6.
  const std::uint32_t end5 = 6 * kCaymanPart - 4;
  EXPECT_EQ(footprint(cay, Region::Sbuf, row(end5, 1, 32)).spans.at(0), (Span{5, kCaymanPart - 4, 4}));
  expect_error(footprint(cay, Region::Sbuf, row(end5, 2, 32)), "footprint.partition",
               "partition bytes 229372..229379, outside the SBUF partition's bytes 0..229375");
  // Negative steps: from byte 8, bf16 step -1 x 3 reaches byte 4; x 6 reaches byte -2.
  EXPECT_EQ(footprint(cay, Region::Sbuf, row(8, 3, 16, 1, -1)).spans.at(0), (Span{0, 4, 6}));
  expect_error(footprint(cay, Region::Sbuf, row(8, 6, 16, 1, -1)), "footprint.partition",
               "elements -5..0 of 16 bits from partition byte 8 cover partition bytes -2..9");
  // Two dimensions: 4 rows of 32 bf16, rows 64 elements apart: elements 0..223, bytes 0..447.
  const AccessPattern tile{kCaymanPart, {1, 64}, {32, 4}, 16, 2};
  const Footprint f = footprint(cay, Region::Sbuf, tile);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.spans, (std::vector<Span>{{1, 0, 448}, {2, 0, 448}}));
  // Opposite-signed dimensions: +1 x 10 and -16 x 2 from byte 64 (fp8): bytes 48..73.
  EXPECT_EQ(footprint(cay, Region::Sbuf, AccessPattern{64, {1, -16}, {10, 2}, 8, 1}).spans.at(0), (Span{0, 48, 26}));
  // Absurd steps are reported, not overflowed.
  const AccessPattern huge{0, {std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::max()},
                           {std::numeric_limits<std::uint32_t>::max(), std::numeric_limits<std::uint32_t>::max()}, 32, 1};
  expect_error(footprint(cay, Region::Sbuf, huge), "footprint.partition", "leave the 229376-byte SBUF partition");
  const AccessPattern huge_neg{0, {std::numeric_limits<std::int32_t>::min()}, {std::numeric_limits<std::uint32_t>::max()}, 4, 1};
  expect_error(footprint(cay, Region::Sbuf, huge_neg), "footprint.partition", "leave");
}

TEST(Footprint, FourBitElementsPackTwoPerByte) {
  const auto& cay = preset_geometry(Generation::CAYMAN);
  // From byte 10: nibbles 0..4 = bytes 10, 10, 11, 11, 12.
  EXPECT_EQ(footprint(cay, Region::Sbuf, row(10, 5, 4)).spans.at(0), (Span{0, 10, 3}));
  // Step -1 x 2: nibble -1 is the high nibble of byte 9.
  EXPECT_EQ(footprint(cay, Region::Sbuf, row(10, 2, 4, 1, -1)).spans.at(0), (Span{0, 9, 2}));
  // Step 3 x 3 (nibbles 0, 3, 6): bytes 10..13.
  EXPECT_EQ(footprint(cay, Region::Sbuf, row(10, 3, 4, 1, 3)).spans.at(0), (Span{0, 10, 4}));
  // The last byte of a partition holds two 4-bit elements, not three.
  const std::uint32_t last = kCaymanPart - 1;
  EXPECT_EQ(footprint(cay, Region::Sbuf, row(last, 2, 4)).spans.at(0), (Span{0, last, 1}));
  expect_error(footprint(cay, Region::Sbuf, row(last, 3, 4)), "footprint.partition", "cover partition bytes 229375..229376");
}

TEST(Footprint, MalformedPatterns) {
  const auto& g = preset_geometry(Generation::MARIANA);
  expect_error(footprint(g, Region::Sbuf, row(0, 4, 12)), "footprint.elem_bits", "12 bits: must be 4, 8, 16 or 32");
  expect_error(footprint(g, Region::Sbuf, AccessPattern{0, {1, 2}, {3}, 8, 1}), "footprint.shape",
               "2 step_elem but 1 num_elem");
  expect_error(footprint(g, Region::Sbuf, AccessPattern{0, {1, 2}, {3, 0}, 8, 1}), "footprint.shape", "num_elem[1] is 0");
  // No free dimension: one element.
  EXPECT_EQ(footprint(g, Region::Sbuf, AccessPattern{7, {}, {}, 32, 1}).spans.at(0), (Span{0, 7, 4}));
}

}  // namespace
