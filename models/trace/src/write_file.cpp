#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "text.h"

namespace pevp::trace::detail {

bool write_atomically(const std::string& path, const std::function<void(std::ostream&)>& emit, std::string* error) {
  const auto fail = [&](const std::string& why) {
    if (error) *error = path + ": " + why;
    return false;
  };
  if (path.empty()) {
    if (error) *error = "(empty path): no output file given";
    return false;
  }
  // The temporary sits next to the target so the rename stays on one file
  // system (atomic: readers see the old file or the whole new one).
  const std::string tmp = path + ".partial";
  const auto remove_tmp = [&] {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
  };
  {
    errno = 0;
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o) {
      const int e = errno;
      return fail("cannot create temporary file '" + tmp + "'" + (e ? std::string(": ") + std::strerror(e) : ""));
    }
    errno = 0;
    emit(o);
    o.flush();
    const int e = errno;
    o.close();
    if (!o) {
      remove_tmp();
      return fail("cannot write '" + tmp + "'" + (e ? std::string(": ") + std::strerror(e) : ""));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    remove_tmp();
    return fail("cannot rename '" + tmp + "' into place: " + ec.message());
  }
  return true;
}

}  // namespace pevp::trace::detail
