#include "pevp/isa/instruction.h"

namespace pevp::isa {
namespace {

// Reads a decoded instruction's leaves by their spec names, once.
struct Reader {
  const Decoded& d;
  std::int64_t get(std::string_view path, std::int64_t fallback = 0) const { return d.get_or(path, fallback); }
  bool has(std::string_view path) const { return d.has(path); }

  AccessPattern pattern(std::string_view name) const {
    const FieldDesc* f = d.layout ? d.layout->find(name) : nullptr;
    const bool is_union = f && f->part == Part::MemPattern3D;
    return read_pattern(d, name, is_union).value_or(AccessPattern{});
  }
  OperandPart operand() const { return {get("in_dtype"), get("fp32_mode")}; }
  TilePart tile() const {
    TilePart t;
    t.rect = tile_of(d);
    const unsigned rows = t.rect ? t.rect->rows : 0, cols = t.rect ? t.rect->cols : 0;
    // A struct without active counts uses its whole tile (PeRegWrite, LdTags' rows).
    t.active_rows = has("num_active_rows") ? active_extent(get("num_active_rows"), rows) : rows;
    t.active_cols = has("num_active_cols") ? active_extent(get("num_active_cols"), cols) : cols;
    return t;
  }
  PsumPart psum() const {
    PsumPart p;
    if (has("psum_accumulate_flags")) p.group_flags = static_cast<std::uint8_t>(get("psum_accumulate_flags"));
    if (has("flags.accumulate_flag")) p.accumulate = get("flags.accumulate_flag") != 0;
    p.zero_region = get("psum_zero_region");
    return p;
  }
  bool transpose() const { return get("transpose_mode") != 0 || get("flags.xpose_mode") != 0; }
  void common(Common& c) const {
    c.opcode_byte = d.opcode_byte;
    c.events.wait_mode = static_cast<WaitMode>(get("events.wait_mode"));
    c.events.wait_sem = static_cast<unsigned>(get("events.wait_sem"));
    c.events.wait_value = static_cast<std::uint32_t>(get("events.wait_value"));
    c.events.update_mode = static_cast<UpdateMode>(get("events.update_mode"));
    c.events.update_sem = static_cast<unsigned>(get("events.update_sem"));
    c.events.update_value = get("events.update_value");
  }
};

template <typename T>
T with_common(const Reader& r) {
  T t;
  r.common(t);
  return t;
}

}  // namespace

Instruction typed(const Decoded& d) {
  if (!d.opcode) return std::monostate{};
  const Reader r{d};
  switch (*d.opcode) {
    case Opcode::LDWEIGHTS: {
      auto i = with_common<Ldweights>(r);
      i.src = r.pattern("src_mem_pattern");
      i.in = r.operand();
      i.tile = r.tile();
      i.transpose = r.transpose();
      i.bg_transpose = r.get("bg_xpose_mode");
      i.seed_mode = r.get("flags.seed_mode");
      i.scalar_mode = r.get("flags.scalar_mode");
      i.load_order = r.get("flags.load_order");
      i.perf_opt = r.get("perf_opt");
      i.perf_mode = r.get("perf_mode");
      return i;
    }
    case Opcode::MATMUL: {
      auto i = with_common<Matmul>(r);
      i.src = r.pattern("src_mem_pattern");
      i.dst = r.pattern("dst_mem_pattern");
      i.in = r.operand();
      i.out_dtype = r.get("out_dtype");
      i.tile = r.tile();
      i.transpose = r.transpose();
      i.seed_mode = r.get("flags.seed_mode");
      i.scalar_mode = r.get("flags.scalar_mode");
      i.perf_opt = r.get("perf_opt");
      i.perf_mode = r.get("perf_mode");
      i.psum = r.psum();
      return i;
    }
    case Opcode::MATMUL_SPARSE: {
      auto i = with_common<MatmulSparse>(r);
      i.src = r.pattern("src_mem_pattern");
      i.dst = r.pattern("dst_mem_pattern");
      i.in = r.operand();
      i.out_dtype = r.get("out_dtype");
      i.tile = r.tile();
      i.seed_mode = r.get("flags.seed_mode");
      i.psum = r.psum();
      return i;
    }
    case Opcode::LDTAGS: {
      auto i = with_common<LdTags>(r);
      i.src = r.pattern("src_mem_pattern");
      i.in_dtype = r.get("in_dtype");
      i.force_tag_bits = r.get("force_tag_bits");
      i.tile = r.tile();
      return i;
    }
    case Opcode::PE_REG_WRITE: {
      auto i = with_common<PeRegWrite>(r);
      i.reg_addr = static_cast<std::uint32_t>(r.get("reg_addr"));
      i.imm_value = static_cast<std::uint32_t>(r.get("imm_value"));
      i.src = r.pattern("src_mem_pattern");
      i.tile = r.tile();
      return i;
    }
    case Opcode::PE_MANAGE_SEED: {
      auto i = with_common<PeManageSeed>(r);
      i.mode = r.get("mode");
      i.identity = r.pattern("identity_mem_pattern");
      i.src_seed = r.pattern("src_seed_mem_pattern");
      i.dst_seed = r.pattern("dst_seed_mem_pattern");
      i.identity_dtype = r.get("identity_dtype");
      i.active_rows = static_cast<unsigned>(r.get("num_active_rows"));
      i.active_cols = static_cast<unsigned>(r.get("num_active_cols"));
      return i;
    }
    case Opcode::LDWEIGHTS_MX: {
      auto i = with_common<LdweightsMX>(r);
      i.src = r.pattern("src_mem_pattern");
      i.in_dtype = r.get("in_dtype");
      i.perf_mode = r.get("perf_mode");
      i.tile = r.tile();
      return i;
    }
    case Opcode::MATMUL_MX: {
      auto i = with_common<MatmulMX>(r);
      i.src = r.pattern("src_mem_pattern");
      i.dst = r.pattern("dst_mem_pattern");
      i.in_dtype = r.get("in_dtype");
      i.perf_mode = r.get("perf_mode");
      i.out_dtype = r.get("out_dtype");
      i.tile = r.tile();
      i.psum = r.psum();
      return i;
    }
    case Opcode::CONV_LUT_LOAD: {
      auto i = with_common<ConvLutLoad>(r);
      i.src = r.pattern("src_mem_pattern");
      i.lut_dtype = r.get("lut_dtype");
      return i;
    }
  }
  return std::monostate{};
}

EventsPart events_of(const Instruction& i) {
  return std::visit(
      [](const auto& x) -> EventsPart {
        if constexpr (std::is_base_of_v<Common, std::decay_t<decltype(x)>>) return x.events;
        else return {};
      },
      i);
}

}  // namespace pevp::isa
