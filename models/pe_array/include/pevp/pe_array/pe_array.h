// The PE array as a SystemC module: executes the micro-ops the arr_seq
// sequencer issues, on SBUF and PSUM reached through DMI (one pointer each,
// fetched once; no per-element transactions). The functional work is
// ArrayExecutor's (plain C++); this module adds the bus side (DMI over the two
// initiator sockets), PeRegWrite, and the per-tile PE registers it writes.
//
// Timing is not here: the arr_seq sequencer asks its CostModel how long a
// micro-op takes (models/arr_seq/cost_model.h), the one place delays are
// annotated.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/isa/geometry.h"
#include "pevp/pe_array/array_model.h"
#include "pevp/pe_array/executor.h"
#include "pevp/pe_array/micro_op.h"

namespace pevp::pe {

class PeArray : public sc_core::sc_module, public ArrayModel {
 public:
  tlm_utils::simple_initiator_socket<PeArray> sbuf_port;  // bind to the SBUF memory target
  tlm_utils::simple_initiator_socket<PeArray> psum_port;  // bind to the PSUM memory target

  // `geo`: the partitions and banks of the SBUF and PSUM it reaches. `threads`: host threads a large matmul's
  // arithmetic may use (ArrayExecutor); the simulation itself stays on one thread.
  // `rounding`: the bf16 drain (stochastic from the PSUM seeds on NeuronCore-v4, D-SR-RNG).
  PeArray(sc_core::sc_module_name name, const isa::ArrayGeometry& geo, unsigned threads = 1,
          Bf16Rounding rounding = Bf16Rounding::NearestEven);

  // Executes one micro-op now. `bypass_peregwrite` is queue_cfg.bypass_peregwrite_instr:
  // a PeRegWrite takes imm_value instead of fetching its value from SBUF. On an
  // error nothing is written.
  ExecResult execute(const MicroOp& op, bool bypass_peregwrite) override;
  // With a datapath, its times on the sequencer's timeline (D-ARRAY-SEAM): accepted when offered; a weight load
  // holds the load port for the datapath's load cycles; a Matmul holds the moving stream for its N vectors (one per
  // cycle) and completes `sbuf_access_cycles` (the SBUF read ahead of the datapath) plus the datapath's stream
  // cycles after it was accepted, its first result likewise. Without one, the default: the cost model times it.
  Accepted offer(const MicroOp& op, bool bypass_peregwrite, std::uint64_t earliest) override;
  std::string implementation() const override;

  // The arithmetic's datapath (executor.h, datapath.h), or null for the C++ kernels; `sbuf_access_cycles`: the
  // SBUF read latency before a Matmul's first vector reaches it (the cost model's sbuf_access_cycles). The
  // datapath must outlive the array. A PeRegWrite is refused while one is set: a datapath has no PE registers.
  void set_datapath(Datapath* d, unsigned sbuf_access_cycles);

  // What the last successful WeightLoad / Matmul did (shapes, MACs).
  const ExecStats& last_stats() const { return exec_.last_stats(); }
  const ArrayExecutor& executor() const { return exec_; }

  // The PE register `reg_addr` of the tile whose top-left PE is (row0, col0), as
  // the last PeRegWrite there set it; 0 when never written (model decision
  // D-PEREGWRITE: the register's meaning is not public).
  std::uint32_t pe_register(unsigned row0, unsigned col0, std::uint32_t reg_addr) const;

  // Forget stationaries, groups and PE registers.
  void reset();

  // The executor's state and the PE registers, for a VP checkpoint (docs/checkpoint.md).
  struct PeRegister {
    unsigned row0 = 0, col0 = 0;
    std::uint32_t reg_addr = 0, value = 0;
  };
  struct State {
    ArrayExecutor::State exec;
    std::vector<PeRegister> pe_registers;  // in (row0, col0, reg_addr) order
  };
  State state() const;
  // Why `s` cannot be restored (the executor's rules; a PE register's tile
  // corner outside the array, PE registers repeated or out of order), or "".
  std::string check(const State& s, isa::Generation gen) const;
  void restore(State s);

 private:
  struct Span {
    std::uint8_t* ptr = nullptr;
    std::size_t bytes = 0;
  };
  // DMI to the memory behind `port`; an error (SC_REPORT_ERROR at elaboration
  // time, not in a transport) when the target grants none.
  Span acquire(tlm_utils::simple_initiator_socket<PeArray>& port, const char* what);
  void end_of_elaboration() override;
  ExecResult pe_reg_write(const MicroOp& op, bool bypass);

  isa::ArrayGeometry geo_;
  ArrayExecutor exec_;
  Span sbuf_, psum_;
  std::map<std::tuple<unsigned, unsigned, std::uint32_t>, std::uint32_t> pe_regs_;
  unsigned sbuf_access_cycles_ = 0;
};

}  // namespace pevp::pe
