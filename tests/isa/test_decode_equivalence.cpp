// decode() against a golden corpus recorded from the reference decoder: for a
// few thousand records of every generation -- builder-made baselines with each
// leaf mutated, random valid instructions (plain and mutated), random bodies
// under every opcode byte and a few unknown ones -- the decoded fields (leaf
// metadata and values, hashed) and every violation (rule, field, value,
// message, in order) must be exactly what the recorded decoder produced. This
// pins decode's observable behaviour while its implementation is optimised.
//
// The corpus stores the raw bytes, so the test does not depend on the random
// generators. To re-record (only when a behaviour change is intended):
//   PEVP_ISA_RECORD_GOLDEN=1 ./isa_tests --gtest_filter='isa.DecodeEquivalence*'
//   PEVP_ISA_RECORD_GOLDEN=verdicts ...   keeps the recorded records and records only their new verdicts
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "isa_random.h"

namespace pevp::isa::test {
namespace {

// The corpus in tests/isa/data/ (the directory comes from CMake, not from __FILE__, which a compiler cache may
// have filled in from another checkout).
std::string golden_path() { return std::string(PEVP_ISA_TEST_DATA) + "/decode_golden.txt"; }

std::string to_hex(const RawInstruction& r) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (auto b : r) s += digits[b >> 4], s += digits[b & 0xF];
  return s;
}

RawInstruction from_hex(const std::string& s) {
  RawInstruction r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::uint8_t>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return r;
}

// FNV-1a over a canonical listing of every field (leaf metadata and value).
std::string fields_digest(const Decoded& d) {
  std::ostringstream listing;
  listing << (d.layout ? d.layout->c_name : "-") << '\n';
  for (const auto& f : d.fields)
    listing << f.leaf.path << '|' << int(f.leaf.offset) << '|' << int(f.leaf.size) << '|' << int(f.leaf.bit_lo) << '|'
            << int(f.leaf.bit_width) << '|' << int(f.leaf.kind) << '|' << f.leaf.is_signed << '|' << f.leaf.top << '|'
            << f.value << '\n';
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : listing.str()) h = (h ^ c) * 1099511628211ull;
  std::ostringstream o;
  o << d.fields.size() << ' ' << std::hex << h;
  return o.str();
}

// One record's decoding: "R gen hex nfields hash" then one
// "V rule<TAB>field<TAB>value<TAB>message" line per violation.
std::string render(G g, const RawInstruction& raw, const Decoded& d) {
  std::ostringstream o;
  o << "R " << int(g) << ' ' << to_hex(raw) << ' ' << fields_digest(d) << '\n';
  for (const auto& v : d.violations) o << "V " << v.rule << '\t' << v.field << '\t' << v.value << '\t' << v.message << '\n';
  return o.str();
}

// Overwrites the raw bits of `leaf` (any kind, reserved included) with the low
// bits of `v`, so a mutation can put any value -- also an out-of-range one -- in.
void put_bits(RawInstruction& raw, const Leaf& leaf, std::uint64_t v) {
  if (leaf.bit_width != 0) {
    const unsigned mask = ((1u << leaf.bit_width) - 1) << leaf.bit_lo;
    raw[leaf.offset] = static_cast<std::uint8_t>((raw[leaf.offset] & ~mask) | ((v << leaf.bit_lo) & mask));
    return;
  }
  for (unsigned i = 0; i < leaf.size; ++i) raw[leaf.offset + i] = static_cast<std::uint8_t>(i < 8 ? v >> (8 * i) : v);
}

constexpr std::uint64_t kRandom = 1234;  // leaf_mutations: a random value

// `base` with each leaf in turn set to each of `values` (the leaf's all-ones
// pattern for ~0) -- reaches every rule's zero, limit and out-of-range cases.
void leaf_mutations(std::vector<std::pair<G, RawInstruction>>& out, G g, const RawInstruction& base,
                    std::initializer_list<std::uint64_t> values, Rng& r) {
  const auto op = opcode_from_byte(base[0], g);
  const std::vector<Leaf> leaves = leaves_of(layout_of(g, struct_of(*op)), base.data());
  for (const Leaf& leaf : leaves) {
    if (leaf.path == "header.opcode") continue;
    for (std::uint64_t v : values) {
      RawInstruction m = base;
      put_bits(m, leaf, v == kRandom ? static_cast<std::uint64_t>(r.uni(0, 0x7FFFFFFF)) : v);
      out.emplace_back(g, m);
    }
  }
}

// The corpus (only built when recording).
std::vector<std::pair<G, RawInstruction>> make_corpus() {
  std::vector<std::pair<G, RawInstruction>> out;
  Rng r(20240613);
  for (G g : kAllGenerations) {
    for (Opcode op : kAllOpcodes) {
      if (!exists_in(op, g)) continue;
      if (usable(op, g)) {
        // The builder baseline, and every leaf of it set to 0, all ones, 1 and
        // a random value.
        const RawInstruction base = base_of(g, op);
        out.emplace_back(g, base);
        leaf_mutations(out, g, base, {0, ~0ull, 1, kRandom}, r);
        if (op == Opcode::PE_MANAGE_SEED) leaf_mutations(out, g, save_seed_base(g), {0, ~0ull, kRandom}, r);
        // Random valid instructions, plain and with 1-3 random bytes changed;
        // the first two with every leaf set to 0 and to a random value.
        for (int k = 0; k < 24; ++k) {
          const RawInstruction v = random_valid(g, op, r);
          out.emplace_back(g, v);
          RawInstruction m = v;
          for (int n = static_cast<int>(r.uni(1, 3)); n > 0; --n) m[static_cast<std::size_t>(r.uni(1, 63))] = r.byte();
          out.emplace_back(g, m);
          if (k < 2) leaf_mutations(out, g, v, {0, kRandom}, r);
        }
      } else {
        // Decodable but not usable on g (MAVERICK's v4-only ops): the builder's
        // v4 baseline bytes, re-decoded here.
        out.emplace_back(g, base_of(G::MARIANA, op));
      }
      for (int k = 0; k < 16; ++k) out.emplace_back(g, random_bytes(r, static_cast<std::uint8_t>(op)));
    }
    for (std::uint8_t unknown : {0x00, 0x04, 0x0B, 0xFF}) out.emplace_back(g, random_bytes(r, unknown));
    for (int k = 0; k < 8; ++k) {  // fully random records
      RawInstruction raw;
      for (auto& b : raw) b = r.byte();
      out.emplace_back(g, raw);
    }
  }
  return out;
}

// The file codes each distinct message once ("M <n> <message>"; violations
// then say "#<n>"), which keeps the corpus small.
TEST(DecodeEquivalence, MatchesRecordedDecoder) {
  // PEVP_ISA_RECORD_GOLDEN=verdicts keeps the recorded raw records and records the current decoder's verdicts on
  // them (a deliberate rule change keeps its corpus, so the diff shows only the records whose verdict changed).
  const char* record = std::getenv("PEVP_ISA_RECORD_GOLDEN");
  if (record) {
    std::vector<std::pair<G, RawInstruction>> corpus;
    if (std::string(record) == "verdicts") {
      std::ifstream in(golden_path());
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("R ", 0) != 0) continue;
        std::istringstream fields(line.substr(2));
        int g = 0;
        std::string hex;
        fields >> g >> hex;
        corpus.emplace_back(static_cast<G>(g), from_hex(hex));
      }
      ASSERT_GT(corpus.size(), 2000u) << "no corpus to keep in " << golden_path();
    } else {
      corpus = make_corpus();
    }
    std::ofstream f(golden_path());
    ASSERT_TRUE(f) << "cannot write " << golden_path();
    std::map<std::string, std::size_t> messages;
    for (const auto& [g, raw] : corpus) {
      const Decoded d = decode(g, raw);
      for (const auto& v : d.violations)
        if (messages.emplace(v.message, messages.size()).second) f << "M " << messages.size() - 1 << ' ' << v.message << '\n';
      f << "R " << int(g) << ' ' << to_hex(raw) << ' ' << fields_digest(d) << '\n';
      for (const auto& v : d.violations)
        f << "V " << v.rule << '\t' << v.field << '\t' << v.value << "\t#" << messages.at(v.message) << '\n';
    }
    GTEST_SKIP() << "recorded " << golden_path();
  }
  std::ifstream f(golden_path());
  ASSERT_TRUE(f) << "missing golden corpus " << golden_path();
  std::string line;
  std::vector<std::string> messages;
  std::vector<std::pair<G, RawInstruction>> records;
  std::vector<std::string> expect;  // each record as render() prints it
  while (std::getline(f, line)) {
    if (line.rfind("M ", 0) == 0) {
      messages.push_back(line.substr(line.find(' ', 2) + 1));
      continue;
    }
    if (line.rfind("R ", 0) == 0) {
      std::istringstream in(line.substr(2));
      int g = 0;
      std::string hex;
      in >> g >> hex;
      records.emplace_back(static_cast<G>(g), from_hex(hex));
      expect.emplace_back();
    } else {
      const std::size_t hash = line.rfind("\t#");
      ASSERT_NE(hash, std::string::npos) << line;
      line = line.substr(0, hash + 1) + messages.at(std::stoul(line.substr(hash + 2)));
    }
    ASSERT_FALSE(expect.empty()) << "corpus does not start with a record";
    expect.back() += line + '\n';
  }
  ASSERT_GT(records.size(), 2000u);
  int mismatches = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& [g, raw] = records[i];
    const Decoded d = decode(g, raw);
    const std::string got = render(g, raw, d);
    if (got != expect[i] && ++mismatches <= 10)
      ADD_FAILURE() << "record " << i << " differs\nexpected:\n" << expect[i] << "got:\n" << got;
    // Every leaf is reachable by its path through the index, at its position.
    for (const auto& fld : d.fields)
      if (d.field(fld.leaf.path) != &fld && ++mismatches <= 10)
        ADD_FAILURE() << "record " << i << ": field('" << fld.leaf.path << "') does not find its leaf";
    // validate() gives the same for a Decoded whose paths are found through the
    // index map only, or by scanning the fields (one not made by decode()).
    Decoded by_index = d, by_scan = d;
    by_index.lookup = nullptr;
    by_scan.lookup = nullptr;
    by_scan.index = nullptr;
    for (const Decoded* other : {&by_index, &by_scan}) {
      Decoded again = *other;
      again.violations = validate(*other);
      if (render(g, raw, again) != got && ++mismatches <= 10)
        ADD_FAILURE() << "record " << i << ": validate() differs without decode()'s lookup tables";
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << records.size() << " records";
}

}  // namespace
}  // namespace pevp::isa::test
