#include "pevp/platform/gemm.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <new>
#include <optional>
#include <random>
#include <sstream>

#include <sys/mman.h>

#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"
#include "pevp/host/error.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/host/mx_operands.h"
#include "pevp/host/npy.h"
#include "pevp/host/operands.h"
#include "pevp/host/scalesim.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"
#include "pevp/isa/opcode.h"
#include "pevp/isa/tiles.h"
#include "pevp/pe_array/compute.h"
#include "pevp/platform/driver.h"
#include "pevp/capi/stale_stack_poison.h"
#include "pevp/platform/interrupt.h"
#include "pevp/platform/virtual_platform.h"

#include "gemm_dma.h"
#include "interrupted.h"

namespace pevp::platform {

namespace {

// How long a GEMM step may go without an instruction retiring before it is called stuck, in simulated time. A
// function, not a constant: an sc_time built during static initialisation would fix the time resolution.
sc_core::sc_time step_progress_window() { return sc_core::sc_time(1, sc_core::SC_SEC); }

std::optional<isa::Fp32Mode> parse_fp32_mode(const std::string& s) {
  if (s == "low") return isa::Fp32Mode::Low;
  if (s == "high") return isa::Fp32Mode::High;
  if (s == "low_high") return isa::Fp32Mode::Low_High;
  return std::nullopt;
}

std::string mib(std::uint64_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

// max |c - ref| / sum_k |a||b| over the elements whose scale is not zero, ref the fp64 product of a and b.
double scaled_error(const host::Matrix& c, const host::Matrix& a, const host::Matrix& b) {
  const host::MatrixF64 ref = host::reference_fp64(a, b), scale = host::abs_product_sums(a, b);
  double scaled = 0.0;
  for (std::size_t i = 0; i < ref.data.size(); ++i)
    if (scale.data[i] > 0) scaled = std::max(scaled, std::abs(c.data[i] - ref.data[i]) / scale.data[i]);
  return scaled;
}

// What the MX quantization of the operands did (docs/running.md defines the figures).
void print_mx_quantization(std::ostream& out, const host::EncodedOperand& a, const host::EncodedOperand& b) {
  const std::size_t values = a.bytes.size() + b.bytes.size();
  out << "  quantize: OCP MX, one E8M0 scale per block of up to 32 contraction values (8 partitions x one x4 word): A "
      << a.mx_blocks << " blocks, B " << b.mx_blocks << "; " << a.mx_saturated + b.mx_saturated << " of " << values
      << " values clamped to the element format's largest magnitude; " << a.mx_nan_blocks + b.mx_nan_blocks
      << " blocks NaN (a NaN or an infinity in the block)\n";
}

// What the pruning kept and how the MACs are counted (D-SPARSE-MACS, docs/gemm-tiling.md D-GEMM-SPARSE).
void print_sparsity(std::ostream& out, const host::SparsePattern& p, const host::EncodedOperand* a) {
  out << "  sparsity: A pruned " << host::sparsity_name(p) << " along K on the host (the " << p.n
      << " largest |a| of every " << p.m << ", ties to the lower index)";
  if (a != nullptr) {
    const std::size_t kept = static_cast<std::size_t>(std::count(a->sparse_kept.begin(), a->sparse_kept.end(), 1));
    out << ": " << kept << " of " << a->sparse_kept.size() << " values kept";
  }
  out << "; TAG_WEIGHT loads, MATMUL_SPARSE with " << p.fmaps << " fmaps per partition\n"
      << "            MACs and TFLOPS count dense-equivalent products (M x K x N, as the timing model does; the array "
      << "makes 1/" << p.fmaps << " of them), so the peak below is " << p.fmaps
      << "x the dense one and utilisation is against it\n";
}

// C (rows x cols, zero) on transparent huge pages where the host grants them: the zero fill faults C's pages in, and
// 64 MiB of C (a 4096^3 GEMM) in 4 KiB pages took about a tenth of a functional run. Advice only: where it is not
// honoured, C is an ordinary zeroed vector.
host::Matrix allocate_result(std::size_t rows, std::size_t cols) {
  host::Matrix c;
  c.rows = rows;
  c.cols = cols;
  c.data.reserve(rows * cols);
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kPage = 4096;
  const auto start = reinterpret_cast<std::uintptr_t>(c.data.data());
  const std::uintptr_t first = (start + kPage - 1) / kPage * kPage, end = start + rows * cols * sizeof(float);
  if (end > first + kPage) madvise(reinterpret_cast<void*>(first), (end - first) / kPage * kPage, MADV_HUGEPAGE);
#endif
  c.data.resize(rows * cols);  // within the capacity reserved above: no reallocation
  return c;
}

// Whether `rows` rows of `row_bytes` bytes, `stride` apart from local address `local`, lie inside `mem`.
bool inside(const memory::Memory& mem, std::uint64_t local, std::uint64_t stride, std::uint64_t row_bytes,
            std::uint64_t rows) {
  const std::uint64_t size = mem.size();
  if (rows == 0 || row_bytes == 0 || stride == 0 || local > size || rows - 1 > size / stride) return false;
  const std::uint64_t last = local + (rows - 1) * stride;  // at most 2 x size: no wrap
  return last <= size && row_bytes <= size - last;
}

// The platform-bus address of an ISA SBUF/PSUM address.
std::uint64_t bus_sbuf(const AddressMap& map, std::uint32_t a) { return map.sbuf + (a - isa::ArrayGeometry::kSbufBase); }
std::uint64_t bus_psum(const AddressMap& map, std::uint32_t a) { return map.psum + (a - isa::ArrayGeometry::kPsumBase); }

// How far an interrupted run came: its retired instructions of the plan's, its steps done of the plan's.
InterruptedProgress interrupted_progress(const host::GemmPlan& plan, const GemmRun& run) {
  InterruptedProgress p;
  p.signal = run.interrupted_by;
  p.at = sc_core::sc_time(run.interrupted_at_ps, sc_core::SC_PS);
  p.instructions_retired = run.stats["instructions"]["retired"].get<std::uint64_t>();
  for (const auto& [op, count] : plan.stats.instructions) p.instructions_total += count;
  if (run.steps_done) p.steps = InterruptedProgress::Steps{*run.steps_done, plan.stats.steps};
  return p;
}

}  // namespace

nlohmann::json scalesim_view(const nlohmann::json& pevp, const host::GemmShape& shape, const isa::ArrayGeometry& geo) {
  const host::ScaleSimWs s = host::scalesim_ws(shape, geo.pe_rows, geo.pe_cols);
  nlohmann::json out = pevp;  // the configuration, the instructions and the counters stay
  const double ghz = pevp["clock_ghz"].get<double>();
  const double cycles = static_cast<double>(s.cycles);
  const double pe_cycles = cycles * geo.pe_rows * geo.pe_cols;
  const double seconds = cycles / (ghz * 1e9);
  out["timing_model"] = "scalesim_ws";
  out["cycles"] = s.cycles;
  out["simulated_time_ns"] = seconds * 1e9;
  out["utilisation"] = s.useful / pe_cycles;
  out["tflops"] = 2.0 * pevp["macs"].get<double>() / seconds / 1e12;
  // SCALE-Sim's PE does one MAC per cycle whatever the dtype: its peak is the array's.
  out["peak_tflops"] = pevp["peak_tflops_bf16"];
  out["array_accounting"] = {{"useful", s.useful / pe_cycles},
                             {"mapping", s.mapping / pe_cycles},
                             {"fill_drain", s.fill_drain / pe_cycles}};
  for (auto& [reason, v] : out["stall_cycles"].items()) v = 0;  // its compute model has no stall
  out["scalesim"] = {{"row_folds", s.row_folds},     {"col_folds", s.col_folds}, {"folds", s.folds},
                     {"cycles_per_fold", s.cycles_per_fold}, {"cycles", s.cycles},       {"total_cycles", s.total_cycles}};
  out["pevp"] = {{"cycles", pevp["cycles"]},
                 {"simulated_time_ns", pevp["simulated_time_ns"]},
                 {"utilisation", pevp["utilisation"]},
                 {"tflops", pevp["tflops"]},
                 {"peak_tflops", pevp["peak_tflops"]}};
  return out;
}

host::Matrix random_operand(std::size_t rows, std::size_t cols, std::mt19937_64& rng) {
  host::Matrix m(rows, cols);
  for (float& x : m.data) x = static_cast<float>(static_cast<double>(rng() >> 40) * 0x1p-23 - 1.0);
  return m;
}

GemmRun run_gemm_steps(const host::GemmPlan& header, const StepWalk& walk, const host::EncodedOperand* a,
                       const host::EncodedOperand* b, const VpConfig& config, const RecorderOptions& outputs,
                       Progress* progress, const std::vector<CsrWrite>& csrs, DataPath path) {
  const bool data = config.mode != SimMode::Timing;
  if (data && (a == nullptr || b == nullptr))
    throw std::invalid_argument("run_gemm_steps: mode " + std::string(name(config.mode)) + " needs both operands");
  const host::GemmPlan& plan = header;
  VirtualPlatform vp(config);
  Recorder recorder(vp.platform(), outputs);
  GemmRun r;
  if (data) r.c = allocate_result(plan.shape.m, plan.shape.n);
  try {
  vp.run([&](Driver& d) {
    d.arm();
    for (const CsrWrite& w : csrs) d.write(w.reg, w.value);
    if (path == DataPath::Dma) {
      const DmaPathResult dma = run_dma_steps(d, vp.platform(), plan, walk, a, b, data ? &r.c : nullptr, progress,
                                              step_progress_window());
      r.dma_failure = dma.failure;
      r.failed_step = dma.failed_step;
      r.dma_load_bytes = dma.load_bytes;
      r.dma_eviction_bytes = dma.eviction_bytes;
      if (!dma.failure.empty()) {
        if (vp.platform().seq.error()) r.error = d.error_record();
        return;
      }
    } else {
    std::vector<std::uint8_t> row, gather;
    std::size_t s = 0;
    // D-DRIVER-DMI: with nobody observing the bus (no --trace / --vcd recorder), the tiles go straight into SBUF's
    // and out of PSUM's arrays, each taking the simulated time its row transactions would have annotated; regions
    // outside the memories take the bus, which reports them.
    memory::Memory& sbuf = vp.platform().sbuf;
    memory::Memory& psum = vp.platform().psum;
    const bool direct = data && !vp.platform().bus_observer;
    const unsigned threads = config.host_threads != 0 ? config.host_threads : pe::available_host_threads();
    r.steps_done = 0;
    walk([&](const host::Step& step) {
      // A safe point of the driver program (interrupt.h): in a functional run simulated time may not move at all.
      if (const int signal = interrupt_signal()) throw Interrupted(signal, sc_core::sc_time_stamp());
      for (const host::SbufLoad& load : step.loads) {
        const std::size_t per = load.bytes_per_partition();
        if (!data) {  // the same bus time, no bytes: timing is identical with and without data
          sc_core::wait(sbuf.transfer_time(per) * static_cast<double>(load.partitions()));
          continue;
        }
        const std::uint64_t local =
            host::sbuf_address(config.geometry, load.partition0, load.offset) - isa::ArrayGeometry::kSbufBase;
        if (direct && inside(sbuf, local, config.geometry.sbuf_partition_bytes, per, load.partitions())) {
          // The bulk copies share the arithmetic's host threads (D-HOST-COPIES): each thread copies whole rows.
          const host::LoadRows rows = host::load_rows(load, *a, *b, gather, threads);
          std::uint8_t* dst = sbuf.data() + local;
          // Judged as the rows' bus writes would be (hazards.h): the copy bypasses the bus, not the checks.
          for (std::size_t i = 0; i < load.partitions(); ++i)
            vp.platform().hazards.host_access(true, isa::Memory::Sbuf,
                                              local + i * config.geometry.sbuf_partition_bytes, per);
          pe::for_each_share(load.partitions(), host::kMinCopyShareBytes / per, threads,
                             [&](std::size_t i0, std::size_t i1) {
                               for (std::size_t i = i0; i < i1; ++i)
                                 std::memcpy(dst + i * config.geometry.sbuf_partition_bytes,
                                             rows.data + i * rows.stride, per);
                             });
          sc_core::wait(sbuf.transfer_time(per) * static_cast<double>(load.partitions()));
          continue;
        }
        // One row per partition, straight from the operand where it holds the rows (B) or from a gather (A).
        const host::LoadRows rows = host::load_rows(load, *a, *b, gather);
        d.write_rows(bus_sbuf(d.map(), host::sbuf_address(config.geometry, load.partition0, load.offset)),
                     config.geometry.sbuf_partition_bytes, rows.data, rows.stride, per, load.partitions());
      }
      d.submit(step.program);
      // A step waits on no semaphore, so it cannot deadlock, but an extreme timing configuration (in range, e.g.
      // timing.fp32_factor at its top with a slow clock) makes it longer than one wait_idle window: wait on while
      // instructions keep retiring, and call it stuck only after a whole window without one.
      Completion c = d.wait_idle(step_progress_window());
      for (std::uint64_t seen = c.retired; c.timed_out && !c.error; seen = c.retired) {
        c = d.wait_idle(step_progress_window());
        if (c.retired == seen) break;
      }
      if (c.error || c.timed_out) {
        r.error = d.error_record();
        r.timed_out = c.timed_out;
        r.failed_step = s;
        return false;
      }
      d.clear_done();
      for (const host::PsumRead& rd : step.reads) {
        if (!data) {
          sc_core::wait(psum.transfer_time(std::size_t{rd.elements} * 4) * static_cast<double>(rd.partitions));
          continue;
        }
        const std::size_t per = std::size_t{rd.elements} * 4;
        const std::uint64_t local =
            host::psum_address(config.geometry, rd.partition0, rd.bank, rd.offset) - isa::ArrayGeometry::kPsumBase;
        if (direct && inside(psum, local, config.geometry.psum_partition_bytes(), per, rd.partitions)) {
          for (std::size_t i = 0; i < rd.partitions; ++i)
            vp.platform().hazards.host_access(false, isa::Memory::Psum,
                                              local + i * config.geometry.psum_partition_bytes(), per);
          host::store_read(rd, psum.data() + local, config.geometry.psum_partition_bytes(), r.c, threads);
          sc_core::wait(psum.transfer_time(per) * static_cast<double>(rd.partitions));
          continue;
        }
        row.resize(rd.partitions * per);
        d.read_rows(bus_psum(d.map(), host::psum_address(config.geometry, rd.partition0, rd.bank, rd.offset)),
                    config.geometry.psum_partition_bytes(), row.data(), per, per, rd.partitions);
        host::store_read(rd, row.data(), r.c);
      }
      r.steps_done = ++s;
      if (progress) progress->advance(step.program.size());
      return true;
    });
    }
    if (r.error || r.timed_out) return;
    r.retired = d.read_counter48("vp", "retired_cnt_lsb");
    // The perf counters a driver would read: the full-array tile is what the
    // plan uses for 128-row k-tiles and 128-column m-blocks.
    // The per-tile perf counters a driver would read, of every tile the plan uses (the whole array; on MAVERICK
    // also its left half, for m-blocks that fit the partitions).
    for (const isa::TileRect& t : plan.stats.tiles) {
      const std::string name = isa::counter_tile_name(t, config.geometry);
      if (name.empty()) continue;
      r.counter_tiles += (r.counter_tiles.empty() ? "" : " + ") + name;
      r.matmul_counter += d.read_counter48("top", "arr_seq_ififo_perf_matmul." + name + "_instr_cnt_lsb");
      r.weight_load_counter += d.read_counter48("top", "arr_seq_ififo_perf_weight_load." + name + "_instr_cnt_lsb");
    }
  });
  } catch (const Interrupted& i) {
    capi::clear_stale_stack_poison();  // thrown out of the simulation (pevp/capi/stale_stack_poison.h)
    r.interrupted_by = i.signal;
    r.interrupted_at_ps = i.at.to_seconds() * 1e12;
  }
  if (progress) progress->finish();
  if (const std::optional<HazardReport> h = vp.platform().hazards.take_error()) r.hazard_error = h->text;
  r.stats = run_stats(vp.platform());
  if (config.timing_model == TimingModel::ScalesimWs && config.mode != SimMode::Functional)
    r.stats = scalesim_view(r.stats, header.shape, config.geometry);
  if (r.interrupted_by != 0) {
    const InterruptedProgress p = interrupted_progress(header, r);
    mark_interrupted(r.stats, p);
    if (trace::TraceEventWriter* trace = recorder.trace()) trace->note("interrupted", describe(p));
  }
  recorder.finish(&r.output_error, &r.stats);
  return r;
}

CsrWrite parse_csr_write(const AddressMap& map, const std::string& text) {
  const auto colon = text.find(':'), eq = text.find('=');
  if (colon == std::string::npos || eq == std::string::npos || eq < colon)
    throw std::invalid_argument("--csr '" + text + "': expected FACE:REGISTER[.FIELD]=VALUE, e.g. "
                                "cluster:arr_cluster_cfg.inter_instr_dly_cnt=32");
  CsrWrite w;
  w.reg = resolve_register(map, text.substr(0, colon), text.substr(colon + 1, eq - colon - 1));
  const std::string value = text.substr(eq + 1);
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(value, &used, 0);
  } catch (const std::logic_error&) {  // invalid_argument, out_of_range: not a number; bad_alloc goes on
    used = 0;
  }
  if (value.empty() || used != value.size() || value[0] == '-')
    throw std::invalid_argument("--csr '" + text + "': the value '" + value + "' is not an unsigned integer");
  const unsigned width = w.reg.field ? w.reg.field->width : 32;
  if (width < 64 && v >> width != 0)
    throw std::invalid_argument("--csr '" + text + "': " + std::to_string(v) + " does not fit " + w.reg.name() +
                                " (" + std::to_string(width) + " bits)");
  w.value = static_cast<std::uint32_t>(v);
  return w;
}

GemmRun run_gemm_plan(const host::GemmPlan& plan, const host::EncodedOperand& a, const host::EncodedOperand& b,
                      const VpConfig& config, const RecorderOptions& outputs) {
  const StepWalk steps = [&](const StepSink& visit) {
    for (const host::Step& step : plan.steps)
      if (!visit(step)) return;
  };
  return run_gemm_steps(plan, steps, &a, &b, config, outputs, nullptr);
}

int run_gemm(const GemmCommand& cmd, std::ostream& out, std::ostream& err) {
  VpConfig config = cmd.config ? *cmd.config : preset(cmd.gen);
  if (cmd.mode) config.mode = *cmd.mode;
  // Timing-only generates, converts, loads and checks no operand: it costs the simulation alone.
  const bool data = config.mode != SimMode::Timing;
  host::Matrix a, b;
  host::GemmOptions options;
  std::string single_buffer_reason;  // the DMA path on one buffer: why two do not fit
  host::GemmPlan plan;
  host::EncodedOperand ea, eb;
  std::vector<CsrWrite> csrs;
  try {
    for (const std::string& c : cmd.csr_writes) csrs.push_back(parse_csr_write(config.platform.map, c));
    if (cmd.config && cmd.config->gen() != cmd.gen) {
      err << "pe-vp gemm: the configuration is for " << isa::name(cmd.config->gen()) << ", the command for "
          << isa::name(cmd.gen) << '\n';
      return 2;
    }
    if (cmd.a_path.empty() != cmd.b_path.empty()) {
      err << "pe-vp gemm: give both --a and --b, or neither (random operands)\n";
      return 2;
    }
    std::size_t m = cmd.m, k = cmd.k, n = cmd.n;
    // The host holds A, B and C as fp32 plus their encoded copies (and three
    // fp64 references with --check): refuse what cannot fit rather than die in
    // an allocation, for random and for given operands alike (the products are
    // in double, so they cannot wrap).
    // With n_known false, N is not known yet (A read before B's header): the estimate with N = 1, a lower bound.
    const auto fits_host = [&](std::size_t m, std::size_t k, std::size_t n, bool n_known = true) {
      constexpr double kLimitGiB = static_cast<double>(files::kHostMemoryLimitBytes >> 30);
      const double md = static_cast<double>(m), kd = static_cast<double>(k), nd = static_cast<double>(n);
      const double gib = (8.0 * (md * kd + kd * nd) + 4.0 * md * nd + (cmd.check ? 24.0 * md * nd : 0.0)) /
                         (1024.0 * 1024.0 * 1024.0);
      if (gib <= kLimitGiB) return true;
      err << "pe-vp gemm: M=" << m << ", K=" << k;
      if (n_known) err << ", N=" << n;
      err << (n_known ? " needs about " : " (--a " + cmd.a_path + ", read before --b) needs at least ") << std::fixed
          << std::setprecision(1) << gib << " GiB of host memory for the operands" << (cmd.check ? " and references" : "")
          << " (limit " << kLimitGiB << " GiB)" << (cmd.check ? "; --no-check saves the references" : "") << '\n';
      return false;
    };
    if (data && cmd.a_path.empty() && !fits_host(m, k, n)) return 2;
    // The outputs first: a directory, a missing folder or a read-only file is refused before the operands are
    // read and the simulation run, as `pe-vp run` does (the write after the run would otherwise fail it).
    if (!cmd.out_path.empty())
      if (const std::string bad = files::check_output(cmd.out_path); !bad.empty()) {
        err << "pe-vp gemm: --out " << bad << '\n';
        return 2;
      }
    if (!cmd.a_path.empty()) {
      // The shapes are checked and the host memory weighed from the headers before the data is read, so operands
      // that contradict each other or the options, or that are too large to hold together, are refused at once (the
      // reader alone would refuse only one file past the host-memory limit). A regular A: both headers, then both
      // data. A FIFO A (--a <(...)) can be read only once, and its writer may feed B only after A: A's header, the
      // estimate with N = 1 (a lower bound), A's data, then B's header and the whole estimate.
      const auto contradicts = [&](bool given, const char* option, std::size_t value, std::size_t actual,
                                   const char* file_option, const std::string& path, const char* what) {
        if (!given || value == actual) return false;
        err << "pe-vp gemm: " << option << " " << value << " contradicts the operands: " << file_option << " " << path
            << " has " << actual << " " << what << " (leave " << option << " out to take the shape from the files)\n";
        return true;
      };
      const auto too_large = [&](const char* option, const std::string& path, std::size_t rows, std::size_t cols) {
        if (rows <= kMaxGemmSide && cols <= kMaxGemmSide) return false;
        err << "pe-vp gemm: " << option << " " << path << " is " << rows << "x" << cols << ": a GEMM side is at most "
            << kMaxGemmSide << " (as --m, --k and --n)\n";
        return true;
      };
      host::NpyFile file_a(cmd.a_path);
      const auto [rows_a, cols_a] = host::matrix_shape(file_a.header(), cmd.a_path);
      if (too_large("--a", cmd.a_path, rows_a, cols_a)) return 2;
      if (contradicts(cmd.m_given, "--m", cmd.m, rows_a, "--a", cmd.a_path, "rows") ||
          contradicts(cmd.k_given, "--k", cmd.k, cols_a, "--a", cmd.a_path, "columns"))
        return 2;
      // Mode timing needs the shapes alone: the data is checked against them but not held (a FIFO's is drained).
      std::optional<host::NpyArray> array_a;
      if (!file_a.regular()) {
        if (data && !fits_host(rows_a, cols_a, 1, false)) return 2;
        // Its writer may hold it open while it feeds B.
        if (data) array_a = file_a.read(host::NpyFile::End::CheckLater);
        else file_a.skip(host::NpyFile::End::CheckLater);
      }
      host::NpyFile file_b(cmd.b_path);
      const auto [rows_b, cols_b] = host::matrix_shape(file_b.header(), cmd.b_path);
      if (too_large("--b", cmd.b_path, rows_b, cols_b)) return 2;
      if (cols_a != rows_b) {
        err << "pe-vp gemm: A is " << rows_a << "x" << cols_a << " and B is " << rows_b << "x" << cols_b
            << ": A's columns must equal B's rows\n";
        return 2;
      }
      if (contradicts(cmd.n_given, "--n", cmd.n, cols_b, "--b", cmd.b_path, "columns")) return 2;
      if (data) {
        if (!fits_host(rows_a, cols_a, cols_b)) return 2;
        a = host::to_matrix(array_a ? std::move(*array_a) : file_a.read(), cmd.a_path);
        array_a.reset();
        b = host::to_matrix(file_b.read(), cmd.b_path);
      } else {
        if (file_a.regular()) file_a.skip();
        file_b.skip();
      }
      file_a.check_end();  // a FIFO A's trailing bytes, once its writer has closed it
      m = rows_a, k = cols_a, n = cols_b;
    } else if (data) {
      std::mt19937_64 rng(cmd.seed);
      a = random_operand(m, k, rng);
      b = random_operand(k, n, rng);
    }
    if (const std::string bad = Recorder::check_paths(cmd.outputs); !bad.empty()) {
      err << "pe-vp gemm: " << bad << '\n';
      return 2;
    }
    if (const std::string bad = Recorder::check_config(cmd.outputs, config); !bad.empty()) {
      err << "pe-vp gemm: " << bad << '\n';
      return 2;
    }
    if (const std::string twice = files::same_file_twice({{"--out", cmd.out_path},
                                                          {"--trace", cmd.outputs.trace_path},
                                                          {"--vcd", cmd.outputs.vcd_path},
                                                          {"--stats-json", cmd.outputs.stats_json_path},
                                                          {"--micro-op-log", cmd.outputs.micro_op_log_path},
                                                          {"--coverage", cmd.outputs.coverage_path}});
        !twice.empty()) {
      err << "pe-vp gemm: " << twice << '\n';
      return 2;
    }
    // An MX type names its element dtype; its operands are quantized per block below, not converted per element.
    const std::optional<isa::Dtype> mx_type = host::parse_mx_type(cmd.dtype);
    const host::InputType type =
        mx_type ? host::InputType{*mx_type, isa::Fp32Mode::None} : host::parse_input_type(cmd.gen, cmd.dtype);
    if (!cmd.mx_perf_mode.empty() && !mx_type) {
      err << "pe-vp gemm: --mx-perf-mode " << cmd.mx_perf_mode << " applies to the MX dtypes (mxfp8_e4m3, mxfp8_e5m2, "
          << "mxfp4) only, and --dtype " << cmd.dtype << " is not one\n";
      return 2;
    }
    if (mx_type) {
      options.mx = cmd.mx_perf_mode.empty() ? isa::MxPerfMode::QUAD_ROW : host::parse_mx_perf_mode(cmd.mx_perf_mode);
      if (!options.mx) {
        err << "pe-vp gemm: --mx-perf-mode '" << cmd.mx_perf_mode << "' is not none, quad_row, quad_row_interleave, "
            << "quad_row_tiled, oct_row, oct_row_interleave or oct_row_tiled\n";
        return 2;
      }
    }
    if (!cmd.sparsity.empty()) {
      options.sparsity = host::parse_sparsity(cmd.sparsity);
      if (!options.sparsity) {
        err << "pe-vp gemm: --sparsity '" << cmd.sparsity << "' is not a published N:M pattern; one of "
            << host::kSparsityPatterns << '\n';
        return 2;
      }
      if (mx_type) {
        err << "pe-vp gemm: --sparsity " << cmd.sparsity << " runs bf16 or fp16 operands, and --dtype " << cmd.dtype
            << " is MX (there is no MX sparse matmul)\n";
        return 2;
      }
      if (!host::is_sparse_dtype(type.dtype)) {
        err << "pe-vp gemm: --sparsity " << cmd.sparsity << " runs bf16 or fp16 operands (a TAG_WEIGHT load's "
            << "16-bit weight), and --dtype " << cmd.dtype << " is " << isa::name(type.dtype) << '\n';
        return 2;
      }
    }
    options.gen = cmd.gen;
    options.dtype = type.dtype;
    options.fp32_mode = type.fp32_mode;
    if (!cmd.fp32_mode.empty()) {
      auto mode = parse_fp32_mode(cmd.fp32_mode);
      if (!mode) {
        err << "pe-vp gemm: --fp32-mode '" << cmd.fp32_mode << "' is not low, high or low_high\n";
        return 2;
      }
      if (type.dtype != isa::Dtype::FP32) {
        err << "pe-vp gemm: --fp32-mode " << cmd.fp32_mode << " applies to fp32 inputs only, and --dtype "
            << cmd.dtype << " is not one\n";
        return 2;
      }
      std::string dtype_name = cmd.dtype;
      std::transform(dtype_name.begin(), dtype_name.end(), dtype_name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (dtype_name == "tf32" && *mode != isa::Fp32Mode::Low) {
        // tf32 is FP32 with fp32_mode Low: another mode contradicts it (fp32 alone
        // only defaults to High, which --fp32-mode may change).
        err << "pe-vp gemm: --dtype " << cmd.dtype << " means fp32_mode " << isa::name(type.fp32_mode)
            << "; --fp32-mode " << cmd.fp32_mode << " contradicts it (use --dtype fp32 --fp32-mode "
            << cmd.fp32_mode << ")\n";
        return 2;
      }
      options.fp32_mode = *mode;
    }
    // The plan is for the machine the platform is configured as.
    options.geometry = config.geometry;
    options.tile_n = cmd.tile_n.value_or(host::tile_limits(*options.geometry, cmd.gen).n_default);
    options.double_row = cmd.double_row;
    options.sbuf_bytes_per_partition = cmd.sbuf_budget;
    options.b_resident = cmd.b_panels;
    // The DMA path loads step s + 1 while step s computes: two buffers (D-GEMM-DMA-BUFFERS), or one where half the
    // budget cannot hold a k-tile (the steps then load after each other; said in the plan's lines).
    options.sbuf_buffers = 1;
    if (cmd.data_path == DataPath::Dma) {
      host::GemmOptions two = options;
      two.sbuf_buffers = 2;
      try {
        host::validate_gemm({m, k, n}, two, host::kMaxWalkedMatmuls);
        options = two;
      } catch (const host::PlanError& e) {
        single_buffer_reason = e.what();
      }
    }
    // The plan's figures (the plan line, the progress total, the tiles whose counters are read) before the run, whose
    // own walk then plans the same steps again: holding them instead would cost memory growing with the GEMM, and the
    // second walk costs a few per cent of a run (its instructions encoded once each, docs/performance.md).
    plan = host::plan_summary({m, k, n}, options);
    if (data && options.mx) {
      // Blocks follow the plan's k-tiles and the perf mode's row order (A's contraction runs along its columns).
      const host::MxLayout layout = host::mx_layout(*options.mx);
      ea = host::encode_mx_operand(a, cmd.gen, options.dtype, layout, plan.k_tile, true);
      eb = host::encode_mx_operand(b, cmd.gen, options.dtype, layout, plan.k_tile, false);
    } else if (data && options.sparsity) {
      // A is the stationary side: pruned along its contraction (columns), per row of A = column of the array.
      ea = host::encode_sparse_operand(a, cmd.gen, options.dtype, *options.sparsity);
      eb = host::encode_operand(b, cmd.gen, options.dtype);
    } else if (data) {
      ea = host::encode_operand(a, cmd.gen, options.dtype);
      eb = host::encode_operand(b, cmd.gen, options.dtype);
    }
  } catch (const std::bad_alloc&) {
    throw;  // sc_main's "out of host memory" (docs/reliability.md), not an argument error naming std::bad_alloc
  } catch (const std::exception& e) {
    err << "pe-vp gemm: " << e.what() << '\n';
    return 2;
  }

  const auto& st = plan.stats;
  out << "pe-vp gemm: " << isa::name(cmd.gen) << ", " << cmd.dtype
      << (plan.options.mx ? " (" + host::mx_perf_mode_name(*plan.options.mx) + ")" : std::string())
      << (plan.options.sparsity ? ", sparsity " + host::sparsity_name(*plan.options.sparsity) : std::string())
      << ": C[" << plan.shape.m << "x" << plan.shape.n
      << "] = A[" << plan.shape.m << "x" << plan.shape.k << "] @ B[" << plan.shape.k << "x" << plan.shape.n << "]"
      << (cmd.a_path.empty() ? " (random operands, seed " + std::to_string(cmd.seed) + ")" : "") << '\n';
  // fp8 without double_row contracts one row per partition: the bf16 rate, which the figures cannot say by themselves.
  if (isa::is_fp8(plan.options.dtype) && !plan.options.double_row && !plan.options.mx && !plan.options.sparsity)
    out << "  note:     fp8 without double_row runs at the bf16 rate (one contraction row per partition)"
        << (isa::is_maverick(cmd.gen) ? "; MAVERICK has no double_row (an MX dtype pumps more rows)"
                                      : "; --double-row contracts two rows per partition, twice the rate")
        << '\n';
  std::size_t total = 0;
  std::ostringstream by_op;
  for (const auto& [op, count] : st.instructions) {
    by_op << (total ? ", " : "") << isa::name(op) << " " << count;
    total += count;
  }
  out << "  plan:     " << st.steps << " step(s), " << total << " instructions (" << by_op.str() << "), "
      << st.macs << " MACs; SBUF loaded " << mib(st.sbuf_bytes_loaded) << ", PSUM read " << mib(st.psum_bytes_read)
      << '\n';
  if (st.b_panels > 0)  // D-GEMM-BPANEL; the round order prints nothing here, as before the panels existed
    out << "  order:    B resident in " << st.b_panels << " panel(s) of " << st.b_panel_ntiles
        << " n-tile(s), A streamed past them " << st.b_panel_mblocks << " m-block(s) per step\n";
  if (cmd.data_path == DataPath::Dma)
    out << "  data:     A, B and C in device memory, moved by the DMA engines, "
        << (plan.options.sbuf_buffers == 2 ? "double buffered"
                                           : "one buffer (" + single_buffer_reason + ")")
        << "\n";
  if (data && plan.options.mx) print_mx_quantization(out, ea, eb);
  if (plan.options.sparsity) print_sparsity(out, *plan.options.sparsity, data ? &ea : nullptr);

  if (!data && !cmd.out_path.empty()) {
    err << "pe-vp gemm: --out needs data, and mode timing moves none (use --mode both)\n";
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  GemmRun run;
  int late_signal = 0;  // a signal noted after the simulation's end, while its files were written
  try {
    // SIGINT / SIGTERM stop the simulation at its next safe point, which then writes what it has; after the run (the
    // host references of --check) they end the process as usual.
    const InterruptWatch watch;
    Progress progress(err, cmd.progress, total, "pe-vp gemm", "instructions");
    const host::GemmShape shape = plan.shape;
    const host::GemmOptions walk_options = plan.options;
    const StepWalk steps = [&](const StepSink& sink) { host::walk_gemm(shape, walk_options, sink); };
    run = run_gemm_steps(plan, steps, data ? &ea : nullptr, data ? &eb : nullptr, config, cmd.outputs, &progress, csrs,
                         cmd.data_path);
    if (run.interrupted_by == 0) late_signal = interrupt_signal();
  } catch (const std::bad_alloc&) {
    throw;  // the host ran out of memory, the driver program did not fail: sc_main reports it
  } catch (const std::exception& e) {
    err << "pe-vp gemm: the driver program failed: " << e.what() << '\n';
    return 3;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (run.interrupted_by != 0) {
    err << interrupted_line("pe-vp gemm", interrupted_progress(plan, run),
                            {{"trace", cmd.outputs.trace_path},
                             {"vcd", cmd.outputs.vcd_path},
                             {"stats", cmd.outputs.stats_json_path},
                             {"micro-op log", cmd.outputs.micro_op_log_path},
                             {"coverage", cmd.outputs.coverage_path}},
                            run.output_error)
        << '\n';
    return interrupted_status(run.interrupted_by);
  }
  if (!run.hazard_error.empty()) {
    err << "pe-vp gemm: " << run.hazard_error << '\n';
    return 3;
  }
  if (!run.dma_failure.empty()) {
    err << "pe-vp gemm: step " << run.failed_step << ": " << run.dma_failure
        << (run.error ? " (" + run.error->describe() + ")" : std::string()) << '\n';
    return 3;
  }
  if (run.error || run.timed_out) {
    err << "pe-vp gemm: step " << run.failed_step << ": "
        << (run.error ? run.error->describe()
                      : "the SEQ did not settle: no instruction retired in " +
                            std::string(step_progress_window().to_string()) +
                            " of simulated time (the step's progress window; a timing configuration this slow -- "
                            "timing.*, tensor_engine.clock_ghz -- needs a shorter GEMM)")
        << '\n';
    return 3;
  }
  out << "  platform: " << run.retired << " instructions retired; perf counters (" << run.counter_tiles << "): weight_load "
      << run.weight_load_counter << ", matmul " << run.matmul_counter << "; wall " << std::fixed
      << std::setprecision(3) << wall << " s, " << std::setprecision(2)
      << static_cast<double>(st.macs) / wall / 1e9 << " G simulated MACs per wall second\n";
  out.unsetf(std::ios::floatfield);
  if (config.mode != SimMode::Functional) out << format_timing_summary(run.stats);
  if (run.stats.contains("scalesim")) {
    const auto& s = run.stats["scalesim"];
    const auto& own = run.stats["pevp"];
    const double ratio = static_cast<double>(s["cycles"].get<std::uint64_t>()) / own["cycles"].get<double>();
    out << "  SCALE-Sim ws preset (timing.model=scalesim_ws): " << s["row_folds"] << " x " << s["col_folds"]
        << " folds of " << s["cycles_per_fold"] << " cycles = " << s["cycles"] << " cycles (its report's Total Cycles "
        << s["total_cycles"] << ")\n";
    out << "  pe-vp's own model: " << own["cycles"] << " cycles, " << std::fixed << std::setprecision(2)
        << own["tflops"].get<double>() << " TFLOPS -- " << ratio << "x fewer cycles than SCALE-Sim's\n";
    out.unsetf(std::ios::floatfield);
  }
  for (const auto& [what, path] : {std::pair<const char*, const std::string&>{"trace", cmd.outputs.trace_path},
                                   {"vcd", cmd.outputs.vcd_path},
                                   {"stats", cmd.outputs.stats_json_path},
                                   {"micro-op log", cmd.outputs.micro_op_log_path},
                                   {"coverage", cmd.outputs.coverage_path}})
    if (!path.empty() && run.output_error.empty()) out << "  wrote:    " << path << " (" << what << ")\n";
  if (!run.output_error.empty()) {
    err << "pe-vp gemm: " << run.output_error << '\n';
    return 2;
  }
  if (late_signal != 0) {
    err << "pe-vp gemm: interrupted by " << signal_name(late_signal)
        << " after the simulation had ended: its files are complete; the check and --out were skipped\n";
    return interrupted_status(late_signal);
  }

  int status = 0;
  if (!data) {
    out << "  check:    skipped (mode timing moves no data)\n";
  } else if (cmd.check) {
    // The references cost O(M K N) on the host (a threaded fp32 kernel and three fp64 dgemms): say so before a long
    // one. The rate is this machine class's (2 cores, docs/performance.md), so the figure is an estimate.
    constexpr double kCheckMacsPerSecond = 9e9;
    const double estimate = static_cast<double>(st.macs) / kCheckMacsPerSecond;
    if (estimate > 5.0 && cmd.progress != Progress::Style::Off)
      err << "pe-vp gemm: checking against the host references, about " << Progress::duration(estimate)
          << " (--no-check skips them)\n";
    const host::Matrix defined = host::reference_defined_order(plan, ea, eb);
    const std::size_t diff = host::count_bit_mismatches(run.c, defined);
    out << "  check:    " << (diff == 0 ? "bit-exact" : "MISMATCH") << " against the defined-order fp32 reference ("
        << diff << " of " << run.c.data.size() << " elements differ)\n";
    if (diff != 0) status = 1;
    const host::MatrixF64 ref = host::reference_fp64(a, b);
    const host::ErrorStats e64 = host::compare(run.c, ref);
    const host::ErrorStats q64 = host::compare(run.c, host::reference_fp64(ea.quantized, eb.quantized));
    // The elementwise relative error is dominated by outputs that cancel to near
    // zero; the error scaled by sum_k |a||b| (the dot product's rounding scale)
    // is the figure to compare against the dtype's precision.
    const host::MatrixF64 scale = host::abs_product_sums(a, b);
    double scaled = 0.0;
    for (std::size_t i = 0; i < ref.data.size(); ++i)
      if (scale.data[i] > 0) scaled = std::max(scaled, std::abs(run.c.data[i] - ref.data[i]) / scale.data[i]);
    out << std::setprecision(3) << std::scientific;
    out << "  error:    vs fp64 of the given " << (plan.options.sparsity ? "(unpruned) " : "")
        << "operands: max abs " << e64.max_abs_error << ", max rel "
        << e64.max_rel_error << " at (" << e64.worst_row << ", " << e64.worst_col << "), max abs / sum|a||b| "
        << scaled << '\n';
    out << "            vs fp64 of the " << cmd.dtype
        << (plan.options.mx ? "-quantized" : plan.options.sparsity ? "-rounded, pruned" : "-rounded")
        << " operands: max abs " << q64.max_abs_error << ", max rel " << q64.max_rel_error
        << " (the fp32 accumulation alone)";
    // MX: the same error on the scale of the dequantized operands' dot products (quantization can move the scale
    // of a block far from the given values', e.g. a block flushed to zero).
    if (plan.options.mx) out << ", max abs / sum|a'||b'| " << scaled_error(run.c, ea.quantized, eb.quantized);
    out << '\n';
    if (e64.non_finite_equal > 0)  // the maxima above leave these out: say so, or all-NaN reads as exact
      out << "            " << e64.non_finite_equal << " of " << e64.elements
          << " outputs are NaN or infinite as the reference is there; the figures above are over the other "
          << e64.elements - e64.non_finite_equal << "\n";
    out.unsetf(std::ios::floatfield);
  }
  if (!cmd.out_path.empty()) {
    std::string error;
    if (!host::write_npy(cmd.out_path, run.c, &error)) {
      err << "pe-vp gemm: " << error << '\n';
      return 2;
    }
    out << "  wrote:    " << cmd.out_path << " (fp32, " << run.c.rows << "x" << run.c.cols << ")\n";
  }
  return status;
}

}  // namespace pevp::platform
