// Fine-grain structured sparsity on the PE array: LdTags (0x06), Ldweights' tag_weight_mode and MatmulSparse (0x07),
// spec 000 section 9. What the spec fixes: 4-bit tags packed four per u16 with the least significant nibble going to
// the larger logical PE column (col 127), force_tag_bits {0x0, 0x4, 0x8, 0xC} OR'd in "to select the row-tile fmap
// group", the interleaved {u16 weight, u16 tag} element of TAG_WEIGHT, and 2, 3 or 4 fmaps per partition of which the
// weights' metadata selects one for every PE cell. What the model decides (docs/pe-array-executor.md D-SPARSE-*):
//   D-SPARSE-TAGS    nibble i of a partition's tag row is column M - 1 - i (the whole row reversed);
//   D-SPARSE-SELECT  a tag is (row group << 2) | fmap: the cell in PE row R multiplies fmap `tag & 3` of the partition
//                    of PE row (tag >> 2) x group_rows + R % group_rows -- its own row, or the same row of another
//                    row group (force_tag_bits names that group for a whole load);
//   D-SPARSE-ORDER   a column's kept products are summed in the dense order of what they select (below).
// Plain C++, no SystemC: the executor gathers tags and fmaps from SBUF and calls these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pevp/isa/enums.h"
#include "pevp/isa/geometry.h"
#include "pevp/isa/tile_rect.h"

namespace pevp::pe {

inline constexpr unsigned kTagBits = 4;                        // a tag is one nibble
inline constexpr unsigned kTagsPerWord = 16 / kTagBits;        // four per u16 (spec 9)
inline constexpr unsigned kTagLimit = 1u << kTagBits;          // tags are 0 .. 15
inline constexpr unsigned kFmapSelectBits = 2;                 // tag bits 0-1: the fmap (D-SPARSE-SELECT)
inline constexpr unsigned kFmapSelectMask = (1u << kFmapSelectBits) - 1;
inline constexpr unsigned kMinFmaps = 2, kMaxFmaps = 4;        // fmaps per partition (spec 9: 2/3/4)

// Ldweights tag_weight_mode (spec 9; the field's byte is D-LAYOUT-TAG-WEIGHT): TAG_WEIGHT reads {u16 weight, u16 tag}.
namespace tag_weight_mode {
inline constexpr std::int64_t NONE = 0;
inline constexpr std::int64_t TAG_WEIGHT = 1;
}  // namespace tag_weight_mode

// force_tag_bits as the spec lists them: the row group's number in tag bits 2-3.
bool valid_force_tag_bits(std::int64_t force);

// The tags of one loaded tile: [k][m] nibbles, row-major (m contiguous).
struct TagTile {
  isa::TileRect tile;
  std::size_t k = 0, m = 0;
  std::vector<std::uint8_t> tags;
};

// Unpacks one partition's tag row of `m` columns from `words` (ceil(m / 4) u16, little-endian values): nibble i
// (word i / 4, bits 4 (i % 4) ..) is column m - 1 - i; each tag is OR'd with `force` (D-SPARSE-TAGS).
void unpack_tag_row(const std::uint16_t* words, std::size_t m, std::uint8_t force, std::uint8_t* row);

// u16 words one partition's tag row of `m` columns takes.
inline std::size_t tag_words(std::size_t m) { return (m + kTagsPerWord - 1) / kTagsPerWord; }

// One product of a sparse column: the weight of tile row `cell` times fmap `fmap` of tile row `source`.
struct SparseTerm {
  std::uint32_t cell = 0, source = 0;
  std::uint32_t fmap = 0;
};

// The products of every column of a tile in the defined order (D-SPARSE-ORDER), or why the tags cannot be executed.
struct SparsePlan {
  std::size_t k = 0, m = 0, fmaps = 0;
  std::vector<SparseTerm> terms;  // [m][k]: column mi's k terms at mi * k, in summation order
  std::string error;              // "" when every tag selects an fmap the matmul sends
};

// Plans a MatmulSparse of `fmaps` fmaps per partition on `tile` with k active rows and m columns, tags [k][m]. A
// cell's source is PE row (tag >> 2) x group_rows + (its row % group_rows), which must be one of the tile's k active
// rows, and its fmap tag & 3 must be below `fmaps`. Column mi's terms are ordered by the dense contraction row of
// what they select -- (source row % group_rows, source row group, fmap) -- ties (two cells selecting one fmap) by the
// cell's row.
SparsePlan plan_sparse(const isa::TileRect& tile, std::size_t k, std::size_t m, std::size_t fmaps,
                       const std::vector<std::uint8_t>& tags, const isa::ArrayGeometry& geo);

// The dense contraction row a (tile row `source`, fmap) pair stands for in a tile of `k` active rows starting at PE
// row `row0`: (source's row % group_rows) x (row groups x fmaps) + (its row group - the tile's first) x fmaps + fmap.
// A pruned dense operand laid out this way is what plan_sparse's order sums (gemm --sparsity uses it).
std::size_t dense_row(std::size_t source, std::size_t fmap, std::size_t fmaps, std::size_t row0, std::size_t k,
                      const isa::ArrayGeometry& geo);

// One pass of the defined order: dst[mi][n] = (accumulate ? dst + S : S), S = the sum from +0, in plan order, of
// weights[cell][mi] x moving[source][fmap][n] (fp32 products, never fused); moving is [k][fmaps][n]. NaN results are
// stored canonical.
void sparse_pass(const SparsePlan& plan, const float* weights, const float* moving, std::size_t n, float* dst,
                 bool accumulate);

// A whole sparse matmul on decoded operands: one pass, or for fp32_mode Low_High the three passes of compute.h's
// matmul() on the tf32 splits (hi x hi', hi x lo', lo x hi').
void sparse_matmul(isa::Fp32Mode fp32_mode, const SparsePlan& plan, const float* weights, const float* moving,
                   std::size_t n, float* dst, bool accumulate);

}  // namespace pevp::pe
