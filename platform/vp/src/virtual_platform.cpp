#include "pevp/platform/virtual_platform.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "pevp/platform/config.h"
#include "pevp/platform/interrupt.h"

namespace pevp::platform {

namespace {

class Host : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Host> socket;
  std::function<void(Driver&)> program;
  std::exception_ptr failure;
  bool finished = false;

  SC_HAS_PROCESS(Host);

  Host(sc_core::sc_module_name n, const AddressMap& map, const sc_core::sc_signal_in_if<bool>& irq)
      : sc_core::sc_module(n), socket("socket"), driver_(socket, map, irq) {
    SC_THREAD(main);
  }

 private:
  void main() {
    try {
      if (program) program(driver_);
    } catch (...) {
      failure = std::current_exception();
    }
    finished = true;
    sc_core::sc_stop();
  }
  Driver driver_;
};

// Simulates as sc_start() does, in slices of this much simulated time, so that a watched signal (interrupt.h) is seen
// between two of them. A slice is a few milliseconds of wall time in a timing run (docs/running.md, "Interrupting a
// run"); slicing changes no event's order or time. A run whose simulated time hardly moves (a functional one) is
// paused instead at the first instruction that leaves the SEQ after the signal.
sc_core::sc_time interrupt_slice() { return sc_core::sc_time(10, sc_core::SC_US); }

void simulate_in_slices(seq::Seq& seq) {
  const auto previous = seq.left_observer;
  seq.left_observer = [previous](std::uint64_t index) {
    if (previous) previous(index);
    if (interrupt_signal() != 0) sc_core::sc_pause();  // ends the current delta cycle's sc_start
  };
  struct Restore {
    seq::Seq& seq;
    std::function<void(std::uint64_t)> previous;
    ~Restore() { seq.left_observer = previous; }
  } restore{seq, previous};
  for (bool first = true;; first = false) {
    // At least up to the next event: a slice that ends before it would return with nothing done (an engine's next
    // event may lie a long way ahead) and the loop would never move. The first call elaborates: no event yet.
    const sc_core::sc_time step =
        first ? interrupt_slice() : std::max(interrupt_slice(), sc_core::sc_time_to_pending_activity());
    sc_core::sc_start(step, sc_core::SC_EXIT_ON_STARVATION);
    if (sc_core::sc_get_status() == sc_core::SC_STOPPED) return;  // the driver program's end: sc_stop()
    if (const int signal = interrupt_signal()) {
      const sc_core::sc_time at = sc_core::sc_time_stamp();
      sc_core::sc_stop();  // the kernel ends here: no later sc_start resumes the suspended driver program
      throw Interrupted(signal, at);
    }
    if (!sc_core::sc_pending_activity()) return;  // starved: the deadlock run() reports
  }
}

}  // namespace

struct VirtualPlatform::Impl {
  Platform platform;
  Host host;
  explicit Impl(const PlatformConfig& c) : platform("vp", c), host("host", c.map, platform.seq.irq) {
    host.socket.bind(platform.bus.target);
  }
  explicit Impl(const VpConfig& c)
      : platform("vp", c), host("host", c.platform.map, platform.seq.irq) {
    host.socket.bind(platform.bus.target);
  }
};

VirtualPlatform::VirtualPlatform(const PlatformConfig& config) : impl_(std::make_unique<Impl>(config)) {}
VirtualPlatform::VirtualPlatform(const VpConfig& config) : impl_(std::make_unique<Impl>(config)) {}
VirtualPlatform::~VirtualPlatform() = default;
Platform& VirtualPlatform::platform() { return impl_->platform; }
const AddressMap& VirtualPlatform::map() const { return impl_->platform.config().map; }

sc_core::sc_time VirtualPlatform::run(std::function<void(Driver&)> program) {
  impl_->host.program = std::move(program);
  // The host ends the simulation with sc_stop(); the kernel's "Simulation stopped
  // by user" info (type /OSCI/SystemC) is the normal end of a program, not news.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  if (interrupt_watched())
    simulate_in_slices(impl_->platform.seq);
  else
    sc_core::sc_start();
  if (impl_->host.failure) std::rethrow_exception(impl_->host.failure);
  if (!impl_->host.finished)
    throw std::runtime_error("the simulation stopped before the driver program finished (deadlock: no events left)");
  return sc_core::sc_time_stamp();
}

}  // namespace pevp::platform
