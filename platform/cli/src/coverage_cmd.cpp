#include "pevp/platform/coverage_cmd.h"

#include <stdexcept>

#include "pevp/coverage/collector.h"

namespace pevp::platform {

int run_coverage(const CoverageCommand& cmd, std::ostream& out, std::ostream& err) {
  coverage::Collector merged;
  merged.set_runs(0);
  for (const std::string& path : cmd.files) {
    try {
      merged.merge(coverage::read_file(path));
    } catch (const std::invalid_argument& e) {
      err << "pe-vp coverage: " << e.what() << '\n';
      return 1;
    }
  }
  if (!cmd.quiet) out << coverage::report(merged, cmd.files.size());
  if (!cmd.merge_to.empty()) {
    std::string error;
    if (!coverage::write_file(cmd.merge_to, merged, &error)) {
      err << "pe-vp coverage: " << error << '\n';
      return 2;
    }
    if (!cmd.quiet) out << "\nwrote " << cmd.merge_to << " (" << cmd.files.size() << " files merged)\n";
  }
  return 0;
}

}  // namespace pevp::platform
