// The configuration of a DRAM model (hbm::Dram): the core's device memory (HBM) and the host's memory behind its
// PCIe link are both one. Defaults per generation come from FACTS.md "Memory and data movement" where it has a
// figure and from the model decisions D-HBM-* and D-HOST-MEMORY-* where it has none (docs/memory-system.md).
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "pevp/hbm/channel_model.h"
#include "pevp/isa/generation.h"
#include "pevp/params/param.h"

namespace pevp::hbm {

struct DramConfig {
  std::string name = "dram";  // unit name in message IDs (/pevp/<name>/addr_error): "hbm" or "host_memory"
  std::uint64_t bytes = std::uint64_t{1} << 30;
  unsigned channels = 1;
  double bandwidth_gbps = 64;  // the sum over channels; GB/s = 1e9 bytes/s
  sc_core::sc_time latency = sc_core::sc_time(100, sc_core::SC_NS);
  unsigned interleave_bytes = 256;  // consecutive blocks of this size go to consecutive channels
};

// The ranges check_config and the configuration keys allow. The smallest memory is one page of the checkpoint image
// and a multiple of every default channels x interleave_bytes (16 x 256), so each key's range holds with the
// others at their defaults.
inline constexpr std::uint64_t kMinDramBytes = 4096;
inline constexpr std::uint64_t kMaxDramBytes = std::uint64_t{256} << 30;  // a whole Trn3 chip's 144 GiB fits
inline constexpr unsigned kMaxChannels = 64;
inline constexpr double kMinBandwidthGbps = 1, kMaxBandwidthGbps = 100000;
inline constexpr double kMaxLatencyNs = 1e6;  // the configuration's range for every time key (1 ms)
inline constexpr unsigned kMaxInterleaveBytes = 1u << 20;

// "" when the configuration is usable, else which key breaks which rule.
std::string check_config(const DramConfig& config);

// The keys of a DramConfig (the platform puts them in sections "hbm" and "host_memory"): bytes, channels,
// bandwidth_gbps, latency_ns, interleave_bytes.
const params::Params<DramConfig>& dram_parameters();

// One core's share of the chip's HBM (capacity and bandwidth / 8 cores): CAYMAN (Trn2) 12 GiB at 362.5 GB/s;
// MARIANA and MARIANA_PLUS (Trn3) 18 GiB at 612.5 GB/s; MAVERICK has no public figure and takes Trn3's. 16 channels
// of 256-byte interleave and 100 ns latency (D-HBM-CHANNELS, D-HBM-LATENCY).
DramConfig hbm_config(isa::Generation gen);
// The host's memory as the device sees it over a PCIe Gen5 x16-class link: 1 GiB, one channel, 64 GB/s, 1 us
// (D-HOST-MEMORY-LINK). The same for every generation.
DramConfig host_memory_config(isa::Generation gen);

// The timing core's figures of a configuration (latency in whole picoseconds).
ChannelTiming channel_timing(const DramConfig& config);

}  // namespace pevp::hbm
