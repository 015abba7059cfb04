#include "pevp/platform/hazards.h"

#include <algorithm>
#include <cstring>
#include <iostream>

#include "pevp/arr_seq/cost_model.h"
#include "pevp/dma/address_space.h"
#include "pevp/firmware/firmware.h"
#include "pevp/isa/hex.h"
#include "pevp/isa/opcode.h"
#include "pevp/regfile/desc.h"
#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace pevp::platform {

std::string_view name(HazardMode mode) {
  switch (mode) {
    case HazardMode::Off: return "off";
    case HazardMode::Warn: return "warn";
    case HazardMode::Error: return "error";
  }
  return "?";
}

std::string_view name(HazardClass c) {
  switch (c) {
    case HazardClass::ReadInFlight: return "read_in_flight";
    case HazardClass::WriteInFlight: return "write_in_flight";
    case HazardClass::OpenGroupRead: return "open_group_read";
    case HazardClass::UnarmedSubmit: return "unarmed_submit";
    case HazardClass::RegisterWrite: return "register_write";
  }
  return "?";
}

namespace {

using Block = HazardChecker::Block;

// A Matmul's PSUM output counted in fp32 elements: a superset for a bf16 output (as the cost model's banks).
constexpr unsigned kPsumElementBytes = 4;

// The block a pattern reaches from its start over `partitions` partitions, or none when its start is not in `m`.
std::optional<Block> block_of(const isa::AccessPattern& p, isa::Memory m, unsigned partitions, unsigned elem_bytes,
                              bool writes, const isa::ArrayGeometry& geo) {
  const auto at = isa::locate(p.start_raw, m, geo);
  if (!at || partitions == 0 || p.elements() == 0) return std::nullopt;
  const isa::ByteRange r = isa::covered_bytes(p, at->offset, elem_bytes);
  return Block{m, writes, at->partition, at->partition + partitions, r.first, r.last + 1};
}

// Do bytes [a, b) of memory `m` (offsets from its first byte, partition-major) meet the block?
bool meets(const Block& blk, std::uint64_t a, std::uint64_t b, std::uint64_t partition_bytes) {
  if (b <= a || blk.b1 <= blk.b0 || blk.p1 <= blk.p0) return false;
  const std::uint64_t first = std::max<std::uint64_t>(a / partition_bytes, blk.p0);
  const std::uint64_t last = std::min<std::uint64_t>((b - 1) / partition_bytes, blk.p1 - 1);
  if (first > last) return false;
  if (last - first >= 2) return true;  // a partition strictly inside [a, b) is covered whole
  for (const std::uint64_t p : {first, last}) {
    const std::int64_t lo = static_cast<std::int64_t>(p * partition_bytes) + blk.b0;
    const std::int64_t hi = static_cast<std::int64_t>(p * partition_bytes) + blk.b1;
    if (lo < static_cast<std::int64_t>(b) && static_cast<std::int64_t>(a) < hi) return true;
  }
  return false;
}

bool meets(const Block& x, const Block& y) {
  return x.memory == y.memory && x.p0 < y.p1 && y.p0 < x.p1 && x.b0 < y.b1 && y.b0 < x.b1;
}

const char* memory_name(isa::Memory m) { return m == isa::Memory::Sbuf ? "SBUF" : "PSUM"; }

std::string describe(const Block& b) {
  return std::string(memory_name(b.memory)) + " partitions " + std::to_string(b.p0) + ".." +
         std::to_string(b.p1 - 1) + ", bytes " + std::to_string(b.b0) + ".." + std::to_string(b.b1 - 1);
}

std::uint64_t ps(const sc_core::sc_time& t) { return t.value(); }  // the platform's time resolution: 1 ps

const regfile::RegFileDesc* face_desc(std::string_view face) {
  if (face == "top") return &regs::tpb_arr_seq_top_host_visible::regfile_desc();
  if (face == "cluster") return &regs::tpb_arr_seq_cluster_host_visible::regfile_desc();
  if (face == "protected") return &regs::tpb_arr_seq_top_protected::regfile_desc();
  if (face == "vp") return &regs::vp_seq::regfile_desc();
  return nullptr;
}

const regfile::RegisterDesc* register_at(const regfile::RegFileDesc& d, std::uint32_t offset) {
  const regfile::RegisterDesc* end = d.registers + d.num_registers;
  const regfile::RegisterDesc* r = std::lower_bound(
      d.registers, end, offset, [](const regfile::RegisterDesc& x, std::uint32_t o) { return x.offset < o; });
  return r != end && r->offset == offset ? r : nullptr;
}

}  // namespace

HazardChecker::HazardChecker(HazardMode mode, isa::Generation gen, const isa::ArrayGeometry& geo,
                             const AddressMap& map, std::function<std::optional<std::uint32_t>(std::uint64_t)> read_word)
    : mode_(mode), gen_(gen), geo_(geo), map_(map), read_word_(std::move(read_word)) {
  sink = [](const HazardReport& r) { std::cerr << "pe-vp: warning: " << r.text << "\n"; };
}

HazardChecker::~HazardChecker() = default;

std::shared_ptr<const HazardChecker::Footprint> HazardChecker::footprint_of(const isa::RawInstruction& raw) const {
  return cache_.get(raw, [this](const isa::RawInstruction& bytes) {
    auto fp = std::make_shared<Footprint>();
    const fw::Prepared p = fw::prepare(std::make_shared<const isa::Decoded>(isa::decode(gen_, geo_, bytes)));
    const isa::Decoded& d = *p.decoded;
    fp->opcode = d.opcode ? std::string(isa::name(*d.opcode)) : "opcode " + hex(d.opcode_byte, 2);
    fp->waits = p.events.wait_mode != isa::WaitMode::NONE;
    if (p.fault) return std::shared_ptr<const Footprint>(fp);  // it faults at dispatch: it touches nothing
    for (const pe::MicroOp& op : p.ops) {
      const arrseq::OpShape shape = arrseq::shape_of(op, geo_);
      // The SBUF source: k partitions (one for a table or a register word); a seed Save reads the seed state.
      const bool reads_sbuf = op.kind != pe::MicroOpKind::PeRegWrite && op.seed != pe::SeedMove::Save;
      const unsigned src_partitions = op.conv_lut ? 1 : std::max(op.k, 1u);
      if (reads_sbuf)
        if (auto b = block_of(op.src, isa::Memory::Sbuf, src_partitions, std::max(shape.elem_bytes, 1u), false, geo_))
          fp->blocks.push_back(*b);
      if (op.kind != pe::MicroOpKind::Matmul || op.seed == pe::SeedMove::Load) continue;
      // The PSUM output: a partition per active column; a transposing one may turn rows into partitions.
      const unsigned out_partitions =
          op.seed != pe::SeedMove::None ? op.seed_partitions : op.transpose ? std::max(op.k, op.m) : op.m;
      const auto out = block_of(op.dst, isa::Memory::Psum, out_partitions, kPsumElementBytes, true, geo_);
      if (!out) continue;
      fp->blocks.push_back(*out);
      if (op.psum.tracked && op.psum.end) fp->closes_group.push_back(*out);
      if (op.psum.tracked && (op.psum.begin || op.psum.begin_accumulate) && !op.psum.end)
        fp->opens_group.push_back(*out);
    }
    return std::shared_ptr<const Footprint>(fp);
  });
}

void HazardChecker::queued(std::uint64_t index, const isa::RawInstruction& raw) {
  if (mode_ == HazardMode::Off) return;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  std::shared_ptr<const Footprint> fp = footprint_of(raw);
  if (!armed_ && !unarmed_reported_) {
    unarmed_reported_ = true;  // once: every instruction after it was submitted to the same unarmed engine
    report(HazardClass::UnarmedSubmit,
           "hazard.unarmed_submit at " + std::to_string(ps(now)) + " ps: instruction " + std::to_string(index) + " (" +
               fp->opcode +
               ") submitted to an engine not armed: spec 003 section 6 configures top:queue_cfg before the "
               "program is streamed (pevp_arm / Driver::arm); the per-tile counters stay off and the interrupt "
               "disabled until they are armed too");
  }
  // An END closes the groups its bytes meet; a BEGIN opens one.
  for (const Block& c : fp->closes_group)
    open_groups_.erase(std::remove_if(open_groups_.begin(), open_groups_.end(),
                                      [&](const OpenGroup& g) { return meets(g.block, c); }),
                       open_groups_.end());
  for (const Block& o : fp->opens_group) open_groups_.push_back({index, fp->opcode, o});
  if (!fp->blocks.empty() || fp->waits) in_flight_.push_back({index, std::move(fp), false, now});
}

void HazardChecker::issued(std::uint64_t index) {
  for (InFlight& f : in_flight_)
    if (f.index == index) {
      f.issued = true;
      return;
    }
}

void HazardChecker::left(std::uint64_t index) {
  // Instructions leave in order, but a fault takes one out ahead of those still queued behind a stop: search.
  for (auto it = in_flight_.begin(); it != in_flight_.end(); ++it)
    if (it->index == index) {
      in_flight_.erase(it);
      return;
    }
}

void HazardChecker::restored() {
  in_flight_.clear();
  open_groups_.clear();
  armed_ = true;
}

void HazardChecker::powered_on() {
  in_flight_.clear();
  open_groups_.clear();
  armed_ = false;
  unarmed_reported_ = false;
}

std::string HazardChecker::where(isa::Memory m, std::uint64_t offset, std::uint64_t bytes) const {
  const std::uint64_t pb = isa::partition_bytes(m, geo_);
  const std::uint64_t last = offset + bytes - 1;
  return std::string(memory_name(m)) + " " + hex(isa::base_of(m) + offset) + ".." + hex(isa::base_of(m) + last) +
         " (partition " + std::to_string(offset / pb) + " byte " + std::to_string(offset % pb) + " .. partition " +
         std::to_string(last / pb) + " byte " + std::to_string(last % pb) + ")";
}

bool HazardChecker::memory_access(bool write, isa::Memory m, std::uint64_t offset, std::uint64_t bytes,
                                  const sc_core::sc_time& at, const std::string& who) {
  if (bytes == 0) return false;
  const std::uint64_t pb = isa::partition_bytes(m, geo_);
  const std::uint64_t end = offset + bytes;
  // Instructions behind a wait not yet issued run only after the driver's signal (D-HAZARD-SEMAPHORE); those a
  // stopped SEQ holds, only after its clear_error (D-HAZARD-STOPPED).
  const bool stopped = engine_stopped && engine_stopped();
  for (const InFlight& f : in_flight_) {
    if (!f.issued && (f.fp->waits || stopped)) break;
    for (const Block& b : f.fp->blocks) {
      if (b.memory != m || (!write && !b.writes) || !meets(b, offset, end, pb)) continue;
      const HazardClass c = write ? HazardClass::WriteInFlight : HazardClass::ReadInFlight;
      report(c, "hazard." + std::string(name(c)) + " at " + std::to_string(ps(at)) + " ps: " + who + " " +
                    (write ? "write to " : "read of ") + where(m, offset, bytes) + " while instruction " +
                    std::to_string(f.index) + " (" + f.fp->opcode + "), submitted at " +
                    std::to_string(ps(f.submitted)) + " ps and not yet retired, will still " +
                    (b.writes ? "write " : "read ") + describe(b) +
                    (write ? "" : "; wait for it (pevp_wait_idle) before reading"));
      return true;  // one report per access
    }
  }
  if (write || m != isa::Memory::Psum) return false;
  for (const OpenGroup& g : open_groups_)
    if (meets(g.block, offset, end, pb)) {
      report(HazardClass::OpenGroupRead,
             "hazard.open_group_read at " + std::to_string(ps(at)) + " ps: host read of " + where(m, offset, bytes) +
                 " inside the accumulation group instruction " + std::to_string(g.index) + " (" + g.opcode +
                 ") opened on " + describe(g.block) + ", which no instruction submitted so far ends (END)");
      return true;
    }
  return false;
}

void HazardChecker::dma_write(const dma::TransferRecord& t) {
  if (mode_ == HazardMode::Off || in_flight_.empty() || t.dst_row_bytes == 0) return;
  const struct {
    isa::Memory memory;
    std::uint64_t base;
  } memories[] = {{isa::Memory::Sbuf, dma::kSbufBase}, {isa::Memory::Psum, dma::kPsumBase}};
  const std::string who = "DMA engine " + std::to_string(t.engine) + " queue " + std::to_string(t.queue) +
                          " descriptor " + std::to_string(t.index);
  for (const auto& mem : memories) {
    const std::uint64_t size = std::uint64_t{isa::partition_bytes(mem.memory, geo_)} * geo_.partitions;
    for (std::uint32_t p = 0; p < t.planes; ++p)
      for (std::uint32_t r = 0; r < t.rows; ++r) {
        const std::uint64_t at = t.dst + p * t.dst_plane_stride + r * t.dst_row_stride;
        if (at < mem.base || at - mem.base >= size) continue;
        // One report per transfer.
        if (memory_access(true, mem.memory, at - mem.base, t.dst_row_bytes, t.end, who)) return;
      }
  }
}

void HazardChecker::register_write(std::uint64_t address, std::uint64_t face_base, std::string_view face,
                                   std::uint32_t value, const sc_core::sc_time& at) {
  const regfile::RegFileDesc* d = face_desc(face);
  if (d == nullptr) return;
  const regfile::RegisterDesc* r = register_at(*d, static_cast<std::uint32_t>(address - face_base));
  if (r == nullptr) return;  // an unmapped offset: the CSR block's own policy answers it
  if (face == "top" && r->def_name == "queue_cfg") armed_ = true;
  std::uint32_t defined = 0, read_only = 0;
  for (std::size_t i = 0; i < r->num_fields; ++i) {
    defined |= r->fields[i].mask();
    if (r->fields[i].access == regfile::Access::RO) read_only |= r->fields[i].mask();
  }
  const std::string reg = std::string(face) + ":" + std::string(r->bundle) + "." + std::string(r->name);
  const std::string head = "hazard.register_write at " + std::to_string(ps(at)) + " ps: write of " +
                           hex(value, 8) + " to " + reg + " (" + hex(address) + ")";
  if (const std::uint32_t reserved = value & ~defined; reserved != 0) {
    report(HazardClass::RegisterWrite, head + " sets reserved bits " + hex(reserved, 8) + " (no field there)");
    return;
  }
  if (read_only == 0) return;
  const std::optional<std::uint32_t> now = read_word_ ? read_word_(address) : std::nullopt;
  if (!now) return;
  const std::uint32_t changed = (value ^ *now) & read_only;
  if (changed == 0) return;  // a read-modify-write that leaves the read-only fields as they are
  for (std::size_t i = 0; i < r->num_fields; ++i) {
    const regfile::FieldDesc& f = r->fields[i];
    if (f.access != regfile::Access::RO || (changed & f.mask()) == 0) continue;
    report(HazardClass::RegisterWrite, head + " changes the read-only field " + std::string(f.name) + " (bits " +
                                           std::to_string(f.lsb + f.width - 1) + ":" + std::to_string(f.lsb) +
                                           ", holding " + std::to_string((*now & f.mask()) >> f.lsb) +
                                           "; the write would set " + std::to_string((value & f.mask()) >> f.lsb) +
                                           "); the register ignores it");
    return;
  }
}

void HazardChecker::access(const tlm::tlm_generic_payload& trans, std::string_view window, std::uint64_t base,
                           const sc_core::sc_time& delay) {
  if (mode_ == HazardMode::Off) return;
  const bool write = trans.get_command() == tlm::TLM_WRITE_COMMAND;
  if (!write && trans.get_command() != tlm::TLM_READ_COMMAND) return;
  const sc_core::sc_time at = sc_core::sc_time_stamp() + delay;
  const std::uint64_t address = trans.get_address();
  const std::uint64_t bytes = trans.get_data_length();
  if (window == "sbuf" || window == "psum") {
    memory_access(write, window == "sbuf" ? isa::Memory::Sbuf : isa::Memory::Psum, address - base, bytes, at);
    return;
  }
  if (window != "apb" || !write || bytes != 4 || trans.get_byte_enable_ptr() != nullptr) return;
  std::uint32_t value = 0;
  std::memcpy(&value, trans.get_data_ptr(), sizeof value);
  const struct {
    const char* face;
    std::uint64_t base;
  } faces[] = {{"top", map_.top()}, {"cluster", map_.cluster()}, {"protected", map_.protect()}, {"vp", map_.vp_seq()}};
  for (const auto& f : faces)
    if (address >= f.base && address - f.base < 0x1000) register_write(address, f.base, f.face, value, at);
}

void HazardChecker::report(HazardClass c, std::string text) {
  ++stats_.by_class[static_cast<std::size_t>(c)];
  HazardReport r{c, std::move(text)};
  if (mode_ == HazardMode::Error) {
    if (error_) {
      ++errors_after_first_;
      return;
    }
    error_ = std::move(r);
    return;
  }
  if (sink) sink(r);
}

std::optional<HazardReport> HazardChecker::take_error() {
  std::optional<HazardReport> e = std::move(error_);
  error_.reset();
  if (e && errors_after_first_ > 0)
    e->text += " (and " + std::to_string(errors_after_first_) + " more hazard(s) after it)";
  errors_after_first_ = 0;
  return e;
}

}  // namespace pevp::platform
