// libFuzzer harness: sequences of valid requests with hostile arguments, executed on one live in-process VP
// (pevp/capi/machine.h) as `pe-vp serve` executes them -- writes into the instruction-queue window of any size and
// offset, submits of held, plain and invalid records, waits with any timeout (cancelled at a wall-time bound picked
// by the input, as a client that leaves or a stop signal cancels them), bus accesses at addresses near every
// window's edges with sizes from 0 up, semaphore writes, clear_error, clear_done, arm. Where fuzz_protocol checks
// each reply's form, this one checks that no sequence leaves the VP unusable. Its contract:
//   - execute() never leaves the VP broken (a deadlock), and every refusal has a status the server sends and a
//     message;
//   - a wait whose timeout would pass the time limit (D-SIM-TIME-LIMIT) is refused and takes no simulated time;
//   - after each input, the VP is usable: released (every semaphore the held records wait on set, faults cleared),
//     its program settles within a bounded simulated time, a hello and a register read succeed, and a known program
//     gives the PSUM it gave on the fresh VP.
// Accepted timeouts are cut to 10 us of simulated time, so the VP stays far from its time limit for millions of
// inputs; larger ones are kept only beyond the limit, where they are refused.
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "pevp/capi/machine.h"
#include "pevp/capi/stale_stack_poison.h"
#include "pevp/isa/decode.h"
#include "pevp/platform/config.h"
#include "pevp/remote/protocol.h"

int sc_main(int, char*[]) { return 0; }

// As fuzz_protocol: the SystemC thread stacks hide live objects from LeakSanitizer (see there).
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

namespace {

using namespace pevp;
using remote::Op;
using remote::Reader;
using remote::Status;
using remote::Writer;

constexpr const char* kTarget = "fuzz_requests";
constexpr std::uint64_t kMaxAcceptedWaitNs = 10'000;  // 10 us
// The semaphores the held records wait on (WAIT_GE 1): set to release them, cleared for the next input.
constexpr unsigned kHeldSemaphores = 3;
constexpr unsigned kMaxSteps = 16;
constexpr std::size_t kMaxSubmitRecords = 512;
constexpr std::size_t kMaxTransfer = 65536;

// The byte source: the input, then zeros.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : p_(data), left_(size) {}
  bool empty() const { return left_ == 0; }
  std::uint8_t u8() {
    if (left_ == 0) return 0;
    --left_;
    return *p_++;
  }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | u8() << 8); }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < 8; ++i) v |= std::uint64_t{u8()} << (8 * i);
    return v;
  }

 private:
  const std::uint8_t* p_;
  std::size_t left_;
};

struct Vp {
  capi::Machine* machine = nullptr;
  std::uint64_t sbuf = 0, psum = 0, iq = 0, apb = 0;
  std::uint32_t sbuf_pb = 0, psum_pb = 0, partitions = 0;
  std::vector<std::uint8_t> plain, program;        // a record; the known program
  std::vector<std::uint8_t> held[kHeldSemaphores];  // a record waiting on semaphore 1 + i
  std::size_t records_sent = 0;                     // by the current input: each may fault once
  std::vector<std::uint8_t> golden_psum;           // the known program's result on the fresh VP
};

Vp& vp();

capi::Outcome execute(Op op, std::vector<std::uint8_t> payload, const capi::CancelCheck& cancel = {}) {
  capi::clear_stale_stack_poison();  // pevp/capi/stale_stack_poison.h
  capi::Outcome o = vp().machine->execute(op, std::move(payload), cancel);
  if (vp().machine->broken()) fuzz::fail(kTarget, std::string(remote::name(op)) + " left the VP broken: " + o.message);
  const auto status = static_cast<unsigned>(o.status);
  if (status > static_cast<unsigned>(Status::Protocol) || o.status == Status::Connection)
    fuzz::fail(kTarget, "a status the server never sends: " + std::to_string(status));
  if (!o.ok() && o.message.empty()) fuzz::fail(kTarget, std::string(remote::name(op)) + ": an error without a message");
  if (o.status == Status::Protocol)
    fuzz::fail(kTarget, std::string(remote::name(op)) + ": a request the harness built was malformed: " + o.message);
  return o;
}

capi::Outcome must(Op op, std::vector<std::uint8_t> payload, const std::string& what) {
  capi::Outcome o = execute(op, std::move(payload));
  if (!o.ok()) fuzz::fail(kTarget, what + ": " + o.message);
  return o;
}

std::uint64_t time_ps() {
  const capi::Outcome o = must(Op::Time, {}, "time");
  Reader r(o.payload.data(), o.payload.size(), "time");
  return r.u64("ps");
}

std::vector<std::uint8_t> assemble(const std::string& source) {
  return must(Op::Assemble, Writer().lstr(".gen MARIANA\n" + source).take(), "assembling " + source).payload;
}

const char* kLdweights =
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF";
const char* kMatmul =
    "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]";

// The known program's operands: small integers in bf16 (exact products), the same every time.
void load_operands() {
  const auto put_bf16 = [](std::vector<std::uint8_t>& row, std::size_t at, int value) {
    const float v = static_cast<float>(value);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, 4);
    row[at] = static_cast<std::uint8_t>(bits >> 16);
    row[at + 1] = static_cast<std::uint8_t>(bits >> 24);
  };
  for (std::uint32_t p = 0; p < 64; ++p) {
    std::vector<std::uint8_t> row(0x1000 + 48 * 2);  // the stationary's 32 elements at 0, the moving's 48 at 0x1000
    for (std::uint32_t i = 0; i < 32; ++i) put_bf16(row, 2 * i, static_cast<int>((p * 7 + i * 3) % 7) - 3);
    for (std::uint32_t i = 0; i < 48; ++i) put_bf16(row, 0x1000 + 2 * i, static_cast<int>((p * 5 + i) % 5) - 2);
    must(Op::Write, Writer().u64(vp().sbuf + std::uint64_t{p} * vp().sbuf_pb).bytes(row.data(), row.size()).take(),
         "loading the known program's operands");
  }
}

struct Completion {
  bool done = false, error = false, timed_out = false;
};

Completion wait_idle(std::uint64_t timeout_ns) {
  const capi::Outcome o = must(Op::WaitIdle, Writer().u64(timeout_ns).take(), "wait_idle");
  Reader r(o.payload.data(), o.payload.size(), "wait_idle");
  Completion c;
  c.done = r.flag("done"), c.error = r.flag("error"), c.timed_out = r.flag("timed_out");
  return c;
}

std::vector<std::uint8_t> run_known_program() {
  load_operands();
  must(Op::Submit, std::vector<std::uint8_t>(vp().program), "submitting the known program");
  const Completion c = wait_idle(1'000'000);
  if (!c.done || c.error) fuzz::fail(kTarget, "the known program did not complete");
  must(Op::ClearDone, {}, "clear_done");
  std::vector<std::uint8_t> psum;
  for (std::uint32_t p = 0; p < 32; ++p) {
    const capi::Outcome o =
        must(Op::Read, Writer().u64(vp().psum + std::uint64_t{p} * vp().psum_pb).u32(48 * 4).take(), "reading PSUM");
    psum.insert(psum.end(), o.payload.begin(), o.payload.end());
  }
  return psum;
}

Vp& vp() {
  static Vp v;
  static bool made = false;
  if (made) return v;
  made = true;
  std::string error;
  v.machine = capi::Machine::open(platform::preset(isa::Generation::MARIANA), &error);
  if (v.machine == nullptr) fuzz::fail(kTarget, "cannot open the VP: " + error);
  const capi::Outcome hello = must(Op::Hello, {}, "hello");
  Reader r(hello.payload.data(), hello.payload.size(), "hello");
  r.u8("version"), r.str("generation");
  v.sbuf = r.u64("sbuf"), v.psum = r.u64("psum"), v.apb = r.u64("apb"), v.iq = r.u64("iq");
  v.sbuf_pb = r.u32("sbuf_pb"), v.psum_pb = r.u32("psum_pb"), v.partitions = r.u32("partitions");
  v.plain = assemble(kLdweights);
  for (unsigned i = 0; i < kHeldSemaphores; ++i)
    v.held[i] = assemble(std::string(kLdweights) + " events.wait_mode=WAIT_GE events.wait_sem=" +
                         std::to_string(1 + i) + " events.wait_value=1");
  v.program = assemble(std::string(kLdweights) + "\n" + kMatmul);
  must(Op::Arm, Writer().u8(0).u8(0).u8(0).take(), "arm");
  v.golden_psum = run_known_program();
  return v;
}

// A record of the kind the input picks: plain, held on one of the semaphores, or invalid (a fault when dispatched).
void append_record(std::vector<std::uint8_t>& out, Input& in) {
  ++vp().records_sent;
  const std::uint8_t kind = in.u8();
  switch (kind % 4) {
    case 0:
    case 1: out.insert(out.end(), vp().plain.begin(), vp().plain.end()); break;
    case 2: {
      const std::vector<std::uint8_t>& r = vp().held[(kind >> 2) % kHeldSemaphores];
      out.insert(out.end(), r.begin(), r.end());
      break;
    }
    default: {
      std::vector<std::uint8_t> r(isa::kInstructionBytes, 0);
      r[0] = static_cast<std::uint8_t>(kind);  // an opcode, most often unknown
      out.insert(out.end(), r.begin(), r.end());
    }
  }
}

// A timeout the input picks: any value, cut to kMaxAcceptedWaitNs unless it is past what the limit leaves (then it
// is refused, which is checked).
std::uint64_t hostile_timeout(Input& in) {
  const std::uint64_t t = in.u64();
  const std::uint64_t left_ns = (capi::kMaxSimulatedPs - time_ps()) / 1000;
  return t > left_ns ? t : t % (kMaxAcceptedWaitNs + 1);
}

// An address near one of the windows' edges, or any.
std::uint64_t hostile_address(Input& in) {
  const std::uint8_t pick = in.u8();
  const std::int64_t near = static_cast<std::int16_t>(in.u16());
  std::uint64_t base = 0;
  switch (pick % 8) {
    case 0: base = vp().sbuf; break;
    case 1: base = vp().sbuf + std::uint64_t{vp().sbuf_pb} * vp().partitions; break;
    case 2: base = vp().psum; break;
    case 3: base = vp().psum + std::uint64_t{vp().psum_pb} * vp().partitions; break;
    case 4: base = vp().iq; break;
    case 5: base = vp().apb; break;
    case 6: return in.u64();
    default: base = ~std::uint64_t{0}; break;
  }
  return base + static_cast<std::uint64_t>(near);
}

std::size_t hostile_size(Input& in) {
  const std::uint16_t v = in.u16();
  switch (v % 4) {
    case 0: return 0;
    case 1: return std::size_t{4} << (v >> 2) % 5;  // 4 .. 64
    case 2: return isa::kInstructionBytes * (1 + (v >> 2) % 64);
    default: return (v >> 2) % (kMaxTransfer + 1);
  }
}

// The cancellation of a wait: never, or after the wall time the input picks (0 .. 30 ms).
capi::CancelCheck hostile_cancel(Input& in) {
  const std::uint8_t v = in.u8();
  if (v % 2 == 0) return {};
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(v % 31);
  return [until]() -> std::string {
    return std::chrono::steady_clock::now() >= until ? "the harness cancels" : "";
  };
}

void wait_step(Op op, Input& in) {
  const std::uint64_t timeout = hostile_timeout(in);
  const std::uint64_t before = time_ps();
  const capi::Outcome o = execute(op, Writer().u64(timeout).take(), hostile_cancel(in));
  if (timeout > kMaxAcceptedWaitNs) {
    if (o.status != Status::Argument || o.message.find("D-SIM-TIME-LIMIT") == std::string::npos)
      fuzz::fail(kTarget, std::string(remote::name(op)) + ": a timeout of " + std::to_string(timeout) +
                              " ns past the time limit was not refused naming it: " + o.message);
    if (time_ps() != before) fuzz::fail(kTarget, "a refused wait moved simulated time");
  } else if (!o.ok() && o.message.find("cancelled at") == std::string::npos) {
    fuzz::fail(kTarget, std::string(remote::name(op)) + ": a valid wait failed: " + o.message);
  }
}

void step(Input& in) {
  const std::uint8_t what = in.u8();
  switch (what % 10) {
    case 0: {  // a write into the queue window: n records at an aligned offset (refused whole when it does not fit)
      const std::size_t n = 1 + in.u8() % 128;
      std::vector<std::uint8_t> records;
      for (std::size_t i = 0; i < n; ++i) append_record(records, in);
      const std::uint64_t offset = isa::kInstructionBytes * (in.u8() % 64);
      execute(Op::Write, Writer().u64(vp().iq + offset).bytes(records.data(), records.size()).take());
      break;
    }
    case 1: {  // a submit held behind the queue
      const std::size_t n = in.u16() % (kMaxSubmitRecords + 1);
      std::vector<std::uint8_t> records;
      for (std::size_t i = 0; i < n; ++i) append_record(records, in);
      execute(Op::Submit, std::move(records));
      break;
    }
    case 2: wait_step(Op::WaitIdle, in); break;
    case 3: wait_step(Op::WaitIrq, in); break;
    case 4: {
      const std::uint64_t address = hostile_address(in);
      execute(Op::Read, Writer().u64(address).u32(static_cast<std::uint32_t>(hostile_size(in))).take());
      break;
    }
    case 5: {
      const std::uint64_t address = hostile_address(in);
      std::vector<std::uint8_t> data(hostile_size(in), in.u8());
      execute(Op::Write, Writer().u64(address).bytes(data.data(), data.size()).take());
      break;
    }
    case 6: {
      const std::uint64_t address = hostile_address(in);
      const bool privileged = in.u8() & 1;
      execute(Op::Write32, Writer().u64(address).u8(privileged).u32(static_cast<std::uint32_t>(in.u64())).take());
      break;
    }
    case 7: {
      const unsigned sem = in.u8() % 32;
      execute(Op::WriteReg, Writer().str("vp").str("semaphore_" + std::to_string(sem)).u32(in.u16()).take());
      break;
    }
    case 8: execute(what & 0x10 ? Op::ClearError : Op::ClearDone, {}); break;
    default: {
      const std::uint8_t f = in.u8();
      execute(Op::Arm, Writer().u8(f & 1).u8(f >> 1 & 1).u8(f >> 2 & 1).take());
    }
  }
}

// Releases what the input held and stopped, and waits until the SEQ settled: every semaphore a held record waits
// on set, each fault cleared, the queue-window and submitted records run. Fails when it does not settle.
void settle() {
  must(Op::Arm, Writer().u8(0).u8(0).u8(0).take(), "arm");
  for (unsigned s = 1; s <= kHeldSemaphores; ++s)
    must(Op::WriteReg, Writer().str("vp").str("semaphore_" + std::to_string(s)).u32(1).take(), "a semaphore");
  for (std::size_t round = 0;; ++round) {
    if (round > vp().records_sent + 16)
      fuzz::fail(kTarget, "the SEQ did not settle after the input (a wedged queue or feeder)");
    const Completion c = wait_idle(1'000'000);
    if (c.error) {
      must(Op::ClearError, {}, "clear_error");
      continue;
    }
    if (c.done) break;
    // Nothing left and done already cleared (by the input): idle is settled too.
    const capi::Outcome busy = must(Op::ReadReg, Writer().str("vp").str("seq_status.busy").take(), "seq_status");
    Reader r(busy.payload.data(), busy.payload.size(), "seq_status.busy");
    if (r.u32("busy") == 0) break;
  }
  must(Op::ClearDone, {}, "clear_done");
  for (unsigned s = 1; s <= kHeldSemaphores; ++s)
    must(Op::WriteReg, Writer().str("vp").str("semaphore_" + std::to_string(s)).u32(0).take(), "a semaphore");
}

void check_usable() {
  must(Op::Hello, {}, "hello after the input");
  must(Op::ReadReg, Writer().str("vp").str("seq_status").take(), "a register read after the input");
  settle();
  if (run_known_program() != vp().golden_psum)
    fuzz::fail(kTarget, "the known program's PSUM differs from the fresh VP's after the input");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vp();
  // The accepted waits keep the VP far below its time limit; should a very long run come near it, the VP's last
  // inputs are not run (a new process starts fresh).
  if (time_ps() > capi::kMaxSimulatedPs / 2) return 0;
  Input in(data, size);
  vp().records_sent = 0;
  for (unsigned i = 0; i < kMaxSteps && !in.empty(); ++i) step(in);
  check_usable();
  return 0;
}
