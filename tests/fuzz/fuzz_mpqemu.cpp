// libFuzzer harness: the mpqemu link's validator and framing (platform/mpqemu, docs/qemu.md) on arbitrary messages
// from a hostile proxy. The input is: one byte whose low 4 bits are how many descriptors ride with the message
// (eventfds made here), then the bytes the proxy writes -- a 16-byte header and whatever follows. They go over a
// real socketpair into a device-side Link. Its contract, for every input:
//   - receive() never crashes or hangs: the stream ends (Closed / Broken) or a message is Message / Malformed;
//   - a Message is exactly what validate() accepts: its command, payload size and fd count pass, and its payload
//     decodes without an exception; a Malformed one names a reason, and is one validate() (or the fd check) refuses;
//   - every descriptor received is closed once the Received goes (no fd is left open after an input);
//   - a decoded payload encodes back to the same bytes (BAR accesses: up to their padding and the bool's byte).
#include <dirent.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "pevp/mpqemu/link.h"
#include "pevp/mpqemu/message.h"

namespace {

using namespace pevp;
using namespace pevp::mpqemu;

constexpr const char* kTarget = "fuzz_mpqemu";

int open_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

void check_message(const Message& m) {
  const std::string why = validate({m.cmd, m.payload.size()}, m.fds.size());
  if (!why.empty()) fuzz::fail(kTarget, "a message validate() refuses was dispatched: " + why);
  try {
    switch (m.command()) {
      case Command::PciCfgRead:
      case Command::PciCfgWrite:
        if (encode(decode_config(m.payload)) != m.payload) fuzz::fail(kTarget, "config access does not round-trip");
        break;
      case Command::BarRead:
      case Command::BarWrite: {
        const std::vector<std::uint8_t> back = encode(decode_bar(m.payload));
        if (!std::equal(back.begin(), back.begin() + 20, m.payload.begin()))
          fuzz::fail(kTarget, "BAR access does not round-trip: " + fuzz::hex(m.payload.data(), m.payload.size()));
        break;
      }
      case Command::SyncSysmem: {
        const std::vector<SysmemRegion> regions = decode_sysmem(m.payload, m.fds.size());
        if (regions.size() != m.fds.size()) fuzz::fail(kTarget, "SYNC_SYSMEM regions != fds");
        break;
      }
      default: break;
    }
  } catch (const std::exception& e) {
    fuzz::fail(kTarget, std::string("a validated payload did not decode: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const int before = open_fds();
  {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) fuzz::fail(kTarget, "socketpair failed");
    UniqueFd proxy(sv[1]);
    Link device{UniqueFd(sv[0])};
    const unsigned fd_count = data[0] & 0x0F;
    std::vector<UniqueFd> fds;
    std::vector<int> raw;
    for (unsigned i = 0; i < fd_count; ++i) {
      fds.emplace_back(::eventfd(0, EFD_CLOEXEC));
      raw.push_back(fds.back().get());
    }
    // The proxy's bytes with the fds; the socket buffer holds any input libFuzzer makes (-max_len).
    if (size > 1 && !send_with_fds(proxy.get(), data + 1, size - 1, raw)) fuzz::fail(kTarget, "sendmsg failed");
    fds.clear();
    proxy.reset();  // the peer leaves after its bytes: every receive ends
    for (int i = 0; i < 64; ++i) {
      Link::Received r = device.receive();
      using Kind = Link::Received::Kind;
      if (r.kind == Kind::Closed || r.kind == Kind::Broken) break;
      if (r.kind == Kind::Stopped) fuzz::fail(kTarget, "stopped without a stop descriptor");
      if (r.kind == Kind::Malformed) {
        if (r.why.empty()) fuzz::fail(kTarget, "a refusal without a reason");
        continue;
      }
      check_message(r.message);
    }
  }
  if (open_fds() != before) fuzz::fail(kTarget, "descriptors leaked: " + std::to_string(open_fds() - before));
  return 0;
}
