// One configuration for the whole virtual platform: a
// preset per generation, a JSON format that covers every model parameter that
// exists today, `--set key=value` overrides and a file loader. Every rejected
// input is a ConfigError whose message names the dotted key, the value given and
// what is allowed -- a configuration mistake must never reach a model
// constructor, where it would end as an SC_REPORT_ERROR or a bad_alloc.
//
// The geometry (PE rows/cols, partitions, SBUF/PSUM bytes, PSUM banks) starts
// at the generation's preset and can be overridden (geometry.*); the platform
// hands the one isa::ArrayGeometry to every unit. Members that follow from the
// others or from the generation (the tile grid, queues, XBUS ports,
// psum_partition_bytes) are dumped and accepted only with their value.
//
// docs/configuration.md lists every key with its unit, default, range and source.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "pevp/isa/generation.h"
#include "pevp/isa/geometry.h"
#include "pevp/dma/dma_engines.h"
#include "pevp/energy/energy_model.h"
#include "pevp/hbm/dram_config.h"
#include "pevp/memory/memory.h"
#include "pevp/pe_array/executor.h"
#include "pevp/platform/platform.h"
#include "pevp/regfile/arr_seq_csrs.h"

namespace pevp::platform {


enum class TimingModel : std::uint8_t { Pevp, ScalesimWs };

// csrs.impl: the arr_seq CSR block's top, cluster and protected faces as the TLM register model, or as the
// generated register RTL, Verilated, behind TLM -> APB4 bridges (docs/cosim.md). The environment variable
// PEVP_CSRS_IMPL (tlm or rtl) sets the default, so a test suite can run whole against either.
enum class CsrsImpl : std::uint8_t { Tlm, Rtl };
CsrsImpl default_csrs_impl();

// pe_array.impl: what computes the PE array's arithmetic -- the executor's C++ kernels, or the Verilated PE tile
// (models/pe_rtl) as its datapath, on an array of a size the tile was built for, running the micro-ops the tile
// supports and refusing the others (docs/cosim.md "The datapath in the loop", D-ARRAY-SEAM).
enum class PeArrayImpl : std::uint8_t { Cpp, Rtl };

struct VpConfig {
  // Generation, address map, arr_seq and SEQ parameters. platform.seq.window_bytes
  // always equals platform.map.iq_size (one parameter, the key address_map.iq_size).
  PlatformConfig platform;
  // Tensor-engine (PE array) clock: converts the cost model's cycles to time
  // (platform.arr_seq.timing.clock_ghz is set from it).
  double tensor_engine_clock_ghz = 2.4;
  // tensor_engine.psum_rounding: how a Matmul's bf16 PSUM output rounds -- to nearest even (the default, as the
  // Neuron runtime's NEURON_RT_STOCHASTIC_ROUNDING_EN defaults to off) or stochastically from the PSUM seeds that
  // PeManageSeed saves and loads (NeuronCore-v4 only). D-SR-RNG.
  pe::Bf16Rounding psum_rounding = pe::Bf16Rounding::NearestEven;
  SimMode mode = SimMode::Both;
  // timing.model: pe-vp's own pipelined cost model (docs/timing.md), or a preset reproducing SCALE-Sim v2's
  // weight-stationary compute model for cross-checking published SCALE-Sim figures (`pe-vp gemm` reports it beside
  // pe-vp's own; docs/sweeps.md "The SCALE-Sim preset").
  TimingModel timing_model = TimingModel::Pevp;
  // The machine's shape, for every unit (geometry.* keys). The memories'
  // partitions and sizes below always follow it.
  isa::ArrayGeometry geometry;
  // SBUF and PSUM: the geometry fields come from `geometry`, the latencies and
  // beat size are parameters.
  memory::MemoryConfig sbuf = memory::sbuf_config(isa::Generation::MARIANA);
  memory::MemoryConfig psum = memory::psum_config(isa::Generation::MARIANA);
  // The arr_seq CSR block: APB access time and the unmapped-offset policy. The
  // face offsets inside the block are fixed (AddressMap::top() ...).
  regfile::ArrSeqCsrsConfig csrs;
  CsrsImpl csrs_impl = default_csrs_impl();
  PeArrayImpl pe_array_impl = PeArrayImpl::Cpp;
  // The memory system (docs/memory-system.md): the core's device memory (HBM), the host's memory behind its link,
  // and the DMA engines that move data between them, SBUF and PSUM.
  hbm::DramConfig hbm = hbm::hbm_config(isa::Generation::MARIANA);
  hbm::DramConfig host_memory = hbm::host_memory_config(isa::Generation::MARIANA);
  dma::DmaConfig dma = dma::dma_config(isa::Generation::MARIANA);
  // The energy model's price per action (energy.*, docs/energy.md): the same on every generation, 45 nm figures.
  energy::EnergyConfig energy;
  // Host threads the PE array's arithmetic may use (0: every CPU this process may run on,
  // pe::available_host_threads()). Not a model parameter: results and simulated time are the same for every value,
  // so it is no configuration key (a dumped configuration stays the same on every host); `--threads` sets it.
  unsigned host_threads = 0;
  // checks.hazards: what the VP does with a driver's hazard -- a race with an instruction in flight, a read of an
  // open accumulation group, a submit before arming, a write to read-only or reserved register bits (hazards.h).
  HazardMode hazards = HazardMode::Warn;

  isa::Generation gen() const { return platform.gen; }
};

// A configuration mistake. what() is the whole message, e.g.
//   "arr_seq.ififo_depth = 0: out of range (1..65536)";
// key() is the dotted key it is about ("" when it is about no single key, such
// as a JSON syntax error).
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string key, const std::string& message);
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// The defaults of one generation: geometry from isa::preset_geometry, the address map
// of D-ADDR / D-PLATFORM-MAP, the model's depths and latencies, the FACTS.md
// tensor-engine clock (2.4 GHz on CAYMAN and MARIANA; a model choice after that).
// VpConfig{} equals preset(isa::Generation::MARIANA).
VpConfig preset(isa::Generation gen);

// Every key (geometry included), times in nanoseconds, addresses as "0x..."
// strings. nlohmann::json keeps object keys sorted, so the output is stable.
nlohmann::json to_json(const VpConfig& config);

// Applies a (possibly partial) JSON object on top of `base`. A "generation" key
// first replaces `base` by that generation's preset, then the other keys apply.
// Throws ConfigError on an unknown key (naming the dotted path and the valid keys
// at that level), a wrong type, an out-of-range value, a geometry the model
// cannot address (isa::check_geometry), overlapping address windows, or an
// unknown mode.
VpConfig from_json(const nlohmann::json& json, const VpConfig& base = VpConfig{});

// One `--set key=value`: a dotted key and a value parsed for that key's type --
// integers in decimal or 0x hex, times as "20", "20 ns", "1.5 us" (ps/ns/us/ms/s;
// a bare number is in the key's unit), clocks as "2.4", "2.4 GHz", "2400 MHz",
// names as plain text. Same rules and errors as from_json; `config` is unchanged
// when it throws.
void apply_override(VpConfig& config, std::string_view assignment);

// Several `--set`s applied together and validated once, so the rules that
// relate keys (geometry.pe_rows <= geometry.partitions, ...) hold for the
// result whatever the order given. `config` is unchanged when it throws.
void apply_overrides(VpConfig& config, const std::vector<std::string>& assignments);

// Reads a JSON file (// and /* */ comments allowed) and applies it on top of
// `base` with from_json. Errors start with the file name; a syntax error gives
// "<file>:<line>:<column>: JSON syntax error: ...".
VpConfig load_config(const std::string& path, const VpConfig& base = VpConfig{});
// The same for a file's text already read; `path` names it in the errors. For a command that must read its inputs
// in a set order (the configuration before a source whose .gen directive chooses the preset it applies on).
VpConfig load_config_text(const std::string& text, const std::string& path, const VpConfig& base = VpConfig{});

// Checks a configuration built in code the way from_json checks a file: every
// key's range, the geometry's rules (isa::check_geometry), the window overlaps, the
// mode, seq.window_bytes == map.iq_size. Throws ConfigError.
void validate(const VpConfig& config);

}  // namespace pevp::platform
