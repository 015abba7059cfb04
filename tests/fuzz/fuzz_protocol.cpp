// libFuzzer harness: the MMIO protocol's server side (docs/protocol.md) on arbitrary byte streams, executed on a
// live in-process VP (pevp/capi/machine.h) as `pe-vp serve` executes them. The input is what a client sends: it is
// cut into frames the way the server cuts them (a bad length or version ends the stream, as it ends a connection;
// a frame cut short is a client that left, and nothing of it is executed). Its contract, for every frame:
//   - execute() never throws, and never leaves the VP broken (a deadlock would be a finding);
//   - a reply's status is one of the protocol's, with a message when it is not ok;
//   - a payload refused as malformed (status protocol) executed nothing: simulated time did not move;
//   - an ok reply has exactly its op's reply layout (the client's decoding in capi.cpp accepts it).
// The VP keeps its state from input to input, as a server's does from client to client. Waits are cut to 10 us
// of simulated time and reads to 4 KiB, so one input cannot run for long.
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

// LeakSanitizer finds its roots on the threads' stacks, and the SystemC thread stacks the requests run on (with
// an exception thrown there, ASan's record of the main stack's bounds) hide live objects from it: its reports here
// are libFuzzer's own corpus and dictionary, held by main's frames. Leaks of the server's code are checked by the
// gcc ASan suite instead (remote.python runs pe-vp serve with LeakSanitizer on, through exit).
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }



namespace {

using namespace pevp;
using remote::Op;
using remote::Reader;
using remote::Status;

constexpr const char* kTarget = "fuzz_protocol";

capi::Machine& machine() {
  static capi::Machine* m = [] {
    std::string error;
    capi::Machine* made = capi::Machine::open(platform::preset(isa::Generation::MARIANA), &error);
    if (made == nullptr) fuzz::fail(kTarget, "cannot open the VP: " + error);
    return made;
  }();
  return *m;
}

void put_u64(std::vector<std::uint8_t>& p, std::size_t at, std::uint64_t v) {
  for (unsigned i = 0; i < 8; ++i) p[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Bounds the work of one request without changing what is checked: waits and reads stay valid requests.
void bound(Op op, std::vector<std::uint8_t>& payload) {
  if ((op == Op::WaitIdle || op == Op::WaitIrq) && payload.size() >= 8) {
    std::uint64_t t = 0;
    for (unsigned i = 0; i < 8; ++i) t |= std::uint64_t{payload[i]} << (8 * i);
    put_u64(payload, 0, t % 10000);
  }
  if (op == Op::Read && payload.size() >= 12) {
    const std::uint32_t n = payload[8] | payload[9] << 8;  // at most 64 KiB - 1 of the asked size ...
    payload[8] = static_cast<std::uint8_t>(n & 0xFF);
    payload[9] = static_cast<std::uint8_t>((n >> 8) & 0x0F);  // ... then at most 4 KiB
    payload[10] = payload[11] = 0;
  }
}

std::uint64_t time_ps() {
  capi::clear_stale_stack_poison();  // pevp/capi/stale_stack_poison.h
  const capi::Outcome o = machine().execute(Op::Time, {});
  if (!o.ok() || o.payload.size() != 8) fuzz::fail(kTarget, "the time request failed: " + o.message);
  Reader r(o.payload.data(), o.payload.size(), "time");
  return r.u64("ps");
}

// The reply layout of each op, read as the client reads it; a mismatch throws ProtocolError.
void check_reply(Op op, const std::vector<std::uint8_t>& request, const std::vector<std::uint8_t>& reply) {
  Reader r(reply.data(), reply.size(), std::string(remote::name(op)) + " reply");
  switch (op) {
    case Op::Hello:
      r.u8("version"), r.str("generation"), r.u64("sbuf"), r.u64("psum"), r.u64("apb"), r.u64("iq");
      r.u32("sbuf_pb"), r.u32("psum_pb"), r.u32("partitions"), r.str("version text");
      break;
    case Op::Time:
    case Op::Counter48:
      r.u64("value");
      break;
    case Op::Cycles:
      r.u64("now"), r.u64("busy"), r.u64("first start"), r.u64("last completion"), r.u64("clock GHz bits");
      break;
    case Op::MicroOpLogTake:
    case Op::Diagnostics: {
      const std::string lines = r.lstr("lines");
      if (!lines.empty() && lines.back() != '\n')
        throw remote::ProtocolError(std::string(remote::name(op)) + " reply: a cut line");
      break;
    }
    case Op::Read32:
    case Op::ReadReg:
      r.u32("value");
      break;
    case Op::Read: {
      Reader q(request.data(), request.size(), "read request");
      q.u64("address");
      if (r.rest().size() != q.u32("bytes")) throw remote::ProtocolError("read reply: not the bytes asked for");
      break;
    }
    case Op::WaitIdle:
      r.flag("done"), r.flag("error"), r.flag("timed_out"), r.u64("retired");
      break;
    case Op::WaitIrq:
      r.flag("raised"), r.u64("ps");
      break;
    case Op::ErrorRecord:
      r.flag("valid"), r.u32("index"), r.u8("opcode"), r.u8("field"), r.u16("rule"), r.u64("value");
      r.str("rule"), r.str("description"), r.str("field"), r.str("message");
      break;
    case Op::Expect: {
      r.u64("instruction"), r.u32("micro-ops"), r.u64("issue"), r.u64("start"), r.u64("complete"), r.u64("response");
      r.u32("first partition");
      const std::uint64_t partitions = r.u32("partitions");
      r.u32("offset");
      const std::uint64_t bytes = r.u32("bytes");
      const std::uint8_t element = r.u8("element bytes");
      if (element != 2 && element != 4) throw remote::ProtocolError("expect reply: element bytes neither 2 nor 4");
      if (r.rest().size() != partitions * bytes) throw remote::ProtocolError("expect reply: not the window's bytes");
      break;
    }
    case Op::Assemble:
      if (r.rest().size() % isa::kInstructionBytes != 0) throw remote::ProtocolError("assemble reply: not records");
      break;
    case Op::Stats:
      r.lstr("json");
      break;
    case Op::SaveCheckpoint:
      if (r.rest().size() < 8) throw remote::ProtocolError("save_checkpoint reply: shorter than the magic");
      break;
    // No result. Listed rather than defaulted, so that an op added without its layout here is a -Wswitch warning.
    case Op::Shutdown:
    case Op::Write32:
    case Op::Write:
    case Op::WriteReg:
    case Op::Arm:
    case Op::Submit:
    case Op::ClearDone:
    case Op::ClearError:
    case Op::RestoreCheckpoint:
    case Op::Reset:
    case Op::MicroOpLog:
      break;
  }
  r.end();
}

void execute(Op op, std::vector<std::uint8_t> payload) {
  bound(op, payload);
  const std::uint64_t before = time_ps();
  capi::clear_stale_stack_poison();  // pevp/capi/stale_stack_poison.h
  const capi::Outcome o = machine().execute(op, payload);
  if (machine().broken()) fuzz::fail(kTarget, std::string(remote::name(op)) + " left the VP broken: " + o.message);
  const auto status = static_cast<unsigned>(o.status);
  if ((status > static_cast<unsigned>(Status::Internal) + 1 && o.status != Status::Privilege) ||
      o.status == Status::Connection)
    fuzz::fail(kTarget, "a status the server never sends: " + std::to_string(status));
  if (!o.ok() && o.message.empty()) fuzz::fail(kTarget, std::string(remote::name(op)) + ": an error without a message");
  if (o.status == Status::Protocol && time_ps() != before)
    fuzz::fail(kTarget, std::string(remote::name(op)) + ": a malformed request moved simulated time: " + o.message);
  if (o.ok()) {
    try {
      check_reply(op, payload, o.payload);
    } catch (const remote::ProtocolError& e) {
      fuzz::fail(kTarget, std::string("an ok reply breaks its layout: ") + e.what());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::size_t at = 0;
  while (size - at >= 4) {
    std::uint8_t length_field[4];
    std::memcpy(length_field, data + at, 4);
    std::uint32_t length = 0;
    try {
      length = remote::frame_length(length_field);
    } catch (const remote::ProtocolError&) {
      return 0;  // the server answers and closes the connection
    }
    at += 4;
    if (size - at < length) return 0;  // the client left mid-frame: nothing of it runs
    remote::Frame frame;
    try {
      frame = remote::decode_frame_body(data + at, length);
    } catch (const remote::ProtocolError&) {
      return 0;
    }
    at += length;
    if (const auto op = remote::op_from_byte(frame.kind); op && *op != Op::Shutdown)
      execute(*op, std::move(frame.payload));
  }
  return 0;
}
