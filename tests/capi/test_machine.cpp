// The VP behind the C API and the server (pevp/capi/machine.h), executing requests in process: a request's
// cancellation between the slices of its simulation and the VP's state after it, and a request that runs out of host
// memory. Each test runs in its own process (one VP per process).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "pevp/capi/machine.h"
#include "pevp/remote/protocol.h"

// While set, every allocation of exactly this many bytes fails as an exhausted heap would (std::bad_alloc).
static std::size_t g_failing_allocation_size = 0;

void* operator new(std::size_t bytes) {
  if (g_failing_allocation_size != 0 && bytes == g_failing_allocation_size) throw std::bad_alloc();
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
// Every other replaceable form that the unaligned delete above may free (std::get_temporary_buffer uses the nothrow
// new): all of them on malloc, so a sanitizer's allocator never sees its new paired with this free.
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return operator new(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept { return operator new(bytes, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using namespace pevp;
using remote::Op;
using remote::Status;
using remote::Writer;

capi::Machine& machine() {
  static capi::Machine* m = [] {
    std::string error;
    capi::Machine* made = capi::Machine::open(platform::preset(isa::Generation::MARIANA), &error);
    EXPECT_NE(made, nullptr) << error;
    return made;
  }();
  return *m;
}

capi::Outcome call(Op op, Writer w = Writer(), const capi::CancelCheck& cancel = {}) {
  return machine().execute(op, w.take(), cancel);
}

std::uint64_t time_ps() {
  const capi::Outcome o = call(Op::Time);
  EXPECT_TRUE(o.ok()) << o.message;
  remote::Reader r(o.payload.data(), o.payload.size(), "time");
  return r.u64("ps");
}

// An ldweights held at the head of the queue until semaphore 1 is set.
const char* kHeld =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "events.wait_mode=WAIT_GE events.wait_sem=1 events.wait_value=1\n";

void submit_held_program() {
  ASSERT_TRUE(call(Op::Arm, Writer().u8(0).u8(0).u8(0)).ok());
  const capi::Outcome records = call(Op::Assemble, Writer().lstr(kHeld));
  ASSERT_TRUE(records.ok()) << records.message;
  const capi::Outcome submitted = call(Op::Submit, Writer().bytes(records.payload.data(), records.payload.size()));
  ASSERT_TRUE(submitted.ok()) << submitted.message;
}

// A wait_idle whose simulated timeout would take minutes of wall time (the driver polls every 100 ns) ends as soon
// as the caller's check gives a reason, with the documented status and message; simulated time stopped where the
// wait was; the held program is intact and completes once released.
TEST(Machine, ACancelledWaitEndsPromptlyAndTheVpGoesOn) {
  submit_held_program();
  const std::uint64_t t0 = time_ps();
  const auto start = std::chrono::steady_clock::now();
  unsigned asked = 0;
  const capi::Outcome o = call(Op::WaitIdle, Writer().u64(600'000'000'000), [&]() -> std::string {
    ++asked;
    return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(200) ? "the test gave up" : "";
  });
  const auto wall = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(o.status, Status::State);
  EXPECT_EQ(o.message.rfind("wait_idle: cancelled at ", 0), 0u) << o.message;
  EXPECT_NE(o.message.find(" ps: the test gave up"), std::string::npos) << o.message;
  EXPECT_GT(asked, 1u);
  EXPECT_LT(wall, std::chrono::seconds(2)) << "the cancellation ended the wait at once";
  const std::uint64_t t1 = time_ps();
  EXPECT_GT(t1, t0);
  EXPECT_LT(t1, t0 + 600'000'000'000'000ull);

  // The VP goes on: the same wait without a cancellation, after the semaphore is set.
  ASSERT_TRUE(call(Op::WriteReg, Writer().str("vp").str("semaphore_1").u32(1)).ok());
  const capi::Outcome done = call(Op::WaitIdle, Writer().u64(1'000'000));
  ASSERT_TRUE(done.ok()) << done.message;
  remote::Reader r(done.payload.data(), done.payload.size(), "wait_idle");
  EXPECT_EQ(r.u8("done"), 1);
  EXPECT_EQ(r.u8("error"), 0);
  EXPECT_EQ(r.u8("timed_out"), 0);
  EXPECT_EQ(r.u64("retired"), 1u);
  EXPECT_FALSE(machine().broken());
}

// A request that ends within its first slice never asks the check (it pays nothing for cancellation), and a check
// that never cancels changes nothing.
TEST(Machine, AShortRequestDoesNotAskTheCheck) {
  unsigned asked = 0;
  const std::uint64_t seq_status = platform::preset(isa::Generation::MARIANA).platform.map.vp_seq();
  const capi::Outcome o = call(Op::Read32, Writer().u64(seq_status).u8(0), [&] { return ++asked, std::string(); });
  EXPECT_TRUE(o.ok()) << o.message;
  EXPECT_EQ(asked, 0u);
  const capi::Outcome wait = call(Op::WaitIrq, Writer().u64(1'000'000'000), [&] { return ++asked, std::string(); });
  EXPECT_TRUE(wait.ok()) << wait.message;
}

// The host's memory runs out inside a request -- here in the driver, whose held-record deque grows by 512-byte
// blocks of 8 records --: the request ends with the documented "out of host memory" (it said "std::bad_alloc"),
// and the VP goes on.
TEST(Machine, AnAllocationFailureInARequestIsOutOfHostMemory) {
  ASSERT_TRUE(call(Op::Arm, Writer().u8(0).u8(0).u8(0)).ok());
  const capi::Outcome records = call(Op::Assemble, Writer().lstr(kHeld));
  ASSERT_TRUE(records.ok()) << records.message;
  std::vector<std::uint8_t> program;
  for (unsigned i = 0; i < 16; ++i) program.insert(program.end(), records.payload.begin(), records.payload.end());
  g_failing_allocation_size = 8 * isa::kInstructionBytes;
  const capi::Outcome o = call(Op::Submit, Writer().bytes(program.data(), program.size()));
  g_failing_allocation_size = 0;
  EXPECT_EQ(o.status, Status::Internal);
  EXPECT_EQ(o.message, "submit: out of host memory");
  EXPECT_FALSE(machine().broken());
  const capi::Outcome hello = call(Op::Hello);
  EXPECT_TRUE(hello.ok()) << hello.message;
}

}  // namespace
