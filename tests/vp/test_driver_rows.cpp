// The driver's 2-D transfers (Driver::write_rows / read_rows): the bytes land where row-by-row writes would put
// them and nowhere else, the simulated time is the sum of the rows' bus times (what row-by-row writes take, and
// what the memory's own latency model gives), and a row that fails stops the transfer with a BusError naming its
// address after the rows before it are done.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"

namespace {

using namespace pevp;

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 7 + seed);
  return v;
}

TEST(DriverRows, RoundTripAtTheRowByRowTime) {
  platform::PlatformConfig cfg;
  platform::VirtualPlatform vp(cfg);
  const std::size_t part = vp.platform().sbuf.config().partition_bytes;
  constexpr std::size_t kRows = 5, kRowBytes = 100, kHostStride = 128;
  const std::vector<std::uint8_t> src = pattern(kRows * kHostStride, 3);
  std::vector<std::uint8_t> back(kRows * 200, 0xEE);
  sc_core::sc_time rows_time, single_time;
  vp.run([&](platform::Driver& d) {
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    d.write_rows(d.map().sbuf + 64, part, src.data(), kHostStride, kRowBytes, kRows);
    rows_time = sc_core::sc_time_stamp() - t0;
    const sc_core::sc_time t1 = sc_core::sc_time_stamp();
    for (std::size_t i = 0; i < kRows; ++i)
      d.write(d.map().sbuf + 8192 + i * part, src.data() + i * kHostStride, kRowBytes);
    single_time = sc_core::sc_time_stamp() - t1;
    d.read_rows(d.map().sbuf + 64, part, back.data(), 200, kRowBytes, kRows);
  });
  EXPECT_EQ(rows_time, single_time);
  EXPECT_EQ(rows_time, vp.platform().sbuf.transfer_time(kRowBytes) * static_cast<double>(kRows));
  EXPECT_GT(rows_time, sc_core::SC_ZERO_TIME);
  const std::uint8_t* sbuf = vp.platform().sbuf.data();
  for (std::size_t i = 0; i < kRows; ++i) {
    for (std::size_t j = 0; j < kRowBytes; ++j) {
      ASSERT_EQ(sbuf[i * part + 64 + j], src[i * kHostStride + j]) << "row " << i << " byte " << j;
      ASSERT_EQ(sbuf[i * part + 8192 + j], src[i * kHostStride + j]);
      ASSERT_EQ(back[i * 200 + j], src[i * kHostStride + j]);
    }
    // Nothing between the rows: the host stride's gap is not copied, the read's gap not written.
    EXPECT_EQ(sbuf[i * part + 64 + kRowBytes], 0);
    EXPECT_EQ(sbuf[i * part + 63], 0);
    EXPECT_EQ(back[i * 200 + kRowBytes], 0xEE);
  }
}

TEST(DriverRows, AFailingRowThrowsAfterTheRowsBeforeIt) {
  platform::PlatformConfig cfg;
  platform::VirtualPlatform vp(cfg);
  const std::size_t part = vp.platform().psum.config().partition_bytes;
  const std::uint64_t psum_end = vp.map().psum + vp.platform().psum.size();
  const std::vector<std::uint8_t> src = pattern(3 * 64, 9);
  std::uint64_t failed_at = 0;
  bool threw = false;
  vp.run([&](platform::Driver& d) {
    // Rows 0 and 1 are the last two PSUM partitions; row 2 is past the PSUM window, where nothing is mapped.
    try {
      d.write_rows(psum_end - 2 * part, part, src.data(), 64, 64, 3);
    } catch (const platform::BusError& e) {
      threw = true;
      failed_at = e.address;
    }
  });
  ASSERT_TRUE(threw);
  EXPECT_EQ(failed_at, psum_end);
  const std::uint8_t* psum = vp.platform().psum.data();
  const std::size_t last = vp.platform().psum.size() - part;
  for (std::size_t j = 0; j < 64; ++j) {
    ASSERT_EQ(psum[last - part + j], src[j]);
    ASSERT_EQ(psum[last + j], src[64 + j]);
  }
}

}  // namespace
