#include "pevp/platform/simulation_context.h"

#include <systemc>

namespace pevp::platform {

void fresh_simulation_context() {
  // sc_get_curr_simcontext() makes a context on its first use and hands out sc_curr_simcontext after that; the
  // default global context is the one sc_elab_and_sim and the kernel's own objects were made in.
  delete sc_core::sc_curr_simcontext;
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  // Counts of reports (errors, warnings) belong to a run; the actions set by the program stay.
  sc_core::sc_report_handler::initialize();
}

}  // namespace pevp::platform
