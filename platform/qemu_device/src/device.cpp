#include "pevp/qemu_device/device.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <stdexcept>

#include "pevp/capi/stale_stack_poison.h"
#include "pevp/dma/dma_engines.h"
#include "pevp/isa/layout.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/platform/reset.h"

namespace pevp::qemu_device {

using sc_core::sc_time;

pcie::PciIdentity identity() {
  pcie::PciIdentity id;
  id.vendor = 0x1234;
  id.device = 0x7065;
  id.class_code = 0x120000;  // base class 0x12 (processing accelerator), subclass 0, interface 0
  id.revision = 1;
  id.subsystem_vendor = id.vendor;
  id.subsystem = id.device;
  id.interrupt_pin = 1;
  return id;
}

std::array<pcie::BarWindow, pcie::kBarSlots> bars(const platform::Platform& p) {
  const platform::AddressMap& m = p.config().map;
  const auto at_or_above_apb = [&](std::uint64_t base, const char* key) {
    if (base < m.apb)
      throw std::invalid_argument(std::string("address_map.") + key + " lies below address_map.apb: BAR0 maps the "
                                  "register windows at their offset from address_map.apb");
  };
  at_or_above_apb(m.iq, "iq");
  at_or_above_apb(m.dma, "dma");
  const std::uint64_t registers_end = std::max({m.apb + m.apb_size, m.iq + m.iq_size, m.dma + m.dma_size});
  const std::uint64_t memories_base = std::min(m.sbuf, m.psum);
  const std::uint64_t memories_end = std::max(m.sbuf + p.sbuf.size(), m.psum + p.psum.size());
  const std::uint64_t hbm_window = std::min<std::uint64_t>(m.hbm_window_size, p.hbm.size());
  std::array<pcie::BarWindow, pcie::kBarSlots> b{};
  b[kRegistersBar] = {pcie::bar_size_covering(registers_end - m.apb), m.apb, "registers"};
  b[kMemoryBar] = {pcie::bar_size_covering(memories_end - memories_base), memories_base, "sbuf_psum"};
  b[kHbmBar] = {pcie::bar_size_covering(hbm_window), m.hbm_window, "hbm"};
  return b;
}

// The queue between the link's thread and the simulation: any thread posts, the simulation thread takes.
class QemuDevice::Inbox : public sc_core::sc_prim_channel {
 public:
  explicit Inbox(const char* name) : sc_core::sc_prim_channel(name) {
    // Starvation suspends the kernel until the next post instead of ending sc_start.
    async_attach_suspending();
  }
  bool post(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closed_) return false;
      queue_.push_back(std::move(work));
    }
    async_request_update();
    return true;
  }
  // Closes the inbox: later posts are refused; what is queued still runs.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    async_request_update();
  }
  bool take(std::function<void()>& work) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.empty()) return false;
    work = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }
  bool closed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }
  void detach() { async_detach_suspending(); }
  const sc_core::sc_event& arrived() const { return arrived_; }

 private:
  void update() override { arrived_.notify(sc_core::SC_ZERO_TIME); }
  mutable std::mutex mutex_;
  std::deque<std::function<void()>> queue_;
  bool closed_ = false;
  sc_core::sc_event arrived_;
};

namespace {

pcie::PciFunctionConfig function_config(const platform::Platform& p) {
  pcie::PciFunctionConfig c;
  c.identity = identity();
  c.bars = bars(p);
  // The SEQ's instruction queue takes whole 64-byte instructions; a host writes at most 8 bytes at a time.
  const platform::AddressMap& m = p.config().map;
  c.record_windows.push_back({kRegistersBar, m.iq - m.apb, m.iq_size, static_cast<unsigned>(isa::kInstructionBytes)});
  return c;
}

}  // namespace

QemuDevice::QemuDevice(sc_core::sc_module_name name, const platform::VpConfig& config)
    : sc_core::sc_module(name),
      host_memory("host_memory", config.host_memory.bytes),
      platform("vp", config, platform::HostRegionBacking{&host_memory.socket, &host_memory, host_memory.size()}),
      function("pci", function_config(platform)),
      inbox_(std::make_unique<Inbox>("inbox")) {
  host_memory.time_by(platform.host_memory);
  function.bus.bind(platform.bus.target);
  // The worker saves and applies checkpoints (DEVICE_RESET) on its stack: a main thread's size, as the C API's host
  // thread has, not SystemC's small default.
  sc_core::sc_spawn_options worker_options;
  worker_options.set_stack_size(kWorkerStackBytes);
  sc_core::sc_spawn([this] { worker(); }, "worker", &worker_options);
  const std::array<sc_core::sc_signal<bool>*, kVectors> lines = {&platform.seq.irq, &platform.dma.irq};
  for (unsigned v = 0; v < kVectors; ++v) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&lines[v]->value_changed_event());
    o.dont_initialize();
    sc_core::sc_signal<bool>* line = lines[v];
    sc_core::sc_spawn([this, v, line] { on_line(v, line->read()); }, sc_core::sc_gen_unique_name("irq"), &o);
  }
}

QemuDevice::~QemuDevice() = default;

bool QemuDevice::post(std::function<void()> work) { return inbox_->post(std::move(work)); }

std::uint64_t QemuDevice::call(const std::function<std::uint64_t()>& work, std::uint64_t fallback) {
  auto done = std::make_shared<std::promise<std::uint64_t>>();
  std::future<std::uint64_t> result = done->get_future();
  // The promise is kept by the work item: a device that stops with it queued still runs it (stop() drains).
  if (!post([done, &work] { done->set_value(work()); })) return fallback;
  try {
    return result.get();
  } catch (const std::future_error&) {
    return fallback;  // dropped unrun: the simulation ended first
  }
}

void QemuDevice::stop() { inbox_->close(); }

void QemuDevice::run() {
  const auto drop_unrun = [this] {
    inbox_->close();
    std::function<void()> work;
    while (inbox_->take(work)) work = nullptr;
    inbox_->detach();
  };
  try {
    sc_core::sc_start();
  } catch (...) {
    drop_unrun();
    throw;
  }
  drop_unrun();
}

pcie::BarStatus QemuDevice::host_access(bool write, std::uint64_t address, unsigned size, std::uint64_t& value) {
  const pcie::BarStatus s = function.access(write, address, size, value);
  if (write && s == pcie::BarStatus::Ok) {
    // The lines settle a few delta cycles after the write (the face's method, then the signal's update).
    for (int delta = 0; delta < 3; ++delta) sc_core::wait(sc_core::SC_ZERO_TIME);
    if (const auto hit = function.config_space().decode(address, size)) {
      pcie::BarRecord r;
      r.write = true;
      r.bar = hit->bar;
      r.offset = hit->offset;
      r.status = s;
      after_host_write(r);
    }
  }
  return s;
}

void QemuDevice::worker() {
  // The power-on state, before the host's first access (D-PCI-RESET).
  try {
    power_on_ = platform::power_on_state(platform);
  } catch (const std::exception& e) {
    power_on_error_ = e.what();
  }
  std::function<void()> work;
  for (;;) {
    while (inbox_->take(work)) {
      // An exception caught on this stack in an earlier item (a refused reset) left redzones poisoned under ASan
      // (capi/stale_stack_poison.h); this is the stack's first frame, so half of it below here is the items'.
      capi::clear_stale_stack_poison(kWorkerStackBytes / 2);
      work();
      work = nullptr;
    }
    if (inbox_->closed()) {
      // What was queued before the close ran; nothing can come after it.
      while (inbox_->take(work)) work();
      sc_core::sc_stop();
      return;
    }
    sc_core::wait(inbox_->arrived());
  }
}

void QemuDevice::on_line(unsigned vector, bool level) {
  const bool rising = level && !level_[vector];
  level_[vector] = level;
  if (!rising) return;
  ++irq_stats_.raised[vector];
  if (raise) raise(vector);
}

void QemuDevice::after_host_write(const pcie::BarRecord& r) {
  if (!r.write || r.status != pcie::BarStatus::Ok || r.bar != kRegistersBar) return;
  const platform::AddressMap& m = platform.config().map;
  const std::uint64_t address = m.apb + r.offset;
  // The face that owns each line: the vp_seq face (its irq registers) and the DMA register face.
  const bool seq_face = address >= m.vp_seq() && address < m.apb + m.apb_size;
  const bool dma_face = address >= m.dma && address < m.dma + m.dma_size;
  const unsigned vector = seq_face ? kSeqVector : dma_face ? kDmaVector : kVectors;
  if (vector == kVectors || !level_[vector]) return;
  ++irq_stats_.raised[vector];
  if (raise) raise(vector);
}

std::string QemuDevice::reset() {
  function.reset();
  if (!power_on_) {
    // No power-on state to apply (csrs.impl = rtl): at least no DMA goes on reaching guest memory.
    dma::DmaEngines& d = platform.dma;
    d.hard_reset();
    return "no power-on state to return to: " + power_on_error_;
  }
  try {
    platform::hard_reset(platform, *power_on_);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace pevp::qemu_device
