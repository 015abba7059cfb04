// The byte layer of a checkpoint (docs/checkpoint.md "Format"): little-endian integers, length-prefixed strings,
// CRC-32 (IEEE 802.3, zlib's), named sections with a length and a CRC. The Reader checks every read against the end
// of its range and throws CheckpointError naming the source, the section, the absolute byte offset, the field and
// how many bytes it needed -- never reads past the end, never allocates what the input cannot hold.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pevp/platform/checkpoint.h"

namespace pevp::platform::ckpt {

std::uint32_t crc32(const std::uint8_t* data, std::size_t size);

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(v); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void f32(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  // A named section: its name, then its payload's length and CRC-32, filled in by end_section().
  void begin_section(const std::string& name);
  void end_section();
  std::vector<std::uint8_t> take() { return std::move(out_); }

 private:
  void le(std::uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> out_;
  std::size_t section_header_ = 0;  // where the open section's length field starts
};

class Reader {
 public:
  // The whole input: offsets are absolute; `section` names where it reads ("" = the file header).
  Reader(const std::uint8_t* data, std::size_t size, std::string source)
      : data_(data), end_(size), file_size_(size), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const;
  const std::string& source() const { return source_; }
  std::size_t offset() const { return pos_; }
  std::size_t left() const { return end_ - pos_; }

  std::uint8_t u8(const char* field) { return static_cast<std::uint8_t>(le(1, field)); }
  bool boolean(const char* field);
  std::uint16_t u16(const char* field) { return static_cast<std::uint16_t>(le(2, field)); }
  std::uint32_t u32(const char* field) { return static_cast<std::uint32_t>(le(4, field)); }
  std::uint64_t u64(const char* field) { return le(8, field); }
  std::int64_t i64(const char* field) { return static_cast<std::int64_t>(le(8, field)); }
  double f64(const char* field) {
    const std::uint64_t bits = u64(field);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  float f32(const char* field) {
    const std::uint32_t bits = u32(field);
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  const std::uint8_t* bytes(std::size_t n, const char* field) {
    need(n, field);
    const std::uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  // A length-prefixed string of at most `max` bytes.
  std::string str(const char* field, std::size_t max = 1 << 20);
  // A u32 count of elements of at least `min_bytes` each, at most `max`: checked against what is left before
  // anything is allocated for it.
  std::size_t count(const char* field, std::size_t max, std::size_t min_bytes);

  // Opens the next section, which must be `name`: reads its header, checks its length against the input and its
  // CRC, and limits this reader to its payload. close_section() requires the payload read to its end.
  void open_section(const std::string& name);
  void close_section();
  // After the last section: nothing may follow.
  void expect_end();

 private:
  void need(std::size_t n, const char* field) const;
  std::uint64_t le(unsigned n, const char* field) {
    need(n, field);
    std::uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= std::uint64_t{data_[pos_ + i]} << (8 * i);
    pos_ += n;
    return v;
  }

  const std::uint8_t* data_;
  std::size_t pos_ = 0;
  std::size_t end_;        // the end of what may be read now (the open section's payload, or the input)
  std::size_t file_size_;  // the end of the input
  std::string source_;
  std::string section_;    // the open section's name
};

}  // namespace pevp::platform::ckpt
