// The platform's system-bus address map as a driver sees it (D-ADDR for SBUF
// and PSUM, D-PLATFORM-MAP for the CSR and queue windows): what a device tree
// would tell a driver. The composition (platform.h) lays the models out by it.
#pragma once

#include <cstdint>

namespace pevp::platform {

struct AddressMap {
  std::uint64_t sbuf = 0x0000000;
  std::uint64_t psum = 0x2000000;
  std::uint64_t apb = 0x3000000;
  std::uint64_t apb_size = 0x4000;
  std::uint64_t iq = 0x3010000;
  std::uint64_t iq_size = 0x1000;
  // The DMA engines' register face (registers, then one doorbell word per queue at +0x1000; docs/dma.md) and a
  // window onto the first bytes of device memory (HBM), where a driver writes descriptor rings and small data
  // (D-PLATFORM-MAP; the DMA engines reach all of HBM in their own address space, dma/address_space.h).
  std::uint64_t dma = 0x3100000;
  std::uint64_t dma_size = 0x2000;
  std::uint64_t hbm_window = 0x40000000;
  std::uint64_t hbm_window_size = 0x4000000;  // 64 MiB, or all of hbm.bytes when it is smaller
  // The four APB faces, as absolute addresses.
  constexpr std::uint64_t top() const { return apb + 0x0000; }
  constexpr std::uint64_t cluster() const { return apb + 0x1000; }
  constexpr std::uint64_t protect() const { return apb + 0x2000; }
  constexpr std::uint64_t vp_seq() const { return apb + 0x3000; }
};

}  // namespace pevp::platform
