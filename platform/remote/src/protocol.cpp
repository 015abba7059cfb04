#include "pevp/remote/protocol.h"

#include <cstring>

namespace pevp::remote {

namespace {

struct OpName {
  Op op;
  const char* name;
};
constexpr OpName kOps[] = {
    {Op::Hello, "hello"},         {Op::Time, "time"},
    {Op::Shutdown, "shutdown"},   {Op::Read32, "read32"},
    {Op::Write32, "write32"},     {Op::Read, "read"},
    {Op::Write, "write"},         {Op::ReadReg, "read_reg"},
    {Op::WriteReg, "write_reg"},  {Op::Counter48, "counter48"},
    {Op::Arm, "arm"},             {Op::Submit, "submit"},
    {Op::WaitIdle, "wait_idle"},  {Op::WaitIrq, "wait_irq"},
    {Op::ClearDone, "clear_done"}, {Op::ErrorRecord, "error_record"},
    {Op::ClearError, "clear_error"}, {Op::Assemble, "assemble"},
    {Op::Stats, "stats"},         {Op::SaveCheckpoint, "save_checkpoint"},
    {Op::RestoreCheckpoint, "restore_checkpoint"}, {Op::Reset, "reset"},
    {Op::Cycles, "cycles"},       {Op::MicroOpLog, "micro_op_log"},
    {Op::MicroOpLogTake, "micro_op_log_take"}, {Op::Diagnostics, "diagnostics"},
    {Op::Expect, "expect"},
};

void put_le(std::vector<std::uint8_t>& out, std::uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::uint64_t get_le(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

std::optional<Op> op_from_byte(std::uint8_t byte) {
  for (const OpName& o : kOps)
    if (static_cast<std::uint8_t>(o.op) == byte) return o.op;
  return std::nullopt;
}

const char* name(Op op) {
  for (const OpName& o : kOps)
    if (o.op == op) return o.name;
  return "?";
}

Writer& Writer::u8(std::uint8_t v) {
  data_.push_back(v);
  return *this;
}
Writer& Writer::u16(std::uint16_t v) {
  put_le(data_, v, 2);
  return *this;
}
Writer& Writer::u32(std::uint32_t v) {
  put_le(data_, v, 4);
  return *this;
}
Writer& Writer::u64(std::uint64_t v) {
  put_le(data_, v, 8);
  return *this;
}
Writer& Writer::str(std::string_view s) {
  if (s.size() > 0xFFFF)
    throw ProtocolError("a string of " + std::to_string(s.size()) + " bytes does not fit a str (65535 at most)");
  u16(static_cast<std::uint16_t>(s.size()));
  return bytes(s.data(), s.size());
}
Writer& Writer::lstr(std::string_view s) {
  if (s.size() > kMaxTransferBytes)
    throw ProtocolError("a text of " + std::to_string(s.size()) + " bytes exceeds the transfer limit of " +
                        std::to_string(kMaxTransferBytes));
  u32(static_cast<std::uint32_t>(s.size()));
  return bytes(s.data(), s.size());
}
Writer& Writer::bytes(const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  data_.insert(data_.end(), p, p + size);
  return *this;
}

const std::uint8_t* Reader::take(std::size_t n, const char* field) {
  if (n > left_)
    throw ProtocolError(what_ + ": the payload ends inside '" + field + "' (" + std::to_string(n) + " bytes needed, " +
                        std::to_string(left_) + " left)");
  const std::uint8_t* p = p_;
  p_ += n;
  left_ -= n;
  return p;
}
std::uint8_t Reader::u8(const char* field) { return *take(1, field); }
std::uint16_t Reader::u16(const char* field) { return static_cast<std::uint16_t>(get_le(take(2, field), 2)); }
std::uint32_t Reader::u32(const char* field) { return static_cast<std::uint32_t>(get_le(take(4, field), 4)); }
std::uint64_t Reader::u64(const char* field) { return get_le(take(8, field), 8); }
bool Reader::flag(const char* field) {
  const std::uint8_t v = u8(field);
  if (v > 1) throw ProtocolError(what_ + ": '" + field + "' is " + std::to_string(v) + ", a flag is 0 or 1");
  return v == 1;
}
std::string Reader::str(const char* field) {
  const std::uint16_t n = u16(field);
  const std::uint8_t* p = take(n, field);
  std::string s(reinterpret_cast<const char*>(p), n);
  // A str is a name or a short text; what the VP says about one quotes it, through C strings (an exception's
  // what()) that a NUL would cut. The C API cannot send one either.
  if (const std::size_t nul = s.find('\0'); nul != std::string::npos)
    throw ProtocolError(what_ + ": '" + field + "' holds a NUL byte at offset " + std::to_string(nul) +
                        " (a str is text without NULs)");
  return s;
}
std::string Reader::lstr(const char* field) {
  const std::uint32_t n = u32(field);
  const std::uint8_t* p = take(n, field);
  return std::string(reinterpret_cast<const char*>(p), n);
}
std::vector<std::uint8_t> Reader::rest() {
  std::vector<std::uint8_t> out(p_, p_ + left_);
  p_ += left_;
  left_ = 0;
  return out;
}
void Reader::end() {
  if (left_ != 0)
    throw ProtocolError(what_ + ": " + std::to_string(left_) + " byte(s) after the last field of the payload");
}

std::vector<std::uint8_t> encode_frame(std::uint8_t kind, const std::vector<std::uint8_t>& payload) {
  if (payload.size() + 2 > kMaxFrameBytes)
    throw ProtocolError("a frame of " + std::to_string(payload.size() + 2) + " bytes exceeds the limit of " +
                        std::to_string(kMaxFrameBytes));
  std::vector<std::uint8_t> out;
  out.reserve(kFrameHeaderBytes + payload.size());
  put_le(out, payload.size() + 2, 4);
  out.push_back(kProtocolVersion);
  out.push_back(kind);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::string frame_length_problem(std::uint32_t n) {
  if (n < 2) return "frame length " + std::to_string(n) + ": a frame has at least its version and kind";
  if (n > kMaxFrameBytes)
    return "frame length " + std::to_string(n) + " exceeds the limit of " + std::to_string(kMaxFrameBytes) + " bytes";
  return "";
}

std::string frame_version_problem(std::uint8_t version) {
  if (version == kProtocolVersion) return "";
  return "protocol version " + std::to_string(version) + ": this side speaks version " +
         std::to_string(kProtocolVersion);
}

std::uint32_t frame_length(const std::uint8_t (&length_field)[4]) {
  const auto n = static_cast<std::uint32_t>(get_le(length_field, 4));
  if (std::string why = frame_length_problem(n); !why.empty()) throw ProtocolError(why);
  return n;
}

Frame decode_frame_body(const std::uint8_t* body, std::size_t size) {
  if (size < 2) throw ProtocolError("a frame of " + std::to_string(size) + " bytes has no version and kind");
  if (std::string why = frame_version_problem(body[0]); !why.empty()) throw ProtocolError(why);
  Frame f;
  f.kind = body[1];
  f.payload.assign(body + 2, body + size);
  return f;
}

std::vector<std::uint8_t> error_payload(Status status, std::string_view message) {
  // A message is cut to what a str holds, at a character's start so that the cut leaves valid UTF-8; the
  // server's messages are far shorter.
  std::string text = printable_message(message);
  if (text.size() > 0xFFFF) {
    std::size_t cut = 0xFFFF;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
  }
  return Writer().u8(static_cast<std::uint8_t>(status)).str(text).take();
}

namespace {

// The length of the well-formed UTF-8 sequence at the start of `s` (Unicode's table 3-7: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0 when it is not one.
std::size_t utf8_sequence_length(std::string_view s) {
  const auto byte = [&s](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if ((byte(i) & 0xC0) != 0x80) return 0;
  return length;
}

void append_escaped(std::string& out, unsigned char byte) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xF];
}

}  // namespace

std::string printable_message(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const std::size_t n = utf8_sequence_length(text);
    const auto lead = static_cast<unsigned char>(text[0]);
    const bool c0_or_del = n == 1 && ((lead < 0x20 && lead != '\n') || lead == 0x7F);
    const bool c1 = n == 2 && lead == 0xC2 && static_cast<unsigned char>(text[1]) < 0xA0;
    if (n == 0) {
      append_escaped(out, lead);
      text.remove_prefix(1);
      continue;
    }
    if (c0_or_del || c1) {
      for (std::size_t i = 0; i < n; ++i) append_escaped(out, static_cast<unsigned char>(text[i]));
    } else if (lead == '\\') {
      out += "\\\\";
    } else {
      out.append(text.data(), n);
    }
    text.remove_prefix(n);
  }
  return out;
}

}  // namespace pevp::remote
