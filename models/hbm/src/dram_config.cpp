#include "pevp/hbm/dram_config.h"

#include <cmath>

namespace pevp::hbm {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr unsigned kCoresPerChip = 8;  // FACTS.md "Memory and data movement": the chip's HBM is shared by 8 cores

// A chip's HBM as FACTS.md gives it.
struct ChipHbm {
  std::uint64_t bytes;
  double bandwidth_gbps;
};
constexpr ChipHbm kTrn2{96 * kGiB, 2900};   // NC-v3
constexpr ChipHbm kTrn3{144 * kGiB, 4900};  // NC-v4

ChipHbm chip_hbm(isa::Generation gen) {
  switch (gen) {
    case isa::Generation::CAYMAN: return kTrn2;
    case isa::Generation::MARIANA:
    case isa::Generation::MARIANA_PLUS:
    case isa::Generation::MAVERICK: return kTrn3;  // v5 has no public figure: the nearest documented one
  }
  return kTrn3;
}

std::string number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

bool power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

std::string check_config(const DramConfig& c) {
  if (c.bytes < kMinDramBytes || c.bytes > kMaxDramBytes)
    return "bytes (" + std::to_string(c.bytes) + ") must be in [" + std::to_string(kMinDramBytes) + ", " +
           std::to_string(kMaxDramBytes) + "]";
  if (c.channels == 0 || c.channels > kMaxChannels)
    return "channels (" + std::to_string(c.channels) + ") must be in [1, " + std::to_string(kMaxChannels) + "]";
  if (!(c.bandwidth_gbps >= kMinBandwidthGbps && c.bandwidth_gbps <= kMaxBandwidthGbps))
    return "bandwidth_gbps (" + number(c.bandwidth_gbps) + ") must be in [" + number(kMinBandwidthGbps) + ", " +
           number(kMaxBandwidthGbps) + "] GB/s";
  const double latency_ns = c.latency / sc_core::sc_time(1, sc_core::SC_NS);
  if (latency_ns > kMaxLatencyNs)
    return "latency_ns (" + number(latency_ns) + ") must be at most " + number(kMaxLatencyNs) + " ns";
  if (!power_of_two(c.interleave_bytes) || c.interleave_bytes > kMaxInterleaveBytes)
    return "interleave_bytes (" + std::to_string(c.interleave_bytes) + ") must be a power of two in [1, " +
           std::to_string(kMaxInterleaveBytes) + "]";
  const std::uint64_t stripe = std::uint64_t{c.channels} * c.interleave_bytes;
  if (c.bytes % stripe != 0)
    return "bytes (" + std::to_string(c.bytes) + ") must be a multiple of channels x interleave_bytes (" +
           std::to_string(c.channels) + " x " + std::to_string(c.interleave_bytes) + " = " + std::to_string(stripe) +
           "), so every channel holds the same capacity";
  return {};
}

const params::Params<DramConfig>& dram_parameters() {
  using D = DramConfig;
  static const params::Params<D> list = {
      {"bytes", "bytes", "FACTS.md chip HBM / 8 cores (hbm); model choice D-HOST-MEMORY-LINK (host_memory)",
       params::Kind::Count, kMinDramBytes, kMaxDramBytes, &D::bytes},
      {"channels", "channels", "model choice D-HBM-CHANNELS (hbm), D-HOST-MEMORY-LINK (host_memory)",
       params::Kind::Count, 1, kMaxChannels, &D::channels},
      {"bandwidth_gbps", "GB/s", "FACTS.md chip HBM / 8 cores (hbm); model choice D-HOST-MEMORY-LINK (host_memory)",
       params::Kind::Real, static_cast<std::uint64_t>(kMinBandwidthGbps), static_cast<std::uint64_t>(kMaxBandwidthGbps),
       &D::bandwidth_gbps},
      {"latency_ns", "ns", "model choice D-HBM-LATENCY (hbm), D-HOST-MEMORY-LINK (host_memory)",
       params::Kind::TimeNs, 0, 0, &D::latency},
      {"interleave_bytes", "bytes", "model choice D-HBM-CHANNELS", params::Kind::Count, 1, kMaxInterleaveBytes,
       &D::interleave_bytes},
  };
  return list;
}

DramConfig hbm_config(isa::Generation gen) {
  const ChipHbm chip = chip_hbm(gen);
  DramConfig c;
  c.name = "hbm";
  c.bytes = chip.bytes / kCoresPerChip;
  c.bandwidth_gbps = chip.bandwidth_gbps / kCoresPerChip;
  c.channels = 16;  // D-HBM-CHANNELS: 4 HBM3 stacks x 32 pseudo-channels / 8 cores
  c.interleave_bytes = 256;
  c.latency = sc_core::sc_time(100, sc_core::SC_NS);  // D-HBM-LATENCY
  return c;
}

DramConfig host_memory_config(isa::Generation) {
  DramConfig c;
  c.name = "host_memory";
  c.bytes = kGiB;
  c.channels = 1;
  c.bandwidth_gbps = 64;  // PCIe Gen5 x16: 32 GT/s x 16 lanes / 8 bits per byte, per direction
  c.interleave_bytes = 256;
  c.latency = sc_core::sc_time(1, sc_core::SC_US);
  return c;
}

ChannelTiming channel_timing(const DramConfig& c) {
  ChannelTiming t;
  t.channels = c.channels;
  t.bandwidth_gbps = c.bandwidth_gbps;
  t.latency_ps = static_cast<std::uint64_t>(std::llround(c.latency / sc_core::sc_time(1, sc_core::SC_PS)));
  t.interleave_bytes = c.interleave_bytes;
  return t;
}

}  // namespace pevp::hbm
