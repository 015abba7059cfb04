// pe-vp as a PCI device of a QEMU guest: the platform, the PCI function in front of its system bus (models/pcie),
// the guest's RAM as the DMA engines' host region, and the interrupt lines turned into doorbell vectors.
// docs/qemu.md "The device end".
//
// Threads. The simulation runs on the thread that calls run() and keeps running -- the SEQ, the engine and the DMA
// engines go on between the guest's accesses -- until stop(); when nothing is left to simulate it suspends (the
// inbox is attached with async_attach_suspending) instead of ending, and waits for the next request. Every other
// thread (the link's) hands work in with post() / call(): a thread-safe queue whose arrival is signalled to the
// kernel with async_request_update, and an SC_THREAD that runs each item in simulated time, in arrival order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <systemc>

#include "pevp/pcie/host_memory.h"
#include "pevp/pcie/pci_function.h"
#include "pevp/platform/config.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/platform/platform.h"

namespace pevp::qemu_device {

// The model's own PCI identity (not a real product's): vendor 0x1234, device 0x7065, class 0x120000 (processing
// accelerator), revision 1, INTA#; the subsystem repeats vendor and device.
pcie::PciIdentity identity();

// The BARs, from the platform's address map (D-PCI-BARS): BAR0 the register space -- the APB faces, the SEQ's
// instruction queue, the DMA register face -- at offset = platform address - map.apb; BAR2 SBUF and PSUM at their
// platform addresses (a debugging window); BAR4 the HBM window. Each the smallest power of two that covers it.
// Throws std::invalid_argument when the map puts a register window below map.apb.
std::array<pcie::BarWindow, pcie::kBarSlots> bars(const platform::Platform& p);
inline constexpr unsigned kRegistersBar = 0, kMemoryBar = 2, kHbmBar = 4;

// The interrupt vectors (D-PCI-IRQ): the SEQ's line and the DMA engines' line.
inline constexpr unsigned kSeqVector = 0, kDmaVector = 1, kVectors = 2;

struct InterruptStats {
  std::array<std::uint64_t, kVectors> raised{};  // vector signals sent
};

class QemuDevice : public sc_core::sc_module {
 public:
  pcie::HostMemory host_memory;  // before the platform: it backs the platform's host region
  platform::Platform platform;
  pcie::PciFunction function;

  QemuDevice(sc_core::sc_module_name name, const platform::VpConfig& config);
  ~QemuDevice() override;

  // Called on the simulation thread for each vector signal: a rising edge of its line, or a write by the host to
  // the register face that owns a line still high afterwards (the handler cleared one cause, another is pending).
  std::function<void(unsigned vector)> raise;

  // ---- from any thread ----
  // Queues `work` for the simulation thread; false (and `work` dropped) once the device stopped.
  bool post(std::function<void()> work);
  // Runs `work` on the simulation thread and returns its value; `fallback` when the device stopped first.
  std::uint64_t call(const std::function<std::uint64_t()>& work, std::uint64_t fallback);
  // Ends run() after the work queued before it; later posts are refused.
  void stop();

  // ---- on the simulation thread (inside posted work) ----
  // One host BAR access (pcie::PciFunction::access), then the vector signal a write to an interrupt's register face
  // owes while its line stays high.
  pcie::BarStatus host_access(bool write, std::uint64_t address, unsigned size, std::uint64_t& value);
  // The power-on state (D-PCI-RESET): the configuration header, then the platform's hard reset
  // (pevp/platform/reset.h): the work queued, blocked or in flight dropped, every register, memory and queue as at
  // power-on, at the current simulated time. "" or why not (a platform that cannot be checkpointed, csrs.impl = rtl:
  // then only the header and the DMA queues were reset).
  std::string reset();

  // Runs the simulation until stop() (call from the thread that elaborated). Rethrows what the simulation threw;
  // either way the inbox is closed and work never run is dropped (its call() returns the fallback).
  void run();

  const InterruptStats& interrupt_stats() const { return irq_stats_; }

 private:
  class Inbox;
  static constexpr std::size_t kWorkerStackBytes = std::size_t{8} << 20;
  void worker();
  void on_line(unsigned vector, bool level);
  void after_host_write(const pcie::BarRecord& r);

  std::unique_ptr<Inbox> inbox_;
  std::array<bool, kVectors> level_{};
  InterruptStats irq_stats_;
  std::optional<platform::CheckpointImage> power_on_;  // taken before the host's first access (D-PCI-RESET)
  std::string power_on_error_;
};

}  // namespace pevp::qemu_device
