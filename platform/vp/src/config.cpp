#include "pevp/platform/config.h"
#include "pevp/documents/documents.h"
#include "pevp/files/input_file.h"

#include "pevp/isa/hex.h"

#include <algorithm>
#include <functional>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <optional>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "pevp/isa/layout.h"
#include "pevp/pe_array_rtl/rtl_datapath.h"
#include "pevp/regfile_rtl/rtl_regfile.h"

namespace pevp::platform {

CsrsImpl default_csrs_impl() {
  // Read once: every configuration of the process starts from the same default.
  static const CsrsImpl impl = [] {
    const char* env = std::getenv("PEVP_CSRS_IMPL");
    return env != nullptr && std::string_view(env) == "rtl" ? CsrsImpl::Rtl : CsrsImpl::Tlm;
  }();
  return impl;
}

using nlohmann::json;
using sc_core::sc_time;

ConfigError::ConfigError(std::string key, const std::string& message)
    : std::runtime_error(message), key_(std::move(key)) {}

std::string_view name(SimMode mode) {
  switch (mode) {
    case SimMode::Functional: return "functional";
    case SimMode::Timing: return "timing";
    case SimMode::Both: return "both";
  }
  return "?";
}

namespace {

// ---- ranges (docs/configuration.md gives the reasons) ---------------------------------
constexpr std::uint64_t kMap32 = std::uint64_t{1} << 32;  // the global map is 32-bit (D-ADDR)
constexpr std::uint64_t kPage = 0x1000;                    // windows start on 4 KiB boundaries
constexpr std::uint64_t kMaxWindow = 0x1000000;  // 16 MiB: far above any register or queue block
constexpr double kMaxTimeNs = 1e6;               // 1 ms per access: beyond that it is a typo
constexpr double kMinClockGhz = 0.1;
constexpr double kMaxClockGhz = 10.0;

enum class Kind { Generation, Mode, Unmapped, CsrsImpl, PeArrayImpl, Rounding, TimingModel, Hazards, Count, Address, Size, Geometry, TimeNs, Ghz, Fraction, Real };

// One key of the JSON format. The table below drives to_json, from_json,
// apply_override and validate, so a key cannot exist in one and not the others.
struct Leaf {
  std::string_view section;  // "" = top level
  std::string_view name;
  Kind kind;
  std::uint64_t lo = 0, hi = 0, align = 1;  // integer kinds, and Real's bounds
  std::string_view unit;                    // Real: what its number counts ("GB/s")
  std::function<std::uint64_t(const VpConfig&)> get_u;
  std::function<void(VpConfig&, std::uint64_t)> set_u;
  std::function<sc_time(const VpConfig&)> get_t;
  std::function<void(VpConfig&, const sc_time&)> set_t;
  std::function<double(const VpConfig&)> get_d;
  std::function<void(VpConfig&, double)> set_d;

  std::uint64_t get(const VpConfig& c) const { return get_u(c); }
  void set(VpConfig& c, std::uint64_t v) const { set_u(c, v); }

  std::string path() const {
    return section.empty() ? std::string(name) : std::string(section) + "." + std::string(name);
  }
};

Leaf named(std::string_view section, std::string_view name, Kind kind) {
  Leaf l;
  l.section = section;
  l.name = name;
  l.kind = kind;
  return l;
}

Leaf integer(std::string_view section, std::string_view name, Kind kind, std::uint64_t lo, std::uint64_t hi,
             std::uint64_t align, std::uint64_t (*get)(const VpConfig&), void (*set)(VpConfig&, std::uint64_t)) {
  Leaf l = named(section, name, kind);
  l.lo = lo;
  l.hi = hi;
  l.align = align;
  l.get_u = get;
  l.set_u = set;
  return l;
}

// A member of ArrayGeometry an architect sets: a range here, the rules that
// relate members (rows <= partitions, SBUF below PSUM, ...) in validate().
Leaf geometry_leaf(std::string_view name, std::uint64_t lo, std::uint64_t hi, std::uint64_t (*get)(const VpConfig&),
                   void (*set)(VpConfig&, std::uint64_t)) {
  return integer("geometry", name, Kind::Count, lo, hi, 1, get, set);
}
// A member that follows from the others or from the generation: dumped, and
// accepted in a file or --set only with the value it has.
Leaf derived_leaf(std::string_view name, std::uint64_t (*get)(const VpConfig&)) {
  Leaf l = named("geometry", name, Kind::Geometry);
  l.get_u = get;  // also the value it must hold, from the configuration so far
  return l;
}

// The memories take their partitions and sizes from the geometry (one source).
void set_geometry(VpConfig& c, const isa::ArrayGeometry& geo) {
  c.geometry = geo;
  const memory::MemoryConfig sbuf = memory::sbuf_config(geo), psum = memory::psum_config(geo);
  c.sbuf.partitions = sbuf.partitions;
  c.sbuf.partition_bytes = sbuf.partition_bytes;
  c.psum.partitions = psum.partitions;
  c.psum.partition_bytes = psum.partition_bytes;
  c.psum.bank_bytes = psum.bank_bytes;
}
template <std::uint32_t isa::ArrayGeometry::*member>
void set_member(VpConfig& c, std::uint64_t v) {
  isa::ArrayGeometry geo = c.geometry;
  geo.*member = static_cast<std::uint32_t>(v);
  set_geometry(c, geo);
}

// The keys a module describes (params::Param) as leaves of `section`; `of`
// finds the module's configuration struct inside a VpConfig (const or not).
template <class Config, class Of>
void add_module(std::vector<Leaf>& t, std::string_view section, const params::Params<Config>& list, Of of) {
  for (const params::Param<Config>& p : list) {
    Leaf l;
    l.section = section;
    l.name = p.name;
    l.lo = p.lo;
    l.hi = p.hi;
    switch (p.kind) {
      case params::Kind::Count: {
        l.kind = Kind::Count;
        if (const auto* wide = std::get_if<std::uint64_t Config::*>(&p.member)) {
          const auto m = *wide;
          l.get_u = [of, m](const VpConfig& c) -> std::uint64_t { return of(c).*m; };
          l.set_u = [of, m](VpConfig& c, std::uint64_t v) { of(c).*m = v; };
          break;
        }
        const auto m = std::get<unsigned Config::*>(p.member);
        l.get_u = [of, m](const VpConfig& c) -> std::uint64_t { return of(c).*m; };
        l.set_u = [of, m](VpConfig& c, std::uint64_t v) { of(c).*m = static_cast<unsigned>(v); };
        break;
      }
      case params::Kind::TimeNs: {
        const auto m = std::get<sc_time Config::*>(p.member);
        l.kind = Kind::TimeNs;
        l.get_t = [of, m](const VpConfig& c) { return of(c).*m; };
        l.set_t = [of, m](VpConfig& c, const sc_time& v) { of(c).*m = v; };
        break;
      }
      case params::Kind::Fraction:
      case params::Kind::Real: {
        const auto m = std::get<double Config::*>(p.member);
        l.kind = p.kind == params::Kind::Real ? Kind::Real : Kind::Fraction;
        l.unit = p.unit;
        l.get_d = [of, m](const VpConfig& c) { return of(c).*m; };
        l.set_d = [of, m](VpConfig& c, double v) { of(c).*m = v; };
        break;
      }
    }
    t.push_back(std::move(l));
  }
}

const std::vector<Leaf>& leaves() {
  using C = VpConfig;
  using G = isa::ArrayGeometry;
  static const std::vector<Leaf> table = [] {
    std::vector<Leaf> t;
    t.push_back(named("", "generation", Kind::Generation));
    t.push_back(named("", "mode", Kind::Mode));

    Leaf clock = named("tensor_engine", "clock_ghz", Kind::Ghz);
    clock.get_d = [](const C& c) { return c.tensor_engine_clock_ghz; };
    clock.set_d = [](C& c, double v) { c.tensor_engine_clock_ghz = v; };
    t.push_back(clock);
    t.push_back(named("tensor_engine", "psum_rounding", Kind::Rounding));

    // The machine's shape (isa::ArrayGeometry): every unit reads it from here.
    // Ranges per member; isa::check_geometry relates them in validate().
    constexpr std::uint64_t kSide = G::kMaxArraySide;
    t.push_back(geometry_leaf(
        "partitions", 1, kSide, [](const C& c) -> std::uint64_t { return c.geometry.partitions; },
        set_member<&G::partitions>));
    t.push_back(geometry_leaf(
        "sbuf_partition_bytes", 1, G::kPsumBase, [](const C& c) -> std::uint64_t { return c.geometry.sbuf_partition_bytes; },
        set_member<&G::sbuf_partition_bytes>));
    t.push_back(derived_leaf("psum_partition_bytes",
                             [](const C& c) -> std::uint64_t { return c.geometry.psum_partition_bytes(); }));
    t.push_back(geometry_leaf(
        "psum_bank_bytes", 1, 65536, [](const C& c) -> std::uint64_t { return c.geometry.psum_bank_bytes; },
        set_member<&G::psum_bank_bytes>));
    t.push_back(geometry_leaf(
        "psum_banks", 1, G::kMaxPsumBanks, [](const C& c) -> std::uint64_t { return c.geometry.psum_banks; },
        set_member<&G::psum_banks>));
    t.push_back(geometry_leaf(
        "pe_rows", 1, kSide, [](const C& c) -> std::uint64_t { return c.geometry.pe_rows; }, set_member<&G::pe_rows>));
    t.push_back(geometry_leaf(
        "pe_cols", 1, kSide, [](const C& c) -> std::uint64_t { return c.geometry.pe_cols; }, set_member<&G::pe_cols>));
    t.push_back(derived_leaf("row_groups", [](const C& c) -> std::uint64_t { return c.geometry.row_groups; }));
    t.push_back(derived_leaf("col_groups", [](const C& c) -> std::uint64_t { return c.geometry.col_groups; }));
    t.push_back(derived_leaf("queues", [](const C& c) -> std::uint64_t { return c.geometry.queues; }));
    t.push_back(derived_leaf("sbuf_xbus_ports", [](const C& c) -> std::uint64_t { return c.geometry.sbuf_xbus_ports; }));

    const std::uint64_t top = kMap32 - kPage;
    t.push_back(integer(
        "address_map", "sbuf", Kind::Address, 0, top, kPage, [](const C& c) { return c.platform.map.sbuf; },
        [](C& c, std::uint64_t v) { c.platform.map.sbuf = v; }));
    t.push_back(integer(
        "address_map", "psum", Kind::Address, 0, top, kPage, [](const C& c) { return c.platform.map.psum; },
        [](C& c, std::uint64_t v) { c.platform.map.psum = v; }));
    t.push_back(integer(
        "address_map", "apb", Kind::Address, 0, top, kPage, [](const C& c) { return c.platform.map.apb; },
        [](C& c, std::uint64_t v) { c.platform.map.apb = v; }));
    // At least the four 4 KiB faces ArrSeqCsrs places at +0x0..+0x3000.
    t.push_back(integer(
        "address_map", "apb_size", Kind::Size, 0x4000, kMaxWindow, kPage,
        [](const C& c) { return c.platform.map.apb_size; }, [](C& c, std::uint64_t v) { c.platform.map.apb_size = v; }));
    t.push_back(integer(
        "address_map", "iq", Kind::Address, 0, top, kPage, [](const C& c) { return c.platform.map.iq; },
        [](C& c, std::uint64_t v) { c.platform.map.iq = v; }));
    // The queue window is the SEQ's window_bytes too: one parameter, kept in step.
    t.push_back(integer(
        "address_map", "iq_size", Kind::Size, isa::kInstructionBytes, kMaxWindow, isa::kInstructionBytes,
        [](const C& c) { return c.platform.map.iq_size; },
        [](C& c, std::uint64_t v) {
          c.platform.map.iq_size = v;
          c.platform.seq.window_bytes = v;
        }));
    t.push_back(integer(
        "address_map", "dma", Kind::Address, 0, top, kPage, [](const C& c) { return c.platform.map.dma; },
        [](C& c, std::uint64_t v) { c.platform.map.dma = v; }));
    // The registers' page and the doorbells' page (docs/dma.md).
    t.push_back(integer(
        "address_map", "dma_size", Kind::Size, 0x2000, kMaxWindow, kPage,
        [](const C& c) { return c.platform.map.dma_size; }, [](C& c, std::uint64_t v) { c.platform.map.dma_size = v; }));
    t.push_back(integer(
        "address_map", "hbm_window", Kind::Address, 0, top, kPage, [](const C& c) { return c.platform.map.hbm_window; },
        [](C& c, std::uint64_t v) { c.platform.map.hbm_window = v; }));
    t.push_back(integer(
        "address_map", "hbm_window_size", Kind::Size, kPage, kMap32 / 2, kPage,
        [](const C& c) { return c.platform.map.hbm_window_size; },
        [](C& c, std::uint64_t v) { c.platform.map.hbm_window_size = v; }));

    // Each module's own keys, in the sections the format has always had.
    add_module(t, "arr_seq", arrseq::arr_seq_parameters(), [](auto& c) -> auto& { return c.platform.arr_seq; });
    add_module(t, "seq", seq::seq_parameters(), [](auto& c) -> auto& { return c.platform.seq; });
    add_module(t, "sbuf", memory::memory_parameters(), [](auto& c) -> auto& { return c.sbuf; });
    add_module(t, "psum", memory::memory_parameters(), [](auto& c) -> auto& { return c.psum; });
    add_module(t, "timing", arrseq::timing_parameters(), [](auto& c) -> auto& { return c.platform.arr_seq.timing; });
    t.push_back(named("timing", "model", Kind::TimingModel));
    add_module(t, "csrs", regfile::csrs_parameters(), [](auto& c) -> auto& { return c.csrs; });
    t.push_back(named("csrs", "unmapped", Kind::Unmapped));
    t.push_back(named("csrs", "impl", Kind::CsrsImpl));
    t.push_back(named("pe_array", "impl", Kind::PeArrayImpl));
    add_module(t, "hbm", hbm::dram_parameters(), [](auto& c) -> auto& { return c.hbm; });
    add_module(t, "host_memory", hbm::dram_parameters(), [](auto& c) -> auto& { return c.host_memory; });
    add_module(t, "dma", dma::dma_parameters(), [](auto& c) -> auto& { return c.dma; });
    add_module(t, "energy", energy::energy_parameters(), [](auto& c) -> auto& { return c.energy; });
    // What the VP does with a driver's hazard (pevp/platform/hazards.h, docs/sdk.md "What the VP checks for you").
    t.push_back(named("checks", "hazards", Kind::Hazards));
    return t;
  }();
  return table;
}

// Section names in table order ("" excluded).
std::vector<std::string_view> sections() {
  std::vector<std::string_view> out;
  for (const Leaf& l : leaves())
    if (!l.section.empty() && std::find(out.begin(), out.end(), l.section) == out.end()) out.push_back(l.section);
  return out;
}

bool is_section(std::string_view s) {
  const auto all = sections();
  return std::find(all.begin(), all.end(), s) != all.end();
}

const Leaf* find_leaf(std::string_view section, std::string_view name) {
  for (const Leaf& l : leaves())
    if (l.section == section && l.name == name) return &l;
  return nullptr;
}

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::string_view s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

std::string keys_of(std::string_view section) {
  std::vector<std::string_view> names;
  for (const Leaf& l : leaves())
    if (l.section == section) names.push_back(l.name);
  if (section.empty()) {
    const auto s = sections();
    names.insert(names.end(), s.begin(), s.end());
  }
  return join(names);
}

[[noreturn]] void unknown_key(std::string_view section, const std::string& path) {
  if (section.empty()) throw ConfigError(path, "unknown key '" + path + "' (valid top-level keys: " + keys_of("") + ")");
  throw ConfigError(path, "unknown key '" + path + "' (valid keys in '" + std::string(section) +
                              "': " + keys_of(section) + ")");
}

// A number for a message: integral values as integers ("1000000", not "1e+06").
std::string number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  std::ostringstream s;
  s << std::setprecision(12) << v;
  return s.str();
}

// "got a string", "got an array", "got null".
std::string got(const json& v) {
  if (v.is_null()) return "got null";
  if (v.is_array() || v.is_object()) return std::string("got an ") + v.type_name();
  return std::string("got a ") + v.type_name();
}

[[noreturn]] void bad(const std::string& key, const std::string& shown, const std::string& why) {
  throw ConfigError(key, key + " = " + shown + ": " + why);
}

std::string range_text(const Leaf& l) {
  const bool addr = l.kind == Kind::Address || l.kind == Kind::Size;
  return addr ? hex(l.lo) + ".." + hex(l.hi) : std::to_string(l.lo) + ".." + std::to_string(l.hi);
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// 2^64, the first whole number a std::uint64_t cannot hold (exact as a double).
constexpr double kTwo64 = 18446744073709551616.0;

// A double that is a whole number a std::uint64_t holds (-0 included, as 0); nothing otherwise.
std::optional<std::uint64_t> whole_uint64(double d) {
  if (std::floor(d) != d || d < 0 || d >= kTwo64) return std::nullopt;  // NaN and infinities fail the first
  return static_cast<std::uint64_t>(d);
}

// Decimal or 0x hex, the whole text, no sign.
bool parse_uint(std::string_view s, std::uint64_t& out) {
  s = trim(s);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

// A finite number followed by an optional unit (returned lower-case, trimmed).
bool parse_quantity(std::string_view s, double& value, std::string& unit) {
  s = trim(s);
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) return false;
  unit = lower(trim(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end))));
  return true;
}

// sc_time ticks per nanosecond (1000 at the default 1 ps resolution).
double ticks_per_ns() { return static_cast<double>(sc_time(1, sc_core::SC_NS).value()); }

json time_to_json(const sc_time& t) {
  const auto per_ns = static_cast<std::uint64_t>(ticks_per_ns());
  // Integral nanoseconds print as integers, so a dump reads "10", not "10.0".
  if (per_ns != 0 && t.value() % per_ns == 0) return t.value() / per_ns;
  return static_cast<double>(t.value()) / ticks_per_ns();
}

double time_ns(const sc_time& t) { return static_cast<double>(t.value()) / ticks_per_ns(); }

// ---- checks shared by from_json (value as given) and validate (value as held) ----------
void check_uint(const Leaf& l, std::uint64_t v, const std::string& shown) {
  if (v < l.lo || v > l.hi) bad(l.path(), shown, "out of range (" + range_text(l) + ")");
  if (v % l.align != 0) bad(l.path(), shown, "must be a multiple of " + hex(l.align));
}

void check_derived(const Leaf& l, std::uint64_t v, const VpConfig& c, const std::string& shown) {
  const std::uint64_t want = l.get(c);
  if (v == want) return;
  if (l.name == "psum_partition_bytes")
    bad(l.path(), shown,
        "derived: geometry.psum_banks x geometry.psum_bank_bytes (" + std::to_string(want) + "); set those instead");
  bad(l.path(), shown,
      "fixed by the generation in this model (" + std::string(isa::name(c.gen())) + ": " + std::to_string(want) + ")");
}

void check_time(const Leaf& l, double ns, const std::string& shown) {
  if (!(ns >= 0 && ns <= kMaxTimeNs)) bad(l.path(), shown, "out of range (0.." + number(kMaxTimeNs) + " ns)");
  // A whole number of resolution ticks, up to the rounding of the decimal text
  // (relative, so a large time is not held to an absolute 1e-6 ticks); a
  // positive time never rounds down to zero.
  const double ticks = ns * ticks_per_ns(), whole = std::round(ticks);
  const std::string resolution = sc_core::sc_get_time_resolution().to_string();
  if (ns > 0 && ticks < 1 - 1e-9) bad(l.path(), shown, "below the simulation time resolution (" + resolution + ")");
  if (std::fabs(ticks - whole) > 1e-9 * std::max(1.0, ticks))
    bad(l.path(), shown, "not a multiple of the simulation time resolution (" + resolution + ")");
}

void check_fraction(const Leaf& l, double v, const std::string& shown) {
  if (!(v >= params::kMinFraction && v <= 1.0))
    bad(l.path(), shown, "out of range (" + number(params::kMinFraction) + " .. 1, a share of the full rate)");
}

void check_real(const Leaf& l, double v, const std::string& shown) {
  if (!(v >= static_cast<double>(l.lo) && v <= static_cast<double>(l.hi)))
    bad(l.path(), shown,
        "out of range (" + std::to_string(l.lo) + " .. " + std::to_string(l.hi) + " " + std::string(l.unit) + ")");
}

void check_clock(const Leaf& l, double ghz, const std::string& shown) {
  if (!(ghz >= kMinClockGhz && ghz <= kMaxClockGhz))
    bad(l.path(), shown, "out of range (" + number(kMinClockGhz) + ".." + number(kMaxClockGhz) + " GHz)");
}

SimMode parse_mode(const std::string& shown, const std::string& text) {
  const std::string s = lower(text);
  if (s == "functional") return SimMode::Functional;
  if (s == "timing") return SimMode::Timing;
  if (s == "both") return SimMode::Both;
  bad("mode", shown, "unknown mode (functional, timing or both)");
}

isa::Generation parse_gen(const json& v) {
  if (!v.is_string()) bad("generation", v.dump(), "expected a string, " + got(v));
  if (auto g = isa::parse_generation(v.get<std::string>())) return *g;
  bad("generation", v.dump(), "unknown generation (CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK; or v3, v4, v4+, v5)");
}

std::uint64_t json_uint(const Leaf& l, const json& v) {
  const bool addr = l.kind == Kind::Address || l.kind == Kind::Size;
  const std::string expect = addr ? "expected an integer or a \"0x...\" string" : "expected an integer";
  const std::string range = l.kind == Kind::Geometry ? "" : " (" + range_text(l) + ")";
  // Parsed text gives unsigned for non-negative numbers; a json built in code may hold a signed one.
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  if (v.is_number_integer()) bad(l.path(), v.dump(), "out of range" + (range.empty() ? std::string(" (>= 0)") : range));
  if (addr && v.is_string()) {
    std::uint64_t out = 0;
    if (parse_uint(v.get<std::string>(), out)) return out;
    bad(l.path(), v.dump(), expect + range);
  }
  if (v.is_number_float()) {
    // JSON has one number type: a writer may spell a whole number with an exponent or a fraction part (1e2,
    // 64.0), and a parser turns an integer beyond 64 bits (2^64 = 18446744073709551616) into a double. Such a
    // value is an integer, so it is held to the key's range like any other, not refused as a fraction.
    const double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d) {
      if (const auto u = whole_uint64(d)) return *u;
      bad(l.path(), v.dump(), "out of range" + (range.empty() ? std::string(d < 0 ? " (>= 0)" : " (< 2^64)") : range));
    }
  }
  bad(l.path(), v.dump(), expect + range + ", " + (v.is_number_float() ? std::string("got a fraction") : got(v)));
}

double json_real(const Leaf& l, const json& v, const char* unit) {
  if (v.is_number()) return v.get<double>();
  bad(l.path(), v.dump(), std::string("expected a number of ") + unit + ", " + got(v));
}

void apply_leaf(const Leaf& l, const json& v, VpConfig& c) {
  const std::string shown = v.dump();
  switch (l.kind) {
    case Kind::Generation: c = preset(parse_gen(v)); return;  // not reached from from_json (handled first)
    case Kind::Mode:
      if (!v.is_string()) bad(l.path(), shown, "expected a string, " + got(v));
      c.mode = parse_mode(shown, v.get<std::string>());
      return;
    case Kind::Rounding: {
      if (!v.is_string()) bad(l.path(), shown, "expected a string, " + got(v));
      const std::string s = lower(v.get<std::string>());
      if (s == "rne") c.psum_rounding = pe::Bf16Rounding::NearestEven;
      else if (s == "stochastic") c.psum_rounding = pe::Bf16Rounding::Stochastic;
      else bad(l.path(), shown, "unknown rounding (rne, stochastic)");
      return;
    }
    case Kind::TimingModel: {
      if (!v.is_string()) bad(l.path(), shown, "expected a string, " + got(v));
      const std::string s = lower(v.get<std::string>());
      if (s == "pevp") c.timing_model = TimingModel::Pevp;
      else if (s == "scalesim_ws") c.timing_model = TimingModel::ScalesimWs;
      else bad(l.path(), shown, "unknown timing model (pevp, scalesim_ws)");
      return;
    }
    case Kind::Unmapped: {
      if (!v.is_string()) bad(l.path(), shown, "expected a string, " + got(v));
      const std::string s = lower(v.get<std::string>());
      if (s == "error") c.csrs.unmapped = regfile::UnmappedPolicy::Error;
      else if (s == "read_zero_write_ignore") c.csrs.unmapped = regfile::UnmappedPolicy::ReadZeroWriteIgnore;
      else bad(l.path(), shown, "unknown policy (error, read_zero_write_ignore)");
      return;
    }
    case Kind::Hazards: {
      if (!v.is_string()) bad(l.path(), shown, "expected a string, " + got(v));
      const std::string s = lower(v.get<std::string>());
      if (s == "off") c.hazards = HazardMode::Off;
      else if (s == "warn") c.hazards = HazardMode::Warn;
      else if (s == "error") c.hazards = HazardMode::Error;
      else bad(l.path(), shown, "unknown hazard mode (off, warn, error)");
      return;
    }
    case Kind::CsrsImpl: {
      if (!v.is_string()) bad(l.path(), shown, "expected a string, " + got(v));
      const std::string s = lower(v.get<std::string>());
      if (s == "tlm") c.csrs_impl = CsrsImpl::Tlm;
      else if (s == "rtl") c.csrs_impl = CsrsImpl::Rtl;
      else bad(l.path(), shown, "unknown implementation (tlm, rtl)");
      return;
    }
    case Kind::PeArrayImpl: {
      if (!v.is_string()) bad(l.path(), shown, "expected a string, " + got(v));
      const std::string s = lower(v.get<std::string>());
      if (s == "cpp") c.pe_array_impl = PeArrayImpl::Cpp;
      else if (s == "rtl") c.pe_array_impl = PeArrayImpl::Rtl;
      else bad(l.path(), shown, "unknown implementation (cpp, rtl)");
      return;
    }
    case Kind::Count:
    case Kind::Address:
    case Kind::Size: {
      const std::uint64_t u = json_uint(l, v);
      check_uint(l, u, shown);
      l.set(c, u);
      return;
    }
    case Kind::Geometry: check_derived(l, json_uint(l, v), c, shown); return;
    case Kind::TimeNs: {
      const double ns = json_real(l, v, "nanoseconds");
      check_time(l, ns, shown);
      l.set_t(c, sc_time(ns, sc_core::SC_NS));
      return;
    }
    case Kind::Ghz: {
      const double ghz = json_real(l, v, "GHz");
      check_clock(l, ghz, shown);
      l.set_d(c, ghz);
      return;
    }
    case Kind::Real: {
      if (!v.is_number())
        bad(l.path(), shown, "expected a number of " + std::string(l.unit) + " in [" + std::to_string(l.lo) + ", " +
                                 std::to_string(l.hi) + "], " + got(v));
      const double r = v.get<double>();
      check_real(l, r, shown);
      l.set_d(c, r);
      return;
    }
    case Kind::Fraction: {
      if (!v.is_number()) bad(l.path(), shown, "expected a number in [" + number(params::kMinFraction) + ", 1], " + got(v));
      const double f = v.get<double>();
      check_fraction(l, f, shown);
      l.set_d(c, f);
      return;
    }
  }
}

json leaf_to_json(const Leaf& l, const VpConfig& c) {
  switch (l.kind) {
    case Kind::Generation: return std::string(isa::name(c.gen()));
    case Kind::Mode: return std::string(name(c.mode));
    case Kind::Unmapped:
      return c.csrs.unmapped == regfile::UnmappedPolicy::Error ? "error" : "read_zero_write_ignore";
    case Kind::CsrsImpl: return c.csrs_impl == CsrsImpl::Rtl ? "rtl" : "tlm";
    case Kind::PeArrayImpl: return c.pe_array_impl == PeArrayImpl::Rtl ? "rtl" : "cpp";
    case Kind::Hazards: return std::string(name(c.hazards));
    case Kind::Rounding: return c.psum_rounding == pe::Bf16Rounding::Stochastic ? "stochastic" : "rne";
    case Kind::TimingModel: return c.timing_model == TimingModel::ScalesimWs ? "scalesim_ws" : "pevp";
    case Kind::Address:
    case Kind::Size: return hex(l.get(c));
    case Kind::Count:
    case Kind::Geometry: return l.get(c);
    case Kind::TimeNs: return time_to_json(l.get_t(c));
    case Kind::Ghz:
    case Kind::Fraction:
    case Kind::Real: return l.get_d(c);
  }
  return nullptr;
}

// ---- the address windows ---------------------------------------------------------------
struct Window {
  const char* name;
  std::uint64_t base, size;
  std::string size_from;
};

void check_windows(const VpConfig& c) {
  const AddressMap& m = c.platform.map;
  const std::string gen(isa::name(c.gen()));
  const Window w[] = {{"sbuf", m.sbuf, c.sbuf.size(), "the " + gen + " SBUF size"},
                      {"psum", m.psum, c.psum.size(), "the " + gen + " PSUM size"},
                      {"apb", m.apb, m.apb_size, "address_map.apb_size"},
                      {"iq", m.iq, m.iq_size, "address_map.iq_size"},
                      {"dma", m.dma, m.dma_size, "address_map.dma_size"},
                      {"hbm_window", m.hbm_window, m.hbm_window_size, "address_map.hbm_window_size"}};
  auto span = [](const Window& x) { return "[" + hex(x.base) + ", " + hex(x.base + x.size) + ")"; };
  for (const Window& x : w) {
    if (x.base + x.size > kMap32)
      bad(std::string("address_map.") + x.name, hex(x.base),
          "the window " + span(x) + " (size " + hex(x.size) + ", " + x.size_from +
              ") ends beyond the 32-bit address map");
  }
  for (std::size_t i = 0; i < std::size(w); ++i)
    for (std::size_t j = i + 1; j < std::size(w); ++j)
      if (w[i].base < w[j].base + w[j].size && w[j].base < w[i].base + w[i].size)
        bad(std::string("address_map.") + w[j].name, hex(w[j].base),
            std::string("the ") + w[j].name + " window " + span(w[j]) + " overlaps the " + w[i].name + " window " +
                span(w[i]) + " (address_map." + w[i].name + " = " + hex(w[i].base) + ")");
}

}  // namespace

// ---- public API ------------------------------------------------------------------------

VpConfig preset(isa::Generation gen) {
  VpConfig c;
  c.platform = PlatformConfig{};
  c.platform.gen = gen;
  c.platform.seq.window_bytes = c.platform.map.iq_size;
  // FACTS.md "Timing": 2.4 GHz on v3 and v4. MARIANA_PLUS and MAVERICK have no
  // public figure; the model keeps v4's clock (docs/configuration.md).
  c.tensor_engine_clock_ghz = 2.4;
  c.mode = SimMode::Both;
  c.sbuf = memory::sbuf_config(gen);
  c.psum = memory::psum_config(gen);
  set_geometry(c, isa::preset_geometry(gen));
  c.csrs = regfile::ArrSeqCsrsConfig{};
  c.hbm = hbm::hbm_config(gen);
  c.host_memory = hbm::host_memory_config(gen);
  c.dma = dma::dma_config(gen);
  c.energy = energy::EnergyConfig{};
  return c;
}

json to_json(const VpConfig& config) {
  json out = json::object();
  for (const Leaf& l : leaves()) {
    if (l.section.empty()) out[std::string(l.name)] = leaf_to_json(l, config);
    else out[std::string(l.section)][std::string(l.name)] = leaf_to_json(l, config);
  }
  return out;
}

namespace {
// One member that followed the array, for the message of a rule it then breaks.
struct Followed {
  std::string key;
  std::uint32_t value;
  std::string from;  // the keys it follows
};

// The members that follow the array (D-GEOMETRY-FOLLOW: isa::partitions_for_array, isa::sbuf_partition_bytes_for)
// take their rule's value for the geometry `c` now has, unless the document names them or they held a value of their
// own before it (an explicit one from an earlier document, e.g. a configuration file under --set).
std::vector<Followed> follow_array(VpConfig& c, const isa::ArrayGeometry& before, const json& document) {
  const json none = json::object();
  const json& named = document.contains("geometry") && document["geometry"].is_object() ? document["geometry"] : none;
  const isa::Generation g = c.gen();
  isa::ArrayGeometry geo = c.geometry;
  std::vector<Followed> out;
  const auto shape = [&] {
    return "geometry.pe_rows = " + std::to_string(geo.pe_rows) + ", geometry.pe_cols = " + std::to_string(geo.pe_cols);
  };
  if (!named.contains("partitions") &&
      before.partitions == isa::partitions_for_array(before.pe_rows, before.pe_cols, g)) {
    geo.partitions = isa::partitions_for_array(geo.pe_rows, geo.pe_cols, g);
    if (geo.partitions != before.partitions) out.push_back({"geometry.partitions", geo.partitions, shape()});
  }
  if (!named.contains("sbuf_partition_bytes") &&
      before.sbuf_partition_bytes == isa::sbuf_partition_bytes_for(before.partitions, g)) {
    geo.sbuf_partition_bytes = isa::sbuf_partition_bytes_for(geo.partitions, g);
    if (geo.sbuf_partition_bytes != before.sbuf_partition_bytes)
      out.push_back({"geometry.sbuf_partition_bytes", geo.sbuf_partition_bytes,
                     "geometry.partitions = " + std::to_string(geo.partitions) + ", the preset's " +
                         std::to_string(isa::preset_geometry(g).sbuf_bytes()) + " SBUF bytes"});
  }
  if (geo != c.geometry) set_geometry(c, geo);
  return out;
}
}  // namespace

VpConfig from_json(const json& j, const VpConfig& base) {
  if (!j.is_object())
    throw ConfigError("", "the configuration must be a JSON object, " + got(j));
  // The generation decides the preset every other key applies on.
  VpConfig c = j.contains("generation") ? preset(parse_gen(j.at("generation"))) : base;
  const isa::ArrayGeometry before = c.geometry;
  for (const auto& [key, value] : j.items()) {
    if (key == "generation") continue;
    if (const Leaf* l = find_leaf("", key)) {
      apply_leaf(*l, value, c);
      continue;
    }
    if (!is_section(key)) unknown_key("", key);
    if (!value.is_object())
      bad(key, value.dump(), "expected an object with the keys " + keys_of(key) + ", " + got(value));
    for (const auto& [sub, v] : value.items()) {
      const Leaf* l = find_leaf(key, sub);
      if (l == nullptr) unknown_key(key, key + "." + sub);
      apply_leaf(*l, v, c);
    }
  }
  const std::vector<Followed> followed = follow_array(c, before, j);
  try {
    validate(c);
  } catch (const ConfigError& e) {
    // A geometry rule that a member which followed the array takes part in names what it followed, so the message
    // holds every key involved (the explicit ones are in the rule itself).
    const std::string what = e.what();
    std::string because;
    for (const Followed& f : followed)
      if (e.key() == f.key || what.find(f.key) != std::string::npos)
        because += (because.empty() ? "" : "; ") + f.key + " = " + std::to_string(f.value) + " follows " + f.from;
    if (because.empty()) throw;
    throw ConfigError(e.key(), what + " (" + because + ": D-GEOMETRY-FOLLOW)");
  }
  return c;
}

namespace {
// One `--set` as the JSON patch it means, every value parsed for its key.
// The offset of the first byte that is not part of well-formed UTF-8, if any
// (overlong forms, surrogates and code points past U+10FFFF included).
std::optional<std::size_t> invalid_utf8_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    const unsigned len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return i;
    std::uint32_t cp = len == 1 ? b : b & (0x7F >> len);
    for (unsigned k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 0x2) return i;
      cp = cp << 6 | (c & 0x3F);
    }
    static constexpr std::uint32_t kMinOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinOfLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::nullopt;
}

// The text with every byte outside printable ASCII written as \xHH, for a message.
std::string printable(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    if (b >= 0x20 && b < 0x7F) {
      out += ch;
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
  }
  return out;
}

json override_patch(std::string_view assignment) {
  const std::string text(assignment);
  if (const auto bad = invalid_utf8_at(assignment))
    throw ConfigError("", "--set '" + printable(assignment) + "': not valid UTF-8 (byte " +
                              hex(static_cast<unsigned char>(assignment[*bad])) + " at offset " +
                              std::to_string(*bad) + ")");
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos || trim(assignment.substr(0, eq)).empty())
    throw ConfigError("", "--set '" + text + "': expected key=value, e.g. arr_seq.ififo_depth=8");
  const std::string key(trim(assignment.substr(0, eq)));
  const std::string_view value = trim(assignment.substr(eq + 1));

  const Leaf* leaf = nullptr;
  const auto dot = key.find('.');
  if (dot == std::string::npos) {
    leaf = find_leaf("", key);
    if (leaf == nullptr && is_section(key))
      throw ConfigError(key, "--set '" + text + "': '" + key + "' is a section; set one of its keys: " + keys_of(key));
    if (leaf == nullptr) unknown_key("", key);
  } else {
    const std::string section = key.substr(0, dot);
    if (!is_section(section)) unknown_key("", key);
    leaf = find_leaf(section, std::string_view(key).substr(dot + 1));
    if (leaf == nullptr) unknown_key(section, key);
  }

  const std::string shown = "\"" + std::string(value) + "\"";
  json v;
  switch (leaf->kind) {
    case Kind::Generation:
    case Kind::Mode:
    case Kind::Rounding:
    case Kind::TimingModel:
    case Kind::Hazards:
    case Kind::CsrsImpl:
    case Kind::PeArrayImpl:
    case Kind::Unmapped: v = std::string(value); break;
    case Kind::Count:
    case Kind::Address:
    case Kind::Size:
    case Kind::Geometry: {
      std::uint64_t u = 0;
      if (parse_uint(value, u)) {
        v = u;
        break;
      }
      // The spellings a configuration file takes for a whole number (1e2, 64.0) mean the same here: a sweep or
      // a script that writes its numbers through JSON passes them on as they came.
      if (const json n = json::parse(value, nullptr, false); n.is_number()) {
        const double d = n.get<double>();
        if (const auto u = whole_uint64(d)) {
          v = *u;
          break;
        }
        if (d >= kTwo64)
          bad(key, shown, "out of range (" + (leaf->kind == Kind::Geometry ? "< 2^64" : range_text(*leaf)) + ")");
      }
      bad(key, shown,
          "expected an integer (decimal or 0x hex)" +
              (leaf->kind == Kind::Geometry ? std::string() : " in " + range_text(*leaf)));
    }
    case Kind::TimeNs: {
      double n = 0;
      std::string unit;
      static const std::pair<const char*, double> units[] = {{"", 1}, {"ps", 1e-3}, {"ns", 1}, {"us", 1e3},
                                                             {"ms", 1e6}, {"s", 1e9}};
      const auto* u = parse_quantity(value, n, unit)
                          ? std::find_if(std::begin(units), std::end(units), [&](const auto& p) { return unit == p.first; })
                          : std::end(units);
      if (u == std::end(units))
        bad(key, shown, "expected a time such as 20, \"20 ns\" or \"1.5 us\" (units ps, ns, us, ms, s)");
      const double ns = n * u->second;
      // Checked here, against the text as given: from_json would see only the converted number, which for "1e308 s"
      // is an infinity and prints as null.
      check_time(*leaf, ns, shown);
      v = ns;
      break;
    }
    case Kind::Ghz: {
      double n = 0;
      std::string unit;
      const bool ok = parse_quantity(value, n, unit) && (unit.empty() || unit == "ghz" || unit == "mhz");
      if (!ok) bad(key, shown, "expected a frequency such as 2.4, \"2.4 GHz\" or \"2400 MHz\"");
      const double ghz = unit == "mhz" ? n / 1000.0 : n;
      check_clock(*leaf, ghz, shown);  // as for a time: the value as the user wrote it
      v = ghz;
      break;
    }
    case Kind::Fraction: {
      double n = 0;
      std::string unit;
      if (!parse_quantity(value, n, unit) || !unit.empty()) bad(key, shown, "expected a number such as 0.25");
      v = n;
      break;
    }
    case Kind::Real: {
      double n = 0;
      std::string unit;
      if (!parse_quantity(value, n, unit) || !unit.empty())
        bad(key, shown, "expected a number of " + std::string(leaf->unit) + " such as " + std::to_string(leaf->hi / 2));
      check_real(*leaf, n, shown);
      v = n;
      break;
    }
  }
  json patch = json::object();
  if (leaf->section.empty()) patch[std::string(leaf->name)] = v;
  else patch[std::string(leaf->section)][std::string(leaf->name)] = v;
  return patch;
}

}  // namespace

void apply_override(VpConfig& config, std::string_view assignment) {
  config = from_json(override_patch(assignment), config);  // assigns only when every check passed
}

void apply_overrides(VpConfig& config, const std::vector<std::string>& assignments) {
  json patch = json::object();
  for (const std::string& a : assignments) patch.merge_patch(override_patch(a));
  if (!assignments.empty()) config = from_json(patch, config);
}

VpConfig load_config(const std::string& path, const VpConfig& base) {
  std::string error;
  const std::optional<std::string> read = files::read_file(path, &error);
  if (!read) throw ConfigError("", error);
  return load_config_text(*read, path, base);
}

VpConfig load_config_text(const std::string& text, const std::string& path, const VpConfig& base) {
  json j;
  try {
    j = documents::parse_json(text, path, documents::JsonComments::Allowed);
  } catch (const documents::DocumentError& e) {  // too deep, a syntax error, a number beyond a double's range
    throw ConfigError(e.key(), e.what());
  }
  try {
    return from_json(j, base);
  } catch (const ConfigError& e) {
    throw ConfigError(e.key(), path + ": " + e.what());
  }
}

void validate(const VpConfig& c) {
  for (const Leaf& l : leaves()) {
    switch (l.kind) {
      case Kind::Generation:
      case Kind::Unmapped:
      case Kind::TimingModel:
      case Kind::Hazards: break;  // an enum always holds a valid value
      case Kind::CsrsImpl:
        if (c.csrs_impl != CsrsImpl::Rtl) break;
        if (!regfile_rtl::rtl_available())
          bad("csrs.impl", "\"rtl\"",
              "this build has no register-file RTL (Verilator was not found when it was configured; "
              "scripts/setup.sh installs it)");
        // The RTL is Verilated with UNMAPPED_ERROR = 1 only.
        if (c.csrs.unmapped != regfile::UnmappedPolicy::Error)
          bad("csrs.impl", "\"rtl\"",
              "the register-file RTL answers an unmapped offset with PSLVERR: csrs.unmapped must be \"error\", "
              "not \"read_zero_write_ignore\"");
        break;
      case Kind::PeArrayImpl:
        if (c.pe_array_impl != PeArrayImpl::Rtl) break;
        if (const std::string why = pe_array_rtl::geometry_refusal(c.geometry); !why.empty())
          bad("pe_array.impl", "\"rtl\"", why);
        // The tile computes what the micro-ops read and write: a run that moves no data has nothing for it.
        if (c.mode == SimMode::Timing)
          bad("pe_array.impl", "\"rtl\"",
              "mode = timing executes no arithmetic for the RTL tile to compute (use mode both or functional)");
        break;
      case Kind::Rounding:
        // The seeds stochastic rounding draws from are NeuronCore-v4's (PeManageSeed, spec 000 section 5).
        if (c.psum_rounding == pe::Bf16Rounding::Stochastic && !isa::is_v4(c.gen()))
          bad("tensor_engine.psum_rounding", "\"stochastic\"",
              "the PSUM stochastic-rounding seeds exist on NeuronCore-v4 only (MARIANA, MARIANA_PLUS), not " +
                  std::string(isa::name(c.gen())));
        break;
      case Kind::Mode:  // a value cast in code could be none of the three
        if (c.mode != SimMode::Functional && c.mode != SimMode::Timing && c.mode != SimMode::Both)
          bad("mode", std::to_string(static_cast<int>(c.mode)), "unknown mode (functional, timing or both)");
        break;
      case Kind::Count: check_uint(l, l.get(c), std::to_string(l.get(c))); break;
      case Kind::Address:
      case Kind::Size: check_uint(l, l.get(c), hex(l.get(c))); break;
      case Kind::Geometry: break;  // derived from the members validate() checks next
      case Kind::TimeNs: check_time(l, time_ns(l.get_t(c)), number(time_ns(l.get_t(c)))); break;
      case Kind::Ghz: check_clock(l, l.get_d(c), number(l.get_d(c))); break;
      case Kind::Fraction: check_fraction(l, l.get_d(c), number(l.get_d(c))); break;
      case Kind::Real: check_real(l, l.get_d(c), number(l.get_d(c))); break;
    }
  }
  if (const auto e = isa::check_geometry(c.geometry, c.gen())) bad(e->key, std::to_string(e->value), e->rule);
  // The memory system's sections: each module relates its own keys.
  if (const std::string why = hbm::check_config(c.hbm); !why.empty())
    throw ConfigError("hbm", "hbm: " + why);
  if (const std::string why = hbm::check_config(c.host_memory); !why.empty())
    throw ConfigError("host_memory", "host_memory: " + why);
  if (const std::string why = dma::check_config(c.dma); !why.empty())
    throw ConfigError("dma", "dma: " + why);

  // The memories' sizes follow the geometry; a config built in code must not
  // change them on their own.
  const memory::MemoryConfig sbuf = memory::sbuf_config(c.geometry), psum = memory::psum_config(c.geometry);
  if (c.sbuf.partitions != sbuf.partitions || c.psum.partitions != psum.partitions)
    bad("geometry.partitions", std::to_string(c.sbuf.partitions) + " (sbuf), " + std::to_string(c.psum.partitions) +
        " (psum)", "the memories' partitions differ from geometry.partitions (" + std::to_string(sbuf.partitions) + ")");
  if (c.sbuf.partition_bytes != sbuf.partition_bytes)
    bad("geometry.sbuf_partition_bytes", std::to_string(c.sbuf.partition_bytes) + " (sbuf)",
        "differs from geometry.sbuf_partition_bytes (" + std::to_string(sbuf.partition_bytes) + ")");
  if (c.psum.partition_bytes != psum.partition_bytes || c.psum.bank_bytes != psum.bank_bytes)
    bad("geometry.psum_bank_bytes", std::to_string(c.psum.bank_bytes) + " (psum)",
        "the PSUM memory's banks differ from geometry.psum_banks x geometry.psum_bank_bytes");
  if (c.sbuf.bank_bytes != 0) bad("sbuf.bank_bytes", std::to_string(c.sbuf.bank_bytes), "SBUF is not banked (0)");
  if (c.sbuf.name != "sbuf" || c.psum.name != "psum")
    throw ConfigError("", "the memory configs must be named \"sbuf\" and \"psum\" (message IDs /pevp/sbuf/...)");
  if (c.platform.seq.window_bytes != c.platform.map.iq_size)
    bad("address_map.iq_size", hex(c.platform.map.iq_size),
        "differs from seq.window_bytes (" + hex(c.platform.seq.window_bytes) + "); the two are one parameter");
  // AddressMap::top()/cluster()/protect()/vp_seq() assume the default face offsets.
  const regfile::ArrSeqApbMap faces{};
  if (c.csrs.map.top_host_visible != faces.top_host_visible ||
      c.csrs.map.cluster_host_visible != faces.cluster_host_visible ||
      c.csrs.map.top_protected != faces.top_protected || c.csrs.map.vp_seq != faces.vp_seq)
    throw ConfigError("", "csrs.map: the APB face offsets are fixed (0x0, 0x1000, 0x2000, 0x3000)");
  check_windows(c);
}

}  // namespace pevp::platform
