// `pe-vp serve`: the VP as an MMIO server (docs/protocol.md). One VP, one client at a time: a client's requests are
// executed in order on the process's Machine; a client that connects while another is served gets an error frame
// (State, "busy") and is closed; when a client goes, the next one is taken, and the VP keeps its state (unless
// reset_between_clients). A client
// that sends a malformed or oversized frame gets an error frame (the connection is dropped when the stream cannot
// be trusted after it), one that stalls mid-frame or does not take its reply is dropped; none of it reaches the
// VP, whose state only changes by whole, valid requests. On TCP a connection is taken only once its first frame
// presented the token the server wrote to its owner-only token file (pevp/remote/credential.h).
#pragma once

#include <iosfwd>
#include <string>

#include "pevp/platform/config.h"
#include "pevp/remote/socket.h"

namespace pevp::capi {

struct ServeOptions {
  remote::Endpoint endpoint;
  bool once = false;                              // exit after the first client leaves
  remote::Millis frame_timeout{10000};            // the rest of a frame once it began; sending a reply
  remote::Millis idle_timeout = remote::kForever; // a connected client silent this long is dropped
  bool log_firmware = false;                      // the firmware's lines and each micro-op, on `err`
  std::string token_file;                         // TCP: where the token goes ("": the default path)
  bool insecure_no_auth = false;                  // TCP: take every connection without a token
  // When a client has gone, the VP is hard-reset (pevp/platform/reset.h) before the next is taken. Off, the next
  // client inherits everything: a program still queued or blocked on a semaphore, an error record that stops its
  // own program until cleared, armed registers, semaphores, SBUF / PSUM / HBM contents and the DMA queues.
  bool reset_between_clients = false;
};

// Runs the server until a Shutdown request, SIGINT or SIGTERM (or the first client's end with `once`). Prints
// "pe-vp serve: listening on ENDPOINT" on `out` once it accepts connections (the port the system chose for
// tcp:...:0) and, on TCP, ", token in PATH". Returns the process's exit status: 0, or 2 when it cannot listen or
// write its token file.
int serve(const platform::VpConfig& config, const ServeOptions& options, std::ostream& out, std::ostream& err);

}  // namespace pevp::capi
