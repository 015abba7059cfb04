#include "pevp/coverage/collector.h"

#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"
#include "pevp/isa/generation.h"

namespace pevp::coverage {

void Collector::add(const pe::MicroOp& op, isa::Generation g) { ++unsettled_[{g, sample_key(op)}]; }

void Collector::settle() const {
  for (const auto& [at, n] : unsettled_) {
    const isa::Generation g = at.first;
    for (const BinKey& key : sample(at.second, g, has_geometry_ ? geometry_ : isa::preset_geometry(g)))
      (is_bin(key) ? hits_ : outside_)[key] += n;
  }
  unsettled_.clear();
}

const Counts& Collector::hits() const {
  settle();
  return hits_;
}

const Counts& Collector::outside_model() const {
  settle();
  return outside_;
}

void Collector::add_fault(std::uint16_t rule_number) {
  for (const BinKey& key : sample_fault(rule_number)) add_bin(key);
}

void Collector::add_bin(const BinKey& key, std::uint64_t n) { (is_bin(key) ? hits_ : outside_)[key] += n; }

void Collector::merge(const Collector& other) {
  settle();
  for (const auto& [key, n] : other.hits()) hits_[key] += n;
  for (const auto& [key, n] : other.outside_model()) outside_[key] += n;
  runs_ += other.runs_;
}

std::uint64_t Collector::count(const BinKey& key) const {
  const Counts& h = hits();
  const auto it = h.find(key);
  return it == h.end() ? 0 : it->second;
}

// ---- the file -------------------------------------------------------------------------------------------------

namespace {

nlohmann::json bins_json(const Counts& counts) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, n] : counts)
    out.push_back({{"group", key.group}, {"generation", key.generation}, {"bin", key.bin}, {"count", n}});
  return out;
}

[[noreturn]] void refuse(const std::string& source, const std::string& field, const std::string& rule) {
  throw std::invalid_argument(source + ": " + field + ": " + rule);
}

const nlohmann::json& member(const nlohmann::json& obj, const char* name, const std::string& source,
                             const std::string& where) {
  const auto it = obj.find(name);
  if (it == obj.end()) refuse(source, where + name, "missing");
  return *it;
}

std::string string_member(const nlohmann::json& obj, const char* name, const std::string& source,
                          const std::string& where) {
  const nlohmann::json& v = member(obj, name, source, where);
  if (!v.is_string()) refuse(source, where + name, "must be a string, not " + v.dump());
  return v.get<std::string>();
}

// One entry of "bins" or "outside_model" at `where` ("bins[3]."): its key and count, checked.
std::pair<BinKey, std::uint64_t> read_entry(const nlohmann::json& e, const std::string& source, const std::string& where,
                                            bool in_model) {
  const std::string at = where.substr(0, where.size() - 1);
  if (!e.is_object()) refuse(source, at, "must be an object {group, generation, bin, count}");
  for (const auto& item : e.items())
    if (item.key() != "group" && item.key() != "generation" && item.key() != "bin" && item.key() != "count")
      refuse(source, where + item.key(), "is not a field of a bin (group, generation, bin, count)");
  BinKey key{string_member(e, "group", source, where), string_member(e, "generation", source, where),
             string_member(e, "bin", source, where)};
  const nlohmann::json& count = member(e, "count", source, where);
  if (!count.is_number_unsigned() || count.get<std::uint64_t>() == 0)
    refuse(source, where + "count", "must be a positive integer, not " + count.dump());
  if (in_model) {
    const Group* group = find_group(key.group);
    if (!group) {
      std::string known;
      for (const Group& g : groups()) known += (known.empty() ? "" : ", ") + std::string(g.name);
      refuse(source, where + "group", "'" + key.group + "' is not a group of the model (" + known + ")");
    }
    if (group->per_generation && !isa::parse_generation(key.generation))
      refuse(source, where + "generation", "'" + key.generation + "' is not a generation (CAYMAN, MARIANA, "
                                           "MARIANA_PLUS, MAVERICK)");
    if (!group->per_generation && !key.generation.empty())
      refuse(source, where + "generation", "must be \"\": group " + key.group + " is not crossed with the generation");
    if (group->per_generation) key.generation = std::string(isa::name(*isa::parse_generation(key.generation)));
    if (!is_bin(key))
      refuse(source, where + "bin",
             "'" + key.bin + "' is not a bin of group " + key.group +
                 (key.generation.empty() ? "" : " on " + key.generation) + " (docs/coverage.md lists them)");
  }
  return {key, count.get<std::uint64_t>()};
}

}  // namespace

std::string to_json(const Collector& c) {
  nlohmann::json doc = {{"format", kFileFormat},
                        {"version", kFileVersion},
                        {"runs", c.runs()},
                        {"bins", bins_json(c.hits())},
                        {"outside_model", bins_json(c.outside_model())}};
  return doc.dump(1) + "\n";
}

Collector from_json(const std::string& text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    refuse(source, "(document)", std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) refuse(source, "(document)", "must be a JSON object");
  const std::string format = string_member(doc, "format", source, "");
  if (format != kFileFormat) refuse(source, "format", "'" + format + "' is not " + kFileFormat);
  const nlohmann::json& version = member(doc, "version", source, "");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kFileVersion)
    refuse(source, "version", version.dump() + " is not a version this pe-vp reads (" + std::to_string(kFileVersion) + ")");
  const nlohmann::json& runs = member(doc, "runs", source, "");
  if (!runs.is_number_unsigned()) refuse(source, "runs", "must be a non-negative integer, not " + runs.dump());
  Collector c;
  c.set_runs(runs.get<std::uint64_t>());
  for (const char* list : {"bins", "outside_model"}) {
    const bool in_model = std::string(list) == "bins";
    const nlohmann::json& entries = member(doc, list, source, "");
    if (!entries.is_array()) refuse(source, list, "must be an array");
    std::set<BinKey> seen;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string where = std::string(list) + "[" + std::to_string(i) + "].";
      auto [key, n] = read_entry(entries[i], source, where, in_model);
      if (!seen.insert(key).second)
        refuse(source, where.substr(0, where.size() - 1),
               "lists " + key.group + " " + key.generation + (key.generation.empty() ? "" : " ") + key.bin +
                   " a second time");
      if (in_model) {
        c.add_bin(key, n);
      } else if (is_bin(key)) {
        refuse(source, where + "bin", "'" + key.bin + "' is a bin of the model: it belongs in \"bins\"");
      } else {
        c.add_bin(key, n);
      }
    }
  }
  for (const auto& item : doc.items())
    if (item.key() != "format" && item.key() != "version" && item.key() != "runs" && item.key() != "bins" &&
        item.key() != "outside_model")
      refuse(source, item.key(), "is not a field of a coverage file (format, version, runs, bins, outside_model)");
  return c;
}

Collector read_file(const std::string& path) {
  std::string error;
  const std::optional<std::string> text = files::read_file(path, &error);
  if (!text) throw std::invalid_argument(error);
  return from_json(*text, path);
}

bool write_file(const std::string& path, const Collector& c, std::string* error) {
  const std::string text = to_json(c);
  return files::write_file(path, text.data(), text.size(), error);
}

// ---- the table ------------------------------------------------------------------------------------------------

std::vector<GroupSummary> summarize(const Collector& c) {
  std::vector<GroupSummary> out;
  for (const Group& g : groups()) out.push_back({std::string(g.name), 0, 0});
  for (const BinKey& key : all_bins())
    for (GroupSummary& s : out)
      if (s.group == key.group) {
        ++s.bins;
        if (c.count(key) != 0) ++s.hit;
      }
  return out;
}

namespace {
std::string percent(std::size_t hit, std::size_t of) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", of == 0 ? 100.0 : 100.0 * static_cast<double>(hit) / static_cast<double>(of));
  return text;
}
}  // namespace

std::string report(const Collector& c, std::size_t files) {
  std::ostringstream out;
  std::size_t bins = 0, hit = 0;
  const std::vector<GroupSummary> summary = summarize(c);
  for (const GroupSummary& s : summary) {
    bins += s.bins;
    hit += s.hit;
  }
  out << "pe-vp coverage: " << files << (files == 1 ? " file, " : " files, ") << c.runs()
      << (c.runs() == 1 ? " run: " : " runs: ") << hit << " of " << bins << " bins hit (" << percent(hit, bins) << ")\n";
  for (const GroupSummary& s : summary) {
    const Group& group = *find_group(s.group);
    out << "\n" << s.group << ": " << s.hit << " of " << s.bins << " bins (" << percent(s.hit, s.bins) << ") -- "
        << group.what << "\n";
    std::map<std::string, std::vector<std::string>> holes;  // by generation, in table order
    std::vector<std::string> generations;
    for (const BinKey& key : all_bins()) {
      if (key.group != s.group) continue;
      const std::uint64_t n = c.count(key);
      if (n != 0) {
        char line[160];
        std::snprintf(line, sizeof line, "  %-13s %-40s %12llu\n", key.generation.empty() ? "-" : key.generation.c_str(),
                      key.bin.c_str(), static_cast<unsigned long long>(n));
        out << line;
        continue;
      }
      if (!holes.count(key.generation)) generations.push_back(key.generation);
      holes[key.generation].push_back(key.bin);
    }
    std::size_t total = 0;
    for (const auto& [gen, list] : holes) total += list.size();
    if (total == 0) continue;
    out << "  holes (" << total << "):\n";
    for (const std::string& gen : generations) {
      std::string line = "    " + (gen.empty() ? std::string() : gen + ":");
      for (const std::string& b : holes[gen]) {
        if (line.size() + b.size() + 1 > 116) {
          out << line << "\n";
          line = "     ";
        }
        line += " " + b;
      }
      out << line << "\n";
    }
  }
  if (!c.outside_model().empty()) {
    out << "\noutside the model (samples the table says cannot happen: the model or the VP is wrong):\n";
    for (const auto& [key, n] : c.outside_model())
      out << "  " << key.group << " " << (key.generation.empty() ? "-" : key.generation) << " " << key.bin << " " << n
          << "\n";
  }
  return out.str();
}

}  // namespace pevp::coverage
