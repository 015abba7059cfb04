// The round trip of one BAR read through `pe-vp qemu-device`'s device end, as a proxy sees it: a C++ stand-in for
// QEMU's x-pci-proxy-dev sends BAR_READ over a real socketpair and waits for the RET; the device's link thread hands
// the read to the simulation (the inbox, async_request_update), the PCI function reads the DMA face's dma_id over
// the system bus, and the value goes back. Prints the median, mean and 99th percentile of N round trips (and of
// config reads, which do not touch the bus). Its own sc_main: one simulation per process. docs/qemu.md "Figures".
//   qemu_device_bench [N]   (default 20000)
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "pevp/mpqemu/link.h"
#include "pevp/platform/config.h"
#include "pevp/qemu_device/device.h"
#include "pevp/qemu_device/serve.h"

using namespace pevp;
using Clock = std::chrono::steady_clock;

namespace {

std::uint64_t request(mpqemu::Link& l, mpqemu::Command c, const std::vector<std::uint8_t>& payload) {
  if (!l.send(c, payload)) return mpqemu::kAllOnes;
  mpqemu::Link::Received r = l.receive();
  return r.kind == mpqemu::Link::Received::Kind::Message ? mpqemu::decode_ret(r.message.payload) : mpqemu::kAllOnes;
}

void report(const char* what, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double u : us) sum += u;
  std::printf("%-28s n=%zu  median %.2f us  mean %.2f us  p99 %.2f us\n", what, us.size(), us[us.size() / 2],
              sum / static_cast<double>(us.size()), us[us.size() * 99 / 100]);
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  platform::VpConfig config = platform::preset(isa::Generation::MARIANA);
  qemu_device::QemuDevice device("pevp", config);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 1;
  mpqemu::Link device_link{mpqemu::UniqueFd(sv[0])};
  auto proxy = std::make_unique<mpqemu::Link>(mpqemu::UniqueFd(sv[1]), mpqemu::Link::Role::Proxy);
  qemu_device::LinkServer server(device, device_link);
  std::thread link_thread([&] { server.serve(); });
  std::uint64_t value = 0;
  std::thread proxy_thread([&] {
    constexpr std::uint32_t kBar0 = 0xfe000000;
    const platform::AddressMap& m = config.platform.map;
    request(*proxy, mpqemu::Command::PciCfgWrite, mpqemu::encode(mpqemu::ConfigAccess{0x10, kBar0, 4}));
    request(*proxy, mpqemu::Command::PciCfgWrite, mpqemu::encode(mpqemu::ConfigAccess{0x04, 0x6, 2}));
    const auto bar_read = mpqemu::encode(mpqemu::BarAccess{kBar0 + (m.dma - m.apb), 0, 4, true});
    const auto cfg_read = mpqemu::encode(mpqemu::ConfigAccess{0, 0, 4});
    std::vector<double> bar_us, cfg_us;
    for (int i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      value = request(*proxy, mpqemu::Command::BarRead, bar_read);
      bar_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    for (int i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      request(*proxy, mpqemu::Command::PciCfgRead, cfg_read);
      cfg_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    report("BAR read (dma_id, BAR0)", bar_us);
    report("config read (vendor/device)", cfg_us);
    proxy.reset();
  });
  device.run();
  proxy_thread.join();
  link_thread.join();
  std::printf("last value read: 0x%llx (dma_id 0x0001444d expected)\n", static_cast<unsigned long long>(value));
  return value == 0x0001444d ? 0 : 1;
}
