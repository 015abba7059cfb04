// The error messages of parse_json (see documents.h).
#include <algorithm>

#include "pevp/documents/documents.h"

namespace pevp::documents::detail {

void throw_syntax_error(std::string_view text, const std::string& source, std::size_t byte, const std::string& what) {
  // nlohmann's e.byte counts the characters read, the offending one last: the line and column an editor shows.
  const std::size_t upto = std::min(byte, text.size());
  TextPosition at = position_of(text, upto);
  at.column -= 1;                    // position_of counts the character at `upto`; here it is the one before
  if (byte > text.size()) ++at.column;  // unexpected end of input: just past the last character
  at.column = std::max<std::size_t>(at.column, 1);
  // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: <why>".
  std::string why = what;
  if (const auto colon = why.find(": "); colon != std::string::npos) why = why.substr(colon + 2);
  throw DocumentError("", source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                              ": JSON syntax error: " + why);
}

void throw_number_error(const std::string& source, const std::vector<std::string>& keys, const std::string& what) {
  // "[json.exception.out_of_range.406] number overflow parsing '1e400'"
  std::string why = what;
  if (const auto bracket = why.find("] "); bracket != std::string::npos) why = why.substr(bracket + 2);
  std::string key;
  for (const std::string& k : keys)
    if (!k.empty()) key += (key.empty() ? "" : ".") + k;  // an array's level has no key
  throw DocumentError(key, source + ": " + (key.empty() ? std::string() : key + ": ") + why +
                               " (a JSON number beyond the range of a double)");
}

}  // namespace pevp::documents::detail
