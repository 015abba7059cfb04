// .npy read/write (see npy.h). The header dict is parsed by a small strict parser of the one literal shape numpy
// writes -- {'descr': str, 'fortran_order': bool, 'shape': tuple of ints} -- rather than a general Python
// literal evaluator, so every deviation gets a specific message instead of a generic syntax error.
#include "pevp/host/npy.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>

#include "pevp/numerics/convert.h"
#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"

namespace pevp::host {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// A part of a header a message quotes, cut to 160 characters: a header may be up to 4 GiB long, and every part
// of it -- the whole, a key, the descr -- may be most of that.
std::string cut(const std::string& text) {
  constexpr std::size_t kMaxEcho = 160;
  if (text.size() <= kMaxEcho) return text;
  return text.substr(0, kMaxEcho) + "... (" + std::to_string(text.size()) + " characters)";
}

// The header dict parser. Positions in messages count from the first byte of the header text.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  struct Fields {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::size_t> shape;
  };

  Fields parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<std::vector<std::size_t>> shape;
    skip_ws();
    expect('{', "the header must be a Python dict literal starting with '{'");
    skip_ws();
    while (peek() != '}') {
      const std::size_t key_at = i_;
      const std::string key = parse_string("a dict key");
      skip_ws();
      expect(':', "expected ':' after the key '" + cut(key) + "'");
      skip_ws();
      auto duplicate = [&](bool seen) {
        if (seen) fail(key_at, "the key '" + cut(key) + "' appears twice");
      };
      if (key == "descr") {
        duplicate(descr.has_value());
        descr = parse_string("the 'descr' value");
      } else if (key == "fortran_order") {
        duplicate(fortran.has_value());
        fortran = parse_bool();
      } else if (key == "shape") {
        duplicate(shape.has_value());
        shape = parse_shape();
      } else {
        fail(key_at, "unknown key '" + cut(key) + "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        skip_ws();
      } else if (peek() != '}') {
        fail(i_, "expected ',' or '}' after the value of '" + cut(key) + "'");
      }
    }
    ++i_;  // '}'
    skip_ws();
    if (i_ != s_.size()) fail(i_, "unexpected text after the closing '}'");
    if (!descr) fail_missing("descr");
    if (!fortran) fail_missing("fortran_order");
    if (!shape) fail_missing("shape");
    return {*descr, *fortran, *shape};
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw NpyError(name_ + ": header dict, character " + std::to_string(at) + ": " + what + " (header: " + echo() + ")");
  }
  [[noreturn]] void fail_missing(const char* key) const {
    throw NpyError(name_ + ": header dict has no '" + key + "' key (header: " + echo() + ")");
  }
  std::string echo() const { return cut(s_); }
  char peek() const {
    if (i_ >= s_.size()) fail(i_, "the header ends inside the dict");
    return s_[i_];
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c) fail(i_, what);
    ++i_;
  }
  std::string parse_string(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') fail(i_, "expected " + what + " as a quoted string");
    const std::size_t start = ++i_;
    while (peek() != q)
      if (s_[i_++] == '\\') fail(i_ - 1, "escape sequences are not supported in " + what);
    return s_.substr(start, i_++ - start);
  }
  bool parse_bool() {
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return value;
      }
    fail(i_, "'fortran_order' must be True or False");
  }
  std::vector<std::size_t> parse_shape() {
    expect('(', "'shape' must be a tuple such as (3, 4)");
    std::vector<std::size_t> dims;
    skip_ws();
    while (peek() != ')') {
      if (peek() < '0' || peek() > '9') fail(i_, "'shape' entries must be non-negative integers");
      std::size_t v = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        const auto digit = static_cast<std::size_t>(s_[i_++] - '0');
        if (v > (std::numeric_limits<std::size_t>::max() - digit) / 10) fail(i_, "a 'shape' entry overflows");
        v = v * 10 + digit;
      }
      dims.push_back(v);
      skip_ws();
      if (peek() == ',') {
        ++i_;
        skip_ws();
      } else if (peek() != ')') {
        fail(i_, "expected ',' or ')' in 'shape'");
      }
    }
    ++i_;
    return dims;
  }

  const std::string& s_;
  const std::string& name_;
  std::size_t i_ = 0;
};

std::uint32_t load_le(const std::uint8_t* p, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

// fp64 -> fp32 with round-to-nearest-even and IEEE overflow, without the undefined behaviour a static_cast has for
// a finite double outside the float range.
float narrow_to_float(double x) {
  const float sign = std::signbit(x) ? -1.0f : 1.0f;
  if (std::isnan(x)) return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
  // Halfway between FLT_MAX and 2^128: the tie goes to the even neighbour, 2^128, i.e. Inf.
  constexpr double kOverflow = 0x1.ffffffp127;
  const double a = std::fabs(x);
  if (a >= kOverflow) return std::copysign(std::numeric_limits<float>::infinity(), sign);
  if (a > static_cast<double>(std::numeric_limits<float>::max())) return std::copysign(std::numeric_limits<float>::max(), sign);
  return static_cast<float>(x);
}

}  // namespace

namespace {

// The length of the magic, version and header length field, once the first 8 bytes are checked.
std::size_t prefix_bytes(const std::uint8_t* data, std::size_t size, const std::string& name) {
  if (size < kMagicBytes + 2 || std::memcmp(data, kMagic, kMagicBytes) != 0)
    throw NpyError(name + ": not a .npy file (it does not start with the magic \\x93NUMPY and a version)");
  const unsigned major = data[6], minor = data[7];
  if (!((major == 1 || major == 2) && minor == 0))
    throw NpyError(name + ": .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " is not supported (1.0 and 2.0 are)");
  return kMagicBytes + 2 + (major == 1 ? 2 : 4);
}

// A checked header: the array without its data, where the data starts and how many bytes it must have.
struct Header {
  NpyArray array;
  std::size_t data_offset = 0;
  std::size_t data_bytes = 0;
};

// Needs the bytes up to the end of the header; what follows it is not looked at.
Header parse_header(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const std::size_t prefix = prefix_bytes(data, size, name);
  const std::size_t len_bytes = prefix - kMagicBytes - 2;
  if (size < prefix)
    throw NpyError(name + ": truncated: the file ends inside the " + std::to_string(len_bytes) +
                   "-byte header length field");
  const std::size_t header_len = load_le(data + kMagicBytes + 2, len_bytes);
  if (size - prefix < header_len)
    throw NpyError(name + ": truncated header: the header length field says " + std::to_string(header_len) +
                   " bytes but only " + std::to_string(size - prefix) + " follow");
  const std::string header(reinterpret_cast<const char*>(data + prefix), header_len);
  for (std::size_t i = 0; i < header.size(); ++i) {
    const auto c = static_cast<unsigned char>(header[i]);
    if (c > 0x7E || (c < 0x20 && c != '\n' && c != '\t' && c != '\r'))
      throw NpyError(name + ": header byte " + std::to_string(i) + " is not printable ASCII (a header is a Python "
                     "dict literal)");
  }
  const auto fields = HeaderParser(header, name).parse();

  Header h;
  NpyArray& out = h.array;
  out.descr = fields.descr;
  out.shape = fields.shape;
  std::size_t item = 0;
  if (fields.descr == "<f2") item = 2;
  if (fields.descr == "<f4") item = 4;
  if (fields.descr == "<f8") item = 8;
  if (item == 0) {
    const bool big = !fields.descr.empty() && fields.descr[0] == '>';
    throw NpyError(name + ": dtype descr '" + cut(fields.descr) + "' is not supported" +
                   (big ? " (big-endian; save it as little-endian, e.g. a.astype('<f4'))" : "") +
                   "; readable are '<f2', '<f4' and '<f8'");
  }
  if (fields.fortran_order)
    throw NpyError(name + ": fortran_order is True; only C-order arrays are read (save np.ascontiguousarray(a))");
  if (fields.shape.size() != 1 && fields.shape.size() != 2)
    throw NpyError(name + ": shape " + shape_text(fields.shape) + " is " + std::to_string(fields.shape.size()) +
                   "-D; only 1-D and 2-D arrays are read");
  std::size_t count = 1;
  for (std::size_t d : fields.shape) {
    if (d != 0 && count > std::numeric_limits<std::size_t>::max() / item / d)
      throw NpyError(name + ": shape " + shape_text(fields.shape) + " is too large to address");
    count *= d;
  }
  out.item_bytes = item;
  h.data_offset = prefix + header_len;
  h.data_bytes = count * item;
  return h;
}

[[noreturn]] void wrong_data_size(const std::string& name, std::uint64_t have, const Header& h) {
  throw NpyError(name + ": data is " + std::to_string(have) + " bytes but shape " + shape_text(h.array.shape) +
                 " of '" + h.array.descr + "' needs " + std::to_string(h.data_bytes) + " bytes");
}

}  // namespace

// The header first, then -- once its shape is known to fit the host-memory limit and, for a regular file, the
// file's size to match it -- the data. A sparse 40 GB file or /dev/zero costs a few bytes, not the host's memory.
struct NpyFile::State {
  files::InputFile in;
  std::string bytes;  // the header's bytes (the data goes straight into the array)
  Header header;
  bool read = false;

  void more(std::uint64_t n) {
    std::string error;
    if (!in.read(n, bytes, &error)) throw NpyError(error);
  }
  const std::uint8_t* view() const { return reinterpret_cast<const std::uint8_t*>(bytes.data()); }
  // Once per file, before its data: a regular file's size must match the shape (checked without reading it).
  void begin_data(const char* how);
};

NpyFile::NpyFile(const std::string& path) : state_(std::make_unique<State>()) {
  State& s = *state_;
  std::string error;
  if (!s.in.open(path, &error)) throw NpyError(error);
  s.more(kMagicBytes + 2);
  const std::size_t prefix = prefix_bytes(s.view(), s.bytes.size(), path);
  s.more(prefix - s.bytes.size());
  if (s.bytes.size() == prefix) s.more(load_le(s.view() + kMagicBytes + 2, prefix - kMagicBytes - 2));
  s.header = parse_header(s.view(), s.bytes.size(), path);
  std::string().swap(s.bytes);
}

NpyFile::~NpyFile() = default;

const NpyArray& NpyFile::header() const { return state_->header.array; }

bool NpyFile::regular() const { return state_->in.regular_size().has_value(); }

void NpyFile::State::begin_data(const char* how) {
  if (read) throw std::logic_error(std::string("NpyFile::") + how + ": " + in.path() + " was read already");
  read = true;
  if (in.regular_size() && *in.regular_size() != header.data_offset + header.data_bytes)
    wrong_data_size(in.path(), *in.regular_size() < header.data_offset ? 0 : *in.regular_size() - header.data_offset,
                    header);
}

NpyArray NpyFile::read(End end) {
  State& s = *state_;
  const std::string& path = s.in.path();
  const Header& h = s.header;
  const std::uint64_t limit = files::kNpyInput.max_bytes;
  if (!s.read && h.data_bytes > limit - h.data_offset)
    throw NpyError(path + ": shape " + shape_text(h.array.shape) + " of '" + h.array.descr + "' needs " +
                   std::to_string(h.data_bytes) + " bytes of data, more than the " + std::to_string(limit) +
                   "-byte host-memory limit for " + files::kNpyInput.what);
  s.begin_data("read");
  NpyArray out = h.array;  // the header stays as it was for header()
  // Straight into the array, once: the data is never held twice.
  out.data.reserve(h.data_bytes);
  std::string error;
  if (!s.in.read(h.data_bytes, out.data, &error)) throw NpyError(error);
  if (out.data.size() != h.data_bytes) wrong_data_size(path, out.data.size(), h);
  if (end == End::CheckNow) check_end();
  return out;
}

void NpyFile::skip(End end) {
  State& s = *state_;
  s.begin_data("skip");
  if (!s.in.regular_size()) {
    std::uint64_t dropped = 0;
    std::string error;
    if (!s.in.discard(s.header.data_bytes, &dropped, &error)) throw NpyError(error);
    if (dropped != s.header.data_bytes) wrong_data_size(s.in.path(), dropped, s.header);
  }
  if (end == End::CheckNow) check_end();
}

void NpyFile::check_end() {
  State& s = *state_;
  if (s.in.regular_size()) return;  // its size matched the shape before the data was read
  // One byte more than the shape needs tells trailing bytes (of a FIFO) from none.
  std::string more;
  std::string error;
  if (!s.in.read(1, more, &error)) throw NpyError(error);
  if (!more.empty())
    throw NpyError(s.in.path() + ": data is more than the " + std::to_string(s.header.data_bytes) +
                   " bytes shape " + shape_text(s.header.array.shape) + " of '" + s.header.array.descr + "' needs");
}

NpyArray parse_npy(const std::uint8_t* data, std::size_t size, const std::string& name) {
  Header h = parse_header(data, size, name);
  const std::size_t have = size - h.data_offset;
  if (have != h.data_bytes) wrong_data_size(name, have, h);
  h.array.data.assign(data + h.data_offset, data + size);
  return std::move(h.array);
}

double NpyArray::value(std::size_t i) const {
  const std::uint8_t* p = &data.at(i * item_bytes);
  if (item_bytes == 2) return num::from_fp16(static_cast<std::uint16_t>(load_le(p, 2)));
  if (item_bytes == 4) return num::bits_float(load_le(p, 4));
  const std::uint64_t bits = load_le(p, 4) | static_cast<std::uint64_t>(load_le(p + 4, 4)) << 32;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

NpyArray read_npy(const std::string& path) { return NpyFile(path).read(); }

std::pair<std::size_t, std::size_t> matrix_shape(const NpyArray& array, const std::string& name) {
  if (array.shape.size() != 2)
    throw NpyError(name + ": shape " + shape_text(array.shape) + " is " + std::to_string(array.shape.size()) +
                   "-D but a matrix needs a 2-D shape (rows, cols); reshape it, e.g. a.reshape(1, -1)");
  return {array.shape[0], array.shape[1]};
}

Matrix to_matrix(const NpyArray& array, const std::string& name) {
  const auto [rows, cols] = matrix_shape(array, name);
  Matrix m(rows, cols);
  if (array.size() != m.data.size())
    throw NpyError(name + ": holds " + std::to_string(array.size()) + " elements for shape " +
                   shape_text(array.shape));
  for (std::size_t i = 0; i < m.data.size(); ++i) {
    const std::uint8_t* p = &array.data[i * array.item_bytes];
    // fp32 and fp16 decode straight from their bits (exact, NaN payloads kept); only fp64 has to round.
    if (array.item_bytes == 4) {
      m.data[i] = num::bits_float(load_le(p, 4));
    } else if (array.item_bytes == 2) {
      m.data[i] = num::from_fp16(static_cast<std::uint16_t>(load_le(p, 2)));
    } else {
      m.data[i] = narrow_to_float(array.value(i));
    }
  }
  return m;
}

Matrix read_npy_matrix(const std::string& path) { return to_matrix(read_npy(path), path); }

std::vector<std::uint8_t> encode_npy(const Matrix& m) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(m.rows) + ", " +
                       std::to_string(m.cols) + "), }";
  // numpy pads with spaces so that magic + version + length + header is a multiple of 64, ending in '\n'.
  const std::size_t prefix = kMagicBytes + 2 + 2;
  const std::size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  if (header.size() > 0xFFFF) throw NpyError("encode_npy: header too long for format version 1.0");
  std::vector<std::uint8_t> out(kMagic, kMagic + kMagicBytes);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<std::uint8_t>(header.size() & 0xFF));
  out.push_back(static_cast<std::uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.reserve(out.size() + m.data.size() * 4);
  for (float f : m.data) {
    const std::uint32_t u = num::float_bits(f);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
  }
  return out;
}

bool write_npy(const std::string& path, const Matrix& m, std::string* error) {
  if (m.data.size() != m.rows * m.cols) {
    if (error)
      *error = path + ": matrix holds " + std::to_string(m.data.size()) + " values for shape (" +
               std::to_string(m.rows) + ", " + std::to_string(m.cols) + ")";
    return false;
  }
  const auto bytes = encode_npy(m);
  return files::write_file(path, bytes.data(), bytes.size(), error);
}

void write_npy(const std::string& path, const Matrix& m) {
  std::string error;
  if (!write_npy(path, m, &error)) throw NpyError(error);
}

}  // namespace pevp::host
