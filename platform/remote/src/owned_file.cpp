#include "pevp/remote/owned_file.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace pevp::remote {

OwnedFile::OwnedFile(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0) {
    const std::string why = std::strerror(errno);
    path_.clear();
    throw std::runtime_error("cannot own what is not there: " + why);
  }
  device_ = st.st_dev;
  inode_ = st.st_ino;
}

OwnedFile::OwnedFile(OwnedFile&& o) noexcept
    : path_(std::exchange(o.path_, std::string())), device_(o.device_), inode_(o.inode_) {}

OwnedFile& OwnedFile::operator=(OwnedFile&& o) noexcept {
  if (this != &o) {
    remove();
    path_ = std::exchange(o.path_, std::string());
    device_ = o.device_;
    inode_ = o.inode_;
  }
  return *this;
}

bool OwnedFile::remove() {
  if (path_.empty()) return true;
  struct stat st {};
  // Between this check and the unlink another process could still replace the file; the window is two system
  // calls wide, where removing by path alone made every replacement lose its file.
  const bool there = ::lstat(path_.c_str(), &st) == 0;
  if (there && (st.st_dev != device_ || st.st_ino != inode_)) return false;
  if (there) ::unlink(path_.c_str());
  path_.clear();
  return true;
}

}  // namespace pevp::remote
