// The example RTL testbench (docs/cosim-reference.md, "The testbench"): a Verilated APB4 master (apb_master.sv, the
// "RTL", its transfers fed through DPI-C) drives a VP platform in this process -- the DUT side -- through the APB4
// slave bridge pevp::apb::ApbToTlm: it arms the sequencer, loads the operands into SBUF, pushes a small GEMM program
// into the instruction queue, releases it, polls for completion and reads PSUM back, all as APB transfers. The
// reference is a second VP reached through the C ABI (pevp/pevp.h) over a real socket: a `pe-vp serve` process the
// test started (SystemC elaborates one platform per process). The testbench checks
//   - PSUM, word for word, against the reference VP's PSUM and against the integer product computed here;
//   - the micro-op log (pevp/platform/micro_op_log.h) of the DUT against the reference's, line for line and field
//     for field, cycles counted from each side's first micro-op's ready cycle (the stimulus reaches the two VPs at
//     different times; the program is held on a semaphore until it is all queued, so nothing after that depends
//     on the bus);
//   - the APB4 protocol on the pins (pevp::apb::ApbChecker).
//
//   cosim_tb ENDPOINT [--corrupt psum|uop] [--out DIR]
//
// --corrupt changes one expected value (a PSUM word, one micro-op line's complete cycle) before the comparison,
// for the negative tests: the run must then report exactly that mismatch. Exit status: 0 everything matched,
// 1 a mismatch (each printed), 2 the run could not be made (no server, a bus error, a timeout).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "Vapb_master.h"
#include "Vapb_master__Dpi.h"
#include "pevp/apb/apb_bus.h"
#include "pevp/apb/apb_checker.h"
#include "pevp/apb/apb_to_tlm.h"
#include "pevp/pevp.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/micro_op_log.h"
#include "pevp/platform/platform.h"

namespace {

using namespace pevp;
using nlohmann::json;

// C[M x N] = A^T B over K = 2 x KT contraction rows: two K tiles, one PSUM accumulation group.
constexpr unsigned KT = 16, M = 8, N = 8;
constexpr std::uint32_t kA0 = 0x0, kA1 = 0x100, kB0 = 0x1000, kB1 = 0x2000;  // offsets in each SBUF partition

int a_value(unsigned k, unsigned m) { return static_cast<int>((k * 3 + m) % 7) - 3; }
int b_value(unsigned k, unsigned n) { return static_cast<int>((k + 2 * n) % 5) - 2; }

// The program: the first instruction waits for semaphore 1 (WAIT_GE 1), so nothing runs before the testbench has
// queued all of it and released it -- on either VP.
const char* kProgram =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]+0x0:[1,8] in_dtype=bf16 num_active_rows=16 num_active_cols=8 row_grp=0xF col_grp=0xF "
    "events.wait_mode=WAIT_GE events.wait_sem=1 events.wait_value=1\n"
    "matmul src=sbuf[0]+0x1000:[1,8] in_dtype=bf16 num_active_rows=16 num_active_cols=8 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=MULTI_START dst=psum[0]:[1,8]\n"
    "ldweights src=sbuf[0]+0x100:[1,8] in_dtype=bf16 num_active_rows=16 num_active_cols=8 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x2000:[1,8] in_dtype=bf16 num_active_rows=16 num_active_cols=8 row_grp=0xF col_grp=0xF "
    "flags.accumulate_flag=ACCUMULATE psum_accumulate_flags=MULTI_END dst=psum[0]:[1,8]\n";

std::uint16_t bf16(int v) {
  const float f = static_cast<float>(v);
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}

// The operand words of one SBUF region: partition k holds row k of the K tile `tile` (A: M columns, B: N).
std::vector<std::uint32_t> region_words(bool a, unsigned tile, unsigned k) {
  const unsigned cols = a ? M : N;
  std::vector<std::uint32_t> words(cols / 2);
  for (unsigned c = 0; c < cols; c += 2) {
    const unsigned kk = tile * KT + k;
    const int lo = a ? a_value(kk, c) : b_value(kk, c), hi = a ? a_value(kk, c + 1) : b_value(kk, c + 1);
    words[c / 2] = bf16(lo) | std::uint32_t{bf16(hi)} << 16;
  }
  return words;
}

// ---- the stimulus the RTL master plays: APB transfers, decided here, handed out through DPI-C ----------------

struct Step {
  enum Kind { Write, Read, ReadModifyWrite, Poll } kind;
  std::uint32_t addr = 0, value = 0, mask = 0;
  std::string what;
  std::uint32_t* sink = nullptr;  // a Read's destination
};

struct Stimulus {
  std::deque<Step> steps;
  bool rmw_read_done = false;
  std::uint32_t rmw_value = 0;
  unsigned polls = 0;
  std::vector<std::string> errors;
  sc_core::sc_event finished;
  bool over = false;
  std::uint64_t transfers = 0;
};
Stimulus g_stim;

constexpr unsigned kMaxPolls = 100000;

}  // namespace

// DPI-C: the master's next transfer (1 write, 2 read), 0 for none this cycle, 3 when the stimulus is over.
extern "C" int tb_next(int* addr, int* wdata, int* strb, int* prot) {
  *addr = *wdata = *strb = *prot = 0;
  if (g_stim.steps.empty() || !g_stim.errors.empty()) {
    if (!g_stim.over) {
      g_stim.over = true;
      g_stim.finished.notify(sc_core::SC_ZERO_TIME);
    }
    return 3;
  }
  const Step& s = g_stim.steps.front();
  *addr = static_cast<int>(s.addr);
  const bool write = s.kind == Step::Write || (s.kind == Step::ReadModifyWrite && g_stim.rmw_read_done);
  if (!write) return 2;
  *wdata = static_cast<int>(s.kind == Step::Write ? s.value : g_stim.rmw_value);
  *strb = 0xF;
  return 1;
}

// DPI-C: the completing cycle of the transfer tb_next() gave.
extern "C" void tb_complete(int rdata_in, int slverr) {
  ++g_stim.transfers;
  const auto rdata = static_cast<std::uint32_t>(rdata_in);
  Step& s = g_stim.steps.front();
  if (slverr != 0) {
    char text[160];
    std::snprintf(text, sizeof text, "PSLVERR on %s (PADDR 0x%08x)", s.what.c_str(), s.addr);
    g_stim.errors.emplace_back(text);
    return;
  }
  switch (s.kind) {
    case Step::Write:
      break;
    case Step::Read:
      if (s.sink) *s.sink = rdata;
      break;
    case Step::ReadModifyWrite:
      if (!g_stim.rmw_read_done) {
        g_stim.rmw_read_done = true;
        g_stim.rmw_value = (rdata & ~s.mask) | (s.value & s.mask);
        return;  // the write comes next
      }
      g_stim.rmw_read_done = false;
      break;
    case Step::Poll:
      if ((rdata & s.mask) != s.value) {
        if (++g_stim.polls > kMaxPolls) g_stim.errors.push_back(s.what + ": still not set after " +
                                                                std::to_string(kMaxPolls) + " reads");
        return;  // read again
      }
      g_stim.polls = 0;
      break;
  }
  g_stim.steps.pop_front();
}

namespace {

// In front of the platform bus: the instruction queue takes whole 64-byte records, an APB master writes words, so
// the words written to the queue window are gathered, in order, into one record and written as one (the adaptor
// an APB-attached queue would have; model decision D-COSIM-IQ-WORDS). Everything else passes through unchanged.
struct IqGather : sc_core::sc_module {
  tlm_utils::simple_target_socket<IqGather> target;
  tlm_utils::simple_initiator_socket<IqGather> initiator;

  IqGather(sc_core::sc_module_name n, const platform::AddressMap& map)
      : sc_core::sc_module(n), target("target"), initiator("initiator"), map_(map) {
    target.register_b_transport(this, &IqGather::b_transport);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const std::uint64_t a = t.get_address();
    if (a < map_.iq || a >= map_.iq + map_.iq_size || !t.is_write()) {
      initiator->b_transport(t, delay);
      return;
    }
    const std::uint64_t offset = (a - map_.iq) % isa::kInstructionBytes;
    if (t.get_data_length() != 4 || t.get_byte_enable_ptr() != nullptr || offset != filled_) {
      // Only whole words, in order: anything else starts the record over.
      t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
      filled_ = 0;
      return;
    }
    std::memcpy(record_ + filled_, t.get_data_ptr(), 4);
    filled_ += 4;
    if (filled_ < isa::kInstructionBytes) {
      t.set_response_status(tlm::TLM_OK_RESPONSE);
      return;
    }
    filled_ = 0;
    tlm::tlm_generic_payload w;
    w.set_command(tlm::TLM_WRITE_COMMAND);
    w.set_address(a - offset);
    w.set_data_ptr(record_);
    w.set_data_length(isa::kInstructionBytes);
    w.set_streaming_width(isa::kInstructionBytes);
    w.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    initiator->b_transport(w, delay);
    t.set_response_status(w.get_response_status());
  }
  platform::AddressMap map_;
  unsigned char record_[isa::kInstructionBytes] = {};
  std::uint64_t filled_ = 0;
};

// Holds PRESETn low for the first cycles, ends the simulation when the master is done (or a watchdog fires).
struct Control : sc_core::sc_module {
  sc_core::sc_out<bool> presetn;
  bool timed_out = false;
  SC_HAS_PROCESS(Control);
  explicit Control(sc_core::sc_module_name n) : sc_core::sc_module(n), presetn("presetn") { SC_THREAD(run); }
  void run() {
    presetn.write(false);
    sc_core::wait(35, sc_core::SC_NS);
    presetn.write(true);
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_MS), g_stim.finished);
    timed_out = !g_stim.over;
    sc_core::sc_stop();
  }
};

std::string field_of(const json& line, const std::string& key) { return line.contains(key) ? line[key].dump() : "-"; }

// The lines as JSON, every cycle counted from the first line's ready cycle.
std::vector<json> rebased(const std::string& text) {
  static const char* kCycles[] = {"ready", "issue", "start", "end", "complete", "done", "response"};
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(json::parse(l));
  if (out.empty()) return out;
  const std::int64_t origin = out.front()["ready"].get<std::int64_t>();
  for (json& j : out)
    for (const char* c : kCycles) j[c] = j[c].get<std::int64_t>() - origin;
  return out;
}

// Compares line for line, field for field; prints each difference; the number of differences.
unsigned compare_logs(const std::vector<json>& want, const std::vector<json>& got) {
  unsigned bad = 0;
  if (want.size() != got.size()) {
    std::printf("micro-op log mismatch: the reference has %zu lines, the DUT %zu\n", want.size(), got.size());
    ++bad;
  }
  for (std::size_t i = 0; i < std::min(want.size(), got.size()); ++i)
    for (const auto& [key, value] : want[i].items())
      if (!got[i].contains(key) || got[i][key] != value) {
        std::printf("micro-op log mismatch: line %zu field %s: reference %s, DUT %s\n", i, key.c_str(),
                    value.dump().c_str(), field_of(got[i], key).c_str());
        ++bad;
      }
  return bad;
}

int setup_failure(pevp_vp* vp, const char* what) {
  std::printf("cosim_tb: %s: %s\n", what, vp ? pevp_last_error(vp) : pevp_open_error());
  pevp_close(vp);
  return 2;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  if (argc < 2) {
    std::printf("usage: cosim_tb ENDPOINT [--corrupt psum|uop] [--out DIR]\n");
    return 2;
  }
  const std::string endpoint = argv[1];
  std::string corrupt, out_dir;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--corrupt") == 0) corrupt = argv[i + 1];
    else if (std::strcmp(argv[i], "--out") == 0) out_dir = argv[i + 1];
    else {
      std::printf("cosim_tb: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (!corrupt.empty() && corrupt != "psum" && corrupt != "uop") {
    std::printf("cosim_tb: --corrupt %s: psum or uop\n", corrupt.c_str());
    return 2;
  }

  // ---- the reference: the server's VP through the C ABI -------------------------------------------------------
  pevp_vp* ref = nullptr;
  if (pevp_connect(endpoint.c_str(), &ref) != PEVP_OK) return setup_failure(nullptr, "connect");
  pevp_map map{};
  unsigned char records[8 * 64];
  std::size_t count = 0;
  pevp_completion completion{};
  if (pevp_get_map(ref, &map) != PEVP_OK) return setup_failure(ref, "map");
  if (pevp_assemble(ref, kProgram, records, 8, &count) != PEVP_OK) return setup_failure(ref, "assemble");
  if (pevp_micro_op_log(ref, 1) != PEVP_OK) return setup_failure(ref, "micro-op log");
  if (pevp_arm(ref, 0, 0, 0) != PEVP_OK) return setup_failure(ref, "arm");
  for (unsigned tile = 0; tile < 2; ++tile)
    for (unsigned k = 0; k < KT; ++k)
      for (const bool a : {true, false}) {
        const std::vector<std::uint32_t> w = region_words(a, tile, k);
        const std::uint32_t offset = a ? (tile ? kA1 : kA0) : (tile ? kB1 : kB0);
        if (pevp_write(ref, map.sbuf + std::uint64_t{k} * map.sbuf_partition_bytes + offset, w.data(),
                       w.size() * 4) != PEVP_OK)
          return setup_failure(ref, "SBUF load");
      }
  if (pevp_submit(ref, records, count) != PEVP_OK) return setup_failure(ref, "submit");
  if (pevp_write_reg(ref, "vp", "semaphore_1", 1) != PEVP_OK) return setup_failure(ref, "release");
  if (pevp_wait_idle(ref, 1000000, &completion) != PEVP_OK || !completion.done || completion.error)
    return setup_failure(ref, "wait_idle");
  std::vector<float> ref_psum(M * N);
  for (unsigned m = 0; m < M; ++m)
    if (pevp_read_psum(ref, m, 0, &ref_psum[m * N], N * sizeof(float)) != PEVP_OK)
      return setup_failure(ref, "PSUM read");
  pevp_cycles ref_cycles{};
  if (pevp_read_cycles(ref, &ref_cycles) != PEVP_OK) return setup_failure(ref, "cycles");
  std::size_t length = 0;
  pevp_micro_op_log_read(ref, nullptr, 0, &length);  // the length
  std::string ref_log(length + 1, '\0');
  if (pevp_micro_op_log_read(ref, ref_log.data(), ref_log.size(), &length) != PEVP_OK)
    return setup_failure(ref, "micro-op log read");
  ref_log.resize(length);
  pevp_close(ref);

  // ---- the DUT: a platform in this process behind the APB4 slave bridge, driven by the Verilated master -------
  const platform::VpConfig config = platform::preset(isa::Generation::MARIANA);
  const platform::AddressMap& amap = config.platform.map;
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  platform::Platform dut("dut", config);
  std::ostringstream dut_lines;
  platform::MicroOpLog dut_log(dut, dut_lines);
  sc_core::sc_clock pclk("pclk", sc_core::sc_time(10, sc_core::SC_NS));
  apb::ApbBus bus("apb");
  apb::ApbToTlmConfig bridge_config;
  bridge_config.covered_delay = sc_core::sc_time(20, sc_core::SC_NS);  // the register files' APB time (D-APB-TIME)
  apb::ApbToTlm bridge("bridge", bridge_config);
  bridge.pclk(pclk);
  bridge.connect(bus);
  apb::ApbChecker checker("checker");
  checker.pclk(pclk);
  checker.connect(bus);
  IqGather gather("iq_gather", amap);
  bridge.socket.bind(gather.target);
  gather.initiator.bind(dut.bus.target);
  sc_core::sc_signal<bool> finished("finished");
  Vapb_master rtl("rtl");
  rtl.PCLK(pclk);
  rtl.PRESETn(bus.presetn);
  rtl.PSEL(bus.psel);
  rtl.PENABLE(bus.penable);
  rtl.PWRITE(bus.pwrite);
  rtl.PADDR(bus.paddr);
  rtl.PWDATA(bus.pwdata);
  rtl.PSTRB(bus.pstrb);
  rtl.PPROT(bus.pprot);
  rtl.PREADY(bus.pready);
  rtl.PRDATA(bus.prdata);
  rtl.PSLVERR(bus.pslverr);
  rtl.finished(finished);
  Control control("control");
  control.presetn(bus.presetn);

  // The same sequence as the reference's calls: pevp_arm (Driver::arm's field writes, read-modify-write), the SBUF
  // loads, the records word by word, the release, then seq_status.done polled and PSUM read.
  const auto field_rmw = [&](const char* face, const char* reg, const char* field, std::uint32_t v) {
    const platform::RegisterRef r = platform::resolve_register(amap, face, std::string(reg) + "." + field);
    g_stim.steps.push_back({Step::ReadModifyWrite, static_cast<std::uint32_t>(r.address), v << r.field->lsb,
                            r.field->mask(), r.name()});
  };
  field_rmw("top", "queue_cfg", "fifo_size_sel", 0);
  field_rmw("top", "queue_cfg", "bypass_peregwrite_instr", 0);
  field_rmw("top", "queue_cfg", "disable_dependency_check", 0);
  field_rmw("top", "perf_cntr_cfg", "cntr_rst", 1);
  field_rmw("top", "perf_cntr_cfg", "cntr_en", 1);
  field_rmw("vp", "irq_enable", "done", 1);
  field_rmw("vp", "irq_enable", "error", 1);
  for (unsigned tile = 0; tile < 2; ++tile)
    for (unsigned k = 0; k < KT; ++k)
      for (const bool a : {true, false}) {
        const std::vector<std::uint32_t> w = region_words(a, tile, k);
        const std::uint32_t offset = a ? (tile ? kA1 : kA0) : (tile ? kB1 : kB0);
        const std::uint64_t partition = amap.sbuf + std::uint64_t{k} * config.geometry.sbuf_partition_bytes;
        const auto base = static_cast<std::uint32_t>(partition + offset);
        for (std::size_t i = 0; i < w.size(); ++i)
          g_stim.steps.push_back({Step::Write, static_cast<std::uint32_t>(base + 4 * i), w[i], 0, "SBUF load"});
      }
  for (std::size_t r = 0; r < count; ++r)
    for (unsigned i = 0; i < isa::kInstructionBytes / 4; ++i) {
      std::uint32_t word;
      std::memcpy(&word, records + r * isa::kInstructionBytes + 4 * i, 4);
      g_stim.steps.push_back({Step::Write, static_cast<std::uint32_t>(amap.iq + 4 * i), word, 0,
                              "instruction " + std::to_string(r) + " word " + std::to_string(i)});
    }
  const platform::RegisterRef sem = platform::resolve_register(amap, "vp", "semaphore_1");
  g_stim.steps.push_back({Step::Write, static_cast<std::uint32_t>(sem.address), 1, 0, sem.name()});
  const platform::RegisterRef done = platform::resolve_register(amap, "vp", "seq_status.done");
  g_stim.steps.push_back({Step::Poll, static_cast<std::uint32_t>(done.address), done.field->mask(),
                          done.field->mask(), done.name()});
  std::vector<std::uint32_t> dut_psum(M * N);
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n) {
      Step s{Step::Read,
             static_cast<std::uint32_t>(amap.psum + std::uint64_t{m} * config.geometry.psum_partition_bytes() + 4 * n),
             0, 0, "PSUM read"};
      s.sink = &dut_psum[m * N + n];
      g_stim.steps.push_back(s);
    }
  const std::size_t stimulus = g_stim.steps.size();

  sc_core::sc_start();
  rtl.final();

  if (control.timed_out) {
    std::printf("cosim_tb: the master did not finish in 10 ms simulated (%zu steps left)\n", g_stim.steps.size());
    return 2;
  }
  if (!g_stim.errors.empty()) {
    for (const std::string& e : g_stim.errors) std::printf("cosim_tb: %s\n", e.c_str());
    return 2;
  }

  // ---- the comparison --------------------------------------------------------------------------------------------
  if (corrupt == "psum") ref_psum[3 * N + 5] += 1.0f;
  std::vector<json> want = rebased(ref_log), got = rebased(dut_lines.str());
  if (corrupt == "uop" && want.size() > 1) want[1]["complete"] = want[1]["complete"].get<std::int64_t>() + 1;
  unsigned bad = 0;
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n) {
      float dut_value;
      std::memcpy(&dut_value, &dut_psum[m * N + n], 4);
      int exact = 0;
      for (unsigned k = 0; k < 2 * KT; ++k) exact += a_value(k, m) * b_value(k, n);
      if (dut_value != ref_psum[m * N + n] || dut_value != static_cast<float>(exact)) {
        std::printf("PSUM mismatch at partition %u column %u: reference %g, DUT %g, exact %d\n", m, n,
                    static_cast<double>(ref_psum[m * N + n]), static_cast<double>(dut_value), exact);
        ++bad;
      }
    }
  bad += compare_logs(want, got);
  if (!checker.violations().empty()) {
    std::printf("APB4 protocol violations:\n%s", checker.report().c_str());
    ++bad;
  }
  if (!out_dir.empty()) {
    std::ofstream(out_dir + "/reference.jsonl") << ref_log;
    std::ofstream(out_dir + "/dut.jsonl") << dut_lines.str();
  }
  std::printf(
      "cosim_tb: %u x %u PSUM words and %zu micro-op lines compared, %u mismatches; %zu stimulus steps in %llu APB "
      "transfers (%llu wait cycles), %zu checked by the APB4 checker; DUT done at %s; reference engine cycles: "
      "first start %llu, last completion %llu, busy %llu at %.2f GHz\n",
      M, N, want.size(), bad, stimulus, static_cast<unsigned long long>(g_stim.transfers),
      static_cast<unsigned long long>(bridge.stats().wait_cycles), checker.completed_transfers(),
      sc_core::sc_time_stamp().to_string().c_str(), static_cast<unsigned long long>(ref_cycles.first_start),
      static_cast<unsigned long long>(ref_cycles.last_complete), static_cast<unsigned long long>(ref_cycles.busy),
      ref_cycles.clock_ghz);
  return bad == 0 ? 0 : 1;
}
