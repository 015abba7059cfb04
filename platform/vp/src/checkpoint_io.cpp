#include "checkpoint_io.h"

#include <cstdio>

namespace pevp::platform::ckpt {

namespace {

std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// The header of a section: u16 name length, the name, u64 payload length, u32 CRC.
constexpr std::size_t kSectionLengthBytes = 8, kSectionCrcBytes = 4;

}  // namespace

std::uint32_t crc32(const std::uint8_t* data, std::size_t size) {
  static const std::array<std::uint32_t, 256> table = make_crc_table();
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// ---- Writer -----------------------------------------------------------------------------------

void Writer::begin_section(const std::string& name) {
  u16(static_cast<std::uint16_t>(name.size()));
  bytes(name.data(), name.size());
  section_header_ = out_.size();
  u64(0);
  u32(0);
}

void Writer::end_section() {
  const std::size_t payload = section_header_ + kSectionLengthBytes + kSectionCrcBytes;
  const std::uint64_t length = out_.size() - payload;
  const std::uint32_t crc = crc32(out_.data() + payload, out_.size() - payload);
  for (unsigned i = 0; i < 8; ++i) out_[section_header_ + i] = static_cast<std::uint8_t>(length >> (8 * i));
  for (unsigned i = 0; i < 4; ++i) out_[section_header_ + 8 + i] = static_cast<std::uint8_t>(crc >> (8 * i));
}

// ---- Reader -----------------------------------------------------------------------------------

void Reader::fail(const std::string& what) const { throw CheckpointError("checkpoint " + source_ + ": " + what); }

void Reader::need(std::size_t n, const char* field) const {
  if (end_ - pos_ >= n) return;
  const std::string where = section_.empty() ? "the header" : "section '" + section_ + "'";
  const std::string sizes = " (needs " + std::to_string(n) + " bytes, " + std::to_string(end_ - pos_) + " left)";
  if (end_ == file_size_)
    fail("truncated in " + where + " at byte " + std::to_string(pos_) + " reading " + field + sizes);
  fail(where + " ends before its content: " + field + " at byte " + std::to_string(pos_) + sizes);
}

bool Reader::boolean(const char* field) {
  const std::size_t at = pos_;
  const std::uint8_t v = u8(field);
  if (v > 1)
    fail("section '" + section_ + "' at byte " + std::to_string(at) + ": " + field + " = " + std::to_string(v) +
         " is not a boolean (0 or 1)");
  return v == 1;
}

std::string Reader::str(const char* field, std::size_t max) {
  const std::size_t at = pos_;
  const std::uint32_t n = u32(field);
  if (n > max)
    fail("section '" + section_ + "' at byte " + std::to_string(at) + ": " + field + " of " + std::to_string(n) +
         " bytes, at most " + std::to_string(max));
  const std::uint8_t* p = bytes(n, field);
  return std::string(reinterpret_cast<const char*>(p), n);
}

std::size_t Reader::count(const char* field, std::size_t max, std::size_t min_bytes) {
  const std::size_t at = pos_;
  const std::uint32_t n = u32(field);
  if (n > max)
    fail("section '" + section_ + "' at byte " + std::to_string(at) + ": " + field + " = " + std::to_string(n) +
         ", at most " + std::to_string(max));
  if (min_bytes > 0 && n > left() / min_bytes)
    fail("section '" + section_ + "' at byte " + std::to_string(at) + ": " + field + " = " + std::to_string(n) +
         " needs at least " + std::to_string(std::uint64_t{n} * min_bytes) + " bytes, the section has " +
         std::to_string(left()) + " left");
  return n;
}

void Reader::open_section(const std::string& name) {
  section_ = name;  // a truncated header is reported as this section's
  const std::size_t at = pos_;
  const std::uint16_t len = u16("its name's length");
  const std::uint8_t* p = bytes(len, "its name");
  const std::string found(reinterpret_cast<const char*>(p), len);
  if (found != name) {
    std::string shown;
    for (char c : found) shown += (c >= 0x20 && c < 0x7F) ? c : '?';
    fail("expected section '" + name + "' at byte " + std::to_string(at) + ", found '" + shown + "'");
  }
  const std::uint64_t length = u64("its length");
  const std::uint32_t stored = u32("its CRC");
  if (length > left())
    fail("truncated in section '" + name + "' at byte " + std::to_string(pos_) + " (needs " + std::to_string(length) +
         " bytes, " + std::to_string(left()) + " left)");
  const std::uint32_t computed = crc32(data_ + pos_, static_cast<std::size_t>(length));
  if (computed != stored)
    fail("CRC mismatch in section '" + name + "' (bytes " + std::to_string(pos_) + ".." +
         std::to_string(pos_ + length) + ": stored " + hex32(stored) + ", computed " + hex32(computed) + ")");
  end_ = pos_ + static_cast<std::size_t>(length);
}

void Reader::close_section() {
  if (pos_ != end_)
    fail("section '" + section_ + "': " + std::to_string(end_ - pos_) + " bytes left over after its content at byte " +
         std::to_string(pos_));
  end_ = file_size_;
}

void Reader::expect_end() {
  if (pos_ != file_size_)
    fail(std::to_string(file_size_ - pos_) + " bytes after the last section (at byte " + std::to_string(pos_) + ")");
}

}  // namespace pevp::platform::ckpt
