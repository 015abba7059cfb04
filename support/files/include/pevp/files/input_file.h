// Reading a whole file the user named (programs, register scripts, .npy
// operands, configuration files, checkpoints): a directory, a missing file or a
// read error is reported with the path and the system's reason, never as a
// stream exception or an empty input; and no file is read past the limit of its
// kind, checked while reading -- a regular file from its size before a byte is
// read, a FIFO or device (/dev/zero) when the limit is passed -- so an input
// cannot grow the host's memory without bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pevp::files {

// The host memory a command may plan to hold (pe-vp gemm's operand estimate,
// .npy operands, the largest checkpoint): 16 GiB. docs/reliability.md, "host memory".
inline constexpr std::uint64_t kHostMemoryLimitBytes = std::uint64_t{16} << 30;

// A kind of input and the most bytes a file of it may hold; `what` names it in
// the message "<path>: larger than the <max_bytes>-byte limit for <what>".
struct InputKind {
  const char* what;
  std::uint64_t max_bytes;
};
// Text and instruction files (assembly, .bin programs, register scripts,
// configuration files): 256 MiB, four million 64-byte instructions -- far
// past any program or configuration, and small enough to hold at once.
inline constexpr InputKind kTextInput{"a program, script or configuration file", std::uint64_t{256} << 20};
// .npy operands, which the host holds whole: bounded by the host-memory limit.
// (A checkpoint's bound comes from its configuration: platform::checkpoint_input.)
inline constexpr InputKind kNpyInput{"a .npy file", kHostMemoryLimitBytes};

// The file's bytes, or nothing with `*error` set ("<path>: is a directory",
// "<path>: cannot open: <reason>", "<path>: read error: <reason>",
// "<path>: larger than the N-byte limit for <kind>").
std::optional<std::string> read_file(const std::string& path, std::string* error,
                                     const InputKind& kind = kTextInput);

// One open input read piece by piece (a .npy reader checks the header before
// it reads the data). Errors as read_file's.
class InputFile {
 public:
  InputFile() = default;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();
  bool open(const std::string& path, std::string* error);
  // Appends up to `bytes` more bytes to `out`: fewer only at the end of the file.
  bool read(std::uint64_t bytes, std::string& out, std::string* error);
  bool read(std::uint64_t bytes, std::vector<std::uint8_t>& out, std::string* error);
  // Reads and drops up to `bytes` more bytes (fewer only at the end of the file), holding 64 KiB at a time: a FIFO's
  // data its reader does not need must still be drained, or its writer waits for ever. `*discarded` says how many.
  bool discard(std::uint64_t bytes, std::uint64_t* discarded, std::string* error);
  // The size of a regular file (nothing for a FIFO or device, whose size is unknown before reading).
  std::optional<std::uint64_t> regular_size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::optional<std::uint64_t> size_;
};

// An input a command was given: the option that named it and the path ("" = not given).
struct NamedInput {
  std::string option;  // "--a", "--load", "program"
  std::string path;
};
// Two inputs that name one pipe -- a FIFO or an open pipe such as bash's <(...), through symlinks and /dev/fd/N:
// "--a p and --b p name the same pipe, ...", or "" when there is none. A pipe's bytes can be read once, and a FIFO
// opened again after its writer has left waits for another writer for ever. A path that cannot be stat()ed is
// skipped: opening it reports that.
std::string pipe_named_twice(const std::vector<NamedInput>& inputs);

}  // namespace pevp::files
