// TOML documents as JSON (see documents.h).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

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

// The offset of a line and column toml++ reports (both from 1; ASCII columns).
std::size_t offset_of(std::string_view text, const toml::source_position& at) {
  std::size_t offset = 0;
  for (std::size_t line = 1; line < at.line && offset < text.size(); ++line) {
    const std::size_t nl = text.find('\n', offset);
    offset = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  return std::min(text.size(), offset + (at.column > 0 ? at.column - 1 : 0));
}

// The first container (in the file's order) deeper than the limit in a parsed document, walked with a stack of its
// own. The text scan counts a header's segments once each, but a segment that names an array of tables ([[a]], then
// [a.b] or [[a.b]]) is two levels -- the array and its last table -- so a document the scan passed can be up to about
// twice the limit deep: never deep enough to hurt a walk, but past the limit, and refused here at its place.
std::optional<toml::source_position> first_too_deep(const toml::table& root) {
  std::optional<toml::source_position> first;
  std::vector<std::pair<const toml::node*, std::size_t>> todo = {{&root, 1}};
  const auto visit = [&](const toml::node& child, std::size_t depth) {
    if (!child.is_table() && !child.is_array()) return;
    if (depth <= kMaxNestingDepth) {
      todo.emplace_back(&child, depth);
      return;
    }
    const toml::source_position at = child.source().begin;
    if (!first || at.line < first->line || (at.line == first->line && at.column < first->column)) first = at;
  };
  while (!todo.empty()) {
    const auto [node, depth] = todo.back();
    todo.pop_back();
    if (const toml::table* t = node->as_table())
      for (const auto& [k, v] : *t) visit(v, depth + 1);
    else if (const toml::array* a = node->as_array())
      for (const toml::node& v : *a) visit(v, depth + 1);
  }
  return first;
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
  if (const auto at = first_too_deep(table)) detail::throw_too_deep(text, source, offset_of(text, *at), "TOML");
  return to_doc(table, "", source);
}

}  // namespace pevp::documents
