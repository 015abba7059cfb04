// The mpqemu link without a guest: messages and their validation, framing with SCM_RIGHTS over a real socketpair
// (this file's stand-in proxy is a Link in the proxy role), malformed frames, wrong fd counts, a vanished peer, the
// guest-RAM map from real memfds (1,000 SYNC_SYSMEMs and no leaked fd) and the ivshmem-doorbell greeting. The
// expectations are QEMU 7.2's wire layouts (docs/qemu.md, QEMU's include/hw/remote/mpqemu-link.h) written out by
// hand.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "pevp/mpqemu/doorbell.h"
#include "pevp/mpqemu/guest_ram.h"
#include "pevp/mpqemu/link.h"
#include "pevp/mpqemu/message.h"

namespace {

using namespace pevp::mpqemu;
using Kind = Link::Received::Kind;

// Open descriptors of this process, from /proc/self/fd (the directory's own fd excluded).
int open_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n - 1;
}

struct Pair {
  Link device, proxy;
};
Pair connected() {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  return {Link(UniqueFd(sv[0])), Link(UniqueFd(sv[1]), Link::Role::Proxy)};
}

UniqueFd memfd(std::uint64_t bytes) {
  UniqueFd fd(::memfd_create("guest-ram", MFD_CLOEXEC));
  EXPECT_EQ(::ftruncate(fd.get(), static_cast<off_t>(bytes)), 0);
  return fd;
}

// Raw bytes on the socket, bypassing Link::send (for frames Link would never write).
void send_raw(int fd, const std::vector<std::uint8_t>& bytes, const std::vector<int>& fds = {}) {
  ASSERT_TRUE(send_with_fds(fd, bytes.data(), bytes.size(), fds));
}

std::vector<std::uint8_t> header(std::int32_t cmd, std::uint64_t size) {
  std::uint8_t h[kHeaderBytes];
  encode_header({cmd, size}, h);
  return std::vector<std::uint8_t>(h, h + kHeaderBytes);
}

// ---- layouts and validation ----

TEST(Message, HeaderLayoutIsCommandPaddingSize) {
  std::uint8_t h[kHeaderBytes];
  encode_header({5, 24}, h);
  // cmd 5 little-endian at 0, 4 bytes of padding, size 24 little-endian at 8.
  const std::uint8_t expected[kHeaderBytes] = {5, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(0, std::memcmp(h, expected, kHeaderBytes));
  const Header back = decode_header(h);
  EXPECT_EQ(back.cmd, 5);
  EXPECT_EQ(back.size, 24u);
}

TEST(Message, PayloadLayoutsAreQemus) {
  // BarAccessMsg: u64 addr at 0, u64 val at 8, u32 size at 16, bool memory at 20, 3 bytes padding: 24 bytes.
  const std::vector<std::uint8_t> bar = encode(BarAccess{0xfe010000, 0x1122334455667788, 4, true});
  ASSERT_EQ(bar.size(), 24u);
  EXPECT_EQ(bar[0], 0x00);
  EXPECT_EQ(bar[2], 0x01);
  EXPECT_EQ(bar[3], 0xfe);
  EXPECT_EQ(bar[8], 0x88);
  EXPECT_EQ(bar[15], 0x11);
  EXPECT_EQ(bar[16], 4);
  EXPECT_EQ(bar[20], 1);
  // PciConfDataMsg: u32 addr, u32 val, int len: 12 bytes.
  const std::vector<std::uint8_t> cfg = encode(ConfigAccess{0x10, 0xffffffff, 4});
  ASSERT_EQ(cfg.size(), 12u);
  EXPECT_EQ(cfg[0], 0x10);
  EXPECT_EQ(cfg[4], 0xff);
  EXPECT_EQ(cfg[8], 4);
  // SyncSysmemMsg: gpas[8] at 0, sizes[8] at 64, offsets[8] at 128: 192 bytes.
  const std::vector<std::uint8_t> sys = encode(std::vector<SysmemRegion>{{0x100000, 0x200000, 0x1000}});
  ASSERT_EQ(sys.size(), 192u);
  EXPECT_EQ(sys[2], 0x10);
  EXPECT_EQ(sys[64 + 2], 0x20);
  EXPECT_EQ(sys[128 + 1], 0x10);
  EXPECT_EQ(decode_sysmem(sys, 1)[0].offset, 0x1000);
}

TEST(Message, ValidationIsExactPerCommand) {
  // The accepted shape of each command: (payload bytes, fds).
  EXPECT_EQ(validate({0, 192}, 1), "");
  EXPECT_EQ(validate({0, 192}, 7), "");
  EXPECT_EQ(validate({2, 12}, 0), "");
  EXPECT_EQ(validate({3, 12}, 0), "");
  EXPECT_EQ(validate({4, 24}, 0), "");
  EXPECT_EQ(validate({5, 24}, 0), "");
  EXPECT_EQ(validate({6, 0}, 2), "");
  EXPECT_EQ(validate({7, 0}, 0), "");
  // And the refusals, each naming the command and the rule.
  EXPECT_EQ(validate({0, 192}, 0), "SYNC_SYSMEM: 0 file descriptor(s), expected 1..7");
  EXPECT_EQ(validate({0, 192}, 8), "SYNC_SYSMEM: 8 file descriptor(s), expected 1..7");
  EXPECT_EQ(validate({0, 191}, 1), "SYNC_SYSMEM: payload of 191 bytes, expected 192");
  EXPECT_EQ(validate({5, 23}, 0), "BAR_READ: payload of 23 bytes, expected 24");
  EXPECT_EQ(validate({4, 24}, 1), "BAR_WRITE: 1 file descriptor(s), expected 0");
  EXPECT_EQ(validate({3, 16}, 0), "PCI_CFGREAD: payload of 16 bytes, expected 12");
  EXPECT_EQ(validate({6, 0}, 1), "SET_IRQFD: 1 file descriptor(s), expected 2");
  EXPECT_EQ(validate({7, 8}, 0), "DEVICE_RESET: payload of 8 bytes, expected 0");
  EXPECT_EQ(validate({1, 8}, 0), "RET: the device sends replies and expects none");
  EXPECT_EQ(validate({8, 0}, 0), "command 8: not a command of the protocol (0..7)");
  EXPECT_EQ(validate({-1, 0}, 0), "command -1: not a command of the protocol (0..7)");
  EXPECT_TRUE(expects_reply(2) && expects_reply(3) && expects_reply(4) && expects_reply(5) && expects_reply(7));
  EXPECT_FALSE(expects_reply(0) || expects_reply(1) || expects_reply(6) || expects_reply(8) || expects_reply(-1));
}

// ---- framing over a real socketpair ----

TEST(Link, EveryMessageKindArrivesWhole) {
  Pair p = connected();
  UniqueFd ram = memfd(1 << 20);
  UniqueFd a(::eventfd(0, EFD_CLOEXEC)), b(::eventfd(0, EFD_CLOEXEC));
  ASSERT_TRUE(p.proxy.send(Command::SyncSysmem, encode(std::vector<SysmemRegion>{{0, 1 << 20, 0}}), {ram.get()}));
  ASSERT_TRUE(p.proxy.send(Command::SetIrqfd, {}, {a.get(), b.get()}));
  ASSERT_TRUE(p.proxy.send(Command::PciCfgRead, encode(ConfigAccess{0, 0, 2})));
  ASSERT_TRUE(p.proxy.send(Command::PciCfgWrite, encode(ConfigAccess{4, 2, 2})));
  ASSERT_TRUE(p.proxy.send(Command::BarRead, encode(BarAccess{0xfe000000, 0, 4, true})));
  ASSERT_TRUE(p.proxy.send(Command::BarWrite, encode(BarAccess{0xfe000008, 0xabcd, 8, true})));
  ASSERT_TRUE(p.proxy.send(Command::DeviceReset, {}));
  const Command expected[] = {Command::SyncSysmem, Command::SetIrqfd,  Command::PciCfgRead, Command::PciCfgWrite,
                              Command::BarRead,    Command::BarWrite, Command::DeviceReset};
  const std::size_t fds[] = {1, 2, 0, 0, 0, 0, 0};
  for (unsigned i = 0; i < 7; ++i) {
    Link::Received r = p.device.receive();
    ASSERT_EQ(r.kind, Kind::Message) << i << ": " << r.why;
    EXPECT_EQ(r.message.command(), expected[i]);
    EXPECT_EQ(r.message.fds.size(), fds[i]);
  }
  EXPECT_EQ(p.device.stats().received[static_cast<int>(Command::BarWrite)], 1u);
  // The replies the proxy sees: the value, bit for bit.
  ASSERT_TRUE(p.device.reply(0x0123456789abcdef));
  Link::Received ret = p.proxy.receive();
  ASSERT_EQ(ret.kind, Kind::Message);
  EXPECT_EQ(decode_ret(ret.message.payload), 0x0123456789abcdefu);
}

TEST(Link, MalformedFramesAreRefusedTheirFdsClosedAndTheStreamKeepsStep) {
  Pair p = connected();
  const int before = open_fds();
  {
    // A BAR_READ with a 20-byte payload; a BAR_WRITE carrying an fd; a SET_IRQFD with 3 fds; a SYNC_SYSMEM with
    // none; a command out of range with a payload; a RET from the proxy; then a good PCI_CFGREAD.
    UniqueFd e1(::eventfd(0, EFD_CLOEXEC)), e2(::eventfd(0, EFD_CLOEXEC)), e3(::eventfd(0, EFD_CLOEXEC));
    std::vector<std::uint8_t> short_bar = header(5, 20);
    short_bar.resize(kHeaderBytes + 20);
    send_raw(p.proxy.fd(), short_bar);
    std::vector<std::uint8_t> bar_with_fd = header(4, 24);
    bar_with_fd.resize(kHeaderBytes + 24);
    send_raw(p.proxy.fd(), bar_with_fd, {e1.get()});
    send_raw(p.proxy.fd(), header(6, 0), {e1.get(), e2.get(), e3.get()});
    std::vector<std::uint8_t> sysmem = header(0, 192);
    sysmem.resize(kHeaderBytes + 192);
    send_raw(p.proxy.fd(), sysmem);
    std::vector<std::uint8_t> unknown = header(42, 5);
    unknown.resize(kHeaderBytes + 5);
    send_raw(p.proxy.fd(), unknown);
    std::vector<std::uint8_t> ret = header(1, 8);
    ret.resize(kHeaderBytes + 8);
    send_raw(p.proxy.fd(), ret);
  }
  ASSERT_TRUE(p.proxy.send(Command::PciCfgRead, encode(ConfigAccess{0, 0, 4})));
  const char* why[] = {"BAR_READ: payload of 20 bytes, expected 24", "BAR_WRITE: 1 file descriptor(s), expected 0",
                       "SET_IRQFD: 3 file descriptor(s), expected 2",
                       "SYNC_SYSMEM: 0 file descriptor(s), expected 1..7",
                       "command 42: not a command of the protocol (0..7)",
                       "RET: the device sends replies and expects none"};
  for (const char* w : why) {
    Link::Received r = p.device.receive();
    ASSERT_EQ(r.kind, Kind::Malformed);
    EXPECT_EQ(r.why, w);
  }
  Link::Received good = p.device.receive();
  ASSERT_EQ(good.kind, Kind::Message) << good.why;
  EXPECT_EQ(good.message.command(), Command::PciCfgRead);
  EXPECT_EQ(p.device.stats().malformed, 6u);
  EXPECT_EQ(p.device.stats().fds_closed_unused, 4u);  // 1 with the BAR_WRITE, 3 with the SET_IRQFD
  EXPECT_EQ(open_fds(), before) << "a refused message's fds were not closed";
}

TEST(Link, TooManyFdsAreRefusedAndClosed) {
  Pair p = connected();
  const int before = open_fds();
  {
    std::vector<UniqueFd> many;
    std::vector<int> raw;
    for (int i = 0; i < 8; ++i) {
      many.emplace_back(::eventfd(0, EFD_CLOEXEC));
      raw.push_back(many.back().get());
    }
    std::vector<std::uint8_t> sysmem = header(0, 192);
    sysmem.resize(kHeaderBytes + 192);
    send_raw(p.proxy.fd(), sysmem, raw);
  }
  Link::Received r = p.device.receive();
  ASSERT_EQ(r.kind, Kind::Malformed);
  EXPECT_EQ(r.why, "SYNC_SYSMEM: 8 file descriptor(s), expected 1..7");
  EXPECT_EQ(open_fds(), before);
}

TEST(Link, AnOversizedHeaderEndsTheStreamAndAModerateOneIsSkipped) {
  {
    Pair p = connected();
    // 300 bytes: more than any payload, but within what the link reads past to stay in step.
    std::vector<std::uint8_t> big = header(5, 300);
    big.resize(kHeaderBytes + 300);
    send_raw(p.proxy.fd(), big);
    ASSERT_TRUE(p.proxy.send(Command::DeviceReset, {}));
    Link::Received r = p.device.receive();
    ASSERT_EQ(r.kind, Kind::Malformed);
    EXPECT_EQ(r.why, "BAR_READ: payload of 300 bytes, expected 24");
    EXPECT_EQ(r.cmd, 5);  // the caller answers it: BAR_READ expects a reply
    EXPECT_EQ(p.device.receive().kind, Kind::Message);
  }
  Pair p = connected();
  send_raw(p.proxy.fd(), header(5, std::uint64_t{1} << 40));
  Link::Received r = p.device.receive();
  EXPECT_EQ(r.kind, Kind::Broken);
  EXPECT_NE(r.why.find("announcing 1099511627776 bytes"), std::string::npos) << r.why;
}

TEST(Link, AVanishedPeerIsClosedBetweenMessagesAndBrokenInsideOne) {
  {
    Pair p = connected();
    ASSERT_TRUE(p.proxy.send(Command::DeviceReset, {}));
    Link gone = std::move(p.proxy);
    { Link drop = std::move(gone); }
    EXPECT_EQ(p.device.receive().kind, Kind::Message);
    EXPECT_EQ(p.device.receive().kind, Kind::Closed);
    EXPECT_FALSE(p.device.reply(0)) << "a reply to a vanished peer must fail, not raise SIGPIPE";
  }
  Pair p = connected();
  std::vector<std::uint8_t> cut = header(5, 24);
  cut.resize(kHeaderBytes + 10);  // the payload stops after 10 of its 24 bytes
  send_raw(p.proxy.fd(), cut);
  { Link drop = std::move(p.proxy); }
  Link::Received r = p.device.receive();
  EXPECT_EQ(r.kind, Kind::Broken);
  EXPECT_EQ(r.why, "BAR_READ: the peer left in the middle of its payload");
}

TEST(Link, TheStopDescriptorEndsAWaitingReceive) {
  Pair p = connected();
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC));
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::uint64_t one = 1;
    EXPECT_EQ(::write(stop.get(), &one, sizeof one), 8);
  });
  EXPECT_EQ(p.device.receive(stop.get()).kind, Kind::Stopped);
  stopper.join();
}

// ---- guest RAM ----

TEST(GuestRam, MapsTheWindowsAtTheirGuestAddresses) {
  UniqueFd fd = memfd(3 << 20);
  auto* file = static_cast<std::uint8_t*>(::mmap(nullptr, 3 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0));
  ASSERT_NE(file, MAP_FAILED);
  file[0x1000] = 0x11;                // gpa 0 + 0x1000 - 0x1000 = 0 in the first region (offset 0x1000)
  file[(2 << 20) + 0x10] = 0x22;      // gpa 0x100000 + 0x10 in the second region (offset 2 MiB)
  GuestRam ram;
  std::vector<UniqueFd> fds;
  fds.emplace_back(::dup(fd.get()));
  fds.emplace_back(::dup(fd.get()));
  ASSERT_EQ(ram.sync({{0, 0x1000, 0x1000}, {0x100000, 1 << 20, 2 << 20}}, std::move(fds)), "");
  auto layout = ram.layout();
  ASSERT_EQ(layout->regions.size(), 2u);
  const GuestRamRegion* low = layout->find(0, 1);
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->host[0], 0x11);
  const GuestRamRegion* high = layout->find(0x100010, 4);
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->host[0x10], 0x22);
  EXPECT_EQ(layout->find(0x1000, 1), nullptr) << "the hole between the regions";
  EXPECT_EQ(layout->find(0xfff, 2), nullptr) << "an access crossing a region's end";
  // Writes through the map reach the file (the guest sees the device's DMA).
  const_cast<std::uint8_t*>(high->host)[0x20] = 0x33;
  EXPECT_EQ(file[(2 << 20) + 0x20], 0x33);
  ::munmap(file, 3 << 20);
}

TEST(GuestRam, RefusedLayoutsLeaveTheMapEmptyAndNameTheRule) {
  UniqueFd fd = memfd(1 << 20);
  GuestRam ram;
  const auto sync = [&](std::vector<SysmemRegion> regions) {
    std::vector<UniqueFd> fds;
    for (std::size_t i = 0; i < regions.size(); ++i) fds.emplace_back(::dup(fd.get()));
    return ram.sync(regions, std::move(fds));
  };
  ASSERT_EQ(sync({{0, 1 << 20, 0}}), "");
  EXPECT_EQ(ram.layout()->regions.size(), 1u);
  EXPECT_EQ(sync({{0, 2 << 20, 0}}),
            "SYNC_SYSMEM: region 0 (gpa 0x0, 0x200000 bytes at fd offset 0): the window passes the file's end "
            "(0x100000 bytes)");
  EXPECT_TRUE(ram.layout()->regions.empty()) << "a refused layout rolls back to empty, not to the old one";
  EXPECT_EQ(sync({{0, 0x1000, 0}, {0x800, 0x1000, 0}}),
            "SYNC_SYSMEM: region 1 (gpa 0x800, 0x1000 bytes at fd offset 0) overlaps region 0 (gpa 0x0, 0x1000 "
            "bytes at fd offset 0)");
  EXPECT_EQ(sync({{0, 0, 0}}), "SYNC_SYSMEM: region 0 (gpa 0x0, 0x0 bytes at fd offset 0): size 0");
  EXPECT_EQ(sync({{~std::uint64_t{0}, 2, 0}}).find("wraps past 2^64") != std::string::npos, true);
  EXPECT_EQ(sync({{0, 0x1000, -4096}}), "SYNC_SYSMEM: region 0 (gpa 0x0, 0x1000 bytes at fd offset -4096): "
                                        "negative offset");
  // A descriptor that is not a memory file (an eventfd).
  std::vector<UniqueFd> bad;
  bad.emplace_back(::eventfd(0, EFD_CLOEXEC));
  EXPECT_EQ(ram.sync({{0, 0x1000, 0}}, std::move(bad)),
            "SYNC_SYSMEM: region 0 (gpa 0x0, 0x1000 bytes at fd offset 0): the fd is not a memory file");
  EXPECT_EQ(ram.stats().refused, 6u);
  EXPECT_TRUE(ram.layout()->regions.empty());
}

TEST(GuestRam, AThousandSyncsLeakNoFdAndReuseTheUnchangedMapping) {
  UniqueFd fd = memfd(4 << 20);
  Pair p = connected();
  GuestRam ram;
  const int before = open_fds();
  // QEMU's pattern: the same layout again and again, each message with fresh fds (here dups of one memfd, as QEMU's
  // are of its RAM block's), through the real link.
  for (int i = 0; i < 1000; ++i) {
    const std::vector<SysmemRegion> regions = {{0, 0xa0000, 0}, {0x100000, 3 << 20, 0x100000}};
    ASSERT_TRUE(p.proxy.send(Command::SyncSysmem, encode(regions), {fd.get(), fd.get()}));
    Link::Received r = p.device.receive();
    ASSERT_EQ(r.kind, Kind::Message) << r.why;
    const std::vector<SysmemRegion> received = decode_sysmem(r.message.payload, r.message.fds.size());
    ASSERT_EQ(ram.sync(received, std::move(r.message.fds)), "");
  }
  EXPECT_EQ(open_fds(), before) << "SYNC_SYSMEM leaked descriptors";
  const GuestRamStats s = ram.stats();
  EXPECT_EQ(s.syncs, 1000u);
  EXPECT_EQ(s.mapped, 2u) << "an unchanged window is mapped once";
  EXPECT_EQ(s.reused, 2u * 999u);
  // A changed layout maps the new window and drops the one no longer used.
  std::vector<UniqueFd> fds;
  fds.emplace_back(::dup(fd.get()));
  ASSERT_EQ(ram.sync({{0, 4 << 20, 0}}, std::move(fds)), "");
  EXPECT_EQ(ram.stats().mapped, 3u);
  EXPECT_EQ(ram.layout()->mappings.size(), 1u);
}

// ---- the ivshmem doorbell ----

TEST(Doorbell, TheGreetingIsTheSpecsAndAVectorSignalReachesItsEventfd) {
  std::string error;
  std::unique_ptr<Doorbell> d = Doorbell::create(2, &error);
  ASSERT_TRUE(d) << error;
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd server(sv[0]), client(sv[1]);
  ASSERT_EQ(d->greet(server.get()), "");
  // Read as QEMU does: one 8-byte message at a time with its fd.
  const auto next = [&](UniqueFd& fd_out) {
    std::uint8_t b[8];
    iovec iov{b, 8};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    EXPECT_EQ(::recvmsg(client.get(), &msg, MSG_CMSG_CLOEXEC), 8);
    if (cmsghdr* c = CMSG_FIRSTHDR(&msg)) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      fd_out.reset(fd);
    }
    std::int64_t v = 0;
    std::memcpy(&v, b, 8);
    return v;
  };
  UniqueFd none, shm, vec0, vec1;
  EXPECT_EQ(next(none), 0);  // protocol version 0
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(next(none), 0);  // the client's id
  EXPECT_EQ(next(shm), -1);  // the shared memory
  ASSERT_TRUE(shm.valid());
  struct stat st{};
  ASSERT_EQ(::fstat(shm.get(), &st), 0);
  EXPECT_EQ(st.st_size, 4096);  // a power of two, as QEMU's BAR2 needs
  EXPECT_EQ(next(vec0), 0);     // the client's own id with vector 0's eventfd
  EXPECT_EQ(next(vec1), 0);     // ... and vector 1's
  ASSERT_TRUE(vec0.valid() && vec1.valid());
  d->signal(1);
  std::uint64_t count = 0;
  EXPECT_EQ(::read(vec1.get(), &count, 8), 8);
  EXPECT_EQ(count, 1u);
  ::fcntl(vec0.get(), F_SETFL, O_NONBLOCK);
  EXPECT_EQ(::read(vec0.get(), &count, 8), -1) << "vector 0 was not signalled";
  EXPECT_EQ(d->signals(1), 1u);
  EXPECT_EQ(d->signals(0), 0u);
}

}  // namespace
