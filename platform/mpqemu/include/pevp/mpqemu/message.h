// The mpqemu wire protocol of QEMU 7.2's x-pci-proxy-dev (QEMU's include/hw/remote/mpqemu-link.h), as pe-vp's
// device end speaks it; docs/qemu.md "The device end". Plain C++: no sockets here (link.h carries the frames), so
// the validator is what a fuzz harness feeds.
//
// A message is a 16-byte header -- int32 command at 0 (little-endian), 4 bytes of padding, uint64 payload size at
// 8 -- then exactly `size` bytes of payload; file descriptors ride with it as SCM_RIGHTS. The proxy sends every
// request; the device answers those that expect a reply with one RET whose payload is a uint64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pevp::mpqemu {

enum class Command : std::int32_t {
  SyncSysmem = 0,   // the guest's fd-backed RAM: one fd per region
  Ret = 1,          // a reply (the device sends it; it never expects one)
  PciCfgWrite = 2,
  PciCfgRead = 3,
  BarWrite = 4,
  BarRead = 5,
  SetIrqfd = 6,     // the INTx eventfds (interrupt, resample), usable only under KVM
  DeviceReset = 7,
};
inline constexpr std::int32_t kCommandCount = 8;  // commands are 0 .. kCommandCount - 1
const char* name(Command c);
// The command's name, or "command N" for a number outside the protocol.
std::string command_name(std::int32_t cmd);
// Whether the proxy waits for a RET after sending `cmd` (config and BAR accesses, reset).
bool expects_reply(std::int32_t cmd);

inline constexpr std::size_t kHeaderBytes = 16;
inline constexpr std::size_t kMaxPayloadBytes = 192;  // the largest payload QEMU sends (SYNC_SYSMEM's)
inline constexpr std::size_t kMaxFds = 7;             // QEMU refuses a message with 8 (REMOTE_MAX_FDS)
inline constexpr std::size_t kSysmemSlots = 8;        // SYNC_SYSMEM's arrays hold 8 entries
inline constexpr std::uint64_t kAllOnes = ~std::uint64_t{0};  // a failed request's RET value

struct Header {
  std::int32_t cmd = 0;
  std::uint64_t size = 0;
};
Header decode_header(const std::uint8_t (&bytes)[kHeaderBytes]);
void encode_header(const Header& h, std::uint8_t (&bytes)[kHeaderBytes]);

// Why a message may not be dispatched -- a command outside the protocol or one the proxy never sends (RET), a
// payload of the wrong size for its command, the wrong number of fds -- or "" when it may. The fds' liveness is
// the link's check (it holds them). The rules are QEMU's mpqemu_msg_valid, made exact for every command.
std::string validate(const Header& h, std::size_t fd_count);

// ---- payloads (x86_64 layouts) ----

// PCI_CFGREAD / PCI_CFGWRITE: {u32 addr; u32 val; i32 len}.
struct ConfigAccess {
  std::uint32_t address = 0;
  std::uint32_t value = 0;
  std::int32_t length = 0;
  static constexpr std::size_t kBytes = 12;
};
// BAR_READ / BAR_WRITE: {u64 addr; u64 val; u32 size; bool memory; 3 padding}. `address` is the absolute bus
// (guest-physical) address, not relative to the BAR.
struct BarAccess {
  std::uint64_t address = 0;
  std::uint64_t value = 0;
  std::uint32_t size = 0;
  bool memory = true;
  static constexpr std::size_t kBytes = 24;
};
// SYNC_SYSMEM: {u64 gpas[8]; u64 sizes[8]; i64 offsets[8]}; region i is backed by the message's fd i, so only the
// first fd-count entries mean anything.
struct SysmemRegion {
  std::uint64_t gpa = 0;
  std::uint64_t size = 0;
  std::int64_t offset = 0;  // in the fd
};
inline constexpr std::size_t kSysmemBytes = kSysmemSlots * 3 * 8;
static_assert(kSysmemBytes == kMaxPayloadBytes, "SYNC_SYSMEM is the largest payload");
inline constexpr std::size_t kRetBytes = 8;

// Decoders of a validated payload (the size is validate()'s; a wrong size throws std::invalid_argument).
ConfigAccess decode_config(const std::vector<std::uint8_t>& payload);
BarAccess decode_bar(const std::vector<std::uint8_t>& payload);
std::vector<SysmemRegion> decode_sysmem(const std::vector<std::uint8_t>& payload, std::size_t fd_count);
std::uint64_t decode_ret(const std::vector<std::uint8_t>& payload);

// Encoders: the device's RET, and every request as the proxy sends it (the tests' and the bench's stand-in proxy).
std::vector<std::uint8_t> encode(const ConfigAccess& c);
std::vector<std::uint8_t> encode(const BarAccess& b);
std::vector<std::uint8_t> encode(const std::vector<SysmemRegion>& regions);  // at most kSysmemSlots
std::vector<std::uint8_t> encode_ret(std::uint64_t value);

}  // namespace pevp::mpqemu
