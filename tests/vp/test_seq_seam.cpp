// The SEQ reaches its sequencer through arrseq::MicroOpSink only: here a
// stand-in sink (no arr_seq, no PE array) receives what the SEQ dispatches, in
// program order, with the operands the firmware lowered, and the SEQ retires
// each instruction at the response time the sink gives.
#include <gtest/gtest.h>

#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "pevp/arr_seq/arr_seq.h"
#include "pevp/isa/builders.h"
#include "pevp/regfile/arr_seq_csrs.h"
#include "pevp/seq/seq.h"

namespace {

using namespace pevp;

struct RecordingSink : arrseq::MicroOpSink {
  std::vector<pe::MicroOp> ops;
  std::vector<arrseq::Cycle> ready;
  arrseq::Issued issue(const pe::MicroOp& op, const arrseq::OpShape&, arrseq::Cycle at, bool) override {
    ops.push_back(op);
    ready.push_back(at);
    arrseq::Issued r;
    r.push = r.start = at;
    r.complete = r.response = at + 100;
    return r;
  }
  void settle(arrseq::Cycle) override {}
  arrseq::EngineClock clock() const override { return arrseq::EngineClock(1.0); }  // 1 ns cycles
  arrseq::Cycle dispatch_cycles() const override { return 10; }
};

struct Host : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Host> socket;
  tlm_utils::simple_initiator_socket<Host> apb;  // the CSR block's bus, unused here
  std::vector<isa::RawInstruction> program;
  SC_HAS_PROCESS(Host);
  Host(sc_core::sc_module_name n, seq::Seq& s, regfile::ArrSeqCsrs& csrs)
      : sc_core::sc_module(n), socket("socket"), apb("apb") {
    socket.bind(s.iq);
    apb.bind(csrs.apb());
    SC_THREAD(main);
  }
  void main() {
    for (const isa::RawInstruction& raw : program) {
      tlm::tlm_generic_payload trans;
      trans.set_command(tlm::TLM_WRITE_COMMAND);
      trans.set_address(0);
      trans.set_data_ptr(const_cast<unsigned char*>(raw.data()));
      trans.set_data_length(static_cast<unsigned>(raw.size()));
      trans.set_streaming_width(static_cast<unsigned>(raw.size()));
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(trans, delay);
      EXPECT_EQ(trans.get_response_status(), tlm::TLM_OK_RESPONSE);
    }
  }
};

TEST(SeqSeam, TheSeqDispatchesIntoAnyMicroOpSink) {
  const isa::Generation g = isa::Generation::MARIANA;
  regfile::ArrSeqCsrs csrs("csrs");
  RecordingSink sink;
  seq::Seq s("seq", g, csrs, sink, seq::SeqConfig{});
  Host host("host", s, csrs);
  isa::LdweightsArgs lw;
  lw.src = isa::Pattern::row(0, 128);
  isa::MatmulArgs mm;
  mm.src = isa::Pattern::row(0x400, 200);
  mm.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, 200);
  host.program = {isa::encode_ldweights(g, lw), isa::encode_matmul(g, mm), isa::encode_matmul(g, mm)};
  sc_core::sc_start(10, sc_core::SC_US);
  ASSERT_EQ(sink.ops.size(), 3u);
  EXPECT_EQ(sink.ops[0].kind, pe::MicroOpKind::WeightLoad);
  EXPECT_EQ(sink.ops[1].kind, pe::MicroOpKind::Matmul);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(sink.ops[i].instr_index, i);
  EXPECT_EQ(sink.ops[2].src.count(), 200u);
  // Each dispatch costs the sink's dispatch time: the instructions are ready 10 cycles apart at least.
  EXPECT_GE(sink.ready[1], sink.ready[0] + 10);
  EXPECT_GE(sink.ready[2], sink.ready[1] + 10);
  EXPECT_EQ(s.retired(), 3u) << "retired at the responses the sink gave";
}

}  // namespace
