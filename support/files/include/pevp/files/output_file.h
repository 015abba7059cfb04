// Writing a file the user named (--trace, --vcd, --stats-json, --out, --dump,
// asm -o, demo --out-dir). What the path names decides how:
//   - a regular file, or nothing yet: the content goes to a temporary file next
//     to it, renamed into place once complete, so a reader sees the old file or
//     the whole new one, never half of it (an existing file keeps its mode);
//   - a symlink: followed to what it finally names (the link itself stays, still
//     pointing where it pointed), then as above;
//   - anything else that is not a directory -- a FIFO, a character device such
//     as /dev/null or /dev/stdout: written in place, never replaced by a file.
// Every failure (cannot create, a write or flush error such as ENOSPC on
// /dev/full, the rename) is reported with the path and the system's reason.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace pevp::files {

// Writes what `emit` puts on the stream to `path`. Returns false with `*error`
// set ("<path>: <why>") when anything fails; a failed write leaves an existing
// regular file unchanged.
bool write_file(const std::string& path, const std::function<void(std::ostream&)>& emit, std::string* error);

// The same for a block of bytes.
bool write_file(const std::string& path, const void* data, std::size_t size, std::string* error);

// An output a command was asked for: the option that named it and the path.
struct NamedOutput {
  std::string option;  // "--out", "--trace", "--dump 0x2000000:32x48:fp32"
  std::string path;    // "" = not asked for
};
// Two outputs that would land in the same file (symlinks and ".." resolved; a
// FIFO or device may be named twice): "--out and --trace both name 'x.json'",
// or "" when there is none.
std::string same_file_twice(const std::vector<NamedOutput>& outputs);

}  // namespace pevp::files
