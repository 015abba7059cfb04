#include "pevp/hbm/channel_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pevp::hbm {

std::string check_timing(const ChannelTiming& t) {
  if (t.channels == 0) return "channels must be > 0";
  if (t.interleave_bytes == 0) return "interleave_bytes must be > 0";
  if (!(t.bandwidth_gbps > 0) || !std::isfinite(t.bandwidth_gbps))
    return "bandwidth_gbps must be a finite number > 0, got " + std::to_string(t.bandwidth_gbps);
  return {};
}

namespace {

const ChannelTiming& checked(const ChannelTiming& t) {
  if (const std::string why = check_timing(t); !why.empty()) throw std::invalid_argument("hbm timing: " + why);
  return t;
}

}  // namespace

ChannelModel::ChannelModel(const ChannelTiming& timing)
    : timing_(checked(timing)), shares_(timing_.channels) {
  state_.free_ps.assign(timing_.channels, 0);
  state_.channels.assign(timing_.channels, ChannelStats{});
  last_busy_.reserve(timing_.channels);
}

std::vector<std::uint64_t> ChannelModel::share(std::uint64_t address, std::uint64_t bytes) const {
  std::vector<std::uint64_t> per(timing_.channels);
  split(address, bytes, per);
  return per;
}

void ChannelModel::split(std::uint64_t address, std::uint64_t bytes, std::vector<std::uint64_t>& per) const {
  const std::uint64_t n = timing_.channels, block = timing_.interleave_bytes;
  std::fill(per.begin(), per.end(), 0);
  if (bytes == 0) return;
  const std::uint64_t last_byte = address + (bytes - 1);
  const std::uint64_t first_block = address / block, last_block = last_byte / block;
  if (first_block == last_block) {
    per[first_block % n] = bytes;
    return;
  }
  // The partial first and last blocks, then the whole blocks between them: `rounds` full turns over every channel
  // and `extra` more blocks on the channels after the first block's.
  per[first_block % n] += block - address % block;
  per[last_block % n] += last_byte % block + 1;
  const std::uint64_t whole = last_block - first_block - 1, rounds = whole / n, extra = whole % n;
  for (std::uint64_t c = 0; c < n; ++c) per[c] += rounds * block;
  std::uint64_t channel = (first_block + 1) % n;  // one division, not one per block
  for (std::uint64_t k = 0; k < extra; ++k) {
    per[channel] += block;
    if (++channel == n) channel = 0;
  }
}

std::uint64_t ChannelModel::service_ps(std::uint64_t bytes) const {
  // bandwidth_gbps bytes per ns over all channels: one channel moves a byte in 1000 x channels / bandwidth ps.
  // In long double, so a share of gigabytes keeps its picoseconds before the rounding up.
  return static_cast<std::uint64_t>(std::ceil(static_cast<long double>(bytes) * 1000.0L * timing_.channels /
                                              static_cast<long double>(timing_.bandwidth_gbps)));
}

std::uint64_t ChannelModel::access(const Request& r) {
  last_busy_.clear();
  if (r.bytes == 0) return r.start_ps;
  split(r.address, r.bytes, shares_);
  const bool write = r.op == Op::Write;
  std::uint64_t last_end = r.start_ps;
  // Most channels of an access carry the same share (whole turns of blocks): its service time is computed once.
  std::uint64_t priced_bytes = 0, priced_ps = 0;
  for (unsigned c = 0; c < timing_.channels; ++c) {
    const std::uint64_t bytes = shares_[c];
    if (bytes == 0) continue;
    if (bytes != priced_bytes) {
      priced_bytes = bytes;
      priced_ps = service_ps(bytes);
    }
    std::uint64_t& free = state_.free_ps[c];
    const std::uint64_t start = std::max(r.start_ps, free);
    const std::uint64_t service = priced_ps;
    free = start + service;
    last_end = std::max(last_end, free);
    ChannelStats& s = state_.channels[c];
    (write ? s.bytes_written : s.bytes_read) += bytes;
    s.busy_ps += service;
    ++s.accesses;
    last_busy_.push_back({c, start, free, bytes});
  }
  RequesterStats& who = state_.requesters[r.requester];
  (write ? who.bytes_written : who.bytes_read) += r.bytes;
  return last_end + timing_.latency_ps;
}

std::string ChannelModel::check_state(const ChannelState& s) const {
  const auto n = std::to_string(timing_.channels);
  if (s.free_ps.size() != timing_.channels)
    return "free times for " + std::to_string(s.free_ps.size()) + " channels, the memory has " + n;
  if (s.channels.size() != timing_.channels)
    return "statistics for " + std::to_string(s.channels.size()) + " channels, the memory has " + n;
  for (unsigned c = 0; c < timing_.channels; ++c)
    if (s.channels[c].busy_ps > s.free_ps[c])
      return "channel " + std::to_string(c) + " busy for " + std::to_string(s.channels[c].busy_ps) +
             " ps but free from " + std::to_string(s.free_ps[c]) + " ps (a channel is busy only before it is free)";
  return {};
}

void ChannelModel::restore(ChannelState state) {
  if (const std::string why = check_state(state); !why.empty()) throw std::invalid_argument("hbm state: " + why);
  state_ = std::move(state);
}

}  // namespace pevp::hbm
