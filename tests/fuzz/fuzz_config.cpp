// libFuzzer harness: the platform configuration (config.h) on arbitrary text -- a JSON file through load_config,
// or `--set key=value` lines through apply_overrides and apply_override. Its contract: every rejected input is a
// ConfigError (the harness catches nothing else: a nlohmann::json exception, std::out_of_range or bad_alloc
// escaping is a finding), and apply_override(s) leave the configuration unchanged when they throw. For a
// configuration it accepts:
//   - validate() accepts it too;
//   - its dump (to_json, what --dump-config prints) loads back on another generation's preset to a configuration
//     whose dump is the same text.
//   - the order of --sets that name different keys does not matter (docs/configuration.md): reversed, they are
//     refused as well, or give the same configuration;
//   - every error of load_config starts with the file name.
// And the nesting bound (D-NESTING-DEPTH): a file json_too_deep finds a place in is refused with "nested deeper than
// 64 levels"; on every other file nlohmann's own parse (comments allowed), when it succeeds, is at most 64 levels
// deep -- measured here on the parsed document, independently of the text scan.
// Input: byte 0 selects the base generation (bits 1-2) and the form (bit 0: 0 a JSON file, 1 one --set per line);
// the rest is the text.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_util.h"
#include "pevp/documents/documents.h"
#include "pevp/platform/config.h"

// libsystemc.so calls sc_main from its own main; the fuzzer's main runs instead, so this is never called.
int sc_main(int, char*[]) { return 0; }

namespace {

using namespace pevp;
using platform::ConfigError;
using platform::VpConfig;

constexpr const char* kTarget = "fuzz_config";

// load_config reads a path: the text goes to one in-memory file, rewritten for each input.
const std::string& memory_file(std::string_view text) {
  static const int fd = memfd_create("fuzz_config.json", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0 ||
      pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    fuzz::fail(kTarget, "cannot write the in-memory config file");
  return path;
}

// The key of a --set as apply_override reads it: the text before '=', trimmed.
std::string key_of(std::string_view assignment) {
  std::string_view key = assignment.substr(0, assignment.find('='));
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.front()))) key.remove_prefix(1);
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.remove_suffix(1);
  return std::string(key);
}

// The most containers any value of `doc` sits inside, walked with a stack of its own (no recursion).
std::size_t nesting_depth(const nlohmann::json& doc) {
  std::size_t deepest = 0;
  std::vector<std::pair<const nlohmann::json*, std::size_t>> todo = {{&doc, 0}};
  while (!todo.empty()) {
    const auto [j, depth] = todo.back();
    todo.pop_back();
    if (!j->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const nlohmann::json& child : *j) todo.emplace_back(&child, depth + 1);
  }
  return deepest;
}

void check_nesting(std::string_view text, const std::string& path, const std::string* error) {
  const auto too_deep = documents::json_too_deep(text, documents::JsonComments::Allowed);
  if (too_deep) {
    if (!error || error->find("nested deeper than 64 levels") == std::string::npos)
      fuzz::fail(kTarget, "a file nested past the limit is not refused for it: " + (error ? *error : "accepted"));
    return;
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (!doc.is_discarded() && nesting_depth(doc) > documents::kMaxNestingDepth)
    fuzz::fail(kTarget, "the text scan passed a document " + std::to_string(nesting_depth(doc)) + " levels deep (" +
                            path + ")");
}

void check_accepted(const VpConfig& c, isa::Generation other) {
  try {
    platform::validate(c);
  } catch (const ConfigError& e) {
    fuzz::fail(kTarget, std::string("an accepted configuration fails validate: ") + e.what());
  }
  const std::string dump = platform::to_json(c).dump(2);
  VpConfig back;
  try {
    back = platform::from_json(nlohmann::json::parse(dump), platform::preset(other));
  } catch (const ConfigError& e) {
    fuzz::fail(kTarget, std::string("the dump of an accepted configuration is refused: ") + e.what() + "\n" + dump);
  }
  const std::string again = platform::to_json(back).dump(2);
  if (again != dump) fuzz::fail(kTarget, "the dump does not load back to itself\n--- dump\n" + dump + "\n--- reloaded\n" + again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const isa::Generation gen = fuzz::generation_of(static_cast<std::uint8_t>(data[0] >> 1));
  const isa::Generation other = fuzz::generation_of(static_cast<std::uint8_t>((data[0] >> 1) + 1));
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const VpConfig base = platform::preset(gen);

  if ((data[0] & 1) == 0) {
    VpConfig c;
    const std::string& path = memory_file(text);
    try {
      c = platform::load_config(path, base);
    } catch (const ConfigError& e) {
      if (std::string_view(e.what()).substr(0, path.size()) != path)
        fuzz::fail(kTarget, std::string("a load_config error that does not start with the file name: ") + e.what());
      const std::string error = e.what();
      check_nesting(text, path, &error);
      return 0;
    }
    check_nesting(text, path, nullptr);
    check_accepted(c, other);
    return 0;
  }

  std::vector<std::string> sets;
  for (std::size_t at = 0; at <= text.size() && sets.size() < 16;) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    sets.emplace_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  const std::string before = platform::to_json(base).dump();
  for (const std::string& s : sets) {
    VpConfig one = base;
    try {
      platform::apply_override(one, s);
    } catch (const ConfigError&) {
      if (platform::to_json(one).dump() != before) fuzz::fail(kTarget, "a refused --set changed the configuration: " + s);
      continue;
    }
    check_accepted(one, other);
  }
  VpConfig all = base;
  bool accepted = true;
  try {
    platform::apply_overrides(all, sets);
  } catch (const ConfigError&) {
    if (platform::to_json(all).dump() != before) fuzz::fail(kTarget, "refused --sets changed the configuration");
    accepted = false;
  }
  if (accepted) check_accepted(all, other);

  std::set<std::string> keys;
  for (const std::string& s : sets) keys.insert(key_of(s));
  if (keys.size() != sets.size()) return 0;  // a key given twice keeps its last value: there the order counts
  VpConfig reversed = base;
  try {
    platform::apply_overrides(reversed, std::vector<std::string>(sets.rbegin(), sets.rend()));
  } catch (const ConfigError& e) {
    if (accepted) fuzz::fail(kTarget, std::string("--sets accepted in one order are refused in the other: ") + e.what());
    return 0;
  }
  if (!accepted) fuzz::fail(kTarget, "--sets refused in one order are accepted in the other");
  if (platform::to_json(reversed).dump() != platform::to_json(all).dump())
    fuzz::fail(kTarget, "--sets give another configuration in the other order");
  return 0;
}
