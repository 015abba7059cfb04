// What a run leaves behind besides its data: a Perfetto / Chrome trace-event
// timeline (--trace), a VCD of key signals (--vcd) and the run statistics
// (--stats-json). docs/timing.md says what each track, signal and key means;
// docs/trace-format.md describes the two file formats.
//
// The recorder hooks the sequencer's per-micro-op observer, the platform's bus
// observer and the SEQ's status observer only when a file was asked for: with
// none, the models pay one empty std::function test per micro-op.
#pragma once

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/coverage/collector.h"
#include "pevp/platform/coverage_probe.h"
#include "pevp/platform/firmware_log.h"
#include "pevp/platform/micro_op_log.h"
#include "pevp/platform/platform.h"
#include "pevp/trace/trace_events.h"
#include "pevp/trace/vcd.h"

namespace pevp::platform {

struct RecorderOptions {
  std::string trace_path;       // "" = no trace
  std::string vcd_path;         // "" = no VCD
  std::string stats_json_path;  // "" = no statistics file (finish() writes it)
  std::ostream* firmware_log = nullptr;  // --log-firmware: the firmware's lines and each micro-op (firmware_log.h)
  // --micro-op-log: one JSON line per micro-op (micro_op_log.h); "" = none. Initialised here so the aggregate
  // initialisations that name only the paths before it stay complete (-Wmissing-field-initializers).
  std::string micro_op_log_path = {};
  // --csr-fst: FST waveforms of the CSR faces' RTL (csrs.impl = rtl), <prefix>.top.fst, .cluster.fst,
  // .protected.fst, from the start of the simulation; "" = none.
  std::string csr_fst_prefix = {};
  // --trace-window START:END: the trace keeps only the events in this window (trace_window.h); "" = all of them.
  std::string trace_window = {};
  // --coverage: the run's functional coverage as a coverage file (coverage_probe.h, docs/coverage.md); "" = none.
  std::string coverage_path = {};
};

class Recorder {
 public:
  Recorder(Platform& platform, RecorderOptions options);
  // Refuses an output path that cannot be written (a missing directory), before
  // anything is simulated. "" when every path is fine, else the message.
  static std::string check_paths(const RecorderOptions& options);
  // Refuses an output the configuration cannot give (--csr-fst without csrs.impl = rtl). "" when fine.
  static std::string check_config(const RecorderOptions& options, const VpConfig& config);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Writes the files asked for (the statistics as of now, or `stats` when given: a
  // view of them such as the SCALE-Sim preset's). False with *error naming the file on failure.
  bool finish(std::string* error, const nlohmann::json* stats = nullptr);

  std::size_t trace_events() const { return trace_ ? trace_->size() : 0; }
  // The trace being recorded, or nullptr without --trace: a unit around the platform (a PCI link's accesses) draws
  // its own tracks on the same time line.
  trace::TraceEventWriter* trace() { return trace_.get(); }

  // A level change (+1 / -1) at a time in picoseconds, recorded out of order
  // and integrated at finish().
  struct Delta {
    std::uint64_t ps;
    int step;
  };

 private:
  void hook_observers();  // the trace's and VCD's
  void on_micro_op(const pe::MicroOp& op, const arrseq::Slot& s);
  void on_bus(const tlm::tlm_generic_payload& trans, const regfile::ApbRouter::Window& w, const sc_core::sc_time& delay);
  void on_status(bool busy, bool done, bool error);
  std::uint64_t ps(arrseq::Cycle c) const;

  Platform& p_;
  RecorderOptions options_;
  std::unique_ptr<trace::TraceEventWriter> trace_;
  // The DMA engines keep their observers for the platform's life: theirs asks this before it draws.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<trace::VcdWriter> vcd_;
  std::vector<Delta> ififo_, throttle_;
  std::vector<std::vector<Delta>> row_group_busy_;
  trace::VcdWriter::SignalId sig_done_ = 0, sig_error_ = 0, sig_busy_ = 0;
  std::unique_ptr<FirmwareLog> firmware_log_;
  std::ostringstream micro_op_lines_;  // written to micro_op_log_path by finish()
  std::unique_ptr<MicroOpLog> micro_op_log_;
  std::unique_ptr<coverage::Collector> coverage_;
  std::unique_ptr<CoverageProbe> coverage_probe_;
};

// The --stats-json document of everything the platform has run so far:
// cycles (the engine's busy periods, host loading and read-back excluded),
// simulated time, instructions and cycles per opcode, array utilisation,
// achieved TFLOPS, stall cycles by reason, the row-group counters.
nlohmann::json run_stats(const Platform& platform);

// A few lines for a console: cycles, simulated time, utilisation, TFLOPS, stalls.
std::string format_timing_summary(const nlohmann::json& stats);

// Writes `doc` through a temporary file and a rename. False with *error on failure.
bool write_json_file(const std::string& path, const nlohmann::json& doc, std::string* error);

}  // namespace pevp::platform
