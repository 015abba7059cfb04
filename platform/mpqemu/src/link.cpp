#include "pevp/mpqemu/link.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pevp::mpqemu {

namespace {

// Room for more fds than a valid message carries, so an over-count is seen (and closed) rather than truncated.
constexpr std::size_t kFdRoom = 2 * (kMaxFds + 1);

bool fd_alive(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

}  // namespace

Link::Link(UniqueFd socket, Role role) : socket_(std::move(socket)), role_(role) {}

std::string Link::check(const Header& h, std::size_t fd_count) const {
  if (role_ == Role::Device) return validate(h, fd_count);
  if (h.cmd != static_cast<std::int32_t>(Command::Ret)) return command_name(h.cmd) + ": the proxy expects only RET";
  if (h.size != kRetBytes && h.size != 0)
    return "RET: payload of " + std::to_string(h.size) + " bytes, expected " + std::to_string(kRetBytes) + " or 0";
  if (fd_count != 0) return "RET: " + std::to_string(fd_count) + " file descriptor(s), expected 0";
  return {};
}

Link::Read Link::read_exact(std::uint8_t* into, std::size_t bytes, std::vector<UniqueFd>& fds, bool first,
                            int stop_fd, bool& truncated_fds) {
  std::uint8_t sink[4096];
  std::size_t done = 0;
  const auto deadline = std::chrono::steady_clock::now() + kFrameTimeout;
  while (done < bytes) {
    // Wait for data (or the stop descriptor); the first byte of a message may take forever, the rest may not.
    pollfd p[2] = {{socket_.get(), POLLIN, 0}, {stop_fd, POLLIN, 0}};
    int timeout_ms = -1;
    if (!(first && done == 0)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Read::Timeout;
      timeout_ms = static_cast<int>(left.count());
    }
    const int n = ::poll(p, stop_fd >= 0 ? 2 : 1, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Read::Failed;
    }
    if (n == 0) return Read::Timeout;
    if (stop_fd >= 0 && (p[1].revents & POLLIN) != 0 && done == 0 && first) return Read::Stopped;
    if (p[0].revents == 0) continue;

    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kFdRoom)];
    iovec iov{};
    iov.iov_base = into != nullptr ? into + done : sink;
    iov.iov_len = into != nullptr ? bytes - done : std::min(bytes - done, sizeof sink);
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t got = ::recvmsg(socket_.get(), &msg, MSG_CMSG_CLOEXEC);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Read::Failed;
    }
    // Whatever fds came, they are ours to close from here on.
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds.emplace_back(fd);
      }
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0) truncated_fds = true;
    if (got == 0) return Read::Eof;
    done += static_cast<std::size_t>(got);
  }
  return Read::Done;
}

Link::Received Link::receive(int stop_fd) {
  Received r;
  std::vector<UniqueFd> fds;
  bool truncated = false;
  std::uint8_t header_bytes[kHeaderBytes];
  const auto broken = [&](std::string why) {
    stats_.fds_closed_unused += fds.size();
    fds.clear();
    r.kind = Received::Kind::Broken;
    r.why = std::move(why);
    return std::move(r);
  };
  switch (read_exact(header_bytes, kHeaderBytes, fds, true, stop_fd, truncated)) {
    case Read::Done: break;
    case Read::Stopped: r.kind = Received::Kind::Stopped; return r;
    case Read::Eof:
      if (fds.empty()) {
        r.kind = Received::Kind::Closed;
        return r;
      }
      return broken("the peer left in the middle of a message header");
    case Read::Timeout: return broken("the peer stopped in the middle of a message header");
    case Read::Failed: return broken(std::string("reading a message header: ") + std::strerror(errno));
  }
  const Header h = decode_header(header_bytes);
  r.cmd = h.cmd;
  if (h.size > kDiscardLimit)
    return broken(command_name(h.cmd) + ": a header announcing " + std::to_string(h.size) +
                  " bytes of payload; the stream cannot be followed past it");
  std::vector<std::uint8_t> payload;
  const bool keep = h.size <= kMaxPayloadBytes;
  if (keep) payload.resize(h.size);
  switch (read_exact(keep ? payload.data() : nullptr, h.size, fds, false, stop_fd, truncated)) {
    case Read::Done: break;
    case Read::Stopped: break;  // only the first read stops
    case Read::Eof: return broken(command_name(h.cmd) + ": the peer left in the middle of its payload");
    case Read::Timeout: return broken(command_name(h.cmd) + ": the peer stopped in the middle of its payload");
    case Read::Failed: return broken(command_name(h.cmd) + ": reading the payload: " + std::strerror(errno));
  }
  std::string why = truncated ? command_name(h.cmd) + ": more file descriptors than any message carries"
                              : check(h, fds.size());
  if (why.empty())
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (!fd_alive(fds[i].get())) {
        why = command_name(h.cmd) + ": file descriptor " + std::to_string(i) + " is not open";
        break;
      }
  if (!why.empty()) {
    ++stats_.malformed;
    stats_.fds_closed_unused += fds.size();
    r.kind = Received::Kind::Malformed;
    r.why = std::move(why);
    return r;  // fds closed here
  }
  ++stats_.received[h.cmd];
  r.kind = Received::Kind::Message;
  r.message.cmd = h.cmd;
  r.message.payload = std::move(payload);
  r.message.fds = std::move(fds);
  return r;
}

bool send_with_fds(int socket, const std::uint8_t* bytes, std::size_t size, const std::vector<int>& fds) {
  if (fds.size() > kFdRoom) return false;
  iovec iov{const_cast<std::uint8_t*>(bytes), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kFdRoom)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  std::size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    sent += static_cast<std::size_t>(n);
    // A short write: the rest without the fds (they went with the first bytes).
    msg.msg_control = nullptr;
    msg.msg_controllen = 0;
    iov.iov_base = const_cast<std::uint8_t*>(bytes) + sent;
    iov.iov_len = size - sent;
  }
  return true;
}

bool Link::send(Command cmd, const std::vector<std::uint8_t>& payload, const std::vector<int>& fds) {
  // One buffer (a header and at most a payload's bytes) so the fds travel with the header's first byte.
  std::uint8_t header[kHeaderBytes];
  encode_header({static_cast<std::int32_t>(cmd), payload.size()}, header);
  std::vector<std::uint8_t> frame(header, header + kHeaderBytes);
  frame.insert(frame.end(), payload.begin(), payload.end());
  return send_with_fds(socket_.get(), frame.data(), frame.size(), fds);
}

bool Link::reply(std::uint64_t value) {
  const bool ok = send(Command::Ret, encode_ret(value));
  if (ok) ++stats_.replies;
  return ok;
}

}  // namespace pevp::mpqemu
