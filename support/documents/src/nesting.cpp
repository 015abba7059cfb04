// How deep a JSON or TOML text nests, read before a parser builds anything (see documents.h).
#include <vector>

#include "pevp/documents/documents.h"

namespace pevp::documents {
namespace {

// Past a JSON string that opens at text[i] (a '"'): nlohmann's lexer ends it at the first '"' not escaped by '\'.
std::size_t past_json_string(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') ++i;
    else if (text[i] == '"') return i + 1;
  }
  return text.size();
}

// Past a comment that opens at text[i] (a '/'), or i when none does: "//" runs to the line's end, "/*" to "*/".
std::size_t past_json_comment(std::string_view text, std::size_t i) {
  if (i + 1 >= text.size()) return i;
  if (text[i + 1] == '/') {
    const std::size_t nl = text.find('\n', i + 2);
    return nl == std::string_view::npos ? text.size() : nl;
  }
  if (text[i + 1] == '*') {
    const std::size_t end = text.find("*/", i + 2);
    return end == std::string_view::npos ? text.size() : end + 2;
  }
  return i;
}

// TOML's strings (toml.io 1.0, "String"): basic "..." with \ escapes, literal '...', and their multi-line forms
// """...""" and '''...''', whose closing delimiter may be followed by up to two more quotes of the content.
std::size_t past_toml_string(std::string_view text, std::size_t i) {
  const char quote = text[i];
  const bool escapes = quote == '"';
  if (text.compare(i, 3, std::string(3, quote)) == 0) {
    for (std::size_t j = i + 3; j < text.size(); ++j) {
      if (escapes && text[j] == '\\') {
        ++j;
      } else if (text.compare(j, 3, std::string(3, quote)) == 0) {
        j += 3;
        for (int extra = 0; extra < 2 && j < text.size() && text[j] == quote; ++extra) ++j;
        return j;
      }
    }
    return text.size();
  }
  for (std::size_t j = i + 1; j < text.size(); ++j) {
    if (text[j] == '\n') return j;  // a single-line string ends at its line: toml++ stops there with an error
    if (escapes && text[j] == '\\') ++j;
    else if (text[j] == quote) return j + 1;
  }
  return text.size();
}

}  // namespace

TextPosition position_of(std::string_view text, std::size_t offset) {
  TextPosition at;
  at.offset = offset;
  at.column = 0;
  const std::size_t upto = std::min(offset, text.size());
  for (std::size_t i = 0; i < upto; ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 0;
    } else {
      ++at.column;
    }
  }
  at.column += 1;  // the character at `offset` itself (or just past the end)
  return at;
}

std::optional<std::size_t> json_too_deep(std::string_view text, JsonComments comments, std::size_t max_depth) {
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      i = past_json_string(text, i);
      continue;
    }
    if (c == '/') {
      // Outside a string a '/' opens a comment or is a syntax error, where the parser stops: nothing after it counts.
      if (comments == JsonComments::Refused) return std::nullopt;
      if (const std::size_t end = past_json_comment(text, i); end != i) {
        i = end;
        continue;
      }
      return std::nullopt;
    }
    if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    ++i;
  }
  return std::nullopt;
}

std::optional<std::size_t> toml_too_deep(std::string_view text, std::size_t max_depth) {
  // Containers are made by a header ([a.b]: a table per segment; [[a.b]] one more, the array of tables), by a dotted
  // key (a.b.c = 1: a table per segment before the last) and by a value's array or inline table. `base` is the depth
  // of the table the current key is in; each open array or inline table keeps the base to return to.
  struct Open {
    char closer;        // ']' for an array, '}' for an inline table
    std::size_t base;   // the base outside it
  };
  std::vector<Open> open;
  // The document's own table is level 1, as a JSON document's outer object is: a document is as deep as the JSON
  // parse_toml makes of it.
  constexpr std::size_t kRoot = 1;
  std::size_t header = kRoot;  // the depth of the last header's table
  std::size_t base = kRoot;
  std::size_t key_dots = 0;
  bool in_key = true;     // reading a key (a statement's start, after '{' or after ',' in an inline table)
  bool line_start = true;  // nothing but blanks yet on a top-level line: a '[' opens a header
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '#') {
      const std::size_t nl = text.find('\n', i);
      i = nl == std::string_view::npos ? text.size() : nl;
      continue;
    }
    if (c == '"' || c == '\'') {
      i = past_toml_string(text, i);
      line_start = false;
      continue;
    }
    if (c == '\n') {
      if (open.empty()) {  // a new statement
        in_key = true;
        key_dots = 0;
        base = header;
        line_start = true;
      }
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '[' && open.empty() && line_start) {  // a header: [a.b.c] or [[a.b.c]]
      const bool array_of_tables = i + 1 < text.size() && text[i + 1] == '[';
      std::size_t depth = kRoot + (array_of_tables ? 2 : 1);
      if (depth > max_depth) return i;
      std::size_t j = i + (array_of_tables ? 2 : 1);
      while (j < text.size() && text[j] != ']' && text[j] != '\n') {
        if (text[j] == '"' || text[j] == '\'') {
          j = past_toml_string(text, j);
          continue;
        }
        if (text[j] == '.' && ++depth > max_depth) return j;
        ++j;
      }
      header = base = depth;
      in_key = false;  // the rest of the line holds nothing but a comment
      line_start = false;
      i = j;
      continue;
    }
    line_start = false;
    if (in_key) {
      if (c == '.' && base + ++key_dots > max_depth) return i;
      if (c == '=') in_key = false;
      if (c == '}' && !open.empty() && open.back().closer == '}') {  // an empty inline table {}
        base = open.back().base;
        open.pop_back();
        in_key = false;
        key_dots = 0;
      }
      ++i;
      continue;
    }
    if (c == '[' || c == '{') {
      // The value of the current key (key_dots + 1 deeper: its dotted tables and itself), or an array's element.
      const std::size_t depth = base + key_dots + 1;
      if (depth > max_depth) return i;
      open.push_back({c == '[' ? ']' : '}', base});
      base = depth;
      key_dots = 0;
      in_key = c == '{';
    } else if ((c == ']' || c == '}') && !open.empty()) {
      base = open.back().base;
      open.pop_back();
      key_dots = 0;
    } else if (c == ',' && !open.empty()) {
      key_dots = 0;
      in_key = open.back().closer == '}';
    }
    ++i;
  }
  return std::nullopt;
}

namespace detail {

void throw_too_deep(std::string_view text, const std::string& source, std::size_t offset, const char* language) {
  const TextPosition at = position_of(text, offset);
  throw DocumentError("", source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + language +
                              " nested deeper than " + std::to_string(kMaxNestingDepth) +
                              " levels (the limit for a document pe-vp reads; offset " + std::to_string(offset) +
                              ")");
}

}  // namespace detail

void check_json_nesting(std::string_view text, const std::string& source, JsonComments comments) {
  if (const auto at = json_too_deep(text, comments)) detail::throw_too_deep(text, source, *at, "JSON");
}

void check_toml_nesting(std::string_view text, const std::string& source) {
  if (const auto at = toml_too_deep(text)) detail::throw_too_deep(text, source, *at, "TOML");
}

}  // namespace pevp::documents
