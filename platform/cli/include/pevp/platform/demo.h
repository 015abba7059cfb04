// pe-vp demo: every generation's sample stream (platform/samples.h) decoded, checked against the validity rules,
// and run to completion on the platform -- each generation in a `pe-vp run` child process, since SystemC elaborates
// one platform per process.
#pragma once

#include <iosfwd>
#include <string>

namespace pevp::platform {

// `self`: the pe-vp executable the runs are started with. `out_dir` (optional): where sample_<GEN>.bin are written,
// created with its parents when missing (a path that exists and is not a folder is refused before anything runs).
// `quiet`: only the verdict line and what fails (a rule a sample breaks, a run's output when it fails).
// Exit status: 0 when every stream decodes valid and runs to completion, 1 when one does not, 2 when a file or
// folder cannot be written or a run cannot be started.
// `coverage_path` (optional): every stream's run with --coverage, merged into this file (docs/coverage.md).
int run_demo(const std::string& self, const std::string& out_dir, bool quiet, std::ostream& out, std::ostream& err,
             const std::string& coverage_path = "");

}  // namespace pevp::platform
