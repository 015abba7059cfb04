#include "pevp/platform/reset.h"

#include <string>
#include <vector>

namespace pevp::platform {

namespace {
bool in_thread_process() {
  const sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
  return h.valid() && h.proc_kind() == sc_core::SC_THREAD_PROC_;
}
}  // namespace

CheckpointImage power_on_state(const Platform& p) {
  const std::vector<std::uint8_t> bytes = save_checkpoint(p);
  return read_checkpoint(bytes.data(), bytes.size(), p.vp_config(), "(power-on state)");
}

void hard_reset(Platform& p, const CheckpointImage& power_on) {
  // Refusals first, so that a refused reset changes nothing (apply_checkpoint below checks the rest of the image
  // before it changes anything, and after the work is dropped the platform is at an idle point).
  if (!in_thread_process())
    throw CheckpointError("a hard reset must run in a SystemC thread process (the host's): it settles the "
                          "interrupt lines over two delta cycles");
  if (power_on.gen != p.config().gen || power_on.config != to_json(p.vp_config()))
    throw CheckpointError("a hard reset's power-on state must be this platform's own (power_on_state): it was taken "
                          "from a platform of another configuration");
  p.seq.drop_work();
  p.dma.hard_reset();
  p.forget_dma_span();
  p.hbm.import_pages({});  // device memory reads zeros again
  // A thread that was already runnable in this delta when it was reset unwinds and restarts when the kernel runs it,
  // not inside reset(): one delta cycle later every restarted thread has parked, and the platform is at an idle point.
  sc_core::wait(sc_core::SC_ZERO_TIME);
  // An idle platform is the same at every time: the power-on state applied now, not at time zero.
  CheckpointImage now = power_on;
  now.time_value = sc_core::sc_time_stamp().value();
  apply_checkpoint(p, now);
  p.hazards.powered_on();  // the checkpoint's restore counts the engine as armed; at power-on it is not
}

}  // namespace pevp::platform
