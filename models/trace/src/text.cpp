#include "text.h"

#include <charconv>
#include <cmath>

namespace pevp::trace::detail {

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return k < s.size() && at(k) >= lo && at(k) <= hi;
  };
  const unsigned c = at(i);
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;  // no surrogates
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run = 0;  // start of the pending run of bytes that need no escape
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (const std::size_t n = utf8_sequence(s, i)) {
        i += n;
        continue;
      }
    }
    out.append(s.data() + run, i - run);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c >= 0x80) {
          out += "\\ufffd";  // not UTF-8: the replacement character
        } else {
          // Other control characters and DEL (some importers reject raw DEL).
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        }
    }
    ++i;
    run = i;
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

void append_uint(std::string& out, std::uint64_t v) {
  char b[24];
  const auto r = std::to_chars(b, b + sizeof b, v);
  out.append(b, r.ptr);
}

void append_int(std::string& out, std::int64_t v) {
  char b[24];
  const auto r = std::to_chars(b, b + sizeof b, v);
  out.append(b, r.ptr);
}

void append_us(std::string& out, std::uint64_t ps) {
  append_uint(out, ps / 1000000);
  std::uint64_t frac = ps % 1000000;
  if (frac == 0) return;
  char d[7] = {'.', '0', '0', '0', '0', '0', '0'};
  int len = 7;
  while (frac % 10 == 0) {
    frac /= 10;
    --len;
  }
  for (int k = len - 1; k >= 1; --k) {
    d[k] = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  out.append(d, static_cast<std::size_t>(len));
}

void append_double(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "\"nan\"";
  } else if (std::isinf(v)) {
    out += v > 0 ? "\"inf\"" : "\"-inf\"";
  } else {
    char b[32];
    const auto r = std::to_chars(b, b + sizeof b, v);
    out.append(b, r.ptr);
  }
}

}  // namespace pevp::trace::detail
