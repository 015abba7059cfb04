// The SEQ's two-way instruction cache (seq::InstructionCache), on its own:
// which value a lookup returns, which way a miss evicts, and that nothing is
// made twice while it is cached. A single set (two entries) makes every key
// collide, so both ways and both eviction orders are exercised.
#include <gtest/gtest.h>

#include <string>

#include "pevp/seq/instruction_cache.h"

namespace {

using pevp::isa::RawInstruction;
using Cache = pevp::seq::InstructionCache<std::string>;

RawInstruction key(std::uint8_t tag) {
  RawInstruction r{};
  r[0] = 0x02;
  r[63] = tag;
  return r;
}

// Looks `tag` up; the made value names the tag and how many values were made so far.
struct Looker {
  Cache cache;
  int made = 0;
  std::string get(std::uint8_t tag) {
    return *cache.get(key(tag), [&](const RawInstruction& r) {
      ++made;
      return std::make_shared<const std::string>("v" + std::to_string(r[63]) + "#" + std::to_string(made));
    });
  }
};

TEST(DecodeCache, OneSetKeepsTheTwoMostRecentKeysAndReturnsEachItsOwnValue) {
  Looker l{Cache(2)};
  EXPECT_EQ(l.get(1), "v1#1");  // miss
  EXPECT_EQ(l.get(2), "v2#2");  // miss: 1 moves to the second way
  EXPECT_EQ(l.get(1), "v1#1");  // hit in the second way: the regression GCC 12.2 produced returned v2 here
  EXPECT_EQ(l.get(2), "v2#2");  // hit in the second way again
  EXPECT_EQ(l.get(2), "v2#2");  // hit in the first way
  EXPECT_EQ(l.cache.hits(), 3u);
  EXPECT_EQ(l.cache.misses(), 2u);
  EXPECT_EQ(l.get(3), "v3#3");  // miss: evicts 1, the least recently used
  EXPECT_EQ(l.get(2), "v2#2");  // still cached
  EXPECT_EQ(l.get(3), "v3#3");  // still cached
  EXPECT_EQ(l.get(1), "v1#4");  // made again: evicts 2, now the older
  EXPECT_EQ(l.get(3), "v3#3");
  EXPECT_EQ(l.get(2), "v2#5");
  EXPECT_EQ(l.made, 5);
}

TEST(DecodeCache, AlternatingPairsHitAfterTheirFirstUse) {
  // The pattern of an Ldweights + Matmul loop: two keys taking turns.
  Looker l{Cache(2)};
  for (int i = 0; i < 100; ++i) {
    const auto tag = static_cast<std::uint8_t>(i % 2);
    ASSERT_EQ(l.get(tag), "v" + std::to_string(tag) + "#" + std::to_string(tag + 1)) << "lookup " << i;
  }
  EXPECT_EQ(l.made, 2);
  EXPECT_EQ(l.cache.hits(), 98u);
}

TEST(DecodeCache, ManyKeysInALargeCacheAreMadeOnceEach) {
  // The keys differ only in their last byte: the hash must spread them anyway.
  Looker l{Cache(4096)};
  for (int pass = 0; pass < 3; ++pass)
    for (int t = 0; t < 200; ++t) ASSERT_EQ(l.get(static_cast<std::uint8_t>(t)).rfind("v" + std::to_string(t) + "#", 0), 0u);
  EXPECT_LE(l.made, 220) << "200 keys in 2048 two-way sets: almost no conflict misses";
  EXPECT_EQ(l.cache.hits() + l.cache.misses(), 600u);
}

TEST(DecodeCache, NoEntriesMakesEveryTime) {
  Looker l{Cache(0)};
  EXPECT_EQ(l.get(7), "v7#1");
  EXPECT_EQ(l.get(7), "v7#2");
  EXPECT_EQ(l.cache.hits(), 0u);
  EXPECT_EQ(l.cache.misses(), 2u);
}

TEST(DecodeCache, AValueOutlivesItsEviction) {
  Cache c(2);
  const auto make = [](const RawInstruction& r) { return std::make_shared<const std::string>(std::to_string(r[63])); };
  const Cache::Ptr held = c.get(key(1), make);
  c.get(key(2), make);
  c.get(key(3), make);  // evicts 1
  EXPECT_EQ(*held, "1");
  EXPECT_EQ(held.use_count(), 1);
}

}  // namespace
