// Each module describes its own configuration keys (params::Param: name, unit,
// range, source, member); the configuration aggregates them. Here: every
// described key is a key of the format, set and read back through the member
// it names, and docs/configuration.md documents it with the same unit and range.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "config_test_util.h"
#include "pevp/arr_seq/arr_seq.h"
#include "pevp/dma/dma_engines.h"
#include "pevp/energy/energy_model.h"
#include "pevp/hbm/dram_config.h"
#include "pevp/memory/memory.h"
#include "pevp/regfile/arr_seq_csrs.h"
#include "pevp/seq/seq.h"

namespace pevp::platform {
namespace {

struct Described {
  std::string key, unit;
  params::Kind kind;
  std::uint64_t lo, hi;
};

template <class Config>
void collect(std::vector<Described>& out, const std::string& section, const params::Params<Config>& list) {
  for (const auto& p : list) out.push_back({section + "." + std::string(p.name), std::string(p.unit), p.kind, p.lo, p.hi});
}

std::vector<Described> described() {
  std::vector<Described> all;
  collect(all, "arr_seq", arrseq::arr_seq_parameters());
  collect(all, "seq", seq::seq_parameters());
  collect(all, "sbuf", memory::memory_parameters());
  collect(all, "psum", memory::memory_parameters());
  collect(all, "timing", arrseq::timing_parameters());
  collect(all, "csrs", regfile::csrs_parameters());
  collect(all, "hbm", hbm::dram_parameters());
  collect(all, "host_memory", hbm::dram_parameters());
  collect(all, "dma", dma::dma_parameters());
  collect(all, "energy", energy::energy_parameters());
  return all;
}

// The cell `column` (0-based) of the key table row of `key` in docs/configuration.md.
std::string doc_cell(const std::string& doc, const std::string& key, unsigned column) {
  const std::string head = "| `" + key + "` |";
  const auto at = doc.find(head);
  if (at == std::string::npos) return "(no row)";
  const std::string row = doc.substr(at, doc.find('\n', at) - at);
  std::vector<std::string> cells;
  std::stringstream ss(row.substr(1));
  for (std::string c; std::getline(ss, c, '|');) {
    const auto b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? "" : c.substr(b, e - b + 1));
  }
  return column < cells.size() ? cells[column] : "(no cell)";
}

TEST(ModuleParams, EveryDescribedKeyIsSetAndReadThroughItsMember) {
  for (const Described& d : described()) {
    VpConfig c = preset(isa::Generation::MARIANA);
    const nlohmann::json before = to_json(c);
    const auto dot = d.key.find('.');
    const std::string section = d.key.substr(0, dot), name = d.key.substr(dot + 1);
    switch (d.kind) {
      case params::Kind::Count: apply_override(c, d.key + "=" + std::to_string(d.hi)); break;
      case params::Kind::TimeNs: apply_override(c, d.key + "=123 ns"); break;
      case params::Kind::Fraction: apply_override(c, d.key + "=0.5"); break;
      case params::Kind::Real: apply_override(c, d.key + "=" + std::to_string(d.hi)); break;
    }
    const nlohmann::json after = to_json(c);
    switch (d.kind) {
      case params::Kind::Count: EXPECT_EQ(after[section][name], d.hi) << d.key; break;
      case params::Kind::TimeNs: EXPECT_EQ(after[section][name], 123) << d.key; break;
      case params::Kind::Fraction: EXPECT_DOUBLE_EQ(after[section][name].get<double>(), 0.5) << d.key; break;
      case params::Kind::Real: EXPECT_DOUBLE_EQ(after[section][name].get<double>(), double(d.hi)) << d.key; break;
    }
    // Nothing else moved.
    nlohmann::json rest = after;
    rest[section][name] = before[section][name];
    EXPECT_EQ(rest, before) << d.key;
    if (d.kind == params::Kind::Count) {
      EXPECT_EQ(test::config_error([&] { apply_override(c, d.key + "=" + std::to_string(d.hi + 1)); }, d.key),
                d.key + " = " + std::to_string(d.hi + 1) + ": out of range (" + std::to_string(d.lo) + ".." +
                    std::to_string(d.hi) + ")");
    }
  }
}

// Every described key at its boundaries: the ends of its range are accepted and
// held exactly, one step outside is refused naming the key, and no value is
// quietly changed into another (a positive time below the resolution does not
// become 0, a fraction below the smallest share is not taken).
TEST(ModuleParams, EveryKeyIsCheckedAtItsBoundaries) {
  auto accepted = [](const std::string& key, const std::string& value) {
    VpConfig c = preset(isa::Generation::MARIANA);
    apply_override(c, key + "=" + value);
    validate(c);
    const auto dot = key.find('.');
    return to_json(c)[key.substr(0, dot)][key.substr(dot + 1)];
  };
  auto refused = [](const std::string& key, const std::string& value) {
    VpConfig c = preset(isa::Generation::MARIANA);
    return test::config_error([&] { apply_override(c, key + "=" + value); }, key);
  };
  for (const Described& d : described()) {
    SCOPED_TRACE(d.key);
    switch (d.kind) {
      case params::Kind::Count:
        EXPECT_EQ(accepted(d.key, std::to_string(d.lo)), d.lo);
        EXPECT_EQ(accepted(d.key, std::to_string(d.hi)), d.hi);
        if (d.lo > 0) {
          EXPECT_NE(refused(d.key, std::to_string(d.lo - 1)).find("out of range"), std::string::npos);
        }
        EXPECT_NE(refused(d.key, std::to_string(d.hi + 1)).find("out of range"), std::string::npos);
        // 2^64 is not clamped: out of range, as in a configuration file.
        EXPECT_EQ(refused(d.key, "18446744073709551616"),
                  d.key + " = \"18446744073709551616\": out of range (" + std::to_string(d.lo) + ".." +
                      std::to_string(d.hi) + ")");
        break;
      case params::Kind::TimeNs:
        EXPECT_EQ(accepted(d.key, "0"), 0);
        EXPECT_EQ(accepted(d.key, "1 ps").get<double>(), 0.001);
        EXPECT_EQ(accepted(d.key, "1000000"), 1000000);
        EXPECT_NE(refused(d.key, "1000000.001").find("out of range (0..1000000 ns)"), std::string::npos);
        EXPECT_NE(refused(d.key, "0.5 ps").find("below the simulation time resolution (1 ps)"), std::string::npos);
        EXPECT_NE(refused(d.key, "1e-20").find("below the simulation time resolution"), std::string::npos)
            << "a positive time must not become 0";
        EXPECT_NE(refused(d.key, "1.0005").find("not a multiple of the simulation time resolution"),
                  std::string::npos);
        break;
      case params::Kind::Fraction:
        EXPECT_DOUBLE_EQ(accepted(d.key, "0.0009765625").get<double>(), params::kMinFraction);
        EXPECT_DOUBLE_EQ(accepted(d.key, "1").get<double>(), 1.0);
        for (const char* bad : {"0.00097", "1e-16", "1e-19", "0", "-0.5", "1.0000001"})
          EXPECT_NE(refused(d.key, bad).find("out of range (0.0009765625 .. 1, a share of the full rate)"),
                    std::string::npos)
              << bad;
        break;
      case params::Kind::Real:
        EXPECT_DOUBLE_EQ(accepted(d.key, std::to_string(d.lo)).get<double>(), double(d.lo));
        EXPECT_DOUBLE_EQ(accepted(d.key, std::to_string(d.hi)).get<double>(), double(d.hi));
        EXPECT_DOUBLE_EQ(accepted(d.key, std::to_string(d.lo) + ".5").get<double>(), double(d.lo) + 0.5)
            << "a real key takes fractions";
        EXPECT_FALSE(refused(d.key, "1e400").empty()) << "an infinity is refused";
        for (const std::string& bad : {std::to_string(d.hi) + ".001", std::string("-1")})
          EXPECT_NE(refused(d.key, bad).find("out of range (" + std::to_string(d.lo) + " .. " + std::to_string(d.hi) +
                                             " " + d.unit + ")"),
                    std::string::npos)
              << bad;
        if (d.lo > 0) {
          EXPECT_NE(refused(d.key, "0").find("out of range"), std::string::npos);
        }
        EXPECT_NE(refused(d.key, "fast").find("expected a number of " + d.unit), std::string::npos);
        break;
    }
  }
}

TEST(ModuleParams, TheDocsGiveEachKeyItsUnitAndRange) {
  std::ifstream in(PEVP_CONFIG_DOC);
  ASSERT_TRUE(in.good()) << PEVP_CONFIG_DOC;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const Described& d : described()) {
    const std::string type = doc_cell(doc, d.key, 1), allowed = doc_cell(doc, d.key, 3);
    const std::string unit_suffix = ", " + d.unit;
    EXPECT_TRUE(type.size() >= unit_suffix.size() &&
                type.compare(type.size() - unit_suffix.size(), unit_suffix.size(), unit_suffix) == 0)
        << d.key << ": the docs say '" << type << "', the module '" << d.unit << "'";
    switch (d.kind) {
      case params::Kind::Count:
        EXPECT_EQ(allowed, std::to_string(d.lo) + " .. " + std::to_string(d.hi)) << d.key;
        break;
      case params::Kind::TimeNs: EXPECT_EQ(allowed, "0 .. 1000000") << d.key; break;
      case params::Kind::Fraction: EXPECT_EQ(allowed, "0.0009765625 .. 1") << d.key; break;
      case params::Kind::Real:
        EXPECT_EQ(allowed, std::to_string(d.lo) + " .. " + std::to_string(d.hi)) << d.key;
        break;
    }
  }
}

}  // namespace
}  // namespace pevp::platform
