// The platform's hard reset (pevp/platform/reset.h): a reset while idle leaves the platform exactly at its power-on
// state -- its checkpoint equals the one taken before the first access, section by section, but for the time --
// and a reset while the DMA engines have descriptors in flight (one moving data, one waiting for a semaphore nothing
// sets) drops them: no data lands, no semaphore moves, no interrupt rises, even after their completion times, and
// the engines then run a fresh descriptor. Neither reset lets simulated time pass.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ckpt_scenario.h"
#include "pevp/dma/address_space.h"
#include "pevp/dma/descriptor.h"
#include "pevp/platform/reset.h"

namespace {

using namespace ckt;
namespace dma = pevp::dma;

// A checkpoint's sections by name (docs/checkpoint.md "Format": magic, u32 version, the generation as a u32-length
// string, then each section as u16 name length, name, u64 payload length, u32 CRC-32, payload).
std::map<std::string, std::vector<std::uint8_t>> sections(const std::vector<std::uint8_t>& image) {
  const auto le = [&](std::size_t at, unsigned bytes) {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t{image.at(at + i)} << (8 * i);
    return v;
  };
  std::size_t at = 8 + 4;
  at += 4 + le(at, 4);
  std::map<std::string, std::vector<std::uint8_t>> out;
  while (at < image.size()) {
    const std::size_t name_length = le(at, 2);
    const std::string name(image.begin() + static_cast<std::ptrdiff_t>(at + 2),
                           image.begin() + static_cast<std::ptrdiff_t>(at + 2 + name_length));
    at += 2 + name_length;
    const std::size_t length = le(at, 8);
    at += 12;
    EXPECT_LE(at + length, image.size()) << "section " << name;
    out[name].assign(image.begin() + static_cast<std::ptrdiff_t>(at),
                     image.begin() + static_cast<std::ptrdiff_t>(at + length));
    at += length;
  }
  return out;
}

// The sections of `a` and `b` that differ, the time section left out.
std::vector<std::string> differing(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  const auto sa = sections(a), sb = sections(b);
  std::vector<std::string> out;
  for (const auto& [name, bytes] : sa)
    if (name != "time" && (sb.count(name) == 0 || sb.at(name) != bytes)) out.push_back(name);
  return out;
}

std::uint64_t time_of(const std::vector<std::uint8_t>& image) {
  const std::vector<std::uint8_t> t = sections(image).at("time");  // u64 resolution in fs, u64 time
  std::uint64_t v = 0;
  for (unsigned i = 0; i < 8; ++i) v |= std::uint64_t{t.at(8 + i)} << (8 * i);
  return v;
}

TEST(HardReset, WhileIdleLeavesThePowerOnState) {
  const Generation g = Generation::MARIANA;
  const platform::VpConfig cfg = scenario_config(g);
  platform::VirtualPlatform vp(cfg);
  vp.run([&](platform::Driver& d) {
    platform::Platform& p = vp.platform();
    const platform::CheckpointImage power_on = platform::power_on_state(p);
    const std::vector<std::uint8_t> at_power_on = platform::save_checkpoint(p);
    // Program A leaves a stationary, an open PSUM group, a semaphore, non-default CSRs and a fault with two
    // instructions queued behind it; B clears it and runs on: the engine is idle, its state far from power-on.
    run_a(d, cfg.geometry, g, platform::SimMode::Both);
    run_b(d, g);
    const std::vector<std::uint8_t> before = platform::save_checkpoint(p);
    const std::vector<std::string> changed = differing(at_power_on, before);
    for (const char* s : {"sbuf", "psum", "csrs", "pe_array", "arr_seq", "seq"})
      EXPECT_NE(std::find(changed.begin(), changed.end(), s), changed.end()) << s << " did not change";
    // Device memory: written here, zero after the reset.
    const std::uint32_t word = 0xC0FFEE;
    d.write(d.map().hbm_window + 0x100, &word, sizeof word);

    EXPECT_TRUE(p.hazards.armed());  // run_a armed the engine
    const sc_core::sc_time t = sc_core::sc_time_stamp();
    platform::hard_reset(p, power_on);
    EXPECT_EQ(sc_core::sc_time_stamp(), t) << "the reset let simulated time pass";
    EXPECT_FALSE(p.hazards.armed()) << "after a reset the engine is unarmed, as at power-on";
    const std::vector<std::uint8_t> after = platform::save_checkpoint(p);
    EXPECT_EQ(differing(at_power_on, after), std::vector<std::string>{});
    EXPECT_EQ(time_of(after), t.value());
    std::uint32_t back = 1;
    d.read(d.map().hbm_window + 0x100, &back, sizeof back);
    EXPECT_EQ(back, 0u);
    // A second reset of the reset platform (the bus read above took time) changes nothing but the time either.
    platform::hard_reset(p, power_on);
    const std::vector<std::uint8_t> again = platform::save_checkpoint(p);
    EXPECT_EQ(differing(after, again), std::vector<std::string>{});
    EXPECT_EQ(time_of(again), sc_core::sc_time_stamp().value());
  });
}

TEST(HardReset, DropsDmaDescriptorsInFlight) {
  const Generation g = Generation::MARIANA;
  const platform::VpConfig cfg = scenario_config(g);
  platform::VirtualPlatform vp(cfg);
  vp.run([&](platform::Driver& d) {
    platform::Platform& p = vp.platform();
    const platform::CheckpointImage power_on = platform::power_on_state(p);
    const std::vector<std::uint8_t> at_power_on = platform::save_checkpoint(p);
    const std::uint64_t window = d.map().hbm_window;
    constexpr std::uint64_t kRingA = 0x0, kRingB = 0x1000, kData = 0x10000;
    constexpr std::uint32_t kRows = 64, kRowBytes = 4096;
    constexpr unsigned kCopySemaphore = 2, kSignalSemaphore = 3, kNeverSet = 6;
    std::vector<std::uint8_t> data(std::size_t{kRows} * kRowBytes);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 1);
    d.write(window + kData, data.data(), data.size());
    // A: 64 rows of 4 KiB from HBM into SBUF partitions 0..63, then semaphore 2 = 9 and the interrupt.
    dma::Descriptor copy;
    copy.kind = dma::Kind::COPY;
    copy.flags = dma::kFlagIrq;
    copy.src = dma::kHbmBase + kData;
    copy.dst = dma::kSbufBase;
    copy.row_bytes = kRowBytes;
    copy.rows = kRows;
    copy.planes = 1;
    copy.elem_bytes = 4;
    copy.src_row_stride = kRowBytes;
    copy.dst_row_stride = cfg.geometry.sbuf_partition_bytes;
    copy.update_mode = isa::UpdateMode::SET;
    copy.update_sem = kCopySemaphore;
    copy.update_value = 9;
    // B: a signal waiting for semaphore 6, which nothing sets, then semaphore 3 + 1.
    dma::Descriptor signal;
    signal.kind = dma::Kind::SIGNAL;
    signal.wait_mode = isa::WaitMode::WAIT_GE;
    signal.wait_sem = kNeverSet;
    signal.wait_value = 1;
    signal.update_mode = isa::UpdateMode::INCREMENT;
    signal.update_sem = kSignalSemaphore;
    signal.update_value = 1;
    const dma::DescriptorBytes a = dma::encode(copy), b = dma::encode(signal);
    d.write(window + kRingA, a.data(), a.size());
    d.write(window + kRingB, b.data(), b.size());
    const dma::QueueId qa{0, 0}, qb{1, 0};
    p.dma.set_irq_enable(dma::DmaEngines::kIrqCompletion);
    p.dma.set_ring(qa, dma::kHbmBase + kRingA, 4);
    p.dma.set_ring(qb, dma::kHbmBase + kRingB, 4);
    p.dma.set_enabled(qa, true);
    p.dma.set_enabled(qb, true);
    p.dma.ring_doorbell(qa, 1);
    p.dma.ring_doorbell(qb, 1);
    // A takes 600 ns plus 64 rows of (16 ns + 4096 B at 33 GB/s = 140 ns): about 10.6 us (D-DMA-TIMING). At 2 us it
    // is moving, B waits on its semaphore.
    sc_core::wait(sc_core::sc_time(2, sc_core::SC_US));
    ASSERT_EQ(p.dma.status(qa).state, dma::QueueState::Running);
    ASSERT_EQ(p.dma.status(qb).state, dma::QueueState::WaitingSemaphore);

    const sc_core::sc_time t = sc_core::sc_time_stamp();
    platform::hard_reset(p, power_on);
    EXPECT_EQ(sc_core::sc_time_stamp(), t) << "the reset let simulated time pass";
    EXPECT_EQ(p.dma.idle_violation(), "");
    for (const dma::QueueId q : {qa, qb}) {
      const dma::QueueStatus s = p.dma.status(q);
      EXPECT_EQ(s.state, dma::QueueState::Idle);
      EXPECT_FALSE(s.enabled);
      EXPECT_EQ(s.ring_base, 0u);
      EXPECT_EQ(s.head, 0u);
      EXPECT_EQ(s.tail, 0u);
    }
    EXPECT_EQ(p.dma.irq_enable(), 0u);
    // Past A's completion time, and with B's semaphore set: nothing of either happens.
    d.set_semaphore(kNeverSet, 1);
    sc_core::wait(sc_core::sc_time(50, sc_core::SC_US));
    EXPECT_EQ(d.semaphore(kCopySemaphore), 0u);
    EXPECT_EQ(d.semaphore(kSignalSemaphore), 0u);
    EXPECT_EQ(p.dma.irq_status(), 0u);
    EXPECT_FALSE(p.dma.irq.read());
    EXPECT_EQ(p.dma.queue_stats(qa).descriptors, 0u);
    std::vector<std::uint8_t> sbuf_row(kRowBytes, 0xAA);
    d.read(d.map().sbuf, sbuf_row.data(), sbuf_row.size());
    EXPECT_EQ(sbuf_row, std::vector<std::uint8_t>(kRowBytes, 0)) << "the dropped copy wrote SBUF";
    // The platform is at its power-on state (device memory zero, the DMA engines as built).
    d.set_semaphore(kNeverSet, 0);
    EXPECT_EQ(differing(at_power_on, platform::save_checkpoint(p)), std::vector<std::string>{});

    // The engines work after the reset: the same copy, from data written again, lands whole.
    d.write(window + kData, data.data(), data.size());
    d.write(window + kRingA, a.data(), a.size());
    p.dma.set_ring(qa, dma::kHbmBase + kRingA, 4);
    p.dma.set_enabled(qa, true);
    p.dma.ring_doorbell(qa, 1);
    sc_core::wait(sc_core::sc_time(50, sc_core::SC_US));
    EXPECT_EQ(d.semaphore(kCopySemaphore), 9u);
    EXPECT_EQ(p.dma.queue_stats(qa).descriptors, 1u);
    for (std::uint32_t r = 0; r < kRows; r += 21) {
      d.read(d.map().sbuf + std::uint64_t{r} * cfg.geometry.sbuf_partition_bytes, sbuf_row.data(), kRowBytes);
      EXPECT_EQ(0, std::memcmp(sbuf_row.data(), data.data() + std::size_t{r} * kRowBytes, kRowBytes)) << "row " << r;
    }
  });
}

TEST(HardReset, RefusesAPowerOnStateOfAnotherConfiguration) {
  platform::VpConfig cfg = scenario_config(Generation::MARIANA);
  platform::VirtualPlatform vp(cfg);
  vp.run([&](platform::Driver&) {
    platform::Platform& p = vp.platform();
    platform::CheckpointImage other = platform::power_on_state(p);
    other.config["arr_seq"]["ififo_depth"] = 3;  // as taken from a platform with another IFIFO depth
    const std::vector<std::uint8_t> before = platform::save_checkpoint(p);
    try {
      platform::hard_reset(p, other);
      ADD_FAILURE() << "a power-on state of another configuration was applied";
    } catch (const platform::CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("another configuration"), std::string::npos) << e.what();
    }
    EXPECT_EQ(platform::save_checkpoint(p), before);
  });
}

}  // namespace
