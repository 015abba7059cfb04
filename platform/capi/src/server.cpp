#include "pevp/capi/server.h"

#include <chrono>
#include <csignal>
#include <cerrno>
#include <ostream>

#include <poll.h>
#include <pthread.h>

#include "pevp/capi/machine.h"
#include "pevp/capi/stale_stack_poison.h"

namespace pevp::capi {

namespace {

using remote::Connection;
using remote::Op;
using remote::Status;

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

// The signal mask the server's waits run under: the process's own, with SIGINT and SIGTERM let through.
sigset_t g_wait_mask;

// SIGINT and SIGTERM end the server between requests. While it serves they stay blocked except inside wait_for(),
// which unblocks them atomically with the wait (ppoll): a signal that lands between the loop's g_stop check and the
// wait would otherwise be handled just before an endless poll() and the server would never stop. Blocked, it stays
// pending and ends the next wait at once. The thread's mask is restored when serve() returns. A peer that goes
// away while it is sent to must not kill the server: SIGPIPE is ignored (sends also pass MSG_NOSIGNAL).
class StopSignals {
 public:
  StopSignals() {
    struct sigaction stop {};
    stop.sa_handler = on_stop_signal;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, nullptr);
    sigaction(SIGTERM, &stop, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stops, &previous_);
    g_wait_mask = previous_;
    sigdelset(&g_wait_mask, SIGINT);
    sigdelset(&g_wait_mask, SIGTERM);
  }
  ~StopSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  sigset_t previous_;
};

// poll() that a stop signal interrupts (-1 with EINTR) however close before the call it arrived. A negative
// timeout waits without end.
int wait_for(pollfd* fds, nfds_t count, std::chrono::milliseconds timeout) {
  timespec limit{};
  limit.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  limit.tv_nsec = static_cast<long>(timeout.count() % 1000) * 1000000L;
  return ::ppoll(fds, count, timeout.count() < 0 ? nullptr : &limit, &g_wait_mask);
}

enum class ClientEnd { Left, Dropped, Shutdown, Stopped };

class Server {
 public:
  Server(Machine& m, remote::Listener& l, const ServeOptions& o, std::ostream& err)
      : machine_(m), listener_(l), options_(o), err_(err) {}

  ClientEnd serve_client(Connection& c, unsigned id) {
    const std::string who = "client " + std::to_string(id);
    for (;;) {
      clear_stale_stack_poison();
      if (g_stop) return ClientEnd::Stopped;
      pollfd fds[2] = {{c.fd(), POLLIN, 0}, {listener_.fd(), POLLIN, 0}};
      const int n = wait_for(fds, 2, options_.idle_timeout);
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
        const Outcome o = machine_.execute(*op, got.frame.payload);
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
  out << "pe-vp serve: listening on " << listener->bound().describe() << " (" << isa::name(config.gen()) << ")"
      << std::endl;
  Server server(*machine, *listener, options, err);
  unsigned clients = 0;
  while (!g_stop) {
    clear_stale_stack_poison();
    pollfd fd{listener->fd(), POLLIN, 0};
    if (wait_for(&fd, 1, remote::kForever) < 0) continue;  // EINTR: a signal; the loop checks it
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
