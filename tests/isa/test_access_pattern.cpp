// The access-pattern library (access_pattern.h) against hand-derived values:
// element counts and extents, where an address falls, the bytes and PSUM banks a
// pattern covers, and the per-partition element offsets.
#include <gtest/gtest.h>

#include "pevp/isa/access_pattern.h"

namespace pevp::isa {
namespace {

AccessPattern tensor(std::uint32_t start, std::array<std::int32_t, 3> step, std::array<std::int32_t, 3> num) {
  AccessPattern p;
  p.start = p.start_raw = start;
  p.dims = 3;
  for (unsigned k = 0; k < 3; ++k) {
    p.step[k] = step[k];
    p.num[k] = num[k];
  }
  return p;
}

TEST(AccessPattern, CountAndExtents) {
  // 4 x 3 x 2 elements, steps 1, 10, -100: offsets from -100 to 3 + 20 = 23.
  const AccessPattern p = tensor(0, {1, 10, -100}, {4, 3, 2});
  EXPECT_EQ(p.count(), 24u);
  EXPECT_EQ(p.lowest(), -100);
  EXPECT_EQ(p.highest(), 23);
  EXPECT_EQ(tensor(0, {1, 0, 0}, {0, 1, 1}).count(), 0u) << "an empty dimension enumerates nothing";
  EXPECT_EQ(tensor(0, {5, 0, 0}, {1, 1, 1}).highest(), 0) << "one element reaches nothing";
}

TEST(AccessPattern, LocateOnTheGeometry) {
  const ArrayGeometry geo;  // 128 x 256 KiB SBUF, 128 x 8 x 2 KiB PSUM
  EXPECT_EQ(locate(3 * 262144 + 17, Memory::Sbuf, geo)->partition, 3u);
  EXPECT_EQ(locate(3 * 262144 + 17, Memory::Sbuf, geo)->offset, 17u);
  EXPECT_FALSE(locate(128 * 262144, Memory::Sbuf, geo).has_value());
  EXPECT_EQ(locate(0x2000000 + 5 * 16384 + 2048 * 3, Memory::Psum, geo)->partition, 5u);
  EXPECT_EQ(locate(0x2000000 + 5 * 16384 + 2048 * 3, Memory::Psum, geo)->offset, 6144u);
  EXPECT_FALSE(locate(0x1000, Memory::Psum, geo).has_value());
  EXPECT_EQ(partition_bytes(Memory::Psum, geo), 16384u);
}

TEST(AccessPattern, CoveredBytesAndPsumBanks) {
  const ArrayGeometry geo;
  // 512 fp32 from byte 2048: bytes 2048..4095, bank 1 alone.
  const ByteRange one = covered_bytes(tensor(0, {1, 0, 0}, {512, 1, 1}), 2048, 4);
  EXPECT_EQ(one.first, 2048);
  EXPECT_EQ(one.last, 4095);
  EXPECT_EQ(psum_banks(one, geo), 0x02);
  // One more element reaches bank 2.
  EXPECT_EQ(psum_banks(covered_bytes(tensor(0, {1, 0, 0}, {513, 1, 1}), 2048, 4), geo), 0x06);
  // A negative step below the partition clamps to bank 0; past the end to the last bank.
  EXPECT_EQ(psum_banks(covered_bytes(tensor(0, {-1, 0, 0}, {2, 1, 1}), 0, 4), geo), 0x01);
  EXPECT_EQ(psum_banks({16000, 20000}, geo), 0x80);
  ArrayGeometry four = geo;
  four.psum_banks = 4;
  four.psum_bank_bytes = 4096;
  EXPECT_EQ(psum_banks(one, four), 0x01) << "2048..4095 is inside a 4 KiB bank 0";
}

TEST(AccessPattern, PartitionPlanOffsetsAndContiguity) {
  PartitionPlan plan;
  plan_partition(tensor(0, {1, 8, 0}, {4, 2, 1}), 64, 2, 1024, plan);
  ASSERT_FALSE(plan.outside.has_value());
  EXPECT_EQ(plan.offsets, (std::vector<std::size_t>{64, 66, 68, 70, 80, 82, 84, 86}));
  EXPECT_FALSE(plan.contiguous);
  plan_partition(tensor(0, {1, 4, 0}, {4, 2, 1}), 64, 2, 1024, plan);
  EXPECT_TRUE(plan.contiguous);
  // The first element past the partition is named by its indices and offset.
  plan_partition(tensor(0, {1, 0, 0}, {600, 1, 1}), 0, 2, 1024, plan);
  ASSERT_TRUE(plan.outside.has_value());
  EXPECT_EQ(plan.outside->index, (std::array<std::int64_t, 3>{0, 0, 512}));
  EXPECT_EQ(plan.outside->offset, 1024);
}

}  // namespace
}  // namespace pevp::isa
