// The sockets the MMIO protocol runs over: a Unix socket (created owner-only) or TCP (loopback unless an address
// is given), framed as protocol.h says, with timeouts so that a peer that stalls cannot hold the other side.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pevp/remote/owned_file.h"
#include "pevp/remote/protocol.h"

namespace pevp::remote {

// Where a server listens or a client connects: "unix:PATH", "tcp:PORT" (127.0.0.1), "tcp:HOST:PORT" (a numeric
// IPv4 address or "localhost"). Port 0 when listening: the system picks one (Listener::bound() says which).
struct Endpoint {
  enum class Kind { Unix, Tcp } kind = Kind::Unix;
  std::string path;                // Unix
  std::string host = "127.0.0.1";  // TCP
  std::uint16_t port = 0;
  std::string describe() const;    // the text form, "tcp:127.0.0.1:4242"
  bool loopback() const;           // a Unix socket, or TCP on 127.0.0.0/8
};
// Throws std::invalid_argument naming what is wrong with `text`.
Endpoint parse_endpoint(std::string_view text);

// The connection failed: refused, reset, closed by the peer, or a send or receive timed out.
class ConnectionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Millis = std::chrono::milliseconds;
constexpr Millis kForever{-1};

// One connected socket, framed. Move-only; closes on destruction.
class Connection {
 public:
  explicit Connection(int fd) : fd_(fd) {}
  Connection(Connection&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Connection& operator=(Connection&& o) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();
  int fd() const { return fd_; }

  // Sends one frame; a peer that takes none of it for `timeout` is a ConnectionError.
  void send(std::uint8_t kind, const std::vector<std::uint8_t>& payload, Millis timeout = kForever);
  // The same without an exception: false with *why. (The server's path: in a process that runs SystemC, an
  // exception unwinding the main stack can make ASan report false positives, pevp/capi/stale_stack_poison.h.)
  bool try_send(std::uint8_t kind, const std::vector<std::uint8_t>& payload, Millis timeout, std::string* why);
  // Receives one frame, its bytes arriving within `timeout` once its first byte has (the wait for the first byte
  // is the caller's: poll fd() first, or pass `first_byte_timeout`). nullopt: the peer closed the connection
  // before a frame began. Throws ProtocolError for a header that breaks the protocol (the frame's body is not
  // read: the stream cannot be trusted after it), ConnectionError when the peer closes mid-frame or stalls.
  std::optional<Frame> receive(Millis timeout = kForever, Millis first_byte_timeout = kForever);
  // The same without an exception.
  struct Received {
    enum class Kind { Frame, Closed, Broken, Malformed } kind = Kind::Closed;
    Frame frame;      // Frame
    std::string why;  // Broken (the connection failed or stalled), Malformed (the header broke the protocol)
  };
  Received try_receive(Millis timeout = kForever, Millis first_byte_timeout = kForever);
  // Ends the connection after a last frame without losing it: no more sends (FIN), then what the peer still sends
  // is read and dropped for up to `linger`, so that closing with unread data does not reset the connection (TCP
  // would discard the frame on the peer's side).
  void close_after_last_frame(Millis linger);
  // The same without waiting, for a peer the caller must not wait for (a refused newcomer): what the peer has sent
  // so far, up to kMaxUnreadBytes, is dropped, then the connection is closed. A peer that sends more after it may
  // see a reset, but its last frame is in its receive queue by then.
  void close_at_once_after_last_frame();
  static constexpr std::size_t kMaxUnreadBytes = 64 << 10;

 private:
  // Reads exactly `size` bytes before `deadline`: Done, Eof (the peer closed before the first of them) or Failed
  // with *why (closed part way, stalled, an error).
  enum class ReadResult { Done, Eof, Failed };
  ReadResult read_exact(void* data, std::size_t size, std::chrono::steady_clock::time_point deadline,
                        std::string* why);
  int fd_ = -1;
};

// Connects (a refused or missing server is a ConnectionError naming the endpoint).
Connection connect_to(const Endpoint& endpoint);

// A listening socket. A Unix socket's file is created with owner-only permissions (0600); an existing socket file
// is replaced only when no server answers on it, anything else at the path is refused. The file is removed when
// the listener goes -- if the path still names the socket this listener made (OwnedFile).
class Listener {
 public:
  explicit Listener(const Endpoint& endpoint);  // throws std::runtime_error with the reason
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();
  int fd() const { return fd_; }
  // Where it listens, with the port the system chose.
  const Endpoint& bound() const { return bound_; }
  Connection accept();  // throws ConnectionError
  std::optional<Connection> try_accept();  // the same without an exception: nullopt when accept failed

 private:
  int fd_ = -1;
  Endpoint bound_;
  OwnedFile socket_file_;  // a Unix socket's
};

}  // namespace pevp::remote
