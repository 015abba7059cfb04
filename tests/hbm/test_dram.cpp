// The DRAM target: configuration per generation and its checks, data round trips and every refused transaction
// with memory and channels untouched, b_transport and access() times derived by hand, DMI, the channel observer,
// the sparse backing store (resident memory of a 12 GiB HBM), a mapping failure, and the checkpoint image.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "../memory/mem_helpers.h"
#include "pevp/hbm/dram.h"

namespace {
using namespace pevp::hbm;
using namespace pevp::memory::test;
using pevp::isa::Generation;
using pevp::memory::Direction;
using pevp::memory::TimedAccess;
using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::sc_time;
constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// 1 MiB over 4 channels at 4 GB/s in all (1 byte/ns = 1000 ps per byte per channel), 100 ns latency, 64-byte
// interleave.
DramConfig small() {
  DramConfig c;
  c.name = "test_dram";
  c.bytes = MiB;
  c.channels = 4;
  c.bandwidth_gbps = 4;
  c.latency = sc_time(100, SC_NS);
  c.interleave_bytes = 64;
  return c;
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0, resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return resident_pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

TEST(DramConfig, HbmIsTheCoresShareOfTheChip) {
  // FACTS.md: Trn2 96 GiB, 2.9 TB/s; Trn3 144 GiB, 4.9 TB/s; 8 cores per chip.
  const DramConfig cayman = hbm_config(Generation::CAYMAN);
  EXPECT_EQ(cayman.name, "hbm");
  EXPECT_EQ(cayman.bytes, 12 * GiB);
  EXPECT_DOUBLE_EQ(cayman.bandwidth_gbps, 362.5);
  EXPECT_EQ(cayman.channels, 16u);
  EXPECT_EQ(cayman.interleave_bytes, 256u);
  EXPECT_EQ(cayman.latency, sc_time(100, SC_NS));
  for (Generation g : {Generation::MARIANA, Generation::MARIANA_PLUS, Generation::MAVERICK}) {
    const DramConfig c = hbm_config(g);
    EXPECT_EQ(c.bytes, 18 * GiB) << pevp::isa::name(g);
    EXPECT_DOUBLE_EQ(c.bandwidth_gbps, 612.5) << pevp::isa::name(g);
  }
  for (Generation g : pevp::isa::kAllGenerations) {
    EXPECT_EQ(check_config(hbm_config(g)), "") << pevp::isa::name(g);
    const DramConfig host = host_memory_config(g);
    EXPECT_EQ(host.name, "host_memory");
    EXPECT_EQ(host.bytes, GiB);
    EXPECT_EQ(host.channels, 1u);
    EXPECT_DOUBLE_EQ(host.bandwidth_gbps, 64);
    EXPECT_EQ(host.latency, sc_time(1, sc_core::SC_US));
    EXPECT_EQ(check_config(host), "");
  }
}

TEST(DramConfig, KeysAreTheDocumentedOnes) {
  std::vector<std::string> names;
  for (const auto& p : dram_parameters()) names.emplace_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bytes", "channels", "bandwidth_gbps", "latency_ns", "interleave_bytes"}));
  for (const auto& p : dram_parameters()) {
    if (p.name == "bytes") {
      EXPECT_EQ(p.lo, 4096u);
      EXPECT_EQ(p.hi, 256 * GiB);
      EXPECT_GE(p.hi, 64 * GiB);
    }
    if (p.name == "channels") {
      EXPECT_EQ(std::make_tuple(p.lo, p.hi), std::make_tuple(std::uint64_t{1}, std::uint64_t{64}));
    }
    if (p.name == "bandwidth_gbps") {
      EXPECT_EQ(p.kind, pevp::params::Kind::Real);
      EXPECT_EQ(std::make_tuple(p.lo, p.hi), std::make_tuple(std::uint64_t{1}, std::uint64_t{100000}));
    }
  }
}

TEST(DramConfig, UnusableConfigsNameTheKeyAndTheRule) {
  DramConfig c = small();
  c.bytes = MiB + 1000;  // 4 channels x 64 bytes = 256 does not divide it
  EXPECT_EQ(check_config(c),
            "bytes (1049576) must be a multiple of channels x interleave_bytes (4 x 64 = 256), so every channel holds "
            "the same capacity");
  c = small();
  c.bytes = 0;
  EXPECT_EQ(check_config(c), "bytes (0) must be in [4096, 274877906944]");
  c.bytes = 2048;
  EXPECT_EQ(check_config(c), "bytes (2048) must be in [4096, 274877906944]");
  c.bytes = 512 * GiB;
  EXPECT_EQ(check_config(c), "bytes (549755813888) must be in [4096, 274877906944]");
  c = small();
  c.channels = 0;
  EXPECT_EQ(check_config(c), "channels (0) must be in [1, 64]");
  c.channels = 65;
  EXPECT_EQ(check_config(c), "channels (65) must be in [1, 64]");
  c = small();
  c.bandwidth_gbps = 0.5;
  EXPECT_EQ(check_config(c), "bandwidth_gbps (0.5) must be in [1, 100000] GB/s");
  c.bandwidth_gbps = std::nan("");
  EXPECT_NE(check_config(c).find("bandwidth_gbps (nan) must be in"), std::string::npos) << check_config(c);
  c = small();
  c.latency = sc_time(2, sc_core::SC_MS);
  EXPECT_EQ(check_config(c), "latency_ns (2000000) must be at most 1000000 ns");
  c.latency = sc_time(1, sc_core::SC_MS);
  EXPECT_EQ(check_config(c), "");
  c = small();
  c.interleave_bytes = 100;
  EXPECT_EQ(check_config(c), "interleave_bytes (100) must be a power of two in [1, 1048576]");
  c.interleave_bytes = 2 * 1048576;
  EXPECT_EQ(check_config(c), "interleave_bytes (2097152) must be a power of two in [1, 1048576]");
  c.interleave_bytes = 0;
  EXPECT_NE(check_config(c), "");
  EXPECT_EQ(check_config(small()), "");
}

TEST(DramConfig, EveryKeysBoundsHoldWithTheOthersAtTheirDefaults) {
  // The configuration checks each key at the ends of its range with the rest of the section at its defaults; the
  // memory-wide rule (bytes a multiple of channels x interleave_bytes) must not refuse an end.
  for (const DramConfig& base : {hbm_config(Generation::CAYMAN), hbm_config(Generation::MARIANA),
                                 host_memory_config(Generation::CAYMAN)}) {
    for (const auto& p : dram_parameters()) {
      if (p.kind != pevp::params::Kind::Count) continue;
      for (const std::uint64_t v : {p.lo, p.hi}) {
        DramConfig c = base;
        if (const auto* wide = std::get_if<std::uint64_t DramConfig::*>(&p.member)) c.*(*wide) = v;
        else c.*std::get<unsigned DramConfig::*>(p.member) = static_cast<unsigned>(v);
        EXPECT_EQ(check_config(c), "") << base.name << "." << p.name << " = " << v;
      }
    }
  }
}

TEST(DramConfig, ConstructionRefusesAnUnusableConfig) {
  DramConfig c = small();
  c.channels = 3;  // 3 x 64 = 192 does not divide 1 MiB
  try {
    Dram d("bad_dram", c);
    FAIL() << "constructed";
  } catch (const sc_core::sc_report& r) {
    EXPECT_STREQ(r.get_msg_type(), "/pevp/test_dram/config");
    EXPECT_NE(std::string(r.get_msg()).find("multiple of channels x interleave_bytes (3 x 64 = 192)"),
              std::string::npos)
        << r.get_msg();
  }
}

TEST(Dram, DataRoundTripsAndTimeIsTheChannelModels) {
  Dram d("dram_rt", small());
  // A write of 64 bytes at 0 at time 0: channel 0 for 64 x 1000 ps, then 100 ns -> 164 ns.
  const Result w = write(d.socket, 0, std::vector<unsigned char>(64, 0x5A));
  EXPECT_EQ(w.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(w.delay, sc_time(164, SC_NS));
  EXPECT_TRUE(w.dmi_allowed);
  // Read it back, also presented at time 0: channel 0 is busy until 64 ns, serves it until 128 ns, + 100 ns.
  tlm::tlm_generic_payload trans;
  std::vector<unsigned char> back(64, 0);
  trans.set_command(tlm::TLM_READ_COMMAND);
  trans.set_address(0);
  trans.set_data_ptr(back.data());
  trans.set_data_length(64);
  trans.set_streaming_width(64);
  sc_time delay = sc_core::SC_ZERO_TIME;
  d.socket.get_base_export()->b_transport(trans, delay);
  EXPECT_EQ(trans.get_response_status(), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(delay, sc_time(228, SC_NS));
  EXPECT_EQ(back, std::vector<unsigned char>(64, 0x5A));
  EXPECT_EQ(d.data()[63], 0x5A);
  EXPECT_EQ(d.data()[64], 0);
  EXPECT_EQ(d.channel_stats()[0].bytes_written, 64u);
  EXPECT_EQ(d.channel_stats()[0].bytes_read, 64u);
  EXPECT_EQ(d.requester_stats().at(kBusRequester).bytes_read, 64u);
  EXPECT_EQ(d.errors(), 0u);
}

TEST(Dram, AnnotatedDelayIsWhereTheAccessStarts) {
  Dram d("dram_delay", small());
  // Presented at 0 + 500 ns (the initiator's local time): channel 1 idle, 64 B -> +64 ns +100 ns of delay.
  std::vector<unsigned char> bytes(64, 1);
  tlm::tlm_generic_payload trans;
  trans.set_command(tlm::TLM_WRITE_COMMAND);
  trans.set_address(64);
  trans.set_data_ptr(bytes.data());
  trans.set_data_length(64);
  trans.set_streaming_width(64);
  sc_time delay(500, SC_NS);
  d.socket.get_base_export()->b_transport(trans, delay);
  EXPECT_EQ(delay, sc_time(664, SC_NS));
  // The channel was booked from 500 ns: a DMA asking access() for channel 1 at 0 waits until 564 ns.
  EXPECT_EQ(d.access({64, 64, Direction::Read, sc_time(0, SC_NS), 3}), sc_time(728, SC_NS));
}

TEST(Dram, TheDocumentedWorkedExample) {
  // docs/memory-system.md: 1 MiB read from address 0 of CAYMAN's HBM at time 0. 256-byte interleave over 16
  // channels gives each channel 1 MiB / 16 = 65536 bytes; a channel moves 362.5 / 16 = 22.65625 bytes/ns, so
  // 65536 / 22.65625 = 2892.623448 ns -> 2892624 ps; + 100 ns latency = 2992624 ps.
  Dram hbm("hbm_example", hbm_config(Generation::CAYMAN));
  EXPECT_EQ(hbm.access({0, MiB, Direction::Read, sc_core::SC_ZERO_TIME, 0}), sc_time(2992624, SC_PS));
  // The same from the host's memory: one channel at 64 bytes/ns, 1048576 / 64 = 16384 ns, + 1 us = 17384 ns.
  DramConfig host_config = host_memory_config(Generation::CAYMAN);
  host_config.bytes = 64 * MiB;  // the timing does not depend on the capacity
  Dram host("host_example", host_config);
  EXPECT_EQ(host.access({0, MiB, Direction::Read, sc_core::SC_ZERO_TIME, 0}), sc_time(17384, SC_NS));
}

TEST(Dram, RefusedTransactionsTouchNothing) {
  Dram d("dram_refuse", small());
  const auto unchanged = [&d] {
    for (unsigned c = 0; c < 4; ++c) EXPECT_EQ(d.channel_stats()[c], ChannelStats{}) << "channel " << c;
    EXPECT_TRUE(d.requester_stats().empty());
  };
  // Straddling the end: 8 bytes at size - 4.
  EXPECT_EQ(write(d.socket, MiB - 4, std::vector<unsigned char>(8, 0xFF)).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  for (std::uint64_t a = MiB - 4; a < MiB; ++a) EXPECT_EQ(d.data()[a], 0) << "byte " << a;
  // Wholly past the end, and at the last address + 1.
  EXPECT_EQ(write(d.socket, MiB, {1}).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(write(d.socket, std::numeric_limits<sc_dt::uint64>::max(), {1}).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  tlm::tlm_response_status status;
  read(d.socket, MiB - 1, 2, &status);
  EXPECT_EQ(status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  // Streaming, byte enables, an empty transaction and a null data pointer.
  std::vector<unsigned char> bytes(16, 0x11);
  EXPECT_EQ(transport(d.socket, {tlm::TLM_WRITE_COMMAND, 0, &bytes, 0, 4}).status, tlm::TLM_BURST_ERROR_RESPONSE);
  EXPECT_EQ(write(d.socket, 0, bytes, {TLM_BYTE_ENABLED, 0x01}).status, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  {
    tlm::tlm_generic_payload trans;  // enables given, but of length 0
    unsigned char enable = TLM_BYTE_ENABLED;
    trans.set_command(tlm::TLM_WRITE_COMMAND);
    trans.set_data_ptr(bytes.data());
    trans.set_data_length(16);
    trans.set_streaming_width(16);
    trans.set_byte_enable_ptr(&enable);
    trans.set_byte_enable_length(0);
    sc_time delay = sc_core::SC_ZERO_TIME;
    d.socket.get_base_export()->b_transport(trans, delay);
    EXPECT_EQ(trans.get_response_status(), tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  }
  EXPECT_EQ(transport(d.socket, {tlm::TLM_WRITE_COMMAND, 0, nullptr, 0}).status, tlm::TLM_BURST_ERROR_RESPONSE);
  EXPECT_EQ(transport(d.socket, {tlm::TLM_WRITE_COMMAND, 0, nullptr, 16}).status, tlm::TLM_GENERIC_ERROR_RESPONSE);
  for (std::uint64_t a = 0; a < 16; ++a) EXPECT_EQ(d.data()[a], 0) << "byte " << a;
  // A refused access costs the round trip, nothing more.
  EXPECT_EQ(write(d.socket, MiB, {1}).delay, sc_time(100, SC_NS));
  EXPECT_EQ(d.errors(), 10u);
  unchanged();
  // An ignore command in range succeeds and moves nothing.
  EXPECT_EQ(transport(d.socket, {tlm::TLM_IGNORE_COMMAND, 0, &bytes}).status, tlm::TLM_OK_RESPONSE);
  unchanged();
}

TEST(Dram, ByteEnablesRepeatAndLeaveDisabledBytesAlone) {
  Dram d("dram_be", small());
  ASSERT_EQ(write(d.socket, 0, std::vector<unsigned char>(6, 0x11)).status, tlm::TLM_OK_RESPONSE);
  // Enables {on, off} repeat over the 6 bytes: bytes 0, 2, 4 written.
  ASSERT_EQ(write(d.socket, 0, std::vector<unsigned char>(6, 0x22), {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED}).status,
            tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(std::vector<unsigned char>(d.data(), d.data() + 6),
            (std::vector<unsigned char>{0x22, 0x11, 0x22, 0x11, 0x22, 0x11}));
  // A masked read keeps the initiator's bytes where disabled.
  std::vector<unsigned char> into(4, 0xEE);
  ASSERT_EQ(transport(d.socket, {tlm::TLM_READ_COMMAND, 0, &into, 0, 0, {TLM_BYTE_DISABLED, TLM_BYTE_ENABLED}}).status,
            tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(into, (std::vector<unsigned char>{0xEE, 0x11, 0xEE, 0x11}));
}

TEST(Dram, AccessOutsideTheMemoryIsAnError) {
  Dram d("dram_access_range", small());
  try {
    d.access({MiB - 8, 16, Direction::Read, sc_core::SC_ZERO_TIME, 0});
    FAIL() << "accepted";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "/pevp/test_dram: access at 0xffff8 of 16 bytes ends past the memory's 1048576 bytes");
  }
  EXPECT_THROW(d.access({std::numeric_limits<std::uint64_t>::max(), 2, Direction::Read, sc_core::SC_ZERO_TIME, 0}),
               std::out_of_range);
  EXPECT_EQ(d.channel_stats()[0], ChannelStats{});
  // The whole memory is one legal access: 1 MiB / 4 channels = 256 KiB each at 1000 ps a byte, + 100 ns.
  EXPECT_EQ(d.access({0, MiB, Direction::Read, sc_core::SC_ZERO_TIME, 0}), sc_time(262144000 + 100000, SC_PS));
}

TEST(Dram, DmiGrantsTheWholeMemory) {
  Dram d("dram_dmi", small());
  tlm::tlm_generic_payload trans;
  tlm::tlm_dmi dmi;
  trans.set_address(4096);
  ASSERT_TRUE(d.socket.get_base_export()->get_direct_mem_ptr(trans, dmi));
  EXPECT_EQ(dmi.get_dmi_ptr(), d.data());
  EXPECT_EQ(dmi.get_start_address(), 0u);
  EXPECT_EQ(dmi.get_end_address(), MiB - 1);
  EXPECT_TRUE(dmi.is_read_write_allowed());
  EXPECT_EQ(dmi.get_read_latency(), sc_time(100, SC_NS));
  dmi.get_dmi_ptr()[MiB - 1] = 0x42;
  EXPECT_EQ(read(d.socket, MiB - 1, 1), std::vector<unsigned char>{0x42});
  // Above the memory: denied to the top of the address space.
  tlm::tlm_dmi none;
  trans.set_address(MiB);
  EXPECT_FALSE(d.socket.get_base_export()->get_direct_mem_ptr(trans, none));
  EXPECT_EQ(none.get_start_address(), MiB);
  EXPECT_EQ(none.get_end_address(), std::numeric_limits<sc_dt::uint64>::max());
}

TEST(Dram, DebugTransportCopiesWithoutTime) {
  Dram d("dram_dbg", small());
  std::vector<unsigned char> bytes{1, 2, 3, 4};
  tlm::tlm_generic_payload trans;
  trans.set_command(tlm::TLM_WRITE_COMMAND);
  trans.set_address(MiB - 2);
  trans.set_data_ptr(bytes.data());
  trans.set_data_length(4);
  EXPECT_EQ(d.socket.get_base_export()->transport_dbg(trans), 2u) << "clipped at the end";
  EXPECT_EQ(d.data()[MiB - 1], 2);
  trans.set_address(MiB);
  EXPECT_EQ(d.socket.get_base_export()->transport_dbg(trans), 0u);
  EXPECT_EQ(d.channel_stats()[0], ChannelStats{});
}

TEST(Dram, ObserverSeesEachChannelsInterval) {
  Dram d("dram_observer", small());
  struct Seen {
    unsigned channel;
    sc_time start, end;
    std::uint64_t bytes;
    Direction direction;
  };
  std::vector<Seen> seen;
  d.channel_observer = [&seen](unsigned c, sc_time s, sc_time e, std::uint64_t b, Direction dir) {
    seen.push_back({c, s, e, b, dir});
  };
  // 128 bytes at 32 from 10 ns: [32,64) 32 B ch0, [64,128) 64 B ch1, [128,160) 32 B ch2.
  EXPECT_EQ(d.access({32, 128, Direction::Write, sc_time(10, SC_NS), 1}), sc_time(10 + 64 + 100, SC_NS));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].channel, 0u);
  EXPECT_EQ(seen[0].start, sc_time(10, SC_NS));
  EXPECT_EQ(seen[0].end, sc_time(42, SC_NS));
  EXPECT_EQ(seen[0].bytes, 32u);
  EXPECT_EQ(seen[1].channel, 1u);
  EXPECT_EQ(seen[1].end, sc_time(74, SC_NS));
  EXPECT_EQ(seen[2].channel, 2u);
  EXPECT_EQ(seen[2].bytes, 32u);
  EXPECT_EQ(seen[2].direction, Direction::Write);
  // A bus write books through the same observer: 64 bytes at 192 (ch3, idle) presented at time 0.
  ASSERT_EQ(write(d.socket, 192, std::vector<unsigned char>(64, 7)).status, tlm::TLM_OK_RESPONSE);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[3].channel, 3u);
  EXPECT_EQ(seen[3].start, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(seen[3].end, sc_time(64, SC_NS));
  EXPECT_EQ(seen[3].direction, Direction::Write);
  d.channel_observer = nullptr;
  d.access({0, 64, Direction::Read, sc_core::SC_ZERO_TIME, 1});
  EXPECT_EQ(seen.size(), 4u);
}

// The VmFlags line of the mapping that holds `p` in /proc/self/smaps ("rd wr mr mw me nr ...").
std::string mapping_flags(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return "";
}

TEST(Dram, ATwelveGibHbmCostsOnlyThePagesTouched) {
  const std::uint64_t before = resident_bytes();
  Dram hbm("hbm_sparse", hbm_config(Generation::CAYMAN));
  ASSERT_EQ(hbm.size(), 12 * GiB);
  // Mapped without a swap reservation (MAP_NORESERVE: "nr") and kept off huge pages ("nh", not "hg"), where one
  // touched byte would commit 2 MiB.
  const std::string flags = mapping_flags(hbm.data());
  EXPECT_NE(flags.find(" nr "), std::string::npos) << flags;
  EXPECT_NE(flags.find(" nh "), std::string::npos) << flags;
  EXPECT_EQ(flags.find(" hg "), std::string::npos) << flags;
  const std::uint64_t built = resident_bytes();
  EXPECT_LT(built, before + 16 * MiB) << "constructing committed " << (built - before) / MiB << " MiB";
  // Untouched bytes read zero anywhere, the last one included.
  EXPECT_EQ(hbm.data()[12 * GiB - 1], 0);
  EXPECT_EQ(read(hbm.socket, 6 * GiB, 8), std::vector<unsigned char>(8, 0));
  // A write every GiB commits a page each, not the GiB.
  for (std::uint64_t g = 0; g < 12; ++g) hbm.data()[g * GiB + 12345] = static_cast<std::uint8_t>(g + 1);
  // A timing-only pass over the whole memory moves no data.
  hbm.access({0, 12 * GiB, Direction::Read, sc_core::SC_ZERO_TIME, 0});
  const std::uint64_t after = resident_bytes();
  EXPECT_LT(after, before + 16 * MiB) << "touching 12 pages committed " << (after - before) / MiB << " MiB";
  EXPECT_EQ(hbm.data()[5 * GiB + 12345], 6);
  // The checkpoint image holds exactly the 12 written pages, found without touching the rest.
  const PageImage image = hbm.export_pages();
  ASSERT_EQ(image.size(), 12u);
  for (std::uint64_t g = 0; g < 12; ++g)
    EXPECT_EQ(image[g].first, (g * GiB + 12345) / kImagePageBytes * kImagePageBytes);
  EXPECT_LT(resident_bytes(), before + 16 * MiB);
}

TEST(Dram, AMappingFailureIsReportedNotACrash) {
  // Cap the address space a little above what the process maps now: a 64 GiB memory cannot be mapped.
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0;
  statm >> size_pages;
  const std::uint64_t mapped = size_pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  rlimit capped = old;
  capped.rlim_cur = mapped + 512 * MiB;
  ASSERT_EQ(setrlimit(RLIMIT_AS, &capped), 0);
  DramConfig c = small();
  c.name = "big_dram";
  c.bytes = 64 * GiB;
  std::string type, message;
  try {
    Dram d("dram_unmappable", c);
  } catch (const sc_core::sc_report& r) {
    type = r.get_msg_type();
    message = r.get_msg();
  } catch (const std::exception& e) {
    message = e.what();
  }
  ASSERT_EQ(setrlimit(RLIMIT_AS, &old), 0);
  EXPECT_EQ(type, "/pevp/big_dram/mapping");
  EXPECT_NE(message.find("cannot map 68719476736 bytes (65536 MiB) of address space"), std::string::npos) << message;
}

TEST(Dram, CheckpointImageHoldsTheWrittenPages) {
  Dram a("dram_image_a", small());
  a.data()[5] = 1;
  a.data()[3 * kImagePageBytes + 100] = 2;
  a.data()[MiB - 1] = 3;
  a.data()[7 * kImagePageBytes] = 0;  // touched, but zero: not in the image
  a.data()[9 * kImagePageBytes + 1] = 9;
  a.data()[9 * kImagePageBytes + 1] = 0;  // written and cleared again: zero, not in the image
  const PageImage image = a.export_pages();
  ASSERT_EQ(image.size(), 3u);
  EXPECT_EQ(image[0].first, 0u);
  EXPECT_EQ(image[0].second.size(), kImagePageBytes);
  EXPECT_EQ(image[0].second[5], 1);
  EXPECT_EQ(image[1].first, 3 * kImagePageBytes);
  EXPECT_EQ(image[1].second[100], 2);
  EXPECT_EQ(image[2].first, MiB - kImagePageBytes);
  EXPECT_EQ(image[2].second.back(), 3);

  Dram b("dram_image_b", small());
  b.data()[20 * kImagePageBytes] = 0x77;  // not in the image: zero after the import
  ASSERT_EQ(b.import_pages(image), "");
  EXPECT_EQ(b.data()[20 * kImagePageBytes], 0);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), MiB), 0);
  EXPECT_EQ(b.export_pages(), image);
}

TEST(Dram, ForeignImagesAreRefusedWithNothingChanged) {
  Dram d("dram_image_bad", small());
  d.data()[10] = 0x33;
  const std::vector<std::uint8_t> page(kImagePageBytes, 1);
  EXPECT_EQ(d.import_pages({{100, page}}), "page 0 at 0x64: offset not a multiple of 4096");
  EXPECT_EQ(d.import_pages({{0, page}, {MiB, page}}), "page 1 at 0x100000: past the memory's 1048576 bytes");
  EXPECT_EQ(d.import_pages({{8192, page}, {4096, page}}), "page 1 at 0x1000: offsets must ascend without repeating");
  EXPECT_EQ(d.import_pages({{4096, page}, {4096, page}}), "page 1 at 0x1000: offsets must ascend without repeating");
  EXPECT_EQ(d.import_pages({{0, std::vector<std::uint8_t>(10, 1)}}), "page 0 at 0x0: 10 bytes, expected 4096");
  EXPECT_EQ(d.data()[10], 0x33);
  EXPECT_EQ(d.data()[4096], 0);
}

TEST(Dram, TimingStateRestores) {
  Dram a("dram_state_a", small());
  a.access({0, 4096, Direction::Write, sc_time(1, SC_NS), 2});
  Dram b("dram_state_b", small());
  ASSERT_EQ(b.restore_timing(a.timing_state()), "");
  EXPECT_EQ(b.requester_stats().at(2).bytes_written, 4096u);
  EXPECT_EQ(b.access({0, 64, Direction::Read, sc_core::SC_ZERO_TIME, 1}),
            a.access({0, 64, Direction::Read, sc_core::SC_ZERO_TIME, 1}));
  DramConfig other = small();
  other.channels = 8;
  Dram c("dram_state_c", other);
  EXPECT_EQ(c.restore_timing(a.timing_state()), "free times for 4 channels, the memory has 8");
}

}  // namespace
