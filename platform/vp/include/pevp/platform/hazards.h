// Hazard checking (checks.hazards, docs/sdk.md "What the VP checks for you"): the driver mistakes that the LT
// model forgives and silicon does not. The model executes a micro-op when it is issued (D-LT-VISIBILITY), so a
// driver that reads PSUM right after submitting gets the right answer here and a stale one on the device; this
// unit judges every host access in simulated time instead, as the device would see it:
//
//   read_in_flight     a host read of SBUF or PSUM bytes that a queued or in-flight instruction will still write;
//   write_in_flight    a host write to SBUF or PSUM bytes that a queued or in-flight instruction will still read or
//                      write;
//   open_group_read    a host read of PSUM bytes of an accumulation group whose END has not been submitted;
//   unarmed_submit     an instruction submitted before the arm sequence of spec 003 section 6 (queue_cfg written);
//   register_write     a write that changes a read-only field or sets reserved bits of a register.
//
// An instruction is in flight from its submission (its record entering the queue) until it leaves the SEQ (its
// response retires it, or its fault takes it out) -- even though the model executed it at issue. Its bytes are
// the footprint of its micro-ops' access patterns (isa/access_pattern.h): per memory, a block of partitions x a
// byte range inside each, kept per instruction and dropped when it leaves. Queued instructions behind an EVENTS
// wait not yet issued are the driver's own synchronisation (it writes the data, then signals the semaphore):
// they and everything after them are not judged (D-HAZARD-SEMAPHORE); nor are the instructions a SEQ stopped on a
// fault holds queued until the driver clears it (D-HAZARD-STOPPED).
//
// Each report names the simulated time, the instruction (index and opcode) and the byte range, or the register
// and field. With `warn` it goes to the report sink (stderr unless a host sets one); with `error` it is kept for
// the host to turn into its call's error (take_error()). The access itself is never changed: the check watches.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>
#include <tlm>

#include "pevp/dma/dma_engines.h"
#include "pevp/isa/access_pattern.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/generation.h"
#include "pevp/isa/geometry.h"
#include "pevp/platform/address_map.h"
#include "pevp/seq/instruction_cache.h"

namespace pevp::platform {

// checks.hazards: what the VP does with a hazard it finds.
enum class HazardMode : std::uint8_t { Off, Warn, Error };
std::string_view name(HazardMode mode);  // "off", "warn", "error"

enum class HazardClass : std::uint8_t { ReadInFlight, WriteInFlight, OpenGroupRead, UnarmedSubmit, RegisterWrite };
inline constexpr std::size_t kHazardClasses = 5;
std::string_view name(HazardClass c);  // "read_in_flight", ...

struct HazardReport {
  HazardClass kind = HazardClass::ReadInFlight;
  std::string text;  // "hazard.read_in_flight at 1234 ps: ..."
};

struct HazardStats {
  std::array<std::uint64_t, kHazardClasses> by_class{};
};

class HazardChecker {
 public:
  // `read_word` reads a register's current value on the system bus without side effects (a debug read), for the
  // register rule: nullopt where nothing answers.
  HazardChecker(HazardMode mode, isa::Generation gen, const isa::ArrayGeometry& geo, const AddressMap& map,
                std::function<std::optional<std::uint32_t>(std::uint64_t address)> read_word);
  ~HazardChecker();

  HazardMode mode() const { return mode_; }
  // Where warnings go (default: a line on stderr). A host that owns its process's output sets its own.
  std::function<void(const HazardReport&)> sink;
  // Whether the SEQ is stopped on a fault now: its queued instructions then wait for the driver's clear_error
  // (D-HAZARD-STOPPED). Unset: never.
  std::function<bool()> engine_stopped;

  // ---- what the SEQ tells (its observers) ------------------------------------------------------------------------
  void queued(std::uint64_t index, const isa::RawInstruction& raw);
  void issued(std::uint64_t index);  // past its EVENTS wait, its micro-ops in the array
  void left(std::uint64_t index);    // retired at its response, or taken out by its fault
  // A checkpoint was restored: nothing is in flight, and the engine is armed as it was saved.
  void restored();
  // A hard reset (reset.h) returned the platform to its power-on state: nothing is in flight, and the engine is
  // unarmed again, as at power-on (an instruction submitted before the next arm sequence is unarmed_submit).
  void powered_on();

  // ---- what the bus tells -----------------------------------------------------------------------------------------
  // A host access about to reach `window` ("sbuf", "psum", "apb", "iq", ...) whose base is `base`, at simulated
  // time now + `delay`.
  void access(const tlm::tlm_generic_payload& trans, std::string_view window, std::uint64_t base,
              const sc_core::sc_time& delay);

  // A host copy that bypasses the bus (D-DRIVER-DMI), judged as its bus access would be, at the current time.
  void host_access(bool write, isa::Memory m, std::uint64_t offset, std::uint64_t bytes) {
    if (mode_ != HazardMode::Off) memory_access(write, m, offset, bytes, sc_core::sc_time_stamp());
  }

  // A DMA transfer that completed now (its data written at its end): its rows that land in SBUF or PSUM are judged
  // as a host write would be.
  void dma_write(const dma::TransferRecord& t);

  // The first hazard found in error mode since the last call, and how many more came with it.
  std::optional<HazardReport> take_error();
  const HazardStats& stats() const { return stats_; }
  bool armed() const { return armed_; }

  // One block of a memory an instruction reaches: partitions [p0, p1) x bytes [b0, b1) of each.
  struct Block {
    isa::Memory memory = isa::Memory::Sbuf;
    bool writes = false;
    std::uint32_t p0 = 0, p1 = 0;
    std::int64_t b0 = 0, b1 = 0;
  };
  // What an instruction reaches, worked out once per distinct 64 bytes.
  struct Footprint {
    std::string opcode;  // "MATMUL"
    bool waits = false;  // an EVENTS wait before it issues
    std::vector<Block> blocks;
    std::vector<Block> opens_group;   // PSUM blocks a BEGIN (without END) opens
    std::vector<Block> closes_group;  // PSUM blocks an END closes
  };

 private:
  struct InFlight {
    std::uint64_t index = 0;
    std::shared_ptr<const Footprint> fp;
    bool issued = false;
    sc_core::sc_time submitted;
  };
  struct OpenGroup {
    std::uint64_t index = 0;  // the instruction that opened it
    std::string opcode;
    Block block;
  };
  std::shared_ptr<const Footprint> footprint_of(const isa::RawInstruction& raw) const;
  // False when nothing was reported. `who`: "host" or "DMA engine 1 queue 2 descriptor 7".
  bool memory_access(bool write, isa::Memory m, std::uint64_t offset, std::uint64_t bytes, const sc_core::sc_time& at,
                     const std::string& who = "host");
  void register_write(std::uint64_t address, std::uint64_t face_base, std::string_view face, std::uint32_t value,
                      const sc_core::sc_time& at);
  void report(HazardClass c, std::string text);
  std::string where(isa::Memory m, std::uint64_t offset, std::uint64_t bytes) const;

  HazardMode mode_;
  isa::Generation gen_;
  isa::ArrayGeometry geo_;
  AddressMap map_;
  std::function<std::optional<std::uint32_t>(std::uint64_t)> read_word_;
  std::deque<InFlight> in_flight_;  // in submission order
  std::vector<OpenGroup> open_groups_;
  bool armed_ = false;
  bool unarmed_reported_ = false;
  std::optional<HazardReport> error_;
  std::uint64_t errors_after_first_ = 0;
  HazardStats stats_;
  mutable seq::InstructionCache<Footprint> cache_{1024};
};

}  // namespace pevp::platform
