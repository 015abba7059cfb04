// The channel timing core alone (no SystemC): address interleaving against a byte-by-byte reference, and access
// times against figures derived by hand in each test's comment.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <stdexcept>

#include "pevp/hbm/channel_model.h"

namespace {
using namespace pevp::hbm;

// 4 channels at 4 GB/s in all: 1 GB/s = 1 byte/ns per channel, so a channel serves a byte in 1000 ps. 100 ns
// latency, 64-byte interleave (bytes 0-63 on channel 0, 64-127 on 1, 128-191 on 2, 192-255 on 3, 256-319 on 0...).
ChannelTiming small() {
  ChannelTiming t;
  t.channels = 4;
  t.bandwidth_gbps = 4;
  t.latency_ps = 100000;
  t.interleave_bytes = 64;
  return t;
}

Request read(std::uint64_t address, std::uint64_t bytes, std::uint64_t start_ps, unsigned requester = 0) {
  return {address, bytes, Op::Read, start_ps, requester};
}

TEST(ChannelModel, OneAccessIsItsBytesAtChannelBandwidthPlusLatency) {
  ChannelModel m(small());
  // 64 bytes on channel 0 alone: 64 x 1000 ps = 64000 ps of service, + 100000 ps latency.
  EXPECT_EQ(m.access(read(0, 64, 0)), 164000u);
  ASSERT_EQ(m.last_busy().size(), 1u);
  EXPECT_EQ(m.last_busy()[0].channel, 0u);
  EXPECT_EQ(m.last_busy()[0].start_ps, 0u);
  EXPECT_EQ(m.last_busy()[0].end_ps, 64000u);
  EXPECT_EQ(m.channel_stats()[0].bytes_read, 64u);
  EXPECT_EQ(m.channel_stats()[0].busy_ps, 64000u);
  EXPECT_EQ(m.channel_stats()[0].accesses, 1u);
  EXPECT_EQ(m.channel_stats()[1].accesses, 0u);
}

TEST(ChannelModel, DefaultHbmFiguresRoundUpToWholePicoseconds) {
  // CAYMAN's share: 2900 GB/s / 8 cores = 362.5 GB/s over 16 channels = 22.65625 GB/s = 22.65625 bytes/ns each.
  // 256 bytes on one channel: 256 / 22.65625 = 11.29931 ns -> 11300 ps (rounded up), + 100 ns = 111300 ps.
  ChannelTiming t;
  t.channels = 16;
  t.bandwidth_gbps = 362.5;
  t.latency_ps = 100000;
  t.interleave_bytes = 256;
  ChannelModel m(t);
  EXPECT_EQ(m.service_ps(256), 11300u);
  EXPECT_EQ(m.access(read(0, 256, 0)), 111300u);
}

TEST(ChannelModel, AStreamReachesThePeakBandwidth) {
  // CAYMAN's HBM (16 channels, 362.5 GB/s, 256-byte interleave, 100 ns): 64 MiB as 16384 accesses of 4 KiB, all
  // presented at 0 by 16 requesters in turn. Each access gives every channel one 256-byte block, 11300 ps (see
  // DefaultHbmFiguresRoundUpToWholePicoseconds), and the channels queue them back to back: the last completes at
  // 16384 x 11300 = 185139200 ps + 100000 ps latency = 185239200 ps. The exact 64 MiB / 362.5 GB/s is 185127900 ps,
  // so the per-share rounding costs 0.006%.
  ChannelTiming t;
  t.channels = 16;
  t.bandwidth_gbps = 362.5;
  t.latency_ps = 100000;
  t.interleave_bytes = 256;
  ChannelModel m(t);
  std::uint64_t last = 0;
  for (std::uint64_t i = 0; i < 16384; ++i) last = m.access(read(i * 4096, 4096, 0, static_cast<unsigned>(i % 16)));
  EXPECT_EQ(last, 185239200u);
  std::uint64_t read_bytes = 0;
  for (const ChannelStats& c : m.channel_stats()) {
    EXPECT_EQ(c.busy_ps, 185139200u);
    EXPECT_EQ(c.accesses, 16384u);
    read_bytes += c.bytes_read;
  }
  EXPECT_EQ(read_bytes, 64u << 20);
  std::uint64_t by_requesters = 0;
  for (const auto& [who, stats] : m.requester_stats()) by_requesters += stats.bytes_read;
  EXPECT_EQ(m.requester_stats().size(), 16u);
  EXPECT_EQ(by_requesters, 64u << 20) << "every byte is some requester's";
}

TEST(ChannelModel, AnAccessSpanningChannelsIsServedInParallel) {
  ChannelModel m(small());
  // 300 bytes from address 10: [10,64) 54 B on ch0, [64,128) ch1, [128,192) ch2, [192,256) ch3 (64 B each), and
  // [256,310) 54 B on ch0 again: ch0 carries 108 B. The slowest share is ch0's, 108000 ps; + 100000 latency.
  const std::vector<std::uint64_t> expected{108, 64, 64, 64};
  EXPECT_EQ(m.share(10, 300), expected);
  EXPECT_EQ(m.access(read(10, 300, 0)), 208000u);
  ASSERT_EQ(m.last_busy().size(), 4u);
  for (unsigned c = 1; c < 4; ++c) {
    EXPECT_EQ(m.last_busy()[c].start_ps, 0u) << "channel " << c;
    EXPECT_EQ(m.last_busy()[c].end_ps, 64000u) << "channel " << c;
  }
  EXPECT_EQ(m.last_busy()[0].end_ps, 108000u);
}

TEST(ChannelModel, ShareMatchesAByteByByteReference) {
  // The closed form (partial first and last blocks, whole turns, the remainder) against counting each byte's
  // channel, (address / interleave) mod channels, over random accesses and several geometries.
  std::mt19937_64 rng(7);
  for (unsigned channels : {1u, 3u, 4u, 16u}) {
    for (unsigned interleave : {1u, 32u, 256u}) {
      ChannelTiming t = small();
      t.channels = channels;
      t.interleave_bytes = interleave;
      const ChannelModel m(t);
      for (int i = 0; i < 200; ++i) {
        const std::uint64_t address = rng() % 20000, bytes = rng() % 5000;
        std::vector<std::uint64_t> reference(channels, 0);
        for (std::uint64_t a = address; a < address + bytes; ++a) ++reference[(a / interleave) % channels];
        ASSERT_EQ(m.share(address, bytes), reference)
            << channels << " channels, interleave " << interleave << ", " << bytes << " bytes at " << address;
      }
    }
  }
}

TEST(ChannelModel, TwoRequestersOnOneChannelQueue) {
  ChannelModel m(small());
  // Requester 1: 64 B at 0 (ch0) at t = 0 -> ch0 busy [0, 64000], completes 164000.
  EXPECT_EQ(m.access(read(0, 64, 0, 1)), 164000u);
  // Requester 2: 64 B at 256 (block 4 -> ch0 again) presented at 10000 ps: waits for ch0 until 64000, is served
  // until 128000 and completes at 228000 -- not 10000 + 64000 + 100000 = 174000 as alone.
  EXPECT_EQ(m.access(read(256, 64, 10000, 2)), 228000u);
  ASSERT_EQ(m.last_busy().size(), 1u);
  EXPECT_EQ(m.last_busy()[0].start_ps, 64000u);
  EXPECT_EQ(m.last_busy()[0].end_ps, 128000u);
  EXPECT_EQ(m.channel_stats()[0].busy_ps, 128000u);
  EXPECT_EQ(m.channel_stats()[0].accesses, 2u);
  EXPECT_EQ(m.channel_stats()[0].bytes_read, 128u);
  EXPECT_EQ(m.requester_stats().at(1).bytes_read, 64u);
  EXPECT_EQ(m.requester_stats().at(2).bytes_read, 64u);
}

TEST(ChannelModel, AccessesOnDifferentChannelsOverlap) {
  ChannelModel m(small());
  EXPECT_EQ(m.access(read(0, 64, 0, 1)), 164000u);
  // 64 B at 64 is channel 1, idle: served [10000, 74000], completes 174000 with no wait.
  EXPECT_EQ(m.access(read(64, 64, 10000, 2)), 174000u);
  // After ch0 is free again (64000), an access presented at 200000 does not wait either: 200000 + 64000 + 100000.
  EXPECT_EQ(m.access(read(0, 64, 200000, 1)), 364000u);
}

TEST(ChannelModel, WritesAndReadsAreCountedApart) {
  ChannelModel m(small());
  m.access({0, 128, Op::Write, 0, 5});  // ch0 and ch1, 64 B each
  m.access(read(64, 64, 0, 5));         // ch1
  EXPECT_EQ(m.channel_stats()[0].bytes_written, 64u);
  EXPECT_EQ(m.channel_stats()[1].bytes_written, 64u);
  EXPECT_EQ(m.channel_stats()[1].bytes_read, 64u);
  EXPECT_EQ(m.channel_stats()[0].bytes_read, 0u);
  EXPECT_EQ(m.requester_stats().at(5).bytes_written, 128u);
  EXPECT_EQ(m.requester_stats().at(5).bytes_read, 64u);
}

TEST(ChannelModel, AnEmptyAccessBooksNothing) {
  ChannelModel m(small());
  EXPECT_EQ(m.access(read(0, 0, 5000)), 5000u);
  EXPECT_TRUE(m.last_busy().empty());
  EXPECT_EQ(m.channel_stats()[0].accesses, 0u);
  EXPECT_TRUE(m.requester_stats().empty());
  // Nothing booked: the next access on channel 0 starts at its presentation.
  EXPECT_EQ(m.access(read(0, 64, 0)), 164000u);
}

TEST(ChannelModel, UnusableTimingIsRefusedWithTheRule) {
  ChannelTiming t = small();
  t.channels = 0;
  EXPECT_EQ(check_timing(t), "channels must be > 0");
  EXPECT_THROW(ChannelModel{t}, std::invalid_argument);
  t = small();
  t.interleave_bytes = 0;
  EXPECT_EQ(check_timing(t), "interleave_bytes must be > 0");
  t = small();
  t.bandwidth_gbps = 0;
  EXPECT_NE(check_timing(t).find("bandwidth_gbps must be a finite number > 0"), std::string::npos);
  t.bandwidth_gbps = std::numeric_limits<double>::infinity();
  EXPECT_NE(check_timing(t), "");
  try {
    ChannelModel m(t);
    FAIL() << "an infinite bandwidth was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth_gbps"), std::string::npos) << e.what();
  }
  EXPECT_EQ(check_timing(small()), "");
}

TEST(ChannelModel, StateRoundTripsAndForeignStatesAreRefused) {
  ChannelModel a(small());
  a.access(read(0, 300, 0, 1));
  a.access({64, 64, Op::Write, 1000, 2});
  ChannelModel b(small());
  b.restore(a.state());
  EXPECT_EQ(b.state(), a.state());
  // The restored model times the next access as the original does.
  EXPECT_EQ(b.access(read(0, 64, 0)), a.access(read(0, 64, 0)));

  ChannelState wrong = a.state();
  wrong.free_ps.pop_back();
  EXPECT_EQ(b.check_state(wrong), "free times for 3 channels, the memory has 4");
  EXPECT_THROW(b.restore(wrong), std::invalid_argument);
  wrong = a.state();
  wrong.channels.push_back({});
  EXPECT_EQ(b.check_state(wrong), "statistics for 5 channels, the memory has 4");
  wrong = a.state();
  wrong.channels[2].busy_ps = wrong.free_ps[2] + 1;
  EXPECT_NE(b.check_state(wrong).find("channel 2 busy for"), std::string::npos);
  const ChannelState before = b.state();
  EXPECT_THROW(b.restore(wrong), std::invalid_argument);
  EXPECT_EQ(b.state(), before) << "a refused state changes nothing";
}

}  // namespace
