// `pe-vp qemu-device`: the VP as a PCI device of a QEMU 7.2 guest through x-pci-proxy-dev (docs/qemu.md "The
// device end"). The link's thread receives each mpqemu message, validates it, and hands config and BAR accesses
// and resets to the simulation (device.h), answering each with one RET; SYNC_SYSMEM maps the guest's RAM and
// installs it as the DMA engines' host region; the interrupt lines become ivshmem-doorbell vectors (and, under
// KVM, the INTx eventfd for the SEQ's line).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/mpqemu/guest_ram.h"
#include "pevp/mpqemu/link.h"
#include "pevp/platform/config.h"
#include "pevp/platform/recorder.h"
#include "pevp/qemu_device/device.h"

namespace pevp::qemu_device {

struct QemuDeviceOptions {
  platform::RecorderOptions outputs;     // --trace, --stats-json, ...
  std::vector<std::string> qemu_argv;    // the QEMU to start (argv[0] is the program); empty with the fd form
  int proxy_fd = -1, ivshmem_fd = -1;    // the fd form: sockets whose other ends a QEMU already holds
  bool log_messages = false;             // one line per refused message and per SYNC_SYSMEM on `err`
};

// Runs until QEMU exits (or its proxy socket closes, in the fd form), SIGINT or SIGTERM. Returns QEMU's exit status
// (128 + signal when a signal ended it), 0 in the fd form when the proxy closed its socket, 2 for a usage or setup
// error, 3 when the link broke or the simulation failed.
int run_qemu_device(const platform::VpConfig& config, const QemuDeviceOptions& options, std::ostream& out,
                    std::ostream& err);

// The link's side, for run_qemu_device and the tests: serves `link` on the calling thread until the peer leaves,
// the link breaks or `stop_fd` becomes readable, then stops the device. Returns why it ended ("" when the peer
// closed the connection between messages).
struct LinkServer {
  LinkServer(QemuDevice& d, mpqemu::Link& l) : device(d), link(l) {}
  QemuDevice& device;
  mpqemu::Link& link;
  mpqemu::GuestRam guest_ram;
  std::ostream* log = nullptr;  // refused messages, SYNC_SYSMEM refusals, failed resets
  bool log_syncs = false;       // also each SYNC_SYSMEM's layout
  // SET_IRQFD's interrupt eventfd (KVM's INTx), -1 until it came. Guarded: the simulation thread writes it.
  mpqemu::UniqueFd intx;
  std::mutex intx_mutex;
  std::uint64_t bar_failures = 0, config_refused = 0, resets = 0, reset_failures = 0;

  std::string serve(int stop_fd = -1);
  // Signals the INTx eventfd (from the simulation thread: the SEQ's vector).
  void signal_intx();

 private:
  void dispatch(mpqemu::Message& m);
  bool reply_ok_ = true;  // the last reply reached the peer
};

// The "pcie" section of --stats-json: BAR accesses by BAR and kind, refusals, config cycles, the device's DMA to
// host memory, the link's messages by command, the guest-RAM maps, the vectors raised.
nlohmann::json pcie_stats(const QemuDevice& device, const LinkServer& server);

}  // namespace pevp::qemu_device
