// The PCI function as a model: its configuration header (config_space.h) and its BAR windows, each an initiator
// window onto the platform's system bus. A BAR access from the host arrives with its absolute bus address (the
// host's view, which the header's BAR bases decode); offset o of BAR b becomes a bus transaction at
// windows[b].bus_base + o. No fds, no sockets: the link (platform/mpqemu) and the glue that runs the simulation
// (platform/qemu_device) are above it. docs/qemu.md "The device end".
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/pcie/config_space.h"

namespace pevp::pcie {

// What a BAR maps: `size` bytes (a power of two; 0 = no BAR) whose offset o is bus address bus_base + o.
struct BarWindow {
  std::uint64_t size = 0;
  std::uint64_t bus_base = 0;
  std::string name;  // for statistics and the trace ("registers", "sbuf_psum", "hbm")
};

// A part of a BAR whose target takes only whole records (the SEQ's instruction queue takes 64-byte instructions),
// while a host writes at most 8 bytes at a time: the function gathers the host's writes per record and sends the
// record on the bus once every byte of it was written, in any order (D-PCI-IQ-RECORDS). A write to another record
// before the current one is complete drops the incomplete one (counted); a write that spans two records, and every
// read, is a bus error.
struct RecordWindow {
  unsigned bar = 0;
  std::uint64_t offset = 0, size = 0;  // in the BAR
  unsigned record_bytes = 0;
};

struct PciFunctionConfig {
  PciIdentity identity;
  std::array<BarWindow, kBarSlots> bars;
  std::vector<RecordWindow> record_windows;
};

// How a host BAR access ended. Anything but Ok reads all-ones and writes nothing (a PCI master abort).
enum class BarStatus : std::uint8_t {
  Ok,
  Disabled,    // the command register's memory-space bit is 0
  NotDecoded,  // no BAR holds the whole access
  BadSize,     // not 1, 2, 4 or 8 bytes
  BusError,    // the platform answered with an error (no target there, a refused access)
};
const char* name(BarStatus s);

// One host access, for observers.
struct BarRecord {
  bool write = false;
  std::uint64_t address = 0;  // bus address as the host gave it
  unsigned bar = 0;           // meaningful unless status is Disabled / NotDecoded / BadSize
  std::uint64_t offset = 0;
  unsigned size = 0;
  std::uint64_t value = 0;    // written, or read (all-ones on failure)
  BarStatus status = BarStatus::Ok;
  sc_core::sc_time start, end;
};

struct BarStats {
  std::uint64_t reads = 0, writes = 0, errors = 0;  // errors: bus errors on this BAR
};
struct FunctionStats {
  std::array<BarStats, kBarSlots> bars;
  std::uint64_t disabled = 0, not_decoded = 0, bad_size = 0;  // refused before reaching a BAR
  std::uint64_t config_reads = 0, config_writes = 0, config_refused = 0;
  std::uint64_t records_sent = 0, records_dropped = 0;  // record windows: whole records sent, incomplete dropped
};

class PciFunction : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<PciFunction> bus;  // bind to the platform's system bus

  // Throws std::invalid_argument naming the BAR when a window's size is not a BAR size (config_space.h).
  PciFunction(sc_core::sc_module_name name, PciFunctionConfig config);

  // Configuration cycles (no simulated time).
  std::uint32_t config_read(std::uint32_t offset, std::int64_t length);
  bool config_write(std::uint32_t offset, std::uint32_t value, std::int64_t length);
  const ConfigSpace& config_space() const { return config_space_; }
  // The header's power-on values; incomplete records are dropped.
  void reset();

  // One BAR read or write of `size` bytes at bus address `address`; `value` is the data (little-endian, in the
  // low `size` bytes), replaced by the read value. Takes the bus transaction's time with wait(): call it from an
  // SC_THREAD.
  BarStatus access(bool write, std::uint64_t address, unsigned size, std::uint64_t& value);

  const PciFunctionConfig& config() const { return config_; }
  const FunctionStats& stats() const { return stats_; }
  // Called after every BAR access (including refused ones), for the trace.
  std::function<void(const BarRecord&)> observer;

 private:
  struct Staging {
    bool active = false;
    std::uint64_t record = 0;  // its offset in the window
    std::vector<std::uint8_t> bytes;
    std::vector<bool> written;
    unsigned count = 0;
  };
  // The bus transaction of an access (size bytes of data at bus address `address`); false on an error response.
  bool transact(bool write, std::uint64_t address, std::uint8_t* data, unsigned size);
  // A write inside record window w: gathered; the whole record sent once complete.
  BarStatus gather(std::size_t w, std::uint64_t offset_in_bar, const std::uint8_t* data, unsigned size);

  PciFunctionConfig config_;
  ConfigSpace config_space_;
  FunctionStats stats_;
  std::vector<Staging> staging_;  // one per record window
};

// The sizes of the windows, as the configuration header takes them.
BarSizes bar_sizes(const std::array<BarWindow, kBarSlots>& bars);

// The smallest power of two >= bytes (and >= ConfigSpace::kMinBarBytes): a BAR that covers `bytes`.
std::uint64_t bar_size_covering(std::uint64_t bytes);

}  // namespace pevp::pcie
