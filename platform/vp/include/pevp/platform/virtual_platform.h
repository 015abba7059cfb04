// A platform with a driver program on its bus: the composition (platform.h)
// and one host thread running a Driver (driver.h), for bring-up programs,
// the command line and the tests.
#pragma once

#include <functional>
#include <memory>

#include <systemc>

#include "pevp/platform/driver.h"
#include "pevp/platform/platform.h"

namespace pevp::platform {

struct VpConfig;  // config.h

class VirtualPlatform {
 public:
  explicit VirtualPlatform(const PlatformConfig& config);
  explicit VirtualPlatform(const VpConfig& config);
  ~VirtualPlatform();
  Platform& platform();
  const AddressMap& map() const;
  // Elaborates and simulates until `program` returns (or throws: the exception is
  // rethrown here). Returns the simulated time at the end.
  sc_core::sc_time run(std::function<void(Driver&)> program);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pevp::platform
