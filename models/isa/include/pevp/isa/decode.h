// Decoding 64-byte instructions: total over every possible input (any 64 bytes
// decode to something printable, never a crash), with the validity rules of
// validate.cpp attached as violations.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pevp/isa/fields.h"
#include "pevp/isa/generation.h"
#include "pevp/isa/geometry.h"
#include "pevp/isa/instruction.h"
#include "pevp/isa/layout.h"
#include "pevp/isa/opcode.h"
#include "pevp/isa/tile_rect.h"

namespace pevp::isa {

using RawInstruction = std::array<std::uint8_t, kInstructionBytes>;

// One broken rule: which field, which value, which named rule, and why.
struct Violation {
  std::string field;    // leaf path ("in_dtype", "dst_mem_pattern.num_elem[2]")
  std::int64_t value = 0;
  std::string rule;     // stable rule id ("mm.in_dtype"); docs/isa.md lists them
  std::string message;  // what the rule requires
  std::string describe() const;  // "in_dtype = 12: <message> [mm.in_dtype]"
};

struct DecodedField {
  Leaf leaf;
  std::int64_t value = 0;  // sign-extended for signed leaves
};

struct Decoded {
  Generation gen = Generation::CAYMAN;
  // The machine the instruction was decoded for: its tile fields, addresses and
  // PSUM banks are read against it (the generation's preset unless configured).
  ArrayGeometry geo = preset_geometry(Generation::CAYMAN);
  RawInstruction raw{};
  std::uint8_t opcode_byte = 0;
  std::optional<Opcode> opcode;         // empty: not an opcode of `gen`
  const StructLayout* layout = nullptr;  // null when the opcode is unknown
  std::vector<DecodedField> fields;
  // The typed form (instruction.h), read from `fields` once by decode(): the
  // validity rules, the firmware stub and the SEQ work on it.
  Instruction instr;
  std::vector<Violation> violations;
  // The tile (tiles.h tile_of), worked out once by decode(): the rules, the
  // typed form and the firmware all ask for it.
  std::optional<TileRect> tile;
  bool tile_known = false;
  // path -> position in `fields` (shared, built once per layout); null when the
  // opcode is unknown.
  const std::unordered_map<std::string_view, std::uint16_t>* index = nullptr;
  // The same as `index`, which field() queries when set (decode() sets both).
  const LeafLookup* lookup = nullptr;
  // The global number of the leaf set `index` belongs to (decode() sets it; -1
  // for a Decoded built by hand, whose set leaf_set_number() looks up).
  std::int32_t leaf_set = -1;

  bool valid() const { return violations.empty(); }
  const DecodedField* field(std::string_view path) const;
  bool has(std::string_view path) const { return field(path) != nullptr; }
  // The value of a leaf; throws std::out_of_range naming the path if absent.
  std::int64_t get(std::string_view path) const;
  // get() or `fallback` when the struct has no such field.
  std::int64_t get_or(std::string_view path, std::int64_t fallback) const;
};

// Code that reads the same leaves of every instruction resolves their positions
// once per leaf set (a layout has one per combination of its union members):
// `per_leaf_set(f)` calls f with a Decoded holding each set's leaves (values 0)
// and keeps the results by global leaf set number; `leaf_set_number(d)` is the
// set a decode()d instruction uses (none for a Decoded built by hand).
std::optional<std::size_t> leaf_set_number(const Decoded& d);
template <class T, class F>
std::vector<T> per_leaf_set(F f) {
  std::vector<T> all(leaf_set_count());
  for (const StructLayout& layout : all_layouts())
    for (std::size_t set = 0; set < layout.leaf_sets.size(); ++set) {
      Decoded proto;
      proto.layout = &layout;
      proto.index = &layout.leaf_index[set];
      for (const Leaf& leaf : layout.leaf_sets[set]) proto.fields.push_back({leaf, 0});
      all[layout.first_leaf_set + set] = f(proto);
    }
  return all;
}

// Decodes and validates one instruction of generation `g` on `geo` (default:
// the generation's preset geometry).
Decoded decode(Generation g, const RawInstruction& bytes);
Decoded decode(Generation g, const std::uint8_t* bytes64);
Decoded decode(Generation g, const ArrayGeometry& geo, const RawInstruction& bytes);
Decoded decode(Generation g, const ArrayGeometry& geo, const std::uint8_t* bytes64);

// The typed form of `d`: decode()'s (Decoded::instr), or read from the fields
// into `scratch` for a Decoded built by hand.
inline const Instruction& typed_form(const Decoded& d, Instruction& scratch) {
  if (!std::holds_alternative<std::monostate>(d.instr) || !d.opcode) return d.instr;
  scratch = typed(d);
  return scratch;
}

// The checks of a single instruction (decode() already runs them).
std::vector<Violation> validate(const Decoded& d);

// Rules that span instructions: a Matmul must agree with the Ldweights that
// loaded its tile (the fp32/tf32 no-mix rule, spec 8). Feed instructions in
// program order.
class StreamChecker {
 public:
  // What the rule reads of one instruction, taken once (key_of) so a stream
  // that repeats instructions does not look their fields up again.
  struct Key {
    enum class Role : std::uint8_t { None, Load, Use } role = Role::None;  // Ldweights loads, Matmul uses
    std::uint8_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;  // the grid cells the tile covers: [r0, r1) x [c0, c1)
    std::int64_t in_dtype = 0;
    std::int64_t fp32_mode = 0;
    // Only a load changes the state, so only a load needs a checkpoint to undo.
    bool changes_state() const { return role == Role::Load; }
  };
  static Key key_of(const Decoded& d);
  static Key key_of(const Decoded& d, const TileRect& tile);  // tile = tile_of(d), already taken

  std::vector<Violation> check(const Decoded& d) { return check(key_of(d)); }
  std::vector<Violation> check(const Key& k);

  // The grid the state covers: the largest tile grid (4 x 8, MAVERICK).
  static constexpr unsigned kRows = 4, kCols = 8;
  static constexpr std::uint32_t kLoaded = 1u << 16;  // a packed cell's "something loaded" bit
  // The whole state as plain data, for a VP checkpoint (docs/checkpoint.md):
  // the packed cells and the most recent load's shortcut, which restore()
  // puts back exactly so a restored stream takes the same paths.
  struct State {
    std::array<std::array<std::uint32_t, kCols>, kRows> cells{};
    std::uint8_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    std::uint32_t last_value = 0;
  };
  State state() const { return {cells_, last_load_.r0, last_load_.r1, last_load_.c0, last_load_.c1, last_load_.value}; }
  // Why `s` is not a state this checker can hold, or "" (a cell is empty or
  // a packed load; the shortcut's cells lie on the grid).
  static std::string check(const State& s) {
    for (const auto& row : s.cells)
      for (std::uint32_t cell : row)
        if (cell != 0 && (cell & ~0xFFFFu) != kLoaded) return "a grid cell holds " + std::to_string(cell);
    if (s.r0 > s.r1 || s.r1 > kRows || s.c0 > s.c1 || s.c1 > kCols) return "the last load's cells leave the grid";
    return "";
  }
  void restore(const State& s) {
    cells_ = s.cells;
    last_load_ = {s.r0, s.r1, s.c0, s.c1, s.last_value};
  }

 private:
  // The stationary per cell of the grid, packed:
  // 0 = nothing loaded, else kLoaded | in_dtype << 8 | fp32_mode (both are
  // one-byte fields in every struct). Compact because a checkpoint copies the
  // whole state before each Ldweights still in flight, and a Matmul on cells
  // holding exactly its own dtype and mode is checked by one compare per cell.
  static std::uint32_t pack(std::int64_t in_dtype, std::int64_t fp32_mode) {
    return kLoaded | static_cast<std::uint32_t>(in_dtype & 0xFF) << 8 | static_cast<std::uint32_t>(fp32_mode & 0xFF);
  }
  std::array<std::array<std::uint32_t, kCols>, kRows> cells_{};
  // The cells the most recent Ldweights wrote, all to `value`: a Matmul inside
  // them with that same value passes without a look at each cell.
  struct LastLoad {
    std::uint8_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    std::uint32_t value = 0;
  } last_load_;
};

}  // namespace pevp::isa
