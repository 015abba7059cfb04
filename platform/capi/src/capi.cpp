// The C driver API (pevp/pevp.h). Every call becomes one request of the MMIO protocol (pevp/remote/protocol.h):
// executed on the in-process Machine (pevp_open), or sent to a `pe-vp serve` process (pevp_connect), whose server
// executes it on its own Machine. So both ways share one implementation of every operation, its checks and its
// messages.
#include "pevp/pevp.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pevp/capi/machine.h"
#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/generation.h"
#include "pevp/platform/config.h"
#include "pevp/remote/credential.h"
#include "pevp/remote/socket.h"

// libsystemc's main calls sc_main; a C program has its own main, so this one is never called. Weak: a C++ program
// that links the C API and has an sc_main keeps its own.
__attribute__((weak)) int sc_main(int, char*[]) { return 0; }

namespace {

using namespace pevp;
using capi::Outcome;
using remote::Op;
using remote::Reader;
using remote::Status;
using remote::Writer;

static_assert(static_cast<int>(Status::Ok) == PEVP_OK && static_cast<int>(Status::Argument) == PEVP_ERR_ARGUMENT &&
                  static_cast<int>(Status::State) == PEVP_ERR_STATE && static_cast<int>(Status::Bus) == PEVP_ERR_BUS &&
                  static_cast<int>(Status::Assembly) == PEVP_ERR_ASSEMBLY &&
                  static_cast<int>(Status::Timeout) == PEVP_ERR_TIMEOUT &&
                  static_cast<int>(Status::Internal) == PEVP_ERR_INTERNAL &&
                  static_cast<int>(Status::Protocol) == PEVP_ERR_PROTOCOL &&
                  static_cast<int>(Status::Connection) == PEVP_ERR_CONNECTION &&
                  static_cast<int>(Status::Auth) == PEVP_ERR_AUTH &&
                  static_cast<int>(Status::Hazard) == PEVP_ERR_HAZARD &&
                  static_cast<int>(Status::Privilege) == PEVP_ERR_PRIVILEGE,
              "the protocol's status numbers are pevp_status's");

// pevp.h's preset bases are the address map's (pevp/platform/address_map.h), which the presets use.
constexpr platform::AddressMap kPresetMap{};
static_assert(kPresetMap.sbuf == PEVP_PRESET_SBUF_BASE && kPresetMap.psum == PEVP_PRESET_PSUM_BASE &&
                  kPresetMap.apb == PEVP_PRESET_APB_BASE && kPresetMap.iq == PEVP_PRESET_IQ_BASE &&
                  kPresetMap.top() == PEVP_PRESET_TOP_BASE && kPresetMap.cluster() == PEVP_PRESET_CLUSTER_BASE &&
                  kPresetMap.protect() == PEVP_PRESET_PROTECT_BASE && kPresetMap.vp_seq() == PEVP_PRESET_VP_SEQ_BASE,
              "pevp.h's PEVP_PRESET_*_BASE are the preset address map's");

// Where a handle's requests go.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Outcome call(Op op, const std::vector<std::uint8_t>& payload) = 0;
};

class LocalBackend : public Backend {
 public:
  explicit LocalBackend(capi::Machine& m) : machine_(m) {}
  Outcome call(Op op, const std::vector<std::uint8_t>& payload) override {
    Outcome o = machine_.execute(op, payload);
    // As a server's error frame gives it (remote::error_payload), so that a message is the same either way.
    if (!o.ok()) o.message = remote::printable_message(o.message);
    return o;
  }

 private:
  capi::Machine& machine_;
};

class RemoteBackend : public Backend {
 public:
  RemoteBackend(remote::Connection c, std::string endpoint)
      : connection_(std::move(c)), endpoint_(std::move(endpoint)) {}
  Outcome call(Op op, const std::vector<std::uint8_t>& payload) override {
    if (closed_) return {Status::Connection, "the connection to " + endpoint_ + " is closed (" + why_closed_ + ")", {}};
    try {
      // A server that refused this client (busy) or dropped it may have closed before the request arrived: its
      // last frame, which says why, is still worth reading when the send fails.
      std::string send_failure;
      try {
        connection_.send(static_cast<std::uint8_t>(op), payload);
      } catch (const remote::ConnectionError& e) {
        send_failure = e.what();
      }
      std::optional<remote::Frame> reply;
      try {
        reply = connection_.receive(remote::kForever, send_failure.empty() ? remote::kForever : remote::Millis(1000));
      } catch (const remote::ConnectionError&) {
        if (send_failure.empty()) throw;
      }
      if (!reply)
        throw remote::ConnectionError(send_failure.empty() ? "the server closed the connection" : send_failure);
      if (reply->kind == static_cast<std::uint8_t>(remote::Reply::Ok)) return {Status::Ok, "", reply->payload};
      if (reply->kind != static_cast<std::uint8_t>(remote::Reply::Error))
        throw remote::ProtocolError("a reply of kind " + std::to_string(reply->kind) + ", neither ok nor error");
      Reader r(reply->payload.data(), reply->payload.size(), "error reply");
      const std::uint8_t status = r.u8("status");
      std::string message = r.str("message");
      if (status == 0 || status > static_cast<std::uint8_t>(Status::Privilege))
        throw remote::ProtocolError("an error reply with status " + std::to_string(status));
      return {static_cast<Status>(status), std::move(message), {}};
    } catch (const remote::ConnectionError& e) {
      return close(Status::Connection, e.what());
    } catch (const remote::ProtocolError& e) {
      // After a reply that breaks the protocol the stream cannot be trusted.
      return close(Status::Protocol, e.what());
    }
  }

 private:
  Outcome close(Status s, const std::string& why) {
    closed_ = true;
    why_closed_ = why;
    return {s, endpoint_ + ": " + why, {}};
  }
  remote::Connection connection_;
  std::string endpoint_;
  bool closed_ = false;
  std::string why_closed_;
};

// What the VP said of itself (the hello reply).
struct Identity {
  isa::Generation gen = isa::Generation::MARIANA;
  pevp_map map{};
};

}  // namespace

struct pevp_vp {
  std::unique_ptr<Backend> backend;
  Identity identity;
  std::string error;
  std::string micro_op_lines;  // taken from the VP, not yet handed to the caller
  std::string diagnostics;     // the VP's warnings taken, not yet handed to the caller
  std::vector<std::uint8_t> expected_window;  // the last pevp_expect's PSUM window (pevp_expect_data)
};

namespace {

thread_local std::string t_open_error;

// A failed open: the handle stays null and pevp_open_error() says why.
pevp_status open_failed(pevp_status s, const std::string& why) {
  t_open_error = why;
  return s;
}

pevp_status fail(pevp_vp* vp, pevp_status s, const std::string& message) {
  if (vp) vp->error = message;
  return s;
}

// One request; on success the result payload is in `*result` (when given).
pevp_status call(pevp_vp* vp, Op op, const std::vector<std::uint8_t>& payload,
                 std::vector<std::uint8_t>* result = nullptr) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  vp->error.clear();
  Outcome o = vp->backend->call(op, payload);
  if (!o.ok()) return fail(vp, static_cast<pevp_status>(o.status), o.message);
  if (result) *result = std::move(o.payload);
  return PEVP_OK;
}

// Reads a result payload; a reply shorter or longer than its op's layout is a protocol error.
template <class F>
pevp_status decode(pevp_vp* vp, Op op, const std::vector<std::uint8_t>& payload, F&& read) {
  try {
    Reader r(payload.data(), payload.size(), std::string(remote::name(op)) + " reply");
    read(r);
    r.end();
    return PEVP_OK;
  } catch (const remote::ProtocolError& e) {
    return fail(vp, PEVP_ERR_PROTOCOL, e.what());
  }
}

template <class T>
pevp_status need(pevp_vp* vp, const T* p, const char* what) {
  if (p != nullptr) return PEVP_OK;
  return fail(vp, PEVP_ERR_ARGUMENT, std::string(what) + " is a null pointer");
}

// A server that predates an op added to the protocol answers "unknown op" (docs/protocol.md): say so in its terms.
pevp_status explain_unknown_op(pevp_vp* vp, pevp_status s, const char* what) {
  if (s == PEVP_ERR_PROTOCOL && vp->error.rfind("unknown op", 0) == 0)
    vp->error = std::string("the VP does not know ") + what + " (" + vp->error + "): a pe-vp older than this client";
  return s;
}

void copy_text(char* dst, std::size_t size, const std::string& src) { std::snprintf(dst, size, "%s", src.c_str()); }

// The hello exchange: what the VP is, and that it speaks this protocol.
pevp_status introduce(pevp_vp* vp) {
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::Hello, {}, &reply); s != PEVP_OK) return s;
  std::string gen_name;
  const pevp_status s = decode(vp, Op::Hello, reply, [&](Reader& r) {
    const std::uint8_t version = r.u8("version");
    if (version != remote::kProtocolVersion)
      throw remote::ProtocolError("the VP speaks protocol version " + std::to_string(version) + ", this client " +
                                  std::to_string(remote::kProtocolVersion));
    gen_name = r.str("generation");
    pevp_map& m = vp->identity.map;
    m.sbuf = r.u64("sbuf");
    m.psum = r.u64("psum");
    m.apb = r.u64("apb");
    m.iq = r.u64("iq");
    m.sbuf_partition_bytes = r.u32("sbuf_partition_bytes");
    m.psum_partition_bytes = r.u32("psum_partition_bytes");
    m.partitions = r.u32("partitions");
    r.str("pe-vp version");
    // The faces lie at fixed offsets in the apb window (the configuration refuses others, D-PLATFORM-MAP).
    platform::AddressMap faces;
    faces.apb = m.apb;
    m.top = faces.top();
    m.cluster = faces.cluster();
    m.protect = faces.protect();
    m.vp_seq = faces.vp_seq();
  });
  if (s != PEVP_OK) return s;
  const auto gen = isa::parse_generation(gen_name);
  if (!gen) return fail(vp, PEVP_ERR_PROTOCOL, "the VP names an unknown generation '" + gen_name + "'");
  vp->identity.gen = *gen;
  return PEVP_OK;
}

// TCP's credential as a client presents it: the token and the file it was read from (for messages).
struct ClientToken {
  std::string token;
  std::string file;
};

// The token presented in the connection's first frame (an auth frame).
pevp_status authenticate(pevp_vp* vp, const ClientToken& t) {
  const pevp_status s = call(vp, static_cast<Op>(remote::kAuthOp), remote::auth_payload(t.token));
  if (s == PEVP_ERR_PROTOCOL && vp->error.rfind("unknown op", 0) == 0)
    vp->error = "the VP does not know the auth request (" + vp->error + "): a pe-vp older than this client; "
                "connect without a token (unset " + remote::kTokenFileVariable + ")";
  if (s != PEVP_OK) vp->error += " [token from " + t.file + "]";
  return s;
}

// A handle over `backend` after the hello (after presenting `token` when there is one); on failure *out stays
// null and `error` has the reason.
pevp_status make_handle(std::unique_ptr<Backend> backend, pevp_vp** out, std::string* error,
                        const std::optional<ClientToken>& token = std::nullopt) {
  auto handle = std::make_unique<pevp_vp>();
  handle->backend = std::move(backend);
  pevp_status s = token ? authenticate(handle.get(), *token) : PEVP_OK;
  if (s == PEVP_OK) s = introduce(handle.get());
  if (s != PEVP_OK) {
    if (error) *error = handle->error;
    return s;
  }
  *out = handle.release();
  return PEVP_OK;
}

Writer with_name(std::string_view face, std::string_view name) {
  Writer w;
  w.str(face).str(name);
  return w;
}

}  // namespace

extern "C" {

pevp_status pevp_open(const char* generation, pevp_vp** vp) { return pevp_open_config(generation, nullptr, 0, vp); }

pevp_status pevp_open_config(const char* generation, const char* const* settings, size_t count, pevp_vp** vp) {
  t_open_error.clear();
  if (vp == nullptr) return open_failed(PEVP_ERR_ARGUMENT, "vp is a null pointer");
  *vp = nullptr;
  if (generation == nullptr) return open_failed(PEVP_ERR_ARGUMENT, "generation is a null pointer");
  if (settings == nullptr && count > 0) return open_failed(PEVP_ERR_ARGUMENT, "settings is a null pointer");
  const auto gen = isa::parse_generation(generation);
  if (!gen)
    return open_failed(PEVP_ERR_ARGUMENT, std::string("unknown generation '") + generation +
                                              "' (CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK)");
  if (capi::Machine::exists())
    return open_failed(PEVP_ERR_STATE, "a VP exists in this process already (SystemC runs one per process)");
  platform::VpConfig config;
  try {
    config = platform::preset(*gen);
    std::vector<std::string> overrides;
    for (std::size_t i = 0; i < count; ++i) {
      if (settings[i] == nullptr)
        return open_failed(PEVP_ERR_ARGUMENT, "settings[" + std::to_string(i) + "] is a null pointer");
      overrides.emplace_back(settings[i]);
    }
    platform::apply_overrides(config, overrides);
  } catch (const std::exception& e) {
    return open_failed(PEVP_ERR_ARGUMENT, e.what());
  }
  std::string error;
  capi::Machine* m = capi::Machine::open(config, &error);
  if (m == nullptr) return open_failed(PEVP_ERR_INTERNAL, error);
  const pevp_status s = make_handle(std::make_unique<LocalBackend>(*m), vp, &error);
  return s == PEVP_OK ? s : open_failed(s, error);
}

pevp_status pevp_connect(const char* endpoint, pevp_vp** vp) { return pevp_connect_token(endpoint, nullptr, vp); }

pevp_status pevp_connect_token(const char* endpoint, const char* token_file, pevp_vp** vp) {
  t_open_error.clear();
  if (vp == nullptr) return open_failed(PEVP_ERR_ARGUMENT, "vp is a null pointer");
  *vp = nullptr;
  if (endpoint == nullptr) return open_failed(PEVP_ERR_ARGUMENT, "endpoint is a null pointer");
  try {
    const remote::Endpoint e = remote::parse_endpoint(endpoint);
    // The token is read before connecting: a file that is not there is the caller's mistake, whatever the server.
    std::optional<ClientToken> token;
    if (const auto path = remote::client_token_file(e, token_file ? token_file : ""))
      token = ClientToken{remote::read_token_file(*path), *path};
    std::string error;
    const pevp_status s =
        make_handle(std::make_unique<RemoteBackend>(remote::connect_to(e), e.describe()), vp, &error, token);
    if (s == PEVP_ERR_AUTH && !token)
      error += std::string(" (this client has no token: ") + remote::kTokenFileVariable +
               " is unset and the default token file is not there)";
    return s == PEVP_OK ? s : open_failed(s, error);
  } catch (const std::invalid_argument& e) {
    return open_failed(PEVP_ERR_ARGUMENT, e.what());
  } catch (const remote::ConnectionError& e) {
    return open_failed(PEVP_ERR_CONNECTION, e.what());
  } catch (const std::exception& e) {
    return open_failed(PEVP_ERR_INTERNAL, e.what());
  }
}

const char* pevp_open_error(void) { return t_open_error.c_str(); }

void pevp_close(pevp_vp* vp) { delete vp; }

const char* pevp_last_error(const pevp_vp* vp) { return vp ? vp->error.c_str() : "no VP (a null handle)"; }

pevp_status pevp_get_map(pevp_vp* vp, pevp_map* map) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, map, "map"); s != PEVP_OK) return s;
  *map = vp->identity.map;
  return PEVP_OK;
}

pevp_status pevp_time_ps(pevp_vp* vp, uint64_t* ps) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, ps, "ps"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::Time, {}, &reply); s != PEVP_OK) return s;
  return decode(vp, Op::Time, reply, [&](Reader& r) { *ps = r.u64("ps"); });
}

pevp_status pevp_read_cycles(pevp_vp* vp, pevp_cycles* cycles) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, cycles, "cycles"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::Cycles, {}, &reply); s != PEVP_OK)
    return explain_unknown_op(vp, s, "the cycles request");
  pevp_cycles c{};
  const pevp_status s = decode(vp, Op::Cycles, reply, [&](Reader& r) {
    c.now = r.u64("now");
    c.busy = r.u64("busy");
    c.first_start = r.u64("first_start");
    c.last_complete = r.u64("last_complete");
    const std::uint64_t bits = r.u64("clock_ghz");
    std::memcpy(&c.clock_ghz, &bits, sizeof bits);
  });
  if (s == PEVP_OK) *cycles = c;
  return s;
}

pevp_status pevp_read32(pevp_vp* vp, uint64_t address, int privileged, uint32_t* value) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, value, "value"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::Read32, Writer().u64(address).u8(privileged != 0).take(), &reply); s != PEVP_OK)
    return s;
  return decode(vp, Op::Read32, reply, [&](Reader& r) { *value = r.u32("value"); });
}

pevp_status pevp_write32(pevp_vp* vp, uint64_t address, int privileged, uint32_t value) {
  return call(vp, Op::Write32, Writer().u64(address).u8(privileged != 0).u32(value).take());
}

pevp_status pevp_read(pevp_vp* vp, uint64_t address, void* data, size_t bytes) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, data, "data"); s != PEVP_OK) return s;
  auto* out = static_cast<std::uint8_t*>(data);
  // A transfer larger than one frame carries goes as several, in address order (an empty one as one request, so
  // the VP still judges the address).
  std::size_t done = 0;
  do {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(bytes - done, remote::kMaxTransferBytes));
    std::vector<std::uint8_t> reply;
    if (pevp_status s = call(vp, Op::Read, Writer().u64(address + done).u32(n).take(), &reply); s != PEVP_OK) return s;
    if (reply.size() != n)
      return fail(vp, PEVP_ERR_PROTOCOL, "read reply: " + std::to_string(reply.size()) + " bytes, " +
                                             std::to_string(n) + " asked for");
    std::copy(reply.begin(), reply.end(), out + done);
    done += n;
  } while (done < bytes);
  return PEVP_OK;
}

pevp_status pevp_write(pevp_vp* vp, uint64_t address, const void* data, size_t bytes) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, data, "data"); s != PEVP_OK) return s;
  const auto* in = static_cast<const std::uint8_t*>(data);
  std::size_t done = 0;
  do {  // in frames, as pevp_read
    const std::size_t n = std::min<std::size_t>(bytes - done, remote::kMaxTransferBytes);
    if (pevp_status s = call(vp, Op::Write, Writer().u64(address + done).bytes(in + done, n).take()); s != PEVP_OK)
      return s;
    done += n;
  } while (done < bytes);
  return PEVP_OK;
}

pevp_status pevp_read_reg(pevp_vp* vp, const char* face, const char* name, uint32_t* value) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, face, "face"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, name, "name"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, value, "value"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  try {
    if (pevp_status s = call(vp, Op::ReadReg, with_name(face, name).take(), &reply); s != PEVP_OK) return s;
  } catch (const remote::ProtocolError& e) {  // a name too long for the protocol
    return fail(vp, PEVP_ERR_ARGUMENT, e.what());
  }
  return decode(vp, Op::ReadReg, reply, [&](Reader& r) { *value = r.u32("value"); });
}

pevp_status pevp_write_reg(pevp_vp* vp, const char* face, const char* name, uint32_t value) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, face, "face"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, name, "name"); s != PEVP_OK) return s;
  try {
    return call(vp, Op::WriteReg, with_name(face, name).u32(value).take());
  } catch (const remote::ProtocolError& e) {
    return fail(vp, PEVP_ERR_ARGUMENT, e.what());
  }
}

pevp_status pevp_read_counter48(pevp_vp* vp, const char* face, const char* lsb_name, uint64_t* value) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, face, "face"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, lsb_name, "lsb_name"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, value, "value"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  try {
    if (pevp_status s = call(vp, Op::Counter48, with_name(face, lsb_name).take(), &reply); s != PEVP_OK) return s;
  } catch (const remote::ProtocolError& e) {
    return fail(vp, PEVP_ERR_ARGUMENT, e.what());
  }
  return decode(vp, Op::Counter48, reply, [&](Reader& r) { *value = r.u64("value"); });
}

pevp_status pevp_read_psum(pevp_vp* vp, uint32_t partition, uint32_t offset, void* data, size_t bytes) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, data, "data"); s != PEVP_OK) return s;
  const pevp_map& m = vp->identity.map;
  if (partition >= m.partitions)
    return fail(vp, PEVP_ERR_ARGUMENT, "PSUM partition " + std::to_string(partition) + ": the VP has " +
                                           std::to_string(m.partitions) + " (0.." + std::to_string(m.partitions - 1) +
                                           ")");
  if (offset > m.psum_partition_bytes || bytes > m.psum_partition_bytes - offset)
    return fail(vp, PEVP_ERR_ARGUMENT, "PSUM partition " + std::to_string(partition) + " bytes " +
                                           std::to_string(offset) + " + " + std::to_string(bytes) +
                                           ": past the partition's " + std::to_string(m.psum_partition_bytes));
  return pevp_read(vp, m.psum + std::uint64_t{partition} * m.psum_partition_bytes + offset, data, bytes);
}

pevp_status pevp_arm(pevp_vp* vp, int serialized, int single_entry, int reg_immediate) {
  return call(vp, Op::Arm, Writer().u8(serialized != 0).u8(single_entry != 0).u8(reg_immediate != 0).take());
}

pevp_status pevp_submit(pevp_vp* vp, const void* records, size_t count) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, records, "records"); s != PEVP_OK) return s;
  const auto* bytes = static_cast<const std::uint8_t*>(records);
  constexpr std::size_t kRecordsPerFrame = remote::kMaxTransferBytes / isa::kInstructionBytes;
  std::size_t done = 0;
  do {
    const std::size_t n = std::min(count - done, kRecordsPerFrame);
    const std::vector<std::uint8_t> payload(bytes + done * isa::kInstructionBytes,
                                            bytes + (done + n) * isa::kInstructionBytes);
    if (pevp_status s = call(vp, Op::Submit, payload); s != PEVP_OK) return s;
    done += n;
  } while (done < count);
  return PEVP_OK;
}

pevp_status pevp_wait_idle(pevp_vp* vp, uint64_t timeout_ns, pevp_completion* completion) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::WaitIdle, Writer().u64(timeout_ns).take(), &reply); s != PEVP_OK) return s;
  pevp_completion c{};
  const pevp_status s = decode(vp, Op::WaitIdle, reply, [&](Reader& r) {
    c.done = r.flag("done");
    c.error = r.flag("error");
    c.timed_out = r.flag("timed_out");
    c.retired = r.u64("retired");
  });
  if (s != PEVP_OK) return s;
  if (completion) *completion = c;
  if (c.timed_out) return fail(vp, PEVP_ERR_TIMEOUT, "the SEQ did not settle in " + std::to_string(timeout_ns) + " ns");
  return PEVP_OK;
}

pevp_status pevp_wait_irq(pevp_vp* vp, uint64_t timeout_ns, int* raised) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, raised, "raised"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::WaitIrq, Writer().u64(timeout_ns).take(), &reply); s != PEVP_OK) return s;
  return decode(vp, Op::WaitIrq, reply, [&](Reader& r) {
    *raised = r.flag("raised");
    r.u64("ps");
  });
}

pevp_status pevp_clear_done(pevp_vp* vp) { return call(vp, Op::ClearDone, {}); }

pevp_status pevp_error_record(pevp_vp* vp, pevp_error_info* info) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, info, "info"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::ErrorRecord, {}, &reply); s != PEVP_OK) return s;
  pevp_error_info e{};
  const pevp_status s = decode(vp, Op::ErrorRecord, reply, [&](Reader& r) {
    e.valid = r.flag("valid");
    e.index = r.u32("index");
    e.opcode = r.u8("opcode");
    e.field_offset = r.u8("field_offset");
    e.rule_number = r.u16("rule_number");
    e.value = static_cast<int64_t>(r.u64("value"));
    copy_text(e.rule, sizeof e.rule, r.str("rule"));
    copy_text(e.description, sizeof e.description, r.str("description"));
    // A server that predates the field and the sentence ends its reply here (docs/protocol.md).
    if (r.left() == 0) return;
    copy_text(e.field, sizeof e.field, r.str("field"));
    copy_text(e.message, sizeof e.message, r.str("message"));
  });
  if (s == PEVP_OK) *info = e;
  return s;
}

pevp_status pevp_clear_error(pevp_vp* vp) { return call(vp, Op::ClearError, {}); }

pevp_status pevp_assemble(pevp_vp* vp, const char* source, void* records, size_t max_records, size_t* count) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, source, "source"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, count, "count"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  try {
    if (pevp_status s = call(vp, Op::Assemble, Writer().lstr(source).take(), &reply); s != PEVP_OK) return s;
  } catch (const remote::ProtocolError& e) {  // a source beyond the transfer limit
    return fail(vp, PEVP_ERR_ARGUMENT, e.what());
  }
  if (reply.size() % isa::kInstructionBytes != 0)
    return fail(vp, PEVP_ERR_PROTOCOL, "assemble reply: " + std::to_string(reply.size()) + " bytes, not whole records");
  *count = reply.size() / isa::kInstructionBytes;
  if (*count > max_records)
    return fail(vp, PEVP_ERR_ARGUMENT,
                "the text has " + std::to_string(*count) + " records, room for " + std::to_string(max_records));
  if (*count > 0 && records == nullptr) return fail(vp, PEVP_ERR_ARGUMENT, "records is a null pointer");
  if (!reply.empty()) std::memcpy(records, reply.data(), reply.size());
  return PEVP_OK;
}

pevp_status pevp_save_checkpoint(pevp_vp* vp, const char* path) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, path, "path"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> bytes;
  if (pevp_status s = call(vp, Op::SaveCheckpoint, {}, &bytes); s != PEVP_OK) return s;
  std::string error;
  if (!files::write_file(path, bytes.data(), bytes.size(), &error))
    return fail(vp, PEVP_ERR_ARGUMENT, "checkpoint " + error);
  return PEVP_OK;
}

pevp_status pevp_restore_checkpoint(pevp_vp* vp, const char* path) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, path, "path"); s != PEVP_OK) return s;
  std::string error;
  // Read no further than a frame carries (a FIFO or /dev/zero would otherwise grow without bound).
  constexpr files::InputKind kFrameCheckpoint{"a checkpoint sent in one frame", remote::kMaxTransferBytes};
  const std::optional<std::string> text = files::read_file(path, &error, kFrameCheckpoint);
  if (!text) return fail(vp, PEVP_ERR_ARGUMENT, "checkpoint " + error);
  const pevp_status s = call(vp, Op::RestoreCheckpoint, std::vector<std::uint8_t>(text->begin(), text->end()));
  // The VP names the bytes "(sent by the client)": name the file instead.
  if (s != PEVP_OK) {
    const std::string sent = "(sent by the client)";
    if (const auto at = vp->error.find(sent); at != std::string::npos) vp->error.replace(at, sent.size(), path);
  }
  return s;
}

// ---- the hard reset ------------------------------------------------------------------------------------------------

pevp_status pevp_reset(pevp_vp* vp) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  return call(vp, Op::Reset, {});
}

// --------------------------------------------------------------------------------------------------------------------

pevp_status pevp_expect(pevp_vp* vp, const void* instr64, void* data, size_t capacity, pevp_expectation* out) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, instr64, "instr64"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, out, "out"); s != PEVP_OK) return s;
  if (data == nullptr && capacity != 0) return fail(vp, PEVP_ERR_ARGUMENT, "data is NULL with a capacity of " +
                                                                               std::to_string(capacity) + " bytes");
  const auto* bytes = static_cast<const std::uint8_t*>(instr64);
  vp->expected_window.clear();
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::Expect, std::vector<std::uint8_t>(bytes, bytes + isa::kInstructionBytes), &reply);
      s != PEVP_OK)
    return explain_unknown_op(vp, s, "the expect request");
  pevp_expectation e{};
  std::vector<std::uint8_t> window;
  const pevp_status s = decode(vp, Op::Expect, reply, [&](Reader& r) {
    e.instruction = r.u64("instruction");
    e.micro_ops = r.u32("micro_ops");
    e.issue_cycle = r.u64("issue");
    e.start_cycle = r.u64("start");
    e.complete_cycle = r.u64("complete");
    e.response_cycle = r.u64("response");
    e.first_partition = r.u32("first_partition");
    e.partitions = r.u32("partitions");
    e.offset = r.u32("offset");
    e.bytes = r.u32("bytes");
    e.element_bytes = r.u8("element_bytes");
    window = r.rest();
    if (window.size() != std::uint64_t{e.partitions} * e.bytes)
      throw remote::ProtocolError("expect reply: " + std::to_string(window.size()) + " bytes of window data, not " +
                                  std::to_string(e.partitions) + " x " + std::to_string(e.bytes));
  });
  if (s != PEVP_OK) return s;
  e.data_bytes = window.size();
  *out = e;
  vp->expected_window = std::move(window);
  return pevp_expect_data(vp, data, capacity);
}

pevp_status pevp_expect_data(pevp_vp* vp, void* data, size_t capacity) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  const std::vector<std::uint8_t>& w = vp->expected_window;
  vp->error.clear();
  if (w.empty()) return PEVP_OK;
  if (data == nullptr || capacity < w.size())
    return fail(vp, PEVP_ERR_ARGUMENT, "the PSUM window takes " + std::to_string(w.size()) + " bytes, the buffer has " +
                                           std::to_string(data == nullptr ? 0 : capacity) +
                                           " (the instruction ran: pevp_expect_data takes the window)");
  std::memcpy(data, w.data(), w.size());
  return PEVP_OK;
}

pevp_status pevp_stats_json(pevp_vp* vp, char* buffer, size_t size, size_t* length) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, length, "length"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::Stats, {}, &reply); s != PEVP_OK) return s;
  std::string json;
  if (pevp_status s = decode(vp, Op::Stats, reply, [&](Reader& r) { json = r.lstr("json"); }); s != PEVP_OK) return s;
  *length = json.size();
  if (buffer == nullptr || size <= json.size())
    return fail(vp, PEVP_ERR_ARGUMENT, "the statistics take " + std::to_string(json.size() + 1) +
                                           " bytes with their NUL, the buffer has " + std::to_string(size));
  std::memcpy(buffer, json.c_str(), json.size() + 1);
  return PEVP_OK;
}

namespace {

// The VP's kept micro-op lines appended to the handle's (a frame carries at most kMaxTransferBytes: take until
// a reply comes back empty).
pevp_status take_micro_op_lines(pevp_vp* vp) {
  for (;;) {
    std::vector<std::uint8_t> reply;
    if (pevp_status s = call(vp, Op::MicroOpLogTake, {}, &reply); s != PEVP_OK) return s;
    std::string lines;
    if (pevp_status s = decode(vp, Op::MicroOpLogTake, reply, [&](Reader& r) { lines = r.lstr("lines"); });
        s != PEVP_OK)
      return s;
    if (lines.empty()) return PEVP_OK;
    vp->micro_op_lines += lines;
  }
}

}  // namespace

pevp_status pevp_micro_op_log(pevp_vp* vp, int on) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  return explain_unknown_op(vp, call(vp, Op::MicroOpLog, Writer().u8(on != 0).take()), "the micro-op log");
}

pevp_status pevp_micro_op_log_read(pevp_vp* vp, char* buffer, size_t size, size_t* length) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, length, "length"); s != PEVP_OK) return s;
  if (pevp_status s = take_micro_op_lines(vp); s != PEVP_OK) return explain_unknown_op(vp, s, "the micro-op log");
  const std::string& lines = vp->micro_op_lines;
  *length = lines.size();
  if (buffer == nullptr || size <= lines.size())
    return fail(vp, PEVP_ERR_ARGUMENT, "the micro-op lines take " + std::to_string(lines.size() + 1) +
                                           " bytes with their NUL, the buffer has " + std::to_string(size) +
                                           " (they stay for the next call)");
  std::memcpy(buffer, lines.c_str(), lines.size() + 1);
  vp->micro_op_lines.clear();
  return PEVP_OK;
}

pevp_status pevp_micro_op_log_write(pevp_vp* vp, const char* path) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, path, "path"); s != PEVP_OK) return s;
  if (pevp_status s = take_micro_op_lines(vp); s != PEVP_OK) return explain_unknown_op(vp, s, "the micro-op log");
  std::string error;
  if (!files::write_file(path, vp->micro_op_lines.data(), vp->micro_op_lines.size(), &error))
    return fail(vp, PEVP_ERR_ARGUMENT, "micro-op log " + error + " (the lines stay for the next call)");
  vp->micro_op_lines.clear();
  return PEVP_OK;
}

pevp_status pevp_diagnostics(pevp_vp* vp, char* buffer, size_t size, size_t* length) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, length, "length"); s != PEVP_OK) return s;
  std::vector<std::uint8_t> reply;
  if (pevp_status s = call(vp, Op::Diagnostics, {}, &reply); s != PEVP_OK)
    return explain_unknown_op(vp, s, "the diagnostics");
  std::string lines;
  if (pevp_status s = decode(vp, Op::Diagnostics, reply, [&](Reader& r) { lines = r.lstr("lines"); }); s != PEVP_OK)
    return s;
  vp->diagnostics += lines;
  *length = vp->diagnostics.size();
  if (buffer == nullptr || size <= vp->diagnostics.size())
    return fail(vp, PEVP_ERR_ARGUMENT, "the diagnostics take " + std::to_string(vp->diagnostics.size() + 1) +
                                           " bytes with their NUL, the buffer has " + std::to_string(size) +
                                           " (they stay for the next call)");
  std::memcpy(buffer, vp->diagnostics.c_str(), vp->diagnostics.size() + 1);
  vp->diagnostics.clear();
  return PEVP_OK;
}

}  // extern "C"
