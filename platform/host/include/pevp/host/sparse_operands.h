// Structured-sparse GEMM operands: the stationary operand A pruned N:M along its contraction dimension on the host,
// and the compressed SBUF rows of the executor's sparse path (pevp/pe_array/sparse.h, docs/pe-array-executor.md
// D-SPARSE-*): {u16 weight, u16 tag} elements for a TAG_WEIGHT Ldweights and F fmaps per partition of the moving
// operand B for MatmulSparse's TENSOR4D source.
//
// A sparse k-tile covers pe_rows x F contraction rows. Row group g's PE row q (partition g x group_rows + q) carries
// fmap f = contraction row q x (G x F) + g x F + f of B (G the row groups), so block q -- the G x F consecutive rows
// from q x G x F -- spreads over PE row q of every row group; the block's kept weights (at most G: the patterns are
// placed on the F that makes this true) go, in row order, to PE rows q, group_rows + q, ... with the tag
// (position / F) << 2 | position % F. This is pe::dense_row's order, so the sparse sum is the dense defined order of
// the pruned operand, bit for bit. docs/gemm-tiling.md D-GEMM-SPARSE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pevp/host/error.h"
#include "pevp/host/matrix.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"

namespace pevp::host {

struct EncodedOperand;

// N kept of every M consecutive contraction values, run with F fmaps per partition.
struct SparsePattern {
  unsigned n = 2, m = 4;
  unsigned fmaps = 2;
  bool operator==(const SparsePattern& o) const { return n == o.n && m == o.m && fmaps == o.fmaps; }
  bool operator!=(const SparsePattern& o) const { return !(*this == o); }
};

// "N:M" for a published pattern (4:16, 4:12, 4:8, 2:8, 2:4, 1:4, 1:2), with its fmap count F (4:4F natively, the
// others as subsets of 4:16 or 4:8, D-SPARSE-SELECT); nullopt for any other text.
std::optional<SparsePattern> parse_sparsity(std::string_view text);
std::string sparsity_name(const SparsePattern& p);           // "2:4"
inline constexpr const char* kSparsityPatterns = "4:16, 4:12, 4:8, 2:8, 2:4, 1:4, 1:2";

// The dtypes a TAG_WEIGHT load carries as its u16 weight: BFLOAT16 and FP16.
bool is_sparse_dtype(isa::Dtype d);

// Encodes A (M x K) in `dtype` and prunes it N:M along K: per row of A (a stationary column), in each group of M
// consecutive contraction values (from index 0; the last group may be shorter and keeps min(N, its size)), the N
// largest magnitudes of the encoded values survive, ties to the lower index, NaN ranked above every number; the
// others become +0. `quantized` holds the pruned values, `sparse_kept` marks the survivors (row-major like bytes).
// Throws HostError for a dtype is_sparse_dtype() refuses or a matrix whose data does not match its shape.
EncodedOperand encode_sparse_operand(const Matrix& a, isa::Generation gen, isa::Dtype dtype, const SparsePattern& p);

// The rows of one stationary load of a sparse k-tile: contraction rows k0 .. k0 + k_count - 1 (k_count <= tile_rows
// x F) of A's rows f0 .. f0 + f_count - 1, as tile_rows partitions of f_count {u16 weight, u16 tag} pairs (column j
// at bytes 4j). Cells without a kept value get weight 0 and tag 0. Throws HostError when a block keeps more than
// the row groups (an operand not pruned for the pattern) or the ranges leave the operand.
void gather_sparse_weights(const EncodedOperand& a, const SparsePattern& p, std::size_t tile_rows,
                           std::size_t k0, std::size_t k_count, std::size_t f0, std::size_t f_count,
                           std::uint8_t* out);

// The rows of one moving load: tile_rows partitions of F fmaps of f_count elements each (fmap f at element
// f x f_count) from B's rows k0 .. k0 + k_count - 1 and columns f0 ..; zeros past k_count.
void gather_sparse_fmaps(const EncodedOperand& b, const SparsePattern& p, std::size_t tile_rows,
                         std::size_t k0, std::size_t k_count, std::size_t f0, std::size_t f_count, std::uint8_t* out);

}  // namespace pevp::host
