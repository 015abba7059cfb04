// The VP behind the C API and `pe-vp serve`: one platform in this process and the requests of the MMIO protocol
// (pevp/remote/protocol.h) executed on it. The C API's in-process calls and the server's frames go through the one
// execute(), so a driver sees the same results, errors and simulated times in-process and over a socket.
//
// SystemC runs in the caller's thread: execute() hands a request to a host module's thread on the platform bus and
// runs the simulation until the request is done, when the host pauses it (sc_pause). Simulated time advances only
// inside requests -- never between them, whatever the wall-clock time -- so a sequence of requests always gives
// the same results (docs/protocol.md "Time").
//
// A request runs the simulation in slices of simulated time sized to a few milliseconds of wall time each; between
// two slices execute() asks its caller whether to cancel the request (its client left, the server must stop), so a
// long wait ends promptly and leaves the VP usable. Simulated time has a limit, kMaxSimulatedTime (D-SIM-TIME-LIMIT).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "pevp/platform/config.h"
#include "pevp/platform/time_limit.h"
#include "pevp/remote/protocol.h"

namespace pevp::capi {

// A request's outcome: Status::Ok with the op's result payload, or a status and a message.
struct Outcome {
  remote::Status status = remote::Status::Ok;
  std::string message;
  std::vector<std::uint8_t> payload;
  bool ok() const { return status == remote::Status::Ok; }
};

// The most simulated time a VP reaches (pevp/platform/time_limit.h, D-SIM-TIME-LIMIT). A wait whose timeout would pass
// it is refused, a checkpoint of a later time is not restored, and once it is reached only requests that take no
// simulated time are served.
using platform::kMaxSimulatedPs;

// Asked between slices of a request's simulation: why to cancel the request ("the client left"), or "" to go on.
using CancelCheck = std::function<std::string()>;

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
  // `cancel`, when given, is asked between slices of the simulation (never for a request that ends within its
  // first); once it gives a reason, the request's wait ends at the next delta cycle with Status::State,
  // "<op>: cancelled at <t> ps: <reason>", and the VP stays consistent (the engine and a submitted program go on
  // with the next request that runs the simulation).
  Outcome execute(remote::Op op, const std::vector<std::uint8_t>& payload, const CancelCheck& cancel = {});
  // A deadlock (the simulation ran out of events inside a request) leaves the VP unusable.
  bool broken() const;

  struct Impl;

 private:
  explicit Machine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pevp::capi
