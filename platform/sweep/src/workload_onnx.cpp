// ONNX models as sweep workloads (see workload_onnx.h): the reading and lowering are scripts/onnx_gemms.py's (Python's
// onnx package is the one complete reader of the format and of its shape inference); this side runs it, trusts
// nothing it prints before checking it, and groups the GEMMs by shape.
#include "pevp/sweep/workload_onnx.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "pevp/documents/documents.h"
#include "pevp/sweep/runner.h"

namespace pevp::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kFormat = "pevp-onnx-gemms-1";
// The script's exit statuses (scripts/onnx_gemms.py): the model refused with a message, python3-onnx missing.
constexpr int kRefused = 2;
constexpr int kNoOnnx = 3;

// ---------------------------------------------------------------------------------------------------------------
// The script's output

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& why) const {
    throw WorkloadError(source_ + ": the output of scripts/onnx_gemms.py is malformed: " + where + ": " + why);
  }

  const json& field(const json& object, const char* key, const std::string& where) const {
    if (!object.is_object()) fail(where, "expected an object");
    const auto it = object.find(key);
    if (it == object.end()) fail(where + "." + key, "missing");
    return *it;
  }

  std::string text(const json& object, const char* key, const std::string& where) const {
    const json& v = field(object, key, where);
    if (!v.is_string() || v.get_ref<const std::string&>().empty())
      fail(where + "." + key, "expected a non-empty string, got " + v.dump());
    return v.get<std::string>();
  }

  std::uint64_t positive(const json& object, const char* key, const std::string& where) const {
    const json& v = field(object, key, where);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0)
      fail(where + "." + key, "expected a positive integer, got " + v.dump());
    return v.get<std::uint64_t>();
  }

  const json& list(const json& object, const char* key, const std::string& where) const {
    const json& v = field(object, key, where);
    if (!v.is_array()) fail(where + "." + key, "expected a list, got " + v.dump());
    return v;
  }

 private:
  std::string source_;
};

OnnxGemm gemm_of(const Reader& r, const json& entry, const std::string& where) {
  OnnxGemm g;
  g.node = r.text(entry, "node", where);
  g.op = r.text(entry, "op", where);
  g.m = r.positive(entry, "m", where);
  g.k = r.positive(entry, "k", where);
  g.n = r.positive(entry, "n", where);
  g.count = r.positive(entry, "count", where);
  const json& dtype = r.field(entry, "dtype", where);
  if (dtype.is_string()) g.dtype = dtype.get<std::string>();
  else if (!dtype.is_null()) r.fail(where + ".dtype", "expected a string or null, got " + dtype.dump());
  return g;
}

// ---------------------------------------------------------------------------------------------------------------
// Running the script

// A folder of its own for one run's stdout and stderr, removed with it.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/pevp-onnx-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw WorkloadError("cannot make a temporary folder for scripts/onnx_gemms.py in " + pattern + ": " +
                          std::strerror(errno));
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string without_trailing_newlines(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// The last line of a Python traceback is the exception; the rest is the script's own stack.
std::string last_line(const std::string& text) {
  const std::string trimmed = without_trailing_newlines(text);
  const std::size_t at = trimmed.rfind('\n');
  return at == std::string::npos ? trimmed : trimmed.substr(at + 1);
}

std::string status_text(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "failed with exit status " + std::to_string(WEXITSTATUS(status));
}

// Why `path` cannot be a model, as scripts/onnx_gemms.py says it, or "".
std::string model_file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::string("cannot open: ") + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode)) return "not a regular file (a model is read from a file)";
  return "";
}

std::string file_stem(const std::string& path) { return fs::path(path).stem().string(); }

}  // namespace

std::string onnx_gemms_script() {
  if (const char* e = std::getenv("PEVP_ONNX_GEMMS"); e && *e) return e;
  const std::string source_tree = PEVP_SCRIPTS_DIR "/onnx_gemms.py";
  std::error_code ec;
  if (fs::exists(source_tree, ec)) return source_tree;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = self.parent_path().parent_path() / "share/pevp/scripts/onnx_gemms.py";
    if (fs::exists(installed, ec)) return installed.string();
  }
  return source_tree;  // named in the "not found" message
}

OnnxGemms parse_onnx_gemms(std::string_view json_text, const std::string& source) {
  const Reader r(source);
  json doc;
  try {
    doc = documents::parse_json(json_text, source);
  } catch (const documents::DocumentError& e) {
    throw WorkloadError(source + ": the output of scripts/onnx_gemms.py is not JSON: " + e.what());
  }
  if (!doc.is_object()) r.fail("the top", "expected an object");
  if (r.text(doc, "format", "the top") != kFormat)
    r.fail("format", doc["format"].dump() + ", expected \"" + kFormat + "\" (the script and pe-vp differ in version)");
  OnnxGemms out;
  out.model = r.text(doc, "model", "the top");
  const json& batch = r.field(doc, "batch", "the top");
  if (!batch.is_null()) out.batch = r.positive(doc, "batch", "the top");
  out.nodes = r.positive(doc, "nodes", "the top");
  const json& gemms = r.list(doc, "gemms", "the top");
  for (std::size_t i = 0; i < gemms.size(); ++i)
    out.gemms.push_back(gemm_of(r, gemms[i], "gemms[" + std::to_string(i) + "]"));
  const json& ignored = r.list(doc, "ignored", "the top");
  for (std::size_t i = 0; i < ignored.size(); ++i) {
    const std::string where = "ignored[" + std::to_string(i) + "]";
    out.ignored.push_back({r.text(ignored[i], "op", where), r.positive(ignored[i], "count", where)});
  }
  if (out.gemms.empty()) {
    const std::string what = ignored_text(out.ignored);
    throw WorkloadError(source + ": no Conv, Gemm or MatMul node: nothing to simulate" +
                        (what.empty() ? "" : " (" + what + ")"));
  }
  return out;
}

OnnxGemms run_onnx_gemms(const std::string& path, std::optional<std::uint64_t> batch) {
  // What needs no Python is refused here, in the script's words, without starting an interpreter for it.
  if (const std::string problem = model_file_problem(path); !problem.empty()) throw WorkloadError(path + ": " + problem);
  std::error_code ec;
  if (!fs::exists(kPython, ec))
    throw WorkloadError(path + ": reading ONNX models needs " + kPython + " and Debian's python3-onnx (apt-get install "
                        "python3 python3-onnx)");
  const std::string script = onnx_gemms_script();
  if (!fs::exists(script, ec))
    throw WorkloadError(path + ": " + script + " not found (set PEVP_ONNX_GEMMS to scripts/onnx_gemms.py)");
  std::vector<std::string> argv = {kPython, script, path};
  if (batch) argv.insert(argv.end(), {"--batch", std::to_string(*batch)});
  const ScratchDir scratch;
  const std::string out_path = scratch.path() + "/gemms.json", err_path = scratch.path() + "/stderr";
  int status = 0;
  try {
    status = run_process(argv, out_path, err_path);
  } catch (const std::runtime_error& e) {
    throw WorkloadError(path + ": " + e.what());
  }
  const std::string err = without_trailing_newlines(read_input_file(err_path, kMaxInputBytes, "the script's errors"));
  if (WIFEXITED(status) && (WEXITSTATUS(status) == kRefused || WEXITSTATUS(status) == kNoOnnx) && !err.empty())
    throw WorkloadError(err);  // the script's own message, which names the model
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw WorkloadError(path + ": " + script + " " + status_text(status) + (err.empty() ? "" : ": " + last_line(err)));
  return parse_onnx_gemms(read_input_file(out_path, kMaxInputBytes, "the GEMMs of an ONNX model"), path);
}

Network onnx_network(const OnnxGemms& gemms, const std::string& name) {
  Network net;
  net.name = name;
  net.ignored = gemms.ignored;
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, std::size_t> layer_of_shape;
  std::vector<std::size_t> nodes;  // per layer
  for (const OnnxGemm& g : gemms.gemms) {
    const auto [it, first] = layer_of_shape.try_emplace({g.m, g.k, g.n}, net.layers.size());
    if (first) {
      Gemm layer;
      layer.name = g.node;
      layer.m = g.m;
      layer.k = g.k;
      layer.n = g.n;
      layer.count = g.count;
      net.layers.push_back(layer);
      nodes.push_back(1);
      continue;
    }
    Gemm& layer = net.layers[it->second];
    if (__builtin_add_overflow(layer.count, g.count, &layer.count))
      throw WorkloadError(gemms.model + ": the count of " + std::to_string(g.m) + " x " + std::to_string(g.k) + " x " +
                          std::to_string(g.n) + " GEMMs overflows 64 bits");
    ++nodes[it->second];
  }
  for (std::size_t i = 0; i < net.layers.size(); ++i)
    if (nodes[i] > 1) net.layers[i].name += " (+" + std::to_string(nodes[i] - 1) + " more)";
  for (const Gemm& layer : net.layers) macs(layer);  // a layer whose MACs overflow is refused here, not mid-sweep
  return net;
}

Network read_onnx(const std::string& path, std::optional<std::uint64_t> batch) {
  const OnnxGemms gemms = run_onnx_gemms(path, batch);
  std::string name = file_stem(path);
  if (gemms.batch) name += ":batch=" + std::to_string(*gemms.batch);
  return onnx_network(gemms, name);
}

}  // namespace pevp::sweep
