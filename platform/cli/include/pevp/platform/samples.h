// Sample instruction streams per generation: what the README's main job
// decodes, and a ready-made valid program for tests and for trying
// `pe-vp disasm`.
#pragma once

#include <string>
#include <vector>

#include "pevp/isa/decode.h"

namespace pevp::platform {

struct SampleInstruction {
  std::string comment;  // what it does, for the demo listing
  isa::RawInstruction bytes;
};

// A short program exercising the generation's features: a single matmul, a
// K-tiled accumulation group, a sub-array tile, tf32, and per generation BF16
// output and PeManageSeed (v4), MX (v4 separate ops, v5 MXTENSOR_V2), c256 (v5).
std::vector<SampleInstruction> sample_stream(isa::Generation g);

}  // namespace pevp::platform
