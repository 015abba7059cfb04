// The DMA address space (D-DMA-SPACE, the model's own; not in the spec): one 64-bit space in which a descriptor's
// source, destination and ring addresses are given. SBUF and PSUM sit where the system bus has them (D-ADDR), device
// memory (HBM) and host memory far above, so a 32-bit SBUF/PSUM address is also a DMA address. The DMA engines do
// not hard-code these bases: the platform maps each endpoint with DmaEngines::map; the constants are here so the
// platform, drivers and tests agree on one map.
#pragma once

#include <cstdint>

namespace pevp::dma {

inline constexpr std::uint64_t kSbufBase = 0x0;
inline constexpr std::uint64_t kPsumBase = 0x2000000;            // D-ADDR
inline constexpr std::uint64_t kHbmBase = 0x1'0000'0000;         // 4 GiB: above every 32-bit system-bus address
inline constexpr std::uint64_t kHostBase = 0x100'0000'0000;      // 1 TiB: above any device memory a preset holds

}  // namespace pevp::dma
