// The virtual platform: SBUF, PSUM, the arr_seq CSR block (four APB faces), the
// SEQ instruction queue, the arr_seq sequencer and the PE array, behind one
// system bus a driver (the host) binds to.
//
// Address map (D-ADDR for SBUF/PSUM; the CSR and queue windows are model
// decision D-PLATFORM-MAP, docs/platform.md):
//   SBUF           0x0000000  partitions x sbuf_partition_bytes (28 / 32 MiB)
//   PSUM           0x2000000  128 x 16 KiB (2 MiB)
//   arr_seq APB    0x3000000  16 KiB: top 0x0, cluster 0x1000, protected 0x2000, vp_seq 0x3000
//   SEQ queue      0x3010000  4 KiB, write-only: n x 64-byte instructions
//   DMA            0x3100000  8 KiB: the DMA engines' registers, then their doorbells (docs/dma.md)
//   HBM window     0x40000000 64 MiB: the first bytes of device memory (descriptor rings, small data)
// The DMA engines reach SBUF, PSUM, all of HBM and the host's memory in their own 64-bit space
// (dma/address_space.h, D-DMA-SPACE).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include <systemc>

#include "pevp/arr_seq/arr_seq.h"
#include "pevp/dma/dma_engines.h"
#include "pevp/hbm/dram.h"
#include "pevp/platform/address_map.h"
#include "pevp/platform/hazards.h"
#include "pevp/isa/generation.h"
#include "pevp/memory/memory.h"
#include "pevp/pe_array/pe_array.h"
#include "pevp/regfile/apb_router.h"
#include "pevp/regfile/arr_seq_csrs.h"
#include "pevp/regfile_rtl/rtl_csrs.h"
#include "pevp/seq/seq.h"

namespace pevp::platform {


struct PlatformConfig {
  isa::Generation gen = isa::Generation::MARIANA;
  AddressMap map;
  arrseq::ArrSeqConfig arr_seq;
  seq::SeqConfig seq;
};

struct VpConfig;  // config.h: every model parameter (presets, JSON, --set)

// What the DMA engines' host region (dma::kHostBase) reaches when it is not the platform's own host memory: a host
// whose RAM lies elsewhere -- a guest's, when the platform is a PCI device of QEMU (docs/qemu.md) -- gives its
// target, the timing model of its accesses and the region's size. Unset (target == nullptr): the platform's own
// host_memory, as always. The platform's host_memory stays built either way (its timing model can serve the
// backing's, its statistics stay in the run's), only unreachable by the DMA engines.
struct HostRegionBacking {
  tlm::tlm_base_target_socket_b<32>* target = nullptr;
  memory::TimedTarget* timing = nullptr;
  std::uint64_t size = 0;
};

// What the platform simulates: data and time (both), data only (functional:
// every micro-op takes no time, the fastest bring-up), or time only (timing:
// no data moved, no arithmetic, for sweeps). docs/timing.md.
enum class SimMode : std::uint8_t { Functional, Timing, Both };
std::string_view name(SimMode mode);  // "functional", "timing", "both"

class Platform : public sc_core::sc_module {
 public:
  // The system bus: bind the host's initiator socket to `bus.target`.
  regfile::ApbRouter bus;
  memory::Memory sbuf;
  memory::Memory psum;
  // csrs.impl = rtl: the CSR block's top, cluster and protected faces as the Verilated register RTL behind
  // TLM -> APB4 bridges (csrs routes their windows there); nullptr with the TLM register model.
  std::unique_ptr<regfile_rtl::RtlCsrs> rtl_csrs;
  regfile::ArrSeqCsrs csrs;
  // pe_array.impl = rtl: the Verilated PE tile as the array's datapath (pevp_pe_array_rtl); nullptr with the C++
  // kernels.
  std::unique_ptr<pe::Datapath> array_datapath;
  pe::PeArray array;
  arrseq::ArrSeq arr_seq;
  seq::Seq seq;
  // The memory system (docs/memory-system.md): the core's device memory, the host's memory behind its link, and
  // the DMA engines, whose completions update the SEQ's EVENTS semaphores.
  hbm::Dram hbm;
  hbm::Dram host_memory;

 private:
  std::unique_ptr<dma::Semaphores> semaphores_;  // the SEQ's semaphores as the DMA engines see them

 public:
  dma::DmaEngines dma;
  // checks.hazards: every host access and every instruction's life judged in simulated time (hazards.h).
  HazardChecker hazards;

  // From the full configuration (validated here; a ConfigError names the key).
  Platform(sc_core::sc_module_name name, const VpConfig& config);
  // The same with the DMA engines' host region backed by `host` (HostRegionBacking).
  Platform(sc_core::sc_module_name name, const VpConfig& config, const HostRegionBacking& host);
  // The generation's preset with `config`'s map and queue depths.
  Platform(sc_core::sc_module_name name, const PlatformConfig& config);
  ~Platform() override;
  const PlatformConfig& config() const { return config_; }
  // The whole effective configuration it was built from (a checkpoint records
  // it and restores only into an equal one).
  const VpConfig& vp_config() const { return *vp_config_; }
  // The machine's shape every unit was built for.
  const isa::ArrayGeometry& geometry() const { return geometry_; }
  SimMode mode() const { return mode_; }

  // When the DMA engines moved anything: the first transfer's start and the last one's completion (the run's
  // figures cover them, docs/timing.md "Figures").
  struct DmaSpan {
    bool used = false;
    sc_core::sc_time first_start, last_end;
  };
  const DmaSpan& dma_span() const { return dma_span_; }
  // A hard reset (reset.h) starts the figures again: no transfer since power-on.
  void forget_dma_span() { dma_span_ = {}; }

  // Sees every system-bus access (after the engine caught up with it); the
  // trace recorder draws APB accesses from it.
  std::function<void(const tlm::tlm_generic_payload&, const regfile::ApbRouter::Window&, const sc_core::sc_time&)>
      bus_observer;

 private:
  // A register's word read on the bus without side effects (transport_dbg), for the register hazard rule.
  std::optional<std::uint32_t> debug_read_word(std::uint64_t address);
  PlatformConfig config_;
  std::unique_ptr<const VpConfig> vp_config_;
  isa::ArrayGeometry geometry_;
  SimMode mode_;
  DmaSpan dma_span_;
};

}  // namespace pevp::platform
