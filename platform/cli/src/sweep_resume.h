// What `pe-vp sweep` says when SIGINT or SIGTERM stopped it: the command that resumes it (docs/sweeps.md,
// "Interrupting and resuming").
#pragma once

#include <string>

#include "pevp/platform/sweep_cmd.h"

namespace pevp::platform {

// The command line, quoted for a POSIX shell, that continues `cmd`'s sweep: the same binary, spec, folder and
// options, with --resume.
std::string resume_command(const SweepCommand& cmd);

}  // namespace pevp::platform
