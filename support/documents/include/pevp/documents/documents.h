// Reading a document a user gave as text: a configuration file (--config of every command, pe-vp serve too),
// a checkpoint's configuration section, a sweep spec in JSON or TOML, a sweep's plan, point records and Slurm chunk
// list. Each is parsed here and nowhere else, with its nesting bounded before a container is built.
//
// Why the bound: the parsers are iterative, but what follows them is not -- nlohmann::json's dump() and operator==,
// toml++'s table destructor, the configuration's and the sweep spec's own walks recurse once per level, so a file
// of 100,000 nested `[` (200 KB) ended the process with SIGSEGV. No document pe-vp writes nests deeper than 5 levels
// (a sweep plan's points[i].params[j]); the bound, kMaxNestingDepth, is far above that and far below what
// any walk's stack can take (D-NESTING-DEPTH in docs/model-decisions.md).
//
// Every refusal is a DocumentError naming the source, the line and column (and so the offset) and the rule:
//   "cfg.json:1:65: JSON nested deeper than 64 levels (the limit for a document pe-vp reads; offset 64)".
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pevp::documents {

// The most containers (JSON objects and arrays; TOML tables, arrays of tables, arrays and inline tables) one value
// may sit inside. D-NESTING-DEPTH.
inline constexpr std::size_t kMaxNestingDepth = 64;

// A document that cannot be read. what() is the whole message, starting with the source; key() is the dotted key
// it is about when there is one (a number out of range), else "".
class DocumentError : public std::runtime_error {
 public:
  DocumentError(std::string key, const std::string& message) : std::runtime_error(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// A place in a text, as an editor shows it: line and column count from 1, the column in bytes.
struct TextPosition {
  std::size_t offset = 0;
  std::size_t line = 1;
  std::size_t column = 1;
};
TextPosition position_of(std::string_view text, std::size_t offset);

// Whether a JSON text may hold // and /* */ comments (configuration files may; files pe-vp writes have none).
enum class JsonComments { Refused, Allowed };

// The offset of the first `[` or `{` (outside strings and comments) that opens a container deeper than `max_depth`,
// or nothing. It reads the text as nlohmann's lexer does, so on every text the parser accepts -- and on the part of
// any other text it reads before its syntax error -- the two agree on each container's depth.
std::optional<std::size_t> json_too_deep(std::string_view text, JsonComments comments,
                                         std::size_t max_depth = kMaxNestingDepth);
// The same for TOML: the offset of the first header, dotted key, array or inline table that would put a container
// deeper than `max_depth`, counting as the JSON of parse_toml does: the document's table is level 1, a header [a.b]
// adds two tables, a dotted key a.b.c = 1 two, [[a]] an array and its table. toml++ must never build such a
// document: its tables are destroyed recursively, also when it throws on a syntax error further on.
std::optional<std::size_t> toml_too_deep(std::string_view text, std::size_t max_depth = kMaxNestingDepth);

// Throws DocumentError "<source>:<line>:<column>: JSON nested deeper than 64 levels (...)" when json_too_deep finds
// a place (toml_too_deep and "TOML" for check_toml_nesting).
void check_json_nesting(std::string_view text, const std::string& source, JsonComments comments);
void check_toml_nesting(std::string_view text, const std::string& source);

namespace detail {
// "<source>:<line>:<column>: <language> nested deeper than 64 levels (the limit ...; offset N)".
[[noreturn]] void throw_too_deep(std::string_view text, const std::string& source, std::size_t offset,
                                 const char* language);
// "<source>:<line>:<column>: JSON syntax error: <nlohmann's reason>" for a parse error at byte `byte`.
[[noreturn]] void throw_syntax_error(std::string_view text, const std::string& source, std::size_t byte,
                                     const std::string& what);
// "<source>: <key>: number overflow parsing '1e400' (a JSON number beyond the range of a double)".
[[noreturn]] void throw_number_error(const std::string& source, const std::vector<std::string>& keys,
                                     const std::string& what);
}  // namespace detail

// A JSON document (nlohmann::json, or nlohmann::ordered_json to keep the file's key order) parsed with its nesting
// bounded. Throws DocumentError for a nesting too deep, a syntax error (line and column) and a number beyond the
// range of a double (naming its key). `callback` is nlohmann's parser callback (a reader that takes a large
// document's elements out as they end).
template <class Json = nlohmann::json>
Json parse_json(std::string_view text, const std::string& source, JsonComments comments = JsonComments::Refused,
                typename Json::parser_callback_t callback = nullptr) {
  check_json_nesting(text, source, comments);
  const bool ignore_comments = comments == JsonComments::Allowed;
  try {
    return Json::parse(text, callback, /*allow_exceptions=*/true, ignore_comments);
  } catch (const typename Json::parse_error& e) {
    detail::throw_syntax_error(text, source, e.byte, e.what());
  } catch (const typename Json::out_of_range& e) {
    // The error path only: parse again, following the keys down to the value, to name the one out of range.
    std::vector<std::string> keys;
    const typename Json::parser_callback_t track_keys = [&](int depth, typename Json::parse_event_t event,
                                                            Json& parsed) {
      if (event == Json::parse_event_t::key && depth >= 1) {
        keys.resize(static_cast<std::size_t>(depth - 1));
        keys.push_back(parsed.is_string() ? parsed.template get<std::string>() : parsed.dump());
      }
      return true;
    };
    try {
      [[maybe_unused]] const Json again = Json::parse(text, track_keys, /*allow_exceptions=*/true, ignore_comments);
    } catch (const typename Json::out_of_range&) {
    }
    detail::throw_number_error(source, keys, e.what());
  }
}

// A TOML document as JSON (tables as objects in the file's key order, arrays as arrays), its nesting bounded as
// parse_json's. Throws DocumentError for a nesting too deep, a syntax error ("<source>:<line>:<column>: <toml++'s
// reason>") and a date or time (no document pe-vp reads takes one).
nlohmann::ordered_json parse_toml(std::string_view text, const std::string& source);

}  // namespace pevp::documents
