// Writing a file the user named (--trace, --vcd, --stats-json, --out, --dump,
// asm -o, demo --out-dir). What the path names decides how:
//   - a regular file, or nothing yet: the content goes to a temporary file next
//     to it, created under a unique name with O_EXCL (never through a planted
//     symlink, never shared by two writers), renamed into place once complete,
//     so a reader sees the old file or the whole new one, never half of it (an
//     existing file keeps its mode, a new one gets 0666 less the umask); a
//     regular file nobody may write (chmod a-w), or this user may not, is
//     refused ("the file is read-only") rather than replaced;
//   - a symlink: followed to what it finally names (the link itself stays, still
//     pointing where it pointed), then as above;
//   - one of this process's descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
//     /proc/self/fd/N, also through a symlink): written to the open descriptor
//     where it stands (a shell's >> append kept, nothing truncated or renamed);
//   - anything else that is not a directory -- a FIFO, a character device such
//     as /dev/null: written in place, never replaced by a file.
// Every failure (cannot create, a write or flush error such as ENOSPC on
// /dev/full, the rename) is reported with the path and the system's reason, and
// the temporary file is removed.
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

// The failures of write_file that show before writing ("" when there is none):
// an empty path, a symlink loop, a directory, a read-only file, a missing folder
// ("<path>: no such directory '<dir>'"). Commands call it before simulating, so a
// bad output costs no run.
std::string check_output(const std::string& path);

// An output a command was asked for: the option that named it and the path.
struct NamedOutput {
  std::string option;  // "--out", "--trace", "--dump 0x2000000:32x48:fp32"
  std::string path;    // "" = not asked for
};
// Two outputs that would land in the same file (symlinks and ".." resolved,
// relative and absolute spellings compared as absolute paths, hard links by
// device and inode; a FIFO, device or open descriptor may be named twice): "--out and --trace both name 'x.json'",
// or "" when there is none.
std::string same_file_twice(const std::vector<NamedOutput>& outputs);

}  // namespace pevp::files
