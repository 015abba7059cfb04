// The cost of driving the VP from another process: the same C API calls (pevp/pevp.h) on the in-process VP and on
// a `pe-vp serve` VP over a Unix socket and over TCP on loopback, in one run. A 32-bit register read (the request
// is tiny: this is the round trip), a 64 KiB SBUF write and read (bandwidth), and a small GEMM program's submit
// and wait. Wall time (the server works in another process). docs/performance.md ("The VP as a server") has the
// figures and the ratios.
//
//   build/tests/bench/remote_bench
#include <benchmark/benchmark.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "pevp/pevp.h"

namespace {

// A server process for the run, its endpoint read from the line it prints once it listens. Its stdout goes to a
// file, not a pipe: the server keeps writing after that line (a line per fault, its exit line), and a pipe this
// process stopped reading would block it, or kill it with SIGPIPE once closed.
struct ServerProcess {
  pid_t pid = -1;
  std::string endpoint;
  std::string log_path;
  explicit ServerProcess(const std::string& listen) {
    char path[] = "/tmp/pevp_remote_bench_XXXXXX";
    const int log = ::mkstemp(path);
    if (log < 0) fail("cannot create the server's log file");
    log_path = path;
    pid = ::fork();
    if (pid == 0) {
      ::dup2(log, 1);
      ::execl(PEVP_CLI, PEVP_CLI, "serve", "--listen", listen.c_str(), static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    ::close(log);
    const std::string line = first_line();
    const auto at = line.find("listening on ");
    if (at == std::string::npos) fail("the server did not start: " + line);
    endpoint = line.substr(at + 13, line.find(' ', at + 13) - at - 13);
  }
  ~ServerProcess() {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
    ::unlink(log_path.c_str());
  }

 private:
  // The log's first line once written; what there is if the server ended first or took over a minute.
  std::string first_line() const {
    for (int waited_ms = 0;; waited_ms += 10) {
      std::string text;
      if (std::FILE* f = std::fopen(log_path.c_str(), "r")) {
        for (int c; (c = std::fgetc(f)) != EOF && c != '\n';) text += static_cast<char>(c);
        const bool whole = !std::feof(f);
        std::fclose(f);
        if (whole) return text;
      }
      if (::waitpid(pid, nullptr, WNOHANG) == pid || waited_ms > 60000) return text;
      ::usleep(10000);
    }
  }
  static void fail(const std::string& why) {
    std::fprintf(stderr, "remote_bench: %s\n", why.c_str());
    std::exit(1);
  }
};

// The servers end with the benchmark (static destructors: SIGTERM, then reaped).
std::unique_ptr<ServerProcess> unix_server, tcp_server;

pevp_vp* vp_for(int transport) {
  static pevp_vp* local = nullptr;
  static pevp_vp* over_unix = nullptr;
  static pevp_vp* over_tcp = nullptr;
  switch (transport) {
    case 0:
      if (!local && pevp_open("MARIANA", &local) != PEVP_OK) std::abort();
      return local;
    case 1:
      if (!over_unix) {
        unix_server = std::make_unique<ServerProcess>("unix:/tmp/pevp_remote_bench_" + std::to_string(::getpid()) + ".sock");
        if (pevp_connect(unix_server->endpoint.c_str(), &over_unix) != PEVP_OK) std::abort();
      }
      return over_unix;
    default:
      if (!over_tcp) {
        tcp_server = std::make_unique<ServerProcess>("tcp:0");
        if (pevp_connect(tcp_server->endpoint.c_str(), &over_tcp) != PEVP_OK) std::abort();
      }
      return over_tcp;
  }
}

const char* kTransport[] = {"in_process", "unix", "tcp"};

void BM_read32(benchmark::State& state) {
  pevp_vp* vp = vp_for(static_cast<int>(state.range(0)));
  pevp_map map;
  pevp_get_map(vp, &map);
  std::uint32_t v = 0;
  for (auto _ : state) {
    if (pevp_read32(vp, map.apb, 0, &v) != PEVP_OK) state.SkipWithError(pevp_last_error(vp));
    benchmark::DoNotOptimize(v);
  }
  state.SetLabel(kTransport[state.range(0)]);
  state.SetItemsProcessed(state.iterations());
}

void BM_sbuf_64KiB_write_read(benchmark::State& state) {
  pevp_vp* vp = vp_for(static_cast<int>(state.range(0)));
  pevp_map map;
  pevp_get_map(vp, &map);
  std::vector<unsigned char> data(64 << 10, 7), back(data.size());
  for (auto _ : state) {
    if (pevp_write(vp, map.sbuf, data.data(), data.size()) != PEVP_OK ||
        pevp_read(vp, map.sbuf, back.data(), back.size()) != PEVP_OK)
      state.SkipWithError(pevp_last_error(vp));
  }
  state.SetLabel(kTransport[state.range(0)]);
  state.SetBytesProcessed(state.iterations() * 2 * static_cast<std::int64_t>(data.size()));
}

void BM_matmul_program(benchmark::State& state) {
  pevp_vp* vp = vp_for(static_cast<int>(state.range(0)));
  static const char* program =
      ".gen MARIANA\n"
      "ldweights src=sbuf[0]:[1,128] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF "
      "col_grp=0xF\n"
      "matmul src=sbuf[0]+0x1000:[1,512] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF "
      "col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,512]\n";
  unsigned char records[4 * 64];
  size_t count = 0;
  pevp_completion done;
  if (pevp_arm(vp, 0, 0, 0) != PEVP_OK || pevp_assemble(vp, program, records, 4, &count) != PEVP_OK)
    state.SkipWithError(pevp_last_error(vp));
  for (auto _ : state) {
    if (pevp_submit(vp, records, count) != PEVP_OK || pevp_wait_idle(vp, 1000000, &done) != PEVP_OK ||
        pevp_clear_done(vp) != PEVP_OK)
      state.SkipWithError(pevp_last_error(vp));
  }
  state.SetLabel(kTransport[state.range(0)]);
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_read32)->DenseRange(0, 2)->UseRealTime();
BENCHMARK(BM_sbuf_64KiB_write_read)->DenseRange(0, 2)->UseRealTime();
BENCHMARK(BM_matmul_program)->DenseRange(0, 2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
