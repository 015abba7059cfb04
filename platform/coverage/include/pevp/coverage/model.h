// The functional coverage model of the ISA (docs/coverage.md): which features of the instruction set a run
// exercised -- opcodes, input dtypes, fp32 modes, PSUM group semantics, tile shapes and grid positions, transposes,
// double_row, MX perf modes, sparsity, seed moves -- each crossed with the generation, and the validity and execution
// rules that fired (isa::Rule).
//
// Every bin is defined here, in one table (groups()): a group names its feature and lists the bins its generation's
// ISA allows, derived from the ISA's own tables (isa::usable_in, isa::has_mx, the input dtype sets of enums.h, the
// struct layouts' fields, psum_flags_name), never listed by hand -- so a bin the table lacks cannot happen on that
// generation, and every bin it has that a run did not hit is a real hole. sample() maps one micro-op (the typed data
// the firmware made, pe::MicroOp) or one fault (its rule number) to the bins it hits.
//
// Plain C++ without SystemC: the platform's probe (pevp/platform/coverage_probe.h) feeds it from the sequencer's
// micro-op observer and the SEQ's fault observer; a co-simulation checker can feed it micro-ops of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "pevp/isa/generation.h"
#include "pevp/isa/geometry.h"
#include "pevp/pe_array/micro_op.h"

namespace pevp::coverage {

// One bin: its group, the generation it belongs to (isa::name, "MARIANA"; "" in a group not crossed with the
// generation) and its name within the group ("MATMUL", "LDWEIGHTS/BFLOAT16", "group/SINGLE").
struct BinKey {
  std::string group;
  std::string generation;
  std::string bin;
  bool operator<(const BinKey& o) const {
    return std::tie(group, generation, bin) < std::tie(o.group, o.generation, o.bin);
  }
  bool operator==(const BinKey& o) const {
    return group == o.group && generation == o.generation && bin == o.bin;
  }
};

// A feature group of the table.
struct Group {
  std::string_view name;   // "opcode"
  std::string_view what;   // one line: what its bins count
  bool per_generation;     // its bins are crossed with the generation
  // The bins the ISA allows (on `g` when per_generation; `g` is ignored otherwise), in table order.
  std::vector<std::string> (*bins)(isa::Generation g);
};

// The table, in report order.
const std::vector<Group>& groups();
const Group* find_group(std::string_view name);

// Every bin of the model, in report order (groups, then generations, then the group's own order).
const std::vector<BinKey>& all_bins();
// Whether `key` is a bin of the model.
bool is_bin(const BinKey& key);

// What sample() reads of a micro-op, and nothing else: its typed projection. A run repeats a few distinct micro-ops,
// so a Collector counts each distinct projection and maps it to its bins once (sampling a micro-op is then one
// ordered-map update).
struct SampleKey {
  std::uint8_t opcode_byte = 0;
  bool last = true;  // MicroOp::completes_instruction
  pe::MicroOpKind kind = pe::MicroOpKind::Matmul;
  pe::SeedMove seed = pe::SeedMove::None;
  bool conv_lut = false;
  pe::SparseRole sparse = pe::SparseRole::None;
  bool mx = false;
  std::int64_t mx_mode = 0;
  isa::Dtype in_dtype = isa::Dtype::BFLOAT16;
  isa::Fp32Mode fp32_mode = isa::Fp32Mode::None;
  bool psum_tracked = false;
  std::uint8_t psum_flags = 0;
  bool psum_accumulate = false;
  unsigned zero_banks = 0;
  unsigned k = 0, m = 0;
  unsigned row0 = 0, rows = 0, col0 = 0, cols = 0;  // the tile
  bool transpose = false, background_transpose = false, reverse_columns = false, double_row = false;

  auto tie() const {
    return std::tie(opcode_byte, last, kind, seed, conv_lut, sparse, mx, mx_mode, in_dtype, fp32_mode, psum_tracked,
                    psum_flags, psum_accumulate, zero_banks, k, m, row0, rows, col0, cols, transpose,
                    background_transpose, reverse_columns, double_row);
  }
  bool operator<(const SampleKey& o) const { return tie() < o.tie(); }
};
SampleKey sample_key(const pe::MicroOp& op);

// The bins one micro-op of generation `g` hits. `geometry` is the array it ran on (tile grid positions are judged
// against it). The instruction's opcode counts once, with its last micro-op (MicroOp::completes_instruction).
std::vector<BinKey> sample(const SampleKey& op, isa::Generation g, const isa::ArrayGeometry& geometry);
inline std::vector<BinKey> sample(const pe::MicroOp& op, isa::Generation g, const isa::ArrayGeometry& geometry) {
  return sample(sample_key(op), g, geometry);
}
// The bin of a fault with this rule number (the SEQ's error record), or nothing for a number the rule table lacks.
std::vector<BinKey> sample_fault(std::uint16_t rule_number);

}  // namespace pevp::coverage
