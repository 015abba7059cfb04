// A DRAM as a TLM-2.0 target: the core's device memory (HBM) and the host's memory behind its link are each one.
// Data lives in a sparse anonymous mapping (only the pages touched cost memory, untouched bytes read zero); time
// comes from the channel model (channel_model.h), which a DMA engine also asks directly through
// memory::TimedTarget when it moves its bytes by DMI or not at all. b_transport keeps memory::Memory's error
// policy: start at an error status, upgrade to OK only when the access succeeded, leave memory untouched on every
// error. docs/memory-system.md describes the model and its parameters.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "pevp/buffers/large_buffer.h"
#include "pevp/hbm/channel_model.h"
#include "pevp/hbm/dram_config.h"
#include "pevp/memory/timed_target.h"

namespace pevp::hbm {

// The requester b_transport books its accesses under (TLM payloads carry no requester).
inline constexpr unsigned kBusRequester = std::numeric_limits<unsigned>::max();

// A checkpoint's image of the data: the pages holding a non-zero byte, each (local offset, its bytes), offsets
// ascending and multiples of kImagePageBytes; a page is kImagePageBytes long except at the end of the memory.
using PageImage = std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>>;
inline constexpr std::uint64_t kImagePageBytes = 4096;

class Dram : public sc_core::sc_module, public memory::TimedTarget {
 public:
  // Optional: a platform whose DMA host region is backed elsewhere (platform.h HostRegionBacking) leaves its host
  // memory's port unbound.
  tlm_utils::simple_target_socket_optional<Dram> socket;
  // A second port on the same memory for the system bus (a driver's window onto device memory); the same handlers.
  // A simple target socket takes one initiator, and the DMA engines hold `socket`.
  tlm_utils::simple_target_socket_optional<Dram> bus_socket;

  // Called once per channel busy interval an access books (b_transport's and access()'s), for trace tracks.
  std::function<void(unsigned channel, sc_core::sc_time start, sc_core::sc_time end, std::uint64_t bytes,
                     memory::Direction direction)>
      channel_observer;

  // Reports /pevp/<name>/config (an unusable configuration) or /pevp/<name>/mapping (the address space for the
  // backing store could not be mapped) with SC_REPORT_ERROR, which throws by default.
  Dram(sc_core::sc_module_name name, DramConfig config);
  Dram(const Dram&) = delete;
  Dram& operator=(const Dram&) = delete;

  // The timing core: when an access presented at a.start completes, contention included; books the channels.
  // Throws std::out_of_range naming the access when it does not lie inside the memory.
  sc_core::sc_time access(const memory::TimedAccess& a) override;

  const DramConfig& config() const { return config_; }
  std::uint64_t size() const { return storage_.size(); }
  // The fast functional path: local address a is data()[a]. Writing through it commits the page it touches.
  std::uint8_t* data() { return storage_.data(); }
  const std::uint8_t* data() const { return storage_.data(); }
  // Local range [offset, offset + bytes) is about to be written densely through data(): its pages may be committed
  // 2 MiB at a time rather than 4 KiB (LargeBuffer::advise_dense). Changes no byte and no timing.
  void advise_dense(std::uint64_t offset, std::uint64_t bytes) {
    storage_.advise_dense(static_cast<std::size_t>(offset), static_cast<std::size_t>(bytes));
  }

  const std::vector<ChannelStats>& channel_stats() const { return channels_.state().channels; }
  const std::map<unsigned, RequesterStats>& requester_stats() const { return channels_.state().requesters; }
  // Transactions answered with an error status since construction.
  std::uint64_t errors() const { return errors_; }

  // Checkpoint support. export_pages scans only the pages the host has committed (or swapped out), so a memory that
  // was barely touched exports fast. import_pages replaces the whole content (every page not in the image reads
  // zero afterwards) and returns "" -- or why the image is not this memory's, with nothing changed.
  PageImage export_pages() const;
  std::string import_pages(const PageImage& image);
  const ChannelState& timing_state() const { return channels_.state(); }
  // "" or why the state is not this memory's (nothing changed then).
  std::string restore_timing(const ChannelState& state);
  void restore_errors(std::uint64_t errors) { errors_ = errors; }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  void fail(tlm::tlm_generic_payload& trans, tlm::tlm_response_status status, const char* what);
  std::uint64_t to_ps(const sc_core::sc_time& t) const;
  sc_core::sc_time to_time(std::uint64_t ps) const;
  std::uint64_t book(const Request& request);  // channels_.access + the observer

  DramConfig config_;
  ChannelModel channels_;
  buffers::LargeBuffer storage_;
  double resolution_ps_;  // sc_time's unit in ps
  std::uint64_t errors_ = 0;
};

}  // namespace pevp::hbm
