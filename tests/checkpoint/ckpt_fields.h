// An independent reading of the checkpoint format (docs/checkpoint.md "Format"), field by field: where each field
// of each section is, under a dotted name ("arr_seq.tiles[0].stream_free", "seq.local", "time.value"), with its
// width and what it holds (a count, a time, a boolean ...). The checkpoint tests edit one field and fix the CRCs to
// make a well-formed checkpoint with other content; the structure-aware fuzzer (tests/fuzz/fuzz_checkpoint.cpp)
// picks a field to mutate the same way. The walk follows the layout written by platform/vp/src/checkpoint.cpp's
// write_* functions but shares no code with its reader; it returns nothing for bytes it cannot walk whole.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pevp/arr_seq/timeline.h"
#include "pevp/isa/decode.h"
#include "pevp/pe_array/conv_lut.h"

namespace ckf {

using Bytes = std::vector<std::uint8_t>;

enum class Kind : std::uint8_t {
  Count,    // a u32 element count
  Cycle,    // a time in engine cycles
  Time,     // the simulated time, in units of the time resolution
  Counter,  // a statistic or counter
  Index,    // an instruction index, a tile key, a page index, a slot
  Flag,     // a boolean byte
  Enum,     // a small code (generation, dtype, kind ...)
  Value,    // data (register values, floats, coordinates ...)
};

struct Field {
  std::string name;  // "section.path"
  std::size_t at = 0;  // absolute offset of its first byte
  unsigned width = 0;  // 1, 2, 4 or 8 bytes, little-endian
  Kind kind = Kind::Value;
};

struct Section {
  std::string name;
  std::size_t header = 0, payload = 0, length = 0;  // the u64 length is at payload - 12, the CRC at payload - 4
};

struct Layout {
  std::vector<Section> sections;
  std::vector<Field> fields;
  const Field* find(const std::string& name) const {
    for (const Field& f : fields)
      if (f.name == name) return &f;
    return nullptr;
  }
};

inline std::uint64_t get_le(const Bytes& b, std::size_t at, unsigned n) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= std::uint64_t{b[at + i]} << (8 * i);
  return v;
}
inline void put_le(Bytes& b, std::size_t at, std::uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline std::uint64_t get(const Bytes& b, const Field& f) { return get_le(b, f.at, f.width); }
inline void set(Bytes& b, const Field& f, std::uint64_t v) { put_le(b, f.at, v, f.width); }

// CRC-32 (IEEE 802.3, zlib's), bit by bit: independent of the reader's table.
inline std::uint32_t crc32(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

namespace detail {

struct Overrun {};

class Walk {
 public:
  Walk(const Bytes& b, Layout& out) : b_(b), out_(out) {}

  std::uint64_t field(const std::string& name, unsigned width, Kind kind) {
    need(width);
    out_.fields.push_back({prefix_ + name, at_, width, kind});
    const std::uint64_t v = get_le(b_, at_, width);
    at_ += width;
    return v;
  }
  std::size_t count(const std::string& name, std::size_t min_bytes) {
    const std::uint64_t n = field(name, 4, Kind::Count);
    if (n * min_bytes > b_.size() - at_) throw Overrun{};  // never walks more elements than the bytes hold
    return static_cast<std::size_t>(n);
  }
  void skip(std::size_t n) {
    need(n);
    at_ += n;
  }
  void str(const std::string& name) { skip(count(name + ".length", 1)); }
  std::size_t at() const { return at_; }
  std::string prefix_;

 private:
  void need(std::size_t n) const {
    if (n > b_.size() - at_) throw Overrun{};
  }
  const Bytes& b_;
  Layout& out_;
  std::size_t at_ = 0;
};

inline std::string ix(const std::string& name, std::size_t i) { return name + "[" + std::to_string(i) + "]"; }

inline void tile(Walk& w, const std::string& name) {
  for (const char* c : {".row0", ".rows", ".col0", ".cols"}) w.field(name + c, 4, Kind::Value);
}

inline void memory(Walk& w) {
  const std::uint64_t size = w.field("size", 8, Kind::Value);
  const std::uint64_t page = w.field("page_bytes", 4, Kind::Value);
  if (page == 0) throw Overrun{};
  const std::size_t n = w.count("pages", 8);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t index = w.field(ix("pages", i) + ".index", 8, Kind::Index);
    if (index >= (size + page - 1) / page) throw Overrun{};
    w.skip(static_cast<std::size_t>(std::min<std::uint64_t>(page, size - index * page)));
  }
  w.field("errors", 8, Kind::Counter);
}

inline void csrs(Walk& w) {
  for (std::size_t f = 0; f < 4; ++f) {
    const std::string face = ix("faces", f);
    w.str(face + ".name");
    const std::size_t n = w.count(face + ".registers", 4);
    for (std::size_t i = 0; i < n; ++i) w.field(ix(face + ".registers", i), 4, Kind::Value);
    w.field(face + ".ignored_ro_writes", 8, Kind::Counter);
    w.field(face + ".unmapped_accesses", 8, Kind::Counter);
    w.field(face + ".rejected_unprivileged", 8, Kind::Counter);
  }
}

inline void stationary(Walk& w, const std::string& name) {
  tile(w, name + ".tile");
  const std::uint64_t k = w.field(name + ".k", 4, Kind::Value);
  const std::uint64_t m = w.field(name + ".m", 4, Kind::Value);
  for (const char* e : {".gen", ".dtype", ".fp32_mode"}) w.field(name + e, 1, Kind::Enum);
  w.field(name + ".double_row", 1, Kind::Flag);
  w.field(name + ".mx", 1, Kind::Flag);
  w.field(name + ".mx_mode", 1, Kind::Enum);
  w.skip(static_cast<std::size_t>(k * m * 4));
}

inline void pe_array(Walk& w) {
  const std::size_t seeds = w.count("seeds", 4);
  for (std::size_t i = 0; i < seeds; ++i) w.field(ix("seeds", i), 4, Kind::Value);
  const std::size_t st = w.count("stationaries", 24);
  for (std::size_t i = 0; i < st; ++i) stationary(w, ix("stationaries", i));
  if (w.field("staged_identity", 1, Kind::Flag) == 1) stationary(w, "staged");
  const std::size_t tags = w.count("tag_tiles", 24);
  for (std::size_t i = 0; i < tags; ++i) {
    const std::string t = ix("tag_tiles", i);
    tile(w, t + ".tile");
    const std::uint64_t k = w.field(t + ".k", 4, Kind::Value), m = w.field(t + ".m", 4, Kind::Value);
    w.skip(static_cast<std::size_t>(k * m));
  }
  const std::size_t groups = w.count("open", 1);
  for (std::size_t i = 0; i < groups; ++i) w.field(ix("open", i), 1, Kind::Flag);
  w.field("last.kind", 1, Kind::Enum);
  tile(w, "last.tile");
  for (const char* c : {"last.k", "last.m", "last.n", "last.macs"}) w.field(c, 8, Kind::Counter);
  w.field("last.passes", 4, Kind::Counter);
  w.field("last.elements_loaded", 8, Kind::Counter);
  for (std::size_t slot = 0; slot < pevp::pe::kConvLutDtypes; ++slot) w.skip(4 * w.count(ix("conv_luts", slot), 4));
  const std::size_t regs = w.count("pe_registers", 16);
  for (std::size_t i = 0; i < regs; ++i)
    for (const char* c : {".row0", ".col0", ".reg_addr", ".value"}) w.field(ix("pe_registers", i) + c, 4, Kind::Value);
}

inline void counter(Walk& w, const std::string& name) {
  const std::size_t n = w.count(name + ".closed", 16);
  for (std::size_t i = 0; i < n; ++i) {
    w.field(ix(name + ".closed", i) + ".start", 8, Kind::Cycle);
    w.field(ix(name + ".closed", i) + ".end", 8, Kind::Cycle);
  }
  w.field(name + ".open", 1, Kind::Flag);
  w.field(name + ".open_start", 8, Kind::Cycle);
  w.field(name + ".open_end", 8, Kind::Cycle);
  w.field(name + ".counted_until", 8, Kind::Cycle);
  w.field(name + ".counted", 8, Kind::Counter);
}

inline void u64s(Walk& w, const std::string& name, std::size_t n, Kind kind) {
  for (std::size_t i = 0; i < n; ++i) w.field(ix(name, i), 8, kind);
}

inline void arr_seq(Walk& w) {
  using pevp::arrseq::kStallKinds;
  using pevp::arrseq::Timeline;
  const std::size_t starts = w.count("starts", 8);
  u64s(w, "starts", starts, Kind::Cycle);
  w.field("last_start", 8, Kind::Cycle);
  w.field("last_response", 8, Kind::Cycle);
  w.field("any_response", 1, Kind::Flag);
  const std::size_t tiles = w.count("tiles", 32);
  for (std::size_t i = 0; i < tiles; ++i) {
    w.field(ix("tiles", i) + ".key", 8, Kind::Index);
    for (const char* c : {".wl_free", ".weights_ready", ".stream_free"}) w.field(ix("tiles", i) + c, 8, Kind::Cycle);
  }
  const std::size_t flight = w.count("in_flight", 26);
  for (std::size_t i = 0; i < flight; ++i) {
    tile(w, ix("in_flight", i) + ".tile");
    w.field(ix("in_flight", i) + ".banks", 1, Kind::Value);
    w.field(ix("in_flight", i) + ".complete", 8, Kind::Cycle);
    w.field(ix("in_flight", i) + ".regwrite", 1, Kind::Flag);
  }
  const std::size_t responses = w.count("responses", 16);
  for (std::size_t i = 0; i < responses; ++i) {
    w.field(ix("responses", i) + ".done", 8, Kind::Cycle);
    w.field(ix("responses", i) + ".response", 8, Kind::Cycle);
  }
  for (std::size_t g = 0; g < Timeline::kRowGroups; ++g) {
    const std::string group = ix("groups", g);
    for (const char* c : {".matmul", ".weight_load", ".busy"}) counter(w, group + c);
    w.field(group + ".origin", 8, Kind::Cycle);
    w.field(group + ".last_active", 8, Kind::Cycle);
  }
  u64s(w, "stats.micro_ops", 3, Kind::Counter);
  u64s(w, "stats.busy_cycles", 3, Kind::Counter);
  w.field("stats.macs", 8, Kind::Counter);
  u64s(w, "stats.macs_by_kind", pevp::energy::kMacKinds, Kind::Counter);
  for (const char* c : {"stats.sbuf_read_bytes", "stats.psum_bytes"}) w.field(c, 8, Kind::Counter);
  u64s(w, "stats.pe_cycles", 6, Kind::Value);  // doubles
  u64s(w, "stats.stall_cycles", kStallKinds, Kind::Counter);
  u64s(w, "stats.stalled_ops", kStallKinds, Kind::Counter);
  w.field("stats.any", 1, Kind::Flag);
  for (const char* c : {"stats.first_start", "stats.last_complete"}) w.field(c, 8, Kind::Cycle);
  w.field("stats.busy_span", 8, Kind::Counter);
  for (const char* c : {"period_start", "period_end"}) w.field(c, 8, Kind::Cycle);
  w.field("closed_span", 8, Kind::Counter);
  u64s(w, "issued", 3, Kind::Counter);
  for (const char* c : {"dependency_waits", "serialised_waits", "ififo_full_waits", "faults"})
    w.field(c, 8, Kind::Counter);
  for (std::size_t op = 0; op < 256; ++op)
    for (const char* c : {".micro_ops", ".busy_cycles", ".latency_cycles"})
      w.field(ix("opcodes", op) + c, 8, Kind::Counter);
}

inline void record(Walk& w, const std::string& name) {
  w.field(name + ".index", 8, Kind::Index);
  w.field(name + ".opcode", 1, Kind::Enum);
  w.field(name + ".field_offset", 1, Kind::Value);
  w.field(name + ".rule_number", 2, Kind::Value);
  w.str(name + ".rule");
  w.str(name + ".field");
  w.field(name + ".value", 8, Kind::Value);
  w.str(name + ".message");
}

inline void checker(Walk& w, const std::string& name) {
  constexpr std::size_t cells = sizeof(pevp::isa::StreamChecker::State::cells) / 4;
  for (std::size_t i = 0; i < cells; ++i) w.field(ix(name + ".cells", i), 4, Kind::Value);
  for (const char* c : {".r0", ".r1", ".c0", ".c1"}) w.field(name + c, 1, Kind::Value);
  w.field(name + ".last_value", 4, Kind::Value);
}

inline void seq(Walk& w) {
  const std::size_t queued = w.count("queue", 72);
  for (std::size_t i = 0; i < queued; ++i) {
    w.field(ix("queue", i) + ".index", 8, Kind::Index);
    w.skip(64);
  }
  w.field("local", 8, Kind::Cycle);
  w.field("waited_for_software", 1, Kind::Flag);
  w.field("next_index", 8, Kind::Index);
  w.field("retired", 8, Kind::Counter);
  w.field("done", 1, Kind::Flag);
  if (w.field("error", 1, Kind::Flag) == 1) record(w, "record");
  const std::size_t deferred = w.count("deferred", 32);
  for (std::size_t i = 0; i < deferred; ++i) record(w, ix("deferred", i));
  w.field("next_log_index", 8, Kind::Index);
  u64s(w, "retired_by_opcode", 256, Kind::Counter);
  w.field("syncs", 8, Kind::Counter);
  w.field("semaphore_wait_cycles", 8, Kind::Counter);
  w.field("array_idle_on_semaphore_cycles", 8, Kind::Counter);
  const std::size_t keys = w.count("cache", 68);
  for (std::size_t i = 0; i < keys; ++i) {
    w.field(ix("cache", i) + ".slot", 4, Kind::Index);
    w.skip(64);
  }
  w.field("cache_hits", 8, Kind::Counter);
  w.field("cache_misses", 8, Kind::Counter);
  checker(w, "no_mix");
  const std::size_t checkpoints = w.count("no_mix_checkpoints", 144);
  for (std::size_t i = 0; i < checkpoints; ++i) {
    w.field(ix("no_mix_checkpoints", i) + ".index", 8, Kind::Index);
    checker(w, ix("no_mix_checkpoints", i));
  }
}

}  // namespace detail

// Every section and field of a checkpoint, or nothing when the bytes do not walk whole (a bad magic, a section
// cut short, a payload whose content does not end where its length says).
inline std::optional<Layout> layout_of(const Bytes& b) {
  using detail::Walk;
  Layout l;
  Walk w(b, l);
  try {
    w.skip(8);
    w.field("header.version", 4, Kind::Value);
    w.str("header.generation");
    while (w.at() < b.size()) {
      Section s;
      s.header = w.at();
      if (b.size() - w.at() < 2) return std::nullopt;  // a section header cut short in its name's length
      const std::size_t name_len = static_cast<std::size_t>(get_le(b, w.at(), 2));
      w.skip(2);
      w.skip(name_len);
      s.name.assign(b.begin() + static_cast<std::ptrdiff_t>(s.header + 2),
                    b.begin() + static_cast<std::ptrdiff_t>(s.header + 2 + name_len));
      w.skip(12);
      s.payload = w.at();
      s.length = static_cast<std::size_t>(get_le(b, s.payload - 12, 8));
      if (s.length > b.size() - s.payload) return std::nullopt;
      w.prefix_ = s.name + ".";
      if (s.name == "config") w.str("text");
      else if (s.name == "time") {
        w.field("resolution_fs", 8, Kind::Value);
        w.field("value", 8, Kind::Time);
      } else if (s.name == "sbuf" || s.name == "psum") detail::memory(w);
      else if (s.name == "csrs") detail::csrs(w);
      else if (s.name == "pe_array") detail::pe_array(w);
      else if (s.name == "arr_seq") detail::arr_seq(w);
      else if (s.name == "seq") detail::seq(w);
      else return std::nullopt;
      if (w.at() != s.payload + s.length) return std::nullopt;
      w.prefix_.clear();
      l.sections.push_back(s);
    }
  } catch (const detail::Overrun&) {
    return std::nullopt;
  }
  return l;
}

// Recomputes every section's CRC: the checkpoint is well formed again after a field was edited in place.
inline void fix_crcs(Bytes& b, const Layout& l) {
  for (const Section& s : l.sections) put_le(b, s.payload - 4, crc32(b.data() + s.payload, s.length), 4);
}

// `b` with field `name` set to `v` and the CRCs fixed. Throws std::logic_error when the field is not there.
inline Bytes with_field(Bytes b, const std::string& name, std::uint64_t v) {
  const std::optional<Layout> l = layout_of(b);
  if (!l) throw std::logic_error("not a checkpoint this reading can walk");
  const Field* f = l->find(name);
  if (f == nullptr) throw std::logic_error("no field " + name);
  set(b, *f, v);
  fix_crcs(b, *l);
  return b;
}

inline std::uint64_t field_value(const Bytes& b, const std::string& name) {
  const std::optional<Layout> l = layout_of(b);
  if (!l) throw std::logic_error("not a checkpoint this reading can walk");
  const Field* f = l->find(name);
  if (f == nullptr) throw std::logic_error("no field " + name);
  return get(b, *f);
}

}  // namespace ckf
