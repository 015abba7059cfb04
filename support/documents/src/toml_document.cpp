// TOML documents as JSON (see documents.h).
#include <algorithm>
#include <utility>

#include <toml++/toml.h>

#include "pevp/documents/documents.h"

namespace pevp::documents {
namespace {

using Doc = nlohmann::ordered_json;

// Tables, arrays and scalars map one to one, each table's keys in the file's order (toml++ keeps them sorted). The
// recursion is bounded: check_toml_nesting has passed the text.
Doc to_doc(const toml::node& node, const std::string& key, const std::string& source) {
  if (const toml::table* t = node.as_table()) {
    std::vector<std::pair<std::string, const toml::node*>> entries;
    for (const auto& [k, v] : *t) entries.emplace_back(std::string(k.str()), &v);
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      const toml::source_position pa = a.second->source().begin, pb = b.second->source().begin;
      return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
    });
    Doc o = Doc::object();
    for (const auto& [name, v] : entries) o[name] = to_doc(*v, key.empty() ? name : key + "." + name, source);
    return o;
  }
  if (const toml::array* a = node.as_array()) {
    Doc arr = Doc::array();
    for (const toml::node& v : *a) arr.push_back(to_doc(v, key, source));
    return arr;
  }
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* b = node.as_boolean()) return b->get();
  throw DocumentError(key, source + ": " + key + ": a date or time is no parameter value");
}

}  // namespace

nlohmann::ordered_json parse_toml(std::string_view text, const std::string& source) {
  check_toml_nesting(text, source);
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw DocumentError("", source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
                                std::string(e.description()));
  }
  return to_doc(table, "", source);
}

}  // namespace pevp::documents
