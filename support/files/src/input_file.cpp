#include "pevp/files/input_file.h"

#include "messages.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pevp::files {

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool InputFile::open(const std::string& path, std::string* error) {
  path_ = path;
  const auto fail = [&](const std::string& why) {
    if (error) *error = named(path) + ": " + why;
    return false;
  };
  if (path.empty()) return fail("no input file given");
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) return fail("cannot open" + reason(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return fail("cannot open" + reason(errno));
  // Opening a directory succeeds on Linux and fails only at the first read: say what it is.
  if (S_ISDIR(st.st_mode)) return fail("is a directory");
  if (S_ISREG(st.st_mode)) size_ = static_cast<std::uint64_t>(st.st_size);
  return true;
}

namespace {

// Appends up to `bytes` more bytes of `fd` to `out` (a std::string or a byte vector): fewer only at the end.
template <typename Buffer>
bool read_into(int fd, const std::string& path, std::uint64_t bytes, Buffer& out, std::string* error) {
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  while (bytes > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kChunk));
    const std::size_t at = out.size();
    out.resize(at + want);
    const ssize_t got = ::read(fd, &out[at], want);
    if (got < 0) {
      out.resize(at);
      if (errno == EINTR) continue;
      if (error) *error = named(path) + ": read error" + reason(errno);
      return false;
    }
    out.resize(at + static_cast<std::size_t>(got));
    if (got == 0) break;  // the end of the file
    bytes -= static_cast<std::uint64_t>(got);
  }
  return true;
}

}  // namespace

bool InputFile::read(std::uint64_t bytes, std::string& out, std::string* error) {
  return read_into(fd_, path_, bytes, out, error);
}

bool InputFile::read(std::uint64_t bytes, std::vector<std::uint8_t>& out, std::string* error) {
  return read_into(fd_, path_, bytes, out, error);
}

bool InputFile::discard(std::uint64_t bytes, std::uint64_t* discarded, std::string* error) {
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 16;
  std::vector<std::uint8_t> chunk;
  chunk.reserve(kChunk);
  *discarded = 0;
  while (*discarded < bytes) {
    chunk.clear();
    if (!read(std::min(kChunk, bytes - *discarded), chunk, error)) return false;
    if (chunk.empty()) break;  // the end of the file
    *discarded += chunk.size();
  }
  return true;
}

std::string pipe_named_twice(const std::vector<NamedInput>& inputs) {
  struct Pipe {
    dev_t dev;
    ino_t ino;
    const NamedInput* named;
  };
  std::vector<Pipe> seen;
  for (const NamedInput& in : inputs) {
    struct stat st {};
    if (in.path.empty() || ::stat(in.path.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
    for (const Pipe& other : seen)
      if (other.dev == st.st_dev && other.ino == st.st_ino)
        return other.named->option + " " + other.named->path + " and " + in.option + " " + in.path +
               " name the same pipe, which can be read only once: give each input its own file or pipe";
    seen.push_back({st.st_dev, st.st_ino, &in});
  }
  return "";
}

std::optional<std::string> read_file(const std::string& path, std::string* error, const InputKind& kind) {
  InputFile in;
  if (!in.open(path, error)) return std::nullopt;
  const auto too_large = [&] {
    if (error)
      *error = path + ": larger than the " + std::to_string(kind.max_bytes) + "-byte limit for " + kind.what;
    return std::nullopt;
  };
  // A regular file says its size: refused before a byte is read (a sparse file costs nothing).
  if (in.regular_size() && *in.regular_size() > kind.max_bytes) return too_large();
  std::string bytes;
  if (in.regular_size()) bytes.reserve(static_cast<std::size_t>(*in.regular_size()));
  // One byte past the limit tells a file at the limit from a larger one (a FIFO, /dev/zero, a file growing).
  if (!in.read(kind.max_bytes + 1, bytes, error)) return std::nullopt;
  if (bytes.size() > kind.max_bytes) return too_large();
  return bytes;
}

}  // namespace pevp::files
