// What the reader and the writer of user files put in their messages: the path as named, and the system's reason.
#pragma once

#include <cstring>
#include <string>

namespace pevp::files {

// ": <strerror(e)>", or "" when there is no error number.
inline std::string reason(int e) { return e ? std::string(": ") + std::strerror(e) : std::string(); }

// The path as a message names it; an empty one is shown as such, not as nothing.
inline std::string named(const std::string& path) { return path.empty() ? std::string("(empty path)") : path; }

}  // namespace pevp::files
