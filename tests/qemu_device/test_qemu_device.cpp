// pe-vp as a PCI device, without a guest: the device (platform/qemu_device) served over a real socketpair by its
// link thread, with this file's C++ stand-in for QEMU's x-pci-proxy-dev on the other end sending what the proxy
// sends (QEMU 7.2 hw/remote/proxy.c: the config probe and BAR sizing at realize, BAR accesses at absolute guest
// addresses, SYNC_SYSMEM with memfds, DEVICE_RESET). The simulation runs on the test's main thread, as in
// `pe-vp qemu-device`. Expected values: the contract's PCI identity and BAR sizes (docs/qemu.md), the register
// reset values of the generated headers (the schemas' ResetValue), bytes the test wrote itself.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "dma_regs_c.h"
#include "vp_seq_regs_c.h"
#include "pevp/dma/address_space.h"
#include "pevp/dma/descriptor.h"
#include "pevp/isa/builders.h"
#include "pevp/mpqemu/link.h"
#include "pevp/qemu_device/device.h"
#include "pevp/qemu_device/serve.h"

namespace {

using namespace pevp;
using mpqemu::Command;
using mpqemu::kAllOnes;
using mpqemu::Link;

// Where the stand-in's "BIOS" puts the BARs: aligned to their sizes (2 MiB, 64 MiB, 64 MiB).
constexpr std::uint32_t kBar0 = 0xfe000000, kBar2 = 0xf8000000, kBar4 = 0xf4000000;
// The platform's default map (platform/driver/include/pevp/platform/address_map.h): BAR0 offsets of its windows.
constexpr std::uint32_t kVpSeq = 0x3000, kIq = 0x10000, kDmaFace = 0x100000;

// The stand-in proxy: one request, one RET, as QEMU's mpqemu_msg_send_and_await_reply.
class Proxy {
 public:
  explicit Proxy(Link& link) : link_(link) {}
  std::uint64_t request(Command c, const std::vector<std::uint8_t>& payload, const std::vector<int>& fds = {}) {
    if (!link_.send(c, payload, fds)) return kAllOnes;
    Link::Received r = link_.receive();
    if (r.kind != Link::Received::Kind::Message) return kAllOnes;
    return mpqemu::decode_ret(r.message.payload);
  }
  std::uint32_t cfg_read(std::uint32_t offset, int len) {
    return static_cast<std::uint32_t>(request(Command::PciCfgRead, mpqemu::encode(mpqemu::ConfigAccess{offset, 0, len})));
  }
  std::uint64_t cfg_write(std::uint32_t offset, std::uint32_t value, int len) {
    return request(Command::PciCfgWrite, mpqemu::encode(mpqemu::ConfigAccess{offset, value, len}));
  }
  std::uint64_t read(std::uint64_t address, unsigned size = 4) {
    return request(Command::BarRead, mpqemu::encode(mpqemu::BarAccess{address, 0, size, true}));
  }
  std::uint64_t write(std::uint64_t address, std::uint64_t value, unsigned size = 4) {
    return request(Command::BarWrite, mpqemu::encode(mpqemu::BarAccess{address, value, size, true}));
  }
  // What a guest's BIOS and driver do before using the BARs: place them, enable memory space and bus mastering.
  void place_and_enable() {
    cfg_write(0x10, kBar0, 4);
    cfg_write(0x18, kBar2, 4);
    cfg_write(0x20, kBar4, 4);
    cfg_write(0x04, 0x6, 2);
  }
  Link& link() { return link_; }

 private:
  Link& link_;
};

// The device, its link thread and the stand-in on a third thread; run() returns when the stand-in is done and has
// closed its end (the link then stops the device).
struct Rig {
  platform::VpConfig config = platform::preset(isa::Generation::MARIANA);
  std::unique_ptr<qemu_device::QemuDevice> device;
  std::unique_ptr<Link> device_link, proxy_link;
  std::unique_ptr<qemu_device::LinkServer> server;
  std::atomic<unsigned> vector_signals[qemu_device::kVectors] = {};
  std::string link_end = "(not ended)";

  Rig() {
    config.mode = platform::SimMode::Functional;
    device = std::make_unique<qemu_device::QemuDevice>("pevp", config);
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    device_link = std::make_unique<Link>(mpqemu::UniqueFd(sv[0]));
    proxy_link = std::make_unique<Link>(mpqemu::UniqueFd(sv[1]), Link::Role::Proxy);
    server = std::make_unique<qemu_device::LinkServer>(*device, *device_link);
    device->raise = [this](unsigned v) { ++vector_signals[v]; };
  }
  void run(const std::function<void(Proxy&)>& script) {
    std::thread link_thread([this] { link_end = server->serve(); });
    std::thread proxy_thread([this, &script] {
      Proxy p(*proxy_link);
      script(p);
      proxy_link.reset();  // QEMU exits: its end closes
    });
    device->run();
    proxy_thread.join();
    link_thread.join();
  }
};

// Polls a register until `done` holds or a wall-time limit passes (the simulation runs meanwhile).
std::uint64_t poll(Proxy& p, std::uint64_t address, const std::function<bool(std::uint64_t)>& done) {
  std::uint64_t v = 0;
  for (int i = 0; i < 2000; ++i) {
    v = p.read(address);
    if (done(v)) return v;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return v;
}

TEST(QemuDevice, TheProxysProbeSeesTheIdentityAndSizesTheBars) {
  Rig rig;
  std::uint32_t sized[7] = {};
  std::uint32_t vendor = 0, device = 0, klass = 0, rev_class = 0, pin = 0, command = 0, status = 0;
  rig.run([&](Proxy& p) {
    vendor = p.cfg_read(0x00, 2);
    device = p.cfg_read(0x02, 2);
    klass = p.cfg_read(0x0a, 2);
    rev_class = p.cfg_read(0x08, 4);
    pin = p.cfg_read(0x3d, 1);
    // proxy.c probe_pci_info: for each of the 7 dword slots from 0x10, read, write all-ones, read the mask back,
    // restore.
    for (std::uint32_t i = 0; i < 7; ++i) {
      const std::uint32_t orig = p.cfg_read(0x10 + 4 * i, 4);
      p.cfg_write(0x10 + 4 * i, 0xffffffff, 4);
      sized[i] = p.cfg_read(0x10 + 4 * i, 4);
      p.cfg_write(0x10 + 4 * i, orig, 4);
    }
    // The command register: I/O space (bit 0) is not writable (no I/O BAR); memory, bus master, INTx disable are.
    p.cfg_write(0x04, 0x0407, 2);
    command = p.cfg_read(0x04, 2);
    p.cfg_write(0x06, 0xffff, 2);  // status: read-only here
    status = p.cfg_read(0x06, 2);
  });
  EXPECT_EQ(vendor, 0x1234u);
  EXPECT_EQ(device, 0x7065u);
  EXPECT_EQ(klass, 0x1200u);            // processing accelerator
  EXPECT_EQ(rev_class, 0x12000001u);    // class code 0x120000, revision 1
  EXPECT_EQ(pin, 1u);                   // INTA#
  EXPECT_EQ(sized[0], 0xffe00000u);     // BAR0: 2 MiB, memory, 32-bit, non-prefetchable: ~(2 MiB - 1) & ~0xf
  EXPECT_EQ(sized[1], 0u);
  EXPECT_EQ(sized[2], 0xfc000000u);     // BAR2: 64 MiB covering PSUM's end at 0x2200000
  EXPECT_EQ(sized[3], 0u);
  EXPECT_EQ(sized[4], 0xfc000000u);     // BAR4: the 64 MiB HBM window
  EXPECT_EQ(sized[5], 0u);
  EXPECT_EQ(sized[6], 0u);              // offset 0x28 (CardBus CIS) reads 0
  EXPECT_EQ(command, 0x0406u);
  EXPECT_EQ(status, 0u);
  EXPECT_EQ(rig.link_end, "");
}

TEST(QemuDevice, BarAccessesReachTheRegistersTheQueueAndTheMemories) {
  Rig rig;
  std::uint64_t before_enable = 0, dma_id = 0, irq_enable = 0, outside = 0, sbuf_word = 0, psum_word = 0;
  std::uint64_t iq_status = 0, seq_status = 0, refused_write = 0, hbm_word = 0;
  rig.run([&](Proxy& p) {
    p.cfg_write(0x10, kBar0, 4);
    before_enable = p.read(kBar0 + kDmaFace);  // memory space still disabled
    p.place_and_enable();
    dma_id = p.read(kBar0 + kDmaFace + PEVP_DMA_DMA_GLOBAL_DMA_ID_OFFSET);
    p.write(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_IRQ_ENABLE_OFFSET, 0x3);
    irq_enable = p.read(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_IRQ_ENABLE_OFFSET);
    outside = p.read(kBar0 - 0x1000);
    refused_write = p.write(kBar0 + 0x8000, 1);  // a hole in BAR0 between the APB faces and the queue
    p.write(kBar2 + 0x100, 0x0102030405060708, 8);
    sbuf_word = p.read(kBar2 + 0x100, 8);
    p.write(kBar2 + 0x2000000, 0xcafef00d);  // PSUM's first word
    psum_word = p.read(kBar2 + 0x2000000);
    p.write(kBar4 + 0x40, 0x5a5a5a5a);
    hbm_word = p.read(kBar4 + 0x40);
    // One 64-byte record into the instruction queue, as eight 8-byte writes: an all-zero record (opcode 0).
    for (unsigned i = 0; i < 8; ++i) p.write(kBar0 + kIq + 8 * i, 0, 8);
    seq_status = poll(p, kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_OFFSET, [](std::uint64_t v) {
      return (v & PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_ERROR_MASK) != 0;
    });
    iq_status = p.read(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_IQ_STATUS_OFFSET);
  });
  EXPECT_EQ(before_enable, kAllOnes);
  EXPECT_EQ(dma_id, PEVP_DMA_DMA_GLOBAL_DMA_ID_RESET);  // 0x0001444d: the DMA face's identification
  EXPECT_EQ(irq_enable, 0x3u);
  EXPECT_EQ(outside, kAllOnes);
  EXPECT_EQ(refused_write, kAllOnes);
  EXPECT_EQ(sbuf_word, 0x0102030405060708u);
  EXPECT_EQ(psum_word, 0xcafef00du);
  EXPECT_EQ(hbm_word, 0x5a5a5a5au);
  // The record reached the SEQ: opcode 0 is no instruction, so the SEQ stops on it with its error bit, and the
  // error with irq_enable.error set raised the SEQ's vector once.
  EXPECT_NE(seq_status & PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_ERROR_MASK, 0u) << std::hex << seq_status;
  EXPECT_NE(iq_status, kAllOnes);
  EXPECT_EQ(rig.vector_signals[qemu_device::kSeqVector].load(), 1u);
  // The writes reached the platform's memories at their platform addresses.
  EXPECT_EQ(rig.device->platform.sbuf.data()[0x100], 0x08);
  const auto& stats = rig.device->function.stats();
  EXPECT_EQ(stats.disabled, 1u);
  EXPECT_EQ(stats.not_decoded, 1u);
  EXPECT_EQ(stats.bars[0].errors, 1u);
}

// A guest RAM of 2 MiB at guest-physical 0x100000, in a memfd as QEMU's memory-backend-memfd gives it.
struct GuestRam {
  static constexpr std::uint64_t kGpa = 0x100000, kBytes = 2 << 20;
  mpqemu::UniqueFd fd{::memfd_create("guest-ram", MFD_CLOEXEC)};
  std::uint8_t* bytes = nullptr;
  GuestRam() {
    EXPECT_EQ(::ftruncate(fd.get(), kBytes), 0);
    bytes = static_cast<std::uint8_t*>(::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0));
  }
  ~GuestRam() { ::munmap(bytes, kBytes); }
  std::uint8_t* at(std::uint64_t gpa) { return bytes + (gpa - kGpa); }
};

// Programs queue 0 of engine 0 through BAR0 as a driver would: ring base (DMA address), entries, enable.
void start_queue(Proxy& p, std::uint64_t ring, std::uint32_t entries) {
  const std::uint64_t face = kBar0 + kDmaFace;
  p.write(face + PEVP_DMA_DMA_GLOBAL_QUEUE_SEL_OFFSET, 0);
  p.write(face + PEVP_DMA_DMA_QUEUE_RING_BASE_LO_OFFSET, static_cast<std::uint32_t>(ring));
  p.write(face + PEVP_DMA_DMA_QUEUE_RING_BASE_HI_OFFSET, static_cast<std::uint32_t>(ring >> 32));
  p.write(face + PEVP_DMA_DMA_QUEUE_RING_ENTRIES_OFFSET, entries);
  p.write(face + PEVP_DMA_DMA_QUEUE_QUEUE_CONTROL_OFFSET, 1);
}

TEST(QemuDevice, DmaMovesGuestRamIntoSbufAndRaisesTheDmaVector) {
  Rig rig;
  GuestRam ram;
  // 1 KiB of data at gpa 0x101000, the ring at gpa 0x180000 (two descriptors).
  for (unsigned i = 0; i < 1024; ++i) ram.at(0x101000)[i] = static_cast<std::uint8_t>(i * 7 + 3);
  dma::Descriptor d;
  d.kind = dma::Kind::COPY;
  d.flags = dma::kFlagIrq;
  d.src = dma::kHostBase + 0x101000;  // DMA address = host base + guest physical (D-PCI-DMA-ADDRESS)
  d.dst = dma::kSbufBase + 0x4000;
  d.row_bytes = 1024;
  d.rows = d.planes = 1;
  d.elem_bytes = 4;
  const dma::DescriptorBytes first = dma::encode(d);
  std::memcpy(ram.at(0x180000), first.data(), first.size());
  // The second reads guest-physical 0x400000: past the guest's RAM.
  d.src = dma::kHostBase + 0x400000;
  const dma::DescriptorBytes second = dma::encode(d);
  std::memcpy(ram.at(0x180040), second.data(), second.size());

  std::uint64_t irq_status = 0, sbuf_first = 0, sbuf_last = 0, state = 0, err_info = 0, summary = 0;
  rig.run([&](Proxy& p) {
    // SYNC_SYSMEM expects no reply.
    ASSERT_TRUE(p.link().send(Command::SyncSysmem,
                              mpqemu::encode(std::vector<mpqemu::SysmemRegion>{{GuestRam::kGpa, GuestRam::kBytes, 0}}),
                              {ram.fd.get()}));
    p.place_and_enable();
    const std::uint64_t face = kBar0 + kDmaFace;
    p.write(face + PEVP_DMA_DMA_GLOBAL_IRQ_ENABLE_OFFSET, 0x3);
    start_queue(p, dma::kHostBase + 0x180000, 2);
    p.write(face + PEVP_DMA_DMA_QUEUE_TAIL_OFFSET, 1);  // the doorbell: one descriptor
    irq_status = poll(p, face + PEVP_DMA_DMA_GLOBAL_IRQ_STATUS_OFFSET, [](std::uint64_t v) { return v != 0; });
    sbuf_first = p.read(kBar2 + 0x4000);
    sbuf_last = p.read(kBar2 + 0x4000 + 1020);
    p.write(face + PEVP_DMA_DMA_GLOBAL_IRQ_CLEAR_OFFSET, 0x1);
    p.write(face + PEVP_DMA_DMA_QUEUE_TAIL_OFFSET, 2);  // the second, out of the guest's RAM
    state = poll(p, face + PEVP_DMA_DMA_QUEUE_QUEUE_STATE_OFFSET, [](std::uint64_t v) { return v == 3; });
    err_info = p.read(face + PEVP_DMA_DMA_QUEUE_ERR_INFO_OFFSET);
    summary = p.read(face + PEVP_DMA_DMA_GLOBAL_DMA_ERROR_SUMMARY_OFFSET);
  });
  EXPECT_EQ(irq_status & 0x1, 0x1u) << "completion";
  // Bytes 0..3 and 1020..1023 of the pattern (i * 7 + 3) little-endian.
  const auto word = [](unsigned i) {
    std::uint32_t w = 0;
    for (unsigned k = 0; k < 4; ++k) w |= std::uint32_t{static_cast<std::uint8_t>((i + k) * 7 + 3)} << (8 * k);
    return w;
  };
  EXPECT_EQ(sbuf_first, word(0));
  EXPECT_EQ(sbuf_last, word(1020));
  EXPECT_EQ(state, 3u) << "the queue stops in its error state";
  EXPECT_NE(err_info, 0u);
  EXPECT_EQ(summary, 0x00010000u) << "one queue stopped (count 1), the first being queue 0";
  EXPECT_GE(rig.vector_signals[qemu_device::kDmaVector].load(), 2u) << "completion, then the error";
  EXPECT_EQ(rig.device->host_memory.stats().errors, 1u);
  EXPECT_GE(rig.device->host_memory.stats().read_bytes, 1024u + 128u);  // the data and two descriptor fetches
}

TEST(QemuDevice, DmaWritesSbufBackIntoGuestRam) {
  Rig rig;
  GuestRam ram;
  dma::Descriptor d;
  d.kind = dma::Kind::COPY;
  d.src = dma::kSbufBase + 0x200;
  d.dst = dma::kHostBase + 0x110000;
  d.row_bytes = 64;
  d.rows = d.planes = 1;
  d.elem_bytes = 8;
  const dma::DescriptorBytes bytes = dma::encode(d);
  std::memcpy(ram.at(0x180000), bytes.data(), bytes.size());
  rig.run([&](Proxy& p) {
    // SYNC_SYSMEM expects no reply.
    ASSERT_TRUE(p.link().send(Command::SyncSysmem,
                              mpqemu::encode(std::vector<mpqemu::SysmemRegion>{{GuestRam::kGpa, GuestRam::kBytes, 0}}),
                              {ram.fd.get()}));
    p.place_and_enable();
    for (unsigned i = 0; i < 8; ++i) p.write(kBar2 + 0x200 + 8 * i, 0x1111111111111111ull * (i + 1), 8);
    start_queue(p, dma::kHostBase + 0x180000, 1);
    p.write(kBar0 + kDmaFace + PEVP_DMA_DMA_QUEUE_TAIL_OFFSET, 1);
    poll(p, kBar0 + kDmaFace + PEVP_DMA_DMA_QUEUE_DESCRIPTORS_CNT_LSB_OFFSET, [](std::uint64_t v) { return v == 1; });
  });
  for (unsigned i = 0; i < 8; ++i) {
    std::uint64_t v;
    std::memcpy(&v, ram.at(0x110000 + 8 * i), 8);
    EXPECT_EQ(v, 0x1111111111111111ull * (i + 1)) << i;
  }
}

TEST(QemuDevice, AWriteThatLeavesTheDmaLineHighSignalsItsVectorAgain) {
  Rig rig;
  GuestRam ram;
  // Two descriptors on one queue: a copy that raises completion, then one reading past the guest's RAM (error).
  dma::Descriptor d;
  d.kind = dma::Kind::COPY;
  d.flags = dma::kFlagIrq;
  d.src = dma::kHostBase + 0x101000;
  d.dst = dma::kSbufBase;
  d.row_bytes = 64;
  d.rows = d.planes = 1;
  d.elem_bytes = 8;
  const dma::DescriptorBytes first = dma::encode(d);
  std::memcpy(ram.at(0x180000), first.data(), first.size());
  d.src = dma::kHostBase + 0x400000;
  const dma::DescriptorBytes second = dma::encode(d);
  std::memcpy(ram.at(0x180040), second.data(), second.size());
  std::uint64_t both = 0;
  unsigned before_clear = 0, after_clear = 0, after_last_clear = 0;
  rig.run([&](Proxy& p) {
    ASSERT_TRUE(p.link().send(Command::SyncSysmem,
                              mpqemu::encode(std::vector<mpqemu::SysmemRegion>{{GuestRam::kGpa, GuestRam::kBytes, 0}}),
                              {ram.fd.get()}));
    p.place_and_enable();
    const std::uint64_t face = kBar0 + kDmaFace;
    p.write(face + PEVP_DMA_DMA_GLOBAL_IRQ_ENABLE_OFFSET, 0x3);
    start_queue(p, dma::kHostBase + 0x180000, 2);
    p.write(face + PEVP_DMA_DMA_QUEUE_TAIL_OFFSET, 2);
    both = poll(p, face + PEVP_DMA_DMA_GLOBAL_IRQ_STATUS_OFFSET, [](std::uint64_t v) { return v == 0x3; });
    before_clear = rig.vector_signals[qemu_device::kDmaVector].load();
    p.write(face + PEVP_DMA_DMA_GLOBAL_IRQ_CLEAR_OFFSET, 0x1);  // completion cleared, the error still pending
    after_clear = rig.vector_signals[qemu_device::kDmaVector].load();
    p.write(face + PEVP_DMA_DMA_GLOBAL_IRQ_CLEAR_OFFSET, 0x2);  // the line falls: nothing more to signal
    after_last_clear = rig.vector_signals[qemu_device::kDmaVector].load();
  });
  EXPECT_EQ(both, 0x3u);
  EXPECT_EQ(before_clear, 1u) << "one rising edge: the error came while the line was high";
  EXPECT_EQ(after_clear, 2u) << "the clear left the line high: signalled again (D-PCI-IRQ)";
  EXPECT_EQ(after_last_clear, 2u);
}

TEST(QemuDevice, TheQueueWindowGathersWholeRecordsAndDropsAnIncompleteOne) {
  Rig rig;
  std::uint64_t err_index = 1, retired = 1, seq_status = 0, read_back = 0;
  rig.run([&](Proxy& p) {
    p.place_and_enable();
    // Half of record 0, then all of record 1 in 4-byte writes, last word first: record 0 is dropped incomplete,
    // record 1 goes to the SEQ whole (as the queue's first and only instruction, opcode 0: an error at index 0).
    for (unsigned i = 0; i < 4; ++i) p.write(kBar0 + kIq + 8 * i, 0, 8);
    for (int i = 15; i >= 0; --i) p.write(kBar0 + kIq + 64 + 4 * static_cast<unsigned>(i), 0, 4);
    read_back = p.read(kBar0 + kIq);
    seq_status = poll(p, kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_OFFSET, [](std::uint64_t v) {
      return (v & PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_ERROR_MASK) != 0;
    });
    err_index = p.read(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_ERROR_ERR_INSTR_INDEX_OFFSET);
    retired = p.read(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_RETIRED_CNT_LSB_OFFSET);
  });
  EXPECT_NE(seq_status & PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_ERROR_MASK, 0u);
  EXPECT_EQ(err_index, 0u);
  EXPECT_EQ(retired, 0u);
  EXPECT_EQ(read_back, kAllOnes) << "the queue is write-only";
  EXPECT_EQ(rig.device->function.stats().records_sent, 1u);
  EXPECT_EQ(rig.device->function.stats().records_dropped, 1u);
}

TEST(QemuDevice, DeviceResetReturnsToThePowerOnState) {
  Rig rig;
  std::uint64_t reset_ret = 1, irq_enable = 0, sbuf_word = 1, command = 1, hbm_word = 1, bar0 = 1;
  rig.run([&](Proxy& p) {
    p.place_and_enable();
    p.write(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_IRQ_ENABLE_OFFSET, 0x3);
    p.write(kBar2 + 0x40, 0xdeadbeef);
    p.write(kBar4 + 0x40, 0xdeadbeef);
    reset_ret = p.request(Command::DeviceReset, {});
    command = p.cfg_read(0x04, 2);
    bar0 = p.cfg_read(0x10, 4);
    p.place_and_enable();
    irq_enable = p.read(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_IRQ_ENABLE_OFFSET);
    sbuf_word = p.read(kBar2 + 0x40);
    hbm_word = p.read(kBar4 + 0x40);
  });
  EXPECT_EQ(reset_ret, 0u);
  EXPECT_EQ(command, 0u);
  EXPECT_EQ(bar0, 0u);
  EXPECT_EQ(irq_enable, PEVP_VP_SEQ_SEQ_CTRL_IRQ_ENABLE_RESET);
  EXPECT_EQ(sbuf_word, 0u);
  EXPECT_EQ(hbm_word, 0u);
}

// DEVICE_RESET of a device whose SEQ is blocked: a Ldweights waiting for semaphore 7 to reach 1, which nothing sets,
// is dropped by the reset (it used to wait for the SEQ to drain and answer all-ones); setting the semaphore after
// the reset retires nothing, and the SEQ is idle with an empty queue.
TEST(QemuDevice, DeviceResetDropsAProgramBlockedOnASemaphore) {
  constexpr unsigned kSemaphore = 7;
  isa::LdweightsArgs l;
  l.src = isa::Pattern::row(0, 128);
  l.in_dtype = isa::Dtype::BFLOAT16;
  l.num_active_rows = 128;
  l.num_active_cols = 128;
  l.events.wait_mode = isa::WaitMode::WAIT_GE;
  l.events.wait_sem = kSemaphore;
  l.events.wait_value = 1;
  const isa::RawInstruction stuck = isa::encode_ldweights(isa::Generation::MARIANA, l);
  Rig rig;
  std::uint64_t busy_before = 0, reset_ret = 1, status_after = 1, level_after = 1, retired_after = 1;
  rig.run([&](Proxy& p) {
    p.place_and_enable();
    for (unsigned i = 0; i < stuck.size(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, stuck.data() + i, 8);
      p.write(kBar0 + kIq + i, word, 8);
    }
    const std::uint64_t status = kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_OFFSET;
    busy_before = poll(p, status, [](std::uint64_t v) { return (v & PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_BUSY_MASK) != 0; });
    reset_ret = p.request(Command::DeviceReset, {});
    p.place_and_enable();
    p.write(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_SEMAPHORE_SEMAPHORE_OFFSET_AT(kSemaphore), 1);
    for (int i = 0; i < 20; ++i) retired_after = p.read(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_RETIRED_CNT_LSB_OFFSET);
    status_after = p.read(status);
    level_after = p.read(kBar0 + kVpSeq + PEVP_VP_SEQ_SEQ_CTRL_IQ_STATUS_OFFSET) & PEVP_VP_SEQ_SEQ_CTRL_IQ_STATUS_LEVEL_MASK;
  });
  EXPECT_NE(busy_before & PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_BUSY_MASK, 0u) << "the program did not block";
  EXPECT_EQ(reset_ret, 0u) << "DEVICE_RESET failed";
  EXPECT_EQ(status_after & PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_BUSY_MASK, 0u);
  EXPECT_EQ(level_after, 0u);
  EXPECT_EQ(retired_after, 0u) << "the dropped instruction ran once its semaphore was set";
}

TEST(QemuDevice, MalformedMessagesAreAnsweredAllOnesAndTheLinkGoesOn) {
  Rig rig;
  std::uint64_t short_bar = 0, bad_cfg = 0, io_bar = 0, bad_size = 0, vendor = 0;
  rig.run([&](Proxy& p) {
    short_bar = p.request(Command::BarRead, std::vector<std::uint8_t>(20));  // 20 of 24 bytes
    bad_cfg = p.cfg_read(0x100, 4);                                          // past the 256-byte header
    p.place_and_enable();
    io_bar = p.request(Command::BarRead, mpqemu::encode(mpqemu::BarAccess{kBar0, 0, 4, false}));
    bad_size = p.read(kBar0, 3);
    vendor = p.cfg_read(0, 2);
  });
  EXPECT_EQ(short_bar, kAllOnes);
  EXPECT_EQ(bad_cfg, 0xffffffffu);
  EXPECT_EQ(io_bar, kAllOnes);
  EXPECT_EQ(bad_size, kAllOnes);
  EXPECT_EQ(vendor, 0x1234u);
  EXPECT_EQ(rig.device_link->stats().malformed, 1u);
  EXPECT_EQ(rig.link_end, "");
}

TEST(QemuDevice, APeerThatVanishesMidAccessEndsTheServeWithAMessage) {
  Rig rig;
  rig.run([&](Proxy& p) {
    // A BAR read, and the proxy gone before its reply (QEMU killed while the vCPU waits): the simulation is held
    // busy by a slow item queued ahead of the read, so the close surely comes first.
    rig.device->post([] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); });
    ASSERT_TRUE(p.link().send(Command::BarRead, mpqemu::encode(mpqemu::BarAccess{kBar0, 0, 4, true})));
  });
  EXPECT_EQ(rig.link_end, "QEMU left before the reply to its BAR_READ could be sent");
}

}  // namespace
