// A PE-array micro-op: what a firmware handler emits and the arr_seq sequencer
// issues to the array. One instruction becomes one micro-op for the modelled
// opcodes (Ldweights -> WeightLoad, Matmul -> Matmul, PeRegWrite -> PeRegWrite);
// the kinds are the three per-tile counter banks of 003 section 4.
#pragma once

#include <cstdint>
#include <memory>

#include "pevp/isa/decode.h"
#include "pevp/isa/tiles.h"

namespace pevp::pe {

enum class MicroOpKind : std::uint8_t { WeightLoad, Matmul, PeRegWrite };

inline const char* name(MicroOpKind k) {
  switch (k) {
    case MicroOpKind::WeightLoad: return "weight_load";
    case MicroOpKind::Matmul: return "matmul";
    case MicroOpKind::PeRegWrite: return "pe_regwrite";
  }
  return "?";
}

struct MicroOp {
  MicroOpKind kind = MicroOpKind::Matmul;
  std::uint64_t instr_index = 0;               // position in the submitted stream (0-based)
  std::shared_ptr<const isa::Decoded> instr;   // the validated instruction it came from
  isa::TileRect tile;                          // where on the array it runs
  // The last micro-op of its instruction: the instruction retires (EVENTS update,
  // retired count) when this one completes.
  bool completes_instruction = true;
};

}  // namespace pevp::pe
