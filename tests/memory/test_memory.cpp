// The SBUF/PSUM TLM target: sizes per generation, round trips, byte enables,
// every error status with the memory unchanged, both DMI edges, transport_dbg.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>

#include "mem_helpers.h"
#include "pevp/memory/memory.h"

namespace {
using namespace pevp::memory;
using namespace pevp::memory::test;
using pevp::isa::Generation;
using sc_core::SC_NS;
using sc_core::sc_time;
constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;

// 4 partitions x 256 bytes, 10 ns per transaction + 1 ns per 64-byte beat.
MemoryConfig small() {
  MemoryConfig c;
  c.name = "test";
  c.partitions = 4;
  c.partition_bytes = 256;
  c.access_latency = sc_time(10, SC_NS);
  c.beat_latency = sc_time(1, SC_NS);
  c.beat_bytes = 64;
  return c;
}

TEST(MemoryConfig, SizesPerGeneration) {
  EXPECT_EQ(sbuf_config(Generation::CAYMAN).size(), 28 * MiB);
  EXPECT_EQ(sbuf_config(Generation::CAYMAN).partition_bytes, 224 * KiB);
  EXPECT_EQ(sbuf_config(Generation::MARIANA).size(), 32 * MiB);
  EXPECT_EQ(sbuf_config(Generation::MARIANA_PLUS).size(), 32 * MiB);
  for (Generation g : pevp::isa::kAllGenerations) {
    const MemoryConfig p = psum_config(g);
    EXPECT_EQ(p.size(), 2 * MiB);
    EXPECT_EQ(p.partitions, 128u);
    EXPECT_EQ(p.partition_bytes, 16 * KiB);
    EXPECT_EQ(p.bank_bytes, 2 * KiB);
    EXPECT_EQ(p.partition_bytes / p.bank_bytes, 8u);
    EXPECT_EQ(p.name, "psum");
    EXPECT_EQ(check_config(p), "");
    EXPECT_EQ(check_config(sbuf_config(g)), "");
  }
  Memory sbuf("sbuf", sbuf_config(Generation::CAYMAN));
  ASSERT_EQ(sbuf.size(), 28 * MiB);
  EXPECT_EQ(sbuf.data()[0], 0);
  EXPECT_EQ(sbuf.data()[28 * MiB - 1], 0) << "zero-initialised to the last byte";
  EXPECT_EQ(sbuf.local_address(127, 224 * KiB - 1), 28 * MiB - 1);
}

TEST(MemoryConfig, RejectsUnusableConfigs) {
  MemoryConfig c = small();
  c.partition_bytes = 0;
  EXPECT_NE(check_config(c), "");
  c = small();
  c.bank_bytes = 100;  // does not divide 256
  EXPECT_NE(check_config(c).find("bank_bytes"), std::string::npos);
  c = small();
  c.beat_bytes = 0;
  EXPECT_NE(check_config(c), "");
}

TEST(Memory, RoundTripAndLatency) {
  Memory m("m", small());
  std::vector<unsigned char> data(16);
  for (unsigned i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(0xA0 + i);
  const std::uint64_t a = m.local_address(1, 8);  // 264
  const Result w = write(m.socket, a, data);
  EXPECT_EQ(w.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(w.delay, sc_time(11, SC_NS)) << "10 ns + one 64-byte beat";
  EXPECT_TRUE(w.dmi_allowed);
  tlm::tlm_response_status st{};
  EXPECT_EQ(read(m.socket, a, 16, &st), data);
  EXPECT_EQ(st, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(m.data()[264], 0xA0);
  EXPECT_EQ(m.data()[279], 0xAF);
  EXPECT_EQ(m.data()[263], 0);
  EXPECT_EQ(m.data()[280], 0);
  // 130 bytes start 3 beats: 10 + 3 x 1 ns.
  EXPECT_EQ(write(m.socket, 0, std::vector<unsigned char>(130, 7)).delay, sc_time(13, SC_NS));
  // The whole memory in one transaction, first byte to last.
  std::vector<unsigned char> all(1024);
  for (unsigned i = 0; i < all.size(); ++i) all[i] = static_cast<unsigned char>(i * 7);
  EXPECT_EQ(write(m.socket, 0, all).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(read(m.socket, 0, 1024), all);
  EXPECT_EQ(m.errors(), 0u);
}

TEST(Memory, ByteEnablesRepeatModuloTheirLength) {
  Memory m("m", small());
  EXPECT_EQ(write(m.socket, 100, {1, 2, 3, 4, 5, 6}, {0xFF, 0x00}).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(read(m.socket, 100, 6), (std::vector<unsigned char>{1, 0, 3, 0, 5, 0}));
  // Three enables over seven bytes: pattern 0,1,2,0,1,2,0.
  EXPECT_EQ(write(m.socket, 200, {9, 9, 9, 9, 9, 9, 9}, {0x00, 0x00, 0xFF}).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(read(m.socket, 200, 7), (std::vector<unsigned char>{0, 0, 9, 0, 0, 9, 0}));
  // A read leaves the initiator's disabled bytes alone.
  std::vector<unsigned char> buf(4, 0xEE);
  EXPECT_EQ(transport(m.socket, {tlm::TLM_READ_COMMAND, 100, &buf, 0, 0, {0x00, 0xFF}}).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(buf, (std::vector<unsigned char>{0xEE, 0, 0xEE, 0}));
  // More enables than bytes: only the first `length` count.
  EXPECT_EQ(write(m.socket, 0, {4, 4}, {0xFF, 0x00, 0x00, 0xFF}).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(read(m.socket, 0, 2), (std::vector<unsigned char>{4, 0}));
}

TEST(Memory, EveryErrorStatusChangesNothing) {
  Memory m("m", small());
  for (std::size_t i = 0; i < m.size(); ++i) m.data()[i] = static_cast<unsigned char>(i ^ 0x5A);
  const std::vector<unsigned char> before(m.data(), m.data() + m.size());
  std::vector<unsigned char> four(4, 0x11);
  const auto wr = [&](Txn t) {
    t.cmd = tlm::TLM_WRITE_COMMAND;
    if (!t.data) t.data = &four;
    return transport(m.socket, t);
  };
  const sc_time access(10, SC_NS);
  struct Case {
    const char* what;
    Txn txn;
    tlm::tlm_response_status want;
  };
  const Case cases[] = {
      {"address = size", {tlm::TLM_WRITE_COMMAND, 1024}, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"far past the end", {tlm::TLM_WRITE_COMMAND, 0x2000000}, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"length runs past the last byte", {tlm::TLM_WRITE_COMMAND, 1021}, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"streaming width < length", {tlm::TLM_WRITE_COMMAND, 0, nullptr, 0, 2}, tlm::TLM_BURST_ERROR_RESPONSE},
      {"byte enable not 0x00/0xFF", {tlm::TLM_WRITE_COMMAND, 0, nullptr, 0, 0, {0xFF, 0x12}},
       tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE},
  };
  std::uint64_t errors = 0;
  for (const Case& c : cases) {
    const Result r = wr(c.txn);
    EXPECT_EQ(r.status, c.want) << c.what;
    EXPECT_EQ(r.delay, access) << c.what << ": an error costs the access latency only";
    EXPECT_FALSE(r.dmi_allowed) << c.what;
    EXPECT_EQ(m.errors(), ++errors) << c.what;
  }
  // Zero length: a burst error (TLM-2.0 requires length > 0).
  std::vector<unsigned char> none;
  EXPECT_EQ(wr({tlm::TLM_WRITE_COMMAND, 0, &none}).status, tlm::TLM_BURST_ERROR_RESPONSE);
  // Read past the end: the initiator's buffer is untouched too.
  tlm::tlm_response_status st{};
  EXPECT_EQ(read(m.socket, 1022, 4, &st), std::vector<unsigned char>(4, 0xEE));
  EXPECT_EQ(st, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  // Byte-enable pointer with length 0, and a null data pointer: built by hand.
  {
    tlm::tlm_generic_payload t;
    unsigned char be = 0xFF;
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(0);
    t.set_data_ptr(four.data());
    t.set_data_length(4);
    t.set_streaming_width(4);
    t.set_byte_enable_ptr(&be);
    t.set_byte_enable_length(0);
    sc_time d = sc_core::SC_ZERO_TIME;
    m.socket.get_base_export()->b_transport(t, d);
    EXPECT_EQ(t.get_response_status(), tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    t.set_byte_enable_ptr(nullptr);
    t.set_data_ptr(nullptr);
    m.socket.get_base_export()->b_transport(t, d);
    EXPECT_EQ(t.get_response_status(), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(d, sc_time(20, SC_NS)) << "delay is added to, never assigned";
  }
  EXPECT_EQ(m.errors(), errors + 4);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), m.data())) << "no error changed memory";
  // TLM_IGNORE_COMMAND inside the memory is OK and changes nothing; outside it is an address error.
  EXPECT_EQ(transport(m.socket, {tlm::TLM_IGNORE_COMMAND, 4, &four}).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(transport(m.socket, {tlm::TLM_IGNORE_COMMAND, 1024, &four}).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), m.data()));
}

TEST(Memory, DmiGrantsEverythingAndBothEdgesWork) {
  Memory m("m", small());
  tlm::tlm_generic_payload t;
  tlm::tlm_dmi dmi;
  for (sc_dt::uint64 a : {sc_dt::uint64{0}, sc_dt::uint64{1023}}) {
    t.set_address(a);
    t.set_command(tlm::TLM_READ_COMMAND);
    dmi.init();
    ASSERT_TRUE(m.socket.get_base_export()->get_direct_mem_ptr(t, dmi)) << a;
    EXPECT_EQ(dmi.get_dmi_ptr(), m.data());
    EXPECT_EQ(dmi.get_start_address(), 0u);
    EXPECT_EQ(dmi.get_end_address(), 1023u) << "inclusive: size - 1";
    EXPECT_TRUE(dmi.is_read_write_allowed());
    EXPECT_EQ(dmi.get_read_latency(), sc_time(11, SC_NS));
    EXPECT_EQ(dmi.get_write_latency(), sc_time(11, SC_NS));
  }
  // First and last byte through the DMI pointer, seen by b_transport.
  dmi.get_dmi_ptr()[0] = 0x12;
  dmi.get_dmi_ptr()[dmi.get_end_address()] = 0x34;
  EXPECT_EQ(read(m.socket, 0, 1), std::vector<unsigned char>{0x12});
  EXPECT_EQ(read(m.socket, 1023, 1), std::vector<unsigned char>{0x34});
  // And b_transport writes are seen through DMI.
  write(m.socket, 1023, {0x56});
  EXPECT_EQ(dmi.get_dmi_ptr()[1023], 0x56);
  // One past the end: refused, the denied range starts at size.
  t.set_address(1024);
  dmi.init();
  EXPECT_FALSE(m.socket.get_base_export()->get_direct_mem_ptr(t, dmi));
  EXPECT_EQ(dmi.get_granted_access(), tlm::tlm_dmi::DMI_ACCESS_NONE);
  EXPECT_EQ(dmi.get_start_address(), 1024u);
  tlm::tlm_response_status st{};
  read(m.socket, 1023, 2, &st);
  EXPECT_EQ(st, tlm::TLM_ADDRESS_ERROR_RESPONSE) << "the last byte plus one is refused by b_transport too";
}

TEST(Memory, DmaSocketAndTimedTargetShareTheArrayAndTheLatencyModel) {
  Memory m("m", small());
  // The DMA engines' port: the same bytes and the same DMI grant as the system-bus socket.
  write(m.dma_socket, 100, {0xAB, 0xCD});
  EXPECT_EQ(m.data()[100], 0xAB);
  EXPECT_EQ(read(m.socket, 101, 1), std::vector<unsigned char>{0xCD});
  tlm::tlm_generic_payload t;
  tlm::tlm_dmi dmi;
  t.set_address(0);
  t.set_command(tlm::TLM_READ_COMMAND);
  ASSERT_TRUE(m.dma_socket.get_base_export()->get_direct_mem_ptr(t, dmi));
  EXPECT_EQ(dmi.get_dmi_ptr(), m.data());
  EXPECT_EQ(dmi.get_end_address(), 1023u);
  // TimedTarget: start + 10 ns + 1 ns per started 64-byte beat, whatever came before (nothing is booked).
  TimedTarget& timed = m;
  EXPECT_EQ(timed.access({0, 64, Direction::Read, sc_time(100, SC_NS), 0}), sc_time(111, SC_NS));
  EXPECT_EQ(timed.access({0, 65, Direction::Write, sc_time(100, SC_NS), 1}), sc_time(112, SC_NS));
  EXPECT_EQ(timed.access({512, 256, Direction::Read, sc_time(5, SC_NS), 2}), sc_time(19, SC_NS));
  EXPECT_EQ(m.data()[0], 0) << "a timed access moves no data";
}

TEST(Memory, TransportDbgCopiesWhatFits) {
  Memory m("m", small());
  std::vector<unsigned char> buf{1, 2, 3, 4, 5, 6, 7, 8};
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_WRITE_COMMAND);
  t.set_address(1020);
  t.set_data_ptr(buf.data());
  t.set_data_length(8);
  EXPECT_EQ(m.socket.get_base_export()->transport_dbg(t), 4u) << "1020..1023 fit";
  EXPECT_EQ(m.data()[1020], 1);
  EXPECT_EQ(m.data()[1023], 4);
  std::vector<unsigned char> out(8, 0);
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_data_ptr(out.data());
  t.set_address(1016);
  EXPECT_EQ(m.socket.get_base_export()->transport_dbg(t), 8u);
  EXPECT_EQ(out, (std::vector<unsigned char>{0, 0, 0, 0, 1, 2, 3, 4}));
  t.set_address(1024);
  EXPECT_EQ(m.socket.get_base_export()->transport_dbg(t), 0u);
  EXPECT_EQ(m.errors(), 0u) << "debug accesses are not bus errors";
}

// Elaborated: a bound initiator thread uses b_transport then DMI, honouring the delays.
struct Driver : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Driver> socket{"socket"};
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  unsigned char via_dmi = 0;
  SC_CTOR(Driver) { SC_THREAD(run); }
  void run() {
    std::uint32_t word = 0xCAFEF00D;
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(0x2000);  // PSUM partition 0 bank 4
    t.set_data_ptr(reinterpret_cast<unsigned char*>(&word));
    t.set_data_length(4);
    t.set_streaming_width(4);
    sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, delay);
    status = t.get_response_status();
    wait(delay);
    tlm::tlm_dmi dmi;
    if (t.is_dmi_allowed() && socket->get_direct_mem_ptr(t, dmi)) {
      via_dmi = dmi.get_dmi_ptr()[0x2000];
      wait(dmi.get_read_latency());
    }
  }
};

TEST(MemoryElaboration, DriverThreadThroughBoundSockets) {
  Memory psum("psum", psum_config(Generation::CAYMAN));
  Driver driver("driver");
  driver.socket.bind(psum.socket);
  sc_core::sc_start();
  EXPECT_EQ(driver.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(driver.via_dmi, 0x0D) << "little-endian host word, low byte first";
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(22, SC_NS)) << "b_transport 11 ns + DMI read 11 ns (defaults)";
}

}  // namespace
