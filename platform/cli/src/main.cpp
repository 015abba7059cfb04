// pe-vp: the command line of the PE matrix-engine virtual platform: gemm, sweep, run, serve, qemu-device, asm,
// disasm, calibrate, demo, regs, cosim-check, coverage (`pe-vp --help`, README.md, docs/running.md).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <systemc>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <optional>

#include "pevp/buffers/oom_headroom.h"
#include "pevp/capi/server.h"
#include "pevp/capi/stale_stack_poison.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/isa_text/format.h"
#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"
#include "pevp/platform/asm_cmd.h"
#include "pevp/platform/config.h"
#include "pevp/platform/demo.h"
#include "pevp/platform/coverage_cmd.h"
#include "pevp/platform/disasm.h"
#include "pevp/platform/calibration.h"
#include "pevp/platform/cosim_check.h"
#include "pevp/platform/gemm.h"
#include "pevp/platform/interrupt.h"
#include "pevp/platform/simulation_context.h"
#include "pevp/platform/sweep_cmd.h"
#include "pevp/platform/run.h"
#include "pevp/platform/regs.h"
#include "pevp/platform/samples.h"
#include "pevp/qemu_device/serve.h"

namespace {

using namespace pevp;

isa::Generation generation_or_exit(const std::string& text) {
  if (auto g = isa::parse_generation(text)) return *g;
  std::cerr << "pe-vp: unknown generation '" << text << "' (CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK)\n";
  std::exit(2);
}

// A non-negative decimal integer that fits 64 bits, or nothing.
std::optional<std::uint64_t> parse_decimal(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, static_cast<unsigned>(c - '0'), &v))
      return std::nullopt;
  }
  return v;
}

int run_disasm(const std::string& gen, const std::string& path, bool json, const isa::ArrayGeometry& geometry) {
  std::string error;
  const std::optional<std::string> read = files::read_file(path, &error);
  if (!read) {
    std::cerr << "pe-vp disasm: " << error << '\n';
    return 2;
  }
  const std::vector<std::uint8_t> bytes(read->begin(), read->end());
  platform::DisasmOptions options{generation_or_exit(gen), json, geometry};
  const auto status = platform::disassemble(bytes, options, std::cout);
  if (status != platform::DisasmStatus::Ok)
    std::cerr << "pe-vp disasm: " << path << ": invalid instruction record(s), see the '!' lines\n";
  return static_cast<int>(status);
}

// The line that says the CSR block is the register RTL, and which faces (D-CSR-RTL-FACES).
constexpr const char* kRegisterRtlNote =
    "pe-vp: register RTL in use (csrs.impl = rtl): the CSR block's top, cluster and protected faces are the "
    "Verilated register files behind TLM-to-APB bridges; vp_seq is the TLM model";

// The line that says the PE array's arithmetic runs on the Verilated tile (docs/cosim.md "The datapath in the loop").
constexpr const char* kDatapathRtlNote =
    "pe-vp: datapath RTL in use (pe_array.impl = rtl): the PE array's weight loads and matmuls run on the Verilated "
    "PE tile, and its cycles time them";

// Every option naming a file or folder: an empty value is refused with the option's name ("--out: an empty
// path ..."), status 2. It is what an unset shell variable gives (--out "$OUT"), and a command that took it as
// "no file" went on, wrote nothing and said nothing.
const CLI::Validator kPath(
    [](std::string& value) {
      return value.empty() ? std::string("an empty path (an unset shell variable?): give a file or folder name")
                           : std::string();
    },
    "PATH", "a non-empty path");

int run_point_in_child(const std::vector<std::string>& argv);

// The command line's one command, run.
int run_command(int argc, char* argv[]) {
  CLI::App app{"pe-vp: virtual platform of the PE (tensor) matrix engine"};
  // A command, or only the configuration options (--dump-config prints the configuration they make).
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "pe-vp " PEVP_VERSION);
  // Configuration options of every command (docs/configuration.md); they may
  // follow the subcommand.
  std::string config_path;
  std::vector<std::string> overrides;
  bool dump_config = false;
  app.add_option("--config", config_path, "JSON configuration file (applied on the generation's preset)")->check(kPath);
  app.add_option("--set", overrides, "key=value override, e.g. --set arr_seq.ififo_depth=4 (repeatable)");
  app.add_flag("--dump-config", dump_config, "Print the effective configuration as JSON and exit");
  app.fallthrough();

  std::string gen, path;
  bool json = false;
  auto* disasm = app.add_subcommand("disasm", "Decode a binary stream of 64-byte instruction records");
  disasm->add_option("--gen", gen, "Generation: CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK")->required();
  disasm->add_option("file", path, "Binary file of 64-byte records")->check(kPath)->required();
  disasm->add_flag("--json", json, "One JSON object per instruction (JSON Lines)");

  platform::CoverageCommand coverage_cmd;
  auto* coverage = app.add_subcommand(
      "coverage", "Print the functional coverage table of coverage files (--coverage of gemm, run, sweep), merged; "
                  "--merge-to writes the merged file (docs/coverage.md)");
  coverage->add_option("files", coverage_cmd.files, "Coverage files (JSON)")->check(kPath)->required();
  coverage->add_option("--merge-to", coverage_cmd.merge_to, "Write the merged coverage file here")->check(kPath);
  coverage->add_flag("--quiet", coverage_cmd.quiet, "No table (with --merge-to)");

  std::string out_dir;
  auto* demo = app.add_subcommand(
      "demo", "Decode, check and run a sample instruction stream for every generation (each in a pe-vp run process)");
  demo->add_option("--out-dir", out_dir, "Also write each stream as sample_<GEN>.bin here")->check(kPath);
  std::string demo_coverage;
  demo->add_option("--coverage", demo_coverage,
                   "Write the streams' functional coverage of the ISA here, merged (docs/coverage.md)")
      ->check(kPath);

  std::string regfile_name{platform::kDefaultRegfile};
  bool regs_json = false;
  auto* regs = app.add_subcommand("regs", "Print an arr_seq register file from its generated tables");
  regs->add_option("--regfile", regfile_name, "top | cluster | protected | vp")
      ->capture_default_str()
      ->check(CLI::IsMember({"top", "cluster", "protected", "vp"}));
  regs->add_flag("--json", regs_json, "JSON instead of text");

  // Integers as the user wrote them: decimal digits only (no sign, no
  // exponent, no silent wrap of -1 or clamp of 2^64) inside a stated range.
  const auto integer_in = [](std::uint64_t lo, std::uint64_t hi) {
    const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
    return CLI::Validator(
        [lo, hi, range](std::string& text) -> std::string {
          const std::optional<std::uint64_t> v = parse_decimal(text);
          if (!v || *v < lo || *v > hi) return "expected an integer in " + range + ", got '" + text + "'";
          return "";
        },
        "INT in " + range);
  };
  // Host threads: far more than any host this runs on, small enough to be a mistake when exceeded.
  constexpr std::uint64_t kMaxHostThreads = 4096;
  constexpr std::uint64_t kMaxGemmSide = platform::kMaxGemmSide;
  platform::GemmCommand gemm_cmd;
  std::string gemm_gen = "MARIANA";
  auto* gemm = app.add_subcommand("gemm", "Run C = A @ B through the driver path of the virtual platform");
  gemm->add_option("--gen", gemm_gen, "Generation: CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK")->capture_default_str();
  gemm->add_option("--m", gemm_cmd.m, "Rows of A and C")->capture_default_str()->check(integer_in(1, kMaxGemmSide));
  gemm->add_option("--k", gemm_cmd.k, "Columns of A, rows of B")
      ->capture_default_str()
      ->check(integer_in(1, kMaxGemmSide));
  gemm->add_option("--n", gemm_cmd.n, "Columns of B and C")->capture_default_str()->check(integer_in(1, kMaxGemmSide));
  gemm->add_option("--dtype", gemm_cmd.dtype,
                   "Input type: bf16, fp16, fp8_e4m3 (CAYMAN) / fp8_e4m3fn (v4+), fp8_e5m2, fp8_e3m4, fp8_e2m5, "
                   "tf32, fp32, or an ISA name (BFLOAT16, FP8_EXP4, ...); MX (v4+, quantized on the host): "
                   "mxfp8_e4m3, mxfp8_e5m2, mxfp4")
      ->capture_default_str();
  gemm->add_option("--fp32-mode", gemm_cmd.fp32_mode, "FP32 inputs: low (tf32), high, low_high");
  gemm->add_option("--tile-n", gemm_cmd.tile_n,
                   "Moving free size per Matmul (default: one PSUM bank of fp32, 512 on the presets; up to the "
                   "whole PSUM partition from v4: 4096, 2048 on MAVERICK's folded c256 tiles)")
      ->check(integer_in(1, std::numeric_limits<std::uint32_t>::max()));
  gemm->add_flag("--double-row", gemm_cmd.double_row,
                 "fp8 double_row: two contraction rows per SBUF partition, K = 256 per Matmul in the time of 128 "
                 "(fp8 dtypes on CAYMAN, MARIANA, MARIANA_PLUS)");
  gemm->add_option("--mx-perf-mode", gemm_cmd.mx_perf_mode,
                   "MX dtypes: none, quad_row (default), quad_row_interleave, quad_row_tiled (4 contraction rows per "
                   "partition, K = 512 per Matmul), oct_row, oct_row_interleave, oct_row_tiled (8 rows, K = 1024)");
  gemm->add_option("--sparsity", gemm_cmd.sparsity,
                   "N:M structured sparsity (bf16 / fp16): prune A to N of every M contraction values on the host and "
                   "run MATMUL_SPARSE; 4:16, 4:12, 4:8, 2:8, 2:4, 1:4, 1:2");
  gemm->add_option("--a", gemm_cmd.a_path, "A as a 2-D .npy (f2/f4/f8)")->check(kPath);
  gemm->add_option("--b", gemm_cmd.b_path, "B as a 2-D .npy (f2/f4/f8)")->check(kPath);
  gemm->add_option("--out", gemm_cmd.out_path, "Write C here as fp32 .npy")->check(kPath);
  gemm->add_option("--seed", gemm_cmd.seed, "Seed of the random operands")
      ->capture_default_str()
      ->check(integer_in(0, std::numeric_limits<std::uint64_t>::max()));
  gemm->add_option("--sbuf-budget", gemm_cmd.sbuf_budget,
                   "SBUF bytes per partition the GEMM may use (default: all); smaller values force streaming")
      ->check(integer_in(1, std::numeric_limits<std::uint32_t>::max()));
  std::string data_path = "dma";
  gemm->add_option("--data-path", data_path,
                   "How operands reach SBUF: dma (A, B and C in device memory, moved by the DMA engines, double "
                   "buffered; docs/memory-system.md) or host (written over the system bus between steps)")
      ->capture_default_str()
      ->check(CLI::IsMember({"dma", "host"}));
  bool no_check = false;
  gemm->add_flag("--no-check", no_check, "Skip the host references (they cost O(M K N))");
  bool no_b_panels = false;
  gemm->add_flag("--no-b-panels", no_b_panels,
                 "Plan in rounds only, never keeping a panel of B resident in SBUF (docs/gemm-tiling.md D-GEMM-BPANEL)");
  gemm->add_option("--csr", gemm_cmd.csr_writes,
                   "FACE:REGISTER[.FIELD]=VALUE: a register write after arming, e.g. "
                   "cluster:arr_cluster_cfg.inter_instr_dly_cnt=32 (repeatable; `pe-vp regs` lists them)");
  // Shared by gemm and run: what to simulate and what to record (docs/timing.md).
  std::string mode;
  unsigned threads = 0;  // 0: not given (every CPU the process may use)
  bool log_firmware = false;
  const auto add_timing_options = [&mode, &threads, &log_firmware, &integer_in](CLI::App* sub,
                                                                               platform::RecorderOptions& o) {
    sub->add_option("--mode", mode,
                    "functional (no time), timing (no data: for sweeps) or both (default); same as --set mode=...")
        ->check(CLI::IsMember({"functional", "timing", "both"}, CLI::ignore_case));
    sub->add_option("--trace", o.trace_path, "Write a Perfetto / Chrome trace-event timeline (JSON) here")->check(kPath);
    sub->add_option("--vcd", o.vcd_path, "Write a VCD of IFIFO level, row-group busy, done, throttle here")->check(kPath);
    sub->add_option("--trace-window", o.trace_window,
                    "Keep only the --trace events in START:END: simulated time (10us:20us, 1ms:) or instructions "
                    "(i100:i200); END exclusive, either side may be left out (docs/trace-format.md)");
    sub->add_option("--stats-json", o.stats_json_path,
                    "Write the run statistics (cycles, utilisation, TFLOPS, stalls by reason) here")
        ->check(kPath);
    sub->add_option("--micro-op-log", o.micro_op_log_path,
                    "Write one JSON line per micro-op here (its instruction, opcode, tile, PSUM banks and its ready, "
                    "issue, start, complete and response cycles; docs/cosim-reference.md)")
        ->check(kPath);
    sub->add_option("--coverage", o.coverage_path,
                    "Write the run's functional coverage of the ISA here (opcodes, dtypes, PSUM modes, tiles, "
                    "features, rules fired; JSON, docs/coverage.md; `pe-vp coverage FILE...` prints the table)")
        ->check(kPath);
    sub->add_option("--csr-fst", o.csr_fst_prefix,
                    "With csrs.impl = rtl: FST waveforms of the CSR faces' RTL, PREFIX.top.fst, PREFIX.cluster.fst, "
                    "PREFIX.protected.fst (docs/cosim.md)")
        ->check(kPath);
    sub->add_option("--threads", threads,
                    "Host threads for the PE array's arithmetic (default: every CPU this process may use; 1: one "
                    "thread). Results and simulated time are the same for every count")
        ->check(integer_in(1, kMaxHostThreads));
    sub->add_flag("--log-firmware", log_firmware,
                  "Print the firmware's line for each instruction (S: Matmul, ...) and each micro-op with its "
                  "simulated times (lines starting 'fw ')");
  };
  add_timing_options(gemm, gemm_cmd.outputs);

  std::string asm_gen, asm_in, asm_out;
  platform::AsmCmdOptions asm_options;
  auto* assemble = app.add_subcommand("asm", "Assemble a text program (docs/assembly.md) into 64-byte records");
  assemble->add_option("--gen", asm_gen,
                       "Generation: CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK (default: the source's .gen directive)");
  assemble->add_option("input", asm_in, "Assembly source (.pes)")->required();
  assemble->add_option("-o,--output", asm_out, "Binary output (written only when assembly succeeds)")->required();
  assemble->add_flag("--allow-invalid", asm_options.allow_invalid,
                     "Validity-rule violations are warnings (for negative tests that need invalid records)");

  std::string calibrate_gen = "MARIANA";
  auto* calibrate = app.add_subcommand(
      "calibrate", "Measure the timing model's back-to-back intervals against the public figures (docs/timing.md)");
  calibrate->add_option("--gen", calibrate_gen, "Generation: CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK")->capture_default_str();

  platform::SweepCommand sweep_cmd;
  auto* sweep = app.add_subcommand(
      "sweep", "Run an exploration sweep: every point of SPEC as its own simulation, merged into CSV, JSON and plots");
  sweep->add_option("spec", sweep_cmd.spec_path, "The sweep spec (.toml or .json; docs/sweeps.md)")->check(kPath);
  sweep->add_option("--out", sweep_cmd.out_dir, "Folder of the sweep: its plan, one record per point, the results")->check(kPath)
      ->required();
  sweep->add_option("--backend", sweep_cmd.backend, "local (a process pool) or slurm (an sbatch job array)")
      ->capture_default_str()
      ->check(CLI::IsMember({"local", "slurm"}));
  sweep->add_option("-j,--jobs", sweep_cmd.jobs, "local: simulations at once (default: the machine's cores)")
      ->check(integer_in(1, 4096));
  sweep->add_flag("--resume", sweep_cmd.resume, "Continue the sweep in --out: skip the points already recorded");
  sweep->add_flag("--retry-failed", sweep_cmd.retry_failed, "With --resume: run the failed points again");
  sweep->add_flag("--collect", sweep_cmd.collect, "Only merge the records in --out into results.csv, summary.json, plots");
  sweep->add_option("--run-chunk", sweep_cmd.run_chunk, "(a Slurm array task) run chunk N of --out's points");
  bool no_plots = false;
  sweep->add_flag("--no-plots", no_plots, "No PNG plots (scripts/sweep_plots.py, matplotlib)");
  sweep->add_flag("--scalesim-report", sweep_cmd.scalesim_report, "Also write COMPUTE_REPORT.csv in SCALE-Sim's columns");
  sweep->add_option("--partition", sweep_cmd.partition, "slurm: the partition (sbatch --partition)");
  sweep->add_option("--time", sweep_cmd.time, "slurm: the time limit per array task (sbatch --time)");
  sweep->add_option("--sbatch-arg", sweep_cmd.sbatch_args, "slurm: one more sbatch argument, passed as it is (repeatable)");
  sweep->add_option("--chunk-size", sweep_cmd.chunk_size, "slurm: points per array task (default: about 32 tasks)")
      ->check(integer_in(1, 1000000));
  sweep->add_flag("--wait", sweep_cmd.wait, "slurm: wait for the job array, then collect");
  std::string point_isolation = "worker";
  sweep->add_option("--point-isolation", point_isolation,
                    "How points get their process: worker (persistent children of the sweep, each point in a fresh "
                    "SystemC context), fork (a child of the sweep per point) or process (pe-vp gemm started afresh "
                    "per point); the records are the same (docs/sweeps.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"worker", "fork", "process"}));
  sweep->add_option("--coverage", sweep_cmd.coverage_path,
                    "local: every point's functional coverage of the ISA merged into this file (docs/coverage.md)")
      ->check(kPath);

  platform::RunCommand run_cmd;
  std::string run_gen = "MARIANA";
  std::vector<std::string> run_loads, run_dumps;
  auto* run = app.add_subcommand("run", "Run a program on the virtual platform (load, arm, script, run, dump)");
  run->add_option("--gen", run_gen, "Generation: CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK")->capture_default_str();
  run->add_option("program", run_cmd.program, "Program: .bin (64-byte records) or .pes (assembly)")->check(kPath)->required();
  run->add_option("--load", run_loads, "FILE.npy@ADDR:DTYPE -- rows to consecutive partitions from ADDR")->check(kPath);
  run->add_option("--dump", run_dumps, "ADDR:RxC:DTYPE=FILE.npy -- R partitions x C elements, written as fp32")->check(kPath);
  run->add_option("--regs", run_cmd.regs, "Register script: write/read/expect FACE NAME [VALUE], submit, wait")->check(kPath);
  run->add_option("--restore", run_cmd.restore,
                  "Start from this checkpoint (docs/checkpoint.md): restored, then the loads, script and program")
        ->check(kPath);
  run->add_option("--checkpoint", run_cmd.checkpoint,
                  "Save a checkpoint here when the program is done and the SEQ idle (before the dumps)")
        ->check(kPath);
  add_timing_options(run, run_cmd.outputs);
  run->get_option("--regs")->description(
      "Register script: write/read/expect/poll FACE NAME [VALUE], submit, wait, expect_fault RULE, clear_error, "
      "dump FACE (docs/running.md)");

  platform::CosimCheckCommand cosim_cmd;
  auto* cosim = app.add_subcommand(
      "cosim-check", "Run the TLM register file and its Verilated RTL in lock-step on random APB traffic and compare "
                     "them (docs/cosim-check.md)");
  cosim->add_option("--unit", cosim_cmd.unit,
                    "regfile: a register file's TLM model against its RTL; pe_array: the PE array executor's C++ "
                    "arithmetic against the Verilated PE tile")
      ->capture_default_str();
  cosim->add_option("--regfile", cosim_cmd.regfile, "top | cluster | protected | vp")->capture_default_str();
  cosim->add_option("--micro-ops", cosim_cmd.micro_ops, "--unit pe_array: random micro-ops to run")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 32));
  cosim->add_option("--rtl-variant", cosim_cmd.rtl_variant,
                    "test only: --unit pe_array against the tile whose fp32 adder truncates (broken-rounding)")
      ->group("");
  cosim->add_option("--cycles", cosim_cmd.cycles, "PCLK cycles to run")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  cosim->add_option("--seed", cosim_cmd.seed, "Seed of the traffic (a run is a function of it)")
      ->capture_default_str()
      ->check(integer_in(0, std::numeric_limits<std::uint64_t>::max()));
  cosim->add_option("--fst", cosim_cmd.fst,
                    "FST waveform written around the first mismatch (default cosim-check-<regfile or pe_array>-seed<S>.fst)")
        ->check(kPath);
  cosim->add_option("--window", cosim_cmd.window,
                    "The waveform covers this many cycles (--unit pe_array: micro-ops) before and after it")
      ->capture_default_str()
      ->check(integer_in(1, 1000000));
  cosim->add_option("--coverage", cosim_cmd.coverage_path,
                    "--unit pe_array: write the functional coverage of the ISA its micro-ops exercised here (JSON, "
                    "docs/coverage.md)")
      ->check(kPath);
  std::uint64_t cosim_inject = 0;
  cosim->add_option("--inject-mismatch", cosim_inject, "test only: flip one stored TLM bit at this cycle")
      ->check(integer_in(1, std::uint64_t{1} << 40))
      ->group("");

  std::string qemu_gen = "MARIANA";
  qemu_device::QemuDeviceOptions qemu_options;
  auto* qemu = app.add_subcommand(
      "qemu-device",
      "Be a PCI device of a QEMU 7.2 guest (x-pci-proxy-dev): start QEMU_ARGV with the device and its interrupt "
      "doorbell appended, serve it until it exits and exit with its status (docs/qemu.md)");
  qemu->add_option("--gen", qemu_gen, "Generation: CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK")->capture_default_str();
  qemu->add_option("--proxy-fd", qemu_options.proxy_fd,
                   "Serve an x-pci-proxy-dev whose QEMU holds the other end of this inherited socket (instead of "
                   "starting QEMU)")
      ->check(integer_in(0, 1 << 20));
  qemu->add_option("--ivshmem-fd", qemu_options.ivshmem_fd,
                   "With --proxy-fd: the inherited socket of QEMU's ivshmem-doorbell chardev (vectors=2)")
      ->check(integer_in(0, 1 << 20));
  qemu->add_flag("--log-messages", qemu_options.log_messages, "Also log each SYNC_SYSMEM on stderr");
  qemu->add_option("qemu_argv", qemu_options.qemu_argv, "-- then QEMU's program and arguments");
  add_timing_options(qemu, qemu_options.outputs);

  std::string serve_gen = "MARIANA", serve_listen;
  std::uint64_t serve_frame_timeout_ms = 10000, serve_idle_timeout_ms = 0;
  capi::ServeOptions serve_options;
  auto* serve = app.add_subcommand(
      "serve", "Run the VP as an MMIO server: drivers connect over a Unix or TCP socket (docs/protocol.md)");
  serve->add_option("--gen", serve_gen, "Generation: CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK")->capture_default_str();
  serve->add_option("--listen", serve_listen,
                    "unix:PATH (created owner-only), tcp:PORT (127.0.0.1) or tcp:HOST:PORT; port 0: the system "
                    "picks one, printed on stdout")
      ->required();
  serve->add_flag("--once", serve_options.once, "Exit when the first client leaves");
  serve->add_flag("--log-firmware", serve_options.log_firmware,
                  "Print the firmware's line for each instruction and each micro-op with its simulated times, on "
                  "stderr");
  serve->add_option("--frame-timeout-ms", serve_frame_timeout_ms,
                    "A frame's bytes must arrive, and a reply be taken, within this once it began (default 10000)")
      ->check(integer_in(1, 3600000));
  serve->add_option("--idle-timeout-ms", serve_idle_timeout_ms,
                    "Drop a connected client silent this long (default: never)")
      ->check(integer_in(1, 86400000));
  serve->add_option("--token-file", serve_options.token_file,
                    "TCP: write the token clients must present to this file, owner-only (default "
                    "~/.pe-vp/tcp-HOST-PORT.token; clients read PEVP_TOKEN_FILE or the default)")
      ->check(kPath);
  serve->add_flag("--insecure-no-auth", serve_options.insecure_no_auth,
                  "TCP: take every connection without a token (any local user then drives the VP)");
  serve->add_flag("--reset-between-clients", serve_options.reset_between_clients,
                  "Hard-reset the VP to its power-on state when a client leaves (default off: the next client "
                  "inherits the VP as the last one left it -- a program queued or blocked on a semaphore, an error "
                  "record that stops the next client's program until it clears it, armed registers, semaphores, "
                  "memory contents, DMA queues)");

  // --quiet: every command that prints progress, a summary or a note takes it; errors still go to stderr, and what
  // the command exists to print (a report, a listing, a register read) stays.
  bool quiet = false;
  for (const auto& [sub, what] : std::initializer_list<std::pair<CLI::App*, const char*>>{
           {gemm, "No progress on stderr (shown for runs longer than a second) and no notes"},
           {sweep, "No progress on stderr"},
           {run, "No summary (counts, timing, 'wrote ...') and no notes; script reads and dumps still print"},
           {assemble, "No 'wrote ...' line (warnings and errors still print)"},
           {demo, "Only the verdict line, and what fails"},
           {cosim, "Print nothing when every comparison holds (the whole report when one fails)"},
           {calibrate, "No notes on stderr (the table still prints)"},
           {serve, "No notes on stderr (the listening line still prints)"},
           {qemu, "No notes on stderr"}})
    sub->add_flag("--quiet", quiet, what);

  // The options every command takes, in every command's --help (CLI11 lists only a command's own).
  for (CLI::App* sub : app.get_subcommands({}))
    sub->footer(
        "Options of every command (before or after it): --config FILE (a JSON configuration on the generation's "
        "preset), --set KEY=VALUE (repeatable; docs/configuration.md), --dump-config (print the effective "
        "configuration and exit); and pe-vp --version.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); its own exit codes (105, 106, ...)
    // are not this tool's contract: every argument error is status 2.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  // The effective configuration: the preset of the command's --gen (MARIANA when
  // it has none), then --config, then every --set in order. A --gen given on the
  // command line must agree with a generation the file or a --set chose.
  if (app.get_subcommands().empty() && !dump_config) {
    std::cerr << "pe-vp: give a command (gemm, sweep, run, serve, qemu-device, asm, disasm, calibrate, demo, regs, "
                 "cosim-check, coverage), or --dump-config; --help lists them\n";
    return 2;
  }
  // It reads coverage files only: no configuration is made.
  if (*coverage) return platform::run_coverage(coverage_cmd, std::cout, std::cerr);
  const CLI::App* cmd_app = app.get_subcommands().empty() ? &app : app.get_subcommands().front();
  const CLI::Option* gen_opt = cmd_app->get_option_no_throw("--gen");
  // Every input of the command line, before any is opened: one pipe named twice cannot be read by both.
  std::vector<files::NamedInput> inputs{{"--config", config_path}};
  if (*gemm) inputs.insert(inputs.end(), {{"--a", gemm_cmd.a_path}, {"--b", gemm_cmd.b_path}});
  if (*assemble) inputs.push_back({"input", asm_in});
  if (*disasm) inputs.push_back({"file", path});
  if (*run) {
    inputs.insert(inputs.end(), {{"program", run_cmd.program}, {"--regs", run_cmd.regs}, {"--restore", run_cmd.restore}});
    for (const std::string& l : run_loads) try {
        inputs.push_back({"--load", platform::parse_load(l).file});
      } catch (const std::exception&) {  // reported with the other --load errors below
      }
  }
  if (const std::string twice = files::pipe_named_twice(inputs); !twice.empty()) {
    std::cerr << "pe-vp: " << twice << '\n';
    return 2;
  }
  // A sweep's points take their configurations from the spec alone: a --config or --set beside it would be silently
  // dropped.
  if (*sweep && (!config_path.empty() || !overrides.empty())) {
    std::cerr << "pe-vp sweep: " << (config_path.empty() ? "--set" : "--config")
              << " does not apply to a sweep: each point's configuration comes from the spec (give the keys in its "
                 "[set] table, or vary them in [grid] or [zip]; docs/sweeps.md)\n";
    return 2;
  }
  const bool gen_given = gen_opt && gen_opt->count() > 0;
  std::string gen_text = gen_given ? gen_opt->as<std::string>() : "MARIANA";
  if (gen_given) (void)generation_or_exit(gen_text);  // a bad --gen is named before any input is opened
  // The inputs are read in one order by every command, the configuration file first: a writer may feed FIFOs one
  // after the other.
  std::optional<std::string> config_text;
  if (!config_path.empty()) {
    std::string error;
    config_text = files::read_file(config_path, &error);
    if (!config_text) {
      std::cerr << "pe-vp: " << error << '\n';
      return 2;
    }
  }
  // Every command that reads assembly (asm, and run given a .pes program) reads it once, for the .gen directive and
  // the records alike (a FIFO can be read only once). Without --gen, the directive chooses the generation and the
  // preset (its geometry) the configuration applies on, so the source is read here; with --gen, only when it is
  // assembled, where a .gen that contradicts --gen is an error naming both.
  const bool reads_assembly = *assemble || (*run && platform::is_assembly_path(run_cmd.program));
  const std::string& source_path = *assemble ? asm_in : run_cmd.program;
  const std::string source_command = *assemble ? "pe-vp asm" : "pe-vp run";
  std::string asm_source;
  const auto read_asm_source = [&] {
    std::string error;
    std::optional<std::string> text = files::read_file(source_path, &error);
    if (!text) {
      std::cerr << source_command << ": " << error << '\n';
      return false;
    }
    asm_source = std::move(*text);
    return true;
  };
  bool gen_from_source = false;
  if (reads_assembly && !gen_given) {
    if (!read_asm_source()) return 2;
    if (*run) run_cmd.program_source = asm_source;
    const std::optional<std::string> directive = isa::gen_directive(asm_source);
    // pe-vp asm needs a generation; pe-vp run has a default one (its --gen's), as for a .bin program.
    if (!directive && *assemble) {
      std::cerr << "pe-vp asm: " << asm_in << ": no --gen and no .gen directive in the source\n";
      return 2;
    }
    if (directive && !isa::parse_generation(*directive)) {
      std::cerr << source_command << ": " << source_path << ": .gen names an unknown generation '" << *directive
                << "' (CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK)\n";
      return 2;
    }
    if (directive) {
      gen_text = *directive;
      gen_from_source = true;
    }
  }
  platform::VpConfig config;
  try {
    config = platform::preset(generation_or_exit(gen_text));
    if (config_text) config = platform::load_config_text(*config_text, config_path, config);
    platform::apply_overrides(config, overrides);
    if (!mode.empty()) {
      // --mode is --set mode=... spelled as an option: both given must agree.
      const platform::SimMode set_mode = config.mode;
      const bool mode_set = std::any_of(overrides.begin(), overrides.end(), [](const std::string& o) {
        const auto eq = o.find('=');
        return eq != std::string::npos && o.substr(0, o.find_last_not_of(' ', eq - 1) + 1) == "mode";
      });
      platform::apply_override(config, "mode=" + mode);
      if (mode_set && config.mode != set_mode)
        throw std::invalid_argument("--mode " + mode + " contradicts --set mode=" +
                                    std::string(platform::name(set_mode)) + ": give one of them");
    }
    if ((gen_given || gen_from_source) && config.gen() != generation_or_exit(gen_text))
      throw std::invalid_argument((gen_from_source ? source_path + ": .gen " : std::string("--gen ")) + gen_text +
                                  " disagrees with the configuration's generation " +
                                  std::string(isa::name(config.gen())));
  } catch (const std::bad_alloc&) {
    throw;  // sc_main reports it: "pe-vp: out of host memory", status 2
  } catch (const std::exception& e) {
    std::cerr << "pe-vp: " << e.what() << '\n';
    return 2;
  }
  if (threads > 0) config.host_threads = threads;
  if (log_firmware) run_cmd.outputs.firmware_log = gemm_cmd.outputs.firmware_log = &std::cout;
  if (dump_config) {
    std::cout << platform::to_json(config).dump(2) << '\n';
    return 0;
  }
  if (*assemble) {
    if (!gen_from_source && !read_asm_source()) return 2;
    asm_options.geometry = config.geometry;
    std::ostream discard(nullptr);  // --quiet: the 'wrote' line goes nowhere (a stream without a buffer drops it)
    return platform::assemble_source(config.gen(), asm_in, asm_source, asm_out, asm_options, quiet ? discard : std::cout,
                                     std::cerr);
  }
  // The commands that build a platform say when its CSR block is the Verilated register RTL: it runs slower, and
  // its faces' behaviour is the RTL's (docs/cosim.md).
  if (!quiet && (*run || *gemm || *serve || *qemu || *calibrate) && config.csrs_impl == platform::CsrsImpl::Rtl)
    std::cerr << kRegisterRtlNote << '\n';
  if (!quiet && (*run || *gemm || *serve || *qemu || *calibrate) && config.pe_array_impl == platform::PeArrayImpl::Rtl)
    std::cerr << kDatapathRtlNote << '\n';
  if (*run) {
    run_cmd.gen = config.gen();
    run_cmd.config = config;
    run_cmd.quiet = quiet;
    try {
      for (const auto& l : run_loads) run_cmd.loads.push_back(platform::parse_load(l));
      for (const auto& d : run_dumps) run_cmd.dumps.push_back(platform::parse_dump(d));
    } catch (const std::bad_alloc&) {
      throw;  // sc_main reports it: "pe-vp: out of host memory", status 2
    } catch (const std::exception& e) {
      std::cerr << "pe-vp run: " << e.what() << '\n';
      return 2;
    }
    return platform::run_program(run_cmd, std::cout, std::cerr);
  }
  if (*qemu) {
    if (log_firmware) qemu_options.outputs.firmware_log = &std::cerr;
    return qemu_device::run_qemu_device(config, qemu_options, std::cout, std::cerr);
  }
  if (*serve) {
    try {
      serve_options.endpoint = remote::parse_endpoint(serve_listen);
    } catch (const std::bad_alloc&) {
      throw;  // sc_main reports it: "pe-vp: out of host memory", status 2
    } catch (const std::exception& e) {
      std::cerr << "pe-vp serve: --listen " << e.what() << '\n';
      return 2;
    }
    if (serve_options.endpoint.kind != remote::Endpoint::Kind::Tcp &&
        (!serve_options.token_file.empty() || serve_options.insecure_no_auth)) {
      std::cerr << "pe-vp serve: --token-file and --insecure-no-auth apply to TCP; a Unix socket takes no token "
                   "(its owner-only mode admits its owner alone)\n";
      return 2;
    }
    if (!serve_options.token_file.empty() && serve_options.insecure_no_auth) {
      std::cerr << "pe-vp serve: --token-file and --insecure-no-auth exclude each other\n";
      return 2;
    }
    serve_options.frame_timeout = remote::Millis(serve_frame_timeout_ms);
    if (serve_idle_timeout_ms > 0) serve_options.idle_timeout = remote::Millis(serve_idle_timeout_ms);
    return capi::serve(config, serve_options, std::cout, std::cerr);
  }
  if (*gemm) {
    gemm_cmd.gen = config.gen();
    gemm_cmd.config = config;
    gemm_cmd.check = !no_check;
    gemm_cmd.b_panels = !no_b_panels;
    gemm_cmd.data_path = data_path == "host" ? platform::DataPath::Host : platform::DataPath::Dma;
    gemm_cmd.progress = platform::Progress::for_stderr(quiet);
    gemm_cmd.m_given = gemm->get_option("--m")->count() > 0;
    gemm_cmd.k_given = gemm->get_option("--k")->count() > 0;
    gemm_cmd.n_given = gemm->get_option("--n")->count() > 0;
    // For the tests of a sweep's isolation (tests/sweep): a GEMM of this many rows aborts, as a point that crashes.
    if (const char* m = std::getenv("PEVP_TEST_ABORT_GEMM_M"); m && std::to_string(gemm_cmd.m) == m) std::abort();
    return platform::run_gemm(gemm_cmd, std::cout, std::cerr);
  }
  if (*sweep) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    sweep_cmd.pe_vp = ec ? std::string(argv[0]) : self.string();
    sweep_cmd.plots = !no_plots;
    sweep_cmd.progress = platform::Progress::for_stderr(quiet);
    sweep_cmd.isolation = *sweep::parse_point_isolation(point_isolation);
    sweep_cmd.run_in_child = run_point_in_child;
    // For the tests of a sweep's workers (tests/sweep): a worker's points before another takes its place.
    if (const char* n = std::getenv("PEVP_TEST_POINTS_PER_WORKER"))
      sweep_cmd.points_per_worker = std::strtoul(n, nullptr, 10);
    return platform::run_sweep(sweep_cmd, std::cout, std::cerr);
  }
  if (*calibrate) {
    // Timing only: the streams carry no data (a transpose is timed whatever its stationary holds, docs/timing.md).
    config.mode = platform::SimMode::Timing;
    try {
      const auto results = platform::measure_streams(config, platform::calibration_table_streams(config.gen()));
      std::cout << platform::format_calibration_table(results, config);
    } catch (const std::invalid_argument& e) {  // the configuration, not the run: a usage error
      std::cerr << "pe-vp calibrate: " << e.what() << '\n';
      return 2;
    } catch (const std::bad_alloc&) {
      throw;  // sc_main reports it: "pe-vp: out of host memory", status 2
    } catch (const std::exception& e) {
      std::cerr << "pe-vp calibrate: " << e.what() << '\n';
      return 3;
    }
    return 0;
  }
  if (*cosim) {
    if (cosim->get_option("--inject-mismatch")->count() > 0) cosim_cmd.inject_cycle = cosim_inject;
    cosim_cmd.quiet = quiet;
    return platform::run_cosim_check(cosim_cmd, std::cout, std::cerr);
  }
  if (*regs) {
    platform::print_regfile(**platform::regfile_by_name(regfile_name), regs_json, std::cout);
    return 0;
  }
  if (*disasm) return run_disasm(gen, path, json, config.geometry);
  if (*demo) {
    // The runs start this same executable (pe-vp run); /proc/self/exe is it whatever argv[0] says.
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return platform::run_demo(ec ? std::string(argv[0]) : self.string(), out_dir, quiet, std::cout, std::cerr,
                              demo_coverage);
  }
  return 2;
}

// run_command as sc_main runs it: out of host memory is pe-vp's own error, status 2.
int run_command_guarded(int argc, char* argv[]) {
  try {
    return run_command(argc, argv);
  } catch (const std::bad_alloc&) {
    // Inputs are checked against the host-memory limit before anything large is
    // allocated (docs/gemm-tiling.md); reaching this is a limit the checks miss.
    std::cerr << "pe-vp: out of host memory\n";
    return 2;
  }
}

// A sweep's point in a child forked from the sweep or in a worker (platform/sweep/runner.h, D-SWEEP-FORK,
// D-SWEEP-WORKER): its `pe-vp gemm` command line, run as the process started afresh would run it -- its own signal
// watch, SystemC elaborated here in a context no other point used (the sweep never elaborates), an error escaping
// the command reported as sc_elab_and_sim reports it, status 1.
int run_point_in_child(const std::vector<std::string>& argv) {
  // A worker's points after its first: each starts from a fresh SystemC context, as in a process of its own.
  static bool ran_before = false;
  if (ran_before) {
    platform::fresh_simulation_context();
    // The last point's exceptions out of SystemC threads leave stale ASan poison on this stack (a no-op without ASan).
    capi::clear_stale_stack_poison();
    // The standard streams as a process starts with them: a point's error message is formatted the same whichever
    // points the worker ran before (a `std::fixed` or a failed write left by the last one would change or hide it).
    for (std::ostream* s : {&std::cout, &std::cerr, &std::clog}) {
      s->clear();
      s->flags(std::ios_base::skipws | std::ios_base::dec);
      s->precision(6);
      s->width(0);
      s->fill(' ');
    }
  }
  ran_before = true;
  platform::forget_inherited_watch();
  buffers::reserve_oom_headroom();  // the sweep's, if a failure in it used it
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  try {
    return run_command_guarded(static_cast<int>(copy.size()), args.data());
  } catch (const sc_core::sc_report& x) {
    sc_core::sc_report_handler::get_handler()(x, sc_core::sc_report_handler::get_catch_actions());
  } catch (...) {
    sc_core::sc_report* report = sc_core::sc_handle_exception();
    if (report) sc_core::sc_report_handler::get_handler()(*report, sc_core::sc_report_handler::get_catch_actions());
    delete report;
  }
  return 1;
}

}  // namespace

// pe-vp is a SystemC program: main hands over to sc_elab_and_sim, which calls
// sc_main once. main exists only to silence the SystemC banner, which would
// otherwise land on stderr of every command (set the variable to 0 to see it).
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[]) {
  pevp::buffers::reserve_oom_headroom();  // so that an allocation failure reaches run_command_guarded's handler
  return run_command_guarded(argc, argv);
}
