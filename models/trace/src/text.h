// Internal text helpers of the trace writers: JSON string escaping, exact
// picosecond -> microsecond numbers, a chunked output buffer and the
// write-through-a-temporary-file helper.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace pevp::trace::detail {

// Appends s as a JSON string literal (quotes included): '"', '\\' and control
// characters escaped, invalid UTF-8 bytes replaced by U+FFFD.
void append_json_string(std::string& out, std::string_view s);

// Appends ps / 10^6 as an exact decimal ("0", "1.5", "123.456789").
void append_us(std::string& out, std::uint64_t ps);

void append_uint(std::string& out, std::uint64_t v);
void append_int(std::string& out, std::int64_t v);
// Shortest round-trip form; non-finite values as the JSON strings "nan", "inf", "-inf".
void append_double(std::string& out, double v);

// Collects text and hands it to the stream in large chunks.
class Chunked {
 public:
  explicit Chunked(std::ostream& os) : os_(os) { buf_.reserve(kChunk + 4096); }
  ~Chunked() { flush(); }
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kChunk) flush();
  }
  void flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kChunk = 1 << 20;
  std::ostream& os_;
  std::string buf_;
};

}  // namespace pevp::trace::detail
