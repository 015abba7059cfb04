// Functional coverage counts (docs/coverage.md): a Collector adds what micro-ops and faults hit (model.h), merges
// with others, and goes to and from the versioned JSON coverage file; report() prints the table -- per group the
// bins hit with their counts, the percentage, and the holes.
//
// A sample outside the model (a bin the table says the generation cannot have) is not a hit: it is kept apart,
// written to the file's "outside_model" list and shown by the table, because it means the model is wrong.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pevp/coverage/model.h"

namespace pevp::coverage {

// "pe-vp-coverage", version 1: docs/coverage.md "The file".
inline constexpr const char* kFileFormat = "pe-vp-coverage";
inline constexpr int kFileVersion = 1;

using Counts = std::map<BinKey, std::uint64_t>;

class Collector {
 public:
  // Tile grid positions are judged against `geometry` when given, else against each generation's preset.
  Collector() = default;
  explicit Collector(const isa::ArrayGeometry& geometry) : geometry_(geometry), has_geometry_(true) {}

  // One micro-op the sequencer scheduled on generation `g` (MicroOp::gen says where it came from too; `g` is the
  // platform's).
  void add(const pe::MicroOp& op, isa::Generation g);
  // One fault the SEQ reported, by its rule number (isa::Rule).
  void add_fault(std::uint16_t rule_number);
  // Counts one bin `n` times (a bin outside the model goes to outside_model()).
  void add_bin(const BinKey& key, std::uint64_t n = 1);
  // Adds another collection's counts and runs.
  void merge(const Collector& other);
  // Runs merged into this collection (a file written by one run says 1).
  std::uint64_t runs() const { return runs_; }
  void set_runs(std::uint64_t n) { runs_ = n; }

  const Counts& hits() const;
  const Counts& outside_model() const;
  std::uint64_t count(const BinKey& key) const;

 private:
  // Folds the micro-ops counted by their projection into the bins (each distinct projection sampled once).
  void settle() const;
  isa::ArrayGeometry geometry_{};
  bool has_geometry_ = false;
  // The micro-ops added since the last settle(), by generation and projection: a run repeats a few distinct ones.
  mutable std::map<std::pair<isa::Generation, SampleKey>, std::uint64_t> unsettled_;
  mutable Counts hits_, outside_;
  std::uint64_t runs_ = 1;
};

// The coverage file of `c` (JSON text, ending in a newline).
std::string to_json(const Collector& c);
// Reads a coverage file's text; throws std::invalid_argument "<source>: <field>: <rule>" naming the field
// ("bins[3].generation") of anything wrong: not JSON, another format or version, an unknown group, generation or
// bin, a count that is not a positive integer, a bin listed twice.
Collector from_json(const std::string& text, const std::string& source);
// Reads and parses a file (errors as from_json, or the file's own: "<path>: cannot open: ...").
Collector read_file(const std::string& path);
// Writes c to `path` (replaced atomically); false with *error naming the file.
bool write_file(const std::string& path, const Collector& c, std::string* error);

// Per group: bins possible, bins hit.
struct GroupSummary {
  std::string group;
  std::size_t bins = 0, hit = 0;
};
std::vector<GroupSummary> summarize(const Collector& c);
// The table: a total line, then per group its hits with their counts, its percentage and its holes by generation.
std::string report(const Collector& c, std::size_t files);

}  // namespace pevp::coverage
