// The DMA engines on a small bench (dma_bench.h): data moved bit-exactly for every pattern and cast, times
// hand-derived from D-DMA-TIMING, round-robin between queues, engines in parallel, semaphore waits and updates at
// the right simulated time, every bad-descriptor class stopping only its queue with the exact record, timing-only
// runs, the interrupt, statistics.
//
// The bench's numbers, used by every hand-derived time below:
//   fetch       = a 64-byte read of host memory = 10 ns + 1 beat x 1 ns           = 11 ns
//   descriptor  = 100 ns
//   engine row  = 50 ns + row bytes / 16 bytes/ns; a 256-byte row                 = 66 ns
//   memory row  = 10 ns + 1 ns per started 64-byte beat; a 256-byte row           = 14 ns
//   a row takes max(engine row, source row, destination row)
#include <gtest/gtest.h>

#include <cmath>

#include <tlm_utils/simple_target_socket.h>

#include "dma_bench.h"
#include "pevp/numerics/convert.h"

namespace {
using namespace pevp::dma;
using namespace pevp::dma::test;
using pevp::isa::Dtype;
using pevp::isa::UpdateMode;
using pevp::isa::WaitMode;

sc_time ns(double v) { return sc_time(v, SC_NS); }

void fill(std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xFF);
}

TEST(DmaData, OneDimensionalCopyIsBitExactAndTouchesNothingElse) {
  Bench b;
  fill(b.at(kHbmBase + 0x100), 1000, 1);
  std::memset(b.sbuf.data(), 0xEE, b.sbuf.size());
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {copy_2d(kHbmBase + 0x100, 0, kSbufBase + 8, 0, 1000, 1)});
  });
  EXPECT_EQ(std::memcmp(b.at(kSbufBase + 8), b.at(kHbmBase + 0x100), 1000), 0);
  EXPECT_EQ(b.sbuf.data()[7], 0xEE);
  EXPECT_EQ(b.sbuf.data()[1008], 0xEE);
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].bytes, 1000u);
  EXPECT_EQ(b.dma.status({0, 0}).state, QueueState::Idle);
  EXPECT_EQ(b.dma.status({0, 0}).head, 1u);
}

TEST(DmaData, PartitionPatternSbufToPsumAndBack) {
  Bench b;
  for (std::uint32_t p = 0; p < kPartitions; ++p) fill(b.sbuf.data() + b.sbuf.local_address(p, 128), 256, p);
  // SBUF partitions 0..3 bytes 128..383 -> PSUM partitions 0..3 bytes 64..319; then back to SBUF bytes 1024..1279.
  const Descriptor to_psum =
      copy_2d(kSbufBase + 128, kSbufPartitionBytes, kPsumBase + 64, kPsumPartitionBytes, 256, kPartitions, 4);
  const Descriptor back =
      copy_2d(kPsumBase + 64, kPsumPartitionBytes, kSbufBase + 1024, kSbufPartitionBytes, 256, kPartitions, 4);
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {to_psum, back});
  });
  for (std::uint32_t p = 0; p < kPartitions; ++p) {
    const std::uint8_t* src = b.sbuf.data() + b.sbuf.local_address(p, 128);
    EXPECT_EQ(std::memcmp(b.psum.data() + b.psum.local_address(p, 64), src, 256), 0) << "partition " << p;
    EXPECT_EQ(std::memcmp(b.sbuf.data() + b.sbuf.local_address(p, 1024), src, 256), 0) << "partition " << p;
    EXPECT_EQ(b.psum.data()[b.psum.local_address(p, 63)], 0);
    EXPECT_EQ(b.psum.data()[b.psum.local_address(p, 320)], 0);
  }
  ASSERT_EQ(b.records.size(), 2u);
  EXPECT_EQ(b.records[1].bytes, 1024u);
}

TEST(DmaData, ThreeDimensionalPatternWithStrides) {
  Bench b;
  fill(b.hbm.data(), 4096, 3);
  Descriptor d = copy_2d(kHbmBase + 40, 20, kSbufBase + 4, 8, 8, 2, 4);
  d.planes = 3;
  d.src_plane_stride = 100;
  d.dst_plane_stride = 4096;  // one plane per partition
  b.run([&] {
    b.program({1, 1});
    b.submit({1, 1}, {d});
  });
  // Reference: element (p, r, i) from hbm[40 + 100p + 20r + i] to sbuf[4 + 4096p + 8r + i].
  for (int p = 0; p < 3; ++p)
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 8; ++i)
        EXPECT_EQ(b.sbuf.data()[4 + 4096 * p + 8 * r + i], b.hbm.data()[40 + 100 * p + 20 * r + i])
            << p << "," << r << "," << i;
  EXPECT_EQ(b.sbuf.data()[4 + 16], 0) << "the byte after plane 0's two rows";
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].engine, 1u);
  EXPECT_EQ(b.records[0].queue, 1u);
}

float f32(std::uint32_t bits) { return pevp::num::bits_float(bits); }

TEST(DmaData, CastFp32ToBf16RoundsToNearestEven) {
  Bench b;
  const std::vector<float> values = {
      1.0f,
      f32(0x3F808000),  // 1 + 2^-8: a tie, bf16 0x3F80 is even -> stays 0x3F80
      f32(0x3F818000),  // a tie with an odd bf16 below -> rounds up to 0x3F82
      f32(0x3F808001),  // just above the tie -> 0x3F81
      f32(0x7F7FFFFF),  // fp32 max -> above bf16 max + half ulp -> +Inf
      -0.0f,
      f32(0x00012345),  // a subnormal, kept
      std::nanf(""),
      -INFINITY,
  };
  const std::uint16_t hand[] = {0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x7F80, 0x8000, 0x0001, 0x7FC0, 0xFF80};
  std::memcpy(b.at(kHbmBase), values.data(), values.size() * 4);
  Descriptor d = copy_2d(kHbmBase, 0, kSbufBase + 2, 0, static_cast<std::uint32_t>(values.size() * 4), 1, 4);
  d.flags = kFlagCast;
  d.src_dtype = Dtype::FP32;
  d.dst_dtype = Dtype::BFLOAT16;
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {d});
  });
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint16_t got;
    std::memcpy(&got, b.at(kSbufBase + 2 + 2 * i), 2);
    EXPECT_EQ(got, pevp::num::to_bf16(values[i])) << "element " << i;
    EXPECT_EQ(got, hand[i]) << "element " << i;
  }
  EXPECT_EQ(b.sbuf.data()[2 + 2 * values.size()], 0) << "a cast writes 2 bytes per element, no more";
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].bytes, 2 * values.size());
}

TEST(DmaData, CastBf16ToFp32IsExact) {
  Bench b;
  const std::uint16_t in[] = {0x3F80, 0xC2F7, 0x0001, 0x7F80, 0xFFC1, 0x8000};
  std::memcpy(b.at(kPsumBase), in, sizeof in);
  Descriptor d = copy_2d(kPsumBase, 0, kHbmBase + 16, 0, sizeof in, 1, 2);
  d.flags = kFlagCast;
  d.src_dtype = Dtype::BFLOAT16;
  d.dst_dtype = Dtype::FP32;
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {d});
  });
  for (std::size_t i = 0; i < std::size(in); ++i) {
    std::uint32_t got;
    std::memcpy(&got, b.at(kHbmBase + 16 + 4 * i), 4);
    EXPECT_EQ(got, std::uint32_t{in[i]} << 16) << "element " << i;
  }
}

// ---- timing --------------------------------------------------------------------------------------------------------

TEST(DmaTiming, SingleTransferTimeAndSemaphoreAtCompletion) {
  Bench b;
  // HBM -> SBUF, 4 partitions x 256 bytes:
  //   fetch 0..11 ns; start 11; + descriptor 100 = 111; 4 rows x max(66, 14, 14) = 264 -> completion 375 ns.
  Descriptor d = copy_2d(kHbmBase, 256, kSbufBase, kSbufPartitionBytes, 256, 4, 4);
  d.update_mode = UpdateMode::INCREMENT;
  d.update_sem = 3;
  d.update_value = 1;
  std::uint32_t before = 99;
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {d});
    sc_core::wait(ns(374));
    before = b.sems.value(3);
  });
  EXPECT_EQ(before, 0u) << "the update lands at completion, not earlier";
  ASSERT_EQ(b.sems.updates.size(), 1u);
  EXPECT_EQ(b.sems.updates[0].at, ns(375));
  EXPECT_EQ(b.sems.updates[0].value_after, 1u);
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].start, ns(11));
  EXPECT_EQ(b.records[0].end, ns(375));
  EXPECT_EQ(b.dma.engine_stats(0).busy, ns(375)) << "fetch 11 + 364 running";
  EXPECT_EQ(b.dma.engine_stats(0).bytes, 1024u);
  EXPECT_EQ(b.dma.engine_stats(0).descriptors, 1u);
  EXPECT_EQ(b.dma.queue_stats({0, 0}).descriptors, 1u);
  EXPECT_EQ(b.dma.engine_stats(1).descriptors, 0u);
}

TEST(DmaTiming, MemoryBoundRowsTakeTheMemoryTime) {
  SingleServer slow_hbm(2.0);  // 256 bytes take 128 ns > the engine's 66
  Bench b(test_config(), true, &slow_hbm);
  // start 11, rows issued from 111 at the engine's 66 ns (111, 177, 243, 309), each read when issued: the HBM serves
  // one at a time, so the reads end at 239, 367, 495 and 623; the last is written to SBUF in 10 + 4 x 1 = 14 ns: 637.
  // (The engine alone would be done at 111 + 4 x 66 = 375.)
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {copy_2d(kHbmBase, 256, kSbufBase, kSbufPartitionBytes, 256, 4, 4)});
  });
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].end, ns(637));
}

TEST(DmaTiming, SmallRowsPayTheRowOverhead) {
  Bench b;
  // 4096 bytes as 64 rows of 64 bytes: 11 + 100 + 64 x (50 + 4) = 3567 ns; as one row: 11 + 100 + 50 + 256 = 417 ns.
  b.run([&] {
    b.program({0, 0});
    b.program({1, 0});
    b.submit({0, 0}, {copy_2d(kHbmBase, 64, kSbufBase, 64, 64, 64, 4)});
    b.submit({1, 0}, {copy_2d(kHbmBase, 0, kSbufBase + 8192, 0, 4096, 1, 4)});
  });
  ASSERT_EQ(b.records.size(), 2u);
  for (const TransferRecord& r : b.records) EXPECT_EQ(r.end, r.engine == 0 ? ns(3567) : ns(417));
}

TEST(DmaTiming, TwoQueuesOfOneEngineInterleaveRoundRobin) {
  Bench b;
  // Each descriptor: fetch 11 + descriptor 100 + one 256-byte row 66 = 177 ns, one at a time on engine 0:
  //   q0#0 [0, 177]  q1#0 [177, 354]  q0#1 [354, 531]  q1#1 [531, 708]; each starts 11 ns after its fetch begins.
  const Descriptor d = copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4);
  b.run([&] {
    b.program({0, 0});
    b.program({0, 1});
    b.submit({0, 0}, {d, d});
    b.submit({0, 1}, {d, d});
  });
  ASSERT_EQ(b.records.size(), 4u);
  const unsigned queue[] = {0, 1, 0, 1}, index[] = {0, 0, 1, 1};
  const double end[] = {177, 354, 531, 708};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(b.records[i].queue, queue[i]) << i;
    EXPECT_EQ(b.records[i].index, index[i]) << i;
    EXPECT_EQ(b.records[i].start, ns(end[i] - 166)) << i;
    EXPECT_EQ(b.records[i].end, ns(end[i])) << i;
  }
  EXPECT_EQ(b.dma.queue_stats({0, 1}).bytes, 512u);
}

TEST(DmaTiming, TwoEnginesRunInParallel) {
  Bench b;
  const Descriptor d = copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4);
  b.run([&] {
    b.program({0, 0});
    b.program({1, 0});
    b.submit({0, 0}, {d});
    b.submit({1, 0}, {d});
  });
  ASSERT_EQ(b.records.size(), 2u);
  EXPECT_EQ(b.records[0].end, ns(177));
  EXPECT_EQ(b.records[1].end, ns(177));
  EXPECT_NE(b.records[0].engine, b.records[1].engine);
}

TEST(DmaTiming, EnginesContendForAMemoryThroughItsTimedTarget) {
  SingleServer hbm(4.0);  // 256 bytes in 64 ns, one access at a time
  Bench b(test_config(), true, &hbm);
  // Both rows are presented at 111 ns. The first read is done at 175 and written to SBUF in 10 + 4 x 1 = 14 ns:
  // max(engine 111 + 66 = 177, 189) = 189; the second waits for the first read, is read at 239 and written at 253.
  const Descriptor d = copy_2d(kHbmBase, 0, kSbufBase, 0, 256, 1, 4);
  const Descriptor d2 = copy_2d(kHbmBase + 4096, 0, kSbufBase + 4096, 0, 256, 1, 4);
  b.run([&] {
    b.program({0, 0});
    b.program({1, 0});
    b.submit({0, 0}, {d});
    b.submit({1, 0}, {d2});
  });
  ASSERT_EQ(b.records.size(), 2u);
  EXPECT_EQ(std::min(b.records[0].end, b.records[1].end), ns(189));
  EXPECT_EQ(std::max(b.records[0].end, b.records[1].end), ns(253));
  EXPECT_EQ(hbm.requesters.size(), 2u);
  EXPECT_NE(hbm.requesters[0], hbm.requesters[1]) << "each access names its engine";
}

TEST(DmaTiming, ADescriptorWaitsForItsSemaphoreWithoutBlockingTheOtherQueue) {
  Bench b;
  Descriptor waits = copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4);
  waits.wait_mode = WaitMode::WAIT_GE;
  waits.wait_sem = 5;
  waits.wait_value = 2;
  QueueState at_500 = QueueState::Idle;
  b.run([&] {
    b.program({0, 0});
    b.program({0, 1});
    b.submit({0, 0}, {waits});
    b.submit({0, 1}, {copy_2d(kSbufBase, 0, kPsumBase + 512, 0, 256, 1, 4)});
    sc_core::wait(ns(500));
    at_500 = b.dma.status({0, 0}).state;
    b.sems.update(5, UpdateMode::SET, 1);  // not yet: WAIT_GE 2
    sc_core::wait(ns(500));
    b.sems.update(5, UpdateMode::INCREMENT, 1);  // 2 at 1000 ns
  });
  EXPECT_EQ(at_500, QueueState::WaitingSemaphore);
  ASSERT_EQ(b.records.size(), 2u);
  // q0 fetched 0..11 and waits; q1 fetched 11..22, runs 22 -> 22 + 100 + 66 = 188.
  EXPECT_EQ(b.records[0].queue, 1u);
  EXPECT_EQ(b.records[0].end, ns(188));
  // q0 starts when the semaphore reaches 2 at 1000 ns: 1000 + 100 + 66 = 1166.
  EXPECT_EQ(b.records[1].queue, 0u);
  EXPECT_EQ(b.records[1].start, ns(1000));
  EXPECT_EQ(b.records[1].end, ns(1166));
}

TEST(DmaTiming, TimingOnlyRunMovesNoDataInTheSameTime) {
  Bench b(test_config(), /*move_data=*/false);
  fill(b.hbm.data(), 1024, 9);
  Descriptor d = copy_2d(kHbmBase, 256, kSbufBase, kSbufPartitionBytes, 256, 4, 4);
  d.update_mode = UpdateMode::SET;
  d.update_sem = 0;
  d.update_value = 7;
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {d});
  });
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].end, ns(375)) << "as SingleTransferTimeAndSemaphoreAtCompletion";
  EXPECT_EQ(b.records[0].bytes, 1024u);
  EXPECT_EQ(b.sems.value(0), 7u);
  for (std::uint32_t p = 0; p < 4; ++p)
    for (std::uint32_t i = 0; i < 256; ++i) ASSERT_EQ(b.sbuf.data()[b.sbuf.local_address(p, i)], 0);
}

TEST(DmaTiming, SignalDescriptorOnlyWaitsAndUpdates) {
  Bench b;
  Descriptor s;
  s.kind = Kind::SIGNAL;
  s.update_mode = UpdateMode::SET;
  s.update_sem = 31;
  s.update_value = 0xFFFFFFFF;
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {s});
  });
  // fetch 11 + descriptor 100 = 111 ns.
  ASSERT_EQ(b.sems.updates.size(), 1u);
  EXPECT_EQ(b.sems.updates[0].at, ns(111));
  EXPECT_EQ(b.sems.value(31), 0xFFFFFFFFu);
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].bytes, 0u);
}

// ---- errors -------------------------------------------------------------------------------------------------------

struct Expected {
  std::uint32_t index;
  std::uint8_t field;
  std::uint64_t value;
  Rule rule;
};

// Queue (0, 0) gets `bad` at slot 0 and a good copy at slot 1; queue (0, 1) a good copy. The bad descriptor stops
// only queue (0, 0) with `want`, touches no memory (PSUM stays zero but for the good copies), raises the error
// interrupt; clear_error then runs slot 1.
void expect_refused(const DescriptorBytes& bad, const Expected& want) {
  Bench b;
  fill(b.sbuf.data(), b.sbuf.size(), 5);
  const std::vector<std::uint8_t> sbuf_before(b.sbuf.data(), b.sbuf.data() + b.sbuf.size());
  const Descriptor good_q0 = copy_2d(kSbufBase, 0, kPsumBase + 1024, 0, 256, 1, 4);
  const Descriptor good_q1 = copy_2d(kSbufBase, 0, kPsumBase + 2048, 0, 256, 1, 4);
  QueueStatus stopped;
  bool irq_at_stop = false;
  std::size_t records_at_stop = 0;
  b.run([&] {
    b.dma.set_irq_enable(DmaEngines::kIrqError);
    b.program({0, 0});
    b.program({0, 1});
    b.put_raw({0, 0}, 0, bad);
    b.put_raw({0, 0}, 1, encode(good_q0));
    b.dma.ring_doorbell({0, 0}, 2);
    b.submit({0, 1}, {good_q1});
    sc_core::wait(ns(1000));
    stopped = b.dma.status({0, 0});
    irq_at_stop = b.dma.irq.read();
    records_at_stop = b.records.size();
    b.dma.clear_irq_status(DmaEngines::kIrqError);
    b.dma.clear_error({0, 0});
  });
  EXPECT_EQ(stopped.state, QueueState::Error);
  EXPECT_EQ(stopped.error.index, want.index);
  EXPECT_EQ(stopped.error.error.field, want.field) << stopped.error.error.message;
  EXPECT_EQ(stopped.error.error.value, want.value) << stopped.error.error.message;
  EXPECT_EQ(stopped.error.error.rule, want.rule) << stopped.error.error.message;
  EXPECT_TRUE(irq_at_stop);
  EXPECT_EQ(b.dma.irq.read(), false) << "W1C cleared the error cause";
  ASSERT_EQ(records_at_stop, 1u) << "only the other queue's copy ran";
  EXPECT_EQ(b.records[0].queue, 1u);
  EXPECT_EQ(std::memcmp(b.psum.data() + 2048, b.sbuf.data(), 256), 0);
  // Nothing else changed: SBUF as filled, PSUM zero outside the good copies.
  EXPECT_EQ(std::memcmp(b.sbuf.data(), sbuf_before.data(), sbuf_before.size()), 0);
  for (std::uint64_t i = 0; i < b.psum.size(); ++i) {
    const bool good_copy = (i >= 1024 && i < 1024 + 256) || (i >= 2048 && i < 2048 + 256);
    if (!good_copy) {
      ASSERT_EQ(b.psum.data()[i], 0) << i;
    }
  }
  // clear_error resumed with the next descriptor.
  ASSERT_EQ(b.records.size(), 2u);
  EXPECT_EQ(b.records[1].queue, 0u);
  EXPECT_EQ(b.records[1].index, 1u);
  EXPECT_EQ(std::memcmp(b.psum.data() + 1024, b.sbuf.data(), 256), 0);
  EXPECT_EQ(b.dma.status({0, 0}).state, QueueState::Idle);
  EXPECT_EQ(b.dma.idle_violation(), "");
}

DescriptorBytes bad_copy(void (*mutate)(Descriptor&)) {
  Descriptor d = copy_2d(kSbufBase, kSbufPartitionBytes, kPsumBase, kPsumPartitionBytes, 256, 4, 4);
  mutate(d);
  return encode(d);
}

TEST(DmaErrors, DestinationPastTheEndOfPsum) {
  // Partition 3 row: 0x2000000 + 3 x 2048 + 1920 .. + 255 crosses PSUM's end (8192 bytes).
  expect_refused(bad_copy([](Descriptor& d) { d.dst = kPsumBase + 1920; }),
                 {0, offset::kDst, kPsumBase + 1920, Rule::AddressRange});
}

TEST(DmaErrors, SourceInTheUnmappedGap) {
  expect_refused(bad_copy([](Descriptor& d) { d.src = 0x3000000; }), {0, offset::kSrc, 0x3000000, Rule::AddressRange});
}

TEST(DmaErrors, PatternWrappingPast2To64) {
  expect_refused(bad_copy([](Descriptor& d) { d.src = 0xFFFFFFFFFFFFFF00; }),
                 {0, offset::kSrc, 0xFFFFFFFFFFFFFF00, Rule::AddressRange});
}

TEST(DmaErrors, ZeroRows) {
  expect_refused(bad_copy([](Descriptor& d) { d.rows = 0; }), {0, offset::kRows, 0, Rule::ZeroSize});
}

TEST(DmaErrors, MisalignedRow) {
  expect_refused(bad_copy([](Descriptor& d) { d.row_bytes = 254; }), {0, offset::kRowBytes, 254, Rule::Misaligned});
}

TEST(DmaErrors, SemaphoreIndexOutOfRange) {
  expect_refused(bad_copy([](Descriptor& d) {
                   d.wait_mode = WaitMode::WAIT_EQ;
                   d.wait_sem = 32;
                 }),
                 {0, offset::kWaitSem, 32, Rule::SemaphoreIndex});
}

TEST(DmaErrors, UnwrittenSlotIsAnUnknownKind) {
  expect_refused(DescriptorBytes{}, {0, offset::kKind, 0, Rule::UnknownKind});
}

TEST(DmaErrors, UnsupportedCast) {
  expect_refused(bad_copy([](Descriptor& d) {
                   d.flags = kFlagCast;
                   d.src_dtype = Dtype::FP32;
                   d.dst_dtype = Dtype::INT8;
                 }),
                 {0, offset::kSrcDtype, static_cast<std::uint64_t>(Dtype::FP32), Rule::UnsupportedCast});
}

TEST(DmaErrors, SemaphoreUpdateOverflowStopsTheQueueAfterTheData) {
  Bench b;
  b.sems.poke(4, 0xFFFFFFFF);
  Descriptor d = copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4);
  fill(b.sbuf.data(), 256, 2);
  d.update_mode = UpdateMode::INCREMENT;
  d.update_sem = 4;
  d.update_value = 1;
  b.run([&] {
    b.program({1, 0});
    b.submit({1, 0}, {d});
  });
  const QueueStatus s = b.dma.status({1, 0});
  EXPECT_EQ(s.state, QueueState::Error);
  EXPECT_EQ(s.error.index, 0u);
  EXPECT_EQ(s.error.error.field, offset::kUpdateValue);
  EXPECT_EQ(s.error.error.value, 1u);
  EXPECT_EQ(s.error.error.rule, Rule::SemaphoreUpdate);
  EXPECT_NE(s.error.error.message.find("overflows"), std::string::npos) << s.error.error.message;
  EXPECT_EQ(b.sems.value(4), 0xFFFFFFFFu) << "the refused update changed nothing";
  EXPECT_EQ(std::memcmp(b.psum.data(), b.sbuf.data(), 256), 0) << "the data moved before the update";
  EXPECT_TRUE(b.records.empty()) << "not a completed descriptor";
  EXPECT_EQ(b.dma.irq_status() & DmaEngines::kIrqError, DmaEngines::kIrqError);
}

TEST(DmaErrors, DoorbellPastTheRingIsAQueueOverflow) {
  Bench b;
  QueueStatus s;
  b.run([&] {
    b.program({0, 1}, 4);
    b.dma.ring_doorbell({0, 1}, 5);  // 5 past head 0 in a ring of 4
    s = b.dma.status({0, 1});
  });
  EXPECT_EQ(s.state, QueueState::Error);
  EXPECT_EQ(s.tail, 0u) << "the tail stays where it was";
  EXPECT_EQ(s.error.index, 0u);
  EXPECT_EQ(s.error.error.field, field::kTail);
  EXPECT_EQ(s.error.error.value, 5u);
  EXPECT_EQ(s.error.error.rule, Rule::QueueOverflow);
  EXPECT_TRUE(b.records.empty());
}

TEST(DmaErrors, RingOutsideEveryEndpointIsRefusedAtEnable) {
  Bench b;
  QueueStatus gap, entries, aligned;
  b.run([&] {
    b.dma.set_ring({0, 0}, kHostBase + kHostBytes - 128, 4);  // 256 bytes, 128 past host memory's end
    b.dma.set_enabled({0, 0}, true);
    gap = b.dma.status({0, 0});
    b.dma.set_ring({0, 1}, kHostBase, 65);  // max_ring_entries is 64
    b.dma.set_enabled({0, 1}, true);
    entries = b.dma.status({0, 1});
    b.dma.set_ring({1, 0}, kHostBase + 32, 4);
    b.dma.set_enabled({1, 0}, true);
    aligned = b.dma.status({1, 0});
  });
  EXPECT_EQ(gap.state, QueueState::Error);
  EXPECT_FALSE(gap.enabled);
  EXPECT_EQ(gap.error.error.field, field::kRingBase);
  EXPECT_EQ(gap.error.error.value, kHostBase + kHostBytes - 128);
  EXPECT_EQ(gap.error.error.rule, Rule::RingRange);
  EXPECT_EQ(entries.error.error.field, field::kRingEntries);
  EXPECT_EQ(entries.error.error.value, 65u);
  EXPECT_EQ(entries.error.error.rule, Rule::RingEntries);
  EXPECT_EQ(aligned.error.error.field, field::kRingBase);
  EXPECT_EQ(aligned.error.error.rule, Rule::Misaligned);
}

// ---- interrupt, statistics, idle ----------------------------------------------------------------------------------

TEST(DmaIrq, CompletionRaisesTheLineWhenEnabled) {
  Bench b;
  Descriptor d = copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4);
  d.flags = kFlagIrq;
  bool at_176 = true, at_178 = false, after_clear = true;
  b.run([&] {
    b.dma.set_irq_enable(DmaEngines::kIrqCompletion);
    b.program({0, 0});
    b.submit({0, 0}, {d});
    sc_core::wait(ns(176));
    at_176 = b.dma.irq.read();
    sc_core::wait(ns(2));
    at_178 = b.dma.irq.read();  // completion at 177
    b.dma.clear_irq_status(DmaEngines::kIrqCompletion);
    sc_core::wait(ns(1));
    after_clear = b.dma.irq.read();
  });
  EXPECT_FALSE(at_176);
  EXPECT_TRUE(at_178);
  EXPECT_FALSE(after_clear);
  EXPECT_EQ(b.dma.irq_status(), 0u);
}

TEST(DmaIdle, IdleViolationNamesThePendingQueue) {
  Bench b;
  std::string pending;
  b.run([&] {
    b.dma.set_ring({1, 1}, kHostBase + Bench::ring_local({1, 1}), 8);
    b.submit({1, 1}, {copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4)});  // rung but not enabled
    pending = b.dma.idle_violation();
    b.dma.set_enabled({1, 1}, true);
  });
  EXPECT_NE(pending.find("engine 1 queue 1"), std::string::npos) << pending;
  EXPECT_NE(pending.find("1 descriptors pending"), std::string::npos) << pending;
  EXPECT_EQ(b.dma.idle_violation(), "");
  EXPECT_FALSE(b.dma.busy());
}

TEST(DmaConfig, PerGenerationBandwidthAndChecks) {
  EXPECT_EQ(dma_config(pevp::isa::Generation::CAYMAN).engine_gbps, 23.0);
  EXPECT_EQ(dma_config(pevp::isa::Generation::MARIANA).engine_gbps, 33.0);
  EXPECT_EQ(dma_config(pevp::isa::Generation::CAYMAN).engines, 16u);
  EXPECT_EQ(dma_config(pevp::isa::Generation::CAYMAN).queues_per_engine, 16u);
  EXPECT_EQ(check_config(dma_config(pevp::isa::Generation::MAVERICK)), "");
  DmaConfig c;
  c.engine_gbps = 0;
  EXPECT_NE(check_config(c).find("engine_gbps"), std::string::npos);
  c = DmaConfig{};
  c.engines = 64;
  c.queues_per_engine = 64;
  EXPECT_NE(check_config(c).find("1024"), std::string::npos);
  EXPECT_EQ(dma_parameters().size(), 6u);
}

}  // namespace

namespace {

TEST(DmaTiming, WorkedExampleOfTheDocsWithTheCaymanDefaults) {
  // docs/dma.md "Timing": CAYMAN defaults (23 GB/s, 600 ns per descriptor, 16 ns per row); HBM -> SBUF, 4 partitions
  // x 2 KiB. Engine row = 16 + 2048 / 23 = 16 + 89.043 ns (89.0434... rounded to the 1 ps resolution) = 105.043 ns;
  // the memories' rows (10 + 32 x 1 = 42 ns) are shorter. Completion = fetch 11 + 600 + 4 x 105.043 = 1031.172 ns.
  Bench b(dma_config(pevp::isa::Generation::CAYMAN));
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {copy_2d(kHbmBase, 2048, kSbufBase, kSbufPartitionBytes, 2048, 4, 4)});
  });
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].end, sc_time(1031172, sc_core::SC_PS));
}

}  // namespace

namespace {

// A memory that refuses DMI (every byte through b_transport), optionally refusing writes, timed at 1 ns per access.
struct NoDmiMemory : sc_core::sc_module, pevp::memory::TimedTarget {
  tlm_utils::simple_target_socket<NoDmiMemory> socket;
  std::vector<std::uint8_t> bytes;
  bool refuse_writes = false;
  unsigned transactions = 0;
  NoDmiMemory(sc_core::sc_module_name n, std::size_t size) : sc_core::sc_module(n), socket("socket"), bytes(size) {
    socket.register_b_transport(this, &NoDmiMemory::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_time&) {
    ++transactions;
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    if (t.get_address() + t.get_data_length() > bytes.size()) return;
    if (t.is_write()) {
      if (refuse_writes) return;
      std::memcpy(bytes.data() + t.get_address(), t.get_data_ptr(), t.get_data_length());
    } else {
      std::memcpy(t.get_data_ptr(), bytes.data() + t.get_address(), t.get_data_length());
    }
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  sc_time access(const pevp::memory::TimedAccess& a) override { return a.start + sc_time(1, SC_NS); }
};

constexpr std::uint64_t kSlowBase = 0x200'0000'0000;

TEST(DmaData, TargetsWithoutDmiGoThroughBTransport) {
  Bench b;
  NoDmiMemory slow("slow", 4096);
  ASSERT_EQ(b.dma.map("slow", kSlowBase, slow.bytes.size(), slow.socket, slow), "");
  for (std::size_t i = 0; i < 512; ++i) slow.bytes[i] = static_cast<std::uint8_t>(i * 7);
  // The ring in the slow memory too: descriptor fetches go through b_transport.
  const Descriptor out = copy_2d(kSlowBase, 128, kSbufBase, kSbufPartitionBytes, 128, 4, 4);  // slow -> SBUF
  const Descriptor in = copy_2d(kSbufBase, kSbufPartitionBytes, kSlowBase + 2048, 128, 128, 4, 4);  // SBUF -> slow
  std::memcpy(slow.bytes.data() + 1024, encode(out).data(), kDescriptorBytes);
  std::memcpy(slow.bytes.data() + 1024 + 64, encode(in).data(), kDescriptorBytes);
  b.run([&] {
    b.dma.set_ring({0, 0}, kSlowBase + 1024, 2);
    b.dma.set_enabled({0, 0}, true);
    b.dma.ring_doorbell({0, 0}, 2);
  });
  ASSERT_EQ(b.records.size(), 2u);
  for (std::uint32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(std::memcmp(b.sbuf.data() + b.sbuf.local_address(p, 0), slow.bytes.data() + 128 * p, 128), 0) << p;
    EXPECT_EQ(std::memcmp(slow.bytes.data() + 2048 + 128 * p, slow.bytes.data() + 128 * p, 128), 0) << p;
  }
  // 2 fetches + 4 row reads + 4 row writes.
  EXPECT_EQ(slow.transactions, 10u);
}

TEST(DmaErrors, ARefusedTransferStopsTheQueueWithTransferFailed) {
  Bench b;
  NoDmiMemory slow("slow", 4096);
  slow.refuse_writes = true;
  ASSERT_EQ(b.dma.map("slow", kSlowBase, slow.bytes.size(), slow.socket, slow), "");
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {copy_2d(kSbufBase, 0, kSlowBase, 0, 64, 1, 4)});
  });
  const QueueStatus s = b.dma.status({0, 0});
  EXPECT_EQ(s.state, QueueState::Error);
  EXPECT_EQ(s.error.error.rule, Rule::TransferFailed);
  EXPECT_EQ(s.error.error.field, offset::kSrc);
  EXPECT_TRUE(b.records.empty());
}

TEST(DmaConfig, MapRefusesOverlapsZeroSizesAndWraps) {
  Bench b;
  NoDmiMemory extra("extra", 64);
  EXPECT_NE(b.dma.map("x", kHbmBase + 4096, 64, extra.socket, extra).find("overlaps hbm"), std::string::npos);
  EXPECT_NE(b.dma.map("x", kSlowBase, 0, extra.socket, extra).find("size must be > 0"), std::string::npos);
  EXPECT_NE(b.dma.map("x", 0xFFFFFFFFFFFFFFC0, 128, extra.socket, extra).find("wraps"), std::string::npos);
  EXPECT_EQ(b.dma.map("x", kSlowBase, 64, extra.socket, extra), "");  // so the socket is bound once
}

TEST(DmaQueues, DisablingFinishesTheDescriptorInFlightAndStartsNoOther) {
  Bench b;
  const Descriptor d = copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4);
  std::string pending;
  QueueState state_disabled = QueueState::Running;
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {d, d});
    sc_core::wait(sc_time(50, SC_NS));  // descriptor 0 runs 0..177
    b.dma.set_enabled({0, 0}, false);
    sc_core::wait(sc_time(950, SC_NS));
    pending = b.dma.idle_violation();
    state_disabled = b.dma.status({0, 0}).state;
    b.dma.set_enabled({0, 0}, true);  // at 1000 ns: descriptor 1 runs 1000..1177
  });
  ASSERT_EQ(b.records.size(), 2u);
  EXPECT_EQ(b.records[0].end, sc_time(177, SC_NS));
  EXPECT_EQ(b.records[1].end, sc_time(1177, SC_NS));
  EXPECT_EQ(state_disabled, QueueState::Idle);
  EXPECT_NE(pending.find("1 descriptors pending (head 1, tail 2)"), std::string::npos) << pending;
}

TEST(DmaQueues, ResetDuringAFetchDropsIt) {
  Bench b;
  QueueStatus after;
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4)});
    sc_core::wait(sc_time(5, SC_NS));  // the fetch takes 0..11 ns
    b.dma.reset_queue({0, 0});
    sc_core::wait(sc_time(100, SC_NS));
    after = b.dma.status({0, 0});
  });
  EXPECT_TRUE(b.records.empty());
  EXPECT_EQ(after.head, 0u);
  EXPECT_EQ(after.tail, 0u);
  EXPECT_FALSE(after.enabled);
  EXPECT_EQ(b.dma.idle_violation(), "");
  EXPECT_EQ(b.psum.data()[0], 0);
}

TEST(DmaErrors, SemaphoreUnderflowIsRefusedToo) {
  Bench b;
  Descriptor s;
  s.kind = Kind::SIGNAL;
  s.update_mode = UpdateMode::DECREMENT;
  s.update_sem = 6;
  s.update_value = 2;
  b.sems.poke(6, 1);
  b.run([&] {
    b.program({0, 0});
    b.submit({0, 0}, {s});
  });
  const QueueStatus st = b.dma.status({0, 0});
  EXPECT_EQ(st.error.error.rule, Rule::SemaphoreUpdate);
  EXPECT_EQ(st.error.error.value, 2u);
  EXPECT_NE(st.error.error.message.find("underflows"), std::string::npos) << st.error.error.message;
  EXPECT_EQ(b.sems.value(6), 1u);
}

}  // namespace
