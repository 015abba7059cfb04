#include "pevp/files/output_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace pevp::files {
namespace {

namespace fs = std::filesystem;

// Symlink chains longer than this are a loop (the limit POSIX systems use).
constexpr int kMaxSymlinkHops = 40;

std::string reason(int e) { return e ? std::string(": ") + std::strerror(e) : std::string(); }

// What `path` finally names, following symlinks (a dangling one names its target).
bool resolve(const fs::path& path, fs::path& target, std::string& why) {
  target = path;
  for (int hop = 0; hop < kMaxSymlinkHops; ++hop) {
    std::error_code ec;
    const fs::file_status s = fs::symlink_status(target, ec);
    if (ec || !fs::is_symlink(s)) return true;
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) {
      why = "cannot read the symlink '" + target.string() + "': " + ec.message();
      return false;
    }
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  why = "too many levels of symbolic links";
  return false;
}

// Runs `emit` into an open stream and reports a failure of it or of the flush
// and close (where a full device shows).
bool emit_into(std::ofstream& o, const std::function<void(std::ostream&)>& emit, std::string& why) {
  errno = 0;
  emit(o);
  o.flush();
  int e = errno;
  o.close();
  if (!e) e = errno;
  if (o.fail()) {
    why = "write error" + reason(e);
    return false;
  }
  return true;
}

bool write_in_place(const fs::path& target, const std::function<void(std::ostream&)>& emit, std::string& why) {
  errno = 0;
  std::ofstream o(target, std::ios::binary);
  if (!o) {
    why = "cannot open for writing" + reason(errno);
    return false;
  }
  return emit_into(o, emit, why);
}

bool replace_atomically(const fs::path& target, bool exists, const std::function<void(std::ostream&)>& emit,
                        std::string& why) {
  fs::path tmp = target;
  tmp += ".partial";
  const auto remove_tmp = [&] {
    std::error_code ignored;
    fs::remove(tmp, ignored);
  };
  {
    errno = 0;
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o) {
      why = "cannot create the temporary file '" + tmp.string() + "'" + reason(errno);
      return false;
    }
    if (!emit_into(o, emit, why)) {
      remove_tmp();
      return false;
    }
  }
  std::error_code ec;
  if (exists) {  // the replacement keeps the file's mode
    const fs::perms mode = fs::status(target, ec).permissions();
    if (!ec) fs::permissions(tmp, mode, ec);
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    remove_tmp();
    why = "cannot rename '" + tmp.string() + "' into place: " + ec.message();
    return false;
  }
  return true;
}

}  // namespace

bool write_file(const std::string& path, const std::function<void(std::ostream&)>& emit, std::string* error) {
  std::string why;
  const auto fail = [&] {
    if (error) *error = (path.empty() ? std::string("(empty path)") : path) + ": " + why;
    return false;
  };
  if (path.empty()) {
    why = "no output file given";
    return fail();
  }
  fs::path target;
  if (!resolve(path, target, why)) return fail();
  std::error_code ec;
  const fs::file_status s = fs::status(target, ec);
  const bool exists = !ec && fs::exists(s);
  if (exists && fs::is_directory(s)) {
    why = "is a directory";
    return fail();
  }
  const bool ok = exists && !fs::is_regular_file(s) ? write_in_place(target, emit, why)
                                                     : replace_atomically(target, exists, emit, why);
  return ok || fail();
}

std::string same_file_twice(const std::vector<NamedOutput>& outputs) {
  std::vector<std::pair<fs::path, const NamedOutput*>> seen;
  for (const NamedOutput& o : outputs) {
    if (o.path.empty()) continue;
    std::error_code ec;
    fs::path target;
    std::string why;
    if (!resolve(o.path, target, why)) continue;  // the write reports it
    const fs::file_status s = fs::status(target, ec);
    if (!ec && fs::exists(s) && !fs::is_regular_file(s)) continue;
    fs::path key = fs::weakly_canonical(target, ec);
    if (ec) key = fs::absolute(target, ec).lexically_normal();
    for (const auto& [other, named] : seen)
      if (other == key)
        return named->option + " and " + o.option + " both name '" + o.path + "'" +
               (named->path != o.path ? " (as '" + named->path + "')" : "") + ": give each output its own file";
    seen.emplace_back(key, &o);
  }
  return "";
}

bool write_file(const std::string& path, const void* data, std::size_t size, std::string* error) {
  return write_file(
      path, [&](std::ostream& o) { o.write(static_cast<const char*>(data), static_cast<std::streamsize>(size)); },
      error);
}

}  // namespace pevp::files
