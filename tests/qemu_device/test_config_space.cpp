// The PCI function's configuration header alone (models/pcie config_space.h), against PCI Local Bus 3.0's type-0
// header rules written out by hand: BAR sizing masks, read-only bits, the command register, refused accesses.
#include <gtest/gtest.h>

#include <stdexcept>

#include "pevp/pcie/config_space.h"
#include "pevp/pcie/pci_function.h"

namespace {

using namespace pevp::pcie;

PciIdentity id() {
  PciIdentity i;
  i.vendor = 0x1234;
  i.device = 0x7065;
  i.class_code = 0x120000;
  i.revision = 1;
  i.subsystem_vendor = 0x1234;
  i.subsystem = 0x7065;
  return i;
}

TEST(ConfigSpace, BarsReadTheirSizeMaskAfterAllOnesAndKeepOnlyAddressBits) {
  ConfigSpace c(id(), {0x200000, 0, 0x4000000, 0, 16, 0});
  c.write(0x10, 0xffffffff, 4);
  EXPECT_EQ(c.read(0x10, 4), 0xffe00000u);  // 2 MiB
  c.write(0x20, 0xffffffff, 4);
  EXPECT_EQ(c.read(0x20, 4), 0xfffffff0u);  // 16 bytes: every address bit above bit 3
  c.write(0x14, 0xffffffff, 4);
  EXPECT_EQ(c.read(0x14, 4), 0u);  // not implemented
  // An address not aligned to the size keeps only its aligned part; the flag bits stay 0.
  c.write(0x10, 0xfe123457, 4);
  EXPECT_EQ(c.read(0x10, 4), 0xfe000000u);
  EXPECT_EQ(c.bar_base(0), 0xfe000000u);
  // Byte writes into a BAR change only their byte.
  c.write(0x13, 0xf0, 1);
  EXPECT_EQ(c.read(0x10, 4), 0xf0000000u);
}

TEST(ConfigSpace, ReadOnlyFieldsIgnoreWritesAndTheCommandRegisterKeepsItsWritableBits) {
  ConfigSpace c(id(), {0x1000, 0, 0, 0, 0, 0});
  c.write(0x00, 0xffffffff, 4);
  EXPECT_EQ(c.read(0x00, 4), 0x70651234u);  // device << 16 | vendor
  c.write(0x08, 0xffffffff, 4);
  EXPECT_EQ(c.read(0x08, 4), 0x12000001u);
  c.write(0x3c, 0xffff, 2);
  EXPECT_EQ(c.read(0x3c, 1), 0xffu);  // the interrupt line is the host's to write
  EXPECT_EQ(c.read(0x3d, 1), 1u);     // the pin is not
  EXPECT_EQ(c.read(0x2c, 4), 0x70651234u);  // subsystem
  c.write(0x30, 0xffffffff, 4);
  EXPECT_EQ(c.read(0x30, 4), 0u);  // no expansion ROM
  c.write(0x28, 0xffffffff, 4);
  EXPECT_EQ(c.read(0x28, 4), 0u);
  // Command: memory (1), bus master (2), parity (6), SERR (8), INTx disable (10); I/O space (0) is not writable.
  c.write(0x04, 0xffff, 2);
  EXPECT_EQ(c.command(), 0x0546u);
  EXPECT_TRUE(c.memory_enabled());
  EXPECT_TRUE(c.bus_master());
  c.reset();
  EXPECT_EQ(c.command(), 0u);
  EXPECT_EQ(c.read(0x3c, 1), 0u);
}

TEST(ConfigSpace, RefusedAccessesReadAllOnesAndChangeNothing) {
  ConfigSpace c(id(), {0x1000, 0, 0, 0, 0, 0});
  EXPECT_EQ(ConfigSpace::check(0x100, 1), "config offset 256 + 1 passes the 256-byte header");
  EXPECT_EQ(ConfigSpace::check(0x04, 3), "config access of 3 bytes (1, 2 or 4)");
  EXPECT_EQ(ConfigSpace::check(0x06, 4), "config access of 4 bytes at 6 crosses a dword");
  EXPECT_EQ(c.read(0x100, 4), 0xffffffffu);
  EXPECT_EQ(c.read(0x06, 4), 0xffffffffu);
  EXPECT_FALSE(c.write(0x04, 0xffff, 3));
  EXPECT_FALSE(c.write(0xfe, 0xffff, 4));
  EXPECT_EQ(c.command(), 0u);
}

TEST(ConfigSpace, DecodeFindsTheBarHoldingTheWholeAccess) {
  ConfigSpace c(id(), {0x200000, 0, 0x1000, 0, 0, 0});
  c.write(0x10, 0xfe000000, 4);
  c.write(0x18, 0xfd000000, 4);
  ASSERT_TRUE(c.decode(0xfe1ffffc, 4));
  EXPECT_EQ(c.decode(0xfe1ffffc, 4)->offset, 0x1ffffcu);
  EXPECT_FALSE(c.decode(0xfe1ffffe, 4)) << "crosses BAR0's end";
  EXPECT_EQ(c.decode(0xfd000ff8, 8)->bar, 2u);
  EXPECT_FALSE(c.decode(0xfd001000, 1));
}

TEST(ConfigSpace, ABarSizeMustBeAPowerOfTwoAMemoryBarCanHold) {
  EXPECT_THROW(ConfigSpace(id(), {0x3000, 0, 0, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(ConfigSpace(id(), {8, 0, 0, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(ConfigSpace(id(), {0, 0, 0, 0, 0, std::uint64_t{1} << 32}), std::invalid_argument);
  try {
    ConfigSpace(id(), {0, 0, 0x3000, 0, 0, 0});
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "BAR2: 12288 bytes is not a power of two from 16 bytes to 2 GiB (a 32-bit memory BAR)");
  }
  EXPECT_EQ(bar_size_covering(0x102000), 0x200000u);
  EXPECT_EQ(bar_size_covering(0x2200000), 0x4000000u);
  EXPECT_EQ(bar_size_covering(1), 16u);
}

}  // namespace
