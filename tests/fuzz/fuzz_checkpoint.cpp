// libFuzzer harness: the checkpoint reader (platform::read_checkpoint, checkpoint.h) -- the staging parse and
// validation a restore runs before it changes anything -- and the unit rules that need no platform (the firmware's
// no-mix state). Its contract: a bad checkpoint throws CheckpointError whose message starts with
// "checkpoint fuzz.ckpt: "; nothing else escapes (an std::out_of_range, a bad_alloc or a length_error is a finding),
// no read leaves the input, no allocation is larger than what the input holds. For a checkpoint it accepts:
//   - the memories have the geometry's sizes, their pages are in increasing order, inside the memory, whole;
//   - the four register files have their descriptions' register counts;
//   - every stationary has K x M values; the seeds are the geometry's count; the IFIFO starts fit its depth;
//   - the SEQ's queue fits its depth (+1, a taken-back instruction);
//   - the firmware's no-mix rule check runs on its state without crashing.
// Input: a selector byte (which configuration the checkpoint is read against: 0 CAYMAN, 1 MARIANA, 2 MARIANA with
// stochastic PSUM rounding, the presets otherwise), then the checkpoint's bytes.
#include <stdexcept>
#include <string>

#include "fuzz_util.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/platform/config.h"

// libsystemc.so calls sc_main from its own main; the fuzzer's main runs instead, so this is never called.
int sc_main(int, char*[]) { return 0; }

namespace {

using namespace pevp;
constexpr const char* kTarget = "fuzz_checkpoint";

const platform::VpConfig& config_of(std::uint8_t selector) {
  static const platform::VpConfig configs[3] = {
      platform::preset(isa::Generation::CAYMAN),
      platform::preset(isa::Generation::MARIANA),
      [] {
        platform::VpConfig c = platform::preset(isa::Generation::MARIANA);
        platform::apply_override(c, "tensor_engine.psum_rounding=stochastic");
        return c;
      }(),
  };
  return configs[selector % 3];
}

void check_image(const platform::CheckpointImage& img, const platform::VpConfig& cfg) {
  const isa::ArrayGeometry& geo = cfg.geometry;
  const auto memory = [&](const platform::MemoryImage& m, std::uint64_t size, const char* what) {
    if (m.size != size) fuzz::fail(kTarget, std::string(what) + ": accepted a memory of another size");
    std::uint64_t last = 0;
    for (std::size_t i = 0; i < m.pages.size(); ++i) {
      const auto& [index, bytes] = m.pages[i];
      if ((i > 0 && index <= last) || index * 4096 >= size) fuzz::fail(kTarget, std::string(what) + ": page out of order");
      if (bytes.size() != std::min<std::uint64_t>(4096, size - index * 4096)) fuzz::fail(kTarget, "a page not whole");
      last = index;
    }
  };
  memory(img.sbuf, std::uint64_t{geo.partitions} * geo.sbuf_partition_bytes, "SBUF");
  memory(img.psum, std::uint64_t{geo.partitions} * geo.psum_partition_bytes(), "PSUM");
  for (const auto& f : img.csrs.faces)
    if (f.regs.values.empty()) fuzz::fail(kTarget, "a register file without registers");
  for (const auto& s : img.array.exec.stationaries)
    if (s.values.size() != s.k * s.m) fuzz::fail(kTarget, "a stationary whose values are not K x M");
  if (img.array.exec.seeds.size() != std::size_t{geo.partitions} * geo.psum_banks * 2)
    fuzz::fail(kTarget, "the wrong seed count");
  if (img.arr_seq.timeline.starts.size() > cfg.platform.arr_seq.ififo_depth)
    fuzz::fail(kTarget, "more IFIFO starts than its depth");
  if (img.seq.queue.size() > std::size_t{cfg.platform.seq.queue_depth} + 1) fuzz::fail(kTarget, "a queue past its depth");
  (void)fw::Firmware::check(img.seq.firmware);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const platform::VpConfig& cfg = config_of(data[0]);
  try {
    const platform::CheckpointImage img = platform::read_checkpoint(data + 1, size - 1, cfg, "fuzz.ckpt");
    check_image(img, cfg);
  } catch (const platform::CheckpointError& e) {
    if (std::string(e.what()).rfind("checkpoint fuzz.ckpt: ", 0) != 0)
      fuzz::fail(kTarget, std::string("an error that does not name the checkpoint: ") + e.what());
  }
  return 0;
}
