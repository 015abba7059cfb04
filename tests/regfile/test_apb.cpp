// The arr_seq CSR block through TLM: the router, the four faces, every error
// status, the privilege boundary, and the 003 section 6 arm sequence.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>

#include "apb_helpers.h"
#include "pevp/regfile/arr_seq_csrs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"

namespace {
using namespace pevp::regfile;
using namespace pevp::regfile::test;
namespace top = pevp::regs::tpb_arr_seq_top_host_visible;
constexpr sc_dt::uint64 kTop = 0x0000, kCluster = 0x1000, kProt = 0x2000, kSeq = 0x3000;

TEST(Apb, ArmSequenceOf003Section6) {
  ArrSeqCsrs csrs("csrs");
  auto& s = csrs.apb();
  // 1. issue policy: serialized (fifo single entry + no dependency check), PeRegWrite immediate.
  EXPECT_EQ(wr(s, kTop + 0x000, (1u << 0) | (1u << 8) | (1u << 4)).status, tlm::TLM_OK_RESPONSE);
  const QueueCfg q = csrs.queue_cfg();
  EXPECT_TRUE(q.fifo_size_sel);
  EXPECT_TRUE(q.bypass_peregwrite_instr);
  EXPECT_TRUE(q.disable_dependency_check);
  // Counting before enabling does nothing.
  EXPECT_TRUE(csrs.count(CounterBank::Matmul, {64, 64, 32, 32}));
  EXPECT_EQ(csrs.counter(CounterBank::Matmul, "tile_64x32_tile9"), 0u);
  // 2. telemetry: pulse cntr_rst, then cntr_en.
  EXPECT_EQ(wr(s, kTop + 0x004, 1u << 4).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(wr(s, kTop + 0x004, 1u << 0).status, tlm::TLM_OK_RESPONSE);
  EXPECT_TRUE(csrs.counters_enabled());
  // 3. the sequencer counts micro-ops on their tiles.
  for (int i = 0; i < 3; ++i) csrs.count(CounterBank::Matmul, {64, 64, 32, 32});
  csrs.count(CounterBank::WeightLoad, {0, 128, 0, 128});
  EXPECT_FALSE(csrs.count(CounterBank::Matmul, {32, 64, 0, 32})) << "a misaligned tile has no counter";
  // 4. observe: read the 48-bit counter over APB with 003's formula.
  const std::uint32_t lsb_off = top::offsets::arr_seq_ififo_perf_matmul_tile_64x32_tile9_instr_cnt_lsb;
  const auto lo = rd(s, kTop + lsb_off), hi = rd(s, kTop + lsb_off + 4);
  ASSERT_EQ(lo.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ((static_cast<std::uint64_t>(hi.data & 0xFFFF) << 32) | lo.data, 3u);
  EXPECT_EQ(csrs.counter(CounterBank::WeightLoad, "tile_128x128_tile0"), 1u);
  EXPECT_EQ(csrs.counter(CounterBank::PeRegWrite, "tile_128x128_tile0"), 0u);
  // cntr_rst clears every counter of every bank.
  wr(s, kTop + 0x004, (1u << 4) | 1u);
  EXPECT_EQ(csrs.counter(CounterBank::Matmul, "tile_64x32_tile9"), 0u);
  EXPECT_EQ(csrs.counter(CounterBank::WeightLoad, "tile_128x128_tile0"), 0u);
  EXPECT_EQ(csrs.counters_per_bank(), 49u);
}

TEST(Apb, ErrorStatusesChangeNothing) {
  ArrSeqCsrs csrs("csrs");
  auto& s = csrs.apb();
  wr(s, kTop + 0x008, 0x12345678);  // spare_register0
  auto spare = [&] { return rd(s, kTop + 0x008).data; };
  EXPECT_EQ(wr(s, 0x9000, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE) << "outside every window";
  EXPECT_EQ(wr(s, kTop + 0x00A, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE) << "misaligned";
  EXPECT_EQ(apb(s, tlm::TLM_WRITE_COMMAND, kTop + 0x008, 1, false, {}, 8).status, tlm::TLM_BURST_ERROR_RESPONSE)
      << "wrong width";
  EXPECT_EQ(apb(s, tlm::TLM_WRITE_COMMAND, kTop + 0x008, 1, false, {0xFF, 0x12, 0xFF, 0xFF}).status,
            tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  EXPECT_EQ(wr(s, kTop + 0x018, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE) << "unmapped inside the window";
  EXPECT_EQ(rd(s, kTop + 0x844).status, tlm::TLM_ADDRESS_ERROR_RESPONSE) << "past the last register";
  EXPECT_EQ(apb(s, tlm::TLM_IGNORE_COMMAND, kTop + 0x008).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(spare(), 0x12345678u);
  // Byte enables shorter than the access repeat (TLM-2.0 rule).
  EXPECT_EQ(apb(s, tlm::TLM_WRITE_COMMAND, kTop + 0x008, 0xAABBCCDD, false, {0x00, 0xFF}).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(spare(), 0xAA34CC78u);
}

TEST(Apb, ProtectedFaceAnswersOnlyPrivilegedAccesses) {
  ArrSeqCsrs csrs("csrs");
  auto& s = csrs.apb();
  auto r = rd(s, kProt + 0x0, false);
  EXPECT_EQ(r.status, tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(wr(s, kProt + 0x0, 0x0, false).status, tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(csrs.disable_throttle(), 0x1ffu) << "the unprivileged write changed nothing";
  EXPECT_EQ(csrs.protect.rejected_unprivileged(), 2u);
  r = rd(s, kProt + 0x0, true);
  EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(r.data, 0x1ffu);
  EXPECT_EQ(wr(s, kProt + 0x0, 0x0F0, true).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(csrs.disable_throttle(), 0x0F0u);
  // The host-visible faces do not require privilege.
  EXPECT_EQ(rd(s, kCluster + 0x0).status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(rd(s, kSeq + 0x0).status, tlm::TLM_OK_RESPONSE);
}

TEST(Apb, ClusterFieldsReachTheModel) {
  ArrSeqCsrs csrs("csrs");
  auto& s = csrs.apb();
  ClusterCfg c = csrs.cluster_cfg();
  EXPECT_EQ(c.inter_instr_dly_cnt, 8u) << "reset 0x8";
  EXPECT_FALSE(c.en_inter_instr_dly);
  const std::uint32_t v = rd(s, kCluster + 0x0).data;
  wr(s, kCluster + 0x0, (v & ~(0x3Fu << 16)) | (1u << 12) | (1u << 8) | (20u << 16));
  c = csrs.cluster_cfg();
  EXPECT_TRUE(c.en_inter_instr_dly);
  EXPECT_TRUE(c.matmul_done_last);
  EXPECT_EQ(c.inter_instr_dly_cnt, 20u);
}

TEST(Apb, ResetRestoresEveryFace) {
  ArrSeqCsrs csrs("csrs");
  auto& s = csrs.apb();
  wr(s, kTop + 0x000, 0x111);
  wr(s, kTop + 0x004, 0x1);
  csrs.count(CounterBank::PeRegWrite, {96, 32, 96, 32});
  wr(s, kCluster + 0x0, 0);
  wr(s, kProt + 0x0, 0, true);
  wr(s, kSeq + 0x100, 7);  // a semaphore
  csrs.reset();
  EXPECT_EQ(rd(s, kTop + 0x000).data, 0u);
  EXPECT_FALSE(csrs.counters_enabled());
  EXPECT_EQ(csrs.counter(CounterBank::PeRegWrite, "tile_32x32_tile15"), 0u);
  EXPECT_EQ(csrs.cluster_cfg().inter_instr_dly_cnt, 8u);
  EXPECT_EQ(csrs.disable_throttle(), 0x1ffu);
  EXPECT_EQ(rd(s, kSeq + 0x100).data, 0u);
}

TEST(Apb, DelayAddsOneAccessTimePerTransaction) {
  ArrSeqCsrsConfig cfg;
  cfg.access_time = sc_core::sc_time(30, sc_core::SC_NS);
  ArrSeqCsrs csrs("csrs", cfg);
  EXPECT_EQ(rd(csrs.apb(), kTop).delay, sc_core::sc_time(30, sc_core::SC_NS));
}

TEST(Apb, DebugTransportHasNoSideEffects) {
  ArrSeqCsrs csrs("csrs");
  int pulses = 0;
  csrs.top.regs().on_pulse([&](const RegisterDesc&, const FieldDesc&) { ++pulses; });
  std::uint32_t words[2] = {0x10, 0xFFFFFFFF};  // perf_cntr_cfg (cntr_rst bit), spare_register0
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_WRITE_COMMAND);
  t.set_address(kTop + 0x4);
  t.set_data_ptr(reinterpret_cast<unsigned char*>(words));
  t.set_data_length(8);
  EXPECT_EQ(csrs.apb().get_base_export()->transport_dbg(t), 8u);
  EXPECT_EQ(pulses, 0) << "a debug write never pulses";
  std::uint32_t back[2] = {};
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_data_ptr(reinterpret_cast<unsigned char*>(back));
  EXPECT_EQ(csrs.apb().get_base_export()->transport_dbg(t), 8u);
  EXPECT_EQ(back[0], 0x0u) << "the pulse bit is not stored";
  EXPECT_EQ(back[1], 0xFFFFFFFFu);
  t.set_address(0x9000);
  EXPECT_EQ(csrs.apb().get_base_export()->transport_dbg(t), 0u);
}

// Debug access keeps the privilege boundary (D-DBG-PRIV): an unprivileged debug
// read or write of the protected face transfers nothing and is counted; marked
// privileged (ApbProt), a debugger reads and writes it without side effects.
TEST(Apb, DebugAccessToTheProtectedFaceNeedsPrivilege) {
  ArrSeqCsrs csrs("csrs");
  auto& dbg = csrs.apb().get_base_export();
  std::uint32_t word = 0;
  tlm::tlm_generic_payload t;
  t.set_address(kProt + 0x0);
  t.set_data_ptr(reinterpret_cast<unsigned char*>(&word));
  t.set_data_length(4);
  t.set_command(tlm::TLM_READ_COMMAND);
  word = 0xDEADBEEF;
  EXPECT_EQ(dbg->transport_dbg(t), 0u);
  EXPECT_EQ(word, 0xDEADBEEFu) << "nothing read";
  t.set_command(tlm::TLM_WRITE_COMMAND);
  word = 0;
  EXPECT_EQ(dbg->transport_dbg(t), 0u);
  EXPECT_EQ(csrs.disable_throttle(), 0x1ffu) << "the unprivileged debug write changed nothing";
  EXPECT_EQ(csrs.protect.rejected_unprivileged(), 2u);

  ApbProt prot(true);
  t.set_extension(&prot);
  t.set_command(tlm::TLM_READ_COMMAND);
  EXPECT_EQ(dbg->transport_dbg(t), 4u);
  EXPECT_EQ(word, 0x1ffu) << "throttle_cfg.disable_throttle's reset value";
  word = 0x0F0;
  t.set_command(tlm::TLM_WRITE_COMMAND);
  EXPECT_EQ(dbg->transport_dbg(t), 4u);
  EXPECT_EQ(csrs.disable_throttle(), 0x0F0u);
  t.clear_extension(&prot);
  // The other faces need no privilege, for debug as on the bus.
  t.set_address(kTop + 0x8);
  t.set_command(tlm::TLM_READ_COMMAND);
  EXPECT_EQ(dbg->transport_dbg(t), 4u);
}

}  // namespace

namespace {
// Elaboration must accept the block as wired (every socket bound); SystemC can
// elaborate once per process, and ctest runs each test in its own process.
struct Driver : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Driver> socket{"socket"};
  std::uint32_t spare2 = 0;
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  SC_CTOR(Driver) { SC_THREAD(run); }
  void run() {
    std::uint32_t data = 0;
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(kTop + 0x010);  // spare_register2
    t.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
    t.set_data_length(4);
    t.set_streaming_width(4);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, delay);
    wait(delay);
    status = t.get_response_status();
    spare2 = data;
  }
};

TEST(ApbElaboration, DriverThreadReadsThroughBoundSockets) {
  ArrSeqCsrs csrs("csrs");
  Driver driver("driver");
  driver.socket.bind(csrs.apb());
  sc_core::sc_start();
  EXPECT_EQ(driver.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(driver.spare2, 0xffffffffu);
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(20, sc_core::SC_NS)) << "one APB access";
}
}  // namespace
