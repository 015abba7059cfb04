// A file this process created at a path -- a server's Unix socket, its token file -- and removes when it goes, but
// only while the path still names that very file: by then another process may have put its own there (a newer
// server's socket at the same path), and that one is not ours to remove.
#pragma once

#include <string>
#include <sys/types.h>

namespace pevp::remote {

class OwnedFile {
 public:
  OwnedFile() = default;
  // Takes `path` as this process's: what it names now (its device and inode, not following a symbolic link) is
  // what remove() removes. Throws std::runtime_error when nothing is there.
  explicit OwnedFile(std::string path);
  OwnedFile(OwnedFile&& o) noexcept;
  OwnedFile& operator=(OwnedFile&& o) noexcept;
  OwnedFile(const OwnedFile&) = delete;
  OwnedFile& operator=(const OwnedFile&) = delete;
  ~OwnedFile() { remove(); }

  const std::string& path() const { return path_; }
  // Removes the file when the path still names it (then, or when it is gone already, the object lets go of it);
  // false when another file is there now, which stays.
  bool remove();

 private:
  std::string path_;  // empty: nothing owned
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

}  // namespace pevp::remote
