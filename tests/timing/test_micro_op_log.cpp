// The micro-op log (pevp/platform/micro_op_log.h, docs/cosim-reference.md): every field of the lines of an
// Ldweights + Matmul pair against the schedule derived by hand from docs/timing.md, the observer chain with the
// firmware log, and `pe-vp run` / `pe-vp gemm --micro-op-log` giving byte-identical files on reruns.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/arr_seq/engine_clock.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/firmware_log.h"
#include "pevp/platform/micro_op_log.h"
#include "pevp/platform/virtual_platform.h"

namespace {

using namespace pevp;
using nlohmann::json;

// A 128 x 128 bf16 stationary, then N = 256 moving columns into PSUM bank 0 (MARIANA: 2 KiB banks, 256 x fp32).
constexpr const char* kPair =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,128] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,256] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF "
    "col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,256]\n";

std::vector<isa::RawInstruction> assemble(const char* text) {
  const isa::AsmResult r = isa::assemble(isa::Generation::MARIANA, text, isa::AsmOptions(false));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.diagnostics.front().describe("program"));
  return r.records;
}

std::vector<json> parse_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// docs/timing.md with the MARIANA defaults, R = the weight load's ready cycle:
//   weight load (4.2): LS = ceil(128 / 4) = 32, read = ceil(128 x 2 / 8) = 32 -> occupancy 32;
//     push = start = R (empty IFIFO, nothing in flight, no stagger wake-up this early), end = complete = done =
//     response = R + 32.
//   matmul (4.3): ready = R + 16 (seq_dispatch_cycles); push = R + 16; it waits for its tile's load to end plus
//     ls_to_mm_cycles: start = R + 32 + 4 = R + 36 (stall dependency 20); II = max(256, 64) = 256 = occupancy,
//     end = R + 292; fill_drain = 60 + 128 + 128 = 316, commit = 8 -> complete = R + 292 + 324 = R + 616;
//     done = start + first_commit = R + 36 + 1 + 316 + 8 = R + 361 (matmul_done_last 0); response = R + 361.
TEST(MicroOpLog, LinesOfAWeightLoadAndAMatmulMatchTheHandDerivedSchedule) {
  platform::VirtualPlatform vp(platform::preset(isa::Generation::MARIANA));
  std::ostringstream fw, lines;
  // The firmware log first, the micro-op log after it: both see every micro-op (the chain).
  auto firmware = std::make_unique<platform::FirmwareLog>(vp.platform(), fw);
  auto log = std::make_unique<platform::MicroOpLog>(vp.platform(), lines);
  vp.run([&](platform::Driver& d) {
    d.arm();
    d.submit(assemble(kPair));
    ASSERT_TRUE(d.wait_idle().done);
  });
  log.reset();
  firmware.reset();
  EXPECT_NE(fw.str().find("S: Matmul"), std::string::npos) << fw.str();
  EXPECT_NE(fw.str().find("matmul tile rows 0-127"), std::string::npos) << fw.str();

  const std::vector<json> l = parse_lines(lines.str());
  ASSERT_EQ(l.size(), 2u) << lines.str();
  const json& lw = l[0];
  const json& mm = l[1];
  const std::uint64_t R = lw["ready"];
  EXPECT_GT(R, 0u) << "the arming writes took bus time first";

  EXPECT_EQ(lw["seq"], 0);
  EXPECT_EQ(lw["instr"], 0);
  EXPECT_EQ(lw["uop"], 0);
  EXPECT_EQ(lw["last"], true);
  EXPECT_EQ(lw["opcode"], "LDWEIGHTS");
  EXPECT_EQ(lw["kind"], "weight_load");
  EXPECT_EQ(lw["queue"], 0);
  EXPECT_EQ(lw["tile"], json::parse(R"({"row0":0,"rows":128,"col0":0,"cols":128})"));
  EXPECT_EQ(lw["k"], 128);
  EXPECT_EQ(lw["m"], 128);
  EXPECT_EQ(lw["n"], 0);
  EXPECT_EQ(lw["in_dtype"], "BFLOAT16");
  EXPECT_EQ(lw["psum_banks"], json::array());
  EXPECT_EQ(lw["row_groups"], json::parse("[0,1,2,3]"));
  EXPECT_EQ(lw["sbuf_partition"], 0);
  EXPECT_EQ(lw["sbuf_xbus"], json::parse("[0,1,2,3,4,5,6,7]"));
  EXPECT_EQ(lw["macs"], 0);
  EXPECT_EQ(lw["issue"], R);
  EXPECT_EQ(lw["start"], R);
  EXPECT_EQ(lw["end"], R + 32);
  EXPECT_EQ(lw["complete"], R + 32);
  EXPECT_EQ(lw["done"], R + 32);
  EXPECT_EQ(lw["response"], R + 32);
  EXPECT_EQ(lw["occupancy"], 32);
  for (const auto& [reason, cycles] : lw["stalls"].items()) EXPECT_EQ(cycles, 0) << reason;

  EXPECT_EQ(mm["seq"], 1);
  EXPECT_EQ(mm["instr"], 1);
  EXPECT_EQ(mm["uop"], 0);
  EXPECT_EQ(mm["opcode"], "MATMUL");
  EXPECT_EQ(mm["kind"], "matmul");
  EXPECT_EQ(mm["n"], 256);
  EXPECT_EQ(mm["accumulate"], false);
  EXPECT_EQ(mm["psum_banks"], json::parse("[0]"));
  EXPECT_EQ(mm["macs"], 128u * 128u * 256u);
  EXPECT_EQ(mm["ready"], R + 16);
  EXPECT_EQ(mm["issue"], R + 16);
  EXPECT_EQ(mm["start"], R + 36);
  EXPECT_EQ(mm["end"], R + 292);
  EXPECT_EQ(mm["complete"], R + 616);
  EXPECT_EQ(mm["done"], R + 361);
  EXPECT_EQ(mm["response"], R + 361);
  EXPECT_EQ(mm["occupancy"], 256);
  EXPECT_EQ(mm["stalls"]["dependency"], 20);
  EXPECT_EQ(mm["stalls"].size(), static_cast<std::size_t>(arrseq::kStallKinds));
}

// Switched off, the log writes nothing and leaves the numbering alone; the first line's keys come in the
// documented order.
TEST(MicroOpLog, EnableSwitchesLinesAndKeysComeInTheirOrder) {
  platform::VirtualPlatform vp(platform::preset(isa::Generation::MARIANA));
  std::ostringstream lines;
  platform::MicroOpLog log(vp.platform(), lines);
  log.enable(false);
  vp.run([&](platform::Driver& d) {
    d.arm();
    d.submit(assemble(kPair));
    ASSERT_TRUE(d.wait_idle().done);
    EXPECT_EQ(lines.str(), "");
    log.enable(true);
    d.submit(assemble(kPair));
    ASSERT_TRUE(d.wait_idle().done);
  });
  const std::vector<json> l = parse_lines(lines.str());
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0]["seq"], 0);
  EXPECT_EQ(l[0]["instr"], 2) << "the stream's third instruction";
  const std::string first = lines.str().substr(0, lines.str().find('\n'));
  const char* order[] = {"seq",        "instr",     "uop",        "last",       "opcode",     "opcode_byte",
                         "kind",       "queue",     "tile",       "k",          "m",          "n",
                         "in_dtype",   "fp32",      "transpose",  "accumulate", "psum_banks", "row_groups",
                         "sbuf_partition", "sbuf_xbus", "macs",   "pe_reg_addr", "pe_reg_value", "ready",
                         "issue",      "start",     "end",        "complete",   "done",       "response",
                         "occupancy",  "stalls"};
  std::size_t at = 0;
  for (const char* k : order) {
    const std::size_t next = first.find(std::string("\"") + k + "\":", at);
    ASSERT_NE(next, std::string::npos) << k << " missing or out of order in " << first;
    at = next;
  }
}

// D-CYCLE-ROUNDING: a cycle's time, rounded to the picosecond, is that cycle again (2.4 GHz: cycle 2410 is
// 1004166.67 ps, rounded up to 1004167 ps), one picosecond later is the next, one earlier is still it.
TEST(EngineClock, ACyclesRoundedTimeIsThatCycle) {
  for (const double ghz : {2.4, 2.8, 1.0, 0.7, 3.3}) {
    const arrseq::EngineClock clock(ghz);
    for (arrseq::Cycle c = 0; c < 200000; ++c) {
      const sc_core::sc_time t = clock.to_time(c);
      ASSERT_EQ(clock.to_cycles(t), c) << ghz << " GHz, " << t;
      ASSERT_EQ(clock.to_cycles(t + sc_core::sc_time(1, sc_core::SC_PS)), c + 1) << ghz << " GHz, " << t;
      if (c > 0) {
        ASSERT_EQ(clock.to_cycles(t - sc_core::sc_time(1, sc_core::SC_PS)), c) << ghz << " GHz, " << t;
      }
    }
  }
  EXPECT_EQ(arrseq::EngineClock(2.4).to_time(2410), sc_core::sc_time(1004167, sc_core::SC_PS));
}

int run(const std::string& command) { return std::system(command.c_str()); }

// Two processes, the same command: the same bytes. A run's and a GEMM's log.
TEST(MicroOpLog, CliRunsWriteByteIdenticalLogs) {
  const std::string dir = ::testing::TempDir() + "/pevp_uop_log_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir + "/pair.pes") << kPair;
  }
  const std::string cli = PEVP_CLI;
  for (const char* name : {"a", "b"}) {
    ASSERT_EQ(run(cli + " run " + dir + "/pair.pes --micro-op-log " + dir + "/run_" + name + ".jsonl > /dev/null"), 0);
    ASSERT_EQ(run(cli + " gemm --m 64 --k 256 --n 96 --quiet --micro-op-log " + dir + "/gemm_" + name +
                  ".jsonl > /dev/null"),
              0);
  }
  const std::string run_a = slurp(dir + "/run_a.jsonl"), gemm_a = slurp(dir + "/gemm_a.jsonl");
  EXPECT_EQ(parse_lines(run_a).size(), 2u);
  EXPECT_EQ(run_a, slurp(dir + "/run_b.jsonl"));
  const std::vector<json> g = parse_lines(gemm_a);
  EXPECT_GE(g.size(), 4u) << "K = 256: two weight loads and two matmuls at least";
  EXPECT_EQ(gemm_a, slurp(dir + "/gemm_b.jsonl"));
  // A log path that cannot be written is refused before anything is simulated.
  EXPECT_NE(run(cli + " run " + dir + "/pair.pes --micro-op-log " + dir + "/no/such/dir/x.jsonl 2> /dev/null"), 0);
  // The same file named twice.
  EXPECT_NE(run(cli + " run " + dir + "/pair.pes --micro-op-log " + dir + "/x --stats-json " + dir +
                "/x 2> /dev/null"),
            0);
  std::filesystem::remove_all(dir);
}

}  // namespace
