// The assembler and the round-trip printer. Both walk the same field tables as
// the decoder (fields.h), so a field the decoder names is a field the text can
// set, and the printer writes every leaf whose bytes the defaults would not
// reproduce. Parsing never throws out of assemble(): a syntax error ends its
// line (the position is lost), a value error is recorded and parsing goes on,
// so one pass reports every problem.
#include "pevp/isa_text/assembly.h"

#include "pevp/isa/hex.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "pevp/isa/enums.h"
#include "pevp/isa_text/format.h"

namespace pevp::isa {

namespace {

constexpr char kDigits[] = "0123456789abcdef";

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_pattern(Part p) {
  return p == Part::Tensor1D || p == Part::Tensor2D || p == Part::Tensor3D || p == Part::Tensor4D ||
         p == Part::MemPattern3D || p == Part::MxMemPattern1D;
}

unsigned leaf_bits(const Leaf& leaf) { return leaf.bit_width ? leaf.bit_width : 8u * leaf.size; }

// ---- names of values ---------------------------------------------------------------
// Number-format names (docs/numerics.md) as aliases of the ISA dtype names.
const std::map<std::string, Dtype>& dtype_aliases() {
  static const std::map<std::string, Dtype> m{
      {"BF16", Dtype::BFLOAT16},     {"FP8_E4M3", Dtype::FP8_EXP4}, {"FP8_E4M3FN", Dtype::FP8_EXP4},
      {"FP8_E5M2", Dtype::FP8_EXP5}, {"FP8_E3M4", Dtype::FP8_EXP3}, {"FP8_E2M5", Dtype::FP8_EXP2},
      {"FP4_E2M1", Dtype::FP4_EXP2}, {"E8M0", Dtype::SFP8_E8}};
  return m;
}

// The value an identifier names for `leaf`, or nothing (then it may be a symbol).
std::optional<std::int64_t> named_value(const Leaf& leaf, std::string_view ident) {
  const std::string u = upper(ident);
  switch (leaf.kind) {
    case ValueKind::Unsigned:
    case ValueKind::Signed:
    case ValueKind::Address:
    case ValueKind::Opcode:
    case ValueKind::Bool:
    case ValueKind::GroupMask:
    case ValueKind::Reserved:
      return std::nullopt;
    case ValueKind::Dtype: {
      if (auto d = parse_dtype(u)) return static_cast<std::int64_t>(*d);
      const auto it = dtype_aliases().find(u);
      if (it != dtype_aliases().end()) return static_cast<std::int64_t>(it->second);
      return std::nullopt;
    }
    case ValueKind::PsumAccumulateFlags: {
      // The spec's bit names combine with '|'; the group modes are names too.
      static const std::map<std::string, std::int64_t> bits{
          {"BEGIN", psum_flags::BEGIN_MATMUL_GROUP},
          {"END", psum_flags::END_MATMUL_GROUP},
          {"BEGIN_ACCUM", psum_flags::BEGIN_ACCUM_MATMUL_GROUP},
          {"BEGIN_MATMUL_GROUP", psum_flags::BEGIN_MATMUL_GROUP},
          {"END_MATMUL_GROUP", psum_flags::END_MATMUL_GROUP},
          {"BEGIN_ACCUM_MATMUL_GROUP", psum_flags::BEGIN_ACCUM_MATMUL_GROUP},
          {"MULTI_MID", psum_flags::MULTI_MID},
          {"MULTI_START", psum_flags::MULTI_START},
          {"MULTI_END", psum_flags::MULTI_END},
          {"SINGLE", psum_flags::SINGLE}};
      const auto it = bits.find(u);
      if (it != bits.end()) return it->second;
      return std::nullopt;
    }
    default: break;
  }
  // Every other enum: the names value_text prints, in any case.
  const std::int64_t max = leaf.bit_width ? (std::int64_t{1} << leaf.bit_width) - 1 : 255;
  for (std::int64_t v = 0; v <= max; ++v) {
    const std::string text = value_text(leaf, v);
    if (!text.empty() && is_ident_start(text[0]) && upper(text) == u) return v;
  }
  return std::nullopt;
}

// The names a leaf accepts, for an error message.
std::string names_of(const Leaf& leaf) {
  if (leaf.kind == ValueKind::Dtype)
    return "BFLOAT16 (bf16), FP16, FP32, FP32R, FP8_EXP2 (fp8_e2m5), FP8_EXP3 (fp8_e3m4), FP8_EXP4 (fp8_e4m3), "
           "FP8_EXP5 (fp8_e5m2), FP4_EXP2 (fp4_e2m1), SFP8_E8 (e8m0), INT4, INT8, UINT8, INT16, UINT16, INT32, "
           "UINT32";
  if (leaf.kind == ValueKind::PsumAccumulateFlags)
    return "MULTI_MID, MULTI_START, MULTI_END, SINGLE, BEGIN_ACCUM, or BEGIN|END|BEGIN_ACCUM bits";
  std::string out;
  const std::int64_t max = leaf.bit_width ? (std::int64_t{1} << leaf.bit_width) - 1 : 255;
  for (std::int64_t v = 0; v <= max; ++v) {
    const std::string text = value_text(leaf, v);
    if (!text.empty() && is_ident_start(text[0])) out += (out.empty() ? "" : ", ") + text;
  }
  return out;
}

// ---- diagnostics inside a line ----------------------------------------------------
struct LineError {  // a syntax error: the rest of the line cannot be read
  unsigned column;
  std::string field, rule, message;
};

struct Cursor {
  std::string_view s;
  std::size_t pos = 0;
  void ws() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
  }
  bool at_end() {
    ws();
    return pos >= s.size();
  }
  char peek() {
    ws();
    return pos < s.size() ? s[pos] : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos;
    return true;
  }
  unsigned column() const { return static_cast<unsigned>(pos) + 1; }
  std::string_view ident() {  // after ws(); empty if none
    ws();
    const std::size_t start = pos;
    if (pos < s.size() && is_ident_start(s[pos]))
      while (pos < s.size() && is_ident_char(s[pos])) ++pos;
    return s.substr(start, pos - start);
  }
  std::string_view rest_token() {  // up to whitespace at bracket depth 0
    ws();
    const std::size_t start = pos;
    int depth = 0;
    while (pos < s.size() && (depth > 0 || !std::isspace(static_cast<unsigned char>(s[pos])))) {
      if (s[pos] == '(' || s[pos] == '[') ++depth;
      if ((s[pos] == ')' || s[pos] == ']') && depth > 0) --depth;
      ++pos;
    }
    return s.substr(start, pos - start);
  }
};

[[noreturn]] void syntax(const Cursor& c, std::string field, std::string message) {
  throw LineError{c.column(), std::move(field), "asm.syntax", std::move(message)};
}

struct Symbol {
  std::int64_t value;
  unsigned line;
};

// Evaluates an expression: `|` < `+ -` < `*` < unary `-` < primary. A name that
// resolves to nothing is a value error recorded in `deferred` (0 is used and
// parsing goes on).
struct Expr {
  Cursor& c;
  const ArrayGeometry& geo;
  const Leaf* leaf;  // names of this field's values come first; may be null
  const std::map<std::string, Symbol>& symbols;
  std::string field;
  std::optional<LineError>& deferred;

  std::int64_t parse() { return parse_or(); }

  void check(bool overflow) {
    if (overflow) syntax(c, field, "arithmetic overflow in the expression");
  }
  std::int64_t parse_or() {
    std::int64_t v = parse_add();
    while (c.eat('|')) {
      const std::int64_t r = parse_add();
      v |= r;
    }
    return v;
  }
  std::int64_t parse_add() {
    std::int64_t v = parse_mul();
    for (;;) {
      std::int64_t r = 0;
      if (c.eat('+')) {
        r = parse_mul();
        check(__builtin_add_overflow(v, r, &v));
      } else if (c.peek() == '-') {
        ++c.pos;
        r = parse_mul();
        check(__builtin_sub_overflow(v, r, &v));
      } else {
        return v;
      }
    }
  }
  std::int64_t parse_mul() {
    std::int64_t v = parse_unary();
    while (c.eat('*')) {
      const std::int64_t r = parse_unary();
      check(__builtin_mul_overflow(v, r, &v));
    }
    return v;
  }
  // Nesting is bounded so a line of 100000 '(' is an error, not a stack overflow.
  struct Nest {
    Expr& e;
    explicit Nest(Expr& x) : e(x) {
      if (++e.depth > kMaxDepth) syntax(e.c, e.field, "expression nested too deeply");
    }
    ~Nest() { --e.depth; }
  };
  static constexpr int kMaxDepth = 64;
  int depth = 0;

  std::int64_t parse_unary() {
    const Nest nest(*this);
    if (c.eat('-')) {
      const std::int64_t v = parse_unary();
      std::int64_t out = 0;
      check(__builtin_sub_overflow(std::int64_t{0}, v, &out));
      return out;
    }
    return parse_primary();
  }
  std::int64_t number() {
    const std::size_t start = c.pos;
    unsigned base = 10;
    if (c.pos + 1 < c.s.size() && c.s[c.pos] == '0' && (c.s[c.pos + 1] == 'x' || c.s[c.pos + 1] == 'X')) {
      base = 16;
      c.pos += 2;
    } else if (c.pos + 1 < c.s.size() && c.s[c.pos] == '0' && (c.s[c.pos + 1] == 'b' || c.s[c.pos + 1] == 'B')) {
      base = 2;
      c.pos += 2;
    }
    std::uint64_t v = 0;
    std::size_t digits = 0;
    while (c.pos < c.s.size() && std::isalnum(static_cast<unsigned char>(c.s[c.pos]))) {
      const char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(c.s[c.pos])));
      const unsigned d = std::isdigit(static_cast<unsigned char>(ch)) ? static_cast<unsigned>(ch - '0')
                         : (ch >= 'a' && ch <= 'f')                   ? static_cast<unsigned>(ch - 'a' + 10)
                                                                      : 99u;
      if (d >= base) {
        const std::size_t bad = c.pos;
        c.pos = start;
        throw LineError{static_cast<unsigned>(bad) + 1, field, "asm.syntax",
                        "malformed number '" + std::string(Cursor{c.s, start}.rest_token()) + "'"};
      }
      if (v > (static_cast<std::uint64_t>(INT64_MAX) - d) / base)
        throw LineError{static_cast<unsigned>(start) + 1, field, "asm.range", "number too large"};
      v = v * base + d;
      ++c.pos, ++digits;
    }
    if (digits == 0) syntax(c, field, "a number needs digits after its prefix");
    return static_cast<std::int64_t>(v);
  }
  std::int64_t partition_address(bool psum, unsigned col) {
    if (!c.eat('[')) syntax(c, field, std::string(psum ? "psum" : "sbuf") + " needs a partition: " +
                                          (psum ? "psum[P]" : "sbuf[P]"));
    const std::int64_t p = parse_or();
    if (!c.eat(']')) syntax(c, field, "expected ']' after the partition");
    if (p < 0 || p >= static_cast<std::int64_t>(geo.partitions)) {
      if (!deferred)
        deferred = LineError{col, field, "asm.range",
                             "partition " + std::to_string(p) + " is outside 0.." + std::to_string(geo.partitions - 1)};
      return 0;
    }
    return psum ? ArrayGeometry::kPsumBase + p * static_cast<std::int64_t>(geo.psum_partition_bytes())
                : ArrayGeometry::kSbufBase + p * static_cast<std::int64_t>(geo.sbuf_partition_bytes);
  }
  std::int64_t parse_primary() {
    const char ch = c.peek();
    if (ch == '(') {
      ++c.pos;
      const std::int64_t v = parse_or();
      if (!c.eat(')')) syntax(c, field, "expected ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(ch))) return number();
    if (is_ident_start(ch)) {
      const unsigned col = c.column();
      const std::string_view id = c.ident();
      if (leaf != nullptr)
        if (auto v = named_value(*leaf, id)) return *v;
      const std::string lid = lower(id);
      // The address keywords are never names: "psum+0x40" is an error (a
      // partition is needed), not a label or constant that shadows them.
      if (lid == "sbuf" || lid == "psum") return partition_address(lid == "psum", col);
      const auto it = symbols.find(std::string(id));
      if (it != symbols.end()) return it->second.value;
      if (!deferred) {
        std::string message = "unknown name '" + std::string(id) + "'";
        if (leaf != nullptr && leaf->kind == ValueKind::Dtype)
          message = "unknown dtype '" + std::string(id) + "' (one of " + names_of(*leaf) + ")";
        else if (leaf != nullptr && !names_of(*leaf).empty())
          message += " (one of " + names_of(*leaf) + ", or a .const / label)";
        else
          message += " (not a .const or label)";
        deferred = LineError{col, field, "asm.name", message};
      }
      return 0;
    }
    if (ch == '\0') syntax(c, field, "expected a value");
    syntax(c, field, std::string("expected a number, a name or '(' at '") + ch + "'");
  }
};

// ---- one instruction's operands ---------------------------------------------------
struct Assign {
  std::string path;  // leaf path
  std::int64_t value = 0;
  std::vector<std::uint8_t> raw;  // reserved bytes given as bytes:HEX
  bool is_raw = false;
  unsigned column = 0;
  bool explicit_ = true;  // written (not a pattern default)
};

struct InstrCtx {
  Generation gen;
  const ArrayGeometry& geo;
  const StructLayout* layout;
  const std::map<std::string, Symbol>& symbols;
  std::vector<LineError> errors;  // value errors of this line
  std::vector<Assign> assigns;
  std::map<std::string, unsigned> columns;  // leaf path or top field -> column
};

// Any leaf of the layout by path, over every union member's leaf set.
const Leaf* any_leaf(const StructLayout& layout, std::string_view path) {
  for (std::size_t set = 0; set < layout.leaf_sets.size(); ++set) {
    const auto it = layout.leaf_index[set].find(path);
    if (it != layout.leaf_index[set].end()) return &layout.leaf_sets[set][it->second];
  }
  return nullptr;
}

std::int64_t eval(InstrCtx& x, Cursor& c, const Leaf* leaf, const std::string& field) {
  std::optional<LineError> deferred;
  Expr e{c, x.geo, leaf, x.symbols, field, deferred};
  const std::int64_t v = e.parse();
  if (deferred) x.errors.push_back(*deferred);
  return v;
}

// reserved=bytes:0a0b... (bytes in memory order) or a value that must be 0.
void parse_reserved(InstrCtx& x, Cursor& c, const Leaf& leaf, const std::string& path, unsigned col) {
  c.ws();
  if (c.s.substr(c.pos, 6) == "bytes:") {
    c.pos += 6;
    const std::size_t start = c.pos;
    while (c.pos < c.s.size() && std::isxdigit(static_cast<unsigned char>(c.s[c.pos]))) ++c.pos;
    const std::string_view digits = c.s.substr(start, c.pos - start);
    if (digits.empty() || digits.size() % 2 != 0)
      syntax(c, path, "bytes: needs an even number of hex digits (two per byte)");
    Assign a{path, 0, {}, true, col, true};
    for (std::size_t i = 0; i < digits.size(); i += 2)
      a.raw.push_back(static_cast<std::uint8_t>(std::stoul(std::string(digits.substr(i, 2)), nullptr, 16)));
    if (a.raw.size() > leaf.size)
      x.errors.push_back({col, path, "asm.range",
                          std::to_string(a.raw.size()) + " bytes given for a " + std::to_string(leaf.size) +
                              "-byte reserved field"});
    x.assigns.push_back(std::move(a));
    return;
  }
  const std::int64_t v = eval(x, c, nullptr, path);
  if (v != 0)
    x.errors.push_back({col, path, "asm.range",
                        "a reserved field takes 0 or bytes:<hex>, not " + std::to_string(v)});
  x.assigns.push_back({path, 0, std::vector<std::uint8_t>(leaf.size, 0), true, col, true});
}

// The pattern shorthand (docs/assembly.md):
//   ADDR[:[step,num]...]  |  mx(ADDR, scale=A[, index=B])[...]  |  indirect(ADDR, index=A, num_index=N)[...]
void parse_pattern(InstrCtx& x, Cursor& c, const FieldDesc& f, unsigned col) {
  const std::string base = std::string(f.name) + ".";
  enum class Form { Plain, Mx, Indirect } form = Form::Plain;
  const std::size_t save = c.pos;
  const std::string_view word = c.ident();
  if (c.peek() == '(' && (lower(word) == "mx" || lower(word) == "indirect")) {
    form = lower(word) == "mx" ? Form::Mx : Form::Indirect;
  } else {
    c.pos = save;
  }
  const bool union3d = f.part == Part::MemPattern3D;
  if (form == Form::Mx && !(union3d || f.part == Part::MxMemPattern1D))
    throw LineError{col, f.name, "asm.pattern", std::string(f.name) + " is a plain tensor pattern: no mx(...) form"};
  if (form == Form::Indirect && !union3d)
    throw LineError{col, f.name, "asm.pattern",
                    std::string(f.name) + " is not a MEM_PATTERN3D: no indirect(...) form"};
  if (form != Form::Plain) c.eat('(');
  const unsigned addr_col = c.column();
  const Leaf* start_leaf = any_leaf(*x.layout, base + "start_addr");
  std::int64_t start = eval(x, c, start_leaf, base + "start_addr");
  if (union3d) {
    const bool mx_bit = (start & ADDR4MARKER_MXTENSOR_V2) != 0;
    const bool ind_bit = (static_cast<std::uint64_t>(start) & ADDR_MARKER_INDIRECT) != 0;
    if (form == Form::Mx && mx_bit)
      x.errors.push_back({addr_col, base + "start_addr", "asm.pattern",
                          "an mx(...) address must be even: mx() sets bit 0, the MXTENSOR_V2 marker"});
    if (form == Form::Indirect && ind_bit)
      x.errors.push_back({addr_col, base + "start_addr", "asm.pattern",
                          "an indirect(...) address must not have bit 31: indirect() sets it (the marker)"});
    if (form == Form::Plain && mx_bit != ind_bit)
      x.errors.push_back({addr_col, base + "start_addr", "asm.pattern",
                          "start address " + hex(static_cast<std::uint64_t>(start)) + " carries the " +
                              (mx_bit ? "MXTENSOR_V2 marker (bit 0): write mx(ADDR, scale=...)"
                                      : "indirect marker (bit 31): write indirect(ADDR, index=..., num_index=...)")});
    if (form == Form::Mx) start |= ADDR4MARKER_MXTENSOR_V2;
    if (form == Form::Indirect) start |= static_cast<std::int64_t>(ADDR_MARKER_INDIRECT);
  }
  x.assigns.push_back({base + "start_addr", start, {}, false, addr_col, true});
  x.columns.emplace(base + "start_addr", addr_col);
  std::set<std::string> extras_seen;
  if (form != Form::Plain) {
    while (c.eat(',')) {
      c.ws();
      const unsigned kcol = c.column();
      const std::string key = lower(c.ident());
      if (!c.eat('=')) syntax(c, f.name, "expected key=value inside " + std::string(form == Form::Mx ? "mx" : "indirect") + "(...)");
      std::string leaf_name;
      if ((key == "scale" || key == "scale_addr") && form == Form::Mx) leaf_name = "scale_addr";
      if ((key == "index" || key == "index_addr") && (form == Form::Indirect || f.part == Part::MxMemPattern1D))
        leaf_name = "index_addr";
      if (key == "num_index" && form == Form::Indirect) leaf_name = "num_index";
      if (leaf_name.empty())
        throw LineError{kcol, f.name, "asm.pattern",
                        "'" + key + "' is not a key of this form (" +
                            (form == Form::Indirect ? "index=, num_index="
                             : union3d              ? "scale="
                                                    : "scale=, index=") +
                            ")"};
      if (!extras_seen.insert(leaf_name).second)
        x.errors.push_back({kcol, base + leaf_name, "asm.duplicate", "'" + key + "' given twice"});
      const std::int64_t v = eval(x, c, any_leaf(*x.layout, base + leaf_name), base + leaf_name);
      x.assigns.push_back({base + leaf_name, v, {}, false, kcol});
      x.columns.emplace(base + leaf_name, kcol);
    }
    if (!c.eat(')')) syntax(c, f.name, "expected ',' or ')' in the pattern");
  }
  // Dimensions, innermost first.
  unsigned dims = 0;
  switch (f.part) {
    case Part::Tensor1D: dims = 1; break;
    case Part::Tensor2D: dims = 2; break;
    case Part::Tensor3D: dims = 3; break;
    case Part::Tensor4D: dims = 4; break;
    case Part::MxMemPattern1D: dims = 1; break;
    default: dims = form == Form::Mx ? 2 : form == Form::Indirect ? 1 : 3; break;
  }
  const bool single = f.part == Part::MxMemPattern1D || form == Form::Indirect;  // step_elem, not step_elem[0]
  c.eat(':');
  unsigned k = 0;
  while (c.peek() == '[') {
    const unsigned dcol = c.column();
    ++c.pos;
    if (k >= dims)
      throw LineError{dcol, f.name, "asm.pattern",
                      std::string(f.name) + " has " + std::to_string(dims) + " dimension(s) in this form; a " +
                          std::to_string(k + 1) + "th [step,num] is one too many"};
    const std::string sfx = single ? "" : "[" + std::to_string(k) + "]";
    const std::string sp = base + "step_elem" + sfx, np = base + "num_elem" + sfx;
    const std::int64_t step = eval(x, c, nullptr, sp);
    if (!c.eat(',')) syntax(c, f.name, "a dimension is [step,num]: expected ','");
    const unsigned ncol = c.column();
    const std::int64_t num = eval(x, c, nullptr, np);
    if (!c.eat(']')) syntax(c, f.name, "a dimension is [step,num]: expected ']'");
    x.assigns.push_back({sp, step, {}, false, dcol});
    x.assigns.push_back({np, num, {}, false, ncol});
    x.columns.emplace(sp, dcol);
    x.columns.emplace(np, ncol);
    ++k;
  }
  for (; k < dims; ++k) {  // unwritten outer dimensions: step 0, one element
    const std::string sfx = single ? "" : "[" + std::to_string(k) + "]";
    x.assigns.push_back({base + "num_elem" + sfx, 1, {}, false, col, false});
  }
}

void parse_operand(InstrCtx& x, Cursor& c) {
  const unsigned col = c.column();
  const std::size_t start = c.pos;
  while (c.pos < c.s.size() && (is_ident_char(c.s[c.pos]) || c.s[c.pos] == '.' || c.s[c.pos] == '[' || c.s[c.pos] == ']'))
    ++c.pos;
  std::string key(c.s.substr(start, c.pos - start));
  if (key.empty()) syntax(c, "", std::string("expected an operand key=value at '") + c.s[c.pos] + "'");
  if (c.pos >= c.s.size() || c.s[c.pos] != '=') syntax(c, key, "expected '=' after '" + key + "'");
  ++c.pos;
  const std::string written = key;
  const std::size_t cut = key.find_first_of(".[");
  std::string top = key.substr(0, cut);
  const FieldDesc* f = x.layout->find(top);
  if (f == nullptr && x.layout->find(top + "_mem_pattern") != nullptr) {  // src= for src_mem_pattern=
    key.insert(top.size(), "_mem_pattern");
    top += "_mem_pattern";
    f = x.layout->find(top);
  }
  auto unknown = [&](const std::string& why) {
    x.errors.push_back({col, key, "asm.field", why});
    c.rest_token();  // skip the value: the line's other operands are still checked
  };
  if (f == nullptr) {
    std::string fields;
    for (const auto& fd : x.layout->fields)
      if (fd.part != Part::Reserved) fields += (fields.empty() ? "" : ", ") + std::string(fd.name);
    return unknown(x.layout->c_name + " has no field '" + top + "' (fields: " + fields + ")");
  }
  x.columns.emplace(top, col);
  // "key=" with nothing after it: the value is missing, and the next operand is not it.
  if (c.pos >= c.s.size() || std::isspace(static_cast<unsigned char>(c.s[c.pos]))) {
    x.errors.push_back({col, key, "asm.missing", "missing value: '" + written + "=' is followed by nothing"});
    return;
  }
  if (key == top && is_pattern(f->part)) return parse_pattern(x, c, *f, col);
  const Leaf* leaf = any_leaf(*x.layout, key);
  if (leaf == nullptr) {
    std::string leaves;
    for (const auto& set : x.layout->leaf_sets)
      for (const Leaf& l : set)
        if (l.top == top && leaves.find(std::string(l.path)) == std::string::npos)
          leaves += (leaves.empty() ? "" : ", ") + std::string(l.path);
    return unknown(key == top ? "'" + top + "' is a group: set its leaves (" + leaves + ")"
                              : x.layout->c_name + " has no field '" + key + "' (" + top + " has: " + leaves + ")");
  }
  if (key == "header.opcode") {
    x.errors.push_back({col, key, "asm.field", "header.opcode is set by the mnemonic"});
    c.rest_token();
    return;
  }
  x.columns.emplace(key, col);
  if (leaf->kind == ValueKind::Reserved) return parse_reserved(x, c, *leaf, key, col);
  const unsigned vcol = c.column();
  const std::int64_t v = eval(x, c, leaf, key);
  x.assigns.push_back({key, v, {}, false, vcol, true});
}

std::string range_text(const Leaf& leaf) {
  const unsigned bits = leaf_bits(leaf);
  if (leaf.is_signed)
    return std::to_string(bits) + "-bit signed: " + std::to_string(-(std::int64_t{1} << (bits - 1))) + ".." +
           std::to_string((std::int64_t{1} << (bits - 1)) - 1);
  return std::to_string(bits) + "-bit unsigned: 0.." +
         std::to_string(bits >= 64 ? ~0ull : (1ull << bits) - 1);
}

// Writes the operands into 64 bytes; union start addresses first, so their
// markers pick the member whose leaves the other operands name.
RawInstruction encode_operands(InstrCtx& x, Opcode op) {
  RawInstruction bytes{};
  bytes[0] = static_cast<std::uint8_t>(op);
  bytes[1] = kInstructionBytes / 4;  // header.inst_word_len (D-HEADER)
  std::set<std::string> written;
  for (const Assign& a : x.assigns) {
    if (!a.explicit_) continue;
    if (!written.insert(a.path).second)
      x.errors.push_back({a.column, a.path, "asm.duplicate", a.path + " is given more than once"});
  }
  for (const FieldDesc& f : x.layout->fields) {
    if (f.part != Part::MemPattern3D) continue;
    const std::string path = std::string(f.name) + ".start_addr";
    for (const Assign& a : x.assigns) {
      if (a.path != path) continue;
      if (a.value < 0 || a.value > 0xFFFFFFFFll) continue;  // reported below by write_leaf
      for (unsigned i = 0; i < 4; ++i)
        bytes[f.offset + i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(a.value) >> (8 * i));
    }
  }
  const auto& leaves = leaves_of(*x.layout, bytes.data());
  const auto& index = leaf_index_of(*x.layout, bytes.data());
  // Pattern defaults first, so a written leaf overrides them.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Assign& a : x.assigns) {
      if (a.explicit_ != (pass == 1)) continue;
      const auto it = index.find(a.path);
      if (it == index.end()) {
        if (!a.explicit_) continue;
        const std::string top = a.path.substr(0, a.path.find('.'));
        const FieldDesc* f = x.layout->find(top);
        const std::string member =
            f && f->part == Part::MemPattern3D
                ? std::string(name(pattern_member(static_cast<std::uint32_t>(bytes[f->offset] | bytes[f->offset + 1] << 8 |
                                                                             bytes[f->offset + 2] << 16 |
                                                                             static_cast<std::uint32_t>(bytes[f->offset + 3]) << 24))))
                : "";
        x.errors.push_back({a.column, a.path, "asm.pattern",
                            a.path + " is not a leaf of the union member " + top + ".start_addr selects (" + member +
                                "); mx(...) selects scale_addr, indirect(...) index_addr / num_index"});
        continue;
      }
      const Leaf& leaf = leaves[it->second];
      if (a.is_raw) {
        std::fill(bytes.begin() + leaf.offset, bytes.begin() + leaf.offset + leaf.size, 0);
        std::copy_n(a.raw.begin(), std::min<std::size_t>(a.raw.size(), leaf.size), bytes.begin() + leaf.offset);
        continue;
      }
      if (!write_leaf(bytes.data(), leaf, a.value))
        x.errors.push_back({a.column, a.path, "asm.range",
                            "value " + std::to_string(a.value) + " does not fit " + a.path + " (" + range_text(leaf) +
                                ")"});
    }
  }
  return bytes;
}

unsigned column_of(const InstrCtx& x, const std::string& field, unsigned fallback) {
  auto it = x.columns.find(field);
  if (it != x.columns.end()) return it->second;
  it = x.columns.find(field.substr(0, field.find_first_of(".[")));
  return it != x.columns.end() ? it->second : fallback;
}

// "field = value: requirement" (the rule id goes in its own member).
std::string violation_text(const Violation& v) {
  std::string s;
  if (!v.field.empty()) s = v.field + " = " + std::to_string(v.value) + ": ";
  return s + v.message;
}

// The one diagnostic for a field the line leaves out whose default breaks a rule (`first`, the first it breaks).
LineError missing_field(Opcode op, const StructLayout& layout, const std::string& top, const Violation& first,
                        unsigned column) {
  const FieldDesc* f = layout.find(top);
  const bool pattern = f != nullptr && is_pattern(f->part);
  // The shorthand key of a pattern (src= for src_mem_pattern=), as the operands accept it.
  const std::string suffix = "_mem_pattern";
  const bool shorthand =
      pattern && top.size() > suffix.size() && top.compare(top.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string key = shorthand ? top.substr(0, top.size() - suffix.size()) : top;
  const std::string form = key + (pattern ? "=ADDR:[step,num]..." : "=VALUE");
  return {column, top, "asm.missing",
          "missing: " + mnemonic(op) + " needs " + form + "; left out, its default breaks " + violation_text(first) +
              " (rule " + first.rule + ")"};
}

// ---- lines ------------------------------------------------------------------------
struct Line {
  unsigned number;
  std::string_view text;  // comment stripped
  std::size_t body = 0;   // position after the labels
  std::optional<std::size_t> record;  // index of the record the line emits
};

std::string_view strip_comment(std::string_view s) {
  const std::size_t cut = s.find_first_of("#;");
  return cut == std::string_view::npos ? s : s.substr(0, cut);
}

// True when the text after the labels emits a record.
bool emits_record(std::string_view body) {
  Cursor c{body};
  if (c.at_end()) return false;
  if (c.peek() != '.') return true;
  ++c.pos;
  return lower(c.ident()) == "raw";
}

}  // namespace

std::string AsmDiagnostic::describe(std::string_view file) const {
  std::string s = std::string(file) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                  (severity == Severity::Error ? "error" : "warning") + ": ";
  // A rule's message already opens with "field = value".
  if (!field.empty() && message.rfind(field + " = ", 0) != 0) s += field + ": ";
  return s + message + " [" + rule + "]";
}

bool AsmResult::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const AsmDiagnostic& d) { return d.severity == AsmDiagnostic::Severity::Error; });
}

std::vector<std::uint8_t> AsmResult::bytes() const {
  std::vector<std::uint8_t> out;
  out.reserve(records.size() * kInstructionBytes);
  for (const auto& r : records) out.insert(out.end(), r.begin(), r.end());
  return out;
}

std::string mnemonic(Opcode op) { return lower(name(op)); }

std::string geometry_operands(const ArrayGeometry& geo) {
  return "pe_rows=" + std::to_string(geo.pe_rows) + " pe_cols=" + std::to_string(geo.pe_cols) +
         " partitions=" + std::to_string(geo.partitions) + " sbuf_partition_bytes=" +
         std::to_string(geo.sbuf_partition_bytes) + " psum_banks=" + std::to_string(geo.psum_banks) +
         " psum_bank_bytes=" + std::to_string(geo.psum_bank_bytes);
}

std::optional<std::string> gen_directive(std::string_view source) {
  for (std::size_t pos = 0; pos <= source.size();) {
    const std::size_t end = std::min(source.find('\n', pos), source.size());
    Cursor c{strip_comment(source.substr(pos, end - pos))};
    pos = end + 1;
    for (;;) {  // labels
      const std::size_t save = c.pos;
      const std::string_view id = c.ident();
      if (id.empty() || c.pos >= c.s.size() || c.s[c.pos] != ':') {
        c.pos = save;
        break;
      }
      ++c.pos;
    }
    if (c.at_end() || c.peek() != '.') continue;
    ++c.pos;
    if (lower(c.ident()) == "gen") return std::string(c.rest_token());
  }
  return std::nullopt;
}

AsmResult assemble(Generation g, std::string_view source, const AsmOptions& options) {
  const ArrayGeometry geo = options.geometry.value_or(preset_geometry(g));
  AsmResult result;
  auto report = [&](unsigned line, const LineError& e, bool rule_break = false) {
    const auto sev = rule_break && options.allow_invalid ? AsmDiagnostic::Severity::Warning
                                                         : AsmDiagnostic::Severity::Error;
    result.diagnostics.push_back({sev, line, e.column, e.field, e.rule, e.message});
  };

  // Pass 1: lines, labels (a label is the byte offset of the next record, so
  // forward references work) and which lines emit records.
  std::vector<Line> lines;
  std::map<std::string, Symbol> symbols;
  std::size_t records = 0;
  for (std::size_t pos = 0, number = 1; pos <= source.size(); ++number) {
    const std::size_t end = std::min(source.find('\n', pos), source.size());
    Line l{static_cast<unsigned>(number), strip_comment(source.substr(pos, end - pos)), 0, std::nullopt};
    pos = end + 1;
    Cursor c{l.text};
    for (;;) {
      const std::size_t save = c.pos;
      const unsigned col = static_cast<unsigned>(c.pos) + 1;
      const std::string_view id = c.ident();
      if (id.empty() || c.pos >= c.s.size() || c.s[c.pos] != ':') {
        c.pos = save;
        break;
      }
      ++c.pos;
      const std::string label(id);
      if (lower(label) == "sbuf" || lower(label) == "psum") {
        report(l.number, {col + 0, label, "asm.symbol", "'" + label + "' is reserved for addresses (sbuf[P], psum[P])"});
        continue;
      }
      const auto [it, fresh] = symbols.emplace(label, Symbol{static_cast<std::int64_t>(records * kInstructionBytes), l.number});
      if (!fresh)
        report(l.number, {col + 0, label, "asm.symbol",
                          "'" + label + "' is already defined on line " + std::to_string(it->second.line)});
    }
    l.body = c.pos;
    if (emits_record(l.text.substr(l.body))) l.record = records++;
    lines.push_back(l);
    if (end == source.size()) break;
  }

  // Pass 2: directives and instructions in order.
  StreamChecker stream;
  for (const Line& l : lines) {
    Cursor c{l.text, l.body};
    if (c.at_end()) continue;
    const unsigned head_col = c.column();
    try {
      if (c.peek() == '.') {
        ++c.pos;
        const std::string directive = lower(c.ident());
        if (directive == "gen") {
          const std::string_view gname = c.rest_token();
          const auto want = parse_generation(gname);
          if (!want)
            throw LineError{head_col, "", "asm.gen", "unknown generation '" + std::string(gname) + "'"};
          if (*want != g)
            throw LineError{head_col, "", "asm.gen",
                            "the file is for " + std::string(name(*want)) + " but --gen is " + std::string(name(g))};
        } else if (directive == "geometry") {
          // `.geometry key=value ...`: the members that differ from the generation's preset; partitions and SBUF
          // bytes not named follow the array as the configuration's do (D-GEOMETRY-FOLLOW).
          ArrayGeometry want = preset_geometry(g);
          bool named_partitions = false, named_sbuf = false;
          while (!c.at_end()) {
            const std::string_view op = c.rest_token();
            const auto eq = op.find('=');
            std::uint64_t v = 0;
            const std::string key(op.substr(0, eq == std::string_view::npos ? op.size() : eq));
            // Decimal digits only, the whole value, no overflow (from_chars reports it).
            bool number = false;
            if (eq != std::string_view::npos && eq + 1 < op.size()) {
              const char* first = op.data() + eq + 1;
              const char* last = op.data() + op.size();
              const auto [end, ec] = std::from_chars(first, last, v);
              number = ec == std::errc() && end == last;
            }
            std::uint32_t* member = key == "pe_rows"                ? &want.pe_rows
                                    : key == "pe_cols"              ? &want.pe_cols
                                    : key == "partitions"           ? &want.partitions
                                    : key == "sbuf_partition_bytes" ? &want.sbuf_partition_bytes
                                    : key == "psum_banks"           ? &want.psum_banks
                                    : key == "psum_bank_bytes"      ? &want.psum_bank_bytes
                                                                    : nullptr;
            if (member == nullptr || !number || v > 0xFFFFFFFFull)
              throw LineError{head_col, "", "asm.geometry",
                              "'" + std::string(op) +
                                  "': expected key=number with key pe_rows, pe_cols, partitions, "
                                  "sbuf_partition_bytes, psum_banks or psum_bank_bytes"};
            *member = static_cast<std::uint32_t>(v);
            named_partitions = named_partitions || member == &want.partitions;
            named_sbuf = named_sbuf || member == &want.sbuf_partition_bytes;
          }
          if (!named_partitions) want.partitions = partitions_for_array(want.pe_rows, want.pe_cols, g);
          if (!named_sbuf) want.sbuf_partition_bytes = sbuf_partition_bytes_for(want.partitions, g);
          if (want != geo)
            throw LineError{head_col, "", "asm.geometry",
                            "the file is for the geometry " + geometry_operands(want) + " but the configuration's is " +
                                geometry_operands(geo) + " (give pe-vp asm the same --set geometry.* keys)"};
        } else if (directive == "const" || directive == "equ") {
          const unsigned ncol = c.column();
          const std::string id(c.ident());
          if (id.empty()) syntax(c, "", "." + directive + " needs a name");
          if (!c.eat('=') && !c.eat(',')) syntax(c, id, "expected '=' after the constant's name");
          std::optional<LineError> deferred;
          const std::int64_t v = Expr{c, geo, nullptr, symbols, id, deferred}.parse();
          if (deferred) throw *deferred;
          if (lower(id) == "sbuf" || lower(id) == "psum")
            throw LineError{ncol, id, "asm.symbol", "'" + id + "' is reserved for addresses (sbuf[P], psum[P])"};
          const auto [it, fresh] = symbols.emplace(id, Symbol{v, l.number});
          if (!fresh)
            throw LineError{ncol, id, "asm.symbol",
                            "'" + id + "' is already defined on line " + std::to_string(it->second.line)};
        } else if (directive == "raw") {
          RawInstruction raw{};
          std::size_t n = 0;
          for (char ch : l.text.substr(c.pos)) {
            if (std::isspace(static_cast<unsigned char>(ch))) continue;
            if (!std::isxdigit(static_cast<unsigned char>(ch)) || n >= 2 * kInstructionBytes) {
              n = 2 * kInstructionBytes + 1;
              break;
            }
            const unsigned v = std::isdigit(static_cast<unsigned char>(ch))
                                   ? static_cast<unsigned>(ch - '0')
                                   : static_cast<unsigned>(std::tolower(static_cast<unsigned char>(ch)) - 'a' + 10);
            raw[n / 2] = static_cast<std::uint8_t>(raw[n / 2] | (n % 2 == 0 ? v << 4 : v));
            ++n;
          }
          if (n != 2 * kInstructionBytes)
            throw LineError{head_col, "", "asm.raw", ".raw takes exactly 128 hex digits (64 bytes)"};
          Decoded d = decode(g, geo, raw);
          for (auto& v : stream.check(d)) d.violations.push_back(std::move(v));
          for (const Violation& v : d.violations) report(l.number, {head_col, v.field, v.rule, violation_text(v)}, true);
          result.records.push_back(raw);
        } else {
          throw LineError{head_col, "", "asm.directive",
                          "unknown directive '." + directive + "' (.gen, .geometry, .const, .equ, .raw)"};
        }
        if (directive != "raw" && !c.at_end()) syntax(c, "", "unexpected text after the directive");
        continue;
      }
      // An instruction.
      const std::string_view mn = c.ident();
      if (mn.empty()) syntax(c, "", "expected a mnemonic, a directive or a label");
      const auto op = parse_opcode(mn);
      if (!op || lower(mn) != mnemonic(*op))
        throw LineError{head_col, "", "asm.mnemonic",
                        "unknown mnemonic '" + std::string(mn) +
                            "' (ldweights, matmul, matmul_sparse, ldtags, pe_reg_write, pe_manage_seed, "
                            "ldweights_mx, matmul_mx, conv_lut_load)"};
      if (!exists_in(*op, g))
        throw LineError{head_col, "", "asm.mnemonic",
                        std::string(mn) + " is not an instruction of " + std::string(name(g))};
      InstrCtx x{g, geo, &layout_of(g, struct_of(*op)), symbols, {}, {}, {}};
      try {
        while (!c.at_end()) parse_operand(x, c);
      } catch (const LineError& e) {
        for (const auto& v : x.errors) report(l.number, v);
        throw;
      }
      const RawInstruction raw = encode_operands(x, *op);
      for (const auto& v : x.errors) report(l.number, v);
      if (!x.errors.empty()) {
        result.records.push_back(raw);  // keeps record indices; never written (errors)
        continue;
      }
      Decoded d = decode(g, geo, raw);
      for (auto& v : stream.check(d)) d.violations.push_back(std::move(v));
      // A field the line never names breaks its rules only through its default: one diagnostic says it is missing
      // (a pattern left out would otherwise break num_elem once per dimension, and its address too).
      std::set<std::string> missing;
      for (const Violation& v : d.violations) {
        const std::string top = v.field.substr(0, v.field.find_first_of(".["));
        if (!top.empty() && x.columns.count(top) == 0) {
          if (missing.insert(top).second) report(l.number, missing_field(*op, *x.layout, top, v, head_col), true);
          continue;
        }
        report(l.number, {column_of(x, v.field, head_col), v.field, v.rule, violation_text(v)}, true);
      }
      result.records.push_back(raw);
    } catch (const LineError& e) {
      report(l.number, e);
      if (l.record && result.records.size() <= *l.record) result.records.push_back(RawInstruction{});
    }
  }
  return result;
}

// ---- the printer --------------------------------------------------------------------
namespace {

// SBUF and PSUM addresses as partition + offset (D-ADDR), anything else in hex.
std::string addr_text(const ArrayGeometry& geo, std::uint64_t a) {
  if (a > 0xFFFFFFFFull) return hex(a);
  const auto a32 = static_cast<std::uint32_t>(a);
  auto split = [&](const char* mem, std::uint32_t base, std::uint32_t part_bytes) {
    const std::uint32_t p = (a32 - base) / part_bytes, off = (a32 - base) % part_bytes;
    return std::string(mem) + "[" + std::to_string(p) + "]" + (off ? "+" + hex(off) : "");
  };
  if (geo.in_sbuf(a32)) return split("sbuf", ArrayGeometry::kSbufBase, geo.sbuf_partition_bytes);
  if (geo.in_psum(a32)) return split("psum", ArrayGeometry::kPsumBase, geo.psum_partition_bytes());
  return hex(a);
}

// An index address of 0 means "no indirection" (MXMEM_PATTERN1D): print it as 0.
std::string index_text(const ArrayGeometry& geo, std::int64_t a) {
  return a == 0 ? "0" : addr_text(geo, static_cast<std::uint64_t>(a));
}

std::string reserved_text(const Decoded& d, const Leaf& leaf) {
  std::size_t n = leaf.size;
  while (n > 0 && d.raw[leaf.offset + n - 1] == 0) --n;  // trailing zero bytes are the default
  std::string s = "bytes:";
  for (std::size_t i = 0; i < n; ++i) {
    s += kDigits[d.raw[leaf.offset + i] >> 4];
    s += kDigits[d.raw[leaf.offset + i] & 0xF];
  }
  return s;
}

bool reserved_nonzero(const Decoded& d, const Leaf& leaf) {
  for (unsigned i = 0; i < leaf.size; ++i)
    if (d.raw[leaf.offset + i] != 0) return true;
  return false;
}

std::string scalar_text(const Decoded& d, const DecodedField& f) {
  if (f.leaf.kind == ValueKind::Reserved) return reserved_text(d, f.leaf);
  if (f.leaf.kind == ValueKind::Address) return addr_text(d.geo, static_cast<std::uint64_t>(f.value));
  return value_text(f.leaf, f.value);
}

std::string pattern_text(const Decoded& d, const FieldDesc& f, std::string& extra) {
  const std::string base = std::string(f.name) + ".";
  auto get = [&](const std::string& leaf) { return d.get(base + leaf); };
  const auto start = static_cast<std::uint32_t>(get("start_addr"));
  std::string head;
  unsigned dims = 0;
  bool single = false;
  switch (f.part) {
    case Part::Tensor1D: dims = 1; break;
    case Part::Tensor2D: dims = 2; break;
    case Part::Tensor3D: dims = 3; break;
    case Part::Tensor4D: dims = 4; break;
    case Part::MxMemPattern1D:
      dims = 1, single = true;
      head = "mx(" + addr_text(d.geo, start) + ", scale=" + addr_text(d.geo, static_cast<std::uint64_t>(get("scale_addr"))) +
             ", index=" + index_text(d.geo, get("index_addr")) + ")";
      break;
    default:
      switch (pattern_member(start)) {
        case PatternMember::MxTensorV2:
          dims = 2;
          head = "mx(" + addr_text(d.geo, start & ~ADDR4MARKER_MXTENSOR_V2) +
                 ", scale=" + addr_text(d.geo, static_cast<std::uint64_t>(get("scale_addr"))) + ")";
          break;
        case PatternMember::Indirect16B: {
          dims = 1, single = true;
          head = "indirect(" + addr_text(d.geo, start & ~ADDR_MARKER_INDIRECT) +
                 ", index=" + index_text(d.geo, get("index_addr")) +
                 ", num_index=" + std::to_string(get("num_index")) + ")";
          const DecodedField* r = d.field(base + "reserved");
          if (r && reserved_nonzero(d, r->leaf)) extra = " " + base + "reserved=" + reserved_text(d, r->leaf);
          break;
        }
        default: dims = 3; break;
      }
  }
  if (head.empty()) head = addr_text(d.geo, start);
  head += ':';
  for (unsigned k = 0; k < dims; ++k) {
    const std::string sfx = single ? "" : "[" + std::to_string(k) + "]";
    head += "[" + std::to_string(get("step_elem" + sfx)) + "," + std::to_string(get("num_elem" + sfx)) + "]";
  }
  return head;
}

}  // namespace

std::string to_assembly(const Decoded& d) {
  if (!d.opcode || d.layout == nullptr) {
    std::string s = ".raw ";
    for (auto b : d.raw) s += kDigits[b >> 4], s += kDigits[b & 0xF];
    return s;
  }
  std::string out = mnemonic(*d.opcode);
  for (const FieldDesc& f : d.layout->fields) {
    if (is_pattern(f.part)) {
      std::string extra;
      out += " " + std::string(f.name) + "=" + pattern_text(d, f, extra) + extra;
      continue;
    }
    for (const DecodedField& df : d.fields) {
      if (df.leaf.top != std::string_view(f.name)) continue;
      const std::string_view path = df.leaf.path;
      bool skip = false;
      if (path == "header.opcode") skip = true;  // the mnemonic
      else if (path == "header.inst_word_len") skip = df.value == kInstructionBytes / 4;
      else if (f.part == Part::Header || f.part == Part::Events) skip = df.value == 0;
      else if (df.leaf.kind == ValueKind::Reserved) skip = !reserved_nonzero(d, df.leaf);
      else if (path.find("reserved_bitfield") != std::string_view::npos) skip = df.value == 0;
      if (!skip) out += " " + std::string(path) + "=" + scalar_text(d, df);
    }
  }
  return out;
}

}  // namespace pevp::isa
