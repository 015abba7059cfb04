#include "pevp/platform/checkpoint.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include "checkpoint_io.h"
#include "pevp/documents/documents.h"
#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"
#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace pevp::platform {

using ckpt::Reader;
using ckpt::Writer;

namespace {

constexpr char kMagic[8] = {'P', 'E', 'V', 'P', 'C', 'K', 'P', 'T'};
// Memories are stored as their non-zero pages: a checkpoint of a mostly empty 32 MiB SBUF stays small.
constexpr std::uint32_t kPageBytes = 4096;
// Bounds on counts the geometry does not bound, so a corrupt count cannot ask for a huge allocation before the
// bytes it claims are checked (Reader::count checks those too).
constexpr std::size_t kMaxListed = std::size_t{1} << 24;
constexpr std::size_t kMaxText = std::size_t{1} << 20;

// The section names, in the order a version-1 checkpoint holds them.
constexpr const char* kConfig = "config";
constexpr const char* kTime = "time";
constexpr const char* kSbuf = "sbuf";
constexpr const char* kPsum = "psum";
constexpr const char* kCsrs = "csrs";
constexpr const char* kArray = "pe_array";
constexpr const char* kArrSeq = "arr_seq";
constexpr const char* kSeq = "seq";

std::uint64_t resolution_fs() {
  return static_cast<std::uint64_t>(sc_core::sc_get_time_resolution().to_seconds() * 1e15 + 0.5);
}

// The latest simulated time a checkpoint may hold (kMaxCheckpointTimePs), in resolution units.
sc_core::sc_time latest_time() { return sc_core::sc_time(static_cast<double>(kMaxCheckpointTimePs), sc_core::SC_PS); }

// The last engine cycle at or before latest_time() at the sequencer's clock.
arrseq::Cycle latest_cycle(const arrseq::ArrSeq& clock) {
  const arrseq::Cycle c = clock.to_cycles(latest_time());  // the first cycle at or after it
  return clock.to_time(c) > latest_time() ? c - 1 : c;
}

// D-CKPT-TIME-LIMIT: a time past the supported range is refused before anything else reads it.
void check_time(Reader& r, std::uint64_t value, std::uint64_t resolution_fs) {
  if (value <= latest_time().value()) return;
  // In ps for the message; the resolution is 1 ps unless a program changed it.
  const std::string shown = resolution_fs == 1000 ? std::to_string(value) + " ps"
                                                  : std::to_string(value) + " x " + std::to_string(resolution_fs) + " fs";
  r.fail("section 'time': the simulated time " + shown + " is past the latest this pe-vp supports, " +
         kMaxSimulatedText);
}

// ---- memories ---------------------------------------------------------------------------------

void write_memory(Writer& w, const memory::Memory& m) {
  w.u64(m.size());
  w.u32(kPageBytes);
  const std::uint8_t* data = m.data();
  const std::uint64_t pages = (m.size() + kPageBytes - 1) / kPageBytes;
  std::vector<std::uint64_t> nonzero;
  for (std::uint64_t p = 0; p < pages; ++p) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kPageBytes, m.size() - p * kPageBytes));
    const std::uint8_t* page = data + p * kPageBytes;
    static const std::array<std::uint8_t, kPageBytes> zeros{};
    if (std::memcmp(page, zeros.data(), n) != 0) nonzero.push_back(p);
  }
  w.u32(static_cast<std::uint32_t>(nonzero.size()));
  for (std::uint64_t p : nonzero) {
    w.u64(p);
    w.bytes(data + p * kPageBytes, static_cast<std::size_t>(std::min<std::uint64_t>(kPageBytes, m.size() - p * kPageBytes)));
  }
  w.u64(m.errors());
}

MemoryImage read_memory(Reader& r, const char* what, std::uint64_t expected_size) {
  MemoryImage img;
  const std::size_t at = r.offset();
  img.size = r.u64("the memory size");
  if (img.size != expected_size)
    r.fail(std::string(what) + " is " + std::to_string(img.size) + " bytes in the checkpoint (byte " +
           std::to_string(at) + "), " + std::to_string(expected_size) + " here");
  const std::uint32_t page_bytes = r.u32("the page size");
  if (page_bytes != kPageBytes)
    r.fail(std::string(what) + ": pages of " + std::to_string(page_bytes) + " bytes, this pe-vp reads " +
           std::to_string(kPageBytes));
  const std::uint64_t pages = (img.size + kPageBytes - 1) / kPageBytes;
  const std::size_t n = r.count("the non-zero page count", static_cast<std::size_t>(pages), 8);
  img.pages.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t page_at = r.offset();
    const std::uint64_t index = r.u64("a page index");
    if (index >= pages || (!img.pages.empty() && index <= img.pages.back().first))
      r.fail(std::string(what) + ": page index " + std::to_string(index) + " at byte " + std::to_string(page_at) +
             " is out of order or past the " + std::to_string(pages) + " pages");
    const std::size_t bytes = static_cast<std::size_t>(std::min<std::uint64_t>(kPageBytes, img.size - index * kPageBytes));
    const std::uint8_t* p = r.bytes(bytes, "a page's bytes");
    img.pages.emplace_back(index, std::vector<std::uint8_t>(p, p + bytes));
  }
  img.errors = r.u64("the error count");
  return img;
}

void apply_memory(memory::Memory& m, const MemoryImage& img) {
  std::fill(m.data(), m.data() + m.size(), std::uint8_t{0});
  for (const auto& [index, bytes] : img.pages) std::copy(bytes.begin(), bytes.end(), m.data() + index * kPageBytes);
  m.restore_errors(img.errors);
}

// ---- CSRs -------------------------------------------------------------------------------------

const regfile::RegFileTarget* face(const regfile::ArrSeqCsrs& c, std::size_t i) {
  const regfile::RegFileTarget* faces[] = {&c.top, &c.cluster, &c.protect, &c.seq};
  return faces[i];
}

void write_csrs(Writer& w, const regfile::ArrSeqCsrs& csrs) {
  const regfile::ArrSeqCsrs::State s = csrs.state();
  for (std::size_t i = 0; i < s.faces.size(); ++i) {
    w.str(std::string(face(csrs, i)->regs().desc().name));
    const auto& f = s.faces[i];
    w.u32(static_cast<std::uint32_t>(f.regs.values.size()));
    for (std::uint32_t v : f.regs.values) w.u32(v);
    w.u64(f.regs.ignored_ro_writes);
    w.u64(f.regs.unmapped_accesses);
    w.u64(f.rejected_unprivileged);
  }
}

// The register files' descriptions are static tables: a Platform is not needed to know their names and sizes.
regfile::ArrSeqCsrs::State read_csrs(Reader& r, const std::vector<const regfile::RegFileDesc*>& descs) {
  regfile::ArrSeqCsrs::State s;
  for (std::size_t i = 0; i < s.faces.size(); ++i) {
    const regfile::RegFileDesc& desc = *descs[i];
    const std::size_t at = r.offset();
    const std::string name = r.str("a register file's name", 256);
    if (name != desc.name)
      r.fail("section 'csrs' at byte " + std::to_string(at) + ": register file '" + name + "' where '" +
             std::string(desc.name) + "' belongs");
    auto& f = s.faces[i];
    const std::size_t count_at = r.offset();
    const std::size_t n = r.count("the register count", kMaxListed, 4);
    if (n != desc.num_registers)
      r.fail("section 'csrs' at byte " + std::to_string(count_at) + ": " + name + " has " + std::to_string(n) +
             " registers in the checkpoint, " + std::to_string(desc.num_registers) + " here");
    f.regs.values.resize(n);
    for (auto& v : f.regs.values) v = r.u32("a register value");
    f.regs.ignored_ro_writes = r.u64("the ignored RO write count");
    f.regs.unmapped_accesses = r.u64("the unmapped access count");
    f.rejected_unprivileged = r.u64("the rejected unprivileged access count");
  }
  return s;
}

// ---- the PE array -----------------------------------------------------------------------------

void write_tile(Writer& w, const isa::TileRect& t) {
  w.u32(t.row0);
  w.u32(t.rows);
  w.u32(t.col0);
  w.u32(t.cols);
}

isa::TileRect read_tile(Reader& r) {
  isa::TileRect t;
  // Coordinates fit 16 bits (TileRect::key); larger ones are rejected with the unit's rules or here.
  const auto coord = [&](const char* field) {
    const std::size_t at = r.offset();
    const std::uint32_t v = r.u32(field);
    if (v > 0xFFFF) r.fail("at byte " + std::to_string(at) + ": " + field + " = " + std::to_string(v) + " does not fit 16 bits");
    return v;
  };
  t.row0 = coord("a tile's first row");
  t.rows = coord("a tile's rows");
  t.col0 = coord("a tile's first column");
  t.cols = coord("a tile's columns");
  return t;
}

void write_stationary(Writer& w, const pe::Stationary& s) {
  write_tile(w, s.tile);
  w.u32(static_cast<std::uint32_t>(s.k));
  w.u32(static_cast<std::uint32_t>(s.m));
  w.u8(static_cast<std::uint8_t>(s.type.gen));
  w.u8(static_cast<std::uint8_t>(s.type.dtype));
  w.u8(static_cast<std::uint8_t>(s.type.fp32_mode));
  w.boolean(s.double_row);
  w.boolean(s.mx);
  w.u8(static_cast<std::uint8_t>(s.mx_mode));  // 0..6 (ArrayExecutor::check)
  for (float v : s.values) w.f32(v);
}

// Contraction rows a partition can carry: 8 for an MX OCT_ROW source (2 for fp8 double_row).
constexpr std::size_t kMaxRowsPerPartition = 8;

pe::Stationary read_stationary(Reader& r, const isa::ArrayGeometry& geo) {
  pe::Stationary s;
  s.tile = read_tile(r);
  const std::size_t at = r.offset();
  s.k = r.u32("a stationary's K");
  s.m = r.u32("a stationary's M");
  // The unit's rules check K and M against the array again; here only what the values' allocation needs.
  if (s.k > kMaxRowsPerPartition * std::size_t{geo.pe_rows} || s.m > geo.pe_cols)
    r.fail("section 'pe_array' at byte " + std::to_string(at) + ": a stationary of K x M = " + std::to_string(s.k) +
           " x " + std::to_string(s.m) + " does not fit the " + std::to_string(geo.pe_rows) + " x " +
           std::to_string(geo.pe_cols) + " array");
  const std::uint8_t gen = r.u8("a stationary's generation");
  if (gen >= std::size(isa::kAllGenerations)) r.fail("section 'pe_array': a stationary of generation " + std::to_string(gen));
  s.type.gen = static_cast<isa::Generation>(gen);
  s.type.dtype = static_cast<isa::Dtype>(r.u8("a stationary's dtype"));
  s.type.fp32_mode = static_cast<isa::Fp32Mode>(r.u8("a stationary's fp32 mode"));
  s.double_row = r.boolean("a stationary's double_row");
  s.mx = r.boolean("a stationary's MX flag");
  s.mx_mode = r.u8("a stationary's MX perf mode");
  if (s.k * s.m > r.left() / 4)  // before the allocation
    r.fail("section 'pe_array' at byte " + std::to_string(r.offset()) + ": a stationary of K x M = " +
           std::to_string(s.k) + " x " + std::to_string(s.m) + " needs " + std::to_string(s.k * s.m * 4) +
           " bytes, the section has " + std::to_string(r.left()) + " left");
  s.values.resize(s.k * s.m);
  for (float& v : s.values) v = r.f32("a stationary value");
  return s;
}

// A tile's loaded sparsity tags (pevp/pe_array/sparse.h): the tile, K, M and K x M tag bytes.
void write_tags(Writer& w, const pe::TagTile& t) {
  write_tile(w, t.tile);
  w.u32(static_cast<std::uint32_t>(t.k));
  w.u32(static_cast<std::uint32_t>(t.m));
  for (std::uint8_t tag : t.tags) w.u8(tag);
}

pe::TagTile read_tags(Reader& r, const isa::ArrayGeometry& geo) {
  pe::TagTile t;
  t.tile = read_tile(r);
  const std::size_t at = r.offset();
  t.k = r.u32("a tag tile's K");
  t.m = r.u32("a tag tile's M");
  if (t.k > geo.pe_rows || t.m > geo.pe_cols || t.k * t.m > r.left())  // before the allocation
    r.fail("section 'pe_array' at byte " + std::to_string(at) + ": a tag tile of K x M = " + std::to_string(t.k) +
           " x " + std::to_string(t.m) + " does not fit the " + std::to_string(geo.pe_rows) + " x " +
           std::to_string(geo.pe_cols) + " array or the section's " + std::to_string(r.left()) + " bytes left");
  t.tags.resize(t.k * t.m);
  for (std::uint8_t& tag : t.tags) tag = r.u8("a tag");
  return t;
}

void write_array(Writer& w, const pe::PeArray& array) {
  const pe::PeArray::State s = array.state();
  const auto& e = s.exec;
  w.u32(static_cast<std::uint32_t>(e.seeds.size()));
  for (std::uint32_t v : e.seeds) w.u32(v);
  w.u32(static_cast<std::uint32_t>(e.stationaries.size()));
  for (const auto& st : e.stationaries) write_stationary(w, st);
  w.boolean(e.staged_identity.has_value());
  if (e.staged_identity) write_stationary(w, *e.staged_identity);
  w.u32(static_cast<std::uint32_t>(e.tags.size()));
  for (const auto& t : e.tags) write_tags(w, t);
  w.u32(static_cast<std::uint32_t>(e.open.size()));
  for (bool b : e.open) w.boolean(b);
  w.u8(static_cast<std::uint8_t>(e.stats.kind));
  write_tile(w, e.stats.tile);
  w.u64(e.stats.k);
  w.u64(e.stats.m);
  w.u64(e.stats.n);
  w.u64(e.stats.macs);
  w.u32(e.stats.passes);
  w.u64(e.stats.elements_loaded);
  for (const auto& table : e.conv_luts) {  // per converter-table slot (pevp/pe_array/conv_lut.h)
    w.u32(static_cast<std::uint32_t>(table.size()));
    for (float v : table) w.f32(v);
  }
  w.u32(static_cast<std::uint32_t>(s.pe_registers.size()));
  for (const auto& p : s.pe_registers) {
    w.u32(p.row0);
    w.u32(p.col0);
    w.u32(p.reg_addr);
    w.u32(p.value);
  }
}

pe::PeArray::State read_array(Reader& r, const isa::ArrayGeometry& geo) {
  pe::PeArray::State s;
  auto& e = s.exec;
  const std::size_t seeds = std::size_t{geo.partitions} * geo.psum_banks * pe::ArrayExecutor::kSeedsPerBank;
  const std::size_t seeds_at = r.offset();
  const std::size_t n_seeds = r.count("the seed count", kMaxListed, 4);
  if (n_seeds != seeds)
    r.fail("section 'pe_array' at byte " + std::to_string(seeds_at) + ": " + std::to_string(n_seeds) +
           " PSUM seeds, the geometry has " + std::to_string(seeds));
  e.seeds.resize(n_seeds);
  for (auto& v : e.seeds) v = r.u32("a seed");
  // Stationaries do not overlap: at most one per PE.
  const std::size_t n_st = r.count("the stationary count", std::size_t{geo.pe_rows} * geo.pe_cols, 24);
  for (std::size_t i = 0; i < n_st; ++i) e.stationaries.push_back(read_stationary(r, geo));
  if (r.boolean("the staged identity flag")) e.staged_identity = read_stationary(r, geo);
  // Tag tiles do not overlap either: at most one per PE.
  const std::size_t n_tags = r.count("the tag tile count", std::size_t{geo.pe_rows} * geo.pe_cols, 24);
  for (std::size_t i = 0; i < n_tags; ++i) e.tags.push_back(read_tags(r, geo));
  const std::size_t banks_at = r.offset();
  const std::size_t banks = r.count("the PSUM group count", kMaxListed, 1);
  if (banks != e.open.size())
    r.fail("section 'pe_array' at byte " + std::to_string(banks_at) + ": " + std::to_string(banks) +
           " PSUM group flags, this pe-vp keeps " + std::to_string(e.open.size()));
  for (auto& b : e.open) b = r.boolean("a PSUM group's open flag");
  const std::size_t kind_at = r.offset();
  const std::uint8_t kind = r.u8("the last micro-op kind");
  if (kind > static_cast<std::uint8_t>(pe::MicroOpKind::PeRegWrite))
    r.fail("section 'pe_array' at byte " + std::to_string(kind_at) + ": micro-op kind " + std::to_string(kind));
  e.stats.kind = static_cast<pe::MicroOpKind>(kind);
  e.stats.tile = read_tile(r);
  e.stats.k = static_cast<std::size_t>(r.u64("the last K"));
  e.stats.m = static_cast<std::size_t>(r.u64("the last M"));
  e.stats.n = static_cast<std::size_t>(r.u64("the last N"));
  e.stats.macs = r.u64("the last MACs");
  e.stats.passes = r.u32("the last passes");
  e.stats.elements_loaded = r.u64("the last elements loaded");
  for (std::size_t slot = 0; slot < e.conv_luts.size(); ++slot) {
    const std::size_t at = r.offset(), want = pe::conv_lut_entries(pe::conv_lut_dtype(slot));
    const std::size_t n = r.count("a converter table's entry count", want, 4);
    if (n != 0 && n != want)
      r.fail("section 'pe_array' at byte " + std::to_string(at) + ": a " +
             std::string(isa::name(pe::conv_lut_dtype(slot))) + " converter table of " + std::to_string(n) +
             " entries, not " + std::to_string(want));
    e.conv_luts[slot].resize(n);
    for (float& v : e.conv_luts[slot]) v = r.f32("a converter table entry");
  }
  const std::size_t n_regs = r.count("the PE register count", kMaxListed, 16);
  for (std::size_t i = 0; i < n_regs; ++i) {
    pe::PeArray::PeRegister p;
    p.row0 = r.u32("a PE register's row");
    p.col0 = r.u32("a PE register's column");
    p.reg_addr = r.u32("a PE register's address");
    p.value = r.u32("a PE register's value");
    s.pe_registers.push_back(p);
  }
  return s;
}

// ---- the arr_seq sequencer --------------------------------------------------------------------

void write_counter(Writer& w, const arrseq::ActivityCounter::State& c) {
  w.u32(static_cast<std::uint32_t>(c.closed.size()));
  for (const auto& [a, b] : c.closed) {
    w.u64(a);
    w.u64(b);
  }
  w.boolean(c.open);
  w.u64(c.open_start);
  w.u64(c.open_end);
  w.u64(c.counted_until);
  w.u64(c.counted);
}

arrseq::ActivityCounter::State read_counter(Reader& r) {
  arrseq::ActivityCounter::State c;
  const std::size_t n = r.count("an activity counter's interval count", kMaxListed, 16);
  for (std::size_t i = 0; i < n; ++i) {
    const arrseq::Cycle a = r.u64("an interval's start");
    c.closed.emplace_back(a, r.u64("an interval's end"));
  }
  c.open = r.boolean("an activity counter's open flag");
  c.open_start = r.u64("the open interval's start");
  c.open_end = r.u64("the open interval's end");
  c.counted_until = r.u64("counted until");
  c.counted = r.u64("counted");
  return c;
}

template <std::size_t N>
void write_u64s(Writer& w, const std::array<std::uint64_t, N>& a) {
  for (std::uint64_t v : a) w.u64(v);
}
template <std::size_t N>
void read_u64s(Reader& r, std::array<std::uint64_t, N>& a, const char* field) {
  for (auto& v : a) v = r.u64(field);
}

void write_arr_seq(Writer& w, const arrseq::ArrSeq& arr) {
  const arrseq::ArrSeq::State s = arr.state();
  const auto& t = s.timeline;
  w.u32(static_cast<std::uint32_t>(t.starts.size()));
  for (auto c : t.starts) w.u64(c);
  w.u64(t.last_start);
  w.u64(t.last_response);
  w.boolean(t.any_response);
  w.u32(static_cast<std::uint32_t>(t.tiles.size()));
  for (const auto& [key, ts] : t.tiles) {
    w.u64(key);
    w.u64(ts.wl_free);
    w.u64(ts.weights_ready);
    w.u64(ts.stream_free);
  }
  w.u32(static_cast<std::uint32_t>(t.in_flight.size()));
  for (const auto& f : t.in_flight) {
    write_tile(w, f.tile);
    w.u8(f.banks);
    w.u64(f.complete);
    w.boolean(f.regwrite);
  }
  w.u32(static_cast<std::uint32_t>(t.responses.size()));
  for (const auto& [done, response] : t.responses) {
    w.u64(done);
    w.u64(response);
  }
  for (const auto& g : t.groups) {
    write_counter(w, g.matmul);
    write_counter(w, g.weight_load);
    write_counter(w, g.busy);
    w.u64(g.origin);
    w.u64(g.last_active);
  }
  const arrseq::TimelineStats& st = t.stats;
  write_u64s(w, st.micro_ops);
  write_u64s(w, st.busy_cycles);
  w.u64(st.macs);
  write_u64s(w, st.macs_by_kind);
  w.u64(st.sbuf_read_bytes);
  w.u64(st.psum_bytes);
  for (double d : {st.pe_cycles.useful, st.pe_cycles.short_stream, st.pe_cycles.sbuf_bandwidth, st.pe_cycles.throttle,
                   st.pe_cycles.mapping, st.pe_cycles.transpose})
    w.f64(d);
  write_u64s(w, st.stall_cycles);
  write_u64s(w, st.stalled_ops);
  w.boolean(st.any);
  w.u64(st.first_start);
  w.u64(st.last_complete);
  w.u64(st.busy_span);
  w.u64(t.period_start);
  w.u64(t.period_end);
  w.u64(t.closed_span);
  write_u64s(w, s.stats.issued);
  w.u64(s.stats.dependency_waits);
  w.u64(s.stats.serialised_waits);
  w.u64(s.stats.ififo_full_waits);
  w.u64(s.stats.faults);
  for (const auto& o : s.opcode_stats) {
    w.u64(o.micro_ops);
    w.u64(o.busy_cycles);
    w.u64(o.latency_cycles);
  }
}

arrseq::ArrSeq::State read_arr_seq(Reader& r, unsigned ififo_depth) {
  arrseq::ArrSeq::State s;
  auto& t = s.timeline;
  const std::size_t n_starts = r.count("the IFIFO start count", std::max(ififo_depth, 1u), 8);
  for (std::size_t i = 0; i < n_starts; ++i) t.starts.push_back(r.u64("an IFIFO start"));
  t.last_start = r.u64("the last start");
  t.last_response = r.u64("the last response");
  t.any_response = r.boolean("any response");
  const std::size_t n_tiles = r.count("the tile state count", kMaxListed, 32);
  for (std::size_t i = 0; i < n_tiles; ++i) {
    const std::uint64_t key = r.u64("a tile key");
    arrseq::Timeline::TileState ts;
    ts.wl_free = r.u64("a tile's weight-load port");
    ts.weights_ready = r.u64("a tile's weights ready");
    ts.stream_free = r.u64("a tile's stream");
    t.tiles.emplace_back(key, ts);
  }
  const std::size_t n_flight = r.count("the in-flight count", kMaxListed, 26);
  for (std::size_t i = 0; i < n_flight; ++i) {
    arrseq::Timeline::InFlight f;
    f.tile = read_tile(r);
    f.banks = r.u8("an in-flight micro-op's banks");
    f.complete = r.u64("an in-flight micro-op's completion");
    f.regwrite = r.boolean("an in-flight micro-op's PeRegWrite flag");
    t.in_flight.push_back(f);
  }
  const std::size_t n_resp = r.count("the P2F window count", kMaxListed, 16);
  for (std::size_t i = 0; i < n_resp; ++i) {
    const arrseq::Cycle done = r.u64("a P2F entry's done");
    t.responses.emplace_back(done, r.u64("a P2F entry's response"));
  }
  for (auto& g : t.groups) {
    g.matmul = read_counter(r);
    g.weight_load = read_counter(r);
    g.busy = read_counter(r);
    g.origin = r.u64("a row group's counter origin");
    g.last_active = r.u64("a row group's last activity");
  }
  arrseq::TimelineStats& st = t.stats;
  read_u64s(r, st.micro_ops, "a micro-op count");
  read_u64s(r, st.busy_cycles, "a busy-cycle count");
  st.macs = r.u64("the MACs");
  read_u64s(r, st.macs_by_kind, "a MAC count by kind");
  st.sbuf_read_bytes = r.u64("the SBUF bytes read");
  st.psum_bytes = r.u64("the PSUM bytes moved");
  for (double* d : {&st.pe_cycles.useful, &st.pe_cycles.short_stream, &st.pe_cycles.sbuf_bandwidth,
                    &st.pe_cycles.throttle, &st.pe_cycles.mapping, &st.pe_cycles.transpose})
    *d = r.f64("an array accounting sum");
  read_u64s(r, st.stall_cycles, "a stall-cycle count");
  read_u64s(r, st.stalled_ops, "a stalled micro-op count");
  st.any = r.boolean("the statistics' any flag");
  st.first_start = r.u64("the first start");
  st.last_complete = r.u64("the last completion");
  st.busy_span = r.u64("the busy span");
  t.period_start = r.u64("the busy period's start");
  t.period_end = r.u64("the busy period's end");
  t.closed_span = r.u64("the closed busy span");
  read_u64s(r, s.stats.issued, "an issued count");
  s.stats.dependency_waits = r.u64("the dependency waits");
  s.stats.serialised_waits = r.u64("the serialised waits");
  s.stats.ififo_full_waits = r.u64("the IFIFO-full waits");
  s.stats.faults = r.u64("the faults");
  for (auto& o : s.opcode_stats) {
    o.micro_ops = r.u64("an opcode's micro-ops");
    o.busy_cycles = r.u64("an opcode's busy cycles");
    o.latency_cycles = r.u64("an opcode's latency cycles");
  }
  return s;
}

// ---- the SEQ ----------------------------------------------------------------------------------

void write_record(Writer& w, const seq::ErrorRecord& e) {
  w.u64(e.index);
  w.u8(e.opcode);
  w.u8(e.field_offset);
  w.u16(e.rule_number);
  w.str(e.rule);
  w.str(e.field);
  w.i64(e.value);
  w.str(e.message);
}

seq::ErrorRecord read_record(Reader& r) {
  seq::ErrorRecord e;
  e.index = r.u64("an error record's index");
  e.opcode = r.u8("an error record's opcode");
  e.field_offset = r.u8("an error record's field offset");
  e.rule_number = r.u16("an error record's rule number");
  e.rule = r.str("an error record's rule", kMaxText);
  e.field = r.str("an error record's field", kMaxText);
  e.value = r.i64("an error record's value");
  e.message = r.str("an error record's message", kMaxText);
  return e;
}

void write_checker(Writer& w, const isa::StreamChecker::State& c) {
  for (const auto& row : c.cells)
    for (std::uint32_t v : row) w.u32(v);
  w.u8(c.r0);
  w.u8(c.r1);
  w.u8(c.c0);
  w.u8(c.c1);
  w.u32(c.last_value);
}

isa::StreamChecker::State read_checker(Reader& r) {
  isa::StreamChecker::State c;
  for (auto& row : c.cells)
    for (auto& v : row) v = r.u32("a no-mix grid cell");
  c.r0 = r.u8("the last load's first row");
  c.r1 = r.u8("the last load's end row");
  c.c0 = r.u8("the last load's first column");
  c.c1 = r.u8("the last load's end column");
  c.last_value = r.u32("the last load's value");
  return c;
}

void write_seq(Writer& w, const seq::Seq& sq) {
  const seq::Seq::State s = sq.state();
  w.u32(static_cast<std::uint32_t>(s.queue.size()));
  for (const auto& q : s.queue) {
    w.u64(q.index);
    w.bytes(q.raw.data(), q.raw.size());
  }
  w.u64(s.local);
  w.boolean(s.waited_for_software);
  w.u64(s.next_index);
  w.u64(s.retired);
  w.boolean(s.done);
  w.boolean(s.error.has_value());
  if (s.error) write_record(w, *s.error);
  w.u32(static_cast<std::uint32_t>(s.deferred_faults.size()));
  for (const auto& e : s.deferred_faults) write_record(w, e);
  w.u64(s.next_log_index);
  write_u64s(w, s.retired_by_opcode);
  w.u64(s.syncs);
  w.u64(s.semaphore_wait_cycles);
  w.u64(s.array_idle_on_semaphore_cycles);
  w.u32(static_cast<std::uint32_t>(s.cache.size()));
  for (const auto& k : s.cache) {
    w.u32(k.slot);
    w.bytes(k.raw.data(), k.raw.size());
  }
  w.u64(s.cache_hits);
  w.u64(s.cache_misses);
  write_checker(w, s.firmware.stream);
  w.u32(static_cast<std::uint32_t>(s.firmware.checkpoints.size()));
  for (const auto& [index, c] : s.firmware.checkpoints) {
    w.u64(index);
    write_checker(w, c);
  }
}

seq::Seq::State read_seq(Reader& r, unsigned queue_depth) {
  seq::Seq::State s;
  const std::size_t n_queue = r.count("the queued instruction count", std::size_t{queue_depth} + 1, 72);
  for (std::size_t i = 0; i < n_queue; ++i) {
    seq::Seq::QueuedInstruction q;
    q.index = r.u64("a queued instruction's index");
    const std::uint8_t* p = r.bytes(q.raw.size(), "a queued instruction's bytes");
    std::copy(p, p + q.raw.size(), q.raw.begin());
    s.queue.push_back(q);
  }
  s.local = r.u64("the SEQ's local time");
  s.waited_for_software = r.boolean("the SEQ's waited-for-software flag");
  s.next_index = r.u64("the next instruction index");
  s.retired = r.u64("the retired count");
  s.done = r.boolean("the done flag");
  if (r.boolean("the error flag")) s.error = read_record(r);
  const std::size_t n_deferred = r.count("the deferred fault count", kMaxListed, 32);
  for (std::size_t i = 0; i < n_deferred; ++i) s.deferred_faults.push_back(read_record(r));
  s.next_log_index = r.u64("the next firmware log index");
  read_u64s(r, s.retired_by_opcode, "a retired-by-opcode count");
  s.syncs = r.u64("the synchronisation count");
  s.semaphore_wait_cycles = r.u64("the semaphore wait cycles");
  s.array_idle_on_semaphore_cycles = r.u64("the array's idle cycles on semaphore waits");
  const std::size_t n_cache = r.count("the decode cache key count", kMaxListed, 68);
  for (std::size_t i = 0; i < n_cache; ++i) {
    seq::CacheKey k;
    k.slot = r.u32("a decode cache slot");
    const std::uint8_t* p = r.bytes(k.raw.size(), "a decode cache key");
    std::copy(p, p + k.raw.size(), k.raw.begin());
    s.cache.push_back(k);
  }
  s.cache_hits = r.u64("the decode cache hits");
  s.cache_misses = r.u64("the decode cache misses");
  s.firmware.stream = read_checker(r);
  const std::size_t n_ck = r.count("the no-mix checkpoint count", kMaxListed, 144);
  for (std::size_t i = 0; i < n_ck; ++i) {
    const std::uint64_t index = r.u64("a no-mix checkpoint's index");
    s.firmware.checkpoints.emplace_back(index, read_checker(r));
  }
  return s;
}

// ---- the configuration ------------------------------------------------------------------------

// Every leaf of a configuration document under its dotted key.
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out[prefix] = j;
}

std::string shown(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// D-CKPT-CONFIG: the configuration must be equal key for key; the first difference, in key order, is reported.
void compare_config(Reader& r, const nlohmann::json& saved, const nlohmann::json& here) {
  std::map<std::string, nlohmann::json> a, b;
  flatten(saved, "", a);
  flatten(here, "", b);
  // The checks watch the driver and hold no model state: a checkpoint restores whatever they are set to
  // (D-HAZARD-CHECKPOINT).
  for (auto* m : {&a, &b})
    for (auto it = m->begin(); it != m->end();) it = it->first.rfind("checks.", 0) == 0 ? m->erase(it) : std::next(it);
  auto ia = a.begin();
  auto ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first))
      r.fail("configuration differs: " + ia->first + " = " + shown(ia->second) +
             " in the checkpoint, this pe-vp has no such key");
    if (ia == a.end() || ib->first < ia->first)
      r.fail("configuration differs: " + ib->first + " is absent from the checkpoint (" + shown(ib->second) + " here)");
    if (ia->second != ib->second)
      r.fail("configuration differs: " + ia->first + " is " + shown(ia->second) + " in the checkpoint, " +
             shown(ib->second) + " here");
    ++ia;
    ++ib;
  }
}

// The faces in ArrSeqCsrs::State order.
std::vector<const regfile::RegFileDesc*> csr_descs() {
  return {&regs::tpb_arr_seq_top_host_visible::regfile_desc(), &regs::tpb_arr_seq_cluster_host_visible::regfile_desc(),
          &regs::tpb_arr_seq_top_protected::regfile_desc(), &regs::vp_seq::regfile_desc()};
}

bool in_thread_process() {
  const sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
  return h.valid() && h.proc_kind() == sc_core::SC_THREAD_PROC_;
}

}  // namespace

// ---- save -------------------------------------------------------------------------------------

std::string idle_point_violation(const Platform& p) { return p.seq.idle_violation(); }

namespace {
// D-CSR-RTL-CKPT: the RTL faces' state is in Verilated flops with no back door to write them.
constexpr const char* kNoCheckpointWithRtl =
    "the CSR block is the register RTL (csrs.impl = rtl), whose flops a checkpoint cannot restore; "
    "use csrs.impl = tlm";
}  // namespace

files::InputKind checkpoint_input(const VpConfig& config) {
  constexpr std::uint64_t kPageHeaderBytes = 64, kRestBytes = std::uint64_t{256} << 20;
  const auto stored = [&](std::uint64_t bytes) { return bytes + (bytes / kPageBytes + 1) * kPageHeaderBytes; };
  const std::uint64_t max = stored(config.sbuf.size()) + stored(config.psum.size()) + kRestBytes;
  return {"a checkpoint of this configuration", std::min(max, files::kHostMemoryLimitBytes)};
}

std::string checkpoint_unsupported(const VpConfig& config) {
  return config.csrs_impl == CsrsImpl::Rtl ? kNoCheckpointWithRtl : "";
}

// Checkpoints hold SBUF, PSUM and the engine's state, not the memory system's (D-CKPT-MEMORY-SYSTEM): a platform
// whose DMA engines ran, or whose device or host memory holds data, is refused rather than saved without it.
namespace {
std::string memory_system_in_use(const Platform& p) {
  if (const std::string why = p.dma.idle_violation(); !why.empty())
    return "the DMA engines are not idle (" + why + "), and a checkpoint does not hold the memory system";
  if (p.dma_span().used)
    return "the DMA engines have moved data, and a checkpoint does not hold the memory system (its queues, device "
           "and host memory)";
  for (const hbm::Dram* m : {&p.hbm, &p.host_memory})
    if (!m->export_pages().empty())
      return m->config().name + " holds data, and a checkpoint does not hold the memory system";
  return "";
}
}  // namespace

std::vector<std::uint8_t> save_checkpoint(const Platform& p) {
  if (p.csrs.has_external_faces()) throw CheckpointError(std::string("cannot save a checkpoint: ") + kNoCheckpointWithRtl);
  if (const std::string why = idle_point_violation(p); !why.empty())
    throw CheckpointError("cannot save a checkpoint: the platform is not at an idle point: " + why);
  if (const std::string why = memory_system_in_use(p); !why.empty())
    throw CheckpointError("cannot save a checkpoint: " + why);
  Writer w;
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kCheckpointFormatVersion);
  w.str(std::string(isa::name(p.config().gen)));
  w.begin_section(kConfig);
  w.str(to_json(p.vp_config()).dump());
  w.end_section();
  w.begin_section(kTime);
  w.u64(resolution_fs());
  w.u64(sc_core::sc_time_stamp().value());
  w.end_section();
  w.begin_section(kSbuf);
  write_memory(w, p.sbuf);
  w.end_section();
  w.begin_section(kPsum);
  write_memory(w, p.psum);
  w.end_section();
  w.begin_section(kCsrs);
  write_csrs(w, p.csrs);
  w.end_section();
  w.begin_section(kArray);
  write_array(w, p.array);
  w.end_section();
  w.begin_section(kArrSeq);
  write_arr_seq(w, p.arr_seq);
  w.end_section();
  w.begin_section(kSeq);
  write_seq(w, p.seq);
  w.end_section();
  return w.take();
}

void save_checkpoint_file(const Platform& p, const std::string& path) {
  const std::vector<std::uint8_t> bytes = save_checkpoint(p);
  std::string error;
  if (!files::write_file(path, bytes.data(), bytes.size(), &error)) throw CheckpointError("checkpoint " + error);
}

// ---- read -------------------------------------------------------------------------------------

CheckpointImage read_checkpoint(const std::uint8_t* data, std::size_t size, const VpConfig& config,
                                const std::string& source) {
  Reader r(data, size, source);
  if (size == 0) r.fail("empty file (0 bytes)");
  CheckpointImage img;
  img.source = source;
  const std::uint8_t* magic = r.bytes(sizeof kMagic, "the magic");
  if (!std::equal(magic, magic + sizeof kMagic, kMagic)) {
    std::string found;
    for (std::size_t i = 0; i < sizeof kMagic; ++i) found += (magic[i] >= 0x20 && magic[i] < 0x7F) ? char(magic[i]) : '?';
    r.fail("not a pe-vp checkpoint (magic '" + found + "' at byte 0, expected 'PEVPCKPT')");
  }
  const std::uint32_t version = r.u32("the format version");
  if (version != kCheckpointFormatVersion)
    r.fail("format version " + std::to_string(version) + ", this pe-vp reads version " +
           std::to_string(kCheckpointFormatVersion));
  const std::string gen_name = r.str("the generation", 64);
  const std::optional<isa::Generation> gen = isa::parse_generation(gen_name);
  if (!gen) r.fail("written for generation '" + gen_name + "', which this pe-vp does not know");
  if (*gen != config.gen())
    r.fail("written for generation " + gen_name + ", this VP is " + std::string(isa::name(config.gen())));
  img.gen = *gen;

  r.open_section(kConfig);
  const std::string text = r.str("the configuration", kMaxText);
  try {
    img.config = documents::parse_json(text, "its text");
  } catch (const documents::DocumentError& e) {
    r.fail("section 'config' is not a JSON object pe-vp reads: " + std::string(e.what()));
  }
  if (!img.config.is_object()) r.fail("section 'config' is not a JSON object");
  r.close_section();
  compare_config(r, img.config, to_json(config));

  r.open_section(kTime);
  const std::uint64_t fs = r.u64("the time resolution");
  if (fs != resolution_fs())
    r.fail("time resolution " + std::to_string(fs) + " fs in the checkpoint, " + std::to_string(resolution_fs()) +
           " fs here");
  img.time_value = r.u64("the simulated time");
  check_time(r, img.time_value, fs);
  r.close_section();

  const isa::ArrayGeometry& geo = config.geometry;
  r.open_section(kSbuf);
  img.sbuf = read_memory(r, "SBUF", std::uint64_t{geo.partitions} * geo.sbuf_partition_bytes);
  r.close_section();
  r.open_section(kPsum);
  img.psum = read_memory(r, "PSUM", std::uint64_t{geo.partitions} * geo.psum_partition_bytes());
  r.close_section();
  r.open_section(kCsrs);
  img.csrs = read_csrs(r, csr_descs());
  r.close_section();
  r.open_section(kArray);
  img.array = read_array(r, geo);
  r.close_section();
  r.open_section(kArrSeq);
  img.arr_seq = read_arr_seq(r, config.platform.arr_seq.ififo_depth);
  r.close_section();
  r.open_section(kSeq);
  img.seq = read_seq(r, config.platform.seq.queue_depth);
  r.close_section();
  r.expect_end();
  return img;
}

// ---- apply ------------------------------------------------------------------------------------

void apply_checkpoint(Platform& p, const CheckpointImage& img) {
  const std::string prefix = "checkpoint " + img.source + ": ";
  const auto fail = [&](const std::string& what) { throw CheckpointError(prefix + what); };
  if (p.csrs.has_external_faces()) fail(std::string("cannot restore: ") + kNoCheckpointWithRtl);
  if (img.gen != p.config().gen)
    fail("written for generation " + std::string(isa::name(img.gen)) + ", this VP is " +
         std::string(isa::name(p.config().gen)));
  if (!in_thread_process())
    fail("a restore must run in a SystemC thread process (the driver's host thread): it advances simulated time "
         "with wait()");
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (now > img.time())
    fail("taken at " + img.time().to_string() + " of simulated time, this VP is already at " + now.to_string());
  if (const std::string why = idle_point_violation(p); !why.empty())
    fail("the target platform is not at an idle point: " + why);
  // Each unit's own rules, before anything changes.
  if (std::string why = p.csrs.check(img.csrs); !why.empty()) fail("section 'csrs': " + why);
  if (std::string why = p.array.check(img.array, img.gen); !why.empty()) fail("section 'pe_array': " + why);
  // The state's cycles against the checkpoint's own time and the supported range, at the configured clock.
  const arrseq::RestoreTimes times{p.arr_seq.to_cycles(img.time()), latest_cycle(p.arr_seq)};
  if (std::string why = p.arr_seq.check(img.arr_seq, times); !why.empty()) fail("section 'arr_seq': " + why);
  if (std::string why = p.seq.check(img.seq, times); !why.empty()) fail("section 'seq': " + why);
  if (img.sbuf.size != p.sbuf.size() || img.psum.size != p.psum.size())
    fail("the memory sizes differ from this VP's");

  apply_memory(p.sbuf, img.sbuf);
  apply_memory(p.psum, img.psum);
  p.csrs.restore(img.csrs);  // tells the sequencer its CSR cache is stale
  p.array.restore(img.array);
  p.arr_seq.restore(img.arr_seq);
  p.seq.restore(img.seq);  // last: it republishes the status registers and drives the interrupt line
  p.hazards.restored();  // nothing in flight at an idle point; the engine armed as it was saved (D-HAZARD-CHECKPOINT)
  if (img.time() > now) sc_core::wait(img.time() - now);
  // Two deltas: the SEQ's method drives the interrupt line, and the signal takes its new value.
  sc_core::wait(sc_core::SC_ZERO_TIME);
  sc_core::wait(sc_core::SC_ZERO_TIME);
}

void restore_checkpoint(Platform& p, const std::vector<std::uint8_t>& bytes, const std::string& source) {
  apply_checkpoint(p, read_checkpoint(bytes.data(), bytes.size(), p.vp_config(), source));
}

void restore_checkpoint_file(Platform& p, const std::string& path) {
  std::string error;
  const std::optional<std::string> bytes = files::read_file(path, &error, checkpoint_input(p.vp_config()));
  if (!bytes) throw CheckpointError("checkpoint " + error);
  apply_checkpoint(p, read_checkpoint(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size(),
                                      p.vp_config(), path));
}

}  // namespace pevp::platform
