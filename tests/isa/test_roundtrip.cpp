// Round trips: random VALID instructions built with the Encoder -> decode (valid)
// -> to_json -> encode_json -> the same 64 bytes; and arbitrary bytes with a
// valid opcode byte (reserved bytes included) -> decode -> to_json ->
// encode_json -> the same bytes. Seeded, so every run checks the same records.
#include <gtest/gtest.h>

#include "isa_random.h"

namespace pevp::isa::test {
namespace {

// A few hundred per (generation, opcode); a third of that in a sanitizer build.
const int kValidPerOpcode = volume(300, 3);
const int kArbitraryPerOpcode = volume(300, 3);

std::string hex(const RawInstruction& r) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto b : r) s += d[b >> 4], s += d[b & 0xF];
  return s;
}

class RoundTrip : public ::testing::TestWithParam<G> {};

TEST_P(RoundTrip, RandomValidInstructions) {
  const G g = GetParam();
  Rng r(0x5eed0000u + static_cast<unsigned>(g));
  for (Opcode op : kAllOpcodes) {
    if (!usable(op, g)) continue;
    int failures = 0;
    for (int i = 0; i < kValidPerOpcode && failures < 5; ++i) {
      const RawInstruction raw = random_valid(g, op, r);
      const Decoded d = decode(g, raw);
      if (!d.valid()) {
        ++failures;
        ADD_FAILURE() << name(op) << " #" << i << " built from valid values is invalid: " << dump(d) << "\n"
                      << to_text(d);
        continue;
      }
      ASSERT_EQ(d.opcode, op);
      const nlohmann::json j = to_json(d);
      EXPECT_EQ(j.at("valid"), true);
      RawInstruction back{};
      ASSERT_NO_THROW(back = encode_json(g, j)) << j.dump();
      if (back != raw) {
        ++failures;
        ADD_FAILURE() << name(op) << " #" << i << "\n in  " << hex(raw) << "\n out " << hex(back) << "\n" << j.dump();
      }
      // through the JSON text too, every few records
      if (i % 16 == 0) {
        EXPECT_EQ(encode_json(g, nlohmann::json::parse(j.dump())), raw) << j.dump();
      }
    }
  }
}

TEST_P(RoundTrip, ArbitraryBytesWithAValidOpcode) {
  const G g = GetParam();
  Rng r(0xb17e0000u + static_cast<unsigned>(g));
  for (Opcode op : kAllOpcodes) {
    if (!exists_in(op, g)) continue;
    int failures = 0;
    for (int i = 0; i < kArbitraryPerOpcode && failures < 5; ++i) {
      RawInstruction raw = random_bytes(r, static_cast<std::uint8_t>(op));
      // a third of the records use each union member of MEM_PATTERN3D sources/destinations
      if (i % 3 == 1) raw[16] |= 1;
      if (i % 3 == 2) raw[19] |= 0x80, raw[16] &= 0xFE;
      const Decoded d = decode(g, raw);
      ASSERT_EQ(d.opcode, op);
      nlohmann::json j;
      ASSERT_NO_THROW(j = to_json(d));
      RawInstruction back{};
      try {
        back = encode_json(g, j);
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << name(op) << " #" << i << " encode_json threw: " << e.what() << "\n in " << hex(raw) << "\n"
                      << j.dump();
        continue;
      }
      if (back != raw) {
        ++failures;
        ADD_FAILURE() << name(op) << " #" << i << "\n in  " << hex(raw) << "\n out " << hex(back) << "\n" << j.dump();
      }
    }
  }
}

// A round trip keeps the violations too: the re-encoded bytes decode identically.
TEST_P(RoundTrip, ReencodedDecodesIdentically) {
  const G g = GetParam();
  Rng r(0xdec0de00u + static_cast<unsigned>(g));
  for (Opcode op : kAllOpcodes) {
    if (!exists_in(op, g)) continue;
    for (int i = 0; i < 20; ++i) {
      const RawInstruction raw = random_bytes(r, static_cast<std::uint8_t>(op));
      const Decoded a = decode(g, raw);
      const Decoded b = decode(g, encode_json(g, to_json(a)));
      EXPECT_EQ(to_json(a), to_json(b));
      EXPECT_EQ(to_text(a), to_text(b));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gen, RoundTrip, ::testing::ValuesIn(kAllGenerations),
                         [](const ::testing::TestParamInfo<G>& i) { return gen_name(i.param); });

}  // namespace
}  // namespace pevp::isa::test
