// A minimal VCD reader for the tests: enough of IEEE 1364 section 18 to read back what trace::VcdWriter emits, and
// strict about what it promises. Shared by the trace suites and the command line's tests of its VCD files.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace pevp::trace::test {

// A minimal VCD reader: enough of IEEE 1364 section 18 to read back what the
// writer emits, and strict about what the writer promises (strictly increasing
// times, no value line that repeats the current value, declared ids only).
struct Vcd {
  struct Var {
    std::string name;  // dotted: scope path + reference
    unsigned width;
    std::string id;
  };
  std::string timescale;
  bool has_date = false;
  std::vector<Var> vars;
  std::map<std::string, std::size_t> var_of_name, var_of_id;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> history;  // per var: (time, value)
  std::vector<std::uint64_t> stamps;                                          // every #t in order
  std::map<std::uint64_t, std::size_t> lines_at;                              // value lines per time
  std::vector<std::string> problems;

  std::uint64_t at(const std::string& name, std::uint64_t t) const {
    const auto& h = history.at(var_of_name.at(name));
    std::uint64_t v = 0;
    for (const auto& [time, value] : h)
      if (time <= t) v = value;
    return v;
  }
  std::size_t changes_of(const std::string& name) const { return history.at(var_of_name.at(name)).size(); }
};

inline Vcd read_vcd(const std::string& text) {
  Vcd r;
  std::istringstream in(text);
  std::string tok;
  std::vector<std::string> scope;
  const auto until_end = [&] {
    std::string all, t;
    while (in >> t && t != "$end") all += (all.empty() ? "" : " ") + t;
    return all;
  };
  while (in >> tok && tok != "$enddefinitions") {
    if (tok == "$timescale") {
      r.timescale = until_end();
    } else if (tok == "$date") {
      r.has_date = true;
      until_end();
    } else if (tok == "$scope") {
      std::string kind, name;
      in >> kind >> name;
      scope.push_back(name);
      until_end();
    } else if (tok == "$upscope") {
      if (scope.empty()) r.problems.push_back("$upscope without $scope");
      else scope.pop_back();
      until_end();
    } else if (tok == "$var") {
      std::string type, id, ref;
      unsigned width = 0;
      in >> type >> width >> id >> ref;
      const std::string rest = until_end();  // an optional "[msb:lsb]"
      if (width > 1 && rest != "[" + std::to_string(width - 1) + ":0]") r.problems.push_back("range of " + ref);
      std::string full;
      for (const auto& s : scope) full += s + ".";
      full += ref;
      if (r.var_of_id.count(id)) r.problems.push_back("duplicate id " + id);
      if (scope.empty()) r.problems.push_back(ref + " declared outside any scope");
      r.var_of_id[id] = r.vars.size();
      r.var_of_name[full] = r.vars.size();
      r.vars.push_back({full, width, id});
    } else {
      until_end();  // $version, $comment
    }
  }
  if (!scope.empty()) r.problems.push_back("unclosed $scope");
  until_end();  // the $end of $enddefinitions
  r.history.resize(r.vars.size());
  std::vector<std::uint64_t> value(r.vars.size(), 0);
  std::vector<bool> seen(r.vars.size(), false);
  std::uint64_t now = 0;
  bool any_stamp = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line == "$dumpvars" || line == "$end") continue;
    if (line[0] == '#') {
      const std::uint64_t t = std::stoull(line.substr(1));
      if (any_stamp && t <= now) r.problems.push_back("time " + line + " not after " + std::to_string(now));
      now = t;
      any_stamp = true;
      r.stamps.push_back(t);
      continue;
    }
    std::string id;
    std::uint64_t v = 0;
    if (line[0] == 'b') {
      const auto sp = line.find(' ');
      const std::string bits = line.substr(1, sp - 1);
      if (bits.size() > 1 && bits[0] == '0') r.problems.push_back("leading zero in " + line);
      for (char c : bits) v = v * 2 + static_cast<std::uint64_t>(c == '1');
      id = line.substr(sp + 1);
    } else if (line[0] == '0' || line[0] == '1') {
      v = line[0] == '1';
      id = line.substr(1);
    } else {
      r.problems.push_back("unreadable line '" + line + "'");
      continue;
    }
    if (!r.var_of_id.count(id)) {
      r.problems.push_back("undeclared id in '" + line + "'");
      continue;
    }
    const std::size_t k = r.var_of_id[id];
    if ((line[0] == 'b') != (r.vars[k].width > 1)) r.problems.push_back("scalar/vector mismatch in '" + line + "'");
    if (seen[k] && value[k] == v) r.problems.push_back("not a change at #" + std::to_string(now) + ": '" + line + "'");
    seen[k] = true;
    value[k] = v;
    r.history[k].emplace_back(now, v);
    ++r.lines_at[now];
  }
  return r;
}

}  // namespace pevp::trace::test
