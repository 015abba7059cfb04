// The PE firmware stand-in. The SEQ hands it each 64-byte instruction; it routes
// the raw opcode byte through the compare chain the MARIANA PE DEBUG IRAM uses
// (spec 000 section 2.1: 0x01, 0x02, 0x03, 0x06, 0x07, 0x08, 0x09, 0x0a, then
// 0xe4 after the SEQ-core control opcodes), and the handler -- which prints the
// firmware's own DEBUG self-name ("S: Ldweights", "XS: MatmulMX") -- checks the
// instruction and emits micro-ops for the arr_seq sequencer.
//
// Every handler is modelled: Ldweights and Matmul (dense, MX on MAVERICK, the
// tag_weight_mode load), PeRegWrite, PeManageSeed, LdweightsMX / MatmulMX,
// LdTags / MatmulSparse, and ConvLutLoad (a model of its own, D-CONVLUT). An
// invalid instruction faults with its first violation: it is rejected, never
// silently skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/circular_buffer.hpp>

#include "pevp/isa/decode.h"
#include "pevp/isa/instruction.h"
#include "pevp/pe_array/micro_op.h"

namespace pevp::fw {

enum class Handler : std::uint8_t {
  Ldweights, Matmul, PeRegWrite, LdTags, MatmulSparse, PeManageSeed, LdweightsMX, MatmulMX, ConvLutLoad,
  None,  // not a PE opcode: the chain falls through (SEQ-core control opcodes live there)
};

// The compare chain on the raw opcode byte (no normalisation, no generation).
Handler dispatch(std::uint8_t raw_opcode);
std::string_view name(Handler h);  // "Ldweights", ...
// The handler's DEBUG self-name for an instruction: "S: Ldweights",
// "XS: MatmulMX", "S: PeManageSeed(SAVE)"; "" for Handler::None.
std::string self_name(Handler h, const isa::Instruction& typed);

// Why an instruction was rejected: the rule (isa::rule_number gives its number),
// the field path ("" when no single field), its value and a message.
struct Fault {
  std::string rule;
  std::string field;
  std::int64_t value = 0;
  std::string message;
  std::string describe() const;  // "<field> = <value>: <message> [<rule>]"
};

// What a handler decides from the instruction alone, whatever came before it:
// prepared once per distinct instruction (the SEQ caches it with the decode),
// so a stream that repeats instructions pays only the per-instance work --
// the cross-instruction rule and the micro-op's index.
struct Prepared {
  std::shared_ptr<const isa::Decoded> decoded;
  isa::EventsPart events;              // the instruction's EVENTS (the SEQ waits and updates by them)
  Handler handler = Handler::None;
  std::string self_name;               // "" for Handler::None
  std::optional<Fault> fault;          // rejected whatever came before (invalid, not modelled, no tile)
  std::vector<pe::MicroOp> ops;        // the micro-ops it emits (PeManageSeed: two), instr_index still to set
  isa::StreamChecker::Key stream;      // what the cross-instruction rule reads
};
Prepared prepare(std::shared_ptr<const isa::Decoded> instr);

struct HandlerOutput {
  Handler handler = Handler::None;
  std::string self_name;           // the DEBUG line the handler printed ("S: Matmul"); "" for None
  std::vector<pe::MicroOp> ops;    // empty on a fault
  std::optional<Fault> fault;
};

class Firmware {
 public:
  // Handles one decoded instruction (isa::decode ran the validity rules). Keeps
  // the cross-instruction state the rules need (the stationary's dtype per cell,
  // isa::StreamChecker), so feed instructions in program order.
  HandlerOutput handle(std::shared_ptr<const isa::Decoded> instr, std::uint64_t index);
  // The same for a prepared instruction, into `out` (cleared first), reusing
  // its storage: the SEQ's hot path. Gives what handle(instr, index) would.
  void handle(const Prepared& p, std::uint64_t index, HandlerOutput& out);

  // The cross-instruction state must describe what the array will really hold.
  // When instruction `index` faults (it and the instructions taken back behind
  // it never execute), rewind to the state before it and replay the
  // instructions after it that do execute (`survivors`, in program order:
  // micro-ops already in the array on independent tiles).
  void rewind(std::uint64_t index, const std::vector<std::shared_ptr<const isa::Decoded>>& survivors,
              const std::vector<std::uint64_t>& survivor_indices);
  // Instruction `index` completed (instructions complete in order): its
  // checkpoint, and any older one, is no longer needed.
  void retire(std::uint64_t index) {
    while (!checkpoints_.empty() && checkpoints_.front().first <= index) checkpoints_.pop_front();
  }
  std::size_t checkpoints() const { return checkpoints_.size(); }

  // The cross-instruction state as plain data, for a VP checkpoint
  // (docs/checkpoint.md): the checker and the checkpoints of instructions in
  // flight (none at an idle point, but kept so restore() is exact).
  struct State {
    isa::StreamChecker::State stream;
    std::vector<std::pair<std::uint64_t, isa::StreamChecker::State>> checkpoints;  // in index order
  };
  State state() const;
  // Why `s` cannot be restored (a bad checker state, checkpoints out of
  // order), or "".
  static std::string check(const State& s);
  void restore(const State& s);

  // Forget the cross-instruction state (a reset of the SEQ).
  void reset() {
    stream_ = {};
    checkpoints_.clear();
  }

 private:
  void checkpoint(std::uint64_t index);

  isa::StreamChecker stream_;
  // The checker as it was before each instruction in flight that changed it
  // (an Ldweights), in index order. The state before any instruction i is the
  // first checkpoint at or after i -- the instructions between only read it --
  // or the current state. A ring that grows, never a node per instruction:
  // the allocation would cost more than the rest of the handler.
  boost::circular_buffer<std::pair<std::uint64_t, isa::StreamChecker>> checkpoints_{64};
};

}  // namespace pevp::fw
