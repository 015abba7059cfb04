#include "pevp/files/output_file.h"

#include "messages.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <streambuf>
#include <system_error>
#include <utility>

namespace pevp::files {
namespace {

namespace fs = std::filesystem;

// Symlink chains longer than this are a loop (the limit POSIX systems use).
constexpr int kMaxSymlinkHops = 40;


// The descriptor of this process a path names -- /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N,
// /proc/self/fd/N, /proc/thread-self/fd/N, /proc/<own pid>/fd/N -- or -1. These are not files to replace:
// their link text ("pipe:[123]", or a file the shell opened with >>) is no path to write beside, and the
// descriptor carries state a replacement would lose (an append position, a pipe's reader).
int named_descriptor(const fs::path& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  if (ec) return -1;
  const std::string s = abs.lexically_normal().string();
  if (s == "/dev/stdin") return 0;
  if (s == "/dev/stdout") return 1;
  if (s == "/dev/stderr") return 2;
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"),
                                    "/proc/" + std::to_string(::getpid()) + "/fd/"}) {
    if (s.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string n = s.substr(prefix.size());
    if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::atoi(n.c_str());
  }
  return -1;
}

// What `path` finally names, following symlinks (a dangling one names its target): a path, or one of this
// process's descriptors (`fd` >= 0) when a name on the way is one.
struct Resolved {
  fs::path target;
  int fd = -1;
};

bool resolve(const fs::path& path, Resolved& r, std::string& why) {
  r.target = path;
  for (int hop = 0; hop < kMaxSymlinkHops; ++hop) {
    if ((r.fd = named_descriptor(r.target)) >= 0) return true;
    std::error_code ec;
    const fs::file_status s = fs::symlink_status(r.target, ec);
    if (ec || !fs::is_symlink(s)) return true;
    const fs::path link = fs::read_symlink(r.target, ec);
    if (ec) {
      why = "cannot read the symlink '" + r.target.string() + "': " + ec.message();
      return false;
    }
    r.target = link.is_absolute() ? link : r.target.parent_path() / link;
  }
  why = "too many levels of symbolic links";
  return false;
}

// An output buffer on a descriptor: every byte goes through write(2), so a write error (ENOSPC on /dev/full,
// EPIPE, EBADF) is kept with its errno, and nothing is opened, truncated or closed behind the caller's back.
class DescriptorBuffer : public std::streambuf {
 public:
  explicit DescriptorBuffer(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < static_cast<std::streamsize>(sizeof buf_)) return std::streambuf::xsputn(s, n);
    // A large block (an .npy's data) skips the copy into the buffer.
    if (!drain() || !write_all(s, static_cast<std::size_t>(n))) return 0;
    return n;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const auto n = static_cast<std::size_t>(pptr() - pbase());
    setp(buf_, buf_ + sizeof buf_);
    return write_all(buf_, n);
  }
  bool write_all(const char* p, std::size_t n) {
    if (error_) return false;
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        return false;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  int fd_;
  int error_ = 0;
  char buf_[1 << 16];
};

// Runs `emit` into `fd` and reports a failure of a write or of the final flush (where a full device shows).
bool emit_into(int fd, const std::function<void(std::ostream&)>& emit, std::string& why) {
  DescriptorBuffer buf(fd);
  std::ostream o(&buf);
  emit(o);
  o.flush();
  if (buf.error() || o.fail()) {
    why = "write error" + reason(buf.error());
    return false;
  }
  return true;
}

// An open descriptor of this process (/dev/stdout, /dev/fd/3, ...): written where it stands, left open.
bool write_descriptor(int fd, const std::function<void(std::ostream&)>& emit, std::string& why) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    why = "descriptor " + std::to_string(fd) + " is not open" + reason(errno);
    return false;
  }
  // The command's own lines may sit in a buffer for the same descriptor (stdout redirected to a file): out
  // first, so the file holds both in the order they were written.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  return emit_into(fd, emit, why);
}

bool write_in_place(const fs::path& target, const std::function<void(std::ostream&)>& emit, std::string& why) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    why = "cannot open for writing" + reason(errno);
    return false;
  }
  const bool ok = emit_into(fd, emit, why);
  if (::close(fd) != 0 && ok) {
    why = "write error" + reason(errno);
    return false;
  }
  return ok;
}

// The process's umask, read without setting it (umask(2) can only be read by changing it, which would race
// with other threads creating files): what a file created plainly would get.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

// A temporary file beside the target, removed unless it was renamed into place -- also when `emit` throws.
struct Temporary {
  std::string path;
  int fd = -1;
  bool renamed = false;
  ~Temporary() {
    if (fd >= 0) ::close(fd);
    if (!renamed && !path.empty()) ::unlink(path.c_str());
  }
};

bool replace_atomically(const fs::path& target, std::optional<mode_t> existing_mode,
                        const std::function<void(std::ostream&)>& emit, std::string& why) {
  // A unique name created exclusively (mkstemp: O_CREAT | O_EXCL, mode 0600): a name fixed in advance
  // ("<target>.partial") could be a symlink someone planted to have this write land in their choice of
  // file, and two writers of the same target would truncate each other's temporary.
  constexpr int kSuffix = 8;  // ".partial"
  const std::string pattern = target.string() + ".XXXXXX.partial";
  std::string name = pattern;  // mkostemps fills in the X's
  Temporary tmp;
  tmp.fd = ::mkostemps(name.data(), kSuffix, O_CLOEXEC);
  if (tmp.fd < 0) {
    why = "cannot create the temporary file '" + pattern + "'" + reason(errno);
    return false;
  }
  tmp.path = name;
  if (!emit_into(tmp.fd, emit, why)) return false;
  // The file gets the mode it had, or the one a plain create would have given it (0666 less the umask),
  // not mkstemp's 0600.
  const mode_t mode = existing_mode ? *existing_mode : (0666 & ~current_umask());
  if (::fchmod(tmp.fd, mode) != 0) {
    why = "cannot set the mode of '" + tmp.path + "'" + reason(errno);
    return false;
  }
  const int fd = std::exchange(tmp.fd, -1);
  if (::close(fd) != 0) {  // a network file system reports a failed write here
    why = "write error" + reason(errno);
    return false;
  }
  if (::rename(tmp.path.c_str(), target.c_str()) != 0) {
    why = "cannot rename '" + tmp.path + "' into place" + reason(errno);
    return false;
  }
  tmp.renamed = true;
  return true;
}

// How `path` is written, or nothing with `why` set when the write would fail before any byte is written.
enum class Plan { Descriptor, InPlace, Replace, Create };

std::optional<Plan> plan_write(const std::string& path, Resolved& r, struct stat& st, std::string& why) {
  if (path.empty()) {
    why = "no output file given";
    return std::nullopt;
  }
  if (!resolve(path, r, why)) return std::nullopt;
  if (r.fd >= 0) {
    if (::fcntl(r.fd, F_GETFD) < 0) {
      why = "descriptor " + std::to_string(r.fd) + " is not open";
      return std::nullopt;
    }
    return Plan::Descriptor;
  }
  if (::stat(r.target.c_str(), &st) != 0) return Plan::Create;
  if (S_ISDIR(st.st_mode)) {
    why = "is a directory";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) return Plan::InPlace;
  // A file nobody may write (chmod a-w) is one its owner protected: the atomic rename would replace it all
  // the same (it needs only the folder's permission), so refuse it as an in-place write would have been.
  if ((st.st_mode & 0222) == 0) {
    why = "the file is read-only";
    return std::nullopt;
  }
  if (::access(r.target.c_str(), W_OK) != 0 && errno == EACCES) {
    why = "the file is read-only for this user (no write permission)";
    return std::nullopt;
  }
  return Plan::Replace;
}

}  // namespace

bool write_file(const std::string& path, const std::function<void(std::ostream&)>& emit, std::string* error) {
  std::string why;
  const auto fail = [&] {
    if (error) *error = named(path) + ": " + why;
    return false;
  };
  Resolved r;
  struct stat st {};
  const std::optional<Plan> plan = plan_write(path, r, st, why);
  if (!plan) return fail();
  bool ok = false;
  switch (*plan) {
    case Plan::Descriptor:
      ok = write_descriptor(r.fd, emit, why);
      break;
    case Plan::InPlace:
      ok = write_in_place(r.target, emit, why);
      break;
    case Plan::Replace:  // the replacement keeps the file's mode
      ok = replace_atomically(r.target, st.st_mode & 07777, emit, why);
      break;
    case Plan::Create:
      ok = replace_atomically(r.target, std::nullopt, emit, why);
      break;
  }
  return ok || fail();
}

std::string check_output(const std::string& path) {
  std::string why;
  Resolved r;
  struct stat st {};
  const std::optional<Plan> plan = plan_write(path, r, st, why);
  if (plan == Plan::Create) {
    std::error_code ec;
    const fs::path dir = r.target.parent_path();
    if (!dir.empty() && !fs::is_directory(dir, ec)) why = "no such directory '" + dir.string() + "'";
  }
  if (why.empty()) return "";
  return named(path) + ": " + why;
}

std::string same_file_twice(const std::vector<NamedOutput>& outputs) {
  struct Seen {
    fs::path key;
    std::optional<std::pair<dev_t, ino_t>> id;
    const NamedOutput* named;
  };
  std::vector<Seen> seen;
  for (const NamedOutput& o : outputs) {
    if (o.path.empty()) continue;
    Resolved r;
    std::string why;
    if (!resolve(o.path, r, why)) continue;  // the write reports it
    if (r.fd >= 0) continue;                 // written in place at its position: nothing is replaced
    struct stat st {};
    const bool exists = ::stat(r.target.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) continue;
    // Absolute first: weakly_canonical leaves a relative path to a file not yet there relative, so "x" and
    // "./x" or "$PWD/x" would differ. Two names of one existing file (a hard link) share the inode.
    std::error_code ec;
    const fs::path abs = fs::absolute(r.target, ec);
    fs::path key = fs::weakly_canonical(abs, ec);
    if (ec) key = abs.lexically_normal();
    Seen me{key, exists ? std::optional(std::pair(st.st_dev, st.st_ino)) : std::nullopt, &o};
    for (const Seen& other : seen)
      if (other.key == me.key || (other.id && me.id && *other.id == *me.id))
        return other.named->option + " and " + o.option + " both name '" + o.path + "'" +
               (other.named->path != o.path ? " (as '" + other.named->path + "')" : "") +
               ": give each output its own file";
    seen.push_back(me);
  }
  return "";
}

bool write_file(const std::string& path, const void* data, std::size_t size, std::string* error) {
  return write_file(
      path, [&](std::ostream& o) { o.write(static_cast<const char*>(data), static_cast<std::streamsize>(size)); },
      error);
}

}  // namespace pevp::files
