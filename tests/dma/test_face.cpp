// The DMA register face (dma.json + the doorbell window) driven as a driver would: program a ring through the
// registers, ring a queue with one store, wait for the interrupt, read the counters and the error record; every bus
// error of the doorbell window; queue_sel past the last queue; the ring latched while enabled; the reset pulse.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>

#include "dma_bench.h"
#include "dma_regs.h"

namespace {
using namespace pevp::dma;
using namespace pevp::dma::test;
namespace off = pevp::regs::dma::offsets;

struct Driver : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Driver> socket;
  explicit Driver(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {}

  // One access; the driver then waits the annotated delay, as an LT initiator that syncs after every access.
  tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t address, std::uint32_t& value,
                                  unsigned length = 4, unsigned char* byte_enables = nullptr) {
    unsigned char data[8] = {};
    for (int i = 0; i < 4; ++i) data[i] = static_cast<unsigned char>(value >> (8 * i));
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(address);
    t.set_data_ptr(data);
    t.set_data_length(length);
    t.set_streaming_width(length);
    if (byte_enables != nullptr) {
      t.set_byte_enable_ptr(byte_enables);
      t.set_byte_enable_length(4);
    }
    sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, delay);
    sc_core::wait(delay);
    if (cmd == tlm::TLM_READ_COMMAND) {
      value = 0;
      for (int i = 0; i < 4; ++i) value |= std::uint32_t{data[i]} << (8 * i);
    }
    return t.get_response_status();
  }
  void write(std::uint64_t address, std::uint32_t value) {
    ASSERT_EQ(access(tlm::TLM_WRITE_COMMAND, address, value), tlm::TLM_OK_RESPONSE) << std::hex << address;
  }
  std::uint32_t read(std::uint64_t address) {
    std::uint32_t v = 0;
    EXPECT_EQ(access(tlm::TLM_READ_COMMAND, address, v), tlm::TLM_OK_RESPONSE) << std::hex << address;
    return v;
  }
};

struct FaceBench : Bench {
  Driver driver{"driver"};
  FaceBench() { driver.socket.bind(dma.regs); }
  // The driver's ring setup for queue number `n` (engine x queues_per_engine + queue).
  void setup_ring(unsigned n, std::uint64_t base, std::uint32_t entries) {
    driver.write(off::dma_global_queue_sel, n);
    driver.write(off::dma_queue_ring_base_lo, static_cast<std::uint32_t>(base));
    driver.write(off::dma_queue_ring_base_hi, static_cast<std::uint32_t>(base >> 32));
    driver.write(off::dma_queue_ring_entries, entries);
    driver.write(off::dma_queue_queue_control, 1);  // enable
  }
};

constexpr std::uint32_t kDoorbell = DmaEngines::kDoorbellOffset;

TEST(DmaFace, DriverSequenceCopiesAndInterrupts) {
  FaceBench b;
  const QueueId q{1, 1};  // queue number 3
  std::memset(b.at(kHbmBase), 0x5A, 1024);
  std::uint32_t id = 0, geometry = 0, state = 0, head = 0, tail = 0, done = 0, bytes = 0, bytes_hi = 9, irq_st = 0;
  std::uint32_t base_hi = 0, status_busy = 0;
  bool irq_after_clear = true;
  sc_time rung, interrupted;
  b.run([&] {
    id = b.driver.read(off::dma_global_dma_id);
    geometry = b.driver.read(off::dma_global_dma_geometry);
    b.setup_ring(3, kHostBase + Bench::ring_local(q), 8);
    base_hi = b.driver.read(off::dma_queue_ring_base_hi);
    b.driver.write(off::dma_global_irq_enable, DmaEngines::kIrqCompletion);
    Descriptor d = copy_2d(kHbmBase, 256, kSbufBase, kSbufPartitionBytes, 256, 4, 4);
    d.flags = kFlagIrq;
    b.put_raw(q, 0, encode(d));
    rung = sc_core::sc_time_stamp();
    b.driver.write(kDoorbell + 4 * 3, 1);  // one store rings queue 3
    status_busy = b.driver.read(off::dma_global_dma_status) & 1;
    sc_core::wait(b.dma.irq.posedge_event());
    interrupted = sc_core::sc_time_stamp();
    state = b.driver.read(off::dma_queue_queue_state);
    head = b.driver.read(off::dma_queue_head);
    tail = b.driver.read(off::dma_queue_tail);
    done = b.driver.read(off::dma_queue_descriptors_cnt_lsb);
    bytes = b.driver.read(off::dma_queue_bytes_cnt_lsb);
    bytes_hi = b.driver.read(off::dma_queue_bytes_cnt_msb);
    irq_st = b.driver.read(off::dma_global_irq_status);
    b.driver.write(off::dma_global_irq_clear, 1);
    irq_after_clear = b.dma.irq.read();
  });
  EXPECT_EQ(id, 0x0001444Du);
  EXPECT_EQ(geometry, 0x0202u) << "2 engines, 2 queues per engine (the bench's configuration)";
  EXPECT_EQ(base_hi, 0x100u) << "host memory at 0x100_0000_0000";
  EXPECT_EQ(status_busy, 1u);
  // fetch 11 + descriptor 100 + 4 rows x 66 = 375 ns after the doorbell (the interrupt is one delta later).
  // The doorbell acts when its access begins (the driver's local time): fetch 11 + descriptor 100 + 4 rows x 66.
  EXPECT_EQ(interrupted - rung, sc_time(375, SC_NS));
  EXPECT_EQ(state, 0u);
  EXPECT_EQ(head, 1u);
  EXPECT_EQ(tail, 1u);
  EXPECT_EQ(done, 1u);
  EXPECT_EQ(bytes, 1024u);
  EXPECT_EQ(bytes_hi, 0u);
  EXPECT_EQ(irq_st, 1u);
  EXPECT_FALSE(irq_after_clear) << "irq_clear dropped the line within the access";
  EXPECT_EQ(b.sbuf.data()[b.sbuf.local_address(3, 255)], 0x5A);
}

}  // namespace

namespace {

TEST(DmaFace, ErrorRecordThroughTheRegisters) {
  FaceBench b;
  std::uint32_t state = 0, index = 9, info = 0, lo = 0, hi = 0, status = 0, summary = 0, irq_st = 0;
  std::uint32_t state_after = 9, summary_after = 0, status_after = 9;
  b.run([&] {
    b.setup_ring(0, kHostBase + Bench::ring_local({0, 0}), 8);
    Descriptor bad = copy_2d(kSbufBase, kSbufPartitionBytes, kPsumBase + 1920, kPsumPartitionBytes, 256, 4, 4);
    b.put_raw({0, 0}, 0, encode(bad));
    b.driver.write(kDoorbell + 0, 1);
    sc_core::wait(sc_time(100, SC_NS));
    state = b.driver.read(off::dma_queue_queue_state);
    index = b.driver.read(off::dma_queue_err_index);
    info = b.driver.read(off::dma_queue_err_info);
    lo = b.driver.read(off::dma_queue_err_value_lo);
    hi = b.driver.read(off::dma_queue_err_value_hi);
    status = b.driver.read(off::dma_global_dma_status);
    summary = b.driver.read(off::dma_global_dma_error_summary);
    irq_st = b.driver.read(off::dma_global_irq_status);
    b.driver.write(off::dma_queue_queue_control, 0x3);  // keep enabled, clear_error
    state_after = b.driver.read(off::dma_queue_queue_state);
    summary_after = b.driver.read(off::dma_global_dma_error_summary);
    status_after = b.driver.read(off::dma_global_dma_status);
  });
  EXPECT_EQ(state, 3u);
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(info & 0xFF, offset::kDst) << "field_id = the dst field's byte offset, 24";
  EXPECT_EQ((info >> 8) & 0xFFFF, static_cast<unsigned>(Rule::AddressRange)) << "rule_id 11";
  EXPECT_EQ(lo, kPsumBase + 1920);
  EXPECT_EQ(hi, 0u);
  EXPECT_EQ(status, 0x2u) << "error, not busy";
  EXPECT_EQ(summary, 0x0001'0000u) << "count 1, first_queue 0";
  EXPECT_EQ(irq_st, 0x2u);
  EXPECT_EQ(state_after, 0u);
  EXPECT_EQ(summary_after, 0x0000'FFFFu) << "no queue in error";
  EXPECT_EQ(status_after, 0u);
}

TEST(DmaFace, DoorbellWindowRefusesBadAccessesWithNothingChanged) {
  FaceBench b;
  tlm::tlm_response_status misaligned{}, past_last{}, short_access{}, with_enables{}, ignored{};
  std::uint32_t tail_read = 0, tail_after = 9, info = 0;
  b.run([&] {
    b.setup_ring(1, kHostBase + Bench::ring_local({0, 1}), 4);
    std::uint32_t v = 1;
    misaligned = b.driver.access(tlm::TLM_WRITE_COMMAND, kDoorbell + 4 + 2, v);
    past_last = b.driver.access(tlm::TLM_WRITE_COMMAND, kDoorbell + 4 * 4, v);  // 4 queues: 0..3
    short_access = b.driver.access(tlm::TLM_WRITE_COMMAND, kDoorbell + 4, v, 2);
    unsigned char be[4] = {0xFF, 0xFF, 0, 0};
    with_enables = b.driver.access(tlm::TLM_WRITE_COMMAND, kDoorbell + 4, v, 4, be);
    ignored = b.driver.access(tlm::TLM_IGNORE_COMMAND, kDoorbell + 4, v);
    tail_after = b.driver.read(off::dma_queue_tail);
    b.driver.write(kDoorbell + 4, 5);  // 5 past head 0 in a ring of 4
    info = b.driver.read(off::dma_queue_err_info);
    tail_read = b.driver.read(kDoorbell + 4);
  });
  EXPECT_EQ(misaligned, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(past_last, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(short_access, tlm::TLM_BURST_ERROR_RESPONSE);
  EXPECT_EQ(with_enables, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  EXPECT_EQ(ignored, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(tail_after, 0u) << "no refused access moved the tail";
  EXPECT_EQ(info & 0xFF, field::kTail);
  EXPECT_EQ((info >> 8) & 0xFFFF, static_cast<unsigned>(Rule::QueueOverflow));
  EXPECT_EQ(tail_read, 0u) << "the overflowing tail was not taken";
  EXPECT_TRUE(b.records.empty());
}

TEST(DmaFace, QueueSelPastTheLastQueueShowsZerosAndIgnoresWrites) {
  FaceBench b;
  std::uint32_t entries = 9, sel = 0;
  b.run([&] {
    b.driver.write(off::dma_global_queue_sel, 4);  // the bench has 4 queues
    b.driver.write(off::dma_queue_ring_entries, 8);
    b.driver.write(off::dma_queue_queue_control, 1);
    entries = b.driver.read(off::dma_queue_ring_entries);
    sel = b.driver.read(off::dma_global_queue_sel);
  });
  EXPECT_EQ(entries, 0u);
  EXPECT_EQ(sel, 4u);
  for (unsigned e = 0; e < 2; ++e)
    for (unsigned q = 0; q < 2; ++q) {
      EXPECT_FALSE(b.dma.status({e, q}).enabled);
      EXPECT_EQ(b.dma.status({e, q}).ring_entries, 0u);
    }
}

TEST(DmaFace, RingIsLatchedWhileEnabledAndResetEmptiesTheQueue) {
  FaceBench b;
  std::uint32_t lo_while_enabled = 0, head = 9, tail = 9, control = 9, done = 9;
  b.run([&] {
    const std::uint64_t base = kHostBase + Bench::ring_local({0, 0});
    b.setup_ring(0, base, 8);
    b.put_raw({0, 0}, 0, encode(copy_2d(kSbufBase, 0, kPsumBase, 0, 256, 1, 4)));
    b.driver.write(kDoorbell, 1);
    sc_core::wait(sc_time(1, sc_core::SC_US));
    b.driver.write(off::dma_queue_ring_base_lo, 0x40);  // ignored: the ring is latched while enabled
    lo_while_enabled = b.driver.read(off::dma_queue_ring_base_lo);
    b.driver.write(off::dma_queue_queue_control, 0x4);  // reset
    head = b.driver.read(off::dma_queue_head);
    tail = b.driver.read(off::dma_queue_tail);
    control = b.driver.read(off::dma_queue_queue_control);
    done = b.driver.read(off::dma_queue_descriptors_cnt_lsb);
  });
  EXPECT_EQ(lo_while_enabled, static_cast<std::uint32_t>(kHostBase + Bench::ring_local({0, 0})));
  EXPECT_EQ(head, 0u);
  EXPECT_EQ(tail, 0u);
  EXPECT_EQ(control, 0u) << "disabled";
  EXPECT_EQ(done, 0u) << "counters cleared";
  ASSERT_EQ(b.records.size(), 1u) << "the descriptor had completed before the reset";
}

}  // namespace
