// A sweep folder's lock (see lock.h).
#include "pevp/sweep/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pevp::sweep {
namespace {

// The pid the holder wrote, or "" when it has not written it yet (it writes right after taking the lock).
std::string holder_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid = n > 0 ? std::string(text, static_cast<std::size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : std::string();
}

}  // namespace

SweepLock::SweepLock(const std::string& out_dir) {
  const std::string path = path_in(out_dir);
  // O_CLOEXEC: the points' processes must not inherit the lock and hold the folder after the sweep has ended.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw LockError(path + ": cannot open the sweep's lock file: " + std::strerror(errno));
  int rc;
  while ((rc = ::flock(fd_, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    const int error = errno;
    const std::string pid = error == EWOULDBLOCK ? holder_pid(fd_) : std::string();
    ::close(fd_);
    fd_ = -1;
    if (error != EWOULDBLOCK) throw LockError(path + ": cannot lock: " + std::strerror(error));
    const std::string holder = pid.empty() ? "pid not known yet" : "pid " + pid;
    throw LockError(out_dir + " is in use by another pe-vp sweep (" + holder + ", " + path +
                    "): wait for it to end, or choose another --out");
  }
  // The pid only names the holder in another sweep's refusal; the lock itself is the flock, so a failed write of it
  // is no error.
  const std::string pid = std::to_string(::getpid()) + "\n";
  const bool named =
      ::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
  (void)named;
}

SweepLock::~SweepLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace pevp::sweep
