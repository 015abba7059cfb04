// Decoder fuzz: 200k random 64-byte records per generation (random bodies under
// a valid opcode, mutated valid instructions, fully random bytes) plus every
// opcode byte with random bodies. decode never crashes, to_text / to_json never
// throw, every invalid record names at least one rule, and decode is
// deterministic. Chunks are seeded by index, so results do not depend on the
// number of worker threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "isa_random.h"
#include "pevp/isa/tiles.h"

namespace pevp::isa::test {
namespace {

// 200k per generation (25k in a sanitizer build; see volume()).
const int kRecordsPerGeneration = volume(200000, 8);
constexpr int kChunks = 16;
constexpr int kMaxReports = 20;

struct Problems {
  std::mutex m;
  std::vector<std::string> list;
  std::atomic<int> count{0};
  void add(std::string s) {
    if (count.fetch_add(1) >= kMaxReports) return;
    std::lock_guard<std::mutex> lock(m);
    list.push_back(std::move(s));
  }
};

std::string hex(const RawInstruction& r) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto b : r) s += d[b >> 4], s += d[b & 0xF];
  return s;
}

// The checks every record gets; `deep` adds the printers and a second decode.
bool check_record(G g, const RawInstruction& raw, bool deep, Problems& p, StreamChecker& stream) {
  const Decoded d = decode(g, raw);
  auto bad = [&](const std::string& why) { p.add(gen_name(g) + " " + hex(raw) + ": " + why); };
  if (d.raw != raw || d.opcode_byte != raw[0]) bad("decode changed the bytes");
  const auto op = opcode_from_byte(raw[0], g);
  if (op != d.opcode) bad("opcode mismatch");
  if (!d.opcode) {
    if (d.violations.size() != 1 || d.violations[0].rule != "opcode.unknown") bad("unknown opcode: " + dump(d));
  } else if (!d.layout || d.fields.empty()) {
    bad("no layout / fields");
  }
  if (!d.valid() && d.violations.empty()) bad("invalid without violations");
  for (const auto& v : d.violations) {
    if (v.rule.empty() || v.message.empty()) bad("violation without rule or message: " + v.describe());
    if (!v.field.empty() && !d.has(v.field)) bad("violation names no leaf: " + v.field);
    if (v.describe().find("[" + v.rule + "]") == std::string::npos) bad("describe() lacks the rule: " + v.describe());
  }
  try {
    stream.check(d);
  } catch (const std::exception& e) {
    bad(std::string("StreamChecker threw: ") + e.what());
  }
  if (!deep) return d.valid();
  try {
    const std::string t = to_text(d);
    if (t.empty()) bad("empty to_text");
    const nlohmann::json j = to_json(d);
    if (j.at("valid") != d.valid() || j.at("violations").size() != d.violations.size()) bad("to_json disagrees");
    (void)j.dump();
    (void)tile_of(d);
  } catch (const std::exception& e) {
    bad(std::string("printer threw: ") + e.what());
  }
  const Decoded again = decode(g, raw);
  bool same = again.violations.size() == d.violations.size() && again.fields.size() == d.fields.size();
  for (std::size_t i = 0; same && i < d.violations.size(); ++i)
    same = again.violations[i].rule == d.violations[i].rule && again.violations[i].field == d.violations[i].field &&
           again.violations[i].value == d.violations[i].value && again.violations[i].message == d.violations[i].message;
  for (std::size_t i = 0; same && i < d.fields.size(); ++i)
    same = again.fields[i].leaf.path == d.fields[i].leaf.path && again.fields[i].value == d.fields[i].value;
  if (!same) bad("decode is not deterministic");
  return d.valid();
}

class Fuzz : public ::testing::TestWithParam<G> {};

TEST_P(Fuzz, RandomRecordsNeverCrash) {
  const G g = GetParam();
  std::vector<std::uint8_t> opcodes;
  for (Opcode op : kAllOpcodes)
    if (exists_in(op, g)) opcodes.push_back(static_cast<std::uint8_t>(op));
  // a pool of valid instructions to mutate
  std::vector<RawInstruction> pool;
  Rng pr(0xf00d0000u + static_cast<unsigned>(g));
  for (Opcode op : kAllOpcodes)
    if (usable(op, g))
      for (int i = 0; i < 24; ++i) pool.push_back(random_valid(g, op, pr));

  Problems problems;
  std::atomic<int> next{0}, invalid{0}, valid{0};
  auto worker = [&] {
    for (int c; (c = next.fetch_add(1)) < kChunks;) {
      Rng r(0xfa110000u + static_cast<unsigned>(g) * 1000u + static_cast<unsigned>(c));
      StreamChecker stream;
      for (int i = 0; i < (kRecordsPerGeneration + kChunks - 1) / kChunks; ++i) {
        RawInstruction raw;
        const int kind = static_cast<int>(r.uni(0, 9));
        if (kind < 6) {  // random body under an opcode of g
          raw = random_bytes(r, opcodes[static_cast<std::size_t>(r.uni(0, static_cast<std::int64_t>(opcodes.size()) - 1))]);
        } else if (kind < 8) {  // a valid instruction with 1-3 bytes changed
          raw = pool[static_cast<std::size_t>(r.uni(0, static_cast<std::int64_t>(pool.size()) - 1))];
          for (auto n = r.uni(1, 3); n > 0; --n) raw[static_cast<std::size_t>(r.uni(1, 63))] = r.byte();
        } else {  // anything
          for (auto& b : raw) b = r.byte();
        }
        (check_record(g, raw, i % 16 == 0, problems, stream) ? valid : invalid).fetch_add(1);
      }
    }
  };
  const unsigned n = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  for (const auto& s : problems.list) ADD_FAILURE() << s;
  EXPECT_EQ(problems.count.load(), 0);
  EXPECT_GE(valid + invalid, kRecordsPerGeneration);
  EXPECT_GT(valid.load(), kRecordsPerGeneration / 2000);  // mutations that keep an instruction valid happen
  EXPECT_GT(invalid.load(), kRecordsPerGeneration / 2);
}

TEST_P(Fuzz, EveryOpcodeByte) {
  const G g = GetParam();
  Rng r(0x0b0b0000u + static_cast<unsigned>(g));
  Problems problems;
  StreamChecker stream;
  int known = 0;
  for (unsigned b = 0; b < 256; ++b) {
    const bool exists = opcode_from_byte(static_cast<std::uint8_t>(b), g).has_value();
    known += exists;
    for (int i = 0; i < 48; ++i) {
      RawInstruction raw = random_bytes(r, static_cast<std::uint8_t>(b));
      if (i == 0) std::fill(raw.begin() + 1, raw.end(), 0);
      if (i == 1) std::fill(raw.begin() + 1, raw.end(), 0xFF);
      check_record(g, raw, true, problems, stream);
    }
  }
  for (const auto& s : problems.list) ADD_FAILURE() << s;
  EXPECT_EQ(problems.count.load(), 0);
  EXPECT_EQ(known, g == G::CAYMAN ? 5 : 9);
}

INSTANTIATE_TEST_SUITE_P(Gen, Fuzz, ::testing::ValuesIn(kAllGenerations),
                         [](const ::testing::TestParamInfo<G>& i) { return gen_name(i.param); });

}  // namespace
}  // namespace pevp::isa::test
