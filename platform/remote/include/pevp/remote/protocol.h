// The pe-vp MMIO protocol (docs/protocol.md): how a driver in another process drives a VP that `pe-vp serve`
// runs -- bus reads and writes, bursts, registers by name, arming, submission, interrupt and idle waits, simulated
// time, the error record, assembly, statistics and checkpoints.
//
// A connection carries frames, little-endian:
//   u32 length      bytes after this field (2 .. kMaxFrameBytes)
//   u8  version     kProtocolVersion
//   u8  kind        a request's Op, or Reply::Ok / Reply::Error
//   ... payload     the request's arguments, or the reply's results (docs/protocol.md lists each op's layout)
// The client sends one request and reads its reply before the next: the server answers in order, one at a time.
// An Error reply's payload is u8 status (Status) + str message.
//
// Plain C++ without SystemC, so the frame parser can be fuzzed on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pevp::remote {

// Covers the framing and every op's payload layout. New ops are added under the same version (cycles,
// micro_op_log, micro_op_log_take, diagnostics and expect came after the others): a server that predates one answers
// it "unknown op" (status 7) and keeps the connection, so a client can tell. Changing a frame or an existing op's
// layout takes a new version (docs/protocol.md "Versions", D-PROTOCOL-OPS).
constexpr std::uint8_t kProtocolVersion = 1;
// A burst or a checkpoint moves at most this many bytes in one frame; larger transfers are split by the client.
constexpr std::uint32_t kMaxTransferBytes = 64u << 20;
// The largest frame: a full transfer plus its arguments. A longer length field is refused without reading on.
constexpr std::uint32_t kMaxFrameBytes = kMaxTransferBytes + 4096;
constexpr std::size_t kFrameHeaderBytes = 6;  // length, version, kind

enum class Op : std::uint8_t {
  Hello = 0x01,         // -> u8 version, str generation, u64 sbuf, psum, apb, iq, u32 sbuf/psum partition bytes,
                        //    u32 partitions, str pe-vp version
  Time = 0x02,          // -> u64 simulated picoseconds
  Shutdown = 0x03,      // the server replies, closes the connection and exits (status 0)
  Cycles = 0x04,        // -> u64 engine cycle now, u64 busy cycles, u64 first start, u64 last completion,
                        //    f64 clock GHz (IEEE 754 bits as a u64)
  Read32 = 0x10,        // u64 address, u8 privileged -> u32 value
  Write32 = 0x11,       // u64 address, u8 privileged, u32 value
  Read = 0x12,          // u64 address, u32 bytes -> the bytes
  Write = 0x13,         // u64 address, the bytes (the rest of the payload)
  ReadReg = 0x20,       // str face, str name -> u32 value
  WriteReg = 0x21,      // str face, str name, u32 value
  Counter48 = 0x22,     // str face, str lsb register -> u64 value
  Arm = 0x30,           // u8 serialized, u8 single_entry, u8 reg_immediate
  Submit = 0x31,        // n x 64-byte records (the rest of the payload)
  WaitIdle = 0x32,      // u64 timeout ns -> u8 done, u8 error, u8 timed_out, u64 retired
  WaitIrq = 0x33,       // u64 timeout ns -> u8 raised, u64 picoseconds when it was seen (or the timeout's end)
  ClearDone = 0x34,     //
  ErrorRecord = 0x35,   // -> u8 valid, u32 index, u8 opcode, u8 field offset, u16 rule number, i64 value, str rule,
                        //    str description, str field, str message (the VP's sentence)
  ClearError = 0x36,    //
  Assemble = 0x40,      // lstr source -> n x 64-byte records
  Stats = 0x50,         // -> lstr statistics JSON (docs/timing.md "Statistics")
  SaveCheckpoint = 0x60,     // -> the checkpoint's bytes (docs/checkpoint.md); the VP must be at an idle point
  RestoreCheckpoint = 0x61,  // rest: a checkpoint's bytes, checked whole before anything changes
  Reset = 0x62,         // the hard reset: the work queued, blocked or in flight dropped, the VP at its power-on state
  MicroOpLog = 0x70,    // u8 on: start (1) or stop (0) keeping a JSON line per micro-op (docs/cosim-reference.md)
  MicroOpLogTake = 0x71,  // -> lstr the lines kept since the last take, whole lines, at most kMaxTransferBytes
  Diagnostics = 0x72,   // -> lstr the VP's warnings since the last take (hazards, checks.hazards = warn), one a line
  Expect = 0x73,        // one 64-byte instruction -> the scoreboard's expectation (docs/cosim-reference.md): u64
                        //    instruction index, u32 micro-ops, u64 issue, start, complete and response cycles,
                        //    u32 first PSUM partition, u32 partitions, u32 byte offset, u32 bytes per partition,
                        //    u8 element bytes, then the window's bytes (partitions x bytes, partition-major)
};
// The auth request: str token -> (nothing). TCP's credential, the first frame of a connection to a server that
// takes one (docs/protocol.md "Authentication"); answered ok without a check where none is taken or once the
// connection is admitted. Not an Op: it admits a connection and never reaches the VP.
constexpr std::uint8_t kAuthOp = 0x05;

// "read32", "submit", ...; nullopt for a byte that is no op.
std::optional<Op> op_from_byte(std::uint8_t byte);
const char* name(Op op);

enum class Reply : std::uint8_t { Ok = 0x80, Error = 0x81 };

// The same numbers as pevp_status (pevp/pevp.h).
enum class Status : std::uint8_t {
  Ok = 0,
  Argument = 1,
  State = 2,
  Bus = 3,
  Assembly = 4,
  Timeout = 5,
  Internal = 6,
  Protocol = 7,    // a malformed frame or payload
  Connection = 8,  // the connection failed or closed
  Auth = 9,        // a TCP server refused the client's credential (none, or not its token)
  Hazard = 10,     // the call met a driver hazard and checks.hazards is error (the message is the report)
  Privilege = 11,  // an unprivileged access to the protected face (the message names the address and register)
};

// A frame or payload that breaks the protocol: the message says which op, which field and which rule.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds a payload: integers little-endian; str = u16 length + bytes (no NUL among them); lstr = u32 length +
// bytes.
class Writer {
 public:
  Writer& u8(std::uint8_t v);
  Writer& u16(std::uint16_t v);
  Writer& u32(std::uint32_t v);
  Writer& u64(std::uint64_t v);
  Writer& str(std::string_view s);   // throws ProtocolError when longer than 65535 bytes
  Writer& lstr(std::string_view s);  // throws ProtocolError when longer than kMaxTransferBytes
  Writer& bytes(const void* data, std::size_t size);
  const std::vector<std::uint8_t>& data() const { return data_; }
  std::vector<std::uint8_t> take() { return std::move(data_); }

 private:
  std::vector<std::uint8_t> data_;
};

// Reads a payload; every read past its end throws ProtocolError naming `what` (the op) and the field.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size, std::string what)
      : p_(data), left_(size), what_(std::move(what)) {}
  std::uint8_t u8(const char* field);
  std::uint16_t u16(const char* field);
  std::uint32_t u32(const char* field);
  std::uint64_t u64(const char* field);
  bool flag(const char* field);  // a u8 that must be 0 or 1
  std::string str(const char* field);  // refuses a NUL byte in it (a name or short text; D-ERROR-TEXT)
  std::string lstr(const char* field);
  // The rest of the payload.
  std::vector<std::uint8_t> rest();
  std::size_t left() const { return left_; }
  // Throws when bytes are left over: a payload longer than its op's layout is malformed too.
  void end();

 private:
  const std::uint8_t* take(std::size_t n, const char* field);
  const std::uint8_t* p_;
  std::size_t left_;
  std::string what_;
};

// One frame, without its length field.
struct Frame {
  std::uint8_t kind = 0;  // an Op for a request, a Reply for a reply
  std::vector<std::uint8_t> payload;
};

// The frame's bytes on the wire (length, version, kind, payload).
std::vector<std::uint8_t> encode_frame(std::uint8_t kind, const std::vector<std::uint8_t>& payload);
// What is wrong with a frame's length field or version, or "" (the checks below, without an exception).
std::string frame_length_problem(std::uint32_t length);
std::string frame_version_problem(std::uint8_t version);
// The length field of a header: throws ProtocolError for a length below 2 or above kMaxFrameBytes.
std::uint32_t frame_length(const std::uint8_t (&length_field)[4]);
// The frame after its length field (`body` = version, kind, payload): throws ProtocolError for a version this
// side does not speak.
Frame decode_frame_body(const std::uint8_t* body, std::size_t size);

// An error reply's payload. The message is made printable UTF-8 first (printable_message): messages quote what
// clients sent -- a register name, an op byte's text -- and those bytes may be anything.
std::vector<std::uint8_t> error_payload(Status status, std::string_view message);
// `text` with every byte that is not printable UTF-8 written as \xHH: invalid UTF-8 (a stray continuation byte,
// a cut or overlong sequence, a surrogate, a code point past U+10FFFF), C0 controls other than a line feed (the
// separator of a message's lines, such as the assembler's diagnostics), DEL and the C1 controls (U+0080..U+009F,
// both bytes). A backslash becomes \\, so the escaping cannot be forged (D-ERROR-TEXT).
std::string printable_message(std::string_view text);

}  // namespace pevp::remote
