// A two-way set-associative cache of what the SEQ derives from an instruction
// (its decode and everything prepared with it), keyed by the 64 bytes. Plain
// C++ (no SystemC).
//
// Why two ways: a loop body of a thousand distinct instructions in a
// direct-mapped cache of four thousand slots keeps missing on its colliding
// pairs (about 5 % of the stream); with two ways per set it does not.
// A value is shared: an instruction still in flight keeps its entry alive
// after the cache replaced it.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pevp/isa/decode.h"

namespace pevp::seq {

// One occupied slot of an InstructionCache: where, and the 64 bytes it holds.
struct CacheKey {
  std::uint32_t slot = 0;
  isa::RawInstruction raw{};
};

template <class Value>
class InstructionCache {
 public:
  using Ptr = std::shared_ptr<const Value>;

  // `entries` slots in pairs (rounded down to even; 0 = no cache: every get makes).
  explicit InstructionCache(unsigned entries)
      : values_(entries < 2 ? 0 : entries & ~1u), raws_(new isa::RawInstruction[values_.size()]) {}

  // The value for `raw`, made by make(raw) -> Ptr on a miss.
  template <class Make>
  Ptr get(const isa::RawInstruction& raw, Make&& make) {
    if (values_.empty()) {
      ++misses_;
      return make(raw);
    }
    const std::size_t mru = hash(raw) % (values_.size() / 2) * 2;  // the set's most recently used way first
    const std::size_t lru = mru + 1;
    if (values_[mru] && same(raws_[mru], raw)) {
      ++hits_;
      return values_[mru];
    }
    Ptr found;
    if (values_[lru] && same(raws_[lru], raw)) {
      ++hits_;
      found = values_[lru];
    } else {
      ++misses_;
      found = make(raw);
    }
    // Assignments through a local, not a swap of the two ways: with GCC
    // 12.2 at -O2 a swap of two vector elements returned the other way's
    // value on a hit (a 20-line program reproduces it; -O0,
    // -fno-strict-aliasing and clang do not). The calibration tests caught
    // it as a Matmul timed with another's N.
    Ptr older = std::move(values_[mru]);
    if (older) raws_[lru] = raws_[mru];
    values_[lru] = std::move(older);
    raws_[mru] = raw;
    values_[mru] = std::move(found);
    return values_[mru];
  }

  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

  // The cache's contents as keys, for a VP checkpoint (docs/checkpoint.md):
  // the occupied slots (a set's most recently used way first) and their 64
  // bytes. rebuild() makes every value again, so a restored SEQ hits and misses
  // exactly where the saved one would have.
  using Slot = CacheKey;
  std::size_t slots() const { return values_.size(); }
  std::vector<Slot> keys() const {
    std::vector<Slot> out;
    for (std::size_t i = 0; i < values_.size(); ++i)
      if (values_[i]) out.push_back({static_cast<std::uint32_t>(i), raws_[i]});
    return out;
  }
  // Why `keys` cannot be this cache's (a slot past its size or twice, an
  // instruction in a set its bytes do not hash to), or "".
  std::string check(const std::vector<Slot>& keys) const {
    std::vector<bool> seen(values_.size());
    for (const Slot& k : keys) {
      if (k.slot >= values_.size()) return "slot " + std::to_string(k.slot) + " of " + std::to_string(values_.size());
      if (seen[k.slot]) return "slot " + std::to_string(k.slot) + " twice";
      seen[k.slot] = true;
      if (hash(k.raw) % (values_.size() / 2) * 2 != (k.slot & ~1u))
        return "slot " + std::to_string(k.slot) + " holds an instruction of another set";
    }
    return "";
  }
  template <class Make>
  void rebuild(const std::vector<Slot>& keys, std::uint64_t hits, std::uint64_t misses, Make&& make) {
    for (Ptr& v : values_) v.reset();
    for (const Slot& k : keys) {
      values_.at(k.slot) = make(k.raw);
      raws_[k.slot] = k.raw;
    }
    hits_ = hits;
    misses_ = misses;
  }

 private:
  // memcmp: std::array's == compares byte by byte here.
  static bool same(const isa::RawInstruction& a, const isa::RawInstruction& b) {
    return std::memcmp(a.data(), b.data(), a.size()) == 0;
  }
  // The 64 bytes as eight words, mixed (std::hash of a string of the bytes
  // costs more than a hit saves). The set index takes the low bits, and a
  // product's low bits see only its operands' low bits, so the last word's
  // high bytes -- where two instructions often differ -- reach them only
  // through the final mix (MurmurHash3's fmix64).
  static std::size_t hash(const isa::RawInstruction& r) {
    std::uint64_t h = 0x9E3779B97F4A7C15ull;
    for (std::size_t i = 0; i < r.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, r.data() + i, 8);
      h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
    }
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return static_cast<std::size_t>(h);
  }

  // Slot i holds raws_[i] and its value values_[i]; a null value is an empty slot, whose bytes are never read. The
  // bytes are left unset until a slot is filled: a cache of 8192 slots then costs the 128 KiB of its values to make,
  // not 640 KiB, and a SEQ is made for every simulation (a sweep makes one per point).
  std::vector<Ptr> values_;
  std::unique_ptr<isa::RawInstruction[]> raws_;
  std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace pevp::seq
