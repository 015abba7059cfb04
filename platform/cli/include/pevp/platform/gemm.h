// `pe-vp gemm`: a whole GEMM C[M,N] = A[M,K] @ B[K,N] through the driver path of
// the virtual platform -- operands converted to the dtype and written to SBUF
// over the bus, the sequencer armed (003 section 6), the tiled Ldweights/Matmul
// program (host::plan_gemm) submitted step by step, results read back from PSUM
// -- then checked against the defined-order fp32 reference (bit-exact) and an
// fp64 reference. docs/gemm-tiling.md ("pe-vp gemm").
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/host/gemm_plan.h"
#include "pevp/host/matrix.h"
#include "pevp/host/operands.h"
#include "pevp/isa/generation.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/progress.h"
#include "pevp/platform/recorder.h"

namespace pevp::platform {

// The largest GEMM side, given (--m, --k, --n) or read from an operand's shape: 2^20 is far past any sweep (a
// 32768^3 timing run is 2^15), and it bounds what a timing run of .npy operands drains from a pipe.
inline constexpr std::size_t kMaxGemmSide = std::size_t{1} << 20;

// How a GEMM's operands reach SBUF (docs/memory-system.md): through the DMA engines from device memory, double
// buffered and synchronised by semaphores (the default), or written by the host over the system bus between steps.
enum class DataPath : std::uint8_t { Dma, Host };

struct GemmCommand {
  isa::Generation gen = isa::Generation::MARIANA;
  std::size_t m = 256, k = 512, n = 512;
  // Which of m, k, n the user gave: with --a/--b they must agree with the shapes.
  bool m_given = false, k_given = false, n_given = false;
  // host::parse_input_type names (bf16, fp16, fp8_e4m3, tf32, fp32, ...) or host::parse_mx_type's (mxfp8_e4m3, ...).
  std::string dtype = "bf16";
  std::string fp32_mode;          // "", "low", "high", "low_high": overrides the mode the dtype implies
  // Moving free size per Matmul; none: the most one PSUM bank holds (512 fp32 on the presets). From v4 up to the
  // whole PSUM partition (4096; 2048 where MAVERICK's c256 tiles fold).
  std::optional<unsigned> tile_n;
  bool double_row = false;        // fp8 double_row: 256 contraction rows per k-tile (CAYMAN, MARIANA*)
  // MX dtypes (mxfp8_e4m3, mxfp8_e5m2, mxfp4): the perf mode, host::parse_mx_perf_mode's names ("" = quad_row).
  std::string mx_perf_mode;
  // "N:M" (host::parse_sparsity's published patterns): A pruned on the host and run on the sparse path; "" = dense.
  std::string sparsity;
  // SBUF bytes per partition the GEMM may use (default: all); smaller forces streaming.
  std::optional<std::uint32_t> sbuf_budget;
  // Keep panels of B resident in SBUF where that loads less (host::GemmOptions::b_resident, D-GEMM-BPANEL); false:
  // the round order of every step (--no-b-panels).
  bool b_panels = true;
  DataPath data_path = DataPath::Dma;
  std::string a_path, b_path;     // .npy operands; both or neither
  std::string out_path;           // C as fp32 .npy ("" = not written)
  std::uint64_t seed = 1;
  bool check = true;              // compute the references (O(M K N) on the host)
  // The platform's configuration (default: the generation's preset); its generation must be `gen`.
  std::optional<VpConfig> config;
  // Overrides the configuration's mode. Timing-only moves no data: the SBUF
  // loads, the PSUM read-back, --out and the check are skipped.
  std::optional<SimMode> mode;
  // --trace / --vcd / --stats-json ("" = none).
  RecorderOptions outputs;
  // Register writes after arming, before the first step ("FACE:REGISTER[.FIELD]=VALUE", --csr): the knobs a
  // driver would set (inter-instruction delay, dependency check, FIFO size, throttle...).
  std::vector<std::string> csr_writes;
  // Progress on stderr (Progress::for_stderr(--quiet)).
  Progress::Style progress = Progress::Style::Off;
};

// The random operands of `pe-vp gemm` (no --a/--b): rows x cols values uniform in [-1, 1) from the top 24 bits of
// successive draws of `rng`, the same on every machine (std::uniform_real_distribution's algorithm is not pinned).
host::Matrix random_operand(std::size_t rows, std::size_t cols, std::mt19937_64& rng);

// What the driver program of a GEMM saw on the platform.
struct GemmRun {
  host::Matrix c;  // C as read back from PSUM (left unset in timing-only mode, which moves no data)
  std::uint64_t retired = 0;
  // The per-tile perf counters of the tiles the plan uses (their names joined by " + "), summed.
  std::uint64_t matmul_counter = 0, weight_load_counter = 0;
  std::string counter_tiles;
  std::optional<ErrorInfo> error;  // the SEQ's error record when a step faulted
  std::size_t failed_step = 0;
  bool timed_out = false;
  nlohmann::json stats;      // run_stats() at the end
  std::string output_error;  // a --trace / --vcd / --stats-json file could not be written
  // The DMA data path: what stopped it ("" when nothing did) and the bytes its descriptors moved.
  std::string dma_failure;
  std::uint64_t dma_load_bytes = 0, dma_eviction_bytes = 0;
  // checks.hazards = error: the first hazard the driver program met ("" when none; warnings went to stderr).
  std::string hazard_error;
  // SIGINT or SIGTERM stopped the simulation (interrupt.h; 0: it ran to its end): the signal, the simulated time of
  // the stop, and the steps whose read-back was done (the host data path counts them; the DMA path does not).
  int interrupted_by = 0;
  double interrupted_at_ps = 0;
  std::optional<std::size_t> steps_done;
};

// The driver program of `pe-vp gemm` on a platform built from `config`: per step, load SBUF over the bus, submit
// the step's program, wait for idle, read PSUM back into C. Timing-only moves no data: the loads and read-backs
// then only take their bus time. One SystemC simulation: call it once per process.
GemmRun run_gemm_plan(const host::GemmPlan& plan, const host::EncodedOperand& a, const host::EncodedOperand& b,
                      const VpConfig& config, const RecorderOptions& outputs);

// The same driver program over steps that need not be held: `walk(sink)` hands the steps to `sink` in order and
// stops when it returns false (host::walk_gemm, or a materialised plan's steps). `header` is the plan without its
// steps (its shape and stats). `a` and `b` may be null in timing-only mode only. `progress` (optional) advances by
// each step's instructions.
// A register write of --csr, resolved on the platform's address map.
struct CsrWrite {
  RegisterRef reg;
  std::uint32_t value = 0;
};
// Parses "FACE:REGISTER[.FIELD]=VALUE" (VALUE decimal or 0x hex, within the field). Throws std::invalid_argument
// naming the part that is wrong.
CsrWrite parse_csr_write(const AddressMap& map, const std::string& text);

using StepSink = std::function<bool(const host::Step&)>;
using StepWalk = std::function<void(const StepSink&)>;
GemmRun run_gemm_steps(const host::GemmPlan& header, const StepWalk& walk, const host::EncodedOperand* a,
                       const host::EncodedOperand* b, const VpConfig& config, const RecorderOptions& outputs,
                       Progress* progress, const std::vector<CsrWrite>& csrs = {},
                       DataPath path = DataPath::Host);

// The statistics of a GEMM run as SCALE-Sim v2's weight-stationary model times it (timing.model = scalesim_ws,
// host/scalesim.h): cycles, time, utilisation, TFLOPS, the PE-cycle accounting and the peak are its; the stall
// cycles are 0 (its compute model has none); "scalesim" holds the folds, "pevp" pe-vp's own figures of the run.
nlohmann::json scalesim_view(const nlohmann::json& pevp_stats, const host::GemmShape& shape,
                             const isa::ArrayGeometry& geometry);

// Runs the command, printing the summary to `out` and errors to `err`. Returns the
// exit status: 0 success, 1 the result differs from the defined-order reference,
// 2 bad arguments or input files, 3 the platform reported an error.
int run_gemm(const GemmCommand& cmd, std::ostream& out, std::ostream& err);

}  // namespace pevp::platform
