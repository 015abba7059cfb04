// How fast the ISA layer decodes, validates, prints and encodes: the SEQ
// dispatcher decodes every instruction it fetches, so decode cost bounds the
// micro-op rate of a simulation.
#include <benchmark/benchmark.h>

#include <string_view>

#include "pevp/isa/builders.h"
#include "pevp/isa_text/format.h"
#include "pevp/platform/samples.h"

namespace {
using namespace pevp;

std::vector<isa::RawInstruction> stream(isa::Generation g) {
  std::vector<isa::RawInstruction> out;
  for (const auto& s : platform::sample_stream(g)) out.push_back(s.bytes);
  return out;
}

void BM_DecodeValidate(benchmark::State& state) {
  const auto g = static_cast<isa::Generation>(state.range(0));
  const auto program = stream(g);
  std::size_t i = 0;
  for (auto _ : state) {
    isa::Decoded d = isa::decode(g, program[i++ % program.size()]);
    benchmark::DoNotOptimize(d.violations.size());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetLabel(std::string(isa::name(g)));
}
BENCHMARK(BM_DecodeValidate)->DenseRange(0, 3);

// What a firmware handler pays per field it reads by path (Decoded::get).
void BM_GetByPath(benchmark::State& state) {
  const auto program = stream(isa::Generation::MARIANA);
  const isa::Decoded d = isa::decode(isa::Generation::MARIANA, program[0]);
  const std::string_view paths[] = {"num_active_rows", "src_mem_pattern.start_addr", "row_grp", "in_dtype"};
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(d.get_or(paths[i++ % 4], 0));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_GetByPath);

void BM_ToText(benchmark::State& state) {
  const auto program = stream(isa::Generation::MARIANA);
  std::vector<isa::Decoded> decoded;
  for (const auto& r : program) decoded.push_back(isa::decode(isa::Generation::MARIANA, r));
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(isa::to_text(decoded[i++ % decoded.size()]).size());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ToText);

void BM_EncodeMatmul(benchmark::State& state) {
  isa::MatmulArgs mm;
  mm.src = isa::Pattern::row(0x400, 512);
  mm.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, 512);
  for (auto _ : state) benchmark::DoNotOptimize(isa::encode_matmul(isa::Generation::MARIANA, mm)[0]);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_EncodeMatmul);

// The floor any decoder pays: copying the 64 bytes.
void BM_Copy64(benchmark::State& state) {
  const auto program = stream(isa::Generation::MARIANA);
  std::size_t i = 0;
  for (auto _ : state) {
    isa::RawInstruction r = program[i++ % program.size()];
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Copy64);

}  // namespace
