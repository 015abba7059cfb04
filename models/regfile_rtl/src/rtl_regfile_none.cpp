// A build without Verilator: the RTL register files are not there, and asking for one says so.
#include <stdexcept>

#include "pevp/regfile_rtl/rtl_regfile.h"

namespace pevp::regfile_rtl {

bool rtl_available() { return false; }

std::unique_ptr<RtlRegFile> make_rtl_regfile(sc_core::sc_module_name, Face face, apb::ApbBus&, RtlRegFileConfig) {
  throw std::runtime_error("this build has no RTL register files (Verilator was not found when it was configured; "
                           "scripts/setup.sh installs it): cannot make the " + std::string(face_name(face)) + " RTL");
}

}  // namespace pevp::regfile_rtl
