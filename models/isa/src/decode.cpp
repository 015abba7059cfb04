#include "pevp/isa/decode.h"

#include "pevp/isa/tiles.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace pevp::isa {

std::string Violation::describe() const {
  std::string s;
  if (!field.empty()) s = field + " = " + std::to_string(value) + ": ";
  return s + message + " [" + rule + "]";
}

const DecodedField* Decoded::field(std::string_view path) const {
  if (lookup != nullptr) {
    const int i = lookup->find(path);
    return i < 0 ? nullptr : &fields[static_cast<std::size_t>(i)];
  }
  if (index != nullptr) {
    const auto it = index->find(path);
    return it == index->end() ? nullptr : &fields[it->second];
  }
  for (const auto& f : fields)
    if (f.leaf.path == path) return &f;
  return nullptr;
}

std::int64_t Decoded::get(std::string_view path) const {
  const DecodedField* f = field(path);
  if (!f) throw std::out_of_range("instruction has no field '" + std::string(path) + "'");
  return f->value;
}

std::int64_t Decoded::get_or(std::string_view path, std::int64_t fallback) const {
  const DecodedField* f = field(path);
  return f ? f->value : fallback;
}

namespace {
// How decode() reads one leaf without branching on its shape: one little-endian
// 64-bit load from the instruction (at the leaf's offset, or at byte 56 for a
// leaf in the last 8 bytes, so the load stays inside the 64), then shift, mask
// and sign-extend. Reserved leaves, whose value is the OR of their bytes, and
// leaves wider than 8 bytes go through read_leaf_signed instead.
struct LeafReader {
  static constexpr unsigned kLastLoad = kInstructionBytes - 8;
  std::uint8_t load_at = 0;
  std::uint8_t shift = 0;
  bool general = false;     // read with read_leaf_signed
  std::uint64_t mask = 0;   // the leaf's bits, after the shift
  std::uint64_t sign = 0;   // the sign bit of a signed leaf, else 0

  explicit LeafReader(const Leaf& leaf) {
    general = leaf.kind == ValueKind::Reserved || leaf.size > 8;
    load_at = static_cast<std::uint8_t>(std::min<unsigned>(leaf.offset, kLastLoad));
    shift = static_cast<std::uint8_t>(8 * (leaf.offset - load_at) + (leaf.bit_width ? leaf.bit_lo : 0));
    const unsigned bits = leaf.bit_width ? leaf.bit_width : 8u * leaf.size;
    mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    sign = leaf.is_signed && bits > 0 ? 1ull << (bits - 1) : 0;
  }
  std::int64_t read(const std::uint8_t* bytes64) const {
    std::uint64_t v;
    std::memcpy(&v, bytes64 + load_at, sizeof v);  // one load
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);  // the instruction is little-endian
#endif
    v = (v >> shift) & mask;
    return static_cast<std::int64_t>(v ^ sign) - static_cast<std::int64_t>(sign);
  }
};

// What decode() needs per leaf set, built once: the fields with value 0 (copied
// in one go, then filled in, instead of appending 40-odd fields one at a time)
// and a reader per field.
struct LeafSetDecoder {
  std::vector<DecodedField> fields;
  std::vector<LeafReader> readers;
};

const LeafSetDecoder& leaf_set_decoder(std::size_t leaf_set) {
  static const auto decoders = [] {
    std::vector<LeafSetDecoder> all(leaf_set_count());
    for (const StructLayout& layout : all_layouts())
      for (std::size_t s = 0; s < layout.leaf_sets.size(); ++s) {
        LeafSetDecoder& decoder = all[layout.first_leaf_set + s];
        for (const Leaf& leaf : layout.leaf_sets[s]) {
          decoder.fields.push_back({leaf, 0});
          decoder.readers.emplace_back(leaf);
        }
      }
    return all;
  }();
  return decoders[leaf_set];
}
}  // namespace

std::optional<std::size_t> leaf_set_number(const Decoded& d) {
  if (d.leaf_set >= 0) return static_cast<std::size_t>(d.leaf_set);
  if (!d.layout || !d.index) return std::nullopt;
  const auto& sets = d.layout->leaf_index;
  for (std::size_t s = 0; s < sets.size(); ++s)
    if (&sets[s] == d.index) return d.layout->first_leaf_set + s;
  return std::nullopt;
}

Decoded decode(Generation g, const std::uint8_t* bytes64) { return decode(g, preset_geometry(g), bytes64); }

Decoded decode(Generation g, const ArrayGeometry& geo, const std::uint8_t* bytes64) {
  Decoded d;
  d.gen = g;
  d.geo = geo;
  std::memcpy(d.raw.data(), bytes64, kInstructionBytes);
  d.opcode_byte = d.raw[0];
  d.opcode = opcode_from_byte(d.opcode_byte, g);
  if (d.opcode) {
    d.layout = &layout_of(g, struct_of(*d.opcode));
    const std::size_t set = leaf_set_of(*d.layout, d.raw.data());
    d.index = &d.layout->leaf_index[set];
    d.lookup = &d.layout->leaf_lookup[set];
    d.leaf_set = static_cast<std::int32_t>(d.layout->first_leaf_set + set);
    const LeafSetDecoder& decoder = leaf_set_decoder(d.layout->first_leaf_set + set);
    d.fields = decoder.fields;
    for (std::size_t i = 0; i < d.fields.size(); ++i) {
      // bytes64, not d.raw: the copy just written would stall the loads
      const LeafReader& reader = decoder.readers[i];
      d.fields[i].value = reader.general ? read_leaf_signed(bytes64, d.fields[i].leaf) : reader.read(bytes64);
    }
  } else {
    d.fields.push_back({Leaf{"header.opcode", 0, 1, 0, 0, ValueKind::Opcode, false, "header"}, d.opcode_byte});
  }
  typed_into(d, d.instr);
  const TilePart* tile = tile_part(d.instr);
  d.tile = tile ? tile->rect : std::nullopt;
  d.tile_known = true;
  d.violations = validate(d);
  return d;
}

Decoded decode(Generation g, const RawInstruction& bytes) { return decode(g, bytes.data()); }
Decoded decode(Generation g, const ArrayGeometry& geo, const RawInstruction& bytes) {
  return decode(g, geo, bytes.data());
}

}  // namespace pevp::isa
