#include "pevp/mpqemu/message.h"

#include <stdexcept>

namespace pevp::mpqemu {

namespace {

std::uint64_t load_le(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

void store_le(std::uint8_t* p, std::uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

void need_size(const std::vector<std::uint8_t>& payload, std::size_t bytes, const char* what) {
  if (payload.size() != bytes)
    throw std::invalid_argument(std::string(what) + ": payload of " + std::to_string(payload.size()) +
                                " bytes, expected " + std::to_string(bytes));
}

// The payload size and fd count each command must have, exactly.
struct Shape {
  std::size_t payload;
  std::size_t min_fds, max_fds;
};

Shape shape_of(Command c) {
  switch (c) {
    case Command::SyncSysmem: return {kSysmemBytes, 1, kMaxFds};
    case Command::Ret: return {kRetBytes, 0, 0};
    case Command::PciCfgWrite:
    case Command::PciCfgRead: return {ConfigAccess::kBytes, 0, 0};
    case Command::BarWrite:
    case Command::BarRead: return {BarAccess::kBytes, 0, 0};
    case Command::SetIrqfd: return {0, 2, 2};
    case Command::DeviceReset: return {0, 0, 0};
  }
  return {0, 0, 0};
}

}  // namespace

const char* name(Command c) {
  switch (c) {
    case Command::SyncSysmem: return "SYNC_SYSMEM";
    case Command::Ret: return "RET";
    case Command::PciCfgWrite: return "PCI_CFGWRITE";
    case Command::PciCfgRead: return "PCI_CFGREAD";
    case Command::BarWrite: return "BAR_WRITE";
    case Command::BarRead: return "BAR_READ";
    case Command::SetIrqfd: return "SET_IRQFD";
    case Command::DeviceReset: return "DEVICE_RESET";
  }
  return "?";
}

std::string command_name(std::int32_t cmd) {
  if (cmd < 0 || cmd >= kCommandCount) return "command " + std::to_string(cmd);
  return name(static_cast<Command>(cmd));
}

bool expects_reply(std::int32_t cmd) {
  if (cmd < 0 || cmd >= kCommandCount) return false;
  switch (static_cast<Command>(cmd)) {
    case Command::PciCfgWrite:
    case Command::PciCfgRead:
    case Command::BarWrite:
    case Command::BarRead:
    case Command::DeviceReset: return true;
    default: return false;
  }
}

Header decode_header(const std::uint8_t (&bytes)[kHeaderBytes]) {
  Header h;
  h.cmd = static_cast<std::int32_t>(static_cast<std::uint32_t>(load_le(bytes, 4)));
  h.size = load_le(bytes + 8, 8);
  return h;
}

void encode_header(const Header& h, std::uint8_t (&bytes)[kHeaderBytes]) {
  store_le(bytes, static_cast<std::uint32_t>(h.cmd), 4);
  store_le(bytes + 4, 0, 4);
  store_le(bytes + 8, h.size, 8);
}

std::string validate(const Header& h, std::size_t fd_count) {
  if (h.cmd < 0 || h.cmd >= kCommandCount)
    return command_name(h.cmd) + ": not a command of the protocol (0.." + std::to_string(kCommandCount - 1) + ")";
  const Command c = static_cast<Command>(h.cmd);
  if (c == Command::Ret) return "RET: the device sends replies and expects none";
  const Shape s = shape_of(c);
  if (h.size != s.payload)
    return std::string(name(c)) + ": payload of " + std::to_string(h.size) + " bytes, expected " +
           std::to_string(s.payload);
  if (fd_count < s.min_fds || fd_count > s.max_fds)
    return std::string(name(c)) + ": " + std::to_string(fd_count) + " file descriptor(s), expected " +
           (s.min_fds == s.max_fds ? std::to_string(s.min_fds)
                                   : std::to_string(s.min_fds) + ".." + std::to_string(s.max_fds));
  return {};
}

ConfigAccess decode_config(const std::vector<std::uint8_t>& p) {
  need_size(p, ConfigAccess::kBytes, "config access");
  ConfigAccess c;
  c.address = static_cast<std::uint32_t>(load_le(p.data(), 4));
  c.value = static_cast<std::uint32_t>(load_le(p.data() + 4, 4));
  c.length = static_cast<std::int32_t>(static_cast<std::uint32_t>(load_le(p.data() + 8, 4)));
  return c;
}

BarAccess decode_bar(const std::vector<std::uint8_t>& p) {
  need_size(p, BarAccess::kBytes, "BAR access");
  BarAccess b;
  b.address = load_le(p.data(), 8);
  b.value = load_le(p.data() + 8, 8);
  b.size = static_cast<std::uint32_t>(load_le(p.data() + 16, 4));
  b.memory = p[20] != 0;
  return b;
}

std::vector<SysmemRegion> decode_sysmem(const std::vector<std::uint8_t>& p, std::size_t fd_count) {
  need_size(p, kSysmemBytes, "SYNC_SYSMEM");
  if (fd_count > kSysmemSlots) throw std::invalid_argument("SYNC_SYSMEM: more fds than region slots");
  std::vector<SysmemRegion> regions(fd_count);
  for (std::size_t i = 0; i < fd_count; ++i) {
    regions[i].gpa = load_le(p.data() + 8 * i, 8);
    regions[i].size = load_le(p.data() + 8 * (kSysmemSlots + i), 8);
    regions[i].offset = static_cast<std::int64_t>(load_le(p.data() + 8 * (2 * kSysmemSlots + i), 8));
  }
  return regions;
}

std::uint64_t decode_ret(const std::vector<std::uint8_t>& p) {
  need_size(p, kRetBytes, "RET");
  return load_le(p.data(), 8);
}

std::vector<std::uint8_t> encode(const ConfigAccess& c) {
  std::vector<std::uint8_t> p(ConfigAccess::kBytes);
  store_le(p.data(), c.address, 4);
  store_le(p.data() + 4, c.value, 4);
  store_le(p.data() + 8, static_cast<std::uint32_t>(c.length), 4);
  return p;
}

std::vector<std::uint8_t> encode(const BarAccess& b) {
  std::vector<std::uint8_t> p(BarAccess::kBytes);
  store_le(p.data(), b.address, 8);
  store_le(p.data() + 8, b.value, 8);
  store_le(p.data() + 16, b.size, 4);
  p[20] = b.memory ? 1 : 0;
  return p;
}

std::vector<std::uint8_t> encode(const std::vector<SysmemRegion>& regions) {
  if (regions.size() > kSysmemSlots) throw std::invalid_argument("SYNC_SYSMEM holds at most 8 regions");
  std::vector<std::uint8_t> p(kSysmemBytes);
  for (std::size_t i = 0; i < regions.size(); ++i) {
    store_le(p.data() + 8 * i, regions[i].gpa, 8);
    store_le(p.data() + 8 * (kSysmemSlots + i), regions[i].size, 8);
    store_le(p.data() + 8 * (2 * kSysmemSlots + i), static_cast<std::uint64_t>(regions[i].offset), 8);
  }
  return p;
}

std::vector<std::uint8_t> encode_ret(std::uint64_t value) {
  std::vector<std::uint8_t> p(kRetBytes);
  store_le(p.data(), value, 8);
  return p;
}

}  // namespace pevp::mpqemu
