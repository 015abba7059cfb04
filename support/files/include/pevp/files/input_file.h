// Reading a whole file the user named (programs, register scripts, .npy
// operands, configuration files): a directory, a missing file or a read error
// is reported with the path and the system's reason, never as a stream
// exception or an empty input.
#pragma once

#include <optional>
#include <string>

namespace pevp::files {

// The file's bytes, or nothing with `*error` set ("<path>: is a directory",
// "<path>: cannot open: <reason>", "<path>: read error: <reason>").
std::optional<std::string> read_file(const std::string& path, std::string* error);

}  // namespace pevp::files
