// A sweep's files (see results.h).
#include "pevp/sweep/results.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "pevp/documents/documents.h"
#include "pevp/files/output_file.h"

namespace pevp::sweep {
namespace {

using nlohmann::json;

// A record holds a point's figures and at most a 2,000-character error: a few KiB. The bound leaves room for any
// number of stall reasons and opcodes and keeps a wrong file in points/ from costing more.
constexpr std::size_t kMaxRecordBytes = std::size_t{1} << 20;

// CSV fields: quoted when they hold a separator, a quote or a line break (RFC 4180).
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Numbers as the CSV spells them: integers exactly, others with 10 significant digits (enough for every figure,
// and the same text for the same double on every backend).
std::string number(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", v.get<double>());
    return text;
  }
  if (v.is_null()) return "";
  return value_text(v);
}

const json& at(const json& doc, const char* key) {
  static const json null;
  const auto it = doc.find(key);
  return it == doc.end() ? null : *it;
}

// One run of the layer (its count multiplies it only in the network totals), in decimal: a topology may give sides
// whose product exceeds 64 bits (such a point fails to run, but its row still says what it was).
std::string macs_per_run(const Gemm& g) {
  unsigned __int128 v = static_cast<unsigned __int128>(g.m) * g.k;
  const bool wraps = g.n != 0 && v > ~static_cast<unsigned __int128>(0) / g.n;
  if (wraps) return std::to_string(static_cast<double>(g.m) * static_cast<double>(g.k) * static_cast<double>(g.n));
  v *= g.n;
  std::string text;
  do {
    text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return text;
}

}  // namespace

Fnv1a& Fnv1a::add(std::string_view text) {
  for (unsigned char c : text) {
    hash_ ^= c;
    hash_ *= 0x100000001b3ULL;  // the FNV-1a 64 prime
  }
  return *this;
}

std::string Fnv1a::hex() const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash_));
  return hex;
}

std::string key_of(const std::string& text) { return Fnv1a().add(text).hex(); }

json to_json(const PlannedPoint& p) {
  json params = json::array();
  for (const Param& q : p.point.params) params.push_back({{"name", q.name}, {"value", q.value}});
  return {{"key", p.key},
          {"index", p.point.index},
          {"configuration", p.point.configuration},
          {"workload", p.point.workload},
          {"layer_index", p.point.layer_index},
          {"layer", {{"name", p.point.layer.name}, {"m", p.point.layer.m}, {"k", p.point.layer.k},
                     {"n", p.point.layer.n}, {"count", p.point.layer.count}}},
          {"params", params},
          {"gen", p.gen},
          {"dtype", p.dtype},
          {"args", p.args}};
}

namespace {
constexpr const char* kPlanFormat = "pe-vp sweep plan 1";
}  // namespace

json to_json(const SweepPlan& plan) {
  json points = json::array();
  for (const PlannedPoint& p : plan.points) points.push_back(to_json(p));
  json doc = {{"format", kPlanFormat}, {"name", plan.name}, {"spec", plan.spec_path},
              {"swept", plan.swept},   {"points", points}};
  if (!plan.baseline.empty()) doc["baseline"] = plan.baseline;  // a plan without one reads as before
  return doc;
}

void write_plan(std::ostream& out, const SweepPlan& plan) {
  json head = {{"format", kPlanFormat}, {"name", plan.name}, {"spec", plan.spec_path}, {"swept", plan.swept}};
  if (!plan.baseline.empty()) head["baseline"] = plan.baseline;
  std::string text = head.dump();
  text.pop_back();  // the closing '}': the points follow
  out << text << ",\"points\":[\n";
  for (std::size_t i = 0; i < plan.points.size(); ++i) out << (i ? ",\n" : "") << to_json(plan.points[i]).dump();
  out << "\n]}\n";
}

namespace {

// One element of a plan's "points"; throws json::exception when a member is missing or of another type.
PlannedPoint planned_point_from_json(const json& j) {
  PlannedPoint p;
  p.key = j.at("key").get<std::string>();
  p.point.index = j.at("index").get<std::size_t>();
  p.point.configuration = j.at("configuration").get<std::size_t>();
  p.point.workload = j.at("workload").get<std::string>();
  p.point.layer_index = j.at("layer_index").get<std::size_t>();
  const json& l = j.at("layer");
  p.point.layer = {l.at("name").get<std::string>(), l.at("m").get<std::uint64_t>(), l.at("k").get<std::uint64_t>(),
                   l.at("n").get<std::uint64_t>(), l.at("count").get<std::uint64_t>()};
  for (const json& q : j.at("params")) p.point.params.push_back({q.at("name").get<std::string>(), q.at("value")});
  p.gen = j.at("gen").get<std::string>();
  p.dtype = j.at("dtype").get<std::string>();
  p.args = j.at("args").get<std::vector<std::string>>();
  return p;
}

// The plan's head (all but its points), checked. Throws SpecError.
void read_head(const json& doc, const std::string& source, SweepPlan& plan) {
  if (!doc.is_object() || doc.value("format", "") != kPlanFormat)
    throw SpecError(source + ": not a pe-vp sweep plan (format \"pe-vp sweep plan 1\")");
  plan.name = doc.at("name").get<std::string>();
  plan.spec_path = doc.at("spec").get<std::string>();
  plan.swept = doc.at("swept").get<std::vector<std::string>>();
  if (doc.contains("baseline")) {
    if (!doc["baseline"].is_object()) throw SpecError(source + ": a malformed sweep plan: \"baseline\" is no object");
    plan.baseline = doc["baseline"];
  }
}

}  // namespace

SweepPlan plan_from_json(const json& doc, const std::string& source) {
  try {
    SweepPlan plan;
    read_head(doc, source, plan);
    for (const json& j : doc.at("points")) plan.points.push_back(planned_point_from_json(j));
    return plan;
  } catch (const json::exception& e) {
    throw SpecError(source + ": a malformed sweep plan: " + e.what());
  }
}

SweepPlan read_plan_text(std::string_view text, const std::string& source) {
  // Each point is taken out of the parse as its object ends and dropped from the document, so the plan of a
  // 1,000,000-point sweep is never one document in memory (4.7 GB for --collect). The head is checked after the
  // parse: nlohmann writes the keys sorted, so an older plan has its points before "spec" and "swept".
  SweepPlan plan;
  std::string malformed;  // the first point that is not one, reported after the head is found to be a plan's
  std::string member;     // the top-level member being read
  const json::parser_callback_t take_points = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1) member = parsed.is_string() ? parsed.get<std::string>() : "";
    // A point: root > "points" > point.
    if (event != json::parse_event_t::object_end || depth != 2 || member != "points") return true;
    if (!malformed.empty()) return false;
    try {
      plan.points.push_back(planned_point_from_json(parsed));
    } catch (const json::exception& e) {
      malformed = "point " + std::to_string(plan.points.size()) + ": " + e.what();
    }
    return false;
  };
  try {
    const json head = documents::parse_json(text, source, documents::JsonComments::Refused, take_points);
    read_head(head, source, plan);
    if (!head.at("points").is_array()) throw SpecError(source + ": a malformed sweep plan: \"points\" is no list");
  } catch (const documents::DocumentError& e) {
    throw SpecError(e.what());
  } catch (const json::exception& e) {
    throw SpecError(source + ": a malformed sweep plan: " + e.what());
  }
  if (!malformed.empty()) throw SpecError(source + ": a malformed sweep plan: " + malformed);
  return plan;
}

std::string points_dir(const std::string& out_dir) { return out_dir + "/points"; }

std::string record_path(const std::string& out_dir, const std::string& key) {
  return points_dir(out_dir) + "/" + key + ".json";
}

std::optional<json> read_record(const std::string& out_dir, const std::string& key) {
  const std::string path = record_path(out_dir, key);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;  // the point has not run: the common case, no error made
  try {
    json doc = documents::parse_json(read_input_file(path, kMaxRecordBytes, "a sweep point's record"), path);
    if (!doc.is_object() || !doc.contains("status")) return std::nullopt;
    return doc;
  } catch (const WorkloadError&) {  // missing (the point has not run), a directory, unreadable, too large
    return std::nullopt;
  } catch (const documents::DocumentError&) {  // half written by hand, nested too deep, ...
    return std::nullopt;
  }
}

std::string write_text_atomically(const std::string& path, const std::string& text) {
  // Through pe-vp's one writer of files (support/files): a temporary file made with O_EXCL beside `path`, renamed
  // into place once whole, and every failure with the system's reason ("No space left on device").
  std::string error;
  return files::write_file(path, text.data(), text.size(), &error) ? std::string() : error;
}

std::string write_record(const std::string& out_dir, const std::string& key, const json& record) {
  return write_text_atomically(record_path(out_dir, key), record.dump(1) + "\n");
}

json ok_record(const json& stats, double wall_s) {
  json instr = json::object();
  for (const auto& [op, v] : at(at(stats, "instructions"), "by_opcode").items())
    instr[op] = v.value("instructions_retired", std::uint64_t{0});
  json r = {{"status", "ok"},
            {"wall_s", wall_s},
            {"cycles", at(stats, "cycles")},
            {"time_ns", at(stats, "simulated_time_ns")},
            {"utilisation", at(stats, "utilisation")},
            {"tflops", at(stats, "tflops")},
            {"peak_tflops", at(stats, "peak_tflops")},
            {"macs", at(stats, "macs")},
            {"stall_cycles", at(stats, "stall_cycles")},
            {"array_accounting", at(stats, "array_accounting")},
            {"instructions", instr}};
  if (stats.contains("scalesim")) r["scalesim"] = stats["scalesim"];
  // The energy model's figures for one run of the layer (docs/energy.md).
  if (stats.contains("energy")) {
    const json& e = at(stats, "energy");
    r["energy"] = {{"energy_pj", at(e, "total_pj")},
                   {"power_w", at(e, "average_power_w")},
                   {"tops_per_w", at(e, "tops_per_w")},
                   {"edp_pj_s", at(e, "edp_pj_s")}};
  }
  // The memory system's figures (docs/memory-system.md), when the point moved data through device memory.
  if (const json& m = at(stats, "memory"); m.contains("roofline_tflops")) {
    const json& h = at(m, "hbm");
    r["memory"] = {{"hbm_bytes", at(h, "bytes_read").get<double>() + at(h, "bytes_written").get<double>()},
                   {"hbm_gbps", at(h, "achieved_gbps")},
                   {"hbm_utilisation", at(h, "bandwidth_utilisation")},
                   {"intensity", at(m, "arithmetic_intensity")},
                   {"roofline_tflops", at(m, "roofline_tflops")}};
    // The configured bandwidth: the roofline's memory ceiling (the plots draw it beside the dtype's peak).
    if (h.contains("bandwidth_gbps")) r["memory"]["bandwidth_gbps"] = h["bandwidth_gbps"];
  }
  return r;
}

json failed_record(const std::string& error, int exit_status, double wall_s) {
  return {{"status", "failed"}, {"error", error}, {"exit_status", exit_status}, {"wall_s", wall_s}};
}

std::string results_csv(const SweepPlan& plan, const std::vector<std::optional<json>>& records, bool with_wall) {
  // The union of the object-valued figures' names, sorted: every row has every column.
  std::set<std::string> stalls, shares, opcodes;
  bool scalesim = false, memory = false, energy = false;
  for (const auto& r : records) {
    if (!r || r->value("status", "") != "ok") continue;
    memory = memory || r->contains("memory");
    energy = energy || r->contains("energy");
    for (const auto& [k, v] : at(*r, "stall_cycles").items()) stalls.insert(k);
    for (const auto& [k, v] : at(*r, "array_accounting").items()) shares.insert(k);
    for (const auto& [k, v] : at(*r, "instructions").items()) opcodes.insert(k);
    scalesim = scalesim || r->contains("scalesim");
  }
  std::ostringstream out;
  std::vector<std::string> header = {"key", "status", "error", "workload", "layer", "count", "m", "k", "n",
                                     "macs", "gen", "dtype"};
  for (const std::string& s : plan.swept) header.push_back("p:" + s);
  for (const char* h : {"cycles", "time_ns", "utilisation", "tflops", "peak_tflops"}) header.push_back(h);
  static const char* const kEnergy[] = {"energy_pj", "power_w", "tops_per_w", "edp_pj_s"};
  if (energy) header.insert(header.end(), std::begin(kEnergy), std::end(kEnergy));
  for (const std::string& s : stalls) header.push_back("stall:" + s);
  for (const std::string& s : shares) header.push_back("acct:" + s);
  for (const std::string& s : opcodes) header.push_back("instr:" + s);
  if (scalesim) header.insert(header.end(), {"scalesim_folds", "scalesim_total_cycles"});
  static const char* const kMemory[] = {"hbm_bytes",       "hbm_gbps", "hbm_utilisation", "intensity",
                                        "roofline_tflops", "bandwidth_gbps"};
  if (memory)
    for (const char* m : kMemory) header.push_back(std::string("mem:") + m);
  if (with_wall) header.push_back("wall_s");
  for (std::size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << field(header[i]);
  out << "\n";
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    const PlannedPoint& p = plan.points[i];
    const json r = i < records.size() && records[i] ? *records[i] : json{{"status", "missing"}};
    const bool ok = r.value("status", "") == "ok";
    std::vector<std::string> row = {p.key,
                                    r.value("status", ""),
                                    r.value("error", ""),
                                    p.point.workload,
                                    p.point.layer.name,
                                    std::to_string(p.point.layer.count),
                                    std::to_string(p.point.layer.m),
                                    std::to_string(p.point.layer.k),
                                    std::to_string(p.point.layer.n),
                                    macs_per_run(p.point.layer),
                                    p.gen,
                                    p.dtype};
    for (const std::string& s : plan.swept) {
      const json* v = find_param(p.point, s);
      row.push_back(v ? value_text(*v) : "");
    }
    for (const char* f : {"cycles", "time_ns", "utilisation", "tflops", "peak_tflops"})
      row.push_back(ok ? number(at(r, f)) : "");
    if (energy)
      for (const char* e : kEnergy) row.push_back(ok && r.contains("energy") ? number(at(at(r, "energy"), e)) : "");
    for (const std::string& s : stalls) row.push_back(ok ? number(at(at(r, "stall_cycles"), s.c_str())) : "");
    for (const std::string& s : shares) row.push_back(ok ? number(at(at(r, "array_accounting"), s.c_str())) : "");
    for (const std::string& s : opcodes) {
      const json& n = at(at(r, "instructions"), s.c_str());
      row.push_back(ok ? (n.is_null() ? "0" : number(n)) : "");
    }
    if (scalesim) {
      row.push_back(ok ? number(at(at(r, "scalesim"), "folds")) : "");
      row.push_back(ok ? number(at(at(r, "scalesim"), "total_cycles")) : "");
    }
    if (memory)
      for (const char* m : kMemory) row.push_back(ok && r.contains("memory") ? number(at(at(r, "memory"), m)) : "");
    if (with_wall) row.push_back(number(at(r, "wall_s")));
    for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << field(row[c]);
    out << "\n";
  }
  return out.str();
}

json summary(const SweepPlan& plan, const std::vector<std::optional<json>>& records) {
  struct Total {
    json params = json::object();
    double cycles = 0, weighted_util = 0, time_ns = 0, macs = 0, energy_pj = 0;
    bool energy = true;  // every point had an energy figure
    // The accounting's PE-cycle shares weighted by each run's cycles; the time the array waited for its data; the
    // device-memory bytes moved (runs through the memory system only).
    std::map<std::string, double> weighted_shares;
    double waiting_ns = 0, hbm_bytes = 0;
    double peak_weighted = 0;  // sum of count x time x peak_tflops: the network's peak, weighted by time
    bool peak = true;          // every point had a peak_tflops
    bool memory = false;
    std::size_t ok = 0, failed = 0, missing = 0;
  };
  std::map<std::pair<std::size_t, std::string>, Total> totals;
  std::size_t ok = 0, failed = 0, missing = 0;
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    const PlannedPoint& p = plan.points[i];
    Total& t = totals[{p.point.configuration, p.point.workload}];
    for (const std::string& s : plan.swept)
      if (const json* v = find_param(p.point, s)) t.params[s] = *v;
    const std::optional<json>& r = i < records.size() ? records[i] : std::nullopt;
    if (!r) {
      ++t.missing, ++missing;
      continue;
    }
    if (r->value("status", "") != "ok") {
      ++t.failed, ++failed;
      continue;
    }
    ++t.ok, ++ok;
    const double count = static_cast<double>(p.point.layer.count);
    const double cycles = at(*r, "cycles").get<double>();
    t.cycles += count * cycles;
    t.weighted_util += count * cycles * at(*r, "utilisation").get<double>();
    t.time_ns += count * at(*r, "time_ns").get<double>();
    if (const json& peak = at(*r, "peak_tflops"); peak.is_number())
      t.peak_weighted += count * at(*r, "time_ns").get<double>() * peak.get<double>();
    else
      t.peak = false;
    for (const auto& [category, share] : at(*r, "array_accounting").items()) {
      t.weighted_shares[category] += count * cycles * share.get<double>();
      if (category == "waiting_for_data") t.waiting_ns += count * at(*r, "time_ns").get<double>() * share.get<double>();
    }
    if (r->contains("memory")) {
      t.memory = true;
      t.hbm_bytes += count * at(at(*r, "memory"), "hbm_bytes").get<double>();
    }
    t.macs += count * static_cast<double>(p.point.layer.m) * static_cast<double>(p.point.layer.k) *
              static_cast<double>(p.point.layer.n);
    if (r->contains("energy")) t.energy_pj += count * at(at(*r, "energy"), "energy_pj").get<double>();
    else t.energy = false;
  }
  json networks = json::array();
  for (const auto& [where, t] : totals) {
    json n = {{"configuration", where.first}, {"workload", where.second}, {"params", t.params},
              {"points_ok", t.ok},            {"points_failed", t.failed}, {"points_missing", t.missing}};
    if (t.failed == 0 && t.missing == 0) {  // partial sums would mislead: totals only for complete networks
      n["cycles"] = t.cycles;
      n["time_ns"] = t.time_ns;
      n["macs"] = t.macs;
      n["utilisation"] = t.cycles > 0 ? t.weighted_util / t.cycles : 0.0;
      n["tflops"] = t.time_ns > 0 ? 2.0 * t.macs / (t.time_ns * 1e-9) / 1e12 : 0.0;
      // The dtype's peak on the configuration's array (time-weighted over the layers): tflops = utilisation x peak.
      if (t.peak) n["peak_tflops"] = t.time_ns > 0 ? t.peak_weighted / t.time_ns : 0.0;
      // Where the array's PE-cycles went over the whole network, and how much of its time was spent waiting for
      // data (docs/timing.md "Where the PE-cycles go"; docs/memory-system.md).
      json shares = json::object();
      for (const auto& [category, weighted] : t.weighted_shares) shares[category] = t.cycles > 0 ? weighted / t.cycles : 0.0;
      n["array_accounting"] = shares;
      n["waiting_for_data_ns"] = t.waiting_ns;
      if (t.memory) n["hbm_bytes"] = t.hbm_bytes;
      if (t.energy) {  // the network's layers one after another: energies and times add
        n["energy_pj"] = t.energy_pj;
        n["power_w"] = t.time_ns > 0 ? t.energy_pj * 1e-12 / (t.time_ns * 1e-9) : 0.0;
        n["tops_per_w"] = t.energy_pj > 0 ? 2.0 * t.macs / t.energy_pj : 0.0;
        n["edp_pj_s"] = t.energy_pj * t.time_ns * 1e-9;
      }
    }
    networks.push_back(n);
  }
  // Each complete network's speedup over the same workload in the baseline configuration ([plots] baseline), when
  // the spec named one and that network is complete.
  if (!plan.baseline.empty()) {
    const auto is_baseline = [&](const json& n) {
      for (const auto& [k, v] : plan.baseline.items())
        if (!n.at("params").contains(k) || n.at("params").at(k) != v) return false;
      return true;
    };
    for (json& n : networks) {
      if (!n.contains("time_ns")) continue;
      for (const json& b : networks)
        if (b.at("workload") == n.at("workload") && is_baseline(b) && b.contains("time_ns") &&
            n["time_ns"].get<double>() > 0)
          n["speedup"] = b["time_ns"].get<double>() / n["time_ns"].get<double>();
    }
  }
  return {{"name", plan.name},   {"spec", plan.spec_path}, {"points", plan.points.size()},
          {"ok", ok},            {"failed", failed},       {"missing", missing},
          {"swept", plan.swept}, {"baseline", plan.baseline}, {"notes", dtype_rate_notes(plan)},
          {"networks", networks}};
}

bool runs_fp8_at_bf16_rate(const std::string& dtype, bool double_row) {
  std::string lower;
  for (char c : dtype) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.rfind("fp8", 0) == 0 && !double_row;
}

std::vector<std::string> dtype_rate_notes(const SweepPlan& plan) {
  // (gen, dtype) -> the configurations, each described once by its swept values, in the plan's order.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> slow;
  std::set<std::size_t> seen;
  std::size_t configurations = 0;
  for (const PlannedPoint& p : plan.points) {
    if (!seen.insert(p.point.configuration).second) continue;
    ++configurations;
    const json* dr = find_param(p.point, "double_row");
    if (!runs_fp8_at_bf16_rate(p.dtype, dr && dr->is_boolean() && dr->get<bool>())) continue;
    std::string where;
    for (const std::string& s : plan.swept)
      if (const json* v = find_param(p.point, s)) where += (where.empty() ? "" : ", ") + s + "=" + value_text(*v);
    slow[{p.gen, p.dtype}].push_back(where);
  }
  std::vector<std::string> notes;
  for (const auto& [which, where] : slow) {
    const auto& [gen, dtype] = which;
    constexpr std::size_t kNamed = 3;
    std::string configs;
    if (where.size() == configurations) {
      configs = "every configuration";
    } else {
      for (std::size_t i = 0; i < where.size() && i < kNamed; ++i) configs += (i ? "; " : "") + where[i];
      if (where.size() > kNamed) configs += "; and " + std::to_string(where.size() - kNamed) + " more";
    }
    std::string note = "dtype " + dtype + " on " + gen + " without double_row runs at the bf16 rate (one contraction " +
                       "row per partition: the same cycles and peak_tflops as bf16) in " + configs + ": ";
    if (gen == "MAVERICK")
      note += "MAVERICK has no fp8 double_row (its perf_mode pumps MX sources only); an MX dtype (mxfp8_e4m3) runs "
              "more rows per partition";
    else
      note += "set double_row = true ([set] or [grid]) to contract two fp8 rows per partition, twice the bf16 rate";
    notes.push_back(note);
  }
  return notes;
}

}  // namespace pevp::sweep
