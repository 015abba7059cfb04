// `pe-vp coverage FILE... [--merge-to OUT]`: reads coverage files (docs/coverage.md), merges them, prints the table
// -- per feature group the bins hit with their counts, the percentage and the holes -- and with --merge-to writes
// the merged file. A bad file is refused naming the file and the field; nothing is written then.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace pevp::platform {

struct CoverageCommand {
  std::vector<std::string> files;
  std::string merge_to;  // "" = print only
  bool quiet = false;    // no table (with --merge-to)
};

// 0, or 1 for a refused input file, 2 when the merged file cannot be written.
int run_coverage(const CoverageCommand& cmd, std::ostream& out, std::ostream& err);

}  // namespace pevp::platform
