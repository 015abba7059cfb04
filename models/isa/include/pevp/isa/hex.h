// "0x..." text for addresses and field values in messages: one spelling (lower
// case, no padding unless asked) for every unit's errors and logs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace pevp {

inline std::string hex(std::uint64_t v, int min_digits = 1) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%0*llx", min_digits, static_cast<unsigned long long>(v));
  return b;
}

}  // namespace pevp
