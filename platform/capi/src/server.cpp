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
#include "pevp/remote/credential.h"

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

// TCP's credential: the token a connection's first frame must present, and the owner-only file it is in.
struct Credential {
  std::string token;
  remote::OwnedFile file;
};

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
  // `credential`: null when connections are taken without one (a Unix socket, or --insecure-no-auth).
  Server(Machine& m, remote::Listener& l, const StopSignals& stops, const ServeOptions& o,
         const Credential* credential, std::ostream& err)
      : machine_(m), listener_(l), stops_(stops), options_(o), credential_(credential), err_(err) {}

  // Whether the connection may be served: on a server with a credential its first frame, within the frame
  // timeout, must be auth with the token (answered ok); anything else is answered with status 9 and the
  // connection closed, without a wait.
  bool admit(Connection& c, unsigned id) {
    if (credential_ == nullptr) return true;
    const std::string who = "client " + std::to_string(id);
    pollfd fds[1] = {{c.fd(), POLLIN, 0}};
    const int n = wait_for(stops_, fds, options_.frame_timeout);
    if (n < 0) return false;  // a stop signal (or poll failed): the connection goes with the server
    if (n == 0) {
      err_ << "pe-vp serve: " << who << ": no token within " << options_.frame_timeout.count() << " ms: dropped\n";
      return false;
    }
    Connection::Received got = c.try_receive(options_.frame_timeout, remote::Millis(0));
    if (got.kind != Connection::Received::Kind::Frame) {
      if (got.kind == Connection::Received::Kind::Malformed) refuse(c, Status::Protocol, got.why);
      if (got.kind != Connection::Received::Kind::Closed)
        err_ << "pe-vp serve: " << who << ": " << got.why << ": dropped\n";
      return false;
    }
    const std::string problem = credential_problem(got.frame);
    if (!problem.empty()) {
      refuse(c, Status::Auth, problem);
      err_ << "pe-vp serve: " << who << ": not admitted: " << problem << "\n";
      return false;
    }
    std::string why;
    if (c.try_send(static_cast<std::uint8_t>(remote::Reply::Ok), {}, options_.frame_timeout, &why)) return true;
    err_ << "pe-vp serve: " << who << ": " << why << ": dropped\n";
    return false;
  }

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
      if (got.frame.kind == remote::kAuthOp) {
        sent = answer_late_auth(c);
      } else if (!op) {
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
    refuse(*other, Status::State, "busy: the VP is serving another client; connect again when it has left");
  }

  // A last error frame and the end of a connection this thread must not wait for: the served client's requests,
  // or the next client's admission, would wait behind it. The frame is sent without waiting (a fresh
  // connection's send buffer holds it), and the connection closed without lingering.
  void refuse(Connection& c, Status status, const std::string& message) {
    std::string ignored;
    c.try_send(static_cast<std::uint8_t>(remote::Reply::Error), remote::error_payload(status, message),
               remote::Millis(0), &ignored);
    c.close_at_once_after_last_frame();
  }

  // What keeps `first` (a connection's first frame) from admitting it, or "".
  std::string credential_problem(const remote::Frame& first) const {
    if (first.kind != remote::kAuthOp)
      return "this server takes a token first: an auth frame (op 5) with the token from its token file " +
             credential_->file.path() + " (docs/protocol.md, Authentication); the first frame was op " +
             std::to_string(first.kind);
    std::string malformed;
    const std::optional<std::string> token = remote::token_of_auth_payload(first.payload, &malformed);
    if (!token) return malformed;
    if (!remote::token_matches(credential_->token, *token))
      return "the token is not this server's (its token file is " + credential_->file.path() + ")";
    return "";
  }

  // An auth frame on an admitted connection, or on a server that takes no token: nothing to check.
  bool answer_late_auth(Connection& c) {
    std::string why;
    if (c.try_send(static_cast<std::uint8_t>(remote::Reply::Ok), {}, options_.frame_timeout, &why)) return true;
    err_ << "pe-vp serve: " << why << ": dropped\n";
    return false;
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
  const Credential* credential_;
  std::ostream& err_;
};

// The credential a TCP server takes (a fresh token in its file), or none: nullopt with *failure empty on a Unix
// socket or with --insecure-no-auth, or with *failure saying why the token file could not be written.
std::optional<Credential> make_credential(const ServeOptions& options, const remote::Endpoint& bound,
                                          std::string* failure) {
  if (bound.kind != remote::Endpoint::Kind::Tcp || options.insecure_no_auth) return std::nullopt;
  try {
    const std::string path = options.token_file.empty() ? remote::default_token_path(bound) : options.token_file;
    Credential c;
    c.token = remote::new_token();
    c.file = remote::write_token_file(path, c.token);
    return c;
  } catch (const std::runtime_error& e) {
    *failure = e.what();
    return std::nullopt;
  }
}

}  // namespace

int serve(const platform::VpConfig& config, const ServeOptions& options, std::ostream& out, std::ostream& err) {
  const bool tcp = options.endpoint.kind == remote::Endpoint::Kind::Tcp;
  if (tcp && options.insecure_no_auth)
    err << "pe-vp serve: warning: --insecure-no-auth: any user who reaches " << options.endpoint.describe()
        << " drives the VP, privileged accesses and shutdown included\n";
  if (!options.endpoint.loopback())
    err << "pe-vp serve: warning: " << options.endpoint.describe()
        << " is not a loopback address: the protocol is not encrypted, and the token (if any) travels in clear\n";
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
  std::string failure;
  const std::optional<Credential> credential = make_credential(options, listener->bound(), &failure);
  if (!failure.empty()) {
    err << "pe-vp serve: " << failure << '\n';
    return 2;
  }
  out << "pe-vp serve: listening on " << listener->bound().describe() << " (" << isa::name(config.gen()) << ")";
  if (credential) out << ", token in " << credential->file.path();
  out << std::endl;
  Server server(*machine, *listener, stop_signals, options, credential ? &*credential : nullptr, err);
  unsigned clients = 0;
  while (!g_stop) {
    clear_stale_stack_poison();
    pollfd fd[1] = {{listener->fd(), POLLIN, 0}};
    if (wait_for(stop_signals, fd, remote::kForever) < 0) continue;  // EINTR: a signal; the loop checks it
    std::optional<Connection> c = listener->try_accept();
    if (!c || !server.admit(*c, ++clients)) continue;
    const ClientEnd end = server.serve_client(*c, clients);
    if (end == ClientEnd::Shutdown) {
      out << "pe-vp serve: shut down by client " << clients << std::endl;
      return 0;
    }
    if (options.once || end == ClientEnd::Stopped) break;
    if (options.reset_between_clients) {
      // The next client starts from the power-on state, whatever this one left queued, blocked or failed.
      const Outcome reset = machine->execute(remote::Op::Reset, {});
      if (!reset.ok())
        err << "pe-vp serve: client " << clients << " left; the reset before the next client failed: "
            << reset.message << '\n';
    }
  }
  out << "pe-vp serve: stopped" << std::endl;
  return 0;
}

}  // namespace pevp::capi
