// One end of an mpqemu connection (message.h) on a connected Unix stream socket: whole messages in and out with
// their file descriptors (SCM_RIGHTS). The device end receives requests and sends RETs; the tests' stand-in proxy
// uses the same class the other way round.
//
// receive() validates every message before it hands it out: the header's command and payload size, the fd count
// (message.h validate()) and every fd alive. A refused message is returned as Malformed with the reason -- its fds
// already closed, its payload read and dropped so the stream stays in step -- and the caller answers it (all-ones)
// when its command expects a reply. Only a header announcing more than kDiscardLimit bytes of payload ends the
// stream, because its end cannot be found without trusting it (D-PCI-MPQEMU-FRAMING).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "pevp/mpqemu/message.h"
#include "pevp/mpqemu/unique_fd.h"

namespace pevp::mpqemu {

struct Message {
  std::int32_t cmd = 0;
  std::vector<std::uint8_t> payload;
  std::vector<UniqueFd> fds;
  Command command() const { return static_cast<Command>(cmd); }
};

// Counts of what a link received and sent, for the run's statistics.
struct LinkStats {
  std::uint64_t received[kCommandCount] = {};  // valid messages by command
  std::uint64_t malformed = 0;                 // refused by validation (answered when they expected a reply)
  std::uint64_t replies = 0;                   // RETs sent
  std::uint64_t fds_closed_unused = 0;         // received with a refused message and closed
};

// Writes `size` bytes to the stream socket `socket`, `fds` riding with the first of them as SCM_RIGHTS (the rest
// follows a short write without them); retries on EINTR. False on an error, when the peer is gone (no SIGPIPE), or
// for more fds than a message has room for. Link::send frames its messages with it; tests write raw frames with it.
bool send_with_fds(int socket, const std::uint8_t* bytes, std::size_t size, const std::vector<int>& fds = {});

class Link {
 public:
  // Slack past which a peer that stopped in the middle of a message is taken as gone.
  static constexpr std::chrono::milliseconds kFrameTimeout{10000};
  // The most payload bytes the link reads and drops to stay in step after an oversized header.
  static constexpr std::uint64_t kDiscardLimit = 1 << 20;

  // Which end: the device receives requests (message.h validate()); the proxy -- the tests' stand-in -- receives
  // only RETs (8 bytes of value, or none: QEMU's own remote answers a reset so), without fds.
  enum class Role { Device, Proxy };
  // Takes ownership of a connected AF_UNIX SOCK_STREAM socket.
  explicit Link(UniqueFd socket, Role role = Role::Device);

  struct Received {
    enum class Kind {
      Message,    // `message` is valid and may be dispatched
      Malformed,  // refused: `why`, and `cmd` (the reply it expects, if any, is the caller's to send)
      Closed,     // the peer closed the connection between messages
      Broken,     // the peer vanished or stalled mid-message, or the stream cannot be trusted: `why`
      Stopped,    // the stop descriptor became readable
    } kind = Kind::Closed;
    Message message;
    std::int32_t cmd = -1;
    std::string why;
  };
  // Blocks until a whole message arrived, the peer left, or `stop_fd` (>= 0) is readable.
  Received receive(int stop_fd = -1);

  // Sends one message with its fds; false when the peer is gone (no SIGPIPE).
  bool send(Command cmd, const std::vector<std::uint8_t>& payload, const std::vector<int>& fds = {});
  bool reply(std::uint64_t value);

  int fd() const { return socket_.get(); }
  const LinkStats& stats() const { return stats_; }

 private:
  enum class Read { Done, Eof, Timeout, Failed, Stopped };
  // Reads exactly `bytes` into `into` (nullptr: drop them), collecting any fds; `first` waits without a deadline.
  Read read_exact(std::uint8_t* into, std::size_t bytes, std::vector<UniqueFd>& fds, bool first, int stop_fd,
                  bool& truncated_fds);

  std::string check(const Header& h, std::size_t fd_count) const;

  UniqueFd socket_;
  Role role_;
  LinkStats stats_;
};

}  // namespace pevp::mpqemu
