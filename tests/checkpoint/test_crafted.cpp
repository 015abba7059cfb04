// Checkpoints made on purpose: well formed (every CRC recomputed after the edit, ckpt_fields.h) but with a field
// whose meaning is impossible -- a simulated time past what the VP supports, a time earlier than the state's own
// times, a tile's port or an in-flight micro-op far in the future, counters that do not add up. Each is refused by
// the restore with a CheckpointError naming the section, the field and the rule, and the target does not change;
// a checkpoint at the supported limit still restores and the next program runs to completion.
//
// The cut (program A of ckpt_scenario.h, stopped on its fault) is taken in a child process (fork, before this
// process elaborates anything), so that the target here is a fresh platform at time 0: a checkpoint whose time was
// moved earlier than its own state still passes the target's time rule, and only the state's own rules can refuse
// it -- as with `pe-vp run --restore` in a new process.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>

#include "ckpt_fields.h"
#include "ckpt_scenario.h"
#include "pevp/capi/machine.h"
#include "pevp/remote/protocol.h"

namespace {

using namespace ckt;
using ckf::Bytes;
namespace arrseq = pevp::arrseq;

constexpr Generation kGen = Generation::MARIANA;

// Program A run to its fault and saved in a child process: this process has elaborated nothing yet.
Bytes cut_from_a_child(const platform::VpConfig& cfg) {
  char path[] = "/tmp/pevp_crafted_XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return {};
  ::close(fd);
  const pid_t pid = ::fork();
  if (pid == 0) {
    platform::VirtualPlatform vp(cfg);
    vp.run([&](platform::Driver& d) {
      run_a(d, cfg.geometry, kGen, cfg.mode);
      platform::save_checkpoint_file(vp.platform(), path);
    });
    std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = -1;
  ::waitpid(pid, &status, 0);
  std::ifstream in(path, std::ios::binary);
  Bytes cut((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ::unlink(path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return cut;
}

// A fresh platform at time 0 and the cut; `body` runs in its host thread.
void with_fresh_target(const std::function<void(platform::Driver&, platform::Platform&, const Bytes&)>& body) {
  const platform::VpConfig cfg = scenario_config(kGen);
  const Bytes cut = cut_from_a_child(cfg);
  ASSERT_FALSE(cut.empty()) << "the child process could not save the cut";
  ASSERT_TRUE(ckf::layout_of(cut)) << "the cut does not walk as the format says";
  platform::VirtualPlatform vp(cfg);
  vp.run([&](platform::Driver& d) { body(d, vp.platform(), cut); });
}

// The restore of `bytes` is refused with a message holding every one of `parts`, and the target's state (its own
// checkpoint, which holds every unit and the time) is what it was.
void expect_refused(platform::Platform& p, const Bytes& bytes, const std::vector<std::string>& parts,
                    const std::string& what) {
  const std::vector<std::uint8_t> before = platform::save_checkpoint(p);
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  try {
    platform::restore_checkpoint(p, bytes, "t.ckpt");
    ADD_FAILURE() << what << ": accepted";
  } catch (const platform::CheckpointError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("checkpoint t.ckpt: ", 0), 0u) << what << ": " << m;
    for (const std::string& part : parts) EXPECT_NE(m.find(part), std::string::npos) << what << ": " << m;
  }
  EXPECT_EQ(sc_core::sc_time_stamp(), t0) << what << ": simulated time moved";
  EXPECT_TRUE(platform::save_checkpoint(p) == before) << what << ": the target changed";
}

// The cut's time and its cycle at the scenario's clock (tensor_engine.clock_ghz).
struct CutTime {
  std::uint64_t ps = 0;
  arrseq::Cycle cycle = 0;
};
CutTime cut_time(const Bytes& cut, const platform::Platform& p) {
  CutTime t;
  t.ps = ckf::field_value(cut, "time.value");  // the resolution is 1 ps
  t.cycle = p.arr_seq.to_cycles(sc_core::sc_time::from_value(t.ps));
  return t;
}

TEST(CheckpointCrafted, ATimePastTheSupportedMaximumIsRefused) {
  with_fresh_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    ASSERT_EQ(ckf::field_value(cut, "time.resolution_fs"), 1000u);
    const std::uint64_t max_ps = platform::kMaxCheckpointTimePs;
    for (std::uint64_t ps : {std::uint64_t{1} << 63, ~std::uint64_t{0}, std::uint64_t{1} << 62, max_ps + 1}) {
      expect_refused(p, ckf::with_field(cut, "time.value", ps),
                     {"section 'time'", "the simulated time " + std::to_string(ps) + " ps",
                      "past the latest this pe-vp supports, " + std::string(platform::kMaxSimulatedText)},
                     "time " + std::to_string(ps));
    }
  });
}

// At the limit itself the checkpoint is valid (a platform idle since the cut), and program B runs to completion
// after it, within its simulated-time bound: nothing overflows or stalls at the end of the supported range.
TEST(CheckpointCrafted, ATimeAtTheSupportedMaximumRestoresAndTheNextProgramCompletes) {
  with_fresh_target([](platform::Driver& d, platform::Platform& p, const Bytes& cut) {
    const std::uint64_t max_ps = platform::kMaxCheckpointTimePs;
    platform::restore_checkpoint(p, ckf::with_field(cut, "time.value", max_ps), "t.ckpt");
    EXPECT_EQ(sc_core::sc_time_stamp().value(), max_ps);
    d.clear_error();
    d.write_field("top", "queue_cfg", "disable_dependency_check", 0);
    d.submit(program_b(kGen));
    const platform::Completion c = d.wait_idle(sc_core::sc_time(1, sc_core::SC_MS));
    EXPECT_TRUE(c.done && !c.error && !c.timed_out);
    EXPECT_LT(sc_core::sc_time_stamp().value(), max_ps + 1000000000u) << "B took more than 1 ms of simulated time";
  });
}

TEST(CheckpointCrafted, ATimeEarlierThanTheStatesOwnTimesIsRefused) {
  with_fresh_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    const CutTime t = cut_time(cut, p);
    const std::uint64_t last_response = ckf::field_value(cut, "arr_seq.last_response");
    ASSERT_GT(last_response, 100u);
    ASSERT_LE(last_response, t.cycle);
    // Half the time: the state's last response, the SEQ's time, the counters all lie after it.
    expect_refused(p, ckf::with_field(cut, "time.value", t.ps / 2),
                   {"section 'arr_seq'", "the last response", "after the checkpoint's time"}, "half the time");
    // Just before the last response: one cycle of the engine clock earlier is already too early.
    const std::uint64_t before_ps = p.arr_seq.to_time(last_response - 1).value();
    expect_refused(p, ckf::with_field(cut, "time.value", before_ps),
                   {"section 'arr_seq'", "the last response at cycle " + std::to_string(last_response),
                    "after the checkpoint's time (cycle " + std::to_string(last_response - 1) + ")"},
                   "a cycle before the last response");
    // The unmodified cut restores here (the positive control of the rules above).
    platform::restore_checkpoint(p, cut, "t.ckpt");
    EXPECT_EQ(sc_core::sc_time_stamp().value(), t.ps);
  });
}

// One field of the state at a time, each with a value its rule forbids: the SEQ's own time after the checkpoint's,
// a tile's stream port at cycle 7e16 (past the supported time; a run after it would never finish), an in-flight
// micro-op past the supported time, responses after the time or out of order, counters that do not add up.
TEST(CheckpointCrafted, EachStateFieldBeyondItsRuleIsRefused) {
  with_fresh_target([](platform::Driver&, platform::Platform& p, const Bytes& cut) {
    const CutTime t = cut_time(cut, p);
    // The last cycle at or before the limit at the preset's 2.4 GHz.
    const arrseq::Cycle limit = static_cast<arrseq::Cycle>(platform::kMaxCheckpointTimePs * 2.4 / 1000);
    const std::optional<ckf::Layout> l = ckf::layout_of(cut);
    ASSERT_TRUE(l);
    ASSERT_TRUE(l->find("arr_seq.tiles[0].stream_free")) << "the cut has a tile state";
    ASSERT_TRUE(l->find("arr_seq.in_flight[0].complete")) << "the cut has an in-flight entry";
    ASSERT_TRUE(l->find("arr_seq.responses[0].response")) << "the cut has a P2F window";
    const std::string after_now = "after the checkpoint's time (cycle " + std::to_string(t.cycle) + ")";
    const std::string past_limit = "past the latest cycle this pe-vp supports (" + std::to_string(limit) + ")";
    const struct {
      const char* field;
      std::uint64_t value;
      std::vector<std::string> parts;
    } cases[] = {
        {"seq.local", t.cycle + 1, {"section 'seq'", "the SEQ's own time", after_now}},
        {"arr_seq.tiles[0].stream_free", 70000000000000000ull, {"section 'arr_seq'", "stream", past_limit}},
        {"arr_seq.tiles[0].wl_free", limit + 1, {"section 'arr_seq'", "weight-load port", past_limit}},
        {"arr_seq.in_flight[0].complete", ~std::uint64_t{0}, {"section 'arr_seq'", "in-flight", past_limit}},
        {"arr_seq.last_response", t.cycle + 1, {"section 'arr_seq'", "the last response", after_now}},
        {"arr_seq.last_start", t.cycle + 1, {"section 'arr_seq'", "the last start"}},
        {"arr_seq.starts[0]", t.cycle + 1, {"section 'arr_seq'", "IFIFO start"}},
        {"arr_seq.responses[0].response", t.cycle + 1, {"section 'arr_seq'", "P2F"}},
        {"arr_seq.groups[0].busy.counted_until", t.cycle + 1, {"section 'arr_seq'", "row group 0", after_now}},
        {"arr_seq.groups[0].origin", t.cycle + 1, {"section 'arr_seq'", "row group 0", "origin"}},
        {"arr_seq.groups[1].last_active", limit + 1, {"section 'arr_seq'", "row group 1", past_limit}},
        {"arr_seq.groups[0].busy.counted", t.cycle + 1, {"section 'arr_seq'", "row group 0", "counted"}},
        {"arr_seq.stats.last_complete", limit + 1, {"section 'arr_seq'", "last completion", past_limit}},
        {"arr_seq.stats.busy_span", 1, {"section 'arr_seq'", "busy span"}},
        {"seq.retired", 1, {"section 'seq'", "retired"}},
        {"seq.next_log_index", 1u << 20, {"section 'seq'", "firmware log index"}},
        {"seq.record.index", 1u << 20, {"section 'seq'", "error record"}},
    };
    for (const auto& c : cases)
      expect_refused(p, ckf::with_field(cut, c.field, c.value), c.parts, std::string(c.field) + " = " + std::to_string(c.value));
  });
}

// A platform that has scheduled nothing: what the first micro-op will not overwrite -- the last completion, the spans,
// an activity counter's closed last interval -- is held to the time as well (found by fuzz_checkpoint: the first
// start of such a state set to 2^64 - 1 was accepted).
TEST(CheckpointCrafted, AFreshStatesLeftoverTimesAreHeldToTheTime) {
  with_fresh_target([](platform::Driver&, platform::Platform& p, const Bytes&) {
    const Bytes fresh = platform::save_checkpoint(p);
    ASSERT_EQ(ckf::field_value(fresh, "arr_seq.stats.any"), 0u);
    const struct {
      const char* field;
      std::uint64_t value;
      std::vector<std::string> parts;
    } cases[] = {
        {"arr_seq.stats.first_start", ~std::uint64_t{0},
         {"section 'arr_seq'", "no micro-op scheduled, but the first start", "after the checkpoint's time (cycle 0)"}},
        {"arr_seq.stats.last_complete", 1, {"section 'arr_seq'", "no micro-op scheduled, but the last completion"}},
        {"arr_seq.period_end", 1, {"section 'arr_seq'", "busy period's end"}},
        {"arr_seq.closed_span", 5, {"section 'arr_seq'", "no micro-op scheduled, but a busy span of 0 cycles (5 closed)"}},
        {"arr_seq.groups[2].matmul.open_end", 7, {"section 'arr_seq'", "row group 2's matmul counter", "counted and closed"}},
    };
    for (const auto& c : cases)
      expect_refused(p, ckf::with_field(fresh, c.field, c.value), c.parts, std::string(c.field) + " = " + std::to_string(c.value));
    // The fresh checkpoint itself restores.
    platform::restore_checkpoint(p, fresh, "t.ckpt");
  });
}

// The server's path (`pe-vp serve` and the C API execute requests on capi::Machine): a crafted checkpoint sent in a
// restore_checkpoint request is refused with status argument and the rule, nothing moves, and the VP goes on
// serving: the real checkpoint restores after it and program B finishes within its bound.
TEST(CheckpointCrafted, TheServerRefusesACraftedCheckpointAndServesOn) {
  const platform::VpConfig cfg = scenario_config(kGen);
  const Bytes cut = cut_from_a_child(cfg);
  ASSERT_FALSE(cut.empty());
  std::string error;
  pevp::capi::Machine* m = pevp::capi::Machine::open(cfg, &error);
  ASSERT_NE(m, nullptr) << error;
  using pevp::remote::Op;
  using pevp::remote::Status;
  const auto time_ps = [&] { return ckf::get_le(m->execute(Op::Time, {}).payload, 0, 8); };
  for (const auto& [field, value] : {std::pair{"arr_seq.tiles[0].stream_free", std::uint64_t{70000000000000000}},
                                     std::pair{"time.value", std::uint64_t{1} << 63},
                                     std::pair{"seq.local", ckf::field_value(cut, "seq.local") * 4}}) {
    const pevp::capi::Outcome o = m->execute(Op::RestoreCheckpoint, ckf::with_field(cut, field, value));
    EXPECT_EQ(o.status, Status::Argument) << field << ": " << o.message;
    EXPECT_EQ(o.message.rfind("checkpoint (sent by the client): section '", 0), 0u) << field << ": " << o.message;
    EXPECT_EQ(time_ps(), 0u) << field;
  }
  ASSERT_TRUE(m->execute(Op::RestoreCheckpoint, cut).ok());
  EXPECT_EQ(time_ps(), ckf::field_value(cut, "time.value"));
  ASSERT_TRUE(m->execute(Op::ClearError, {}).ok());
  std::vector<std::uint8_t> program;
  for (const isa::RawInstruction& r : program_b(kGen)) program.insert(program.end(), r.begin(), r.end());
  ASSERT_TRUE(m->execute(Op::Submit, program).ok());
  std::vector<std::uint8_t> timeout(8);
  ckf::put_le(timeout, 0, 1000000, 8);  // 1 ms
  const pevp::capi::Outcome waited = m->execute(Op::WaitIdle, timeout);
  ASSERT_TRUE(waited.ok() && waited.payload.size() == 11) << waited.message;
  EXPECT_EQ(waited.payload[0], 1) << "done";
  EXPECT_EQ(waited.payload[2], 0) << "timed out";
}

}  // namespace
