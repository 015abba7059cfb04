#include "pevp/mpqemu/doorbell.h"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pevp::mpqemu {

namespace {

// One greeting message: 8 bytes little-endian, with at most one fd.
bool send_message(int socket, std::int64_t value, int fd) {
  std::uint8_t bytes[8];
  for (unsigned i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * i));
  iovec iov{bytes, sizeof bytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  for (;;) {
    const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(sizeof bytes)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;  // 8 bytes on a fresh stream socket go whole or not at all
  }
}

}  // namespace

std::unique_ptr<Doorbell> Doorbell::create(unsigned vectors, std::string* error) {
  std::unique_ptr<Doorbell> d(new Doorbell());
  d->counts_ = std::make_unique<std::atomic<std::uint64_t>[]>(vectors);
  for (unsigned v = 0; v < vectors; ++v) {
    d->eventfds_.emplace_back(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!d->eventfds_.back().valid()) {
      if (error) *error = std::string("ivshmem doorbell: eventfd: ") + std::strerror(errno);
      return nullptr;
    }
  }
  d->shared_memory_.reset(::memfd_create("pe-vp-ivshmem", MFD_CLOEXEC));
  if (!d->shared_memory_.valid() ||
      ::ftruncate(d->shared_memory_.get(), static_cast<off_t>(kSharedMemoryBytes)) != 0) {
    if (error) *error = std::string("ivshmem doorbell: shared memory: ") + std::strerror(errno);
    return nullptr;
  }
  return d;
}

std::string Doorbell::greet(int socket) const {
  if (!send_message(socket, kProtocolVersion, -1) || !send_message(socket, kClientId, -1) ||
      !send_message(socket, -1, shared_memory_.get()))
    return std::string("ivshmem doorbell: sending the greeting: ") + std::strerror(errno);
  for (const UniqueFd& e : eventfds_)
    if (!send_message(socket, kClientId, e.get()))
      return std::string("ivshmem doorbell: sending a vector's eventfd: ") + std::strerror(errno);
  return {};
}

void Doorbell::signal(unsigned vector) {
  if (vector >= eventfds_.size()) return;
  const std::uint64_t one = 1;
  // A full counter (2^64 - 2 unread signals) cannot happen with a live reader; EAGAIN then only loses a duplicate.
  if (::write(eventfds_[vector].get(), &one, sizeof one) == static_cast<ssize_t>(sizeof one)) ++counts_[vector];
}

}  // namespace pevp::mpqemu
