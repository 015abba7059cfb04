// The timing of a DRAM as a set of channels, each a first-come first-served server (plain C++, no SystemC): the
// timing core behind hbm::Dram, testable alone as arr_seq's Timeline is.
//
// An access of B bytes at address a is split over the channels by address interleaving: consecutive blocks of
// interleave_bytes go to consecutive channels, round robin. Each channel serves its share at bandwidth / channels,
// starting at the later of the access's presentation and the time the channel is free; the access completes when
// its last share ends, plus the memory's latency. This captures the bandwidth each channel gives, the contention
// between requesters that share a channel and the latency of a loaded DRAM; it ignores banks, rows, refresh and
// read/write turnaround (docs/memory-system.md, "What the model ignores"). Accesses are served in the order they
// are asked, which under temporal decoupling is not always the order of their presentation times.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pevp::hbm {

enum class Op : std::uint8_t { Read, Write };

// What the timing depends on; DramConfig (dram_config.h) carries the same figures with their units.
struct ChannelTiming {
  unsigned channels = 1;
  double bandwidth_gbps = 1;  // the sum over channels, in GB/s (1e9 bytes/s = 1 byte/ns)
  std::uint64_t latency_ps = 0;
  unsigned interleave_bytes = 1;
};

// Why a ChannelTiming cannot be used ("" if it can): the core's own preconditions, checked before any division.
std::string check_timing(const ChannelTiming& timing);

struct ChannelStats {
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t busy_ps = 0;   // time the channel spent serving shares
  std::uint64_t accesses = 0;  // accesses that had a share on the channel
};
inline bool operator==(const ChannelStats& a, const ChannelStats& b) {
  return a.bytes_read == b.bytes_read && a.bytes_written == b.bytes_written && a.busy_ps == b.busy_ps &&
         a.accesses == b.accesses;
}

struct RequesterStats {
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
};
inline bool operator==(const RequesterStats& a, const RequesterStats& b) {
  return a.bytes_read == b.bytes_read && a.bytes_written == b.bytes_written;
}

struct Request {
  std::uint64_t address = 0;  // local to the memory
  std::uint64_t bytes = 0;
  Op op = Op::Read;
  std::uint64_t start_ps = 0;  // when the access is presented
  unsigned requester = 0;
};

// One channel's part of an access: the interval it kept the channel busy.
struct ChannelBusy {
  unsigned channel = 0;
  std::uint64_t start_ps = 0;
  std::uint64_t end_ps = 0;
  std::uint64_t bytes = 0;
};

// Everything that decides later accesses' times and the statistics: what a checkpoint saves.
struct ChannelState {
  std::vector<std::uint64_t> free_ps;  // per channel: when it has served every share booked so far
  std::vector<ChannelStats> channels;
  std::map<unsigned, RequesterStats> requesters;
};
inline bool operator==(const ChannelState& a, const ChannelState& b) {
  return a.free_ps == b.free_ps && a.channels == b.channels && a.requesters == b.requesters;
}

class ChannelModel {
 public:
  // Throws std::invalid_argument with check_timing's reason when the timing is unusable.
  explicit ChannelModel(const ChannelTiming& timing);

  // Books the access on its channels and returns when it completes (>= start_ps; an access of 0 bytes books
  // nothing and completes at its start). last_busy() then holds its channels' busy intervals.
  std::uint64_t access(const Request& request);

  // Bytes of [address, address + bytes) on each channel (a vector of channels() entries).
  std::vector<std::uint64_t> share(std::uint64_t address, std::uint64_t bytes) const;
  // The time one channel takes to serve `bytes` at its share of the bandwidth, rounded up to whole picoseconds.
  std::uint64_t service_ps(std::uint64_t bytes) const;

  const std::vector<ChannelBusy>& last_busy() const { return last_busy_; }
  const ChannelTiming& timing() const { return timing_; }
  unsigned channels() const { return timing_.channels; }
  const std::vector<ChannelStats>& channel_stats() const { return state_.channels; }
  const std::map<unsigned, RequesterStats>& requester_stats() const { return state_.requesters; }
  const ChannelState& state() const { return state_; }
  // Why `state` cannot be this model's (wrong channel count, a channel busier than the time it was free), or "".
  std::string check_state(const ChannelState& state) const;
  // Takes a saved state; throws std::invalid_argument with check_state's reason first.
  void restore(ChannelState state);

 private:
  void split(std::uint64_t address, std::uint64_t bytes, std::vector<std::uint64_t>& per_channel) const;

  ChannelTiming timing_;
  ChannelState state_;
  std::vector<std::uint64_t> shares_;  // scratch of access(), kept to avoid an allocation per access
  std::vector<ChannelBusy> last_busy_;
};

}  // namespace pevp::hbm
