#include "pevp/platform/virtual_platform.h"

#include <exception>
#include <stdexcept>

#include "pevp/platform/config.h"

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
  sc_core::sc_start();
  if (impl_->host.failure) std::rethrow_exception(impl_->host.failure);
  if (!impl_->host.finished)
    throw std::runtime_error("the simulation stopped before the driver program finished (deadlock: no events left)");
  return sc_core::sc_time_stamp();
}

}  // namespace pevp::platform
