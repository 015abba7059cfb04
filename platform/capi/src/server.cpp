#include "pevp/capi/server.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "pevp/capi/machine.h"
#include "pevp/capi/stale_stack_poison.h"

namespace pevp::capi {

namespace {

using remote::Connection;
using remote::Op;
using remote::Status;

// Lock-free atomics, not volatile sig_atomic_t: the handler may run on another thread of the process.
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag is set from a signal handler");
std::atomic<int> g_stop{0};
// The write end of the stop pipe, or -1 outside serve(). Written by the signal handler, read by wait_for().
std::atomic<int> g_stop_pipe{-1};

extern "C" void on_stop_signal(int) {
  g_stop = 1;
  const int saved = errno;
  const int fd = g_stop_pipe;
  if (fd >= 0) (void)!::write(fd, "s", 1);  // a full pipe: a stop is already pending
  errno = saved;
}

// SIGINT and SIGTERM end the server between requests. The handler sets g_stop and writes a byte to a pipe that the
// server's waits between requests also watch (the self-pipe idiom): a signal that lands between the loop's g_stop
// check and its wait would otherwise be handled just before an endless poll(), and the server would never stop. A
// mask and ppoll() would not do: the kernel may hand a process-directed signal to any thread (OpenBLAS starts
// workers) and the main thread's ppoll() would never hear of it. A request being executed, or a frame being
// received or sent (at most the frame timeout), finishes first. The handlers stay installed after serve()
// returns, so a late signal during teardown (the socket's removal, SystemC's end) does not kill the process. A
// peer that goes away while it is sent to must not kill the server: SIGPIPE is ignored (sends also pass
// MSG_NOSIGNAL).
class StopSignals {
 public:
  // Check failure() before serving. No exception: see pevp/capi/stale_stack_poison.h.
  StopSignals() {
    if (::pipe2(pipe_, O_NONBLOCK | O_CLOEXEC) != 0) {
      failure_ = std::string("cannot create the stop pipe: ") + std::strerror(errno);
      return;
    }
    g_stop = 0;
    g_stop_pipe = pipe_[1];
    struct sigaction stop {};
    stop.sa_handler = on_stop_signal;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, nullptr);
    sigaction(SIGTERM, &stop, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
  }
  ~StopSignals() {
    if (!failure_.empty()) return;
    g_stop_pipe = -1;
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  const std::string& failure() const { return failure_; }
  int read_end() const { return pipe_[0]; }

 private:
  std::string failure_;
  int pipe_[2] = {-1, -1};
};

// poll() on `fds` that also ends, returning -1 with errno EINTR, once a stop signal has arrived -- also when it
// arrived just before the call. A negative timeout waits without end.
template <std::size_t N>
int wait_for(const StopSignals& stops, pollfd (&fds)[N], std::chrono::milliseconds timeout) {
  pollfd all[N + 1];
  std::copy(fds, fds + N, all);
  all[N] = {stops.read_end(), POLLIN, 0};
  const int n = ::poll(all, N + 1, static_cast<int>(timeout.count()));
  std::copy(all, all + N, fds);
  if (n > 0 && all[N].revents != 0) {
    errno = EINTR;
    return -1;
  }
  return n;
}

enum class ClientEnd { Left, Dropped, Shutdown, Stopped };

const std::string kClientLeft = "the client left";

// Why the request being executed for client `c` must end now, or "": a stop signal arrived (its reply tells the
// client), or the client is gone (its end of the stream closed: nobody waits for the reply). Asked between slices
// of the request's simulation (Machine::execute), so a wait a client started never outlives it.
std::string why_cancel(const Connection& c) {
  if (g_stop) return "the server is stopping (a stop signal)";
  pollfd fd = {c.fd(), POLLRDHUP, 0};
  if (::poll(&fd, 1, 0) > 0 && (fd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return kClientLeft;
  return "";
}

class Server {
 public:
  Server(Machine& m, remote::Listener& l, const StopSignals& stops, const ServeOptions& o, std::ostream& err)
      : machine_(m), listener_(l), stops_(stops), options_(o), err_(err) {}

  ClientEnd serve_client(Connection& c, unsigned id) {
    const std::string who = "client " + std::to_string(id);
    for (;;) {
      clear_stale_stack_poison();
      if (g_stop) return ClientEnd::Stopped;
      pollfd fds[2] = {{c.fd(), POLLIN, 0}, {listener_.fd(), POLLIN, 0}};
      const int n = wait_for(stops_, fds, options_.idle_timeout);
      if (n < 0) {
        if (errno == EINTR) continue;
        err_ << "pe-vp serve: poll failed; " << who << " dropped\n";
        return ClientEnd::Dropped;
      }
      if (n == 0) {
        err_ << "pe-vp serve: " << who << " silent for " << options_.idle_timeout.count() << " ms: dropped\n";
        return ClientEnd::Dropped;
      }
      // The client first: one that just left (its end of stream is what is readable) must be seen to have gone
      // before a newcomer is turned away as "busy".
      if (fds[0].revents == 0) {
        if (fds[1].revents & POLLIN) refuse_newcomer();
        continue;
      }
      // No exception on this path: see pevp/capi/stale_stack_poison.h.
      Connection::Received got = c.try_receive(options_.frame_timeout, remote::Millis(0));
      switch (got.kind) {
        case Connection::Received::Kind::Closed:
          return ClientEnd::Left;
        case Connection::Received::Kind::Broken:
          err_ << "pe-vp serve: " << who << ": " << got.why << ": dropped\n";
          return ClientEnd::Dropped;
        case Connection::Received::Kind::Malformed:
          // The frame's length or version is wrong: what follows cannot be framed, so the client goes.
          reply_error(c, Status::Protocol, got.why);
          c.close_after_last_frame(remote::Millis(200));
          err_ << "pe-vp serve: " << who << ": " << got.why << ": dropped\n";
          return ClientEnd::Dropped;
        case Connection::Received::Kind::Frame:
          break;
      }
      const std::optional<Op> op = remote::op_from_byte(got.frame.kind);
      bool sent;
      if (!op) {
        sent = reply_error(c, Status::Protocol, "unknown op " + std::to_string(got.frame.kind) + " (docs/protocol.md)");
      } else {
        std::string cancelled;
        const Outcome o = machine_.execute(*op, got.frame.payload, [&] { return cancelled = why_cancel(c); });
        if (cancelled == kClientLeft) {
          err_ << "pe-vp serve: " << who << " left during its " << remote::name(*op) << " request: cancelled\n";
          return ClientEnd::Left;
        }
        std::string why;
        const auto ok = static_cast<std::uint8_t>(remote::Reply::Ok);
        sent = o.ok() ? c.try_send(ok, o.payload, options_.frame_timeout, &why)
                      : reply_error(c, o.status, o.message, &why);
        if (!sent) err_ << "pe-vp serve: " << who << ": " << why << ": dropped\n";
        if (sent && *op == Op::Shutdown && o.ok()) return ClientEnd::Shutdown;
      }
      if (!sent) return ClientEnd::Dropped;
    }
  }

 private:
  // One client at a time: a second one hears why and is closed, instead of waiting unanswered.
  void refuse_newcomer() {
    std::optional<Connection> other = listener_.try_accept();
    if (!other) return;
    reply_error(*other, Status::State, "busy: the VP is serving another client; connect again when it has left");
    other->close_after_last_frame(remote::Millis(200));
  }

  bool reply_error(Connection& c, Status status, const std::string& message, std::string* why = nullptr) {
    std::string ignored;
    return c.try_send(static_cast<std::uint8_t>(remote::Reply::Error), remote::error_payload(status, message),
                      options_.frame_timeout, why ? why : &ignored);
  }

  Machine& machine_;
  remote::Listener& listener_;
  const StopSignals& stops_;
  const ServeOptions& options_;
  std::ostream& err_;
};

}  // namespace

int serve(const platform::VpConfig& config, const ServeOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.endpoint.loopback())
    err << "pe-vp serve: warning: " << options.endpoint.describe()
        << " is not a loopback address: anyone who reaches it drives the VP (the protocol has no authentication)\n";
  std::string error;
  Machine* machine = Machine::open(config, &error);
  if (machine == nullptr) {
    err << "pe-vp serve: " << error << '\n';
    return 2;
  }
  if (options.log_firmware) machine->log_firmware(err);
  std::unique_ptr<remote::Listener> listener;
  try {
    listener = std::make_unique<remote::Listener>(options.endpoint);
  } catch (const std::exception& e) {
    err << "pe-vp serve: cannot listen: " << e.what() << '\n';
    return 2;
  }
  const StopSignals stop_signals;
  if (!stop_signals.failure().empty()) {
    err << "pe-vp serve: " << stop_signals.failure() << '\n';
    return 2;
  }
  out << "pe-vp serve: listening on " << listener->bound().describe() << " (" << isa::name(config.gen()) << ")"
      << std::endl;
  Server server(*machine, *listener, stop_signals, options, err);
  unsigned clients = 0;
  while (!g_stop) {
    clear_stale_stack_poison();
    pollfd fd[1] = {{listener->fd(), POLLIN, 0}};
    if (wait_for(stop_signals, fd, remote::kForever) < 0) continue;  // EINTR: a signal; the loop checks it
    std::optional<Connection> c = listener->try_accept();
    if (!c) continue;
    const ClientEnd end = server.serve_client(*c, ++clients);
    if (end == ClientEnd::Shutdown) {
      out << "pe-vp serve: shut down by client " << clients << std::endl;
      return 0;
    }
    if (options.once || end == ClientEnd::Stopped) break;
  }
  out << "pe-vp serve: stopped" << std::endl;
  return 0;
}

}  // namespace pevp::capi
