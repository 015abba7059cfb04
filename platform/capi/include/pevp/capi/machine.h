// The VP behind the C API and `pe-vp serve`: one platform in this process and the requests of the MMIO protocol
// (pevp/remote/protocol.h) executed on it. The C API's in-process calls and the server's frames go through the one
// execute(), so a driver sees the same results, errors and simulated times in-process and over a socket.
//
// SystemC runs in the caller's thread: execute() hands a request to a host module's thread on the platform bus and
// runs the simulation until the request is done, when the host pauses it (sc_pause). Simulated time advances only
// inside requests -- never between them, whatever the wall-clock time -- so a sequence of requests always gives
// the same results (docs/protocol.md "Time").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "pevp/platform/config.h"
#include "pevp/remote/protocol.h"

namespace pevp::capi {

// A request's outcome: Status::Ok with the op's result payload, or a status and a message.
struct Outcome {
  remote::Status status = remote::Status::Ok;
  std::string message;
  std::vector<std::uint8_t> payload;
  bool ok() const { return status == remote::Status::Ok; }
};

class Machine {
 public:
  // The process's one VP (SystemC elaborates once and cannot take a simulation apart): nullptr with *error set
  // when one exists already (exists()) or the configuration is refused.
  static Machine* open(const platform::VpConfig& config, std::string* error);
  static bool exists();
  const platform::VpConfig& config() const;
  // Prints the firmware's line for each instruction and each micro-op with its simulated times on `out`
  // (pevp/platform/firmware_log.h), from now on.
  void log_firmware(std::ostream& out);
  // Executes one request. Never throws: a malformed payload is Status::Protocol naming the op and field.
  Outcome execute(remote::Op op, const std::vector<std::uint8_t>& payload);
  // A deadlock (the simulation ran out of events inside a request) leaves the VP unusable.
  bool broken() const;

  struct Impl;

 private:
  explicit Machine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pevp::capi
