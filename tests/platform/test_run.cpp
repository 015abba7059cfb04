// pe-vp run: loads, the register script, faults, dumps and every bad-input class.
// One simulated run per test (SystemC elaborates once per process); parse errors
// are found before simulating, so those tests may run several commands.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "pevp/host/npy.h"
#include "pevp/isa/builders.h"
#include "pevp/numerics/convert.h"
#include "pevp/platform/run.h"

namespace {

using namespace pevp;
namespace fs = std::filesystem;
constexpr auto kGen = isa::Generation::MARIANA;

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("pevp_run_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

void write_bin(const fs::path& p, const std::vector<isa::RawInstruction>& prog) {
  std::ofstream f(p, std::ios::binary);
  for (const auto& r : prog) f.write(reinterpret_cast<const char*>(r.data()), r.size());
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// A [K x M] stationary at SBUF partition 0 offset 0, a [K x N] moving tile at
// offset 4096, dst[M x N] fp32 at PSUM partition 0 bank 0.
std::vector<isa::RawInstruction> one_matmul(unsigned K, unsigned M, unsigned N, isa::EventsArgs mm_events = {}) {
  isa::LdweightsArgs lw;
  lw.src = isa::Pattern::row(0, static_cast<std::uint16_t>(M));
  lw.num_active_rows = K;
  lw.num_active_cols = M;
  lw.tile = {0, 128, 0, 128};
  isa::MatmulArgs mm;
  mm.src = isa::Pattern::row(4096, static_cast<std::uint16_t>(N));
  mm.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, static_cast<std::uint16_t>(N));
  mm.num_active_rows = K;
  mm.num_active_cols = M;
  mm.tile = lw.tile;
  mm.events = mm_events;
  return {isa::encode_ldweights(kGen, lw), isa::encode_matmul(kGen, mm)};
}

// Small integers: exact in bf16 and in every fp32 sum, so the expected result is plain arithmetic.
host::Matrix ints(std::size_t r, std::size_t c, int seed) {
  host::Matrix m(r, c);
  for (std::size_t i = 0; i < m.data.size(); ++i) m.data[i] = static_cast<float>((static_cast<int>(i) * 7 + seed) % 9 - 4);
  return m;
}

struct Result {
  int status;
  std::string out, err;
};

Result run(const platform::RunCommand& cmd) {
  std::ostringstream out, err;
  const int st = platform::run_program(cmd, out, err);
  return {st, out.str(), err.str()};
}

TEST(Run, LoadsRunsAScriptAndDumpsTheResult) {
  const unsigned K = 32, M = 16, N = 24;
  const host::Matrix st = ints(K, M, 1), mv = ints(K, N, 3);  // st[k][m], mv[k][n]
  host::write_npy(scratch("st.npy").string(), st);
  host::write_npy(scratch("mv.npy").string(), mv);
  write_bin(scratch("p.bin"), one_matmul(K, M, N));
  write_text(scratch("regs.txt"),
             "# counters on, then run and check what the hardware counted\n"
             "write top perf_cntr_cfg.cntr_en 1\n"
             "expect vp seq_status.idle 1\n"
             "wait\n"
             "expect vp retired_cnt_lsb 2\n"
             "expect top arr_seq_ififo_perf_matmul.tile_128x128_tile0_instr_cnt_lsb 1\n"
             "read vp seq_status.done\n");
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("p.bin").string();
  cmd.loads = {platform::parse_load(scratch("st.npy").string() + "@0x0:bf16"),
               platform::parse_load(scratch("mv.npy").string() + "@4096:bf16")};
  cmd.dumps = {platform::parse_dump("0x2000000:16x24:fp32=" + scratch("c.npy").string())};
  cmd.regs = scratch("regs.txt").string();
  const Result r = run(cmd);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("vp:seq_ctrl.seq_status.done = 1"), std::string::npos) << r.out;
  const host::Matrix c = host::read_npy_matrix(scratch("c.npy").string());
  ASSERT_EQ(c.rows, M);
  ASSERT_EQ(c.cols, N);
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n) {
      float s = 0;
      for (unsigned k = 0; k < K; ++k) s += st.at(k, m) * mv.at(k, n);
      ASSERT_EQ(c.at(m, n), s) << m << "," << n;
    }
  fs::remove_all(scratch("").parent_path());
}

TEST(Run, SemaphoreHandshakeThroughTheScript) {
  // The matmul waits for semaphore 2 >= 1 and sets semaphore 5 to 7 when done:
  // the script submits, checks nothing ran, releases it, waits, checks the flag.
  const unsigned K = 32, M = 32, N = 32;
  host::write_npy(scratch("st.npy").string(), ints(K, M, 2));
  host::write_npy(scratch("mv.npy").string(), ints(K, N, 4));
  isa::EventsArgs ev;
  ev.wait_mode = isa::WaitMode::WAIT_GE;
  ev.wait_sem = 2;
  ev.wait_value = 1;
  ev.update_mode = isa::UpdateMode::SET;
  ev.update_sem = 5;
  ev.update_value = 7;
  write_bin(scratch("p.bin"), one_matmul(K, M, N, ev));
  write_text(scratch("regs.txt"),
             "submit\n"
             "poll vp retired_cnt_lsb 1        # the Ldweights ran, the matmul waits\n"
             "expect vp iq_status.level 1\n"
             "expect vp semaphore_5.value 0\n"
             "write vp semaphore_2.value 1     # release it\n"
             "wait\n"
             "expect vp retired_cnt_lsb 2\n"
             "expect vp semaphore_5.value 7\n");
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("p.bin").string();
  cmd.loads = {platform::parse_load(scratch("st.npy").string() + "@0:bf16"),
               platform::parse_load(scratch("mv.npy").string() + "@4096:bf16")};
  cmd.regs = scratch("regs.txt").string();
  const Result r = run(cmd);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  fs::remove_all(scratch("").parent_path());
}

TEST(Run, AFaultingProgramExitsWithStatus1AndTheRecord) {
  // A matmul with no stationary loaded.
  auto prog = one_matmul(32, 32, 32);
  prog.erase(prog.begin());
  write_bin(scratch("p.bin"), prog);
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("p.bin").string();
  const Result r = run(cmd);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("instruction 0 (MATMUL)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exec.no_stationary"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  fs::remove_all(scratch("").parent_path());
}

// A script recovers from a fault as a driver does: it expects the fault, reads the record, clears it, and the queue
// resumes after the faulting instruction (D-FAULT-REQUEUE) -- here the weights load and the Matmul that follow a
// Matmul with no stationary, whose result is then exact; dump prints every register of a face.
TEST(Run, AScriptRecoversFromAFaultAndDumpsRegisters) {
  const unsigned K = 32, M = 16, N = 24;
  const host::Matrix st = ints(K, M, 1), mv = ints(K, N, 3);
  host::write_npy(scratch("st.npy").string(), st);
  host::write_npy(scratch("mv.npy").string(), mv);
  auto prog = one_matmul(K, M, N);
  prog.insert(prog.begin(), prog[1]);  // a Matmul before any weights: exec.no_stationary
  write_bin(scratch("p.bin"), prog);
  write_text(scratch("regs.txt"),
             "expect_fault exec.no_stationary\n"
             "expect vp seq_status.error 1\n"
             "clear_error\n"
             "wait\n"
             "expect vp seq_status.error 0\n"
             "expect vp retired_cnt_lsb 2\n"  // the faulting Matmul does not retire; the two after it do
             "dump top\n");
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("p.bin").string();
  cmd.loads = {platform::parse_load(scratch("st.npy").string() + "@0x0:bf16"),
               platform::parse_load(scratch("mv.npy").string() + "@4096:bf16")};
  cmd.dumps = {platform::parse_dump("0x2000000:16x24:fp32=" + scratch("c.npy").string())};
  cmd.regs = scratch("regs.txt").string();
  const Result r = run(cmd);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fault as expected: instruction 0: opcode 0x2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rule exec.no_stationary"), std::string::npos) << r.out;
  // queue_cfg as armed (0), and every register of the face: as many lines as it has registers.
  EXPECT_NE(r.out.find("top:arr_seq_cfg.queue_cfg = 0 (0x0)"), std::string::npos) << r.out;
  const auto lines = static_cast<std::size_t>(std::count(r.out.begin(), r.out.end(), '\n'));
  EXPECT_GT(lines, 40u) << r.out;
  const host::Matrix c = host::read_npy_matrix(scratch("c.npy").string());
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n) {
      float s = 0;
      for (unsigned k = 0; k < K; ++k) s += st.at(k, m) * mv.at(k, n);
      ASSERT_EQ(c.at(m, n), s) << m << "," << n;
    }
  fs::remove_all(scratch("").parent_path());
}

// A validity fault found at run time keeps the offending value, as `asm` and `disasm` print it, also when the rule's
// message starts with the field's name ("psum_zero_region must be 0..3").
TEST(Run, ARuntimeFaultNamesTheFieldAndItsValue) {
  auto prog = one_matmul(32, 32, 32);
  isa::Encoder e(kGen, isa::Opcode::MATMUL);
  const isa::Leaf* zero_region = e.leaf("psum_zero_region");
  ASSERT_NE(zero_region, nullptr);
  prog[1][zero_region->offset] = 9;
  write_bin(scratch("p.bin"), prog);
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("p.bin").string();
  const Result r = run(cmd);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("instruction 1 (MATMUL): psum_zero_region = 9: psum_zero_region must be 0..3"),
            std::string::npos)
      << r.err;
  fs::remove_all(scratch("").parent_path());
}

// Programs longer than the instruction queue (256): the script runs while the
// driver still writes the program, and a fault past the queue depth is that fault.
std::vector<isa::RawInstruction> long_program(unsigned matmuls, isa::EventsArgs first_events = {}) {
  auto prog = one_matmul(32, 32, 32, first_events);
  const isa::RawInstruction plain = one_matmul(32, 32, 32)[1];
  for (unsigned i = 1; i < matmuls; ++i) prog.push_back(plain);
  return prog;
}

TEST(Run, AScriptReleasesAProgramLongerThanTheQueue) {
  isa::EventsArgs ev;
  ev.wait_mode = isa::WaitMode::WAIT_GE;
  ev.wait_sem = 2;
  ev.wait_value = 1;
  write_bin(scratch("long.bin"), long_program(299));  // 300 instructions
  write_bin(scratch("long_wait.bin"), long_program(299, ev));
  write_text(scratch("release.txt"),
             "submit\n"
             "poll vp retired_cnt_lsb 1        # the Ldweights ran, the first matmul waits\n"
             "write vp semaphore_2.value 1     # release it while the program is still being written\n"
             "wait\n"
             "expect vp retired_cnt_lsb 300\n");
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("long_wait.bin").string();
  cmd.regs = scratch("release.txt").string();
  const Result r = run(cmd);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  fs::remove_all(scratch("").parent_path());
}

TEST(Run, AFaultPastTheQueueDepthIsReportedAsTheFault) {
  auto prog = long_program(299);
  isa::RawInstruction bad = prog[1];
  bad[0] = 0x77;  // no PE opcode
  prog.insert(prog.begin() + 280, bad);
  write_bin(scratch("p.bin"), prog);
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("p.bin").string();
  const Result r = run(cmd);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("instruction 280"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("opcode.unknown"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("deadlock"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  fs::remove_all(scratch("").parent_path());
}

// The program goes on after clear_error from the instruction after the fault, however long it is: the driver holds
// what the stopped queue refused and writes it once the error is cleared.
TEST(Run, AScriptThatClearsAFaultRunsTheRestOfAProgramLongerThanTheQueue) {
  auto prog = long_program(299);  // 300 instructions
  isa::RawInstruction bad = prog[1];
  bad[0] = 0x77;  // no PE opcode
  prog.insert(prog.begin() + 20, bad);
  write_bin(scratch("p.bin"), prog);
  write_text(scratch("recover.txt"),
             "submit\n"
             "expect_fault opcode.unknown\n"
             "clear_error\n"
             "wait\n"
             "expect vp retired_cnt_lsb 300   # every instruction but the rejected one\n"
             "expect vp iq_status.level 0\n");
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("p.bin").string();
  cmd.regs = scratch("recover.txt").string();
  platform::VpConfig c = platform::preset(kGen);
  c.platform.seq.queue_depth = 1;  // every record of every burst waits for its own room
  cmd.config = c;
  const Result r = run(cmd);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fault as expected: instruction 20:"), std::string::npos) << r.out;
  fs::remove_all(scratch("").parent_path());
}

TEST(Run, AFailedExpectationExitsWithStatus1NamingTheLine) {
  write_bin(scratch("p.bin"), one_matmul(32, 32, 32));
  write_text(scratch("regs.txt"), "wait\nexpect vp retired_cnt_lsb 5\n");
  platform::RunCommand cmd;
  cmd.gen = kGen;
  cmd.program = scratch("p.bin").string();
  cmd.regs = scratch("regs.txt").string();
  const Result r = run(cmd);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("regs.txt:2: expect vp:seq_ctrl.retired_cnt_lsb = 5, read 2"), std::string::npos) << r.err;
  fs::remove_all(scratch("").parent_path());
}

TEST(Run, BadInputsAreFoundBeforeSimulatingWithStatus2) {
  write_bin(scratch("p.bin"), one_matmul(32, 32, 32));
  host::write_npy(scratch("wide.npy").string(), host::Matrix(2, 200000));
  auto with = [&](auto edit) {
    platform::RunCommand cmd;
    cmd.gen = kGen;
    cmd.program = scratch("p.bin").string();
    edit(cmd);
    return run(cmd);
  };
  auto expect2 = [](const Result& r, const std::string& text) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
  };
  expect2(with([&](auto& c) { c.program = "/nonexistent/p.bin"; }), "/nonexistent/p.bin: cannot open");
  write_text(scratch("odd.bin"), "123");
  expect2(with([&](auto& c) { c.program = scratch("odd.bin").string(); }), "not a whole number of 64-byte");
  write_text(scratch("r1.txt"), "write top queue_cfg.no_such_field 1\n");
  expect2(with([&](auto& c) { c.regs = scratch("r1.txt").string(); }), "queue_cfg has no field 'no_such_field'");
  write_text(scratch("r2.txt"), "poke top queue_cfg 1\n");
  expect2(with([&](auto& c) { c.regs = scratch("r2.txt").string(); }), "r2.txt:1: unknown command 'poke'");
  write_text(scratch("r3.txt"), "write gpu queue_cfg 1\n");
  expect2(with([&](auto& c) { c.regs = scratch("r3.txt").string(); }), "unknown register face 'gpu'");
  write_text(scratch("r4.txt"), "write top queue_cfg 0x1ffffffff\n");
  expect2(with([&](auto& c) { c.regs = scratch("r4.txt").string(); }), "does not fit 32 bits");
  write_text(scratch("r5.txt"), "submit\nsubmit\n");
  write_text(scratch("r6.txt"), "poll vp retired_cnt_lsb\n");
  expect2(with([&](auto& c) { c.regs = scratch("r6.txt").string(); }), "r6.txt:1: expected 'poll FACE NAME VALUE'");
  expect2(with([&](auto& c) { c.regs = scratch("r5.txt").string(); }), "r5.txt:2: the program is submitted once");
  expect2(with([&](auto& c) { c.loads = {platform::parse_load(scratch("wide.npy").string() + "@0:bf16")}; }),
          "leaves the 262144-byte SBUF partition");
  expect2(with([&](auto& c) { c.loads = {platform::parse_load(scratch("wide.npy").string() + "@0x3000000:bf16")}; }),
          "in neither SBUF nor PSUM");
  expect2(with([&](auto& c) { c.loads = {platform::parse_load("/nonexistent/a.npy@0:bf16")}; }),
          "/nonexistent/a.npy");
  expect2(with([&](auto& c) { c.loads = {platform::parse_load(scratch("wide.npy").string() + "@0:int7")}; }),
          "int7");
  expect2(with([&](auto& c) { c.dumps = {platform::parse_dump("0x2000000:129x4:fp32=x.npy")}; }),
          "129 rows from partition 0 leave the 128 PSUM partitions");
  write_text(scratch("r7.txt"), "write vp irq_enable.done 2\n");
  expect2(with([&](auto& c) { c.regs = scratch("r7.txt").string(); }), "value 2 does not fit vp:seq_ctrl.irq_enable.done (1 bits");
  write_text(scratch("r9.txt"), "submit\nexpect_fault mm.no_such_rule\n");
  expect2(with([&](auto& c) { c.regs = scratch("r9.txt").string(); }), "r9.txt:2: expect_fault: no rule 'mm.no_such_rule'");
  {
    platform::VpConfig rtl = platform::preset(kGen);
    rtl.csrs_impl = platform::CsrsImpl::Rtl;  // known to hold no checkpoint before anything is built
    expect2(with([&](auto& c) { c.config = rtl; c.checkpoint = scratch("ck.bin").string(); }),
            "--checkpoint: the CSR block is the register RTL (csrs.impl = rtl)");
    expect2(with([&](auto& c) { c.config = rtl; c.restore = scratch("ck.bin").string(); }),
            "--restore: the CSR block is the register RTL (csrs.impl = rtl)");
  }
  // Outputs the write after the run would refuse are refused before it.
  expect2(with([&](auto& c) { c.dumps = {platform::parse_dump("0x2000000:4x4:fp32=" + scratch("").string())}; }),
          "--dump " + scratch("").string() + ": is a directory");
  expect2(with([&](auto& c) { c.dumps = {platform::parse_dump("0x2000000:4x4:fp32=/no/such/dir/x.npy")}; }),
          "--dump /no/such/dir/x.npy: no such directory '/no/such/dir'");
  write_text(scratch("r8.txt"), "read vp iq_status.levl\n");
  expect2(with([&](auto& c) { c.regs = scratch("r8.txt").string(); }), "iq_status has no field 'levl'");
  write_text(scratch("empty.pes"), "# nothing\n");
  expect2(with([&](auto& c) { c.program = scratch("empty.pes").string(); }), "the program has no instructions");
  host::write_npy(scratch("zero.npy").string(), host::Matrix(3, 0));
  expect2(with([&](auto& c) { c.loads = {platform::parse_load(scratch("zero.npy").string() + "@0:bf16")}; }),
          "nothing to transfer");
  // A leading 0 is decimal, never octal.
  EXPECT_EQ(platform::parse_dump("010:1x1:fp32=o.npy").address, 10u);
  EXPECT_EQ(platform::parse_dump("0x10:1x1:fp32=o.npy").address, 16u);
  EXPECT_THROW(platform::parse_dump("+5:1x1:fp32=o.npy"), std::invalid_argument);
  // Shapes that would wrap a size computation are refused by the bounds check.
  expect2(with([&](auto& c) { c.dumps = {platform::parse_dump("0x2000000:4x18446744073709551615:fp32=x.npy")}; }),
          "leaves the 16384-byte PSUM partition");
  expect2(with([&](auto& c) { c.dumps = {platform::parse_dump("0x2000000:18446744073709551615x4:fp32=x.npy")}; }),
          "leave the 128 PSUM partitions");
  EXPECT_THROW(platform::parse_load("a.npy:bf16"), std::invalid_argument);
  EXPECT_THROW(platform::parse_load("a.npy@zz:bf16"), std::invalid_argument);
  EXPECT_THROW(platform::parse_dump("0:4:fp32=x.npy"), std::invalid_argument);
  EXPECT_THROW(platform::parse_dump("0:4x0:fp32=x.npy"), std::invalid_argument);
  EXPECT_THROW(platform::parse_dump("0:4x4:fp32"), std::invalid_argument);
  fs::remove_all(scratch("").parent_path());
}

}  // namespace
