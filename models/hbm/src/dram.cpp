#include "pevp/hbm/dram.h"

#include "pevp/memory/tlm_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

namespace pevp::hbm {
namespace {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The configuration, after reporting it as a platform construction mistake when it is unusable.
const DramConfig& validated(const DramConfig& c) {
  if (const std::string why = check_config(c); !why.empty()) {
    SC_REPORT_ERROR(("/pevp/" + c.name + "/config").c_str(), why.c_str());
    throw std::invalid_argument(c.name + ": " + why);  // when the report handler was told not to throw
  }
  return c;
}

buffers::LargeBuffer map_backing_store(const DramConfig& c) {
  try {
    return buffers::LargeBuffer(c.bytes, buffers::Backing::Sparse);
  } catch (const std::bad_alloc&) {
    const std::string why = "cannot map " + std::to_string(c.bytes) + " bytes (" +
                            std::to_string(c.bytes >> 20) + " MiB) of address space for the memory's data " +
                            "(an address-space limit such as ulimit -v, or overcommit_memory=2?)";
    SC_REPORT_ERROR(("/pevp/" + c.name + "/mapping").c_str(), why.c_str());
    throw;
  }
}

memory::Direction direction(Op op) { return op == Op::Write ? memory::Direction::Write : memory::Direction::Read; }

bool all_zero(const std::uint8_t* p, std::size_t n) {
  return n == 0 || (p[0] == 0 && std::memcmp(p, p + 1, n - 1) == 0);
}

// Which host pages of the calling process may hold a written byte: those present in memory or swapped out
// (/proc/self/pagemap bits 63 and 62). A page never written is neither (a read of it maps the shared zero page,
// which is present: it is then scanned and found zero). Without pagemap every page may.
class CommittedPages {
 public:
  CommittedPages() : fd_(open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) {}
  ~CommittedPages() {
    if (fd_ >= 0) close(fd_);
  }
  CommittedPages(const CommittedPages&) = delete;
  CommittedPages& operator=(const CommittedPages&) = delete;

  // Fills `out` with one flag per host page, for the `count` pages from page number `first_page` (address / page).
  void query(std::uintptr_t first_page, std::size_t count, std::vector<bool>& out) {
    out.assign(count, true);
    if (fd_ < 0) return;
    entries_.resize(count);
    const auto bytes = static_cast<ssize_t>(count * sizeof(std::uint64_t));
    if (pread(fd_, entries_.data(), static_cast<std::size_t>(bytes), static_cast<off_t>(first_page * 8)) != bytes)
      return;
    constexpr std::uint64_t kPresent = std::uint64_t{1} << 63, kSwapped = std::uint64_t{1} << 62;
    for (std::size_t i = 0; i < count; ++i) out[i] = (entries_[i] & (kPresent | kSwapped)) != 0;
  }

 private:
  int fd_;
  std::vector<std::uint64_t> entries_;
};

}  // namespace

Dram::Dram(sc_core::sc_module_name name, DramConfig config)
    : sc_core::sc_module(name),
      socket("socket"),
      bus_socket("bus_socket"),
      config_(std::move(config)),
      channels_(channel_timing(validated(config_))),
      storage_(map_backing_store(config_)),
      resolution_ps_(sc_core::sc_get_time_resolution().to_seconds() * 1e12) {
  socket.register_b_transport(this, &Dram::b_transport);
  socket.register_get_direct_mem_ptr(this, &Dram::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &Dram::transport_dbg);
  bus_socket.register_b_transport(this, &Dram::b_transport);
  bus_socket.register_get_direct_mem_ptr(this, &Dram::get_direct_mem_ptr);
  bus_socket.register_transport_dbg(this, &Dram::transport_dbg);
}

std::uint64_t Dram::to_ps(const sc_core::sc_time& t) const {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(t.value()) * resolution_ps_));
}

sc_core::sc_time Dram::to_time(std::uint64_t ps) const {
  return sc_core::sc_time::from_value(
      static_cast<sc_core::sc_time::value_type>(std::llround(static_cast<double>(ps) / resolution_ps_)));
}

std::uint64_t Dram::book(const Request& request) {
  const std::uint64_t done = channels_.access(request);
  if (channel_observer)
    for (const ChannelBusy& b : channels_.last_busy())
      channel_observer(b.channel, to_time(b.start_ps), to_time(b.end_ps), b.bytes, direction(request.op));
  return done;
}

sc_core::sc_time Dram::access(const memory::TimedAccess& a) {
  const std::uint64_t size = storage_.size();
  if (a.address > size || a.bytes > size - a.address)
    throw std::out_of_range("/pevp/" + config_.name + ": access at " + hex(a.address) + " of " +
                            std::to_string(a.bytes) + " bytes ends past the memory's " + std::to_string(size) +
                            " bytes");
  Request r;
  r.address = a.address;
  r.bytes = a.bytes;
  r.op = a.direction == memory::Direction::Write ? Op::Write : Op::Read;
  r.start_ps = to_ps(a.start);
  r.requester = a.requester;
  return to_time(book(r));
}

void Dram::fail(tlm::tlm_generic_payload& trans, tlm::tlm_response_status status, const char* what) {
  ++errors_;
  trans.set_response_status(status);
  // Per-transaction detail at debug verbosity: the status is the software-visible error, and SC_REPORT_ERROR would
  // throw out of b_transport.
  const std::string id = "/pevp/" + config_.name + "/" + what;
  const std::string msg = "address " + hex(trans.get_address()) + " length " + std::to_string(trans.get_data_length()) +
                          ": " + trans.get_response_string();
  SC_REPORT_INFO_VERB(id.c_str(), msg.c_str(), sc_core::SC_DEBUG);
}

void Dram::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  // A refused access costs the round trip and books no channel.
  if (const auto refused = memory::check_access(trans, storage_.size())) {
    delay += config_.latency;
    return fail(trans, refused->status, refused->what);
  }
  if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  const sc_dt::uint64 addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  const bool read = trans.get_command() == tlm::TLM_READ_COMMAND;
  // The channels move the whole burst, whatever its byte enables.
  memory::copy_access(trans, storage_.data() + addr);
  Request r;
  r.address = addr;
  r.bytes = len;
  r.op = read ? Op::Read : Op::Write;
  const sc_core::sc_time start = sc_core::sc_time_stamp() + delay;
  r.start_ps = to_ps(start);
  r.requester = kBusRequester;
  // The completion is never before the start; the guard keeps a coarser time resolution's rounding from
  // wrapping the unsigned sc_time.
  const sc_core::sc_time done = to_time(book(r));
  if (done > start) delay += done - start;
  trans.set_dmi_allowed(true);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool Dram::get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  if (!memory::grant_whole(trans, dmi, storage_.data(), storage_.size())) return false;
  // Only the unloaded latency: DMI bypasses the channels, so a DMI user asks access() for the time of each access,
  // contention included (docs/memory-system.md).
  dmi.set_read_latency(config_.latency);
  dmi.set_write_latency(config_.latency);
  return true;
}

unsigned int Dram::transport_dbg(tlm::tlm_generic_payload& trans) {
  return memory::debug_access(trans, storage_.data(), storage_.size());
}

PageImage Dram::export_pages() const {
  PageImage image;
  const std::uint64_t size = storage_.size();
  const std::uint8_t* base = storage_.data();
  const auto host_page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t step = std::max<std::uint64_t>(host_page, kImagePageBytes);
  // The buffer starts on a host page (mmap), and a host page is a multiple of kImagePageBytes on every host pe-vp
  // builds for; the pagemap is asked a batch of pages at a time.
  constexpr std::size_t kBatch = 8192;
  CommittedPages committed;
  std::vector<bool> flags;
  for (std::uint64_t batch = 0; batch < size; batch += kBatch * step) {
    const std::uint64_t batch_end = std::min<std::uint64_t>(size, batch + kBatch * step);
    const auto first_page = reinterpret_cast<std::uintptr_t>(base + batch) / host_page;
    committed.query(first_page, static_cast<std::size_t>((batch_end - batch + host_page - 1) / host_page), flags);
    for (std::uint64_t at = batch; at < batch_end; at += kImagePageBytes) {
      if (!flags[(at - batch) / host_page]) continue;
      const std::uint64_t n = std::min(kImagePageBytes, size - at);
      if (all_zero(base + at, n)) continue;
      image.emplace_back(at, std::vector<std::uint8_t>(base + at, base + at + n));
    }
  }
  return image;
}

std::string Dram::import_pages(const PageImage& image) {
  const std::uint64_t size = storage_.size();
  std::uint64_t next = 0;  // the lowest offset the next page may have
  for (std::size_t i = 0; i < image.size(); ++i) {
    const auto& [offset, bytes] = image[i];
    const std::string where = "page " + std::to_string(i) + " at " + hex(offset);
    if (offset % kImagePageBytes != 0)
      return where + ": offset not a multiple of " + std::to_string(kImagePageBytes);
    if (offset >= size) return where + ": past the memory's " + std::to_string(size) + " bytes";
    if (offset < next) return where + ": offsets must ascend without repeating";
    const std::uint64_t expected = std::min(kImagePageBytes, size - offset);
    if (bytes.size() != expected)
      return where + ": " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(expected);
    next = offset + kImagePageBytes;
  }
  // Valid: start from a zero memory (its pages given back, at the same address, so DMI pointers stay valid) and
  // write the image's pages.
  storage_.zero();
  for (const auto& [offset, bytes] : image) std::memcpy(storage_.data() + offset, bytes.data(), bytes.size());
  return {};
}

std::string Dram::restore_timing(const ChannelState& state) {
  if (std::string why = channels_.check_state(state); !why.empty()) return why;
  channels_.restore(state);
  return {};
}

}  // namespace pevp::hbm
