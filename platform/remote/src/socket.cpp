#include "pevp/remote/socket.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace pevp::remote {

namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text() { return std::strerror(errno); }

Clock::time_point deadline_after(Millis timeout) {
  return timeout.count() < 0 ? Clock::time_point::max() : Clock::now() + timeout;
}

// Milliseconds left until `deadline` for poll(): -1 = no deadline.
int poll_millis(Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) return -1;
  const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Waits until `fd` is ready for `events` (1) or the deadline passed (0); -1 with errno when poll failed.
int wait_ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, poll_millis(deadline));
    if (n > 0) return 1;
    if (n == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof a.sun_path)
    throw std::invalid_argument("unix:" + path + ": a socket path has 1 to " + std::to_string(sizeof a.sun_path - 1) +
                                " bytes");
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

sockaddr_in tcp_address(const Endpoint& e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(e.port);
  const std::string host = e.host == "localhost" ? "127.0.0.1" : e.host;
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw std::invalid_argument("tcp:" + e.host + ": not a numeric IPv4 address (or localhost)");
  return a;
}

}  // namespace

std::string Endpoint::describe() const {
  return kind == Kind::Unix ? "unix:" + path : "tcp:" + host + ":" + std::to_string(port);
}

bool Endpoint::loopback() const {
  return kind == Kind::Unix || host == "localhost" || host.rfind("127.", 0) == 0;
}

Endpoint parse_endpoint(std::string_view text) {
  Endpoint e;
  if (text.rfind("unix:", 0) == 0) {
    e.kind = Endpoint::Kind::Unix;
    e.path = std::string(text.substr(5));
    unix_address(e.path);  // checks the length
    return e;
  }
  if (text.rfind("tcp:", 0) != 0)
    throw std::invalid_argument("'" + std::string(text) + "': an endpoint is unix:PATH, tcp:PORT or tcp:HOST:PORT");
  e.kind = Endpoint::Kind::Tcp;
  std::string_view rest = text.substr(4);
  const std::size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos) {
    e.host = std::string(rest.substr(0, colon));
    rest = rest.substr(colon + 1);
  }
  unsigned long port = 0;
  if (rest.empty() || rest.size() > 5 || rest.find_first_not_of("0123456789") != std::string_view::npos ||
      (port = std::stoul(std::string(rest))) > 65535)
    throw std::invalid_argument("'" + std::string(text) + "': the port must be a number in 0..65535");
  e.port = static_cast<std::uint16_t>(port);
  tcp_address(e);  // checks the host
  return e;
}

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Connection::~Connection() {
  if (fd_ >= 0) ::close(fd_);
}

void Connection::send(std::uint8_t kind, const std::vector<std::uint8_t>& payload, Millis timeout) {
  std::string why;
  if (!try_send(kind, payload, timeout, &why)) throw ConnectionError(why);
}

bool Connection::try_send(std::uint8_t kind, const std::vector<std::uint8_t>& payload, Millis timeout,
                          std::string* why) {
  if (payload.size() + 2 > kMaxFrameBytes) {
    *why = "a frame of " + std::to_string(payload.size() + 2) + " bytes exceeds the limit";
    return false;
  }
  const std::vector<std::uint8_t> frame = encode_frame(kind, payload);
  const Clock::time_point deadline = deadline_after(timeout);
  std::size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t n = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const int ready = wait_ready(fd_, POLLOUT, deadline);
      if (ready > 0) continue;
      *why = ready == 0 ? "the peer took no more data for " + std::to_string(timeout.count()) + " ms (" +
                              std::to_string(sent) + " of " + std::to_string(frame.size()) + " bytes sent)"
                        : std::string("poll: ") + errno_text();
      return false;
    }
    *why = std::string("send: ") + errno_text();
    return false;
  }
  return true;
}

Connection::ReadResult Connection::read_exact(void* data, std::size_t size, Clock::time_point deadline,
                                              std::string* why) {
  auto* p = static_cast<std::uint8_t*>(data);
  std::size_t got = 0;
  while (got < size) {
    // Read first, wait only when nothing is there: a reply usually has arrived whole (one syscall, not two).
    const ssize_t n = ::recv(fd_, p + got, size - got, MSG_DONTWAIT);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {
      if (got == 0) return ReadResult::Eof;
      *why = "the peer closed the connection " + std::to_string(got) + " bytes into a " + std::to_string(size) +
             "-byte read";
      return ReadResult::Failed;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      *why = std::string("recv: ") + errno_text();
      return ReadResult::Failed;
    }
    const int ready = wait_ready(fd_, POLLIN, deadline);
    if (ready <= 0) {
      *why = ready == 0 ? "the peer stalled: " + std::to_string(got) + " of " + std::to_string(size) +
                              " bytes arrived in time"
                        : std::string("poll: ") + errno_text();
      return ReadResult::Failed;
    }
  }
  return ReadResult::Done;
}

Connection::Received Connection::try_receive(Millis timeout, Millis first_byte_timeout) {
  Received r;
  const auto broken = [&r](std::string why) {
    r.kind = Received::Kind::Broken;
    r.why = std::move(why);
    return r;
  };
  // The first byte may take its time (an idle client); the rest of the frame must follow within `timeout`.
  const int ready = wait_ready(fd_, POLLIN, deadline_after(first_byte_timeout));
  if (ready == 0) return broken("no frame began within " + std::to_string(first_byte_timeout.count()) + " ms");
  if (ready < 0) return broken(std::string("poll: ") + errno_text());
  const Clock::time_point deadline = deadline_after(timeout);
  // The header whole (length, version, kind): the shortest frame is exactly that, so no byte of the next one is
  // taken. The connection may end before it, not inside it.
  std::uint8_t header[kFrameHeaderBytes];
  std::string why;
  switch (read_exact(header, sizeof header, deadline, &why)) {
    case ReadResult::Eof:
      return r;  // closed between frames
    case ReadResult::Failed:
      return broken(why);
    case ReadResult::Done:
      break;
  }
  std::uint32_t length = 0;
  for (unsigned i = 0; i < 4; ++i) length |= std::uint32_t{header[i]} << (8 * i);
  std::string problem = frame_length_problem(length);
  if (problem.empty()) problem = frame_version_problem(header[4]);
  if (!problem.empty()) {
    r.kind = Received::Kind::Malformed;
    r.why = problem;
    return r;
  }
  r.frame.payload.resize(length - 2);
  if (!r.frame.payload.empty() &&
      read_exact(r.frame.payload.data(), r.frame.payload.size(), deadline, &why) != ReadResult::Done)
    return broken(why.empty() ? "the peer closed the connection inside a frame" : why);
  r.kind = Received::Kind::Frame;
  r.frame.kind = header[5];
  return r;
}

std::optional<Frame> Connection::receive(Millis timeout, Millis first_byte_timeout) {
  Received r = try_receive(timeout, first_byte_timeout);
  switch (r.kind) {
    case Received::Kind::Frame:
      return std::move(r.frame);
    case Received::Kind::Closed:
      return std::nullopt;
    case Received::Kind::Malformed:
      throw ProtocolError(r.why);
    case Received::Kind::Broken:
      break;
  }
  throw ConnectionError(r.why);
}

void Connection::close_after_last_frame(Millis linger) {
  if (fd_ < 0) return;
  ::shutdown(fd_, SHUT_WR);
  const Clock::time_point deadline = deadline_after(linger);
  char sink[4096];
  while (wait_ready(fd_, POLLIN, deadline) > 0 && ::recv(fd_, sink, sizeof sink, MSG_DONTWAIT) > 0) {
  }
  ::close(fd_);
  fd_ = -1;
}

void Connection::close_at_once_after_last_frame() {
  if (fd_ < 0) return;
  ::shutdown(fd_, SHUT_WR);
  char sink[4096];
  std::size_t dropped = 0;
  ssize_t n;
  while (dropped < kMaxUnreadBytes && (n = ::recv(fd_, sink, sizeof sink, MSG_DONTWAIT)) > 0)
    dropped += static_cast<std::size_t>(n);
  ::close(fd_);
  fd_ = -1;
}

Connection connect_to(const Endpoint& endpoint) {
  const bool unix_socket = endpoint.kind == Endpoint::Kind::Unix;
  const int fd = ::socket(unix_socket ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw ConnectionError(endpoint.describe() + ": socket: " + errno_text());
  Connection c(fd);
  int rc;
  if (unix_socket) {
    const sockaddr_un a = unix_address(endpoint.path);
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  } else {
    const sockaddr_in a = tcp_address(endpoint);
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    const int one = 1;  // requests are small and answered one at a time: do not wait to fill a segment
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  if (rc != 0) throw ConnectionError(endpoint.describe() + ": " + errno_text());
  return c;
}

Listener::Listener(const Endpoint& endpoint) : bound_(endpoint) {
  const bool unix_socket = endpoint.kind == Endpoint::Kind::Unix;
  fd_ = ::socket(unix_socket ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(endpoint.describe() + ": socket: " + errno_text());
  int rc;
  if (unix_socket) {
    const sockaddr_un a = unix_address(endpoint.path);
    struct stat st {};
    if (::lstat(endpoint.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        ::close(fd_);
        throw std::runtime_error(endpoint.describe() + ": the path exists and is not a socket");
      }
      bool answered = false;
      try {
        connect_to(endpoint);
        answered = true;
      } catch (const ConnectionError&) {
      }
      if (answered) {
        ::close(fd_);
        throw std::runtime_error(endpoint.describe() + ": a server is already listening there");
      }
      ::unlink(endpoint.path.c_str());  // a stale socket of a server that is gone
    }
    // Owner-only from the moment the file exists: the umask is applied by bind() itself.
    const mode_t old = ::umask(0077);
    rc = ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    ::umask(old);
    if (rc == 0) {
      ::chmod(endpoint.path.c_str(), 0600);
      try {
        socket_file_ = OwnedFile(endpoint.path);
      } catch (const std::runtime_error& e) {  // removed the moment it was made
        ::close(fd_);
        throw std::runtime_error(endpoint.describe() + ": " + e.what());
      }
    }
  } else {
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in a = tcp_address(endpoint);
    rc = ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  }
  if (rc != 0 || ::listen(fd_, 8) != 0) {
    const std::string why = errno_text();
    ::close(fd_);
    throw std::runtime_error(endpoint.describe() + ": " + why);
  }
  if (!unix_socket) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    bound_.port = ntohs(a.sin_port);
  }
}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
  socket_file_.remove();  // only the socket this listener made: a newer server may have its own at the path now
}

Connection Listener::accept() {
  if (std::optional<Connection> c = try_accept()) return std::move(*c);
  throw ConnectionError(std::string("accept: ") + errno_text());
}

std::optional<Connection> Listener::try_accept() {
  for (;;) {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      if (bound_.kind == Endpoint::Kind::Tcp) {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
      return Connection(fd);
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return std::nullopt;
  }
}

}  // namespace pevp::remote
