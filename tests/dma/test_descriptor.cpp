// The descriptor format (D-DMA-DESCRIPTOR): the byte layout written out by hand, the encode/decode round trip, and
// every decode/validate error with its field offset, value and rule.
#include <gtest/gtest.h>

#include "pevp/dma/address_space.h"
#include "pevp/dma/descriptor.h"

namespace {
using namespace pevp::dma;
using pevp::isa::Dtype;
using pevp::isa::UpdateMode;
using pevp::isa::WaitMode;
constexpr unsigned kSems = 32;

Descriptor full() {
  Descriptor d;
  d.kind = Kind::COPY;
  d.flags = kFlagIrq | kFlagCast;
  d.src_dtype = Dtype::FP32;
  d.dst_dtype = Dtype::BFLOAT16;
  d.wait_mode = WaitMode::WAIT_GE;
  d.wait_sem = 7;
  d.update_mode = UpdateMode::INCREMENT;
  d.update_sem = 31;
  d.wait_value = 0x11223344;
  d.update_value = 0x55667788;
  d.src = kHbmBase + 0x1000;
  d.dst = kPsumBase + 0x40;
  d.row_bytes = 512;
  d.rows = 128;
  d.planes = 3;
  d.elem_bytes = 4;
  d.src_row_stride = 0x800;
  d.dst_row_stride = 0x4000;
  d.src_plane_stride = 0x40000;
  d.dst_plane_stride = 0x200;
  return d;
}

TEST(Descriptor, LayoutIsLittleEndianAtTheDocumentedOffsets) {
  const DescriptorBytes b = encode(full());
  // Expected bytes written out from the table in docs/dma.md.
  const std::uint8_t expected[64] = {
      0x01, 0x03, 0x0A, 0x06, 0x01, 0x07, 0x02, 0x1F,  // kind flags src_dtype dst_dtype wait_mode/sem update_mode/sem
      0x44, 0x33, 0x22, 0x11, 0x88, 0x77, 0x66, 0x55,  // wait_value update_value
      0x00, 0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  // src = 0x1_0000_1000
      0x40, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,  // dst = 0x2000040
      0x00, 0x02, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00,  // row_bytes 512, rows 128
      0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,  // planes 3, elem_bytes 4, reserved
      0x00, 0x08, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00,  // src_row_stride, dst_row_stride
      0x00, 0x00, 0x04, 0x00, 0x00, 0x02, 0x00, 0x00,  // src_plane_stride, dst_plane_stride
  };
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(b[i], expected[i]) << "byte " << i;
}

TEST(Descriptor, RoundTrip) {
  const Descriptor d = full();
  const Decoded r = decode(encode(d), kSems);
  ASSERT_TRUE(r.error.ok()) << r.error.message;
  EXPECT_EQ(encode(r.descriptor), encode(d));
  EXPECT_EQ(r.descriptor.src, d.src);
  EXPECT_EQ(r.descriptor.dst_plane_stride, d.dst_plane_stride);
  EXPECT_EQ(r.descriptor.dst_row_bytes(), 256u) << "512 fp32 bytes = 128 elements = 256 bf16 bytes";
  EXPECT_EQ(r.descriptor.total_dst_bytes(), 256u * 128 * 3);

  Descriptor s;
  s.kind = Kind::SIGNAL;
  s.update_mode = UpdateMode::SET;
  s.update_sem = 2;
  s.update_value = 9;
  const Decoded rs = decode(encode(s), kSems);
  ASSERT_TRUE(rs.error.ok()) << rs.error.message;
  EXPECT_EQ(rs.descriptor.kind, Kind::SIGNAL);
}

TEST(Descriptor, Copy2dHelper) {
  const Descriptor d = copy_2d(kHbmBase, 1024, kSbufBase, 4096, 1024, 128, 4);
  EXPECT_TRUE(validate(d, kSems).ok());
  EXPECT_EQ(d.kind, Kind::COPY);
  EXPECT_EQ(d.planes, 1u);
  EXPECT_EQ(d.total_src_bytes(), 128u * 1024);
  EXPECT_EQ(d.wait_mode, WaitMode::NONE);
  EXPECT_EQ(d.update_mode, UpdateMode::NONE);
}

struct BadCase {
  const char* what;
  void (*mutate)(DescriptorBytes&);
  std::uint8_t field;
  std::uint64_t value;
  Rule rule;
};

DescriptorBytes plain() {
  Descriptor d = copy_2d(kHbmBase, 256, kSbufBase, 4096, 256, 4, 4);
  d.wait_mode = WaitMode::WAIT_EQ;
  d.wait_sem = 1;
  d.wait_value = 2;
  d.update_mode = UpdateMode::SET;
  d.update_sem = 3;
  d.update_value = 4;
  return encode(d);
}

void set32(DescriptorBytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

TEST(Descriptor, EveryDecodeErrorNamesFieldValueAndRule) {
  namespace o = offset;
  const BadCase cases[] = {
      {"kind 0 (an unwritten slot)", [](DescriptorBytes& b) { b[o::kKind] = 0; }, o::kKind, 0, Rule::UnknownKind},
      {"kind 3", [](DescriptorBytes& b) { b[o::kKind] = 3; }, o::kKind, 3, Rule::UnknownKind},
      {"flag bit 2", [](DescriptorBytes& b) { b[o::kFlags] = 0x04; }, o::kFlags, 4, Rule::ReservedNonZero},
      {"wait_mode 3", [](DescriptorBytes& b) { b[o::kWaitMode] = 3; }, o::kWaitMode, 3, Rule::UnknownMode},
      {"update_mode 4", [](DescriptorBytes& b) { b[o::kUpdateMode] = 4; }, o::kUpdateMode, 4, Rule::UnknownMode},
      {"wait NONE with a semaphore",
       [](DescriptorBytes& b) {
         b[o::kWaitMode] = 0;
         set32(b, o::kWaitValue, 0);
       },
       o::kWaitSem, 1, Rule::NoneModeWithOperands},
      {"update NONE with a value",
       [](DescriptorBytes& b) {
         b[o::kUpdateMode] = 0;
         b[o::kUpdateSem] = 0;
       },
       o::kUpdateValue, 4, Rule::NoneModeWithOperands},
      {"wait_sem 32", [](DescriptorBytes& b) { b[o::kWaitSem] = 32; }, o::kWaitSem, 32, Rule::SemaphoreIndex},
      {"update_sem 200", [](DescriptorBytes& b) { b[o::kUpdateSem] = 200; }, o::kUpdateSem, 200,
       Rule::SemaphoreIndex},
      {"row_bytes 0", [](DescriptorBytes& b) { set32(b, o::kRowBytes, 0); }, o::kRowBytes, 0, Rule::ZeroSize},
      {"rows 0", [](DescriptorBytes& b) { set32(b, o::kRows, 0); }, o::kRows, 0, Rule::ZeroSize},
      {"planes 0", [](DescriptorBytes& b) { set32(b, o::kPlanes, 0); }, o::kPlanes, 0, Rule::ZeroSize},
      {"elem_bytes 3", [](DescriptorBytes& b) { b[o::kElemBytes] = 3; }, o::kElemBytes, 3, Rule::ElemBytes},
      {"row_bytes 6 of 4-byte elements", [](DescriptorBytes& b) { set32(b, o::kRowBytes, 6); }, o::kRowBytes, 6,
       Rule::Misaligned},
      {"src not 4-aligned", [](DescriptorBytes& b) { b[o::kSrc] = 2; }, o::kSrc, kHbmBase + 2, Rule::Misaligned},
      {"dst not 4-aligned", [](DescriptorBytes& b) { b[o::kDst] = 1; }, o::kDst, 1, Rule::Misaligned},
      {"src_row_stride 258", [](DescriptorBytes& b) { set32(b, o::kSrcRowStride, 258); }, o::kSrcRowStride, 258,
       Rule::Misaligned},
      {"dst_plane_stride 2", [](DescriptorBytes& b) { set32(b, o::kDstPlaneStride, 2); }, o::kDstPlaneStride, 2,
       Rule::Misaligned},
      {"a dtype without the cast flag", [](DescriptorBytes& b) { b[o::kSrcDtype] = 0x0A; }, o::kSrcDtype, 0x0A,
       Rule::UnsupportedCast},
      {"cast FP32 -> INT8",
       [](DescriptorBytes& b) {
         b[o::kFlags] = kFlagCast;
         b[o::kSrcDtype] = 0x0A;
         b[o::kDstDtype] = 0x02;
       },
       o::kSrcDtype, 0x0A, Rule::UnsupportedCast},
      {"cast BF16 -> FP16 (neither side fp32)",
       [](DescriptorBytes& b) {
         b[o::kFlags] = kFlagCast;
         b[o::kSrcDtype] = 0x06;
         b[o::kDstDtype] = 0x07;
         b[o::kElemBytes] = 2;
       },
       o::kSrcDtype, 0x06, Rule::UnsupportedCast},
      {"cast FP32 -> BF16 with elem_bytes 2",
       [](DescriptorBytes& b) {
         b[o::kFlags] = kFlagCast;
         b[o::kSrcDtype] = 0x0A;
         b[o::kDstDtype] = 0x06;
         b[o::kElemBytes] = 2;
       },
       o::kElemBytes, 2, Rule::ElemBytes},
      {"cast FP32 -> BF16 with dst on an odd byte",
       [](DescriptorBytes& b) {
         b[o::kFlags] = kFlagCast;
         b[o::kSrcDtype] = 0x0A;
         b[o::kDstDtype] = 0x06;
         b[o::kDst] = 3;
       },
       o::kDst, 3, Rule::Misaligned},
      {"reserved byte 46", [](DescriptorBytes& b) { b[46] = 0x80; }, 46, 0x80, Rule::ReservedNonZero},
      {"SIGNAL with a source",
       [](DescriptorBytes& b) {
         b[o::kKind] = 2;
       },
       o::kSrc, kHbmBase, Rule::SignalWithData},
  };
  for (const BadCase& c : cases) {
    DescriptorBytes b = plain();
    c.mutate(b);
    const Decoded r = decode(b, kSems);
    EXPECT_EQ(r.error.rule, c.rule) << c.what << ": " << r.error.message;
    EXPECT_EQ(r.error.field, c.field) << c.what;
    EXPECT_EQ(r.error.value, c.value) << c.what;
    EXPECT_NE(r.error.message.find(std::string(rule_name(c.rule))), std::string::npos) << r.error.message;
  }
  // The plain descriptor itself is valid, so each case above broke exactly its own rule.
  EXPECT_TRUE(decode(plain(), kSems).error.ok());
  // The semaphore count is the caller's: 4 semaphores refuse index 3 only when it reaches the count.
  EXPECT_EQ(decode(plain(), 4).error.rule, Rule::None);
  EXPECT_EQ(decode(plain(), 3).error.rule, Rule::SemaphoreIndex);
  EXPECT_EQ(decode(plain(), 3).error.field, offset::kUpdateSem);
}

TEST(Descriptor, CastTable) {
  EXPECT_TRUE(cast_supported(Dtype::FP32, Dtype::BFLOAT16));
  EXPECT_TRUE(cast_supported(Dtype::BFLOAT16, Dtype::FP32));
  EXPECT_TRUE(cast_supported(Dtype::FP32, Dtype::FP16));
  EXPECT_TRUE(cast_supported(Dtype::FP16, Dtype::FP32));
  EXPECT_TRUE(cast_supported(Dtype::FP32, Dtype::FP8_EXP5));
  EXPECT_TRUE(cast_supported(Dtype::FP8_EXP3, Dtype::FP32));
  EXPECT_FALSE(cast_supported(Dtype::FP32, Dtype::FP32));
  EXPECT_FALSE(cast_supported(Dtype::FP32, Dtype::FP8_EXP4)) << "e4m3 depends on the generation: not cast";
  EXPECT_FALSE(cast_supported(Dtype::INT32, Dtype::FP32));
}

}  // namespace

namespace {

// Random records (a fixed seed, biased towards valid ones): decode never throws; an accepted record re-encodes to
// exactly its bytes (no byte is ignored), and a refused one names a rule and says why.
TEST(Descriptor, RandomRecordsDecodeToAcceptedRoundTripsOrPreciseErrors) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  unsigned accepted = 0;
  for (int i = 0; i < 200000; ++i) {
    DescriptorBytes b = encode(copy_2d(kHbmBase, 256, kSbufBase, 4096, 256, 4, 4));
    // Change one to three bytes to a random value, so both sides of most rules are met.
    const int changes = 1 + static_cast<int>(next() % 3);
    for (int c = 0; c < changes; ++c) b[next() % 64] = static_cast<std::uint8_t>(next());
    const Decoded r = decode(b, 32);
    if (r.error.ok()) {
      ++accepted;
      ASSERT_EQ(encode(r.descriptor), b) << "record " << i;
    } else {
      ASSERT_NE(r.error.rule, Rule::None);
      ASSERT_FALSE(r.error.message.empty());
    }
  }
  EXPECT_GT(accepted, 1000u) << "the mutations keep some records valid";
}

}  // namespace
