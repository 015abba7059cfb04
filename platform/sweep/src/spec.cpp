// The sweep spec (see spec.h and docs/sweeps.md).
#include "pevp/sweep/spec.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "pevp/documents/documents.h"
#include "pevp/sweep/workload_onnx.h"

namespace pevp::sweep {
namespace {

using nlohmann::json;
// The spec as read: its tables keep the order the file gives them (the grid's last key varies fastest; the CSV's
// p: columns follow the spec), which nlohmann::json's sorted objects would lose.
using Doc = nlohmann::ordered_json;

// A parameter value (a scalar) as the rest of the sweep holds it.
json scalar(const Doc& v) { return json::parse(v.dump()); }

std::string kind_of(const Doc& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "a table";
  return "nothing";
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// A parameter table with its nested tables flattened into dotted names: TOML reads `geometry.pe_rows = 64` (a
// bare dotted key) as a table `geometry` holding `pe_rows`, which is the configuration key geometry.pe_rows.
std::vector<std::pair<std::string, Doc>> flattened(const Doc& table, const std::string& prefix = "") {
  std::vector<std::pair<std::string, Doc>> out;
  for (const auto& [k, v] : table.items()) {
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object()) {
      if (v.empty()) out.emplace_back(name, v);  // an empty table: the value check names it
      for (auto& e : flattened(v, name)) out.push_back(std::move(e));
    } else {
      out.emplace_back(name, v);
    }
  }
  return out;
}

// The known names of a table, for "unknown key" messages.
void check_keys(const Doc& table, const std::vector<std::string>& known, const std::string& where,
                const std::string& source) {
  for (const auto& [k, v] : table.items())
    if (std::find(known.begin(), known.end(), k) == known.end())
      throw SpecError(source + ": " + where + (where.empty() ? "" : ".") + k + ": unknown key (" +
                      (where.empty() ? "the spec's" : where + "'s") + " keys: " + joined(known) + ")");
}

std::uint64_t positive(const Doc& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
    throw SpecError(where + ": expected a positive integer, got " + (v.is_number() ? v.dump() : kind_of(v)));
  return v.get<std::uint64_t>();
}

Network gemm_list(const Doc& w, const std::string& where) {
  Network net;
  net.name = w.contains("name") ? w["name"].get<std::string>() : "gemms";
  const Doc& list = w["gemms"];
  if (!list.is_array() || list.empty())
    throw SpecError(where + ".gemms: expected a non-empty list of {m, k, n} tables, got " + kind_of(list));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + ".gemms[" + std::to_string(i) + "]";
    const Doc& g = list[i];
    if (!g.is_object()) throw SpecError(at + ": expected a table {m, k, n}, got " + kind_of(g));
    for (const auto& [k, v] : g.items())
      if (k != "name" && k != "m" && k != "k" && k != "n" && k != "count")
        throw SpecError(at + "." + k + ": unknown key (a GEMM's keys: name, m, k, n, count)");
    Gemm gemm;
    for (const char* dim : {"m", "k", "n"})
      if (!g.contains(dim)) throw SpecError(at + ": " + dim + " is missing (C[m,n] = A[m,k] @ B[k,n])");
    gemm.m = positive(g["m"], at + ".m");
    gemm.k = positive(g["k"], at + ".k");
    gemm.n = positive(g["n"], at + ".n");
    if (g.contains("count")) gemm.count = positive(g["count"], at + ".count");
    if (g.contains("name") && !g["name"].is_string()) throw SpecError(at + ".name: expected a string");
    gemm.name = g.contains("name") ? g["name"].get<std::string>() : "gemm" + std::to_string(i);
    net.layers.push_back(gemm);
  }
  return net;
}

// A workload's file: as given when absolute, else in the spec's folder.
std::filesystem::path relative_to(const std::string& base_dir, const std::string& given) {
  std::filesystem::path path(given);
  if (path.is_relative()) path = std::filesystem::path(base_dir) / path;
  return path;
}

// The topology files a spec's workloads name, each read once: two workloads may name one file (a conv and a GEMM
// reading of it, or two names), and a FIFO can be read only once.
using TopologyTexts = std::map<std::string, std::string>;

Network workload(const Doc& w, const std::string& where, const std::string& source, const std::string& base_dir,
                 TopologyTexts& topologies) {
  if (!w.is_object()) throw SpecError(source + ": " + where + ": expected a table, got " + kind_of(w));
  check_keys(w, {"name", "network", "scalesim_conv", "scalesim_gemm", "gemms", "onnx", "batch"}, where, source);
  int sources = 0;
  for (const char* k : {"network", "scalesim_conv", "scalesim_gemm", "gemms", "onnx"}) sources += w.contains(k);
  if (sources != 1)
    throw SpecError(source + ": " + where + ": give exactly one of network, scalesim_conv, scalesim_gemm, gemms, " +
                    "onnx (" + std::to_string(sources) + " given)");
  if (w.contains("name") && !w["name"].is_string())
    throw SpecError(source + ": " + where + ".name: expected a string, got " + kind_of(w["name"]));
  if (w.contains("batch") && !w.contains("onnx"))
    throw SpecError(source + ": " + where + ".batch: only an onnx workload takes it (a built-in network takes its "
                    "batch in its spec: network = \"resnet50:batch=4\")");
  Network net;
  try {
    if (w.contains("onnx")) {
      if (!w["onnx"].is_string())
        throw SpecError(source + ": " + where + ".onnx: expected a path, got " + kind_of(w["onnx"]));
      std::optional<std::uint64_t> batch;
      if (w.contains("batch")) batch = positive(w["batch"], source + ": " + where + ".batch");
      net = read_onnx(relative_to(base_dir, w["onnx"].get<std::string>()).string(), batch);
    } else if (w.contains("gemms")) {
      net = gemm_list(w, source + ": " + where);
    } else if (w.contains("network")) {
      if (!w["network"].is_string())
        throw SpecError(source + ": " + where + ".network: expected a string, got " + kind_of(w["network"]));
      net = builtin_network(w["network"].get<std::string>());
    } else {
      const bool conv = w.contains("scalesim_conv");
      const Doc& p = w[conv ? "scalesim_conv" : "scalesim_gemm"];
      if (!p.is_string())
        throw SpecError(source + ": " + where + "." + (conv ? "scalesim_conv" : "scalesim_gemm") +
                        ": expected a path, got " + kind_of(p));
      const std::filesystem::path path = relative_to(base_dir, p.get<std::string>());
      // One file however it is spelled (./t.csv, a symlink, an absolute path): weakly_canonical resolves them.
      std::error_code ec;
      std::filesystem::path key = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
      if (ec) key = path.lexically_normal();
      auto text = topologies.find(key.string());
      if (text == topologies.end())
        text = topologies.emplace(key.string(), read_input_file(path.string(), kMaxInputBytes, "a SCALE-Sim topology"))
                   .first;
      net = conv ? parse_scalesim_conv_topology(text->second, path.string())
                 : parse_scalesim_gemm_topology(text->second, path.string());
    }
  } catch (const WorkloadError& e) {
    throw SpecError(source + ": " + where + ": " + e.what());
  }
  if (w.contains("name")) net.name = w["name"].get<std::string>();
  return net;
}

void check_value(const std::string& name, const Doc& v, const std::string& where) {
  if (!v.is_string() && !v.is_number() && !v.is_boolean())
    throw SpecError(where + ": expected a number, string or boolean, got " + kind_of(v));
  const auto want = [&](bool ok, const char* what) {
    if (!ok) throw SpecError(where + " = " + v.dump() + ": " + name + " takes " + what);
  };
  if (name == "gen" || name == "dtype" || name == "fp32_mode") want(v.is_string(), "a string");
  if (name == "data_path") want(v.is_string() && (v == "dma" || v == "host"), "\"dma\" or \"host\"");
  if (name == "mode")
    want(v.is_string() && (v == "timing" || v == "both" || v == "functional"), "timing, both or functional");
  if (name == "tile_n" || name == "sbuf_budget") want(v.is_number_integer() && v.get<std::int64_t>() >= 1, "a positive integer");
  if (name == "double_row" || name == "check" || name == "dependency_check") want(v.is_boolean(), "true or false");
  if (name == "inter_instr_delay")
    want(v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= 63,
         "0 (off) or 1..63 cycles (arr_cluster_cfg.inter_instr_dly_cnt is 6 bits)");
  if (name == "fifo_size") want(v.is_string() && (v == "full" || v == "single"), "\"full\" or \"single\"");
  if (name == "throttled_ports")
    want(v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= 0x1ff,
         "a mask of the 9 XBUS ports, 0..511 (bit set = throttled)");
  if (name.rfind("csr.", 0) == 0)
    want(v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= 0xffffffffLL,
         "a 32-bit unsigned value");
  if (param_kind(name, where) == ParamKind::ConfigKey && v.is_boolean())
    throw SpecError(where + " = " + v.dump() + ": configuration keys take numbers or strings");
}

std::vector<Param> fixed_params(const Doc& set, const std::string& source) {
  std::vector<Param> out;
  if (!set.is_object()) throw SpecError(source + ": set: expected a table, got " + kind_of(set));
  for (const auto& [k, v] : flattened(set)) {
    param_kind(k, source + ": set." + k);
    check_value(k, v, source + ": set." + k);
    out.push_back({k, scalar(v)});
  }
  return out;
}

// A grid's list may not repeat a value (the product would hold the same point twice); a zipped list may, since its
// rows vary together ("geometry.pe_rows" = [128, 256, 256] beside "geometry.pe_cols" = [256, 128, 256]) -- the zip's
// rows are checked whole instead (zip_rows_differ).
enum class Repeats { Refused, Allowed };

std::vector<std::pair<std::string, std::vector<json>>> swept_lists(const Doc& t, const char* table,
                                                                   const std::string& source, Repeats repeats) {
  std::vector<std::pair<std::string, std::vector<json>>> out;
  if (!t.is_object()) throw SpecError(source + ": " + table + ": expected a table, got " + kind_of(t));
  for (const auto& [k, v] : flattened(t)) {
    const std::string where = source + ": " + table + "." + k;
    param_kind(k, where);
    if (!v.is_array()) throw SpecError(where + ": expected a list of values, got " + kind_of(v));
    if (v.empty()) throw SpecError(where + ": the list is empty (a sweep over no value has no point)");
    std::vector<json> values;
    for (std::size_t i = 0; i < v.size(); ++i) {
      check_value(k, v[i], where + "[" + std::to_string(i) + "]");
      const json value = scalar(v[i]);
      if (repeats == Repeats::Refused)
        for (const json& seen : values)
          if (seen == value) throw SpecError(where + ": " + value.dump() + " is listed twice");
      values.push_back(value);
    }
    out.emplace_back(k, std::move(values));
  }
  return out;
}

// Two rows of the zip with every value equal would be one configuration swept twice.
void zip_rows_differ(const std::vector<std::pair<std::string, std::vector<json>>>& zip, const std::string& source) {
  if (zip.empty()) return;
  const std::size_t rows = zip.front().second.size();
  const auto row_text = [&](std::size_t r) {
    std::string s;
    for (const auto& [k, v] : zip) s += (s.empty() ? "" : ", ") + k + " = " + v[r].dump();
    return s;
  };
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = i + 1; j < rows; ++j) {
      bool same = true;
      for (const auto& [k, v] : zip) same = same && v[i] == v[j];
      if (same)
        throw SpecError(source + ": zip: row " + std::to_string(j) + " (" + row_text(j) + ") repeats row " +
                        std::to_string(i) + " (zipped lists vary together: each row is one configuration)");
    }
}

// The CSR fields a knob writes, as FACE:REGISTER.FIELD=VALUE.
std::vector<std::string> knob_writes(const std::string& name, const json& v) {
  if (name == "inter_instr_delay") {
    const auto n = v.get<std::int64_t>();
    if (n == 0) return {"cluster:arr_cluster_cfg.en_inter_instr_dly=0"};
    return {"cluster:arr_cluster_cfg.en_inter_instr_dly=1", "cluster:arr_cluster_cfg.inter_instr_dly_cnt=" + std::to_string(n)};
  }
  if (name == "dependency_check")
    return {std::string("top:queue_cfg.disable_dependency_check=") + (v.get<bool>() ? "0" : "1")};
  if (name == "fifo_size") return {std::string("top:queue_cfg.fifo_size_sel=") + (v == "single" ? "1" : "0")};
  // throttled_ports: the protected face's disable_throttle bits are the ports NOT throttled.
  return {"protected:throttle_cfg.disable_throttle=" + std::to_string(~v.get<std::int64_t>() & 0x1ff)};
}

std::string values_text(const std::vector<json>& values) {
  std::string s;
  for (const json& v : values) s += (s.empty() ? "" : ", ") + v.dump();
  return s;
}

// [plots] baseline = {NAME = VALUE, ...}: one configuration, named by its swept values. Every grid key with more than
// one value must be named (each picks one of its values); the zipped keys named must pick exactly one zip row. A key
// that is not swept, a value the sweep does not take, or a choice of none or several configurations is refused,
// naming the key and the values it could take.
std::vector<Param> plots_baseline(const Doc& plots, const SweepSpec& spec, const std::string& source) {
  if (!plots.is_object()) throw SpecError(source + ": plots: expected a table, got " + kind_of(plots));
  check_keys(plots, {"baseline"}, "plots", source);
  if (!plots.contains("baseline")) return {};
  const Doc& table = plots["baseline"];
  const std::string where = source + ": plots.baseline";
  if (!table.is_object())
    throw SpecError(where + ": expected a table of swept parameters and their values, e.g. { dtype = \"bf16\" }, got " +
                    kind_of(table));
  const std::vector<std::string> swept = spec.swept();
  if (swept.empty()) throw SpecError(where + ": nothing is swept ([grid] or [zip]): there is one configuration");
  const auto values_of = [&](const std::string& name) -> const std::vector<json>& {
    for (const auto* lists : {&spec.grid, &spec.zip})
      for (const auto& [k, v] : *lists)
        if (k == name) return v;
    throw SpecError(where + "." + name + ": not a swept parameter (swept: " + joined(swept) + ")");
  };
  std::vector<Param> chosen;
  for (const auto& [k, v] : flattened(table)) {
    const std::vector<json>& values = values_of(k);
    const json value = v.is_primitive() ? scalar(v) : json();
    if (std::find(values.begin(), values.end(), value) == values.end())
      throw SpecError(where + "." + k + " = " + (v.is_primitive() ? v.dump() : kind_of(v)) +
                      ": not a value the sweep takes (" + k + ": " + values_text(values) + ")");
    chosen.push_back({k, value});
  }
  const auto named = [&](const std::string& k) {
    return std::any_of(chosen.begin(), chosen.end(), [&](const Param& p) { return p.name == k; });
  };
  for (const auto& [k, v] : spec.grid)
    if (v.size() > 1 && !named(k))
      throw SpecError(where + ": " + k + " is not named, so it picks " + std::to_string(v.size()) +
                      " configurations (give one of its values: " + values_text(v) + ")");
  if (!spec.zip.empty()) {
    std::vector<std::size_t> rows;
    for (std::size_t r = 0; r < spec.zip.front().second.size(); ++r) {
      bool match = true;
      for (const Param& p : chosen)
        for (const auto& [k, v] : spec.zip)
          if (k == p.name && v[r] != p.value) match = false;
      if (match) rows.push_back(r);
    }
    std::vector<std::string> unnamed;
    for (const auto& [k, v] : spec.zip)
      if (!named(k)) unnamed.push_back(k + ": " + values_text(v));
    if (rows.empty())
      throw SpecError(where + ": no zip row has these values together (zipped lists vary together; the zip's " +
                      "lists: " + [&] {
                        std::string s;
                        for (const auto& [k, v] : spec.zip) s += (s.empty() ? "" : "; ") + k + ": " + values_text(v);
                        return s;
                      }() + ")");
    if (rows.size() > 1)
      throw SpecError(where + ": picks " + std::to_string(rows.size()) + " zip rows: name a zipped key (" +
                      [&] {
                        std::string s;
                        for (const std::string& u : unnamed) s += (s.empty() ? "" : "; ") + u;
                        return s;
                      }() + ")");
  }
  return chosen;
}

}  // namespace

const std::vector<std::string>& gemm_option_names() {
  static const std::vector<std::string> names = {"gen",         "dtype", "fp32_mode", "tile_n",
                                                 "double_row",  "sbuf_budget", "mode", "check", "data_path"};
  return names;
}

const std::vector<std::string>& csr_knob_names() {
  static const std::vector<std::string> names = {"inter_instr_delay", "dependency_check", "fifo_size",
                                                 "throttled_ports"};
  return names;
}

ParamKind param_kind(const std::string& name, const std::string& where) {
  const auto& opts = gemm_option_names();
  const auto& knobs = csr_knob_names();
  if (std::find(opts.begin(), opts.end(), name) != opts.end()) return ParamKind::GemmOption;
  if (std::find(knobs.begin(), knobs.end(), name) != knobs.end()) return ParamKind::CsrKnob;
  if (name.rfind("csr.", 0) == 0) {
    const std::string ref = name.substr(4);
    const auto colon = ref.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == ref.size())
      throw SpecError(where + ": a register parameter is csr.FACE:REGISTER[.FIELD] (FACE top, cluster, protected, "
                              "vp), e.g. \"csr.cluster:arr_cluster_cfg.inter_instr_dly_cnt\"");
    return ParamKind::Csr;
  }
  if (name.find('.') != std::string::npos) return ParamKind::ConfigKey;
  throw SpecError(where + ": unknown parameter '" + name + "' (gemm options: " + joined(opts) +
                  "; CSR knobs: " + joined(knobs) + ", csr.FACE:REGISTER.FIELD; configuration keys are dotted, e.g. "
                  "geometry.pe_rows -- docs/configuration.md)");
}

std::vector<std::string> SweepSpec::swept() const {
  std::vector<std::string> names;
  for (const auto& [k, v] : grid) names.push_back(k);
  for (const auto& [k, v] : zip) names.push_back(k);
  return names;
}

SweepSpec parse_spec(std::string_view text, SpecFormat format, const std::string& source, const std::string& base_dir) {
  Doc doc;
  try {
    doc = format == SpecFormat::Toml ? documents::parse_toml(text, source)
                                     : documents::parse_json<Doc>(text, source);
  } catch (const documents::DocumentError& e) {  // too deep, a syntax error, a number out of range, a date
    throw SpecError(e.what());
  }
  if (!doc.is_object()) throw SpecError(source + ": expected a JSON object at the top, got " + kind_of(doc));
  check_keys(doc, {"name", "workload", "set", "grid", "zip", "plots"}, "", source);
  SweepSpec spec;
  spec.source = source;
  spec.name = std::filesystem::path(source).stem().string();
  if (doc.contains("name")) {
    if (!doc["name"].is_string()) throw SpecError(source + ": name: expected a string, got " + kind_of(doc["name"]));
    spec.name = doc["name"].get<std::string>();
  }
  if (!doc.contains("workload"))
    throw SpecError(source + ": workload: missing (one or more [[workload]] tables: network, scalesim_conv, "
                             "scalesim_gemm, gemms or onnx)");
  const Doc ws = doc["workload"].is_array() ? doc["workload"] : Doc::array({doc["workload"]});
  if (ws.empty()) throw SpecError(source + ": workload: the list is empty");
  TopologyTexts topologies;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    Network net = workload(ws[i], "workload[" + std::to_string(i) + "]", source, base_dir, topologies);
    for (const Network& seen : spec.workloads)
      if (seen.name == net.name)
        throw SpecError(source + ": workload[" + std::to_string(i) + "]: a second workload named '" + net.name +
                        "' (give it another name = ...)");
    spec.workloads.push_back(std::move(net));
  }
  if (doc.contains("set")) spec.fixed = fixed_params(doc["set"], source);
  if (doc.contains("grid")) spec.grid = swept_lists(doc["grid"], "grid", source, Repeats::Refused);
  if (doc.contains("zip")) {
    spec.zip = swept_lists(doc["zip"], "zip", source, Repeats::Allowed);
    for (const auto& [k, v] : spec.zip)
      if (v.size() != spec.zip.front().second.size())
        throw SpecError(source + ": zip." + k + ": " + std::to_string(v.size()) + " values, but zip." +
                        spec.zip.front().first + " has " + std::to_string(spec.zip.front().second.size()) +
                        " (zipped lists vary together: give each as many)");
    zip_rows_differ(spec.zip, source);
  }
  // A name in two places would be ambiguous.
  std::vector<std::string> names;
  for (const Param& p : spec.fixed) names.push_back("set." + p.name);
  for (const auto& [k, v] : spec.grid) names.push_back("grid." + k);
  for (const auto& [k, v] : spec.zip) names.push_back("zip." + k);
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = i + 1; j < names.size(); ++j)
      if (names[i].substr(names[i].find('.') + 1) == names[j].substr(names[j].find('.') + 1))
        throw SpecError(source + ": " + names[j] + ": already given as " + names[i]);
  if (doc.contains("plots")) spec.baseline = plots_baseline(doc["plots"], spec, source);
  return spec;
}

SweepSpec read_spec(const std::string& path) {
  // The file first: one that is missing or a directory has no format to speak of (a folder "specs" named as the
  // spec said "unknown spec format ''"). The read is bounded, so a wrong file costs at most the limit.
  std::string text;
  try {
    text = read_input_file(path, kMaxInputBytes, "a sweep spec");
  } catch (const WorkloadError& e) {
    throw SpecError(e.what());
  }
  const std::string ext = std::filesystem::path(path).extension().string();
  SpecFormat format;
  if (ext == ".toml") format = SpecFormat::Toml;
  else if (ext == ".json") format = SpecFormat::Json;
  else throw SpecError(path + ": unknown spec format '" + ext + "' (.toml or .json)");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_spec(text, format, path, dir.empty() ? "." : dir);
}

std::vector<Point> expand(const SweepSpec& spec) {
  std::size_t configurations = spec.zip.empty() ? 1 : spec.zip.front().second.size();
  std::size_t layers = 0;
  for (const Network& w : spec.workloads) layers += w.layers.size();
  if (layers == 0) throw SpecError(spec.source + ": no workload has a layer: nothing to sweep");
  for (const auto& [k, v] : spec.zip)
    if (v.size() != configurations)
      throw SpecError(spec.source + ": zip." + k + ": zipped lists must have one length");
  for (const auto& [k, v] : spec.grid) {
    if (v.empty()) throw SpecError(spec.source + ": grid." + k + ": the list is empty");
    if (configurations > kMaxPoints / v.size())
      throw SpecError(spec.source + ": the grid has more than " + std::to_string(kMaxPoints) + " combinations");
    configurations *= v.size();
  }
  if (configurations == 0 || configurations > kMaxPoints / layers)
    throw SpecError(spec.source + ": " + std::to_string(configurations) + " configurations x " +
                    std::to_string(layers) + " layers: more than " + std::to_string(kMaxPoints) +
                    " points (split the sweep)");
  std::vector<Point> points;
  points.reserve(configurations * layers);
  const std::size_t zip_rows = spec.zip.empty() ? 1 : spec.zip.front().second.size();
  for (std::size_t c = 0; c < configurations; ++c) {
    std::vector<Param> params = spec.fixed;
    // The grid's product with its last key varying fastest, then the zip's row (the slowest of all).
    std::size_t rest = c % (configurations / zip_rows);
    std::vector<Param> grid_values(spec.grid.size());
    for (std::size_t g = spec.grid.size(); g-- > 0;) {
      const auto& [k, v] = spec.grid[g];
      grid_values[g] = {k, v[rest % v.size()]};
      rest /= v.size();
    }
    params.insert(params.end(), grid_values.begin(), grid_values.end());
    const std::size_t row = c / (configurations / zip_rows);
    for (const auto& [k, v] : spec.zip) params.push_back({k, v[row]});
    for (const Network& w : spec.workloads)
      for (std::size_t l = 0; l < w.layers.size(); ++l) {
        Point p;
        p.index = points.size();
        p.configuration = c;
        p.workload = w.name;
        p.layer_index = l;
        p.layer = w.layers[l];
        p.params = params;
        points.push_back(std::move(p));
      }
  }
  return points;
}

const nlohmann::json* find_param(const Point& p, const std::string& name) {
  for (const Param& q : p.params)
    if (q.name == name) return &q.value;
  return nullptr;
}

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

std::vector<std::string> gemm_arguments(const Point& p) {
  std::vector<std::string> a = {"--m", std::to_string(p.layer.m), "--k", std::to_string(p.layer.k),
                                "--n", std::to_string(p.layer.n)};
  bool mode = false, check = false;
  for (const Param& q : p.params) {
    switch (param_kind(q.name, q.name)) {
      case ParamKind::GemmOption:
        if (q.name == "mode") mode = true;
        if (q.name == "check") {
          check = q.value.get<bool>();
        } else if (q.name == "double_row") {
          if (q.value.get<bool>()) a.push_back("--double-row");
        } else {
          std::string option = "--" + q.name;
          std::replace(option.begin(), option.end(), '_', '-');
          a.insert(a.end(), {option, value_text(q.value)});
        }
        break;
      case ParamKind::CsrKnob:
        for (const std::string& w : knob_writes(q.name, q.value)) a.insert(a.end(), {"--csr", w});
        break;
      case ParamKind::Csr: a.insert(a.end(), {"--csr", q.name.substr(4) + "=" + value_text(q.value)}); break;
      case ParamKind::ConfigKey: a.insert(a.end(), {"--set", q.name + "=" + value_text(q.value)}); break;
    }
  }
  if (!mode) a.insert(a.end(), {"--mode", "timing"});
  if (!check) a.push_back("--no-check");
  return a;
}

}  // namespace pevp::sweep
