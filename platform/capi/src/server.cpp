#include "pevp/capi/server.h"

#include <csignal>
#include <cerrno>
#include <ostream>

#include <poll.h>

#include "pevp/capi/machine.h"

namespace pevp::capi {

namespace {

using remote::Connection;
using remote::Op;
using remote::Status;

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

// SIGINT and SIGTERM end the server between requests; poll() returns early for them (no SA_RESTART). A peer that
// goes away while it is sent to must not kill the server: SIGPIPE is ignored (sends also pass MSG_NOSIGNAL).
void install_signal_handlers() {
  struct sigaction stop {};
  stop.sa_handler = on_stop_signal;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGINT, &stop, nullptr);
  sigaction(SIGTERM, &stop, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

void send_error(Connection& c, Status status, const std::string& message, remote::Millis timeout) {
  c.send(static_cast<std::uint8_t>(remote::Reply::Error), remote::error_payload(status, message), timeout);
}

enum class ClientEnd { Left, Dropped, Shutdown, Stopped };

class Server {
 public:
  Server(Machine& m, remote::Listener& l, const ServeOptions& o, std::ostream& err)
      : machine_(m), listener_(l), options_(o), err_(err) {}

  ClientEnd serve_client(Connection& c, unsigned id) {
    const std::string who = "client " + std::to_string(id);
    for (;;) {
      if (g_stop) return ClientEnd::Stopped;
      pollfd fds[2] = {{c.fd(), POLLIN, 0}, {listener_.fd(), POLLIN, 0}};
      const int n = ::poll(fds, 2, static_cast<int>(options_.idle_timeout.count()));
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
      try {
        std::optional<remote::Frame> frame;
        try {
          frame = c.receive(options_.frame_timeout, remote::Millis(0));
        } catch (const remote::ProtocolError& e) {
          // The frame's length or version is wrong: what follows cannot be framed, so the client goes.
          send_error(c, Status::Protocol, e.what(), options_.frame_timeout);
          c.close_after_last_frame(remote::Millis(200));
          err_ << "pe-vp serve: " << who << ": " << e.what() << ": dropped\n";
          return ClientEnd::Dropped;
        }
        if (!frame) return ClientEnd::Left;
        const std::optional<Op> op = remote::op_from_byte(frame->kind);
        if (!op) {
          send_error(c, Status::Protocol, "unknown op " + std::to_string(frame->kind) + " (docs/protocol.md)",
                     options_.frame_timeout);
          continue;
        }
        const Outcome o = machine_.execute(*op, frame->payload);
        if (o.ok())
          c.send(static_cast<std::uint8_t>(remote::Reply::Ok), o.payload, options_.frame_timeout);
        else
          send_error(c, o.status, o.message, options_.frame_timeout);
        if (*op == Op::Shutdown && o.ok()) return ClientEnd::Shutdown;
      } catch (const remote::ConnectionError& e) {
        err_ << "pe-vp serve: " << who << ": " << e.what() << ": dropped\n";
        return ClientEnd::Dropped;
      }
    }
  }

 private:
  // One client at a time: a second one hears why and is closed, instead of waiting unanswered.
  void refuse_newcomer() {
    try {
      Connection other = listener_.accept();
      send_error(other, Status::State, "busy: the VP is serving another client; connect again when it has left",
                 remote::Millis(1000));
      other.close_after_last_frame(remote::Millis(200));
    } catch (const remote::ConnectionError&) {
    }
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
  install_signal_handlers();
  out << "pe-vp serve: listening on " << listener->bound().describe() << " (" << isa::name(config.gen()) << ")"
      << std::endl;
  Server server(*machine, *listener, options, err);
  unsigned clients = 0;
  while (!g_stop) {
    pollfd fd{listener->fd(), POLLIN, 0};
    if (::poll(&fd, 1, -1) < 0) continue;  // EINTR: a signal; the loop checks it
    Connection c = [&] {
      try {
        return listener->accept();
      } catch (const remote::ConnectionError&) {
        return Connection(-1);
      }
    }();
    if (c.fd() < 0) continue;
    const ClientEnd end = server.serve_client(c, ++clients);
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
