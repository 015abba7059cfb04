#include "pevp/platform/recorder.h"

#include "pevp/files/output_file.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <sstream>

#include "pevp/isa/enums.h"
#include "pevp/isa/hex.h"
#include "pevp/isa/opcode.h"
#include "pevp/platform/config.h"

namespace pevp::platform {

using arrseq::Cycle;
using arrseq::Slot;
using arrseq::Stall;

namespace {

std::uint64_t to_ps(const sc_core::sc_time& t) { return static_cast<std::uint64_t>(t.to_seconds() * 1e12 + 0.5); }

std::string opcode_name(std::uint8_t byte, isa::Generation g) {
  if (auto op = isa::opcode_from_byte(byte, g)) return std::string(isa::name(*op));
  return "opcode " + hex(byte, 2);
}

// The register an APB offset names, "top.queue_cfg", or the offset.
std::string register_name(const Platform& p, std::uint64_t offset) {
  const regfile::ArrSeqApbMap map;
  const struct {
    const char* face;
    std::uint64_t base;
    const regfile::RegFileTarget& target;
  } faces[] = {{"top", map.top_host_visible, p.csrs.top},
               {"cluster", map.cluster_host_visible, p.csrs.cluster},
               {"protected", map.top_protected, p.csrs.protect},
               {"vp_seq", map.vp_seq, p.csrs.seq}};
  for (const auto& f : faces) {
    if (offset < f.base || offset >= f.base + 0x1000) continue;
    const int i = f.target.regs().index_at(static_cast<std::uint32_t>(offset - f.base));
    if (i >= 0) return std::string(f.face) + "." + std::string(f.target.regs().desc().registers[i].name);
    return std::string(f.face) + "+" + hex(offset - f.base);
  }
  return "apb+" + hex(offset);
}

// Integrates +1/-1 steps recorded out of order: `emit(time, level)` once per
// distinct time, in time order.
template <typename Emit>
void integrate(std::vector<Recorder::Delta> steps, Emit emit) {
  std::stable_sort(steps.begin(), steps.end(),
                   [](const Recorder::Delta& a, const Recorder::Delta& b) { return a.ps < b.ps; });
  long level = 0;
  for (std::size_t i = 0; i < steps.size();) {
    const std::uint64_t t = steps[i].ps;
    for (; i < steps.size() && steps[i].ps == t; ++i) level += steps[i].step;
    emit(t, std::max(level, 0L));
  }
}

}  // namespace

Recorder::Recorder(Platform& platform, RecorderOptions options) : p_(platform), options_(std::move(options)) {
  if (!options_.trace_path.empty()) trace_ = std::make_unique<trace::TraceEventWriter>();
  if (!options_.vcd_path.empty()) {
    vcd_ = std::make_unique<trace::VcdWriter>();
    sig_busy_ = vcd_->signal("pe_vp.seq", "busy", 1);
    sig_done_ = vcd_->signal("pe_vp.seq", "done", 1);
    sig_error_ = vcd_->signal("pe_vp.seq", "error", 1);
    row_group_busy_.resize(arrseq::Timeline::kRowGroups);
  }
  if (!options_.trace_window.empty()) {
    trace::TraceWindow window = trace::parse_trace_window(options_.trace_window);
    // The VCD takes a time window; an instruction window leaves it whole (its signals name no instruction).
    if (vcd_ && window.kind == trace::TraceWindow::Kind::Time) vcd_->set_window(window.begin, window.end, window.text);
    if (trace_) trace_->set_window(std::move(window));
  }
  if (trace_ || vcd_) hook_observers();
  // After the recorder's hooks: the log chains the micro-op observer it finds.
  if (options_.firmware_log) firmware_log_ = std::make_unique<FirmwareLog>(p_, *options_.firmware_log);
  // After the firmware log, so it chains both observers before it.
  if (!options_.micro_op_log_path.empty()) micro_op_log_ = std::make_unique<MicroOpLog>(p_, micro_op_lines_);
  // Last: it chains every micro-op observer before it.
  if (!options_.coverage_path.empty()) {
    coverage_ = std::make_unique<coverage::Collector>(p_.geometry());
    coverage_probe_ = std::make_unique<CoverageProbe>(p_, *coverage_);
  }
  if (!options_.csr_fst_prefix.empty() && p_.rtl_csrs) p_.rtl_csrs->trace_from_start(options_.csr_fst_prefix);
}

void Recorder::hook_observers() {
  if (trace_) {
    // Name the tracks up front so they appear in a stable order.
    trace_->track("SEQ", "instructions");
    for (unsigned q = 0; q < p_.geometry().queues; ++q) trace_->track("arr_seq queues", "queue " + std::to_string(q));
    for (unsigned g = 0; g < arrseq::Timeline::kRowGroups; ++g)
      trace_->track("PE row groups", "row group " + std::to_string(g));
    trace_->track("SBUF", "array read port");
    trace_->track("PSUM", "array write port");
    trace_->track("APB", "accesses");
  }
  p_.arr_seq.observer = [this](const pe::MicroOp& op, const Slot& s) { on_micro_op(op, s); };
  p_.bus_observer = [this](const tlm::tlm_generic_payload& t, const regfile::ApbRouter::Window& w,
                           const sc_core::sc_time& d) { on_bus(t, w, d); };
  p_.seq.status_observer = [this](bool busy, bool done, bool error) { on_status(busy, done, error); };
  if (trace_) {
    // The memory system's tracks: a slice per DMA descriptor on its queue's track, one per busy interval of each
    // device-memory channel.
    std::weak_ptr<bool> alive = alive_;
    p_.dma.on_transfer([this, alive](const dma::TransferRecord& t) {
      if (alive.expired()) return;
      const trace::TrackId track =
          trace_->track("DMA", "engine " + std::to_string(t.engine) + " queue " + std::to_string(t.queue));
      const std::uint64_t start = to_ps(t.start), end = to_ps(t.end);
      trace_->slice(track, t.bytes > 0 ? "copy" : "signal", "dma", start, end - start,
                    {{"descriptor", static_cast<std::int64_t>(t.index)},
                     {"bytes", static_cast<std::int64_t>(t.bytes)},
                     {"src", static_cast<std::int64_t>(t.src)},
                     {"dst", static_cast<std::int64_t>(t.dst)}});
    });
    p_.hbm.channel_observer = [this](unsigned channel, sc_core::sc_time start, sc_core::sc_time end,
                                     std::uint64_t bytes, memory::Direction d) {
      const std::uint64_t s = to_ps(start), e = to_ps(end);
      trace_->slice(trace_->track("HBM", "channel " + std::to_string(channel)),
                    d == memory::Direction::Read ? "read" : "write", "hbm", s, e - s,
                    {{"bytes", static_cast<std::int64_t>(bytes)}});
    };
  }
}

Recorder::~Recorder() {
  alive_.reset();  // the DMA observer sees it expired
  p_.hbm.channel_observer = nullptr;
  coverage_probe_.reset();  // gives the micro-op log's (or an earlier) observer back
  micro_op_log_.reset();  // gives the firmware log's (or the recorder's) micro-op observer back
  firmware_log_.reset();  // gives the recorder's micro-op observer back
  p_.arr_seq.observer = nullptr;
  p_.bus_observer = nullptr;
  p_.seq.status_observer = nullptr;
}

std::uint64_t Recorder::ps(Cycle c) const { return p_.arr_seq.to_ps(c); }

void Recorder::on_micro_op(const pe::MicroOp& op, const Slot& s) {
  const std::string opname = opcode_name(op.opcode_byte, op.gen);
  ififo_.push_back({ps(s.push), +1});
  ififo_.push_back({ps(s.start), -1});
  if (vcd_) {
    if (s.stalls[static_cast<unsigned>(Stall::Throttle)] > 0) {
      throttle_.push_back({ps(s.start), +1});
      throttle_.push_back({ps(s.end), -1});
    }
    for (unsigned g = 0; g < arrseq::Timeline::kRowGroups; ++g)
      if (s.shape.row_groups >> g & 1) {
        row_group_busy_[g].push_back({ps(s.start), +1});
        row_group_busy_[g].push_back({ps(s.end), -1});
      }
  }
  if (!trace_) return;
  std::vector<trace::Arg> args = {
      {"instruction", static_cast<std::int64_t>(op.instr_index)},
      {"opcode", opname},
      {"tile", "rows " + std::to_string(s.shape.tile.row0) + "+" + std::to_string(s.shape.tile.rows) + ", cols " +
                   std::to_string(s.shape.tile.col0) + "+" + std::to_string(s.shape.tile.cols)},
      {"k", static_cast<std::int64_t>(s.shape.k)},
      {"m", static_cast<std::int64_t>(s.shape.m)},
  };
  if (op.kind != pe::MicroOpKind::PeRegWrite) args.push_back({"in_dtype", std::string(isa::name(op.in_dtype))});
  const std::string banks = hex(s.shape.banks, 2);
  if (op.kind == pe::MicroOpKind::Matmul) {
    args.push_back({"n", static_cast<std::int64_t>(s.shape.n)});
    args.push_back({"psum_banks", banks});
    args.push_back({"accumulate", static_cast<std::int64_t>(s.shape.accumulate)});
  }
  for (unsigned i = 0; i < arrseq::kStallKinds; ++i)
    if (s.stalls[i] > 0) args.push_back({std::string("stall_") + arrseq::name(static_cast<Stall>(i)), static_cast<std::int64_t>(s.stalls[i])});

  const Cycle dispatch = p_.arr_seq.config().timed ? p_.arr_seq.config().timing.seq_dispatch_cycles : 0;
  const trace::TrackId seq = trace_->track("SEQ", "instructions");
  trace_->slice(seq, opname, "seq", ps(s.ready > dispatch ? s.ready - dispatch : 0), ps(std::min(s.ready, dispatch)),
                {{"instruction", static_cast<std::int64_t>(op.instr_index)}});
  if (s.push > s.ready)
    trace_->slice(trace_->track("SEQ", "IFIFO full"), "ififo full", "stall", ps(s.ready), ps(s.push) - ps(s.ready));

  const auto q = "queue " + std::to_string(arrseq::ArrSeq::queue_of(s.shape.tile, p_.geometry()));
  trace_->slice(trace_->track("arr_seq queues", q), opname, "queue", ps(s.push), ps(s.response) - ps(s.push), args);

  for (unsigned g = 0; g < arrseq::Timeline::kRowGroups; ++g) {
    if (!(s.shape.row_groups >> g & 1)) continue;
    const trace::TrackId rg = trace_->track("PE row groups", "row group " + std::to_string(g));
    switch (op.kind) {
      case pe::MicroOpKind::WeightLoad:
        trace_->slice(rg, "weight load", "phase", ps(s.start), ps(s.end) - ps(s.start), args);
        break;
      case pe::MicroOpKind::PeRegWrite:
        trace_->slice(rg, "pe register write", "phase", ps(s.start), ps(s.end) - ps(s.start), args);
        break;
      case pe::MicroOpKind::Matmul: {
        const Cycle drained = s.end + s.cost.fill_drain;
        trace_->slice(rg, "stream", "phase", ps(s.start), ps(s.end) - ps(s.start), args);
        trace_->slice(rg, "fill/drain", "phase", ps(s.end), ps(drained) - ps(s.end), {{"instruction", args[0].value}});
        trace_->slice(rg, "psum commit", "phase", ps(drained), ps(s.complete) - ps(drained),
                      {{"instruction", args[0].value}});
        break;
      }
    }
  }
  if (op.kind != pe::MicroOpKind::PeRegWrite || !s.shape.pe_reg_bypass) {
    // Bytes per partition: the moving N columns, the stationary's M, or a PeRegWrite's 32-bit word.
    const std::uint64_t per_partition = op.kind == pe::MicroOpKind::Matmul     ? s.shape.n * s.shape.column_bytes()
                                        : op.kind == pe::MicroOpKind::WeightLoad ? s.shape.m * s.shape.column_bytes()
                                                                                 : 4;
    trace_->slice(trace_->track("SBUF", "array read port"),
                  op.kind == pe::MicroOpKind::Matmul       ? "moving read"
                  : op.kind == pe::MicroOpKind::WeightLoad ? "weight read"
                                                           : "register word read",
                  "sbuf", ps(s.start),
                  ps(s.end) - ps(s.start),
                  {{"instruction", args[0].value},
                   {"bytes", static_cast<std::int64_t>(per_partition * std::max(s.shape.k, 1u))},
                   {"first_partition", static_cast<std::int64_t>(s.shape.first_partition)}});
  }
  if (op.kind == pe::MicroOpKind::Matmul) {
    const Cycle commit = s.end + s.cost.fill_drain;
    trace_->slice(trace_->track("PSUM", "array write port"), s.shape.accumulate ? "accumulate" : "write", "psum",
                  ps(commit), ps(s.complete) - ps(commit),
                  {{"instruction", args[0].value}, {"psum_banks", banks}});
  }
}

void Recorder::on_bus(const tlm::tlm_generic_payload& t, const regfile::ApbRouter::Window& w,
                      const sc_core::sc_time& delay) {
  if (!trace_ || (w.name != "apb" && w.name != "iq")) return;
  const bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
  const std::uint64_t offset = t.get_address() - w.base;
  const std::uint64_t start = to_ps(sc_core::sc_time_stamp() + delay);
  if (w.name == "iq") {
    trace_->slice(trace_->track("APB", "instruction queue writes"), "submit", "bus", start, 1000,
                  {{"instructions", static_cast<std::int64_t>(t.get_data_length() / isa::kInstructionBytes)}});
    return;
  }
  std::vector<trace::Arg> args = {{"offset", hex(offset)}};
  if (write && t.get_data_length() == 4) {
    std::uint32_t v = 0;
    std::memcpy(&v, t.get_data_ptr(), 4);
    args.push_back({"value", hex(v)});
  }
  const double access_ns = 20.0;  // display length; the CSR block's own access time is in the delay
  trace_->slice(trace_->track("APB", "accesses"), (write ? "W " : "R ") + register_name(p_, offset), "apb", start,
                static_cast<std::uint64_t>(access_ns * 1000), std::move(args));
}

void Recorder::on_status(bool busy, bool done, bool error) {
  if (!vcd_) return;
  const std::uint64_t now = to_ps(sc_core::sc_time_stamp());
  vcd_->change(sig_busy_, now, busy);
  vcd_->change(sig_done_, now, done);
  vcd_->change(sig_error_, now, error);
}

bool Recorder::finish(std::string* error, const nlohmann::json* stats) {
  if (trace_) {
    // The IFIFO level as a counter track, from its out-of-order steps.
    integrate(ififo_, [&](std::uint64_t t, long level) { trace_->counter("arr_seq", "IFIFO level", t, level); });
    if (!trace_->write_file(options_.trace_path, error)) return false;
  }
  if (vcd_) {
    const auto level = [&](trace::VcdWriter::SignalId sig) {
      return [&, sig](std::uint64_t t, long n) { vcd_->change(sig, t, static_cast<std::uint64_t>(n)); };
    };
    const auto flag = [&](trace::VcdWriter::SignalId sig) {
      return [&, sig](std::uint64_t t, long n) { vcd_->change(sig, t, n > 0); };
    };
    integrate(ififo_, level(vcd_->signal("pe_vp.arr_seq", "ififo_level", 17)));
    integrate(throttle_, flag(vcd_->signal("pe_vp.arr_seq", "throttle_active", 1)));
    for (unsigned g = 0; g < row_group_busy_.size(); ++g)
      integrate(row_group_busy_[g], flag(vcd_->signal("pe_vp.pe_array", "rg" + std::to_string(g) + "_busy", 1)));
    if (!vcd_->write_file(options_.vcd_path, error)) return false;
  }
  if (!options_.stats_json_path.empty() &&
      !write_json_file(options_.stats_json_path, stats ? *stats : run_stats(p_), error))
    return false;
  if (micro_op_log_) {
    const std::string lines = micro_op_lines_.str();
    if (!files::write_file(options_.micro_op_log_path, lines.data(), lines.size(), error)) return false;
  }
  if (coverage_ && !coverage::write_file(options_.coverage_path, *coverage_, error)) return false;
  return true;
}

std::string Recorder::check_config(const RecorderOptions& o, const VpConfig& c) {
  if (!o.csr_fst_prefix.empty() && c.csrs_impl != CsrsImpl::Rtl)
    return "--csr-fst records the CSR faces' RTL: it needs csrs.impl = rtl (--set csrs.impl=rtl)";
  return "";
}

std::string Recorder::check_paths(const RecorderOptions& o) {
  if (!o.trace_window.empty()) {
    if (o.trace_path.empty() && o.vcd_path.empty())
      return "--trace-window " + o.trace_window + ": it keeps a window of the trace or the VCD, and neither --trace nor "
             "--vcd was given";
    try {
      trace::parse_trace_window(o.trace_window);
    } catch (const std::invalid_argument& e) {
      return std::string("--trace-window ") + e.what();
    }
  }
  std::vector<std::string> paths = {o.trace_path, o.vcd_path, o.stats_json_path, o.micro_op_log_path,
                                    o.coverage_path};
  if (!o.csr_fst_prefix.empty())
    for (const std::string& f : regfile_rtl::RtlCsrs::trace_paths(o.csr_fst_prefix)) paths.push_back(f);
  // The writer's own checks (a directory, a missing folder, a read-only file, a symlink loop), so what is
  // refused here is what the write after the run would fail on.
  for (const std::string& path : paths)
    if (!path.empty())
      if (std::string bad = files::check_output(path); !bad.empty()) return bad;
  return "";
}

// ---- statistics ---------------------------------------------------------------------------

namespace {

// The memory system's figures (docs/timing.md "Figures"): device-memory traffic and its achieved bandwidth over the
// run's time, the DMA engines' and queues' busy time and bytes, and the roofline of the run -- arithmetic intensity
// (flops per byte of device memory moved) and the bound min(peak, intensity x bandwidth) -- when it moved any.
nlohmann::json memory_stats(const Platform& p, double seconds, double peak_tflops, double flops) {
  using nlohmann::json;
  std::uint64_t read = 0, written = 0;
  json channels = json::array();
  for (const hbm::ChannelStats& c : p.hbm.channel_stats()) {
    read += c.bytes_read;
    written += c.bytes_written;
    channels.push_back({{"bytes_read", c.bytes_read}, {"bytes_written", c.bytes_written}, {"busy_ns", c.busy_ps / 1e3}});
  }
  const double bandwidth = p.hbm.config().bandwidth_gbps;
  const double moved = static_cast<double>(read + written);
  const double achieved = seconds > 0 ? moved / seconds / 1e9 : 0.0;
  json hbm = {{"bytes_read", read},
              {"bytes_written", written},
              {"bandwidth_gbps", bandwidth},
              {"achieved_gbps", achieved},
              {"bandwidth_utilisation", bandwidth > 0 ? achieved / bandwidth : 0.0}};
  // The per-channel, per-engine and per-queue detail only when the memory system moved anything (the host data
  // path leaves it idle).
  if (moved == 0 && !p.dma_span().used) return {{"hbm", hbm}};
  hbm["channels"] = channels;
  json engines = json::array(), queues = json::array();
  const dma::DmaConfig& dc = p.dma.config();
  for (unsigned e = 0; e < dc.engines; ++e) {
    const dma::DmaStats& s = p.dma.engine_stats(e);
    engines.push_back({{"busy_ns", s.busy.to_seconds() * 1e9}, {"bytes", s.bytes}, {"descriptors", s.descriptors}});
    for (unsigned q = 0; q < dc.queues_per_engine; ++q) {
      const dma::DmaStats& qs = p.dma.queue_stats({e, q});
      if (qs.descriptors == 0) continue;
      queues.push_back({{"engine", e}, {"queue", q}, {"busy_ns", qs.busy.to_seconds() * 1e9}, {"bytes", qs.bytes},
                        {"descriptors", qs.descriptors}});
    }
  }
  json out = {{"hbm", hbm}, {"dma", {{"engines", engines}, {"queues", queues}}}};
  if (moved > 0) {
    const double intensity = flops / moved;
    out["arithmetic_intensity"] = intensity;  // flops per byte of device memory
    out["roofline_tflops"] = std::min(peak_tflops, intensity * bandwidth * 1e9 / 1e12);
  }
  return out;
}

// The energy model's estimate (docs/energy.md): the run's actions -- MACs by kind, the array's SBUF reads and PSUM
// traffic (the timeline's counts), the DMA engines' SBUF, PSUM and byte counts, device-memory bytes, the run's
// cycles on every PE -- times their prices (energy.*), with the average power over the run's time, the operations
// per joule and the energy-delay product.
nlohmann::json energy_stats(const Platform& p, const arrseq::TimelineStats& st, Cycle cycles, double seconds) {
  using nlohmann::json;
  energy::EnergyCounts n;
  n.macs = st.macs_by_kind;
  n.sbuf_read_bytes = st.sbuf_read_bytes;
  n.psum_bytes = st.psum_bytes;
  for (const dma::EndpointTraffic& t : p.dma.endpoint_traffic()) {
    if (t.name == "sbuf") {
      n.sbuf_read_bytes += t.bytes_read;
      n.sbuf_write_bytes += t.bytes_written;
    } else if (t.name == "psum") {
      n.psum_bytes += t.bytes_read + t.bytes_written;
    }
  }
  for (const hbm::ChannelStats& c : p.hbm.channel_stats()) n.hbm_bytes += c.bytes_read + c.bytes_written;
  for (unsigned e = 0; e < p.dma.config().engines; ++e) n.dma_bytes += p.dma.engine_stats(e).bytes;
  n.cycles = cycles;
  n.pes = std::uint64_t{p.geometry().pe_rows} * p.geometry().pe_cols;
  const energy::EnergyBreakdown e = energy::estimate(p.vp_config().energy, n);
  json macs = json::object(), mac_pj = json::object();
  for (unsigned k = 0; k < energy::kMacKinds; ++k) {
    const char* kind = energy::name(static_cast<energy::MacKind>(k));
    macs[kind] = n.macs[k];
    mac_pj[kind] = e.mac[k];
  }
  const double total = e.total();
  const double ops = 2.0 * static_cast<double>(st.macs);
  return {{"total_pj", total},
          {"components_pj",
           {{"mac", e.mac_total()},
            {"sbuf_read", e.sbuf_read},
            {"sbuf_write", e.sbuf_write},
            {"psum", e.psum},
            {"hbm", e.hbm},
            {"dma", e.dma},
            {"leakage", e.leakage}}},
          {"mac_pj_by_dtype", mac_pj},
          {"counts",
           {{"macs_by_dtype", macs},
            {"sbuf_read_bytes", n.sbuf_read_bytes},
            {"sbuf_write_bytes", n.sbuf_write_bytes},
            {"psum_bytes", n.psum_bytes},
            {"hbm_bytes", n.hbm_bytes},
            {"dma_bytes", n.dma_bytes},
            {"cycles", n.cycles},
            {"pes", n.pes}}},
          {"average_power_w", seconds > 0 ? total * 1e-12 / seconds : 0.0},
          // operations per picojoule are tera-operations per joule: TOPS/W.
          {"tops_per_w", total > 0 ? ops / total : 0.0},
          {"edp_pj_s", total * seconds}};
}

}  // namespace

nlohmann::json run_stats(const Platform& p) {
  using nlohmann::json;
  const arrseq::ArrSeq& a = p.arr_seq;
  const arrseq::TimelineStats& st = a.timeline().stats();
  const double ghz = a.config().timing.clock_ghz;
  const isa::Generation gen = p.config().gen;
  const auto& geo = p.geometry();
  // With the DMA engines in the run, its time covers their transfers too: from the first transfer's start or the
  // first micro-op's, whichever is earlier, to the last completion of either. The cycles the array had no work in
  // that span beyond its own busy span are the array waiting for data.
  // A functional run takes no engine time; the span its micro-ops were issued over is simulated time the DMA
  // engines or the host took, not the array's.
  Cycle cycles = p.mode() == SimMode::Functional ? 0 : st.busy_span;
  Cycle outside_array = 0;
  if (const Platform::DmaSpan& dma = p.dma_span(); dma.used && p.mode() != SimMode::Functional) {
    const arrseq::EngineClock clock = a.clock();
    const bool array_ran = st.busy_span > 0;
    const Cycle first = array_ran ? std::min(st.first_start, clock.to_cycles(dma.first_start))
                                  : clock.to_cycles(dma.first_start);
    const Cycle last = std::max(array_ran ? st.last_complete : 0, clock.to_cycles(dma.last_end));
    if (last > first && last - first > cycles) {
      outside_array = last - first - cycles;
      cycles = last - first;
    }
  }
  const double seconds = static_cast<double>(cycles) / (ghz * 1e9);
  json out;
  out["generation"] = std::string(isa::name(gen));
  out["mode"] = std::string(name(p.mode()));
  out["clock_ghz"] = ghz;
  out["geometry"] = {{"pe_rows", geo.pe_rows},           {"pe_cols", geo.pe_cols},
                     {"partitions", geo.partitions},     {"sbuf_partition_bytes", geo.sbuf_partition_bytes},
                     {"psum_banks", geo.psum_banks},     {"psum_bank_bytes", geo.psum_bank_bytes}};
  // Which implementation computed the array's arithmetic and timed its micro-ops, when it is not the C++ executor
  // and cost model (pe_array.impl = rtl): its figures are that implementation's (D-ARRAY-SEAM).
  if (p.array_datapath) out["array_implementation"] = p.array.implementation();
  out["cycles"] = cycles;
  out["simulated_time_ns"] = seconds * 1e9;
  out["first_issue_cycle"] = st.first_start;
  out["last_completion_cycle"] = st.last_complete;
  out["end_of_simulation_ns"] = sc_core::sc_time_stamp().to_seconds() * 1e9;
  const seq::SeqStats seq_stats = p.seq.stats();
  json by_opcode = json::object();
  std::uint64_t retired = 0;
  for (unsigned b = 0; b < 256; ++b) {
    const std::uint64_t n = seq_stats.retired_by_opcode[b];
    const arrseq::OpcodeStats& o = a.opcode_stats()[b];
    retired += n;
    if (n == 0 && o.micro_ops == 0) continue;
    by_opcode[opcode_name(static_cast<std::uint8_t>(b), gen)] = {{"instructions_retired", n},
                                                                   {"micro_ops", o.micro_ops},
                                                                   {"busy_cycles", o.busy_cycles},
                                                                   {"latency_cycles", o.latency_cycles}};
  }
  out["instructions"] = {{"retired", retired}, {"by_opcode", by_opcode}};
  out["micro_ops"] = {{"weight_load", st.micro_ops[0]}, {"matmul", st.micro_ops[1]}, {"pe_regwrite", st.micro_ops[2]}};
  out["busy_cycles"] = {{"weight_load", st.busy_cycles[0]}, {"matmul", st.busy_cycles[1]}, {"pe_regwrite", st.busy_cycles[2]}};
  out["macs"] = st.macs;
  out["flops"] = 2 * st.macs;
  // docs/timing.md "Figures": utilisation is the full-rate work of the MACs run (at their own dtype and mode's
  // peak) over the array's PE-cycles, so tflops = utilisation x peak_tflops exactly; the accounting says where the
  // other PE-cycles went and sums to the whole.
  const arrseq::ArrayAccounting& acc = st.pe_cycles;
  const double pe_cycles = static_cast<double>(cycles) * geo.pe_rows * geo.pe_cols;
  const double utilisation = pe_cycles > 0 ? acc.useful / pe_cycles : 0.0;
  const double tflops = seconds > 0 ? 2.0 * static_cast<double>(st.macs) / seconds / 1e12 : 0.0;
  const double peak_bf16 = 2.0 * geo.pe_rows * geo.pe_cols * ghz / 1e3;
  out["utilisation"] = utilisation;
  out["tflops"] = tflops;
  // The peak of the dtypes and modes the run used (their MAC-weighted mix): bf16's for bf16, a quarter for fp32,
  // twice for fp8 double_row; bf16's when no MAC ran.
  out["peak_tflops"] = acc.useful > 0 ? peak_bf16 * static_cast<double>(st.macs) / acc.useful : peak_bf16;
  out["peak_tflops_bf16"] = peak_bf16;
  const auto share = [&](double v) { return pe_cycles > 0 ? v / pe_cycles : 0.0; };
  // Of the PE-cycles no stream held, those in which the array had nothing left to do while the SEQ held the next
  // instruction on its EVENTS wait: the array waiting for its data (a DMA's completion, in the DMA data path).
  const double not_streaming = std::max(0.0, pe_cycles - acc.streaming());
  const double waiting_for_data = std::min(
      not_streaming,
      static_cast<double>(seq_stats.array_idle_on_semaphore_cycles + outside_array) * geo.pe_rows * geo.pe_cols);
  out["array_accounting"] = {{"useful", share(acc.useful)},
                             {"short_stream", share(acc.short_stream)},
                             {"sbuf_bandwidth", share(acc.sbuf_bandwidth)},
                             {"throttle", share(acc.throttle)},
                             {"mapping", share(acc.mapping)},
                             {"transpose", share(acc.transpose)},
                             {"waiting_for_data", share(waiting_for_data)},
                             {"not_streaming", share(not_streaming - waiting_for_data)}};
  json stalls = json::object(), stalled = json::object();
  for (unsigned i = 0; i < arrseq::kStallKinds; ++i) {
    stalls[arrseq::name(static_cast<Stall>(i))] = st.stall_cycles[i];
    stalled[arrseq::name(static_cast<Stall>(i))] = st.stalled_ops[i];
  }
  out["stall_cycles"] = stalls;
  out["stalled_micro_ops"] = stalled;
  json groups = json::array();
  // As of now or the last completion, whichever is later: a program ends at
  // done, which can come before its last PSUM commit.
  const Cycle at = std::max(a.now(), st.last_complete);
  for (unsigned g = 0; g < arrseq::Timeline::kRowGroups; ++g) {
    const arrseq::RowGroupCounters& c = a.timeline().row_group(g);
    const std::uint64_t busy = c.busy.counted_at(at);
    groups.push_back({{"matmul_active_cycles", c.matmul.counted_at(at)},
                      {"weight_load_active_cycles", c.weight_load.counted_at(at)},
                      {"idle_cycles", at > c.origin + busy ? at - c.origin - busy : 0}});
  }
  out["row_groups"] = groups;
  out["memory"] = memory_stats(p, seconds, peak_bf16 * (acc.useful > 0 ? static_cast<double>(st.macs) / acc.useful : 1.0),
                               2.0 * static_cast<double>(st.macs));
  out["energy"] = energy_stats(p, st, cycles, seconds);
  out["seq"] = {{"decode_cache_hits", seq_stats.decode_cache_hits},
                {"decode_cache_misses", seq_stats.decode_cache_misses},
                {"synchronisations", seq_stats.syncs},
                {"semaphore_wait_cycles", seq_stats.semaphore_wait_cycles},
                {"array_idle_on_semaphore_cycles", seq_stats.array_idle_on_semaphore_cycles}};
  // The driver's hazards found so far, by class (checks.hazards; all 0 when it is off).
  json hazards = {{"mode", std::string(name(p.hazards.mode()))}};
  for (std::size_t c = 0; c < kHazardClasses; ++c)
    hazards[std::string(name(static_cast<HazardClass>(c)))] = p.hazards.stats().by_class[c];
  out["hazards"] = hazards;
  return out;
}

std::string format_timing_summary(const nlohmann::json& s) {
  char line[256];
  std::ostringstream out;
  std::snprintf(line, sizeof line, "timing (%s, %.2f GHz): %llu cycles = %.3f us simulated\n",
                s["mode"].get<std::string>().c_str(), s["clock_ghz"].get<double>(),
                static_cast<unsigned long long>(s["cycles"].get<std::uint64_t>()),
                s["simulated_time_ns"].get<double>() / 1e3);
  out << line;
  if (s.contains("array_implementation"))
    out << "  array: " << s["array_implementation"].get<std::string>()
        << " (pe_array.impl = rtl): its cycles time the weight loads and matmul streams\n";
  std::snprintf(line, sizeof line, "  array utilisation %.1f%%, %.2f TFLOPS achieved of a peak of %.1f (its dtype and mode)\n",
                100.0 * s["utilisation"].get<double>(), s["tflops"].get<double>(), s["peak_tflops"].get<double>());
  out << line;
  std::string lost;
  for (const auto& [k, v] : s["array_accounting"].items())
    if (k != "useful" && v.get<double>() >= 0.0005) {
      std::snprintf(line, sizeof line, " %s %.1f%%", k.c_str(), 100.0 * v.get<double>());
      lost += line;
    }
  out << "  array PE-cycles not useful:" << (lost.empty() ? " none" : lost) << "\n";
  std::string stalls;
  for (const auto& [k, v] : s["stall_cycles"].items())
    if (v.get<std::uint64_t>() > 0) stalls += " " + k + "=" + std::to_string(v.get<std::uint64_t>());
  out << "  stall cycles:" << (stalls.empty() ? " none" : stalls) << "\n";
  if (s.contains("memory") && s["memory"].contains("roofline_tflops")) {
    const auto& m = s["memory"];
    const auto& h = m["hbm"];
    std::snprintf(line, sizeof line,
                  "  memory: HBM read %.2f MiB, written %.2f MiB; %.1f GB/s of %.1f (%.1f%%) over the run\n",
                  h["bytes_read"].get<double>() / (1 << 20), h["bytes_written"].get<double>() / (1 << 20),
                  h["achieved_gbps"].get<double>(), h["bandwidth_gbps"].get<double>(),
                  100.0 * h["bandwidth_utilisation"].get<double>());
    out << line;
    std::snprintf(line, sizeof line,
                  "  roofline: %.1f flop per HBM byte; bound min(peak, intensity x bandwidth) = %.2f TFLOPS, "
                  "achieved %.2f\n",
                  m["arithmetic_intensity"].get<double>(), m["roofline_tflops"].get<double>(),
                  s["tflops"].get<double>());
    out << line;
  }
  if (s.contains("energy")) {
    const auto& e = s["energy"];
    const auto& c = e["components_pj"];
    const auto share = [&](const char* k) { return e["total_pj"].get<double>() > 0 ? 100.0 * c[k].get<double>() / e["total_pj"].get<double>() : 0.0; };
    std::snprintf(line, sizeof line,
                  "  energy (45 nm model, docs/energy.md): %.3f uJ -- MACs %.1f%%, SBUF %.1f%%, PSUM %.1f%%, HBM %.1f%%, "
                  "DMA %.1f%%, leakage %.1f%%\n",
                  e["total_pj"].get<double>() / 1e6, share("mac"), share("sbuf_read") + share("sbuf_write"), share("psum"),
                  share("hbm"), share("dma"), share("leakage"));
    out << line;
    std::snprintf(line, sizeof line, "  average power %.2f W, %.3f TOPS/W\n", e["average_power_w"].get<double>(),
                  e["tops_per_w"].get<double>());
    out << line;
  }
  return out.str();
}

bool write_json_file(const std::string& path, const nlohmann::json& doc, std::string* error) {
  return files::write_file(path, [&](std::ostream& o) { o << doc.dump(2) << "\n"; }, error);
}

}  // namespace pevp::platform
