#include "pevp/files/input_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace pevp::files {

std::optional<std::string> read_file(const std::string& path, std::string* error) {
  const auto fail = [&](const std::string& why) -> std::optional<std::string> {
    if (error) *error = (path.empty() ? std::string("(empty path)") : path) + ": " + why;
    return std::nullopt;
  };
  if (path.empty()) return fail("no input file given");
  std::error_code ec;
  // Opening a directory succeeds on Linux and fails only at the first read,
  // with a stream exception that names no file: ask first.
  if (std::filesystem::is_directory(path, ec)) return fail("is a directory");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot open" + (errno ? std::string(": ") + std::strerror(errno) : std::string()));
  std::string bytes;
  try {
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure& e) {
    return fail(std::string("read error: ") + e.what());
  }
  if (in.bad()) return fail("read error" + (errno ? std::string(": ") + std::strerror(errno) : std::string()));
  return bytes;
}

}  // namespace pevp::files
