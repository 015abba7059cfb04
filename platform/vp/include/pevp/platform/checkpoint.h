// Checkpoint and restore of the whole virtual platform (docs/checkpoint.md).
//
// A checkpoint is taken at an idle point of the platform (model decision D-CKPT-IDLE): nothing issued and still
// waiting for its response, the SEQ's dispatcher parked waiting for work, and the instruction queue empty unless the
// SEQ is stopped on a fault -- then the queued instructions, the error record and any deferred faults are saved too,
// and a clear_error after the restore resumes them. It holds SBUF and PSUM (their non-zero 4 KiB pages), every
// register of the four CSR faces, the PE array's stationaries, PSUM groups, stochastic-rounding seeds and PE
// registers, the arr_seq timeline (IFIFO starts, tile states, in-flight list, P2F window, row-group counters,
// statistics and busy periods), the SEQ (queue, semaphores through their CSRs, counts, done / error state, the
// firmware's no-mix state, the decode cache's keys), the simulated time and the whole effective configuration.
//
// Restoring parses and validates everything into a CheckpointImage first -- the format, every section's length and
// CRC-32, the generation, the configuration (equal to the target's, key for key: D-CKPT-CONFIG), every count and
// size against the geometry, the time against the supported limit -- then checks the target (idle, its time not past
// the checkpoint's) and each unit's rules, every time of the state against the checkpoint's own (D-CKPT-TIMES), and
// only then changes it: a rejected checkpoint leaves the target exactly as it was. Every rejection is a
// CheckpointError whose message names the source, the section, the byte offset or field and the rule broken.
//
// Threading and time: everything here runs on the SystemC simulation thread. save_checkpoint needs no process
// context (it reads the time); restore_checkpoint must run inside an SC_THREAD -- the driver's host thread --
// because it advances simulated time to the checkpoint's with wait(). Continuing after a restore with the driver
// actions an uninterrupted run would have taken gives the same bytes, registers, counters, cycles and statistics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/files/input_file.h"
#include "pevp/platform/config.h"
#include "pevp/platform/platform.h"
#include "pevp/platform/time_limit.h"

namespace pevp::platform {

// Why a checkpoint could not be written, read or applied. what() is the whole message, e.g.
//   "checkpoint /x/y.ckpt: truncated in section 'psum' at byte 1234 (needs 2097152 bytes, 17 left)"
//   "checkpoint /x/y.ckpt: written for generation CAYMAN, this VP is MARIANA"
//   "checkpoint /x/y.ckpt: format version 3, this pe-vp reads version 1"
//   "checkpoint /x/y.ckpt: CRC mismatch in section 'seq' (stored 0x..., computed 0x...)"
//   "checkpoint /x/y.ckpt: configuration differs: timing.throttle_fraction is 0.5 in the checkpoint, 1 here"
//   "cannot save a checkpoint: the platform is not at an idle point: 3 instruction(s) in flight (...)"
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The format version this pe-vp writes and reads.
// 2: a stationary's MX source; 3: the PE array's sparsity tags per tile; 4: converter tables.
inline constexpr std::uint32_t kCheckpointFormatVersion = 6;

// The latest simulated time a checkpoint may hold, in ps: the VP's limit (pevp/platform/time_limit.h,
// D-SIM-TIME-LIMIT). Every cycle a checkpoint holds lies at or before it at the configured clock
// (D-CKPT-TIME-LIMIT), so a run continued from it stays where the engine clock converts cycles and times exactly.
inline constexpr std::uint64_t kMaxCheckpointTimePs = kMaxSimulatedPs;

// Why a platform of configuration `config` can neither save nor restore a checkpoint, or "" when it can: known
// before the platform is built, so a command can refuse --checkpoint / --restore before it simulates.
std::string checkpoint_unsupported(const VpConfig& config);

// The most bytes a checkpoint of a platform of `config` can hold -- SBUF and PSUM whole with a page header per
// 4 KiB page, and 256 MiB for everything else (CSRs, stationaries, queue, timeline, configuration) -- as the
// input kind its reader is bounded by, so a checkpoint path naming /dev/zero or a huge file is refused before it
// fills the host's memory.
files::InputKind checkpoint_input(const VpConfig& config);

// Why `platform` is not at an idle point now ("3 instruction(s) in flight ..."), or "" when it is.
std::string idle_point_violation(const Platform& platform);

// The checkpoint of `platform` now. Throws CheckpointError when it is not at an idle point.
std::vector<std::uint8_t> save_checkpoint(const Platform& platform);
// The same, written to `path` through files::write_file (atomically for a regular file). Throws CheckpointError
// naming the path and the reason when the file cannot be written.
void save_checkpoint_file(const Platform& platform, const std::string& path);

// A memory's non-zero pages, as a checkpoint stores them.
struct MemoryImage {
  std::uint64_t size = 0;
  std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> pages;  // (page index, its bytes), increasing
  std::uint64_t errors = 0;
};

// A checkpoint parsed and validated against a configuration, nothing applied yet: the staging form.
struct CheckpointImage {
  std::string source;  // the file name, or what the bytes were called
  isa::Generation gen = isa::Generation::MARIANA;
  nlohmann::json config;  // to_json of the configuration it was written with
  std::uint64_t time_value = 0;  // simulated time, in units of the time resolution
  MemoryImage sbuf, psum;
  regfile::ArrSeqCsrs::State csrs;
  pe::PeArray::State array;
  arrseq::ArrSeq::State arr_seq;
  seq::Seq::State seq;

  sc_core::sc_time time() const { return sc_core::sc_time::from_value(time_value); }
};

// Parses `size` bytes and checks them against `config` (the target's effective configuration): magic, version,
// generation, sections, lengths, CRCs, the configuration, counts and sizes against its geometry and depths, the
// simulated time against kMaxCheckpointTimePs.
// `source` names the bytes in messages ("/x/y.ckpt"). Throws CheckpointError; needs no platform.
CheckpointImage read_checkpoint(const std::uint8_t* data, std::size_t size, const VpConfig& config,
                                const std::string& source);

// Applies `image` to `platform` after checking the target: an idle point, an SC_THREAD, the platform's time not
// past the checkpoint's, and every unit's own rules (CSR values, stationaries, the SEQ's queue and cache, the
// timeline's and the SEQ's times against the checkpoint's time and the supported limit, in engine cycles). Throws
// CheckpointError before changing anything; then waits until the checkpoint's simulated time.
void apply_checkpoint(Platform& platform, const CheckpointImage& image);

// read_checkpoint against the platform's configuration, then apply_checkpoint.
void restore_checkpoint(Platform& platform, const std::vector<std::uint8_t>& bytes,
                        const std::string& source = "(memory)");
// The same from a file: a missing file, a directory or a read error is a CheckpointError naming the path.
void restore_checkpoint_file(Platform& platform, const std::string& path);

}  // namespace pevp::platform
