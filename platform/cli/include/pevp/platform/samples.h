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
  // Why the platform does not run it yet ("" = it runs): the demo lists and checks it, and leaves it out of the run.
  std::string not_run{};
};

// The sample streams' PeManageSeed reads its 16 x 16 identity (bf16) from SBUF partitions 0-15 at this address.
inline constexpr std::uint32_t kSampleIdentityAddress = 0x5000;

// A short program exercising the generation's features: a single matmul, a
// K-tiled accumulation group, a sub-array tile, tf32, and per generation BF16
// output and PeManageSeed (v4), MX (v4 separate ops, v5 MXTENSOR_V2), c256 (v5).
std::vector<SampleInstruction> sample_stream(isa::Generation g);

}  // namespace pevp::platform
